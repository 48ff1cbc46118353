/* mpi backend: host memory, the MPI library's own collectives (Open MPI picks the
 * algorithm: coll/tuned decisions or forced ones through MCA parameters).
 *
 * float16 and bfloat16 have no MPI type: they travel as MPI_UINT16_T with user-defined
 * reduction operators. avg is a sum followed by a local division (MPI has no average).
 * In-place reduce-scatter: MPI leaves the result at the start of the buffer, ccbench's
 * convention (and NCCL's) is block `rank`, so the result is moved there (a memmove of
 * count/n elements, included in the time). Out-of-place broadcast: MPI broadcasts in place,
 * so the root broadcasts from its send buffer and copies it to its receive buffer. */
#include "backend/backend.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "rte/rte_mpi.h"

struct mpi_ctx {
    MPI_Comm comm;
    int rank, size;
    MPI_Op half_ops[2][CC_OP_COUNT]; /* [0] float16, [1] bfloat16 */
};

#define HALF_OP_FN(name, type, op)                                                   \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)              \
    {                                                                                \
        (void)dt;                                                                    \
        cc_reduce(type, op, inout, in, (size_t)*len);                                \
    }
HALF_OP_FN(f16_sum, CC_FLOAT16, CC_SUM)
HALF_OP_FN(f16_prod, CC_FLOAT16, CC_PROD)
HALF_OP_FN(f16_min, CC_FLOAT16, CC_MIN)
HALF_OP_FN(f16_max, CC_FLOAT16, CC_MAX)
HALF_OP_FN(bf16_sum, CC_BFLOAT16, CC_SUM)
HALF_OP_FN(bf16_prod, CC_BFLOAT16, CC_PROD)
HALF_OP_FN(bf16_min, CC_BFLOAT16, CC_MIN)
HALF_OP_FN(bf16_max, CC_BFLOAT16, CC_MAX)

static MPI_User_function *const half_fns[2][CC_OP_COUNT] = {
    {f16_sum, f16_prod, f16_min, f16_max, f16_sum},
    {bf16_sum, bf16_prod, bf16_min, bf16_max, bf16_sum},
};

static MPI_Datatype mpi_type(enum cc_dtype t)
{
    switch (t) {
    case CC_INT8: return MPI_INT8_T;
    case CC_UINT8: return MPI_UINT8_T;
    case CC_INT32: return MPI_INT32_T;
    case CC_UINT32: return MPI_UINT32_T;
    case CC_INT64: return MPI_INT64_T;
    case CC_UINT64: return MPI_UINT64_T;
    case CC_FLOAT16:
    case CC_BFLOAT16: return MPI_UINT16_T;
    case CC_FLOAT32: return MPI_FLOAT;
    default: return MPI_DOUBLE;
    }
}

static MPI_Op mpi_op(struct mpi_ctx *c, enum cc_dtype t, enum cc_op op)
{
    if (t == CC_FLOAT16 || t == CC_BFLOAT16)
        return c->half_ops[t == CC_BFLOAT16][op];
    switch (op) {
    case CC_PROD: return MPI_PROD;
    case CC_MIN: return MPI_MIN;
    case CC_MAX: return MPI_MAX;
    default: return MPI_SUM;
    }
}

static cc_status mpi_init(const struct cc_backend_conf *conf, const struct cc_rte *rte,
                          void **ctx, char *err, size_t errlen)
{
    (void)conf;
    (void)err;
    (void)errlen;
    struct mpi_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return CC_ENOMEM;
    MPI_Comm_dup(cc_rte_comm(rte), &c->comm);
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    c->rank = rte->rank;
    c->size = rte->size;
    for (int h = 0; h < 2; h++)
        for (int o = 0; o < CC_OP_COUNT; o++)
            MPI_Op_create(half_fns[h][o], 1, &c->half_ops[h][o]);
    *ctx = c;
    return CC_OK;
}

static void mpi_fini(void *ctx)
{
    struct mpi_ctx *c = ctx;
    for (int h = 0; h < 2; h++)
        for (int o = 0; o < CC_OP_COUNT; o++)
            MPI_Op_free(&c->half_ops[h][o]);
    MPI_Comm_free(&c->comm);
    free(c);
}

static cc_status mpi_alloc(void *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    /* plain malloc, as applications and reference benchmarks allocate: page-aligned send
     * and receive buffers measured up to 25% slower on large host reductions here (the
     * buffers and the library's internal ones then alias in the caches) */
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        return CC_ENOMEM;
    memset(p, 0, bytes); /* touch every page before timing */
    *ptr = p;
    return CC_OK;
}

static void mpi_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static cc_status mpi_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    memmove(dst, src, bytes);
    return CC_OK;
}

