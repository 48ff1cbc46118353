/* nccl backend: NCCL collectives on CUDA memory, one GPU per rank.
 *
 * libcudart and libnccl are opened at run time (gpu/cuda_dl.h, gpu/nccl_dl.h), so the same
 * binary runs, and fails with one clear line, on a machine without a GPU.
 *
 * Set-up: every rank picks its GPU (--gpu, else its local rank on the node), checks that no
 * other rank of the node has the same GPU (NCCL refuses two ranks per GPU), sets the NCCL
 * variables of --nccl-path, and only then (all ranks agreeing that set-up went well) rank 0
 * creates the unique id, broadcast over MPI, and every rank calls ncclCommInitRank.
 *
 * Collectives: NCCL's own for allreduce, allgather, reducescatter, broadcast, reduce;
 * all-to-all and send/recv are grouped ncclSend/ncclRecv. Timing: CUDA events recorded on the
 * rank's stream (timer_record/timer_elapsed_us). With -G N the timed launches are captured
 * once into a CUDA graph of N launches and replayed; the time per launch is the graph's time
 * divided by N. Checked runs (after timing) always launch eagerly, once, so in-place
 * reductions are checked against a single application. Warm-up and timed launches move
 * through the buffers (the harness's rot_stride/rot_slots): each eager launch at the next
 * slot, launch i of a graph at slot i (every replay the same N slots), so a size that fits
 * in L2 is not timed from it when the buffers are well larger than L2.
 */
#include "backend/backend.h"

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "gpu/cuda_dl.h"
#include "gpu/nccl_dl.h"
#include "gpu/nccl_path.h"

#if defined(CC_HAVE_CUDA) && defined(CC_HAVE_NCCL)

extern char **environ;

struct gpu_id {
    int node;
    char busid[32];
};

struct nccl_ctx {
    struct gpu_id *gpus;    /* every rank's node and GPU, by rank (rank 0's header) */
    const struct cc_cuda *cu;
    const struct cc_nccl *nc;
    ncclComm_t comm;
    cudaStream_t stream;
    cudaEvent_t ev[2];
    int dev, rank, size;
    char busid[32];
    char devname[128];
    const char *path;
    double timeout_s;       /* --timeout: a sync that takes longer gives up */
    void (*progress)(void); /* cc_backend_conf.progress: a graph's wait within its deadline */
    /* CUDA graph (-G) */
    int graph_n;            /* launches per graph; 0: off */
    int timed_next;         /* timer slot 0 just recorded: the next run() is a timed one */
    size_t rot_next;        /* the next eager launch's buffer slot (backend.h: rot_slots) */
    int launches;           /* launches between the two timer slots */
    struct cc_coll_args gargs; /* what the cached graph does */
    cudaGraphExec_t gexec;
    cudaGraph_t graph;
};

/* Before NCCL 2.24 nccl.h declares ncclBfloat16 only where cuda_bf16.h has defined its
 * marker, which it does for C++ alone, and before 2.10 it has no ncclAvg: this file is C, so
 * their values (NCCL's ABI) stand in; the run-time version check gates their use. */
#if defined(__CUDA_BF16_TYPES_EXIST__) || (defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 22400)
#define CC_NCCL_BFLOAT16 ncclBfloat16
#else
#define CC_NCCL_BFLOAT16 ((ncclDataType_t)9)
#endif
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 21000
#define CC_NCCL_AVG ncclAvg
#else
#define CC_NCCL_AVG ((ncclRedOp_t)4)
#endif

static ncclDataType_t nccl_type(enum cc_dtype t)
{
    switch (t) {
    case CC_INT8: return ncclInt8;
    case CC_UINT8: return ncclUint8;
    case CC_INT32: return ncclInt32;
    case CC_UINT32: return ncclUint32;
    case CC_INT64: return ncclInt64;
    case CC_UINT64: return ncclUint64;
    case CC_FLOAT16: return ncclFloat16;
    case CC_BFLOAT16: return CC_NCCL_BFLOAT16;
    case CC_FLOAT32: return ncclFloat32;
    case CC_FLOAT64: return ncclFloat64;
    default: break; /* a type added to ccbench must be mapped here (and gated in supports) */
    }
    return ncclFloat64;
}

