/* CSV: one line per measurement; the header line names every column with its unit. */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

/* A text field as RFC 4180 has it: quoted, with its quotes doubled, when it holds a comma, a
 * quote or a line break (a host may be named anything). */
static void csv_text(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

struct csv_state {
    FILE *out;
    int own;
};

static int csv_begin(void *st, json_t *h)
{
    struct csv_state *c = st;
    (void)h;
    fprintf(c->out, "collective,backend,datatype,op,root,nranks,bytes,count,inplace,iters,"
                    "time_us,p50_us,p99_us,min_us,max_us,ci95_us,algbw_GBps,busbw_GBps,wrong,"
                    "slowest_rank,slowest_host,skew_pct\n");
    return cc_report_flush(c->out);
}

static int csv_row(void *st, const struct cc_row *r)
{
    struct csv_state *c = st;
    for (int p = 0; p < 2; p++) {
        const struct cc_measure *m = &r->m[p];
        if (!m->valid)
            continue;
        char ci[32] = ""; /* empty: one timed iteration has no confidence interval */
        if (m->iters > 1)
            snprintf(ci, sizeof ci, "%.3f", m->ci95_us);
        fprintf(c->out, "%s,%s,%s,%s,%d,%d,%zu,%zu,%d,%ld,%.3f,%.3f,%.3f,%.3f,%.3f,%s,%.6f,%.6f,",
                r->coll->name, r->backend, cc_dtype_name(r->dtype),
                (r->coll->flags & CC_COLL_HAS_OP) ? cc_op_name(r->op) : "", r->root, r->nranks,
                r->bytes, r->count, p, m->iters, m->time_us, m->p50_us, m->p99_us, m->min_us,
                m->max_us, ci, m->algbw, m->busbw);
        if (m->wrong >= 0)
            fprintf(c->out, "%lld", m->wrong);
        fprintf(c->out, ",%d,", m->slow_rank);
        csv_text(c->out, m->slow_host ? m->slow_host : "");
        fprintf(c->out, ",%.2f\n", m->skew_pct);
    }
    return cc_report_flush(c->out);
}

static int csv_end(void *st, const struct cc_summary *s, int n, enum cc_stop stop)
{
    (void)st; (void)s; (void)n; (void)stop;
    return 0;
}

static int csv_close(void *st)
{
    struct csv_state *c = st;
    int rc = c->own && fclose(c->out) != 0 ? -1 : 0;
    free(c);
    return rc;
}

cc_status cc_sink_csv(struct cc_sink *s, FILE *out, int own)
{
    struct csv_state *c = calloc(1, sizeof *c);
    if (!c)
        return CC_ENOMEM;
    c->out = out;
    c->own = own;
    *s = (struct cc_sink){c, csv_begin, csv_row, csv_end, csv_close};
    return CC_OK;
}
