/* nccltests.c - nccl-tests text output as measurements (see nccltests.h). */
#include "layout/nccltests.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/log.h"

#define HOST_MAX 256
#define TOK_MAX 32
#define RANK_MAX (1L << 24)

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A launcher's tag in front of every line: "12: " (srun -l), "[1,0]<stdout>:" (Open MPI
 * --tag-output), "[3] " (MPICH -prepend-rank, Intel MPI -l) or "node-a: " / "10.0.0.1: "
 * (pdsh, clush) in front of a comment or a row. Returns the text after it. */
char *cc_nccltests_untag(char *line)
{
    char *p = line;
    while (*p == ' ')
        p++;
    if (isdigit((unsigned char)*p)) {
        char *q = p;
        while (isdigit((unsigned char)*q))
            q++;
        if (q[0] == ':' && q[1] == ' ')
            return q + 2;
    } else if (*p == '[') {
        char *q = strstr(p, "]<stdout>:");
        if (!q)
            q = strstr(p, "]<stderr>:");
        if (q && q - p < 32) /* Open MPI 5 puts a space after the tag, 4 does not */
            return q + strlen("]<stdout>:") + (q[strlen("]<stdout>:")] == ' ');
        q = p + 1;
        while (isdigit((unsigned char)*q))
            q++;
        if (q > p + 1 && q[0] == ']' && q[1] == ' ')
            return q + 2;
    }
    if (isalnum((unsigned char)*p)) { /* a host name, or an address: "10.0.0.1: " */
        char *q = p;
        while (isalnum((unsigned char)*q) || *q == '-' || *q == '.' || *q == '_')
            q++;
        if (q - p < HOST_MAX && q[0] == ':' && q[1] == ' ') {
            char *r = q + 2;
            while (*r == ' ')
                r++;
            if (*r == '#' || isdigit((unsigned char)*r)) /* a host's comment or row */
                return q + 2;
        }
    }
    return line;
}

static int is_marker(const char *s)
{
    return starts(s, "# nThread ") || starts(s, "# Collective test starting:") ||
           starts(s, "# nccl-tests version");
}

int cc_log_has_line(FILE *f, int (*is)(const char *line))
{
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    while (!found && getline(&line, &cap, f) > 0)
        found = is(cc_nccltests_untag(line));
    free(line);
    rewind(f);
    return found;
}

int cc_nccltests_sniff(FILE *f)
{
    return cc_log_has_line(f, is_marker);
}

int cc_nccltests_name(const char *name, int from_log, enum cc_coll_id *id)
{
    /* lower case, letters and digits only: "all_reduce_perf" and "AllReduce" both read
     * "allreduce"; the longer names come first so "reduce" is not taken for them. "perf"
     * (any *_perf program) counts only in the log's own test line: a file name with "perf"
     * in it names no test */
    static const struct { const char *key; int id; } keys[] = {
        {"reducescatter", CC_REDUCESCATTER}, {"allreduce", CC_ALLREDUCE},
        {"allgather", CC_ALLGATHER},         {"alltoallv", -1},
        {"alltoall", CC_ALLTOALL},           {"sendrecv", CC_SENDRECV},
        {"broadcast", CC_BROADCAST},         {"reduce", CC_REDUCE},
        {"gather", -1}, {"scatter", -1}, {"hypercube", -1}, {"bisection", -1}, {"perf", -2},
    };
    char norm[256];
    size_t j = 0;
    for (; *name && j + 1 < sizeof norm; name++)
        if (isalnum((unsigned char)*name))
            norm[j++] = (char)tolower((unsigned char)*name);
    norm[j] = '\0';
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strstr(norm, keys[i].key)) {
            if (keys[i].id == -2 && !from_log)
                continue;
            if (keys[i].id < 0)
                return 1;
            *id = (enum cc_coll_id)keys[i].id;
            return 0;
        }
    return -1;
}