static ncclRedOp_t nccl_op(enum cc_op op)
{
    switch (op) {
    case CC_PROD: return ncclProd;
    case CC_MIN: return ncclMin;
    case CC_MAX: return ncclMax;
    case CC_AVG: return CC_NCCL_AVG;
    default: return ncclSum;
    }
}

#define CUDA_OK(c, call, what)                                                               \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            cc_err("%s on GPU %d (%s) failed: %s", what, (c)->dev, (c)->busid,               \
                   (c)->cu->cudaGetErrorString(e_));                                         \
            return CC_EBACKEND;                                                              \
        }                                                                                    \
    } while (0)

static cc_status nccl_fail(struct nccl_ctx *c, ncclResult_t r, const char *what)
{
    const char *last = c->nc->ncclGetLastError ? c->nc->ncclGetLastError(c->comm) : NULL;
    cc_err("NCCL %s failed on rank %d (GPU %s): %s%s%s", what, c->rank, c->busid,
           c->nc->ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
    return CC_EBACKEND;
}

/* Set the --nccl-path variables; warn where the user's environment said otherwise. */
static cc_status apply_path(const char *path, int rank, char *err, size_t errlen)
{
    struct cc_nccl_var v[CC_NCCL_PATH_MAX_VARS];
    size_t n;
    cc_status st = cc_nccl_path_vars(path, v, &n, err, errlen);
    if (st != CC_OK)
        return st;
    for (size_t i = 0; i < n; i++) {
        const char *old = getenv(v[i].name);
        if (old && strcmp(old, v[i].value) != 0 && rank == 0)
            cc_warn("--nccl-path %s sets %s=%s (environment had '%s')", path, v[i].name,
                    v[i].value, old);
        setenv(v[i].name, v[i].value, 1);
    }
    return CC_OK;
}

/* Local part of set-up (no communication). */
static cc_status local_setup(struct nccl_ctx *c, const struct cc_backend_conf *conf,
                             const struct cc_rte *rte, char *err, size_t errlen)
{
    cc_status st = apply_path(conf->nccl_path, rte->rank, err, errlen);
    if (st != CC_OK)
        return st;
    if (!(c->cu = cc_cuda_load(err, errlen)))
        return CC_ENODEV;
    if (!(c->nc = cc_nccl_load(err, errlen)))
        return CC_ENODEV;
    /* the local rank's GPU among those visible; modulo, so that ranks that each see only
     * their own GPU (CUDA_VISIBLE_DEVICES per rank, as Slurm's --gpus-per-task sets it) take
     * it, and ranks that really share one are named by the bus-id check in nccl_init */
    c->dev = conf->gpu >= 0 ? conf->gpu : rte->local_rank % c->cu->ndev;
    if (c->dev >= c->cu->ndev) {
        cc_errbuf(err, errlen, "--gpu %d does not exist on %s (%d GPUs visible)", conf->gpu,
                  rte->host, c->cu->ndev);
        return CC_ENODEV;
    }
    cudaError_t e = c->cu->cudaSetDevice(c->dev);
    if (e == cudaSuccess)
        e = c->cu->cudaDeviceGetPCIBusId(c->busid, sizeof c->busid, c->dev);
    if (e == cudaSuccess)
        e = c->cu->cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess)
        e = c->cu->cudaEventCreate(&c->ev[0]);
    if (e == cudaSuccess)
        e = c->cu->cudaEventCreate(&c->ev[1]);
    if (e != cudaSuccess) {
        cc_errbuf(err, errlen, "cannot use GPU %d on %s: %s", c->dev, rte->host,
                  c->cu->cudaGetErrorString(e));
        return CC_ENODEV;
    }
    CUdevice d;
    if (c->cu->cuDeviceGet(&d, c->dev) != CUDA_SUCCESS ||
        c->cu->cuDeviceGetName(c->devname, sizeof c->devname, d) != CUDA_SUCCESS)
        snprintf(c->devname, sizeof c->devname, "?");
    if (conf->cuda_graph < 0) {
        cc_errbuf(err, errlen, "-G %d: launches per CUDA graph must be >= 0", conf->cuda_graph);
        return CC_EUSAGE;
    }
    c->graph_n = conf->cuda_graph;
    c->timeout_s = conf->timeout_s;
    c->progress = conf->progress;
    return CC_OK;
}

