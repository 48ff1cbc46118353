/* broadcast: the root's buffer is copied to every rank. busbw factor 1. */
#include "coll/coll.h"

static int expected(const struct cc_coll_ctx *c, size_t i, double *v)
{
    *v = cc_input_value(c->seed, c->dtype, c->op, c->root, c->nranks, i);
    return 1;
}

const struct cc_coll cc_coll_broadcast = {
    .id = CC_BROADCAST, .name = "broadcast", .label = "Broadcast", .flags = CC_COLL_HAS_ROOT,
    .busbw_factor = cc_busbw_one, .inplace_offset = cc_offset_zero,
    .fill = cc_fill_rank_input, .expected = expected,
};
