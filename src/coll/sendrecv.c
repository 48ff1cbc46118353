/* sendrecv: every rank sends its buffer to rank+1 and receives from rank-1 (a ring shift,
 * as nccl-tests does). busbw factor 1. No in-place variant. */
#include "coll/coll.h"

static int expected(const struct cc_coll_ctx *c, size_t i, double *v)
{
    int src = (c->rank - 1 + c->nranks) % c->nranks;
    *v = cc_input_value(c->seed, c->dtype, c->op, src, c->nranks, i);
    return 1;
}

const struct cc_coll cc_coll_sendrecv = {
    .id = CC_SENDRECV, .name = "sendrecv", .label = "SendRecv", .flags = CC_COLL_NO_INPLACE,
    .busbw_factor = cc_busbw_one, .inplace_offset = cc_offset_zero,
    .fill = cc_fill_rank_input, .expected = expected,
};