/* The captured graph holds references to the communicator's plans: NCCL's destroy waits for
 * every graph that uses them to go, so the graph goes first. */
static void drop_graph(struct nccl_ctx *c)
{
    if (c->gexec)
        c->cu->cudaGraphExecDestroy(c->gexec), c->gexec = NULL;
    if (c->graph)
        c->cu->cudaGraphDestroy(c->graph), c->graph = NULL;
}

static void release(struct nccl_ctx *c)
{
    if (c->cu) {
        drop_graph(c);
        for (int i = 0; i < 2; i++)
            if (c->ev[i])
                c->cu->cudaEventDestroy(c->ev[i]);
        if (c->stream)
            c->cu->cudaStreamDestroy(c->stream);
    }
    free(c->gpus);
    free(c);
}

static cc_status nccl_init(const struct cc_backend_conf *conf, const struct cc_rte *rte,
                           void **ctx, char *err, size_t errlen)
{
    struct nccl_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return CC_ENOMEM;
    c->rank = rte->rank;
    c->size = rte->size;
    c->path = conf->nccl_path ? conf->nccl_path : "auto";
    cc_status st = local_setup(c, conf, rte, err, errlen);

    /* every rank learns whether all could set up, and which GPU each took */
    long long worst = st;
    cc_status cst = cc_rte_allreduce_ll(rte, &worst, 1, CC_RTE_MAX);
    if (cst != CC_OK || worst != CC_OK) {
        if (st == CC_OK && cst != CC_OK)
            cc_errbuf(err, errlen, "cannot learn over MPI whether every rank set up its GPU");
        else if (st == CC_OK)
            cc_errbuf(err, errlen, CC_BACKEND_PEER_FAILED "could not set up its GPU");
        release(c);
        return st != CC_OK ? st : cst != CC_OK ? cst : (cc_status)worst;
    }
    struct gpu_id me = {.node = rte->node}, *all = calloc((size_t)rte->size, sizeof *all);
    snprintf(me.busid, sizeof me.busid, "%s", c->busid);
    if (!all || (st = cc_rte_allgather(rte, &me, all, sizeof me)) != CC_OK) {
        free(all);
        release(c);
        return all ? st : CC_ENOMEM;
    }
    for (int i = 0; i < rte->size && st == CC_OK; i++)
        for (int j = i + 1; j < rte->size && st == CC_OK; j++)
            if (all[i].node == all[j].node && strcmp(all[i].busid, all[j].busid) == 0) {
                cc_errbuf(err, errlen, "ranks %d and %d share GPU %s on %s: NCCL needs one GPU "
                          "per rank (fewer ranks per node, or --gpu / CUDA_VISIBLE_DEVICES)",
                          i, j, all[i].busid, rte->hosts[i]);
                st = CC_EUSAGE;
            }
    c->gpus = all;
    if (st != CC_OK) {
        release(c);
        return st;
    }

    ncclUniqueId id;
    long long ok = 1;
    if (rte->rank == 0) {
        ncclResult_t r = c->nc->ncclGetUniqueId(&id);
        if (r != ncclSuccess) {
            cc_errbuf(err, errlen, "ncclGetUniqueId failed: %s", c->nc->ncclGetErrorString(r));
            ok = 0;
        }
    }
    if ((st = cc_rte_bcast(rte, &ok, sizeof ok, 0)) != CC_OK || !ok ||
        (st = cc_rte_bcast(rte, &id, sizeof id, 0)) != CC_OK) {
        if (rte->rank != 0 && st == CC_OK)
            cc_errbuf(err, errlen, CC_BACKEND_PEER_FAILED "(rank 0) could not create the NCCL "
                      "unique id");
        release(c);
        return st != CC_OK ? st : CC_EBACKEND;
    }
    ncclResult_t r = c->nc->ncclCommInitRank(&c->comm, rte->size, id, rte->rank);
    if (r != ncclSuccess) {
        const char *last = c->nc->ncclGetLastError ? c->nc->ncclGetLastError(NULL) : NULL;
        cc_errbuf(err, errlen, "ncclCommInitRank on GPU %s of %s failed: %s%s%s", c->busid,
                  rte->host, c->nc->ncclGetErrorString(r), last && *last ? ": " : "",
                  last ? last : "");
        c->comm = NULL;
        release(c);
        return CC_EBACKEND;
    }
    *ctx = c;
    return CC_OK;
}

