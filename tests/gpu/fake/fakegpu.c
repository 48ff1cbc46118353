/* fakegpu.c - a stand-in for libcuda.so.1, libcudart.so.13 and libnccl.so.2, for tests only.
 *
 * Built as one shared object that tests/gpu/fake.sh links under the three names in a
 * directory put first on LD_LIBRARY_PATH, so ccbench's run-time loaders open it instead of a
 * real driver. "Device" memory is host memory, every operation runs synchronously on the
 * host, events read a monotonic clock, stream capture records NCCL calls and graph launches
 * replay them, and the copy kernel is emulated from its three parameters (dst, src, count of
 * 16-byte units, in the PTX's order). NCCL supports a single rank (every collective is then
 * a copy). This checks ccbench's plumbing (loading, device choice, buffers, timing, graphs,
 * checking, reporting); it says nothing about real GPUs.
 *
 * Environment: FAKEGPU_DEVICES (default 2), FAKEGPU_NO_PEER=1 (no peer access),
 * FAKEGPU_PEER_ONE_WAY=1 (a lower-numbered GPU reaches a higher one, not back),
 * FAKEGPU_BUS_BASE=N (the first GPU's PCI bus number, as if other GPUs were hidden),
 * FAKEGPU_BROKEN_KERNEL=1 (the copy kernel writes nothing), FAKEGPU_SHIFTED_KERNEL=1 (it
 * writes every 16 bytes one place late), FAKEGPU_OLD_DRIVER=1 (the first
 * runtime opened needs a newer driver), FAKEGPU_HANG=1, FAKEGPU_HANG_GRAPH=1 (a stream never
 * finishes once a graph was launched on it), FAKEGPU_ASYNC_ERROR=1 (below).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#define EXPORT __attribute__((visibility("default")))

static int cur_dev;
/* the driver API's current context (a device, -1 none). CUDA 12's cudaSetDevice makes the
 * device's primary context current; with FAKEGPU_LAZY_CTX=1, as CUDA 11's runtime, it does
 * not, and only a runtime call that needs the context (cudaMalloc here) binds it. */
static int cur_ctx = -1;
static int lazy_ctx(void) { return getenv("FAKEGPU_LAZY_CTX") != NULL; }

static int ndev(void)
{
    const char *e = getenv("FAKEGPU_DEVICES");
    return e ? atoi(e) : 2;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- streams, capture and graphs ---------------------------------------------------------- */

struct op {
    void *dst;
    const void *src;
    size_t bytes;
};

struct CUstream_st {
    int capturing;
    int hung; /* FAKEGPU_HANG_GRAPH: a graph was launched on it */
    struct op *ops;
    size_t n, cap;
};

struct CUgraph_st {
    struct op *ops;
    size_t n;
};

struct CUgraphExec_st {
    struct op *ops;
    size_t n;
};

struct CUevent_st {
    double t;
};

/* Graphs alive (captured or instantiated): real NCCL's ncclCommDestroy waits until every
 * graph holding its launches is gone, so destroying the communicator first hangs. */
static int live_graphs;

/* Run or (while the stream captures) record a copy. */
static int do_op(cudaStream_t s, void *dst, const void *src, size_t bytes)
{
    if (s && s->capturing) {
        if (s->n == s->cap) {
            size_t nc = s->cap ? 2 * s->cap : 16;
            struct op *no = realloc(s->ops, nc * sizeof *no);
            if (!no)
                return -1;
            s->ops = no;
            s->cap = nc;
        }
        s->ops[s->n++] = (struct op){dst, src, bytes};
        return 0;
    }
    if (dst != src)
        memmove(dst, src, bytes);
    return 0;
}

/* ---- runtime -------------------------------------------------------------------------------- */

/* FAKEGPU_OLD_DRIVER=1: the first runtime asked is too new for the driver (later ones are
 * not: the library stays loaded as libcuda.so.1, so the count survives the runtime's close) */
EXPORT cudaError_t cudaGetDeviceCount(int *n)
{
    static int asked;
    *n = 0;
    if (getenv("FAKEGPU_OLD_DRIVER") && asked++ == 0)
        return cudaErrorInsufficientDriver;
    *n = ndev();
    return *n > 0 ? cudaSuccess : cudaErrorNoDevice;
}
EXPORT cudaError_t cudaSetDevice(int d)
{
    if (d < 0 || d >= ndev())
        return cudaErrorInvalidDevice;
    cur_dev = d;
    if (!lazy_ctx())
        cur_ctx = d;
    return cudaSuccess;
}
EXPORT cudaError_t cudaGetDevice(int *d)
{
    *d = cur_dev;
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d)
{
    (void)d;
    const char *l2 = getenv("FAKEGPU_L2"); /* FAKEGPU_L2=BYTES: the L2 size reported */
    *v = a == cudaDevAttrMultiProcessorCount ? 4
         : a == cudaDevAttrL2CacheSize && l2 ? atoi(l2) : 0;
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceGetPCIBusId(char *buf, int len, int d)
{
    const char *base = getenv("FAKEGPU_BUS_BASE"); /* first GPU's bus number (default 16) */
    snprintf(buf, (size_t)len, "0000:%02x:00.0", (base ? atoi(base) : 0x10) + d);
    return cudaSuccess;
}
EXPORT cudaError_t cudaMalloc(void **p, size_t n)
{
    cur_ctx = cur_dev; /* a runtime call that needs the context binds it */
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
EXPORT cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
EXPORT cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
    (void)flags;
    return cudaMalloc(p, n);
}
EXPORT cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
EXPORT cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k)
{
    (void)k;
    memmove(d, s, n);
    return cudaSuccess;
}
EXPORT cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, enum cudaMemcpyKind k,
                                   cudaStream_t st)
{
    (void)k;
    return do_op(st, d, s, n) ? cudaErrorMemoryAllocation : cudaSuccess;
}
EXPORT cudaError_t cudaMemcpyPeerAsync(void *d, int dd, const void *s, int sd, size_t n,
                                       cudaStream_t st)
{
    (void)dd, (void)sd;
    return cudaMemcpyAsync(d, s, n, cudaMemcpyDefault, st);
}
EXPORT cudaError_t cudaMemset(void *p, int v, size_t n)
{
    memset(p, v, n);
    return cudaSuccess;
}
EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    (void)flags;
    *s = calloc(1, sizeof **s);
    return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}
EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (s)
        free(s->ops);
    free(s);
    return cudaSuccess;
}
EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    return s && s->capturing ? cudaErrorStreamCaptureUnsupported : cudaSuccess;
}
/* FAKEGPU_HANG=1: the stream never finishes (a peer that is stuck) */
EXPORT cudaError_t cudaStreamQuery(cudaStream_t s)
{
    if (s && s->capturing)
        return cudaErrorStreamCaptureUnsupported;
    return getenv("FAKEGPU_HANG") || (s && s->hung) ? cudaErrorNotReady : cudaSuccess;
}
EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int f)
{
    (void)s, (void)e, (void)f;
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = calloc(1, sizeof **e);
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}
EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)s;
    e->t = now();
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    (void)e;
    return cudaSuccess;
}
EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    *ms = (float)((b->t - a->t) * 1e3);
    return cudaSuccess;
}
EXPORT const char *cudaGetErrorString(cudaError_t e)
{
    (void)e;
    return "fake CUDA error";
}
EXPORT cudaError_t cudaGetLastError(void) { return cudaSuccess; }
EXPORT cudaError_t cudaRuntimeGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}
EXPORT cudaError_t cudaDriverGetVersion(int *v)
{
    *v = 13000;
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceCanAccessPeer(int *can, int a, int b)
{
    *can = a != b && !getenv("FAKEGPU_NO_PEER") && (!getenv("FAKEGPU_PEER_ONE_WAY") || a < b);
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int flags)
{
    (void)peer, (void)flags;
    return cudaSuccess;
}
EXPORT cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
/* FAKEGPU_ADDRS=FILE: a line appended to FILE (see copy() below) */
static void addr_log(const char *line)
{
    const char *log = getenv("FAKEGPU_ADDRS");
    FILE *f = log && *log ? fopen(log, "a") : NULL;
    if (f) {
        fputs(line, f);
        fclose(f);
    }
}

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode m)
{
    (void)m;
    addr_log("capture 0\n");
    s->capturing = 1;
    s->n = 0;
    return cudaSuccess;
}
EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    struct CUgraph_st *gr = malloc(sizeof *gr);
    if (!gr)
        return cudaErrorMemoryAllocation;
    gr->ops = s->ops;
    gr->n = s->n;
    s->ops = NULL;
    s->n = s->cap = 0;
    s->capturing = 0;
    *g = gr;
    live_graphs++;
    return cudaSuccess;
}
EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *x, cudaGraph_t g,
                                                 unsigned long long flags)
{
    (void)flags;
    struct CUgraphExec_st *e = malloc(sizeof *e);
    if (!e)
        return cudaErrorMemoryAllocation;
    e->n = g->n;
    e->ops = malloc((g->n ? g->n : 1) * sizeof *e->ops);
    if (!e->ops) {
        free(e);
        return cudaErrorMemoryAllocation;
    }
    memcpy(e->ops, g->ops, g->n * sizeof *e->ops);
    *x = e;
    live_graphs++;
    return cudaSuccess;
}
EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t s)
{
    if (x->n == 0) /* an empty graph means nothing was captured: a bug worth failing on */
        return cudaErrorInvalidValue;
    for (size_t i = 0; i < x->n; i++)
        do_op(s, x->ops[i].dst, x->ops[i].src, x->ops[i].bytes);
    if (s && getenv("FAKEGPU_HANG_GRAPH"))
        s->hung = 1;
    return cudaSuccess;
}
EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t x)
{
    free(x->ops);
    free(x);
    live_graphs--;
    return cudaSuccess;
}
EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    free(g->ops);
    free(g);
    live_graphs--;
    return cudaSuccess;
}

