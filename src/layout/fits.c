/* fits.c - measured results for the communication model: ccbench bench JSON Lines, nccl-tests
 * and OSU logs read into points, and a latency + bytes/bandwidth fit per collective, scope
 * (within a node, across nodes) and group size (cc_cluster_load_results). */
#include "layout/cluster.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/log.h"
#include "core/text.h"
#include "layout/nccltests.h"
#include "layout/osu.h"

/* A measurement: a group of n ranks on `nodes` nodes, per_node of them in its emptiest node
 * (its rate across nodes is that node's share) and `most` in its fullest. */
struct pt { int coll, scope, n, nodes, per_node, most; double x, t; long order; };

/* By group (collective, scope, ranks, ranks per node), then as read. */
static int cmp_pt_group(const void *a, const void *b)
{
    const struct pt *p = a, *q = b;
    if (p->coll != q->coll)
        return p->coll < q->coll ? -1 : 1;
    if (p->scope != q->scope)
        return p->scope < q->scope ? -1 : 1;
    if (p->n != q->n)
        return p->n < q->n ? -1 : 1;
    if (p->per_node != q->per_node)
        return p->per_node < q->per_node ? -1 : 1;
    if (p->nodes != q->nodes)
        return p->nodes < q->nodes ? -1 : 1;
    return (p->order > q->order) - (p->order < q->order);
}

static int same_group(const struct pt *p, const struct pt *q)
{
    return p->coll == q->coll && p->scope == q->scope && p->n == q->n &&
           p->per_node == q->per_node && p->nodes == q->nodes;
}

/* By the order in which the groups were first read. */
static int cmp_pt_order(const void *a, const void *b)
{
    const struct pt *p = a, *q = b;
    return (p->order > q->order) - (p->order < q->order);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n-1] (n >= 1); reorders v. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int cmp_pt_x(const void *a, const void *b)
{
    return cmp_double(&((const struct pt *)a)->x, &((const struct pt *)b)->x);
}

/* t = alpha + x/bw from the points of one group (reordered), robust to one glitched
 * measurement and to the protocol steps of the middle sizes (NCCL's LL and LL128):
 * - one time per distinct size, the median of its runs;
 * - the bandwidth from the median slope between pairs of sizes in the upper third of the
 *   sweep (at least its four largest sizes) or within 8x of the largest, where the bytes set
 *   the time (Theil-Sen): the pairs at least 1.5x apart where there are any, so that a linear
 *   sweep of close sizes (nccl-tests -i) is not read from the noise between neighbours;
 * - the latency from the median of t - x/bw over the lower third of the sizes, at least 0;
 *   NAN (not measured: cc_comm_time takes the table's) when the sweep spans less than 64x,
 *   where the bandwidth's error outweighs the latency at its smallest size.
 * Returns 0, or 1 with the reason in `why` when the points give no bandwidth: one size only,
 * times that do not grow with the size, or a sweep whose largest size still spends more
 * time in latency than in moving its bytes. */