static void nccl_fini(void *ctx)
{
    struct nccl_ctx *c = ctx;
    if (c->comm) {
        c->cu->cudaStreamSynchronize(c->stream);
        drop_graph(c);
        c->nc->ncclCommDestroy(c->comm);
    }
    release(c);
}

static int nccl_supports(void *ctx, enum cc_coll_id coll, enum cc_dtype t, enum cc_op op,
                         int inplace, const char **why)
{
    struct nccl_ctx *c = ctx;
    (void)coll;
    (void)inplace;
    if ((t == CC_BFLOAT16 || op == CC_AVG) && c->nc->version < 21000) {
        *why = "bfloat16 and avg need NCCL 2.10";
        return 0;
    }
    return 1;
}

static cc_status nccl_alloc(void *ctx, size_t bytes, void **ptr)
{
    struct nccl_ctx *c = ctx;
    void *p = NULL;
    cudaError_t m = c->cu->cudaMalloc(&p, bytes ? bytes : 1);
    if (m == cudaErrorMemoryAllocation)
        return CC_ENOMEM; /* the harness says which size did not fit, once */
    CUDA_OK(c, m, "cudaMalloc");
    /* cudaMemset runs on the legacy stream, which the rank's non-blocking stream does not
     * wait for: finish it before any copy or collective touches the buffer */
    cudaError_t e = c->cu->cudaMemset(p, 0, bytes);
    if (e == cudaSuccess)
        e = c->cu->cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        c->cu->cudaFree(p);
        CUDA_OK(c, e, "cudaMemset");
    }
    *ptr = p;
    return CC_OK;
}

static void nccl_free(void *ctx, void *ptr)
{
    struct nccl_ctx *c = ctx;
    c->cu->cudaFree(ptr);
}

/* Copies run on the rank's stream so they are ordered with the collectives (a cudaMemcpy
 * on the legacy stream would not be, the stream being non-blocking). */
static cc_status nccl_copy(struct nccl_ctx *c, void *dst, const void *src, size_t bytes,
                           enum cudaMemcpyKind kind)
{
    CUDA_OK(c, c->cu->cudaMemcpyAsync(dst, src, bytes, kind, c->stream), "cudaMemcpyAsync");
    CUDA_OK(c, c->cu->cudaStreamSynchronize(c->stream), "cudaStreamSynchronize after a copy");
    return CC_OK;
}

static cc_status nccl_copy_in(void *ctx, void *dst, const void *src, size_t bytes)
{
    return nccl_copy(ctx, dst, src, bytes, cudaMemcpyHostToDevice);
}

static cc_status nccl_copy_out(void *ctx, void *dst, const void *src, size_t bytes)
{
    return nccl_copy(ctx, dst, src, bytes, cudaMemcpyDeviceToHost);
}