/* ---- driver ----------------------------------------------------------------------------------- */

struct CUmod_st {
    int dev; /* the context it was loaded into */
};
EXPORT CUresult cuCtxGetCurrent(CUcontext *c)
{
    *c = cur_ctx < 0 ? NULL : (CUcontext)(uintptr_t)(0x100 + cur_ctx);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext c)
{
    cur_ctx = c ? (int)((uintptr_t)c - 0x100) : -1;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuInit(unsigned int f)
{
    (void)f;
    return CUDA_SUCCESS;
}
EXPORT CUresult cuDeviceGet(CUdevice *d, int i)
{
    *d = i;
    return i >= 0 && i < ndev() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    snprintf(name, (size_t)len, "Fake GPU %d", (int)d);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    const char *ptx = image;
    if (!strstr(ptx, ".version") || !strstr(ptx, ".entry cc_copy16("))
        return CUDA_ERROR_INVALID_PTX;
    if (cur_ctx < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    *m = malloc(sizeof(struct CUmod_st));
    if (*m)
        (*m)->dev = cur_ctx;
    return *m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
EXPORT CUresult cuModuleUnload(CUmodule m)
{
    free(m);
    return CUDA_SUCCESS;
}
EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    if (strcmp(name, "cc_copy16") != 0)
        return CUDA_ERROR_NOT_FOUND;
    *f = (CUfunction)(uintptr_t)(0x1600 + m->dev); /* the function of that context */
    return CUDA_SUCCESS;
}
EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                               unsigned by, unsigned bz, unsigned shm, CUstream s, void **params,
                               void **extra)
{
    (void)shm, (void)extra;
    if (((uintptr_t)f & ~(uintptr_t)0xff) != 0x1600 || !gx || !gy || !gz || !bx || !by || !bz ||
        bx * by * bz > 1024 || !params)
        return CUDA_ERROR_INVALID_VALUE;
    if ((int)((uintptr_t)f & 0xff) != cur_ctx) /* a function of another context than the current */
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t dst = *(uint64_t *)params[0], src = *(uint64_t *)params[1],
             n = *(uint64_t *)params[2];
    if (getenv("FAKEGPU_BROKEN_KERNEL"))
        return CUDA_SUCCESS;
    if (getenv("FAKEGPU_SHIFTED_KERNEL") && n > 1) /* every 16-byte unit one place late */
        return do_op((cudaStream_t)s, (void *)(uintptr_t)(dst + 16), (const void *)(uintptr_t)src,
                     (n - 1) * 16)
                   ? CUDA_ERROR_OUT_OF_MEMORY
                   : CUDA_SUCCESS;
    return do_op((cudaStream_t)s, (void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n * 16)
               ? CUDA_ERROR_OUT_OF_MEMORY
               : CUDA_SUCCESS;
}
EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
    (void)r;
    *s = "fake driver error";
    return CUDA_SUCCESS;
}

/* ---- NCCL, one rank ------------------------------------------------------------------------------ */

struct ncclComm {
    int dev;
};

static size_t tsize(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8: case ncclUint8: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
    default: return 0;
    }
}

static struct {
    int depth;
    const void *sbuf;
    void *rbuf;
    size_t sbytes, rbytes;
    int sends, recvs;
    cudaStream_t stream;
} grp;