/* One test's worth of state: its collective, its group and where its columns are. */
struct section {
    int named;          /* -1 none, 0 a collective, 1 a test ccbench has no collective for */
    enum cc_coll_id coll;
    int nranks, rows, used_rows, rank_lines;
    long group;         /* the group of the first Rank line (NCCL_TESTS_SPLIT): rows are its */
    int t_op, t_ip;     /* tokens of the out-of-place and in-place time (-1: none) */
    int cputime;        /* the times are host CPU times (-C): not a collective's duration */
    int old_error;      /* pre-2.13 logs: an "error" (max deviation) column, not #wrong */
    char cols[96];      /* the header's columns before the time: "size,count,type,redop" */
    char (*hosts)[HOST_MAX];
    int nhosts, hcap;
    /* points of this section, handed on when it ends (an old log's verdict comes last) */
    struct cc_nt_point *pts;
    int npts, pcap;
    int failed;         /* "# Out of bounds values : N FAILED" */
    unsigned char *seen; /* ranks of the group seen in Rank lines (a bitmap) */
    size_t seen_bytes;
    int ratio_checked;  /* the rows' busbw/algbw was compared with the collective's factor */
};

static void section_reset(struct section *s)
{
    s->named = -1;
    s->nranks = s->rows = s->used_rows = s->rank_lines = 0;
    s->group = -1;
    s->t_op = 5, s->t_ip = 9; /* size count type redop root time algbw busbw #wrong ... */
    s->cputime = s->old_error = 0;
    s->cols[0] = '\0';
    s->nhosts = 0;
    s->npts = 0;
    s->failed = 0;
    if (s->seen)
        memset(s->seen, 0, s->seen_bytes);
    s->ratio_checked = 0;
}

/* Mark a rank of the group seen: 1 new, 0 seen before, -1 out of memory. */
static int see_rank(struct section *s, long rank)
{
    size_t byte = (size_t)rank / 8;
    if (byte >= s->seen_bytes) {
        size_t n = s->seen_bytes ? s->seen_bytes : 64;
        while (n <= byte)
            n *= 2;
        unsigned char *b = realloc(s->seen, n);
        if (!b)
            return -1;
        memset(b + s->seen_bytes, 0, n - s->seen_bytes);
        s->seen = b, s->seen_bytes = n;
    }
    unsigned char bit = (unsigned char)(1u << (rank % 8));
    if (s->seen[byte] & bit)
        return 0;
    s->seen[byte] |= bit;
    return 1;
}

/* Position of a column in the header's list ("size,count,type,redop,root"), -1 if absent. */
static int col_index(const struct section *s, const char *name)
{
    int i = 0;
    size_t n = strlen(name);
    for (const char *c = s->cols; *c; i++) {
        if (strncmp(c, name, n) == 0 && (c[n] == ',' || c[n] == '\0'))
            return i;
        c = strchr(c, ',');
        if (!c)
            break;
        c++;
    }
    return -1;
}

static int add_host(struct section *s, const char *host)
{
    for (int i = s->nhosts - 1; i >= 0; i--) /* ranks of a host come together: newest first */
        if (strcmp(s->hosts[i], host) == 0)
            return 0;
    void *p = cc_grow(s->hosts, &s->hcap, s->nhosts, sizeof *s->hosts, 16);
    if (!p)
        return -1;
    s->hosts = p;
    snprintf(s->hosts[s->nhosts++], HOST_MAX, "%s", host);
    return 0;
}

static int add_point(struct section *s, const struct cc_nt_point *p)
{
    void *np = cc_grow(s->pts, &s->pcap, s->npts, sizeof *s->pts, 64);
    if (!np)
        return -1;
    s->pts = np;
    s->pts[s->npts++] = *p;
    return 0;
}

/* Hand a finished section's points on; an old log that reported out-of-bounds values gives
 * none (its rows cannot be told apart). */
static int section_flush(struct section *s, cc_nt_point_fn fn, void *ctx,
                         struct cc_nt_summary *sum)
{
    if (s->old_error && s->failed) {
        sum->failed_rows += s->used_rows;
        s->npts = 0;
    }
    for (int i = 0; i < s->npts; i++) {
        if (fn(&s->pts[i], ctx))
            return -1;
        sum->points++;
    }
    s->npts = 0;
    return 0;
}

static int split(char *line, char **tok)
{
    int nt = 0;
    char *save = NULL;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < TOK_MAX;
         t = strtok_r(NULL, " \t\r\n", &save))
        tok[nt++] = t;
    return nt;
}