/* Enqueue one collective on the stream. */
static cc_status enqueue(struct nccl_ctx *c, const struct cc_coll_args *a)
{
    const struct cc_nccl *nc = c->nc;
    ncclDataType_t T = nccl_type(a->dtype);
    ncclRedOp_t op = nccl_op(a->op);
    size_t es = cc_dtype_size(a->dtype);
    int n = c->size;
    ncclResult_t r = ncclSuccess, r2;
    switch (a->coll) {
    case CC_ALLREDUCE:
        r = nc->ncclAllReduce(a->sendbuf, a->recvbuf, a->recvcount, T, op, c->comm, c->stream);
        break;
    case CC_ALLGATHER:
        r = nc->ncclAllGather(a->sendbuf, a->recvbuf, a->sendcount, T, c->comm, c->stream);
        break;
    case CC_REDUCESCATTER:
        r = nc->ncclReduceScatter(a->sendbuf, a->recvbuf, a->recvcount, T, op, c->comm,
                                  c->stream);
        break;
    case CC_BROADCAST:
        r = nc->ncclBroadcast(a->sendbuf, a->recvbuf, a->sendcount, T, a->root, c->comm,
                              c->stream);
        break;
    case CC_REDUCE:
        r = nc->ncclReduce(a->sendbuf, a->recvbuf, a->sendcount, T, op, a->root, c->comm,
                           c->stream);
        break;
    case CC_ALLTOALL: {
        size_t chunk = a->sendcount / (size_t)n;
        r = nc->ncclGroupStart();
        for (int p = 0; p < n && r == ncclSuccess; p++) {
            r = nc->ncclSend((const char *)a->sendbuf + (size_t)p * chunk * es, chunk, T, p,
                             c->comm, c->stream);
            if (r == ncclSuccess)
                r = nc->ncclRecv((char *)a->recvbuf + (size_t)p * chunk * es, chunk, T, p,
                                 c->comm, c->stream);
        }
        r2 = nc->ncclGroupEnd();
        if (r == ncclSuccess)
            r = r2;
        break;
    }
    case CC_SENDRECV:
        r = nc->ncclGroupStart();
        if (r == ncclSuccess)
            r = nc->ncclSend(a->sendbuf, a->sendcount, T, (c->rank + 1) % n, c->comm, c->stream);
        if (r == ncclSuccess)
            r = nc->ncclRecv(a->recvbuf, a->recvcount, T, (c->rank - 1 + n) % n, c->comm,
                             c->stream);
        r2 = nc->ncclGroupEnd();
        if (r == ncclSuccess)
            r = r2;
        break;
    default:
        return CC_ENOTSUP;
    }
    if (r != ncclSuccess) {
        char what[96];
        snprintf(what, sizeof what, "%s of %zu elements", cc_coll_names[a->coll], a->sendcount);
        return nccl_fail(c, r, what);
    }
    return CC_OK;
}

/* `a` with both buffers moved to slot k (mod a->rot_slots) of the buffers' rotation. */
static struct cc_coll_args at_slot(const struct cc_coll_args *a, size_t k)
{
    struct cc_coll_args s = *a;
    if (a->rot_slots > 1) {
        size_t off = k % a->rot_slots * a->rot_stride;
        s.sendbuf = (const char *)a->sendbuf + off;
        s.recvbuf = (char *)a->recvbuf + off;
    }
    return s;
}

/* Same call (field by field: the struct's padding is not part of it). */
static int same_args(const struct cc_coll_args *x, const struct cc_coll_args *y)
{
    return x->coll == y->coll && x->dtype == y->dtype && x->op == y->op && x->root == y->root &&
           x->sendbuf == y->sendbuf && x->recvbuf == y->recvbuf &&
           x->sendcount == y->sendcount && x->recvcount == y->recvcount &&
           x->inplace == y->inplace && x->rot_stride == y->rot_stride &&
           x->rot_slots == y->rot_slots;
}

static cc_status nccl_sync(void *ctx);

/* (Re)capture the graph of graph_n launches of `a` when it changed (*fresh set); launch i
 * uses slot i. The call runs once eagerly first, outside any capture: NCCL sets up its
 * connections on a collective's first launch, which allocates (nccl-tests does the same),
 * and the capture is thread-local, so that another thread's CUDA calls are not caught. */
static cc_status ensure_graph(struct nccl_ctx *c, const struct cc_coll_args *a, int *fresh)
{
    *fresh = 0;
    if (c->gexec && same_args(&c->gargs, a))
        return CC_OK;
    drop_graph(c);
    *fresh = 1;
    c->launches = 1; /* the eager launch's wait has one launch's deadline */
    struct cc_coll_args s0 = at_slot(a, 0);
    cc_status st = enqueue(c, &s0);
    if (st == CC_OK)
        st = nccl_sync(c);
    if (st != CC_OK)
        return st;
    CUDA_OK(c, c->cu->cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal),
            "cudaStreamBeginCapture");
    for (int i = 0; i < c->graph_n && st == CC_OK; i++) {
        struct cc_coll_args s = at_slot(a, (size_t)i);
        st = enqueue(c, &s);
    }
    cudaError_t e = c->cu->cudaStreamEndCapture(c->stream, &c->graph);
    if (st != CC_OK || e != cudaSuccess)
        drop_graph(c); /* a capture that failed leaves no half graph behind */
    if (st != CC_OK)
        return st;
    CUDA_OK(c, e, "CUDA graph capture of NCCL launches");
    CUDA_OK(c, c->cu->cudaGraphInstantiateWithFlags(&c->gexec, c->graph, 0),
            "cudaGraphInstantiateWithFlags");
    c->gargs = *a;
    return CC_OK;
}