static int fit_points(struct pt *p, int np, struct cc_fit *f, char *why, size_t whylen)
{
    double *x = malloc(3 * (size_t)np * sizeof *x), *t = x ? x + np : NULL;
    double *runs = x ? t + np : NULL;
    int k = 0;
    if (!x) {
        snprintf(why, whylen, "out of memory");
        return 1;
    }
    qsort(p, (size_t)np, sizeof *p, cmp_pt_x);
    for (int i = 0; i < np;) {
        int j = i;
        while (j < np && p[j].x <= p[i].x * (1 + 1e-9))
            runs[j - i] = p[j].t, j++;
        x[k] = p[i].x;
        t[k++] = median(runs, j - i);
        i = j;
    }
    int rc = 1;
    double *d = malloc((size_t)(k > 1 ? (size_t)k * (size_t)k : 1) * sizeof *d);
    if (!d) {
        snprintf(why, whylen, "out of memory");
        goto out;
    }
    if (k < 2) {
        snprintf(why, whylen, "one message size only (%g bus bytes): latency and bandwidth "
                 "cannot be told apart", x[0]);
        goto out;
    }
    int ns = k - 1, use = ns / 3 > 3 ? ns / 3 : (ns < 3 ? ns : 3);
    /* the sizes the bytes rule: the upper use+1, and any within 8x of the largest */
    int lo = ns - use;
    while (lo > 0 && x[lo - 1] * 8.0 >= x[ns])
        lo--;
    int nd = 0; /* slopes between those sizes: the pairs 1.5x apart, else all */
    for (int wide = 1; wide >= 0 && nd == 0; wide--)
        for (int i = lo; i <= ns; i++)
            for (int j = i + 1; j <= ns; j++)
                if (!wide || x[j] >= 1.5 * x[i])
                    d[nd++] = (t[j] - t[i]) / (x[j] - x[i]);
    double slope = median(d, nd);
    if (!(slope > 0)) {
        snprintf(why, whylen, "the times do not grow with the size up to %g bus bytes", x[k - 1]);
        goto out;
    }
    int low = k / 3 > 1 ? k / 3 : 1;
    for (int i = 0; i < low; i++)
        d[i] = t[i] - x[i] * slope;
    double alpha = fmax(0.0, median(d, low));
    if (x[k - 1] * slope < alpha) {
        snprintf(why, whylen, "its largest size (%g bus bytes) takes %.3g us, more latency "
                 "(%.3g us) than transfer: measure larger sizes", x[k - 1], t[k - 1] * 1e6,
                 alpha * 1e6);
        goto out;
    }
    f->alpha_s = x[k - 1] >= 64.0 * x[0] ? alpha : NAN;
    f->busbw_Bps = 1.0 / slope;
    f->points = np;
    f->sizes = k;
    rc = 0;
out:
    free(d);
    free(x);
    return rc;
}

/* Growing list of points read from one file. */
struct pts { struct pt *p; int n, cap; };

static int push_point(struct pts *v, struct pt p)
{
    struct pt *np = cc_grow(v->p, &v->cap, v->n, sizeof *v->p, 256);
    if (!np)
        return -1;
    v->p = np;
    v->p[v->n++] = p;
    return 0;
}

/* A point of a group of n ranks spread as evenly as they go over nnodes nodes; x in busbw
 * bytes. */
static struct pt make_point(enum cc_coll_id coll, int n, int nnodes, double bytes, double t)
{
    if (nnodes < 1 || nnodes > n)
        nnodes = nnodes < 1 ? 1 : n;
    return (struct pt){(int)coll, nnodes > 1 ? CC_SCOPE_INTER : CC_SCOPE_INTRA, n, nnodes,
                       n / nnodes, (n + nnodes - 1) / nnodes,
                       bytes * cc_coll_get(coll)->busbw_factor(n), t, 0};
}

