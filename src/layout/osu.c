/* osu.c - OSU Micro-Benchmarks text output as measurements (see osu.h). */
#include "layout/osu.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define TOK_MAX 32

/* Where a test's buffers were, from the title's library word. */
enum osu_mem { OSU_HOST, OSU_DEVICE, OSU_CCL };

/* One test: its collective (or none), how its size maps to nccl-tests', its column header. */
struct test {
    int known;          /* 1 a collective ccbench has, 0 another test, -1 no title yet */
    enum cc_coll_id coll;
    int per_rank;       /* OSU's size is per rank (all-gather) or per peer (all-to-all) */
    int header;         /* the "# Size" column header was read */
};

/* A title's words after "# OSU ": the library, then the test's name up to "Test". Lower case,
 * letters and digits only: "Reduce_scatter Latency" reads "reducescatterlatency". */
static int parse_title(char *rest, struct test *t, enum osu_mem *mem)
{
    static const struct { const char *key; int coll, per_rank; } keys[] = {
        {"allreducelatency", CC_ALLREDUCE, 0},       {"reducelatency", CC_REDUCE, 0},
        {"broadcastlatency", CC_BROADCAST, 0},       {"bcastlatency", CC_BROADCAST, 0},
        {"reducescatterlatency", CC_REDUCESCATTER, 0},
        {"allgatherlatency", CC_ALLGATHER, 1},       {"alltoalllatency", CC_ALLTOALL, 1},
        {"alltoallpersonalizedexchangelatency", CC_ALLTOALL, 1},
        {"latency", CC_SENDRECV, 0},
    };
    char *save = NULL, *w = strtok_r(rest, " \t\r\n", &save);
    if (!w)
        return -1;
    char lib[32];
    size_t j = 0;
    for (const char *c = w; *c && j + 1 < sizeof lib; c++)
        lib[j++] = (char)toupper((unsigned char)*c);
    lib[j] = '\0';
    *mem = strstr(lib, "CCL") ? OSU_CCL : strchr(lib, '-') ? OSU_DEVICE : OSU_HOST;
    char norm[256];
    j = 0;
    int ended = 0;
    while (!ended && (w = strtok_r(NULL, " \t\r\n", &save))) {
        if (strcmp(w, "MANAGED") == 0 && j == 0) { /* "MPI-CUDA MANAGED Allreduce ..." */
            *mem = OSU_DEVICE;
            continue;
        }
        if (strcmp(w, "Test") == 0)
            ended = 1;
        for (; *w && !ended && j + 1 < sizeof norm; w++)
            if (isalnum((unsigned char)*w))
                norm[j++] = (char)tolower((unsigned char)*w);
    }
    norm[j] = '\0';
    if (!ended)
        return -1; /* not a title: "# OSU" and no "Test" */
    t->known = 0;
    if (strchr(lib, '_') || (!strstr(lib, "MPI") && !strstr(lib, "CCL")))
        return 0; /* one-sided ("MPI_Put Latency"), or a library OSU does not name so */
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (strcmp(norm, keys[i].key) == 0) {
            t->known = 1;
            t->coll = (enum cc_coll_id)keys[i].coll;
            t->per_rank = keys[i].per_rank;
        }
    return 0;
}

static int is_title(const char *line)
{
    return strncmp(line, "# OSU ", 6) == 0 && strstr(line, " Test");
}

int cc_osu_sniff(FILE *f)
{
    return cc_log_has_line(f, is_title);
}

/* A row: the size (an unsigned integer) and a time (a number >= 0), then anything. 1 a row,
 * 0 not one; *fail when a later column says "Fail". */
static int row(char *line, double *bytes, double *us, int *fail)
{
    char *tok[TOK_MAX], *save = NULL, *end;
    int nt = 0;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && nt < TOK_MAX;
         t = strtok_r(NULL, " \t\r\n", &save))
        tok[nt++] = t;
    if (nt < 2 || strspn(tok[0], "0123456789") != strlen(tok[0]))
        return 0;
    *bytes = strtod(tok[0], NULL);
    if (strpbrk(tok[1], "xXnN")) /* hex, inf, nan: not OSU's */
        return 0;
    *us = strtod(tok[1], &end);
    if (end == tok[1] || *end || !(*us >= 0 && *us < 1e300))
        return 0;
    *fail = 0;
    for (int i = 2; i < nt; i++)
        if (strcmp(tok[i], "Fail") == 0)
            *fail = 1;
    return 1;
}

cc_status cc_osu_read(FILE *f, const char *path, int nodes, int per_node, cc_nt_point_fn fn,
                      void *ctx, struct cc_osu_summary *sum, char *err, size_t errlen)
{
    struct test t = {.known = -1};
    char *buf = NULL;
    size_t cap = 0;
    long lineno = 0;
    cc_status st = CC_OK;
    int n = nodes * per_node;

    memset(sum, 0, sizeof *sum);
    while (st == CC_OK && getline(&buf, &cap, f) > 0) {
        lineno++;
        char *line = cc_nccltests_untag(buf);
        if (is_title(line)) {
            enum osu_mem mem;
            struct test nt = {0};
            char copy[512];
            snprintf(copy, sizeof copy, "%s", line + 6);
            if (parse_title(copy, &nt, &mem) != 0)
                continue;
            t = nt;
            sum->tests++;
            if (t.known && t.coll == CC_SENDRECV && n != 2) {
                cc_errbuf(err, errlen, "results '%s': line %ld: an OSU point-to-point latency "
                          "test runs 2 ranks, not the %d of @%dx%d (use @1x2 within a node, "
                          "@2x1 across two)", path, lineno, n, nodes, per_node);
                st = CC_EPARSE;
            } else if (t.known) {
                sum->host_tests += mem == OSU_HOST;
                sum->device_tests += mem == OSU_DEVICE;
            }
            continue;
        }
        if (line[0] == '#') {
            if (t.known >= 0 && strncmp(line, "# Size", 6) == 0)
                t.header = 1;
            continue;
        }
        double bytes, us;
        int fail;
        char *p = line + strspn(line, " \t");
        if (!isdigit((unsigned char)*p))
            continue; /* not OSU's own line (a launcher's or the library's message) */
        if (t.known < 0 || !t.header) {
            sum->pre_header++;
            continue;
        }
        if (!row(line, &bytes, &us, &fail)) {
            if (!sum->bad_rows++)
                sum->first_bad_line = lineno;
            continue;
        }
        sum->rows++;
        if (!t.known) {
            sum->other_rows++;
        } else if (fail) {
            sum->failed_rows++;
        } else if (!(bytes > 0) || !(us > 0)) {
            sum->empty_rows++;
        } else {
            struct cc_nt_point pt = {t.coll, n, nodes, bytes * (t.per_rank ? n : 1), us * 1e-6,
                                     0};
            if (fn(&pt, ctx)) {
                cc_errbuf(err, errlen, "results '%s': out of memory", path);
                st = CC_ENOMEM;
            } else {
                sum->points++;
            }
        }
    }
    free(buf);
    return st;
}
