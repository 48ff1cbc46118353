/* coll.h - what each collective means, independent of any transport.
 *
 * Sizes follow nccl-tests: the "size" of a measurement is
 *   allreduce, broadcast, reduce, sendrecv: the buffer each rank sends (= receives);
 *   allgather:     the gathered buffer each rank receives (sendcount = count / nranks);
 *   reducescatter: the buffer each rank sends (recvcount = count / nranks);
 *   alltoall:      the buffer each rank sends (count / nranks to each peer).
 * algbw = size / time; busbw = algbw * busbw_factor(nranks) (derivation in docs/busbw.md).
 *
 * One small file per collective (allreduce.c, ...) defines a `const struct cc_coll`; the
 * table in coll.c lists them. Input generation and the expected output are here so every
 * backend is checked the same way.
 */
#ifndef CC_COLL_H
#define CC_COLL_H

#include <stddef.h>
#include <stdint.h>
#include "core/dtype.h"

enum cc_coll_id {
    CC_ALLREDUCE, CC_ALLGATHER, CC_REDUCESCATTER, CC_BROADCAST, CC_REDUCE, CC_ALLTOALL,
    CC_SENDRECV, CC_COLL_COUNT
};

#define CC_COLL_HAS_OP     0x1u /* takes a reduction operator */
#define CC_COLL_HAS_ROOT   0x2u /* takes a root rank */
#define CC_COLL_NO_INPLACE 0x4u /* no in-place variant (reported as n/a) */
#define CC_COLL_SPLIT      0x8u /* size must divide by nranks * element size */
/* Element i of the output is expected to hold the same value on every rank that has an output
 * (allreduce: every rank; reduce: the root). The check is then shared out: rank k checks
 * share k of every such output (cc_coll_share, cc_coll_check_copies), so each rank computes
 * each expected value of its share once, and works O(count) rather than O(count x ranks). */
#define CC_COLL_SHARED_CHECK 0x10u

/* Everything needed to generate a rank's input and predict its output. */
struct cc_coll_ctx {
    enum cc_dtype dtype;
    enum cc_op op;
    int root;
    int rank, nranks;
    uint64_t seed;
    size_t sendcount, recvcount; /* elements in this rank's send and receive buffers */
};

struct cc_coll {
    enum cc_coll_id id;
    const char *name;   /* "allreduce" */
    const char *label;  /* nccl-tests style "AllReduce" */
    unsigned flags;
    /* busbw / algbw (nccl-tests doc/PERFORMANCE.md) */
    double (*busbw_factor)(int nranks);
    /* Element offset of the send buffer inside the receive buffer (allgather) or of the
     * receive buffer inside the send buffer (reducescatter) for in-place runs; 0 otherwise. */
    size_t (*inplace_offset)(const struct cc_coll_ctx *c);
    /* Fill this rank's send buffer (sendcount elements, host memory). */
    void (*fill)(const struct cc_coll_ctx *c, void *sendbuf);
    /* Expected value of element i of this rank's receive buffer; returns 0 if the element
     * is not defined by the collective (e.g. reduce on a non-root rank), 1 otherwise. */
    int (*expected)(const struct cc_coll_ctx *c, size_t i, double *value);
};

extern const struct cc_coll *const cc_colls[CC_COLL_COUNT];
/* NULL-terminated names in enum order, plus "all" is accepted by cc_coll_parse_list. */
extern const char *const cc_coll_names[];

const struct cc_coll *cc_coll_get(enum cc_coll_id id);
const struct cc_coll *cc_coll_find(const char *name);

/* Parse "allreduce,allgather" or "all" into a bitmask of (1 << id). Returns 0 and writes a
 * message to why on an unknown name. */
unsigned cc_coll_parse_list(const char *text, char *why, size_t whylen);

/* Per-rank send and receive element counts for a measurement of `bytes` bytes; 0 counts
 * if bytes does not fit the collective's granularity. */
void cc_coll_counts(const struct cc_coll *c, size_t bytes, enum cc_dtype t, int nranks,
                    size_t *sendcount, size_t *recvcount);
/* The count one call of a count-per-call API passes (MPI's int): allreduce and
 * reduce-scatter the result's, all-to-all the per-peer one, send/recv the larger of the two,
 * the others the send count (allgather: per rank). */
size_t cc_coll_call_count(enum cc_coll_id id, size_t sendcount, size_t recvcount, int nranks);
/* Smallest unit a size must be a multiple of (element size, times nranks for split ones). */
size_t cc_coll_granule(const struct cc_coll *c, enum cc_dtype t, int nranks);

/* Count elements of recvbuf that differ from the expected output (host memory). */
size_t cc_coll_check(const struct cc_coll *c, const struct cc_coll_ctx *x, const void *recvbuf);

/* Share k of n of an index range [0, count): [*lo, *hi), consecutive, sizes differing by at
 * most one, the larger ones first; together they cover the range once. */
void cc_coll_share(size_t count, int n, int k, size_t *lo, size_t *hi);
/* Count wrong elements in ncopies copies of elements [lo, hi) of a CC_COLL_SHARED_CHECK
 * collective's output: copy j at copies + j * (hi - lo) * element size (host memory). Each
 * expected value is computed once, as for rank src's output (a rank that has one: the root of
 * a reduce), and compared with every copy. */
size_t cc_coll_check_copies(const struct cc_coll *c, const struct cc_coll_ctx *x, int src,
                            size_t lo, size_t hi, const void *copies, int ncopies);

/* Shared helpers for collective files. */
double cc_busbw_one(int nranks);
double cc_busbw_nm1_n(int nranks);
size_t cc_offset_zero(const struct cc_coll_ctx *c);
void cc_fill_rank_input(const struct cc_coll_ctx *c, void *sendbuf);

#endif
