/* allgather: rank r contributes count/n elements; every rank receives all of them in rank
 * order. busbw factor (n-1)/n. In place, rank r's input sits at r*count/n of the output. */
#include "coll/coll.h"

static size_t inplace_offset(const struct cc_coll_ctx *c) { return (size_t)c->rank * c->sendcount; }

static int expected(const struct cc_coll_ctx *c, size_t i, double *v)
{
    size_t per = c->sendcount;
    *v = cc_input_value(c->seed, c->dtype, c->op, (int)(i / per), c->nranks, i % per);
    return 1;
}

const struct cc_coll cc_coll_allgather = {
    .id = CC_ALLGATHER, .name = "allgather", .label = "AllGather", .flags = CC_COLL_SPLIT,
    .busbw_factor = cc_busbw_nm1_n, .inplace_offset = inplace_offset,
    .fill = cc_fill_rank_input, .expected = expected,
};