static int is_uint(const char *t)
{
    if (!*t)
        return 0;
    for (; *t; t++)
        if (!isdigit((unsigned char)*t))
            return 0;
    return 1;
}

/* A decimal number >= 0 filling the whole token (not hex, inf or nan, which strtod takes). */
static int number(const char *t, double *v)
{
    char *end;
    if (strpbrk(t, "xXnN"))
        return 0;
    *v = strtod(t, &end);
    return end != t && *end == '\0' && *v >= 0 && *v < 1e300;
}

/* The verdict column: "0", a count, "N/A" (validation off) or, in old logs, the largest
 * deviation (judged by the log's footer instead). 1 usable, 0 wrong, -1 not a verdict. */
static int verdict(const char *t, int old_error)
{
    if (strcmp(t, "N/A") == 0)
        return 1;
    char *end;
    double w = strtod(t, &end);
    if (end == t || *end != '\0')
        return -1;
    return old_error || w == 0;
}

/* "#  Rank N Group G Pid P on HOST device D ..." (nccl-tests 2.13 on) or "#   Rank N Pid P on
 * HOST device D ..." (before). 1 parsed, 0 not a Rank line, -1 a rank out of range, -2 a
 * "# Rank N" line without the rest (no group, pid or host where they belong). */
static int rank_line(char *line, long *rank, long *group, char *host)
{
    char *tok[TOK_MAX];
    int nt = split(line, tok), i = 3;
    if (nt < 3 || strcmp(tok[0], "#") || strcmp(tok[1], "Rank"))
        return 0;
    char *end;
    errno = 0;
    *rank = strtol(tok[2], &end, 10);
    if (*end || errno)
        return *end ? 0 : -1;
    *group = 0;
    if (nt > 4 && strcmp(tok[3], "Group") == 0) {
        *group = strtol(tok[4], &end, 10);
        if (*end || end == tok[4])
            return -2;
        i = 5;
    }
    if (i + 3 >= nt || strcmp(tok[i], "Pid") || strcmp(tok[i + 2], "on"))
        return -2;
    snprintf(host, HOST_MAX, "%s", tok[i + 3]);
    return *rank < 0 || *rank >= RANK_MAX ? -1 : 1;
}

/* The column header "#  size count type redop [root] time algbw busbw #wrong|error ...":
 * where the out-of-place and in-place times are. Other comment lines change nothing. */
static void column_header(struct section *s, char *line)
{
    char *tok[TOK_MAX];
    int nt = split(line, tok), t[2] = {-1, -1}, n = 0;
    if (nt < 2 || strcmp(tok[0], "#") || strcmp(tok[1], "size"))
        return;
    size_t used = 0;
    for (int i = 1; i < nt && n < 2; i++)
        if (n == 0 && strcmp(tok[i], "time") && strcmp(tok[i], "cputime")) {
            used += (size_t)snprintf(s->cols + used, used < sizeof s->cols ? sizeof s->cols - used : 0,
                                     "%s%s", used ? "," : "", tok[i]);
            if (used >= sizeof s->cols)
                used = sizeof s->cols - 1;
        } else if (strcmp(tok[i], "time") == 0 || strcmp(tok[i], "cputime") == 0) {
            s->cputime |= tok[i][0] == 'c';
            t[n++] = i - 1; /* row tokens have no leading "#" */
        } else if (strcmp(tok[i], "error") == 0) {
            s->old_error = 1;
        }
    if (t[0] >= 0)
        s->t_op = t[0], s->t_ip = t[1];
}

static cc_status nomem(char *err, size_t errlen, const char *path)
{
    cc_errbuf(err, errlen, "results '%s': out of memory", path);
    return CC_ENOMEM;
}

cc_status cc_nccltests_read(FILE *f, const char *path, cc_nt_point_fn fn, void *ctx,
                            struct cc_nt_summary *sum, char *err, size_t errlen)
{
    struct section s = {0};
    char *buf = NULL;
    size_t cap = 0;
    long lineno = 0;
    cc_status st = CC_OK;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

