/* allreduce: every rank ends with the element-wise reduction of all inputs.
 * busbw factor 2(n-1)/n: a ring sends and receives each byte 2(n-1)/n times. */
#include "coll/coll.h"

static double factor(int n) { return 2.0 * (double)(n - 1) / (double)n; }

static int expected(const struct cc_coll_ctx *c, size_t i, double *v)
{
    *v = cc_expected_reduce(c->seed, c->dtype, c->op, c->nranks, i);
    return 1;
}

const struct cc_coll cc_coll_allreduce = {
    .id = CC_ALLREDUCE, .name = "allreduce", .label = "AllReduce",
    .flags = CC_COLL_HAS_OP | CC_COLL_SHARED_CHECK,
    .busbw_factor = factor, .inplace_offset = cc_offset_zero, .fill = cc_fill_rank_input,
    .expected = expected,
};
