/* alltoall: rank r sends block p (count/n elements) of its buffer to rank p and receives
 * rank p's block r into block p. busbw factor (n-1)/n. No in-place variant. */
#include "coll/coll.h"

static int expected(const struct cc_coll_ctx *c, size_t i, double *v)
{
    size_t per = c->recvcount / (size_t)c->nranks;
    size_t src = i / per;
    *v = cc_input_value(c->seed, c->dtype, c->op, (int)src, c->nranks, (size_t)c->rank * per + i % per);
    return 1;
}

const struct cc_coll cc_coll_alltoall = {
    .id = CC_ALLTOALL, .name = "alltoall", .label = "AlltoAll",
    .flags = CC_COLL_SPLIT | CC_COLL_NO_INPLACE, .busbw_factor = cc_busbw_nm1_n,
    .inplace_offset = cc_offset_zero, .fill = cc_fill_rank_input, .expected = expected,
};
