/* The text table: nccl-tests' columns, then what users ask for and nccl-tests lacks. */
#include "report/report.h"

#include <stdlib.h>
#include <string.h>

struct text_state {
    FILE *out;
    int places;
    const struct cc_coll *current;
};

static void rule(struct text_state *t, const struct cc_row *r)
{
    FILE *o = t->out;
    fprintf(o, "#\n# %s\n", r->coll->label);
    fprintf(o, "# %12s %12s %8s %6s %5s", "size", "count", "type", "redop", "root");
    for (int p = 0; p < 2; p++) {
        if (!(t->places & (1 << p)))
            continue;
        fprintf(o, " | %-13s%10s %8s %8s %6s %9s %9s %6s", p ? "in-place" : "out-of-place",
                "time", "algbw", "busbw", "#wrong", "p50", "p99", "iters");
    }
    fprintf(o, " | %s\n", "slowest rank");
    fprintf(o, "# %12s %12s %8s %6s %5s", "(B)", "(elements)", "", "", "");
    for (int p = 0; p < 2; p++) {
        if (!(t->places & (1 << p)))
            continue;
        fprintf(o, " | %-13s%10s %8s %8s %6s %9s %9s %6s", "", "(us)", "(GB/s)", "(GB/s)", "",
                "(us)", "(us)", "");
    }
    fprintf(o, " | %s\n", "(skew)");
}

static int text_begin(void *st, json_t *h)
{
    struct text_state *t = st;
    json_t *v;
    fprintf(t->out, "# ccbench %s: backend %s, %lld ranks on %lld node(s), type %s, op %s\n",
            json_string_value(json_object_get(h, "command")) ?: "bench",
            json_string_value(json_object_get(h, "backend")) ?: "?",
            json_integer_value(json_object_get(h, "nranks")),
            json_integer_value(json_object_get(h, "nnodes")),
            json_string_value(json_object_get(h, "datatype")) ?: "?",
            json_string_value(json_object_get(h, "op")) ?: "?");
    if ((v = json_object_get(h, "timing")))
        fprintf(t->out, "# timing: %s\n", json_string_value(v));
    return cc_report_flush(t->out);
}

static int text_row(void *st, const struct cc_row *r)
{
    struct text_state *t = st;
    FILE *o = t->out;
    char root[16];
    if (r->coll != t->current) {
        rule(t, r);
        t->current = r->coll;
    }
    if (r->root >= 0)
        snprintf(root, sizeof root, "%d", r->root);
    else
        strcpy(root, "-1");
    fprintf(o, "  %12zu %12zu %8s %6s %5s", r->bytes, r->count, cc_dtype_name(r->dtype),
            (r->coll->flags & CC_COLL_HAS_OP) ? cc_op_name(r->op) : "none", root);
    const struct cc_measure *slow = NULL;
    for (int p = 0; p < 2; p++) {
        const struct cc_measure *m = &r->m[p];
        if (!(t->places & (1 << p)))
            continue;
        if (!m->valid) {
            fprintf(o, " | %-13s%10s %8s %8s %6s %9s %9s %6s", "", "n/a", "", "", "", "", "", "");
            continue;
        }
        if (!slow)
            slow = m;
        char wrong[24];
        if (m->wrong < 0)
            strcpy(wrong, "N/A");
        else
            snprintf(wrong, sizeof wrong, "%lld", m->wrong);
        fprintf(o, " | %-13s%10.2f %8.3f %8.3f %6s %9.2f %9.2f %6ld", "", m->time_us, m->algbw,
                m->busbw, wrong, m->p50_us, m->p99_us, m->iters);
    }
    if (slow)
        fprintf(o, " | %d %s (%.1f%%)\n", slow->slow_rank, slow->slow_host ? slow->slow_host : "",
                slow->skew_pct);
    else
        fprintf(o, " |\n");
    return cc_report_flush(o);
}

static int text_end(void *st, const struct cc_summary *s, int n, enum cc_stop stop)
{
    static const char *const why[] = {
        [CC_STOP_ERROR] = "stopped by an error", [CC_STOP_INTERRUPT] = "interrupted",
        [CC_STOP_TERM] = "stopped by SIGTERM",
    };
    struct text_state *t = st;
    if (stop != CC_STOP_NONE)
        fprintf(t->out, "# %s: the summary covers the sizes measured so far\n", why[stop]);
    fprintf(t->out, "#\n");
    return cc_summary_print(t->out, s, n);
}

static int text_close(void *st)
{
    free(st);
    return 0;
}

cc_status cc_sink_text(struct cc_sink *s, FILE *out, const struct cc_text_opts *o)
{
    struct text_state *t = calloc(1, sizeof *t);
    if (!t)
        return CC_ENOMEM;
    t->out = out;
    t->places = o ? o->places : 3;
    *s = (struct cc_sink){t, text_begin, text_row, text_end, text_close};
    return CC_OK;
}