EXPORT ncclResult_t ncclGetVersion(int *v)
{
    *v = 22809;
    return ncclSuccess;
}
EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0x5a, sizeof *id);
    return ncclSuccess;
}
EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id, int rank)
{
    if (n != 1 || rank != 0 || id.internal[0] != 0x5a) /* one rank, id from GetUniqueId */
        return ncclInvalidUsage;
    *c = malloc(sizeof **c);
    if (!*c)
        return ncclSystemError;
    (*c)->dev = cur_dev;
    return ncclSuccess;
}
EXPORT ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    if (live_graphs > 0) {
        fprintf(stderr, "fake NCCL: ncclCommDestroy with %d CUDA graph(s) alive: real NCCL waits "
                "for them for ever\n", live_graphs);
        _exit(97);
    }
    free(c);
    return ncclSuccess;
}
EXPORT ncclResult_t ncclCommAbort(ncclComm_t c)
{
    free(c);
    return ncclSuccess;
}
EXPORT const char *ncclGetErrorString(ncclResult_t r)
{
    return r == ncclInvalidUsage ? "invalid usage (fake NCCL: one rank only)" : "fake NCCL error";
}
EXPORT const char *ncclGetLastError(ncclComm_t c)
{
    (void)c;
    return "";
}
/* FAKEGPU_ASYNC_ERROR=1: the network failed under the communicator */
EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *r)
{
    (void)c;
    *r = getenv("FAKEGPU_ASYNC_ERROR") ? ncclRemoteError : ncclSuccess;
    return ncclSuccess;
}

/* FAKEGPU_ADDRS=FILE: each collective's send buffer address and count are appended to FILE,
 * a line each, and "capture 0" for each graph capture begun (tests of the buffer rotation
 * of timed launches, and of the graph kept while the arguments stay the same) */
static ncclResult_t copy(const void *s, void *d, size_t count, ncclDataType_t t, ncclComm_t c,
                         cudaStream_t st)
{
    if (!c || !tsize(t) || !st)
        return ncclInvalidArgument;
    char line[64];
    snprintf(line, sizeof line, "%p %zu\n", s, count);
    addr_log(line);
    return do_op(st, d, s, count * tsize(t)) ? ncclSystemError : ncclSuccess;
}

EXPORT ncclResult_t ncclAllReduce(const void *s, void *d, size_t n, ncclDataType_t t,
                                  ncclRedOp_t op, ncclComm_t c, cudaStream_t st)
{
    (void)op;
    return copy(s, d, n, t, c, st);
}
EXPORT ncclResult_t ncclAllGather(const void *s, void *d, size_t n, ncclDataType_t t,
                                  ncclComm_t c, cudaStream_t st)
{
    return copy(s, d, n, t, c, st);
}
EXPORT ncclResult_t ncclReduceScatter(const void *s, void *d, size_t n, ncclDataType_t t,
                                      ncclRedOp_t op, ncclComm_t c, cudaStream_t st)
{
    (void)op;
    return copy(s, d, n, t, c, st);
}
EXPORT ncclResult_t ncclBroadcast(const void *s, void *d, size_t n, ncclDataType_t t, int root,
                                  ncclComm_t c, cudaStream_t st)
{
    return root != 0 ? ncclInvalidArgument : copy(s, d, n, t, c, st);
}
EXPORT ncclResult_t ncclReduce(const void *s, void *d, size_t n, ncclDataType_t t,
                               ncclRedOp_t op, int root, ncclComm_t c, cudaStream_t st)
{
    (void)op;
    return root != 0 ? ncclInvalidArgument : copy(s, d, n, t, c, st);
}
/* nccl.h declares these without a prototype */
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);

EXPORT ncclResult_t ncclGroupStart(void)
{
    if (grp.depth++ == 0)
        grp.sends = grp.recvs = 0;
    return ncclSuccess;
}
EXPORT ncclResult_t ncclSend(const void *s, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                             cudaStream_t st)
{
    if (!grp.depth || peer != 0 || !c || !tsize(t) || grp.sends++)
        return ncclInvalidUsage;
    grp.sbuf = s;
    grp.sbytes = n * tsize(t);
    grp.stream = st;
    return ncclSuccess;
}
EXPORT ncclResult_t ncclRecv(void *d, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                             cudaStream_t st)
{
    if (!grp.depth || peer != 0 || !c || !tsize(t) || grp.recvs++)
        return ncclInvalidUsage;
    grp.rbuf = d;
    grp.rbytes = n * tsize(t);
    grp.stream = st;
    return ncclSuccess;
}
EXPORT ncclResult_t ncclGroupEnd(void)
{
    if (grp.depth <= 0)
        return ncclInvalidUsage;
    if (--grp.depth)
        return ncclSuccess;
    if (grp.sends != grp.recvs || grp.sbytes != grp.rbytes)
        return ncclInvalidUsage; /* unmatched send/recv: NCCL would hang */
    if (grp.sends && do_op(grp.stream, grp.rbuf, grp.sbuf, grp.sbytes))
        return ncclSystemError;
    return ncclSuccess;
}