static cc_status nccl_run(void *ctx, const struct cc_coll_args *a)
{
    struct nccl_ctx *c = ctx;
    int timed = c->timed_next;
    c->timed_next = 0;
    if (c->graph_n > 0 && timed) {
        int fresh;
        cc_status st = ensure_graph(c, a, &fresh);
        if (st != CC_OK)
            return st;
        /* a new graph: the start event recorded before it was built would time the eager
         * launch and the capture too; record it again, just before the replay */
        if (fresh)
            CUDA_OK(c, c->cu->cudaEventRecord(c->ev[0], c->stream), "cudaEventRecord");
        CUDA_OK(c, c->cu->cudaGraphLaunch(c->gexec, c->stream), "cudaGraphLaunch");
        c->launches = c->graph_n;
        return CC_OK;
    }
    c->launches = 1;
    struct cc_coll_args s = at_slot(a, c->rot_next++);
    return enqueue(c, &s);
}

/* NCCL reports an operation still under way as ncclInProgress (2.14 on); older headers lack
 * it. */
static int nccl_failed(ncclResult_t r)
{
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= 21400
    return r != ncclSuccess && r != ncclInProgress;
#else
    return r != ncclSuccess;
#endif
}

/* End the communicator after a fault: its pending operations are aborted (so the stream
 * drains and nothing waits on it again), the graph first, as in nccl_fini. */
static void abort_comm(struct nccl_ctx *c)
{
    drop_graph(c);
    c->nc->ncclCommAbort(c->comm);
    c->comm = NULL;
}

/* Wait for the stream by polling it and NCCL's asynchronous error: a peer that died or a
 * network error is reported as NCCL saw it (the communicator aborted, so nothing waits on it
 * again), and a stream still busy after --timeout gives up instead of blocking for ever. */
static cc_status nccl_sync(void *ctx)
{
    struct nccl_ctx *c = ctx;
    double t0 = cc_now(), told = t0;
    for (unsigned long spin = 0;; spin++) {
        cudaError_t e = c->cu->cudaStreamQuery(c->stream);
        if (e != cudaSuccess && e != cudaErrorNotReady)
            CUDA_OK(c, e, "cudaStreamQuery");
        ncclResult_t ar = ncclSuccess;
        c->nc->ncclCommGetAsyncError(c->comm, &ar);
        if (nccl_failed(ar)) {
            cc_status st = nccl_fail(c, ar, "asynchronous operation (communicator aborted)");
            abort_comm(c);
            return st;
        }
        if (e == cudaSuccess)
            return CC_OK;
        /* --timeout per launch: a graph of N launches may take N times as long, and within
         * that the harness's watchdog (one launch's time) is told the wait is this one's */
        double limit = c->timeout_s * (c->launches > 1 ? c->launches : 1), now = cc_now();
        if (c->launches > 1 && c->progress && now - told >= 1.0 && now - t0 < limit) {
            c->progress();
            told = now;
        }
        if ((spin & 1023) == 1023 && c->timeout_s > 0 && now - t0 > limit) {
            cc_err("nccl: rank %d (GPU %s): operations still running after %g s (--timeout); "
                   "a peer is stuck or gone (communicator aborted)", c->rank, c->busid, limit);
            abort_comm(c);
            return CC_ETIMEOUT;
        }
        /* NCCL's proxy thread may share this core (one core per rank): leave it the CPU */
        sched_yield();
    }
}

static cc_status nccl_timer_record(void *ctx, int slot)
{
    struct nccl_ctx *c = ctx;
    if (slot < 0 || slot > 1)
        return CC_EINVAL;
    if (slot == 0)
        c->timed_next = 1;
    CUDA_OK(c, c->cu->cudaEventRecord(c->ev[slot], c->stream), "cudaEventRecord");
    return CC_OK;
}