/* ccbench bench --json: the header's nnodes, then "type":"result" lines. */
static cc_status read_jsonl(FILE *f, const char *path, struct pts *v, char *err, size_t errlen)
{
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0, first_bad = 0;
    int nnodes = 0, wrong = 0, bad = 0;
    char backend[32] = "";
    cc_status st = CC_OK;

    while (getline(&line, &cap, f) > 0) {
        lineno++;
        size_t sp = strspn(line, " \t\r\n");
        if (!line[sp] || line[sp] == '#')
            continue; /* blank (CRLF too) or a comment */
        json_error_t je;
        json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(o)) {
            cc_errbuf(err, errlen, "cannot read results '%s': line %ld: %s (neither ccbench "
                      "bench JSON Lines nor nccl-tests output)", path, lineno,
                      o                                      ? "not a JSON object"
                      : strstr(je.text, "JSON_ALLOW_NUL") ? "a NUL character (\\u0000) in a string"
                                                             : je.text);
            json_decref(o);
            st = CC_EPARSE;
            break;
        }
        const char *type = json_string_value(json_object_get(o, "type"));
        const char *be = json_string_value(json_object_get(o, "backend"));
        if (be && (!backend[0] || strcmp(backend, "nccl") == 0))
            snprintf(backend, sizeof backend, "%s", be); /* the first that is not nccl */
        if (type && strcmp(type, "header") == 0) {
            json_int_t nn = json_integer_value(json_object_get(o, "nnodes"));
            if (nn < 1 || nn > 16777216) {
                cc_errbuf(err, errlen, "cannot read results '%s': line %ld: header without a "
                          "node count (nnodes) from 1 to 16777216", path, lineno);
                st = CC_EPARSE;
            }
            nnodes = (int)nn;
        }
        if (st == CC_OK && type && strcmp(type, "result") == 0) {
            const struct cc_coll *cl =
                cc_coll_find(json_string_value(json_object_get(o, "collective")) ?: "");
            json_t *jn = json_object_get(o, "nranks");
            json_int_t n = json_integer_value(jn);
            double bytes = json_number_value(json_object_get(o, "bytes"));
            double t = json_number_value(json_object_get(o, "time_us")) * 1e-6;
            if (!nnodes) {
                cc_errbuf(err, errlen, "cannot read results '%s': line %ld: result before the "
                          "header (no nnodes)", path, lineno);
                st = CC_EPARSE;
            } else if (n > 16777216) {
                cc_errbuf(err, errlen, "cannot read results '%s': line %ld: nranks %lld is more "
                          "than 16777216",
                          path, lineno, (long long)n);
                st = CC_EPARSE;
            } else if (n > 0 && n < nnodes) {
                cc_errbuf(err, errlen, "cannot read results '%s': line %ld: nranks %lld is "
                          "fewer than the header's %d nodes", path, lineno, (long long)n, nnodes);
                st = CC_EPARSE;
            } else if (json_object_get(o, "wrong") &&
                       !json_is_null(json_object_get(o, "wrong")) &&
                       (!json_is_integer(json_object_get(o, "wrong")) ||
                        json_integer_value(json_object_get(o, "wrong")) < 0)) {
                cc_errbuf(err, errlen, "cannot read results '%s': line %ld: \"wrong\" must be "
                          "a count of wrong elements (a whole number from 0) or null", path,
                          lineno);
                st = CC_EPARSE;
            } else if (json_integer_value(json_object_get(o, "wrong")) > 0) {
                wrong++; /* a run whose check failed times nothing worth fitting */
            } else if (json_object_get(o, "na")) {
                /* a placement the collective does not have: nothing measured, as said */
            } else if (!cl || !json_is_integer(jn) || n < 2 || !(bytes > 0) ||
                       !json_is_number(json_object_get(o, "time_us")) || !(t > 0)) {
                if (!bad++) /* not a measurement this reader knows how to use */
                    first_bad = lineno;
            } else if (push_point(v, make_point(cl->id, (int)n, nnodes, bytes, t))) {
                st = CC_ENOMEM;
            }
        }
        json_decref(o);
        if (st != CC_OK)
            break;
    }
    free(line);
    if (st == CC_OK && !v->n) {
        if (bad)
            cc_errbuf(err, errlen, "results '%s': no usable \"type\":\"result\" lines: %d "
                      "without a known collective, an integer nranks of at least 2, and "
                      "positive bytes and time_us (the first: line %ld); %d reporting wrong "
                      "elements", path, bad, first_bad, wrong);
        else
            cc_errbuf(err, errlen, "results '%s': no usable \"type\":\"result\" lines%s", path,
                      wrong ? " (every measured one reported wrong elements)" : "");
        st = CC_EINVAL;
    }
    if (st == CC_OK && wrong)
        cc_log(CC_LOG_WARN, "results '%s': not used: %d measurement(s) reporting wrong elements",
               path, wrong);
    if (st == CC_OK && bad)
        cc_log(CC_LOG_WARN, "results '%s': passed over %d result line(s) without a known "
               "collective, an integer nranks of at least 2, and positive bytes and time_us "
               "(the first: line %ld)", path, bad, first_bad);
    if (st == CC_OK && backend[0] && strcmp(backend, "nccl") != 0)
        cc_log(CC_LOG_WARN, "results '%s': measured with the %s backend, not nccl: %s rates "
               "are fitted as the GPUs' interconnect", path, backend,
               strcmp(backend, "mpi") == 0 || strcmp(backend, "tcp") == 0 ? "host memory's"
                                                                           : "its");
    return st;
}

static int nt_point(const struct cc_nt_point *p, void *ctx)
{
    return push_point(ctx, make_point(p->coll, p->nranks, p->nhosts, p->bytes, p->time_s));
}