static cc_status mpi_check(struct mpi_ctx *c, int rc, const struct cc_coll_args *a)
{
    if (rc == MPI_SUCCESS)
        return CC_OK;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    cc_err("MPI %s of %zu elements failed on rank %d: %s", cc_coll_names[a->coll],
           a->sendcount, c->rank, msg);
    return CC_EBACKEND;
}

static cc_status mpi_run(void *ctx, const struct cc_coll_args *a)
{
    struct mpi_ctx *c = ctx;
    MPI_Datatype T = mpi_type(a->dtype);
    MPI_Op op = mpi_op(c, a->dtype, a->op);
    size_t es = cc_dtype_size(a->dtype);
    int n = c->size, rc = MPI_SUCCESS;
    void *send = (void *)a->sendbuf;

    /* the count each call passes must fit MPI's int (the harness makes such sizes n/a, from
     * max_call_count; this is the backend's own guard) */
    size_t passed = cc_coll_call_count(a->coll, a->sendcount, a->recvcount, n);
    if (passed > INT_MAX) {
        cc_err("mpi backend: %s passes %zu elements, more than MPI's int count (%d)",
               cc_coll_names[a->coll], passed, INT_MAX);
        return CC_ENOTSUP;
    }
    switch (a->coll) {
    case CC_ALLREDUCE:
        rc = MPI_Allreduce(a->inplace ? MPI_IN_PLACE : send, a->recvbuf, (int)a->recvcount, T, op,
                           c->comm);
        if (rc == MPI_SUCCESS && a->op == CC_AVG)
            cc_scale_avg(a->dtype, a->recvbuf, a->recvcount, n);
        break;
    case CC_ALLGATHER:
        rc = MPI_Allgather(a->inplace ? MPI_IN_PLACE : send, (int)a->sendcount, T, a->recvbuf,
                           (int)a->sendcount, T, c->comm);
        break;
    case CC_REDUCESCATTER:
        if (a->inplace) {
            rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, send, (int)a->recvcount, T, op, c->comm);
            if (rc == MPI_SUCCESS && a->recvbuf != send)
                memmove(a->recvbuf, send, a->recvcount * es);
        } else {
            rc = MPI_Reduce_scatter_block(send, a->recvbuf, (int)a->recvcount, T, op, c->comm);
        }
        if (rc == MPI_SUCCESS && a->op == CC_AVG)
            cc_scale_avg(a->dtype, a->recvbuf, a->recvcount, n);
        break;
    case CC_BROADCAST:
        if (c->rank == a->root) {
            rc = MPI_Bcast(send, (int)a->sendcount, T, a->root, c->comm);
            if (rc == MPI_SUCCESS && !a->inplace)
                memcpy(a->recvbuf, send, a->sendcount * es);
        } else {
            rc = MPI_Bcast(a->recvbuf, (int)a->recvcount, T, a->root, c->comm);
        }
        break;
    case CC_REDUCE:
        rc = MPI_Reduce((a->inplace && c->rank == a->root) ? MPI_IN_PLACE : send, a->recvbuf,
                        (int)a->sendcount, T, op, a->root, c->comm);
        if (rc == MPI_SUCCESS && a->op == CC_AVG && c->rank == a->root)
            cc_scale_avg(a->dtype, a->recvbuf, a->recvcount, n);
        break;
    case CC_ALLTOALL:
        rc = MPI_Alltoall(send, (int)(a->sendcount / (size_t)n), T, a->recvbuf,
                          (int)(a->recvcount / (size_t)n), T, c->comm);
        break;
    case CC_SENDRECV:
        rc = MPI_Sendrecv(send, (int)a->sendcount, T, (c->rank + 1) % n, 7, a->recvbuf,
                          (int)a->recvcount, T, (c->rank - 1 + n) % n, 7, c->comm,
                          MPI_STATUS_IGNORE);
        break;
    default:
        return CC_ENOTSUP;
    }
    return mpi_check(c, rc, a);
}

static cc_status mpi_sync(void *ctx)
{
    (void)ctx;
    return CC_OK; /* MPI calls above are blocking */
}

static void mpi_describe(void *ctx, json_t *o)
{
    (void)ctx;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(ver, &len);
    char *nl = strchr(ver, '\n');
    if (nl)
        *nl = 0;
    json_object_set_new(o, "mpi_library", json_string(ver));
}

const struct cc_backend cc_backend_mpi = {
    .name = "mpi",
    .summary = "MPI collectives on host memory (the MPI library's own algorithms)",
    .built = 1,
    .mem = CC_MEM_HOST,
    .max_call_count = INT_MAX,
    .init = mpi_init,
    .fini = mpi_fini,
    .alloc = mpi_alloc,
    .free = mpi_free,
    .copy_in = mpi_copy,
    .copy_out = mpi_copy,
    .run = mpi_run,
    .sync = mpi_sync,
    .describe = mpi_describe,
};