static cc_status nccl_timer_elapsed(void *ctx, int from, int to, double *us)
{
    struct nccl_ctx *c = ctx;
    float ms = 0;
    if (from < 0 || from > 1 || to < 0 || to > 1)
        return CC_EINVAL;
    CUDA_OK(c, c->cu->cudaEventElapsedTime(&ms, c->ev[from], c->ev[to]), "cudaEventElapsedTime");
    *us = (double)ms * 1000.0 / (c->launches > 0 ? c->launches : 1);
    return CC_OK;
}

static void nccl_describe(void *ctx, json_t *o)
{
    struct nccl_ctx *c = ctx;
    char v[32];
    json_object_set_new(o, "nccl_version",
                        json_string(cc_nccl_version_text(c->nc->version, v, sizeof v)));
    json_object_set_new(o, "nccl_library", json_string(c->nc->path));
    json_object_set_new(o, "nccl_path", json_string(c->path));
    json_t *env = json_object();
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "NCCL_", 5) == 0 && eq) {
            char key[128];
            size_t n = (size_t)(eq - *e) < sizeof key - 1 ? (size_t)(eq - *e) : sizeof key - 1;
            memcpy(key, *e, n);
            key[n] = 0;
            json_object_set_new(env, key, json_string(eq + 1));
        }
    }
    json_object_set_new(o, "nccl_env", env);
    snprintf(v, sizeof v, "%d.%d", c->cu->rt_version / 1000, c->cu->rt_version % 1000 / 10);
    json_object_set_new(o, "cuda_runtime", json_string(v));
    snprintf(v, sizeof v, "%d.%d", c->cu->drv_version / 1000, c->cu->drv_version % 1000 / 10);
    json_object_set_new(o, "cuda_driver", json_string(v));
    json_object_set_new(o, "gpu_rank0", json_pack("{s:i, s:s, s:s}", "device", c->dev,
                                                  "name", c->devname, "pci_bus_id", c->busid));
    /* each rank's GPU, in the order of the header's "ranks": the mapping can be checked */
    json_t *ids = json_array();
    for (int i = 0; c->gpus && i < c->size; i++)
        json_array_append_new(ids, json_string(c->gpus[i].busid));
    json_object_set_new(o, "gpu_pci_bus_ids", ids);
    json_object_set_new(o, "cuda_graph_launches", json_integer(c->graph_n));
    json_object_set_new(o, "timing_clock", json_string("CUDA events on the rank's stream"));
}

/* A CUDA driver with a visible GPU and a loadable libnccl. */
static int nccl_usable(char *why, size_t whylen)
{
    const struct cc_cuda *cu = cc_cuda_load(why, whylen);
    const struct cc_nccl *nc = cu ? cc_nccl_load(why, whylen) : NULL;
    if (!nc)
        return 0;
    char v[32];
    snprintf(why, whylen, "%d GPU(s), NCCL %s", cu->ndev,
             cc_nccl_version_text(nc->version, v, sizeof v));
    return 1;
}

const struct cc_backend cc_backend_nccl = {
    .name = "nccl",
    .summary = "NCCL collectives on GPU memory, one GPU per rank (libnccl opened at run time)",
    .built = 1,
    .mem = CC_MEM_DEVICE,
    .usable = nccl_usable,
    .init = nccl_init,
    .fini = nccl_fini,
    .supports = nccl_supports,
    .alloc = nccl_alloc,
    .free = nccl_free,
    .copy_in = nccl_copy_in,
    .copy_out = nccl_copy_out,
    .run = nccl_run,
    .sync = nccl_sync,
    .timer_record = nccl_timer_record,
    .timer_elapsed_us = nccl_timer_elapsed,
    .describe = nccl_describe,
};

#else

const struct cc_backend cc_backend_nccl = {
    .name = "nccl",
    .summary = "NCCL collectives on GPU memory, one GPU per rank",
    .built = 0,
    .how_to_build = "configure found no CUDA/NCCL headers: install the CUDA toolkit and NCCL "
                    "(nccl.h) and run ./configure --with-cuda --with-nccl",
    .mem = CC_MEM_DEVICE,
};

#endif