/* nccl-tests text output (layout/nccltests.h). */
static cc_status read_nccltests(FILE *f, const char *path, struct pts *v, char *err,
                                size_t errlen)
{
    struct cc_nt_summary sum;
    cc_status st = cc_nccltests_read(f, path, nt_point, v, &sum, err, errlen);
    if (st == CC_OK && !sum.rows) {
        cc_errbuf(err, errlen, "results '%s': nccl-tests output without result rows%s", path,
                  sum.pre_header ? " (lines that look like rows come before any '#  size count "
                                   "type ...' column header)"
                  : sum.bad_rows ? " (only lines that start like rows but do not read as one)"
                                 : "");
        st = CC_EINVAL;
    } else if (st == CC_OK && !sum.points) {
        cc_errbuf(err, errlen, "results '%s': nccl-tests output with nothing to fit (of %d "
                  "rows: %d of one-GPU tests, %d timed on the host (-C), %d of tests without a "
                  "ccbench collective, %d of failed tests, %d of size 0 or time 0; %d runs "
                  "with #wrong > 0; %d lines that did not read as rows)", path,
                  sum.rows, sum.single_rows, sum.cputime_rows, sum.other_rows, sum.failed_rows,
                  sum.empty_rows, sum.wrong_runs, sum.bad_rows);
        st = CC_EINVAL;
    }
    if (st == CC_OK && sum.bad_rows)
        cc_log(CC_LOG_WARN, "results '%s': passed over %d line(s) that start like a result row "
               "but do not read as one (the first: line %ld; NCCL's log inside a row, or a "
               "script's message)", path, sum.bad_rows, sum.first_bad_line);
    if (st == CC_OK && sum.wrong_runs)
        cc_log(CC_LOG_WARN, "results '%s': not used: %d nccl-tests run(s) reporting wrong "
               "elements", path, sum.wrong_runs);
    if (st == CC_OK && sum.failed_rows)
        cc_log(CC_LOG_WARN, "results '%s': not used: %d nccl-tests row(s) of tests reporting "
               "out-of-bounds values", path, sum.failed_rows);
    if (st == CC_OK && sum.cputime_rows)
        cc_log(CC_LOG_WARN, "results '%s': not used: %d nccl-tests row(s) timed on the host "
               "(-C)", path, sum.cputime_rows);
    return st;
}

static cc_status read_osu(FILE *f, const char *path, int nodes, int per_node, struct pts *v,
                          char *err, size_t errlen)
{
    struct cc_osu_summary sum;
    cc_status st = cc_osu_read(f, path, nodes, per_node, nt_point, v, &sum, err, errlen);
    if (st == CC_OK && !sum.points) {
        cc_errbuf(err, errlen, "results '%s': OSU output with nothing to fit (%d test(s), %d row(s): "
                  "%d of tests without a ccbench collective, %d failing validation, %d of size "
                  "0 or time 0; %d lines that did not read as rows, %d before a '# Size' "
                  "header)", path, sum.tests, sum.rows, sum.other_rows, sum.failed_rows,
                  sum.empty_rows, sum.bad_rows, sum.pre_header);
        st = CC_EINVAL;
    }
    if (st != CC_OK)
        return st;
    if (sum.bad_rows)
        cc_log(CC_LOG_WARN, "results '%s': passed over %d line(s) that start like a result row "
               "but do not read as one (the first: line %ld)", path, sum.bad_rows,
               sum.first_bad_line);
    if (sum.failed_rows)
        cc_log(CC_LOG_WARN, "results '%s': not used: %d OSU row(s) failing validation", path,
               sum.failed_rows);
    if (sum.host_tests || sum.device_tests)
        cc_log(CC_LOG_WARN, "results '%s': measured with MPI%s, not NCCL: its rates are fitted "
               "as the GPUs' interconnect", path,
               sum.host_tests ? " in host memory" : " on GPU memory");
    return CC_OK;
}

/* "FILE@NODESxPER_NODE": how many ranks ran an OSU log, which does not say. Returns 1 and
 * cuts the suffix off `file` when `spec` ends in one, 0 when it has none, -1 when the suffix
 * is malformed. */
static int rank_suffix(const char *spec, char *file, size_t len, int *nodes, int *per_node)
{
    const char *at = strrchr(spec, '@');
    snprintf(file, len, "%s", spec);
    if (!at || strchr(at, '/') || access(spec, F_OK) == 0)
        return 0; /* no '@' in the name, or a file named so */
    char *end;
    errno = 0;
    long a = strtol(at + 1, &end, 10), b = 0;
    if (end == at + 1 || *end != 'x' || !isdigit((unsigned char)end[1]))
        return -1;
    const char *q = end + 1;
    b = strtol(q, &end, 10);
    if (*end || errno || a < 1 || b < 1 || a > 16777216 || b > 16777216 / a)
        return -1;
    *nodes = (int)a, *per_node = (int)b;
    file[at - spec < (long)len ? at - spec : (long)len - 1] = '\0';
    return 1;
}

