/* reducescatter: every rank contributes count elements; rank r receives block r (count/n
 * elements) of their reduction. busbw factor (n-1)/n. In place, the output is block r of
 * the input buffer. */
#include "coll/coll.h"

static size_t inplace_offset(const struct cc_coll_ctx *c) { return (size_t)c->rank * c->recvcount; }

static int expected(const struct cc_coll_ctx *c, size_t i, double *v)
{
    *v = cc_expected_reduce(c->seed, c->dtype, c->op, c->nranks, (size_t)c->rank * c->recvcount + i);
    return 1;
}

const struct cc_coll cc_coll_reducescatter = {
    .id = CC_REDUCESCATTER, .name = "reducescatter", .label = "ReduceScatter",
    .flags = CC_COLL_HAS_OP | CC_COLL_SPLIT, .busbw_factor = cc_busbw_nm1_n,
    .inplace_offset = inplace_offset, .fill = cc_fill_rank_input, .expected = expected,
};
