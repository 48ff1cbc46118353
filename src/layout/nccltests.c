/* nccltests.c - nccl-tests text output as measurements (see nccltests.h). */
#include "layout/nccltests.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define HOST_MAX 256

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int cc_nccltests_sniff(FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    int found = 0;
    while (!found && getline(&line, &cap, f) > 0)
        found = starts(line, "# nThread ") || starts(line, "# Collective test starting:") ||
                starts(line, "# nccl-tests version");
    free(line);
    rewind(f);
    return found;
}

int cc_nccltests_name(const char *name, enum cc_coll_id *id)
{
    /* lower case, letters and digits only: "all_reduce_perf" and "AllReduce" both read
     * "allreduce"; the longer names come first so "reduce" is not taken for them */
    static const struct { const char *key; int id; } keys[] = {
        {"reducescatter", CC_REDUCESCATTER}, {"allreduce", CC_ALLREDUCE},
        {"allgather", CC_ALLGATHER},         {"alltoallv", -1},
        {"alltoall", CC_ALLTOALL},           {"sendrecv", CC_SENDRECV},
        {"broadcast", CC_BROADCAST},         {"reduce", CC_REDUCE},
        {"gather", -1}, {"scatter", -1}, {"hypercube", -1}, {"bisection", -1}, {"perf", -1},
    };
    char norm[256];
    size_t j = 0;
    for (; *name && j + 1 < sizeof norm; name++)
        if (isalnum((unsigned char)*name))
            norm[j++] = (char)tolower((unsigned char)*name);
    norm[j] = '\0';
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strstr(norm, keys[i].key)) {
            if (keys[i].id < 0)
                return 1;
            *id = (enum cc_coll_id)keys[i].id;
            return 0;
        }
    return -1;
}

/* One test's worth of state: its collective and its group. */
struct section {
    int named;         /* -1 none, 0 a collective, 1 a test ccbench has no collective for */
    enum cc_coll_id coll;
    int nranks, rows, rank_lines;
    int inplace_col;   /* token of the in-place time: 9, or 13 with per-iteration columns */
    char (*hosts)[HOST_MAX];
    int nhosts, hcap;
};

static void section_reset(struct section *s)
{
    s->named = -1;
    s->nranks = s->rows = s->rank_lines = 0;
    s->inplace_col = 9;
    s->nhosts = 0;
}

static int add_host(struct section *s, const char *host)
{
    for (int i = s->nhosts - 1; i >= 0; i--) /* ranks of a host come together: newest first */
        if (strcmp(s->hosts[i], host) == 0)
            return 0;
    if (s->nhosts == s->hcap) {
        int cap = s->hcap ? 2 * s->hcap : 16;
        void *p = realloc(s->hosts, (size_t)cap * sizeof *s->hosts);
        if (!p)
            return -1;
        s->hosts = p, s->hcap = cap;
    }
    snprintf(s->hosts[s->nhosts++], HOST_MAX, "%s", host);
    return 0;
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

/* A number >= 0 filling the whole token. */
static int number(const char *t, double *v)
{
    char *end;
    *v = strtod(t, &end);
    return end != t && *end == '\0' && *v >= 0 && *v < 1e300;
}

/* #wrong column: "0", a count, or "N/A" (validation off). 1 ok, 0 wrong, -1 not a count. */
static int wrong_ok(const char *t)
{
    if (strcmp(t, "N/A") == 0)
        return 1;
    char *end;
    double w = strtod(t, &end);
    if (end == t || *end != '\0')
        return -1;
    return w == 0;
}

cc_status cc_nccltests_read(FILE *f, const char *path, cc_nt_point_fn fn, void *ctx,
                            struct cc_nt_summary *sum, char *err, size_t errlen)
{
    struct section s = {0};
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    cc_status st = CC_OK;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

    memset(sum, 0, sizeof *sum);
    section_reset(&s);
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        char host[HOST_MAX];
        int rank, group, pid;
        if (starts(line, "# Collective test starting:")) {
            section_reset(&s);
            char *name = line + strlen("# Collective test starting:");
            name[strcspn(name, "\r\n")] = '\0';
            s.named = cc_nccltests_name(name, &s.coll);
            continue;
        }
        if (starts(line, "# nThread ")) {
            if (s.rows || s.rank_lines) /* a second test in the same log, not named */
                section_reset(&s);
            continue;
        }
        if (sscanf(line, "# Rank %d Group %d Pid %d on %255s device", &rank, &group, &pid,
                   host) == 4) {
            if (rank < 0 || rank >= (1 << 24)) {
                cc_errbuf(err, errlen, "results '%s': line %ld: rank %d is out of range", path,
                          lineno, rank);
                st = CC_EPARSE;
                break;
            }
            s.rank_lines++;
            if (rank + 1 > s.nranks)
                s.nranks = rank + 1;
            if (add_host(&s, host)) {
                st = CC_ENOMEM;
                break;
            }
            continue;
        }
        if (line[0] == '#') {
            if (strstr(line, "i_min"))
                s.inplace_col = 13;
            continue;
        }
        /* a row: size count type redop root time algbw busbw #wrong [in-place ...] */
        char *tok[24];
        int nt = 0;
        char *save = NULL;
        for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < 24;
             t = strtok_r(NULL, " \t\r\n", &save))
            tok[nt++] = t;
        if (nt == 0 || !is_uint(tok[0]))
            continue; /* not nccl-tests' own line (NCCL INFO, a launcher's message) */
        double bytes, t_op, t_ip = 0;
        int w_op;
        if (nt < 9 || !is_uint(tok[1]) || !number(tok[0], &bytes) ||
            !number(tok[5], &t_op) || (w_op = wrong_ok(tok[8])) < 0) {
            cc_errbuf(err, errlen, "results '%s': line %ld: not an nccl-tests result row "
                      "(size count type redop root time algbw busbw #wrong ...)", path, lineno);
            st = CC_EPARSE;
            break;
        }
        s.rows++;
        if (s.named < 0) /* the log does not say: the file's name may */
            s.named = cc_nccltests_name(base, &s.coll);
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
        if (s.nranks < 2) {
            sum->single_rows++;
            continue;
        }
        if (bytes <= 0 || t_op <= 0) /* the size-0 row of a sweep from 0 */
            continue;
        struct cc_nt_point p = {s.coll, s.nranks, s.nhosts, bytes, t_op * 1e-6, 0};
        int ic = s.inplace_col, w_ip = -1;
        int have_ip = nt > ic + 3 && number(tok[ic], &t_ip) && t_ip > 0 &&
                      (w_ip = wrong_ok(tok[ic + 3])) >= 0;
        if (!w_op || (have_ip && !w_ip))
            sum->wrong_rows++;
        if (w_op) {
            if (fn(&p, ctx)) {
                st = CC_ENOMEM;
                break;
            }
            sum->points++;
        }
        if (have_ip && w_ip) {
            p.time_s = t_ip * 1e-6, p.inplace = 1;
            if (fn(&p, ctx)) {
                st = CC_ENOMEM;
                break;
            }
            sum->points++;
        }
    }
    free(s.hosts);
    free(line);
    return st;
}