/* The whole file (or pipe) in memory; results files are small. */
static cc_status slurp(const char *path, char **data, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    size_t cap = 0, n;
    int oom = 0;
    char chunk[65536];

    *data = NULL, *len = 0;
    if (!f) {
        cc_errbuf(err, errlen, "cannot read results '%s': %s", path, strerror(errno));
        return CC_EINVAL;
    }
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (*len + n > ((size_t)64 << 20)) {
            cc_errbuf(err, errlen, "results '%s': larger than 64 MiB, not a results file",
                      path);
            break;
        }
        if (*len + n > cap) {
            cap = cap ? 2 * cap : sizeof chunk;
            while (cap < *len + n)
                cap *= 2;
            char *p = realloc(*data, cap);
            if (!p) {
                cc_errbuf(err, errlen, "results '%s': out of memory", path);
                oom = 1;
                break;
            }
            *data = p;
        }
        memcpy(*data + *len, chunk, n);
        *len += n;
    }
    int bad = ferror(f) || n > 0;
    if (ferror(f))
        cc_errbuf(err, errlen, "cannot read results '%s': %s", path, strerror(errno));
    fclose(f);
    if (bad) {
        free(*data);
        *data = NULL, *len = 0;
        return oom ? CC_ENOMEM : CC_EINVAL;
    }
    return CC_OK;
}

/* The rate the cluster's own figures give a group like the measured one (0: none). */
static double expected_rate(const struct cc_cluster *c, const struct pt *key)
{
    int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
    if (key->scope == CC_SCOPE_INTRA)
        return key->coll == CC_SENDRECV ? c->p2p_intra_Bps : c->intra_busbw_Bps;
    double share = key->per_node < gpn ? (double)key->per_node / gpn : 1.0;
    double bw = c->inter_node_Bps * (key->coll == CC_SENDRECV ? 1.0 / gpn : share);
    return c->intra_busbw_Bps > 0 ? fmin(bw, c->intra_busbw_Bps) : bw;
}

const char *cc_gbps_text(double Bps, char *buf, size_t len)
{
    if (Bps >= 1e9)
        snprintf(buf, len, "%.1f", Bps / 1e9);
    else
        snprintf(buf, len, "%.3g", Bps / 1e9);
    return buf;
}

/* A fit more than twice or under a tenth of what the cluster's figures expect is used as
 * measured, but said: a wrong file (host memory, another machine) looks just like this. */
static void check_rate(const struct cc_cluster *c, const char *path, const char *group,
                       const struct pt *key, const struct cc_fit *f)
{
    double want = expected_rate(c, key);
    const char *fit = strstr(c->bw_source, "; fitted from "); /* the rates before any */
    int src = fit ? (int)(fit - c->bw_source) : (int)strlen(c->bw_source); /* results file */
    char a[32], b[32];
    if (want > 0 && (f->busbw_Bps > 2 * want || f->busbw_Bps < 0.1 * want))
        cc_warn("results '%s': %s fits %s GB/s of bus bandwidth, %s the %s GB/s expected "
                "(%.*s); used as measured", path, group, cc_gbps_text(f->busbw_Bps, a, sizeof a),
                f->busbw_Bps > want ? "over twice" : "under a tenth of",
                cc_gbps_text(want, b, sizeof b), src, c->bw_source);
}