    memset(sum, 0, sizeof *sum);
    section_reset(&s);
    while (st == CC_OK && getline(&buf, &cap, f) > 0) {
        lineno++;
        char *line = cc_nccltests_untag(buf);
        char host[HOST_MAX];
        long rank, group;
        int r;
        if (starts(line, "# Collective test starting:") ||
            (starts(line, "# nThread ") && (s.rows || s.rank_lines))) {
            /* a new test: named, or (older logs) the next nThread line after a table */
            if (section_flush(&s, fn, ctx, sum)) {
                st = nomem(err, errlen, path);
                break;
            }
            section_reset(&s);
            if (starts(line, "# Collective test starting:")) {
                char *name = line + strlen("# Collective test starting:");
                name[strcspn(name, "\r\n")] = '\0';
                s.named = cc_nccltests_name(name, 1, &s.coll);
            }
            continue;
        }
        if (starts(line, "# Out of bounds values") && strstr(line, "FAILED")) {
            s.failed = 1;
            continue;
        }
        if (line[0] == '#') {
            char copy[1024];
            snprintf(copy, sizeof copy, "%s", line);
            if ((r = rank_line(copy, &rank, &group, host)) == -2) {
                cc_errbuf(err, errlen, "results '%s': line %ld: a Rank line without its pid and "
                          "host (\"#  Rank N [Group G] Pid P on HOST ...\")", path,
                          lineno);
                st = CC_EPARSE;
            } else if (r < 0) {
                cc_errbuf(err, errlen, "results '%s': line %ld: a Rank line's rank is out of "
                          "range (0 to %ld)", path, lineno, RANK_MAX - 1);
                st = CC_EPARSE;
            } else if (r > 0) {
                if (s.group < 0)
                    s.group = group;
                if (group == s.group) { /* NCCL_TESTS_SPLIT: the rows are the first group's */
                    int fresh = see_rank(&s, rank);
                    if (fresh < 0) {
                        st = nomem(err, errlen, path);
                    } else if (!fresh) {
                        cc_errbuf(err, errlen, "results '%s': line %ld: rank %ld listed twice in "
                                  "one test: separate one-GPU runs (nccl-tests built without "
                                  "MPI=1 and started by mpirun or srun), not one test over them",
                                  path, lineno, rank);
                        st = CC_EPARSE;
                    }
                    s.rank_lines++;
                    s.nranks++;
                    if (st == CC_OK && add_host(&s, host))
                        st = nomem(err, errlen, path);
                }
            } else {
                column_header(&s, line);
            }
            continue;
        }
        /* a row: size count type redop [root] time algbw busbw #wrong [in-place ...] */
        char *tok[TOK_MAX];
        int nt = split(line, tok);
        if (nt == 0 || !is_uint(tok[0]))
            continue; /* not nccl-tests' own line (NCCL INFO, a launcher's message) */
        if (!s.cols[0]) {
            sum->pre_header++; /* a script's message, or rows whose header is missing */
            continue;
        }
        double bytes, t_op, t_ip = 0;
        int v_op, v_ip = -1, o = s.t_op, ip = s.t_ip;
        /* nccl-tests 2.13.0-2.13.3 print no redop for tests without one (all_gather,
         * alltoall, broadcast) though the header names the column: the root comes early */
        int redop = col_index(&s, "redop");
        if (redop >= 0 && nt > redop && (is_uint(tok[redop]) || !strcmp(tok[redop], "-1")) &&
            col_index(&s, "root") == redop + 1)
            o--, ip -= ip > 0;
        if (nt < o + 4 || !is_uint(tok[1]) || !number(tok[0], &bytes) ||
            !number(tok[o], &t_op) || (v_op = verdict(tok[o + 3], s.old_error)) < 0) {
            /* half a row with NCCL's log in it, or a stray line: passed over, counted */
            if (!sum->bad_rows++)
                sum->first_bad_line = lineno;
            continue;
        }
        s.rows++;
        sum->rows++;
        if (s.named < 0) /* the log does not say: the file's name may */
            s.named = cc_nccltests_name(base, 0, &s.coll);
        if (s.named < 0) {
            cc_errbuf(err, errlen, "results '%s': line %ld: cannot tell which collective this "
                      "nccl-tests log measured (no '# Collective test starting' line, and the "
                      "file name names none of all_reduce, all_gather, reduce_scatter, "
                      "broadcast, reduce, alltoall, sendrecv)", path, lineno);
            st = CC_EPARSE;
            break;
        }
        if (!s.rank_lines) {
            cc_errbuf(err, errlen, "results '%s': line %ld: result row before the '#  Rank' "
                      "lines, so the group size is unknown", path, lineno);
            st = CC_EPARSE;
            break;
        }
        if (s.named > 0) {
            sum->other_rows++;
            continue;
        }
        if (s.cputime) {
            sum->cputime_rows++;
            continue;
        }
        if (s.nranks < 2) {
            sum->single_rows++;
            continue;
        }
        /* the rows must be of the collective the section is taken for: its redop and root
         * columns, and busbw/algbw its bus factor at this many ranks (a file named after
         * one test holding another, or a mislabelled log, is refused rather than misread) */
        const struct cc_coll *cl = cc_coll_get(s.coll);
        int rootc = col_index(&s, "root"), redc = col_index(&s, "redop");
        double algbw, busbw;
        const char *why = NULL;
        if (redc >= 0 && redc < o && nt > redc && (cl->flags & CC_COLL_HAS_OP) &&
            !strcmp(tok[redc], "none"))
            why = "no reduction operator";
        else if (redc >= 0 && redc < o && nt > redc && !is_uint(tok[redc]) &&
                 strcmp(tok[redc], "-1") && strcmp(tok[redc], "none") &&
                 (s.coll == CC_ALLGATHER || s.coll == CC_ALLTOALL || s.coll == CC_BROADCAST))
            why = "a reduction operator"; /* nccl-tests prints none for these (sendrecv: sum) */
        else if (rootc >= 0 && rootc < o && nt > rootc && strcmp(tok[rootc], "-1") &&
                 !(cl->flags & CC_COLL_HAS_ROOT))
            why = "a root";
        else if (rootc >= 0 && rootc < o && nt > rootc && !strcmp(tok[rootc], "-1") &&
                 (cl->flags & CC_COLL_HAS_ROOT))
            why = "no root";
        else if (!s.ratio_checked && number(tok[o + 1], &algbw) && number(tok[o + 2], &busbw) &&
                 algbw >= 1.0) { /* printed to 0.01: 1% at 1 GB/s */
            double want = cl->busbw_factor(s.nranks), ratio = busbw / algbw;
            s.ratio_checked = 1;
            if (fabs(ratio - want) > 0.02 * want + 0.011 / algbw) {
                cc_errbuf(err, errlen, "results '%s': line %ld: busbw/algbw is %.3f, not %s's "
                          "%.3f at %d ranks: the rows are of another test (split the log per "
                          "test, or name the file after its test)%s", path, lineno, ratio,
                          cl->name, want, s.nranks,
                          ratio < 0.05 ? ", or of separate one-GPU runs" : "");
                st = CC_EPARSE;
                break;
            }
        }
        if (why) {
            cc_errbuf(err, errlen, "results '%s': line %ld: a row with %s is not %s (split the "
                      "log per test, or name the file after its test)", path, lineno, why,
                      cl->name);
            st = CC_EPARSE;
            break;
        }
        if (bytes <= 0 || t_op <= 0) { /* the size-0 row of a sweep from 0 */
            sum->empty_rows++;
            continue;
        }
        /* in-place: not for the collectives that have none (nccl-tests times them anyway) */
        int have_ip = ip > 0 && nt >= ip + 4 &&
                      !(cc_coll_get(s.coll)->flags & CC_COLL_NO_INPLACE) &&
                      number(tok[ip], &t_ip) && t_ip > 0 &&
                      (v_ip = verdict(tok[ip + 3], s.old_error)) >= 0;
        sum->wrong_runs += !v_op + (have_ip && !v_ip);
        s.used_rows += v_op || (have_ip && v_ip);
        struct cc_nt_point p = {s.coll, s.nranks, s.nhosts, bytes, t_op * 1e-6, 0};
        if (v_op && add_point(&s, &p))
            st = nomem(err, errlen, path);
        p.time_s = t_ip * 1e-6, p.inplace = 1;
        if (st == CC_OK && have_ip && v_ip && add_point(&s, &p))
            st = nomem(err, errlen, path);
    }
    if (st == CC_OK && section_flush(&s, fn, ctx, sum))
        st = nomem(err, errlen, path);
    free(s.hosts);
    free(s.pts);
    free(s.seen);
    free(buf);
    return st;
}
