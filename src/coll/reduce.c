/* reduce: the root receives the element-wise reduction of all inputs; other ranks' output
 * is undefined and not checked. busbw factor 1. */
#include "coll/coll.h"

static int expected(const struct cc_coll_ctx *c, size_t i, double *v)
{
    if (c->rank != c->root)
        return 0;
    *v = cc_expected_reduce(c->seed, c->dtype, c->op, c->nranks, i);
    return 1;
}

const struct cc_coll cc_coll_reduce = {
    .id = CC_REDUCE, .name = "reduce", .label = "Reduce",
    .flags = CC_COLL_HAS_OP | CC_COLL_HAS_ROOT | CC_COLL_SHARED_CHECK,
    .busbw_factor = cc_busbw_one,
    .inplace_offset = cc_offset_zero, .fill = cc_fill_rank_input, .expected = expected,
};
