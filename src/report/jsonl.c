/* JSON Lines: {"type":"header",...}, then {"type":"result",...} per measurement, then
 * {"type":"summary",...} per collective. Each line is flushed when written. */
#include "report/report.h"

#include <errno.h>
#include <stdlib.h>

struct jsonl_state {
    FILE *out;
    int own;
};

static int put(struct jsonl_state *j, json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    fprintf(j->out, "%s\n", s);
    free(s);
    return cc_report_flush(j->out); /* each line is on disk, or its failure seen, at once */
}

json_t *cc_measure_json(const struct cc_row *r, enum cc_place p)
{
    const struct cc_measure *m = &r->m[p];
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("result"));
    json_object_set_new(o, "collective", json_string(r->coll->name));
    json_object_set_new(o, "backend", json_string(r->backend));
    json_object_set_new(o, "datatype", json_string(cc_dtype_name(r->dtype)));
    json_object_set_new(o, "op", (r->coll->flags & CC_COLL_HAS_OP) ? json_string(cc_op_name(r->op))
                                                                    : json_null());
    json_object_set_new(o, "root", json_integer(r->root));
    json_object_set_new(o, "nranks", json_integer(r->nranks));
    json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
    json_object_set_new(o, "count", json_integer((json_int_t)r->count));
    json_object_set_new(o, "inplace", json_boolean(p == CC_INPLACE));
    if (!m->valid) {
        json_object_set_new(o, "na", json_string(m->na_reason ? m->na_reason : "not measured"));
        return o;
    }
    json_object_set_new(o, "iters", json_integer(m->iters));
    json_object_set_new(o, "time_us", json_real(m->time_us));
    json_object_set_new(o, "p50_us", json_real(m->p50_us));
    json_object_set_new(o, "p99_us", json_real(m->p99_us));
    json_object_set_new(o, "min_us", json_real(m->min_us));
    json_object_set_new(o, "max_us", json_real(m->max_us));
    /* one timed iteration has no confidence interval */
    json_object_set_new(o, "ci95_us", m->iters > 1 ? json_real(m->ci95_us) : json_null());
    json_object_set_new(o, "algbw_GBps", json_real(m->algbw));
    json_object_set_new(o, "busbw_GBps", json_real(m->busbw));
    json_object_set_new(o, "wrong", m->wrong < 0 ? json_null() : json_integer(m->wrong));
    json_object_set_new(o, "slowest_rank", json_integer(m->slow_rank));
    if (m->slow_host)
        json_object_set_new(o, "slowest_host", json_string(m->slow_host));
    json_object_set_new(o, "skew_pct", json_real(m->skew_pct));
    json_object_set_new(o, "wall_s", json_real(m->wall_s));
    return o;
}

static int jsonl_begin(void *st, json_t *header)
{
    json_t *h = json_pack("{s:s}", "type", "header");
    json_object_update(h, header);
    int rc = put(st, h);
    json_decref(h);
    return rc;
}

static int jsonl_row(void *st, const struct cc_row *r)
{
    for (int p = 0; p < 2; p++) {
        if (!r->m[p].valid && !r->m[p].na_reason)
            continue; /* placement not requested */
        json_t *o = cc_measure_json(r, (enum cc_place)p);
        int rc = put(st, o);
        json_decref(o);
        if (rc)
            return rc;
    }
    return 0;
}

json_t *cc_summary_json(const struct cc_summary *s, enum cc_stop stop)
{
    static const char *const why[] = {
        [CC_STOP_ERROR] = "error", [CC_STOP_INTERRUPT] = "interrupted", [CC_STOP_TERM] = "terminated",
    };
    json_t *o = json_object();
    json_object_set_new(o, "type", json_string("summary"));
    json_object_set_new(o, "collective", json_string(s->coll->name));
    json_object_set_new(o, "datatype", json_string(cc_dtype_name(s->dtype)));
    json_object_set_new(o, "op", (s->coll->flags & CC_COLL_HAS_OP) ? json_string(cc_op_name(s->op))
                                                                     : json_null());
    json_object_set_new(o, "sizes", json_integer(s->rows));
    json_object_set_new(o, "largest_bytes", json_integer((json_int_t)s->largest_bytes));
    json_object_set_new(o, "busbw_largest_GBps", json_real(s->busbw_largest));
    json_object_set_new(o, "algbw_largest_GBps", json_real(s->algbw_largest));
    json_object_set_new(o, "busbw_weighted_GBps", json_real(s->busbw_weighted));
    json_object_set_new(o, "busbw_mean_GBps", json_real(s->busbw_mean));
    json_object_set_new(o, "wrong", s->wrong < 0 ? json_null() : json_integer(s->wrong));
    json_object_set_new(o, "wall_s", json_real(s->wall_s));
    json_object_set_new(o, "interrupted",
                        json_boolean(stop == CC_STOP_INTERRUPT || stop == CC_STOP_TERM));
    json_object_set_new(o, "stopped", stop == CC_STOP_NONE ? json_null() : json_string(why[stop]));
    return o;
}

static int jsonl_end(void *st, const struct cc_summary *s, int n, enum cc_stop stop)
{
    for (int i = 0; i < n; i++) {
        if (!s[i].coll || !s[i].rows)
            continue;
        json_t *o = cc_summary_json(&s[i], stop);
        int rc = put(st, o);
        json_decref(o);
        if (rc)
            return rc;
    }
    return 0;
}

static int jsonl_close(void *st)
{
    struct jsonl_state *j = st;
    int rc = j->own && fclose(j->out) != 0 ? -1 : 0;
    free(j);
    return rc;
}

cc_status cc_sink_jsonl(struct cc_sink *s, FILE *out, int own)
{
    struct jsonl_state *j = calloc(1, sizeof *j);
    if (!j)
        return CC_ENOMEM;
    j->out = out;
    j->own = own;
    *s = (struct cc_sink){j, jsonl_begin, jsonl_row, jsonl_end, jsonl_close};
    return CC_OK;
}