cc_status cc_cluster_load_results(struct cc_cluster *c, const char *path, char *err,
                                  size_t errlen)
{
    struct pts v = {0};
    int nfit = 0;
    size_t len = 0;
    char *data = NULL;

    /* an OSU log's ranks come after its name: osu_allreduce.txt@2x8 */
    char file[4096];
    int nodes = 0, per_node = 0, ranks = rank_suffix(path, file, sizeof file, &nodes, &per_node);
    if (ranks < 0) {
        cc_errbuf(err, errlen, "results '%s': after '@' give the ranks as NODESxPER_NODE (2x8: "
                  "2 nodes of 8 ranks)", path);
        return CC_EINVAL;
    }
    if (ranks > 0 && nodes * per_node < 2) {
        cc_errbuf(err, errlen, "results '%s': @%dx%d is one rank; a collective or a "
                  "point-to-point test needs at least 2", path, nodes, per_node);
        return CC_EINVAL;
    }
    /* read it whole first: the format is told by content, and a pipe cannot be rewound */
    cc_status st = slurp(file, &data, &len, err, errlen);
    if (st != CC_OK)
        return st;
    FILE *f = len ? fmemopen(data, len, "r") : NULL;
    int nt = f && cc_nccltests_sniff(f), osu = f && !nt && cc_osu_sniff(f);
    if (!len)
        cc_errbuf(err, errlen, "results '%s': empty", file), st = CC_EINVAL;
    else if (!f)
        cc_errbuf(err, errlen, "results '%s': %s", file, strerror(errno)), st = CC_ENOMEM;
    else if (ranks && !osu)
        cc_errbuf(err, errlen, "results '%s': '@%dx%d' is for OSU Micro-Benchmarks output; "
                  "ccbench JSON Lines and nccl-tests logs say their own ranks", path, nodes,
                  per_node), st = CC_EINVAL;
    else if (osu && !ranks)
        cc_errbuf(err, errlen, "results '%s': OSU Micro-Benchmarks output does not say how many "
                  "ranks ran it: give them as '%s@NODESxPER_NODE' (@2x8: 2 nodes of 8 ranks)",
                  path, path), st = CC_EINVAL;
    else if (osu)
        st = read_osu(f, path, nodes, per_node, &v, err, errlen);
    else
        st = nt ? read_nccltests(f, path, &v, err, errlen) : read_jsonl(f, path, &v, err, errlen);
    if (f)
        fclose(f);
    free(data);
    if (st != CC_OK) {
        free(v.p);
        return st;
    }
    /* a rate beyond 1 PB/s, or a time over an hour, is a broken file, not a link */
    for (int i = 0; i < v.n; i++)
        if (!(v.p[i].t > 0 && v.p[i].t <= 3600 && isfinite(v.p[i].x) &&
              v.p[i].x / v.p[i].t <= 1e15)) {
            cc_errbuf(err, errlen, "results '%s': %s of %d ranks, %g bus bytes in %g s: not a "
                      "measurement (over 1 PB/s or over an hour)", path,
                      cc_coll_get(v.p[i].coll)->name, v.p[i].n, v.p[i].x, v.p[i].t);
            free(v.p);
            return CC_EINVAL;
        }
    /* group by (collective, scope, nranks, members per node) and fit each group, in the
     * order the groups were first read (the first CC_FIT_MAX are kept): sorted by group,
     * every point takes its group's first place in the file, then sorted by that */
    struct pt *pts = v.p;
    int dropped = 0, dup = 0;
    size_t plen = strlen(path);
    /* a node here is an NVLink domain: where it spans hosts (--gpus-per-host), the hosts a
     * group ran on fill domains of gpus_per_node / gpus_per_host hosts (a rack's trays): in
     * one domain it ran within a node, else across as many domains as it filled, with that
     * many members in each (the members per node that scale its rate, not those per host);
     * a log whose hosts held more ranks than this cluster's hosts have GPUs did not run on
     * such hosts: its hosts stay nodes (a group of 2 hosts of 8 joined by InfiniBand is not
     * within a domain of 4-GPU hosts) */
    int gph = c->gpus_per_host, gpn = c->gpus_per_node;
    for (int i = 0; i < v.n; i++)
        if (pts[i].scope == CC_SCOPE_INTER && gph > 0 && gph < gpn && pts[i].most <= gph) {
            /* the hosts fill whole domains in order: the last holds what is left */
            struct pt *q = &pts[i];
            int per_domain = gpn / gph, domains = (q->nodes + per_domain - 1) / per_domain;
            long long full = (long long)per_domain * q->most; /* ranks of a filled domain */
            if (domains <= 1) {
                q->scope = CC_SCOPE_INTRA;
                q->nodes = 1, q->per_node = q->most = q->n;
            } else {
                q->nodes = domains;
                q->most = (int)(full < q->n ? full : q->n);
                q->per_node = (int)fmax(1.0, q->n - (double)(domains - 1) * full);
            }
        }
    for (int i = 0; i < v.n; i++)
        pts[i].order = i;
    qsort(pts, (size_t)v.n, sizeof *pts, cmp_pt_group);
    for (int i = 0, j; i < v.n; i = j)
        for (j = i; j < v.n && same_group(&pts[j], &pts[i]); j++)
            pts[j].order = pts[i].order;
    qsort(pts, (size_t)v.n, sizeof *pts, cmp_pt_order);
    for (int i = 0; i < v.n; i++) {
        struct pt key = pts[i];
        int k = 1;
        while (i + k < v.n && pts[i + k].order == key.order)
            k++;
        struct cc_fit fit = {.nranks = key.n, .per_node = key.per_node, .nodes = key.nodes};
        size_t from = plen > 95 ? plen - 95 : 0; /* the end of the path, whole characters */
        while (from < plen && ((unsigned char)path[from] & 0xc0) == 0x80)
            from++;
        cc_text_copy(fit.from, sizeof fit.from, path + from);
        char group[96], why[192];
        snprintf(group, sizeof group, "%s of %d ranks %s", cc_coll_get(key.coll)->name, key.n,
                 key.scope == CC_SCOPE_INTRA ? "within a node" : "across nodes");
        if (key.scope == CC_SCOPE_INTER && key.most > key.per_node)
            snprintf(group + strlen(group), sizeof group - strlen(group), " (%d to %d per "
                     "node)", key.per_node, key.most);
        else if (key.scope == CC_SCOPE_INTER)
            snprintf(group + strlen(group), sizeof group - strlen(group), " (%d per node)",
                     key.per_node);
        int *nf = &c->nfits[key.coll][key.scope];
        const struct cc_fit *old = NULL;
        for (int j = 0; j < *nf && !old; j++)
            if (c->fits[key.coll][key.scope][j].nranks == key.n &&
                c->fits[key.coll][key.scope][j].per_node == key.per_node &&
                c->fits[key.coll][key.scope][j].nodes == key.nodes)
                old = &c->fits[key.coll][key.scope][j];
        if (fit_points(pts + i, k, &fit, why, sizeof why) != 0) {
            cc_warn("results '%s': %s not fitted: %s", path, group, why);
        } else if (fit.busbw_Bps < 1e6) { /* no interconnect moves less than 1 MB/s */
            cc_errbuf(err, errlen, "results '%s': %s fits %g bytes/s of bus bandwidth, not a "
                      "link's", path, group, fit.busbw_Bps);
            free(v.p);
            return CC_EINVAL;
        } else if (old) {
            cc_warn("results '%s': %s was already read from '%s' (%.1f GB/s there, %.1f here): "
                    "the first is used", path, group, old->from, old->busbw_Bps / 1e9,
                    fit.busbw_Bps / 1e9);
            dup++;
        } else if (*nf < CC_FIT_MAX) {
            int big = key.scope == CC_SCOPE_INTRA ? key.n : key.most;
            if (big > gpn)
                cc_warn("results '%s': %s ran with %d ranks in a node, more than the %d GPUs of "
                        "this cluster's nodes: its rate is used as measured", path, group, big,
                        gpn);
            check_rate(c, path, group, &key, &fit);
            c->fits[key.coll][key.scope][(*nf)++] = fit;
            nfit++;
        } else
            dropped++;
        i += k - 1;
    }
    free(v.p);
    if (dropped)
        cc_warn("results '%s': %d group(s) not used: ccbench keeps %d group sizes per "
                "collective and scope, the first read", path, dropped, CC_FIT_MAX);
    if (!nfit && dup)
        return CC_OK; /* read, and every group already came from an earlier file (warned) */
    if (!nfit) {
        cc_errbuf(err, errlen, "results '%s': no measurement could be fitted%s", path,
                  dropped ? " (every group was beyond the ones already kept)"
                          : " (see the warnings above)");
        return CC_EINVAL;
    }
    size_t used = strlen(c->bw_source);
    snprintf(c->bw_source + used, sizeof c->bw_source - used, "%sfitted from '%s'%s",
             used ? "; " : "", path, nt ? " (nccl-tests)" : osu ? " (OSU)" : "");
    cc_text_line(c->bw_source);
    return CC_OK;
}
