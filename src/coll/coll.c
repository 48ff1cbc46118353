#include "coll/coll.h"

#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/opt.h"

extern const struct cc_coll cc_coll_allreduce, cc_coll_allgather, cc_coll_reducescatter,
    cc_coll_broadcast, cc_coll_reduce, cc_coll_alltoall, cc_coll_sendrecv;

const struct cc_coll *const cc_colls[CC_COLL_COUNT] = {
    [CC_ALLREDUCE] = &cc_coll_allreduce,         [CC_ALLGATHER] = &cc_coll_allgather,
    [CC_REDUCESCATTER] = &cc_coll_reducescatter, [CC_BROADCAST] = &cc_coll_broadcast,
    [CC_REDUCE] = &cc_coll_reduce,               [CC_ALLTOALL] = &cc_coll_alltoall,
    [CC_SENDRECV] = &cc_coll_sendrecv,
};

const char *const cc_coll_names[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                     "reduce",    "alltoall",  "sendrecv",      NULL};

const struct cc_coll *cc_coll_get(enum cc_coll_id id)
{
    return (unsigned)id < CC_COLL_COUNT ? cc_colls[id] : NULL;
}

const struct cc_coll *cc_coll_find(const char *name)
{
    for (int i = 0; i < CC_COLL_COUNT; i++)
        if (strcmp(cc_colls[i]->name, name) == 0)
            return cc_colls[i];
    return NULL;
}

unsigned cc_coll_parse_list(const char *text, char *why, size_t whylen)
{
    return cc_choice_mask(cc_coll_names, "collective", text, why, whylen);
}

size_t cc_coll_granule(const struct cc_coll *c, enum cc_dtype t, int nranks)
{
    size_t g = cc_dtype_size(t);
    if (c->flags & CC_COLL_SPLIT)
        g *= (size_t)nranks;
    return g;
}

size_t cc_coll_call_count(enum cc_coll_id id, size_t sendcount, size_t recvcount, int nranks)
{
    switch (id) {
    case CC_ALLREDUCE:
    case CC_REDUCESCATTER: return recvcount;
    case CC_ALLTOALL: return nranks > 0 ? sendcount / (size_t)nranks : sendcount;
    case CC_SENDRECV: return sendcount > recvcount ? sendcount : recvcount;
    default: return sendcount;
    }
}

void cc_coll_counts(const struct cc_coll *c, size_t bytes, enum cc_dtype t, int nranks,
                    size_t *sendcount, size_t *recvcount)
{
    size_t g = cc_coll_granule(c, t, nranks);
    size_t count = bytes % g ? 0 : bytes / cc_dtype_size(t);
    *sendcount = *recvcount = count;
    if (c->id == CC_ALLGATHER)
        *sendcount = count / (size_t)nranks;
    else if (c->id == CC_REDUCESCATTER)
        *recvcount = count / (size_t)nranks;
}

/* Whether element i of buf holds its expected value: what a collective only moves must
 * arrive bit for bit (its bytes, so that -0 for +0 is wrong too), a reduction within what its
 * type and operator allow. */
static int element_ok(const struct cc_coll *c, const struct cc_coll_ctx *x, const void *buf,
                      size_t i, double expected)
{
    if (c->flags & CC_COLL_HAS_OP)
        return cc_value_matches(x->dtype, x->op, cc_dtype_get(x->dtype, buf, i), expected,
                                x->nranks);
    unsigned char want[16];
    size_t es = cc_dtype_size(x->dtype);
    cc_dtype_set(x->dtype, want, 0, expected);
    return memcmp(want, (const unsigned char *)buf + i * es, es) == 0;
}

size_t cc_coll_check(const struct cc_coll *c, const struct cc_coll_ctx *x, const void *recvbuf)
{
    size_t wrong = 0;
    for (size_t i = 0; i < x->recvcount; i++) {
        double e;
        if (c->expected(x, i, &e) && !element_ok(c, x, recvbuf, i, e))
            wrong++;
    }
    return wrong;
}

void cc_coll_share(size_t count, int n, int k, size_t *lo, size_t *hi)
{
    size_t q = n > 0 ? count / (size_t)n : count, rem = n > 0 ? count % (size_t)n : 0;
    size_t kk = (size_t)(k > 0 ? k : 0);
    *lo = q * kk + (kk < rem ? kk : rem);
    *hi = *lo + q + (kk < rem ? 1 : 0);
    if (*hi > count) /* k >= n */
        *lo = *hi = count;
}

size_t cc_coll_check_copies(const struct cc_coll *c, const struct cc_coll_ctx *x, int src,
                            size_t lo, size_t hi, const void *copies, int ncopies)
{
    struct cc_coll_ctx as_src = *x;
    as_src.rank = src;
    size_t wrong = 0, len = hi > lo ? hi - lo : 0;
    const unsigned char *base = copies;
    size_t stride = len * cc_dtype_size(x->dtype);
    for (size_t i = lo; i < hi; i++) {
        double e;
        if (!c->expected(&as_src, i, &e))
            continue;
        for (int j = 0; j < ncopies; j++)
            if (!element_ok(c, x, base + (size_t)j * stride, i - lo, e))
                wrong++;
    }
    return wrong;
}

double cc_busbw_one(int nranks)
{
    (void)nranks;
    return 1.0;
}

double cc_busbw_nm1_n(int nranks) { return (double)(nranks - 1) / (double)nranks; }

size_t cc_offset_zero(const struct cc_coll_ctx *c)
{
    (void)c;
    return 0;
}

void cc_fill_rank_input(const struct cc_coll_ctx *c, void *sendbuf)
{
    cc_fill_input(sendbuf, c->dtype, c->op, c->seed, c->rank, c->nranks, 0, c->sendcount);
}
