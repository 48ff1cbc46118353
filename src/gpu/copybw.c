/* copybw.c - GPU copy bandwidth (see copybw.h). */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include "gpu/copybw.h"

#include <ctype.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "gpu/cuda_dl.h"
#include "topo/sysfs.h"

const char *const cc_copy_test_names[] = {"h2d", "d2h", "h-bidir", "d2d", "p2p-write",
                                          "p2p-read", "p2p-bidir", NULL};
const char *const cc_copy_engine_names[] = {"ce", "sm", NULL};

#ifdef CC_HAVE_CUDA

/* cc_copy16(uint4 *dst, const uint4 *src, u64 n): dst[i] = src[i] for i < n, grid-stride.
 * Generated once from a three-line CUDA C kernel with `nvcc -ptx`, ISA lowered to 7.0 (it
 * uses nothing newer) so every driver since CUDA 11 can JIT it. */
static const char copy_ptx[] =
    ".version 7.0\n"
    ".target sm_70\n"
    ".address_size 64\n"
    ".visible .entry cc_copy16(\n"
    "    .param .u64 cc_copy16_param_0,\n"
    "    .param .u64 cc_copy16_param_1,\n"
    "    .param .u64 cc_copy16_param_2\n"
    ")\n"
    "{\n"
    "    .reg .pred %p<3>;\n"
    "    .reg .b32 %r<13>;\n"
    "    .reg .b64 %rd<18>;\n"
    "    ld.param.u64 %rd8, [cc_copy16_param_0];\n"
    "    ld.param.u64 %rd9, [cc_copy16_param_1];\n"
    "    ld.param.u64 %rd10, [cc_copy16_param_2];\n"
    "    mov.u32 %r1, %ctaid.x;\n"
    "    mov.u32 %r2, %ntid.x;\n"
    "    cvt.u64.u32 %rd1, %r2;\n"
    "    mul.wide.u32 %rd11, %r1, %r2;\n"
    "    mov.u32 %r3, %tid.x;\n"
    "    cvt.u64.u32 %rd12, %r3;\n"
    "    add.s64 %rd17, %rd11, %rd12;\n"
    "    setp.ge.u64 %p1, %rd17, %rd10;\n"
    "    @%p1 bra $L__BB0_3;\n"
    "    mov.u32 %r4, %nctaid.x;\n"
    "    cvt.u64.u32 %rd13, %r4;\n"
    "    mul.lo.s64 %rd3, %rd13, %rd1;\n"
    "    cvta.to.global.u64 %rd4, %rd9;\n"
    "    cvta.to.global.u64 %rd5, %rd8;\n"
    "$L__BB0_2:\n"
    "    shl.b64 %rd14, %rd17, 4;\n"
    "    add.s64 %rd15, %rd4, %rd14;\n"
    "    add.s64 %rd16, %rd5, %rd14;\n"
    "    ld.global.nc.v4.u32 {%r5, %r6, %r7, %r8}, [%rd15];\n"
    "    st.global.v4.u32 [%rd16], {%r5, %r6, %r7, %r8};\n"
    "    add.s64 %rd17, %rd17, %rd3;\n"
    "    setp.lt.u64 %p2, %rd17, %rd10;\n"
    "    @%p2 bra $L__BB0_2;\n"
    "$L__BB0_3:\n"
    "    ret;\n"
    "}\n";

#define NSLOT 5 /* events per device: the common start, then start and stop per stream */
#define MAX_HB 16 /* NUMA nodes given host buffers of their own; the rest share the last */

struct dev {
    int index, sms;
    int numa;              /* the GPU's NUMA node (sysfs), -1 unknown */
    int hb;                /* its host buffers: index into run.hb */
    cudaStream_t s[2];
    cudaEvent_t ev[NSLOT];
    CUmodule mod;
    CUfunction fn;
    CUcontext ctx;         /* its primary context, made current before each kernel launch */
    void *d[2];            /* two buffers of p->bytes */
};

struct run {
    const struct cc_cuda *cu;
    const struct cc_copy_params *p;
    struct dev *dv;
    int n;
    /* pinned, mapped host buffers, a pair per NUMA node of the GPUs (allocated there, as
     * nvbandwidth does: a GPU's host copies do not cross the socket link) */
    struct hostbuf { int numa, bound; void *h[2]; } hb[MAX_HB];
    int nhb;
    unsigned char **peer;  /* peer[i][j]: i can access j's memory directly */
    unsigned char *pattern; /* a source's contents for the figure being measured */
    int pattern_of;         /* its `pat`, -1 none yet */
};

struct op {
    int issuer;            /* index into run.dv whose stream issues the copy */
    int stream;            /* 0 or 1 */
    enum cc_copy_engine eng;
    void *dst;
    const void *src;
};

static cc_status cuda_fail(const struct cc_cuda *cu, cudaError_t e, const char *what, int dev)
{
    cc_err("%s on GPU %d failed: %s", what, dev, cu->cudaGetErrorString(e));
    return CC_EBACKEND;
}

#define CU_TRY(call, what, dev)                                                              \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess)                                                               \
            return cuda_fail(r->cu, e_, what, dev);                                          \
    } while (0)

/* One round of op o; `share` ops of the round run on o's device at once, so a kernel takes its
 * share of the SMs (two kernels that each fill every SM would run one after the other). */
static cc_status enqueue(struct run *r, const struct op *o, int share)
{
    struct dev *d = &r->dv[o->issuer];
    cudaStream_t s = d->s[o->stream];
    if (o->eng == CC_ENGINE_CE) {
        CU_TRY(r->cu->cudaMemcpyAsync(o->dst, o->src, r->p->bytes, cudaMemcpyDefault, s),
               "cudaMemcpyAsync", d->index);
        return CC_OK;
    }
    uint64_t dst = (uint64_t)(uintptr_t)o->dst, src = (uint64_t)(uintptr_t)o->src;
    uint64_t n16 = r->p->bytes / 16;
    void *args[] = {&dst, &src, &n16};
    unsigned threads = 512;
    uint64_t want = (n16 + threads - 1) / threads;
    uint64_t most = (uint64_t)d->sms * 4 / (uint64_t)(share > 0 ? share : 1);
    most = most ? most : 1;
    unsigned blocks = (unsigned)(want < most ? (want ? want : 1) : most);
    CUresult cr = r->cu->cuCtxSetCurrent(d->ctx);
    if (cr == CUDA_SUCCESS)
        cr = r->cu->cuLaunchKernel(d->fn, blocks, 1, 1, threads, 1, 1, 0, (CUstream)s, args, NULL);
    if (cr != CUDA_SUCCESS) {
        const char *msg = NULL;
        r->cu->cuGetErrorString(cr, &msg);
        cc_err("copy kernel launch on GPU %d failed: %s", d->index, msg ? msg : "?");
        return CC_EBACKEND;
    }
    return CC_OK;
}

/* Issue `iters` rounds of every op, the ops concurrently on their streams and started
 * together; each op's own seconds, from events on its own stream (a direction that finishes
 * early is not charged the other's tail: the convention of nvbandwidth's bidirectional
 * figures, which add the two directions' rates). */
static cc_status time_ops(struct run *r, const struct op *ops, int nops, int iters, double *sec)
{
    struct dev *d0 = &r->dv[ops[0].issuer];
    cc_status st;
    int share[2] = {1, 1};
    if (nops == 2 && ops[0].issuer == ops[1].issuer)
        share[0] = share[1] = 2;
    CU_TRY(r->cu->cudaSetDevice(d0->index), "cudaSetDevice", d0->index);
    CU_TRY(r->cu->cudaEventRecord(d0->ev[0], d0->s[ops[0].stream]), "cudaEventRecord", d0->index);
    for (int k = 0; k < nops; k++) {
        struct dev *d = &r->dv[ops[k].issuer];
        cudaStream_t s = d->s[ops[k].stream];
        CU_TRY(r->cu->cudaSetDevice(d->index), "cudaSetDevice", d->index);
        if (k > 0)
            CU_TRY(r->cu->cudaStreamWaitEvent(s, d0->ev[0], 0), "cudaStreamWaitEvent", d->index);
        CU_TRY(r->cu->cudaEventRecord(d->ev[1 + 2 * ops[k].stream], s), "cudaEventRecord",
               d->index);
    }
    for (int i = 0; i < iters; i++)
        for (int k = 0; k < nops; k++) {
            CU_TRY(r->cu->cudaSetDevice(r->dv[ops[k].issuer].index), "cudaSetDevice",
                   r->dv[ops[k].issuer].index);
            if ((st = enqueue(r, &ops[k], share[k])) != CC_OK)
                return st;
        }
    for (int k = 0; k < nops; k++) {
        struct dev *d = &r->dv[ops[k].issuer];
        CU_TRY(r->cu->cudaSetDevice(d->index), "cudaSetDevice", d->index);
        CU_TRY(r->cu->cudaEventRecord(d->ev[2 + 2 * ops[k].stream], d->s[ops[k].stream]),
               "cudaEventRecord", d->index);
    }
    for (int k = 0; k < nops; k++) {
        struct dev *d = &r->dv[ops[k].issuer];
        float ms = 0;
        CU_TRY(r->cu->cudaSetDevice(d->index), "cudaSetDevice", d->index);
        CU_TRY(r->cu->cudaEventSynchronize(d->ev[2 + 2 * ops[k].stream]), "copy", d->index);
        CU_TRY(r->cu->cudaEventElapsedTime(&ms, d->ev[1 + 2 * ops[k].stream],
                                           d->ev[2 + 2 * ops[k].stream]),
               "cudaEventElapsedTime", d->index);
        sec[k] = ms * 1e-3;
    }
    return CC_OK;
}

/* Device (index into r->dv) owning buffer b, -1 for host memory. */
static int owner(const struct run *r, const void *b)
{
    for (int i = 0; i < r->n; i++)
        if (b == r->dv[i].d[0] || b == r->dv[i].d[1])
            return i;
    return -1;
}

/* Byte at offset i of a source: depends on the offset (a shifted or misplaced copy shows)
 * and on the figure (a buffer left from the previous one does not pass). */
static unsigned char pattern(size_t i, unsigned char pat)
{
    return (unsigned char)((i >> 4) * 151u + (i & 15) * 7u + pat);
}

/* Fill sources with the pattern and destinations with zeros, each on its own device (device
 * buffers by a copy of the pattern, written once per figure kind). */
static cc_status prepare(struct run *r, const struct op *ops, int nops, unsigned char pat)
{
    size_t b = r->p->bytes;
    if (r->pattern_of != pat) {
        if (!r->pattern && !(r->pattern = malloc(b)))
            return CC_ENOMEM;
        for (size_t i = 0; i < b; i++)
            r->pattern[i] = pattern(i, pat);
        r->pattern_of = pat;
    }
    for (int k = 0; k < nops; k++) {
        void *bufs[2] = {(void *)ops[k].src, ops[k].dst};
        for (int j = 0; j < 2; j++) {
            int o = owner(r, bufs[j]);
            if (o < 0) {
                if (j == 1)
                    memset(bufs[j], 0, b);
                else
                    memcpy(bufs[j], r->pattern, b);
                continue;
            }
            int dev = r->dv[o].index;
            CU_TRY(r->cu->cudaSetDevice(dev), "cudaSetDevice", dev);
            if (j == 1)
                CU_TRY(r->cu->cudaMemset(bufs[j], 0, b), "cudaMemset", dev);
            else
                CU_TRY(r->cu->cudaMemcpy(bufs[j], r->pattern, b, cudaMemcpyHostToDevice),
                       "cudaMemcpy", dev);
            CU_TRY(r->cu->cudaDeviceSynchronize(), "cudaDeviceSynchronize", dev);
        }
    }
    return CC_OK;
}

/* Did every destination receive the pattern? 64 samples of 16 bytes spread over the buffer,
 * the first and the last included. */
static cc_status verify(struct run *r, const struct op *ops, int nops, unsigned char pat,
                        const char *what)
{
    size_t b = r->p->bytes, nb = b / 16;
    unsigned char got[16];
    for (int k = 0; k < nops; k++)
        for (size_t s = 0; s < 64; s++) {
            size_t at = (nb > 1 ? s * (nb - 1) / 63 : 0) * 16;
            const unsigned char *src = (const unsigned char *)ops[k].dst + at;
            if (owner(r, ops[k].dst) < 0)
                memcpy(got, src, 16);
            else
                CU_TRY(r->cu->cudaMemcpy(got, src, 16, cudaMemcpyDefault), "cudaMemcpy", -1);
            for (int j = 0; j < 16; j++)
                if (got[j] != pattern(at + (size_t)j, pat)) {
                    cc_err("%s copied wrong data: byte %zu is 0x%02x, expected 0x%02x", what,
                           at + (size_t)j, got[j], pattern(at + (size_t)j, pat));
                    return CC_EWRONG;
                }
        }
    return CC_OK;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static cc_status measure(struct run *r, const struct op *ops, int nops, struct cc_copy_result *res)
{
    const struct cc_copy_params *p = r->p;
    double *g = calloc((size_t)p->reps, sizeof *g), sec[2] = {0, 0};
    char what[96];
    cc_status st;
    unsigned char pat = (unsigned char)(0x11 + 0x10 * res->test + res->engine);
    if (!g)
        return CC_ENOMEM;
    snprintf(what, sizeof what, "%s %s copy %d->%d", cc_copy_test_names[res->test],
             cc_copy_engine_names[res->engine], res->src, res->dst);
    if ((st = prepare(r, ops, nops, pat)) != CC_OK)
        goto done;
    /* warm-up: the asked copies, then more until 50 ms went by (clocks that dropped while
     * the host prepared the buffers come back up) */
    double warm = 0;
    for (int round = 0; p->warmup > 0 && round < 100 && (round == 0 || warm < 0.05); round++) {
        if ((st = time_ops(r, ops, nops, p->warmup, sec)) != CC_OK)
            goto done;
        warm += sec[0];
    }
    for (int i = 0; i < p->reps; i++) {
        if ((st = time_ops(r, ops, nops, p->iters, sec)) != CC_OK)
            goto done;
        /* each direction at its own rate; a bidirectional figure is their sum */
        g[i] = 0;
        for (int k = 0; k < nops; k++)
            g[i] += sec[k] > 0 ? (double)p->bytes * p->iters / sec[k] / 1e9 : 0;
    }
    if ((st = verify(r, ops, nops, pat, what)) != CC_OK)
        goto done;
    qsort(g, (size_t)p->reps, sizeof *g, cmp_d);
    res->gbps_min = g[0];
    res->gbps_max = g[p->reps - 1];
    res->gbps_med = p->reps % 2 ? g[p->reps / 2] : (g[p->reps / 2 - 1] + g[p->reps / 2]) / 2;
done:
    free(g);
    return st;
}

static cc_status setup_dev(struct run *r, struct dev *d)
{
    int dev = d->index;
    CU_TRY(r->cu->cudaSetDevice(dev), "cudaSetDevice", dev);
    CU_TRY(r->cu->cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, dev),
           "cudaDeviceGetAttribute", dev);
    for (int i = 0; i < 2; i++) {
        CU_TRY(r->cu->cudaStreamCreateWithFlags(&d->s[i], cudaStreamNonBlocking),
               "cudaStreamCreate", dev);
        CU_TRY(r->cu->cudaMalloc(&d->d[i], r->p->bytes), "cudaMalloc", dev);
    }
    for (int i = 0; i < NSLOT; i++)
        CU_TRY(r->cu->cudaEventCreate(&d->ev[i]), "cudaEventCreate", dev);
    /* the runtime made the device's primary context current (cudaMalloc needs it): load the
     * kernel into it, and keep it: before CUDA 12, cudaSetDevice alone does not make it
     * current again, and a driver-API launch uses whatever context is current */
    CUresult cr = r->cu->cuCtxGetCurrent(&d->ctx);
    if (cr == CUDA_SUCCESS)
        cr = r->cu->cuModuleLoadData(&d->mod, copy_ptx);
    if (cr == CUDA_SUCCESS)
        cr = r->cu->cuModuleGetFunction(&d->fn, d->mod, "cc_copy16");
    if (cr != CUDA_SUCCESS) {
        const char *msg = NULL;
        r->cu->cuGetErrorString(cr, &msg);
        cc_err("cannot load the copy kernel (PTX JIT) on GPU %d: %s", dev, msg ? msg : "?");
        d->mod = NULL;
        return CC_EBACKEND;
    }
    return CC_OK;
}

static void teardown(struct run *r)
{
    for (int i = 0; r->dv && i < r->n; i++) {
        struct dev *d = &r->dv[i];
        if (r->cu->cudaSetDevice(d->index) != cudaSuccess)
            continue;
        for (int k = 0; k < 2; k++) {
            if (d->d[k])
                r->cu->cudaFree(d->d[k]);
            if (d->s[k])
                r->cu->cudaStreamDestroy(d->s[k]);
        }
        for (int k = 0; k < NSLOT; k++)
            if (d->ev[k])
                r->cu->cudaEventDestroy(d->ev[k]);
        if (d->mod)
            r->cu->cuModuleUnload(d->mod);
    }
    for (int i = 0; i < r->nhb; i++)
        for (int k = 0; k < 2; k++)
            if (r->hb[i].h[k])
                r->cu->cudaFreeHost(r->hb[i].h[k]);
    if (r->peer)
        for (int i = 0; i < r->n; i++)
            free(r->peer[i]);
    free(r->peer);
    free(r->dv);
    free(r->pattern);
}

static cc_status enable_peers(struct run *r)
{
    if (!(r->peer = calloc((size_t)r->n, sizeof *r->peer)))
        return CC_ENOMEM;
    for (int i = 0; i < r->n; i++) {
        if (!(r->peer[i] = calloc((size_t)r->n, 1)))
            return CC_ENOMEM;
        for (int j = 0; j < r->n; j++) {
            int can = 0;
            if (i == j || r->cu->cudaDeviceCanAccessPeer(&can, r->dv[i].index,
                                                         r->dv[j].index) != cudaSuccess || !can)
                continue;
            CU_TRY(r->cu->cudaSetDevice(r->dv[i].index), "cudaSetDevice", r->dv[i].index);
            cudaError_t e = r->cu->cudaDeviceEnablePeerAccess(r->dv[j].index, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled) {
                r->cu->cudaGetLastError(); /* clear the sticky-until-read error */
            } else if (e != cudaSuccess) {
                /* allowed but refused (too many peers, an IOMMU or ACS in the way): this
                 * pair's figures are staged or n/a, the others still run */
                cc_warn("GPU %d cannot access GPU %d directly: %s", r->dv[i].index,
                        r->dv[j].index, r->cu->cudaGetErrorString(e));
                r->cu->cudaGetLastError();
                continue;
            }
            r->peer[i][j] = 1;
        }
    }
    return CC_OK;
}

static cc_status one(struct run *r, enum cc_copy_test t, enum cc_copy_engine e, int si, int di,
                     cc_copy_cb cb, void *user)
{
    const struct cc_copy_params *p = r->p;
    struct cc_copy_result res = {.test = t, .engine = e, .bytes = p->bytes};
    struct op ops[2];
    int nops = 1;
    struct dev *s = si >= 0 ? &r->dv[si] : NULL, *d = di >= 0 ? &r->dv[di] : NULL;
    res.src = s ? s->index : -1;
    res.dst = d ? d->index : -1;
    void **h = r->hb[(d ? d : s)->hb].h; /* the GPU's own NUMA node's host buffers */
    switch (t) {
    case CC_COPY_H2D:
        ops[0] = (struct op){di, 0, e, d->d[0], h[0]};
        break;
    case CC_COPY_D2H:
        ops[0] = (struct op){si, 0, e, h[1], s->d[1]};
        break;
    case CC_COPY_HBIDIR:
        ops[0] = (struct op){di, 0, e, d->d[0], h[0]};
        ops[1] = (struct op){di, 1, e, h[1], d->d[1]};
        res.src = -1;
        nops = 2;
        res.bytes = 2 * p->bytes;
        break;
    case CC_COPY_D2D:
        ops[0] = (struct op){si, 0, e, s->d[1], s->d[0]};
        break;
    case CC_COPY_P2P_WRITE:
    case CC_COPY_P2P_READ:
        ops[0] = (struct op){t == CC_COPY_P2P_WRITE ? si : di, 0, e, d->d[1], s->d[0]};
        break;
    default: /* CC_COPY_P2P_BIDIR */
        ops[0] = (struct op){si, 0, e, d->d[1], s->d[0]};
        ops[1] = (struct op){di, 0, e, s->d[1], d->d[0]};
        nops = 2;
        res.bytes = 2 * p->bytes;
        break;
    }
    if (t <= CC_COPY_HBIDIR) {
        const struct hostbuf *hb = &r->hb[(d ? d : s)->hb];
        res.host_numa = hb->bound && hb->numa == (d ? d : s)->numa ? hb->numa : -1;
    }
    else
        res.host_numa = -1;
    if (t >= CC_COPY_P2P_WRITE) {
        /* a one-way copy needs the issuer's access to the other; both ways, both */
        int issuer = t == CC_COPY_P2P_READ ? di : si, other = issuer == si ? di : si;
        int ways = (r->peer[si][di] != 0) + (r->peer[di][si] != 0);
        res.peer = t == CC_COPY_P2P_BIDIR ? (ways == 2 ? 1 : ways == 1 ? 2 : 0)
                                          : r->peer[issuer][other] != 0;
        if (res.peer != 1 && e == CC_ENGINE_SM) {
            res.na = "no peer access between these GPUs";
            cb(&res, user);
            return CC_OK;
        }
    }
    cc_status st = measure(r, ops, nops, &res);
    if (st == CC_OK)
        cb(&res, user);
    return st;
}

/* The NUMA node of a GPU as Linux says (sysfs numa_node of its PCI function), -1 unknown. */
static int gpu_numa(const struct run *r, int dev)
{
    char bus[32];
    if (r->cu->cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess)
        return -1;
    for (char *c = bus; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    /* CUDA may print an 8-digit domain ("00000000:07:00.0"); sysfs has 4 */
    return cc_sysfs_pci_numa("/", strlen(bus) > 12 ? bus + strlen(bus) - 12 : bus);
}

/* Pin this thread to the CPUs of NUMA node `numa` (from sysfs cpulist); 0 done, -1 not. */
static int bind_numa(int numa, cpu_set_t *saved)
{
    char path[96], list[4096];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", numa);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(list, sizeof list, f) != NULL;
    fclose(f);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (char *p = list; ok && *p && *p != '\n';) {
        char *end;
        long a = strtol(p, &end, 10), z = a;
        if (end == p)
            break;
        if (*end == '-')
            z = strtol(end + 1, &end, 10);
        for (long c = a; c <= z && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &set);
        p = *end == ',' ? end + 1 : end;
    }
    if (!ok || !CPU_COUNT(&set) || sched_getaffinity(0, sizeof *saved, saved) != 0 ||
        sched_setaffinity(0, sizeof set, &set) != 0)
        return -1;
    return 0;
}

/* The pair of host buffers of d's NUMA node, allocated (pinned) there on first use. */
static cc_status host_buffers(struct run *r, struct dev *d)
{
    d->numa = gpu_numa(r, d->index);
    for (int i = 0; i < r->nhb; i++)
        if (r->hb[i].numa == d->numa || (i == MAX_HB - 1)) {
            d->hb = i; /* (past MAX_HB nodes the last pair serves the rest) */
            return CC_OK;
        }
    struct hostbuf *hb = &r->hb[r->nhb];
    cpu_set_t saved;
    int bound = d->numa >= 0 && bind_numa(d->numa, &saved) == 0;
    cc_status st = CC_OK;
    hb->numa = d->numa; /* GPUs of one node share the pair even where binding failed */
    hb->bound = bound;
    for (int k = 0; k < 2 && st == CC_OK; k++) {
        cudaError_t e = r->cu->cudaHostAlloc(&hb->h[k], r->p->bytes,
                                             cudaHostAllocPortable | cudaHostAllocMapped);
        if (e != cudaSuccess) {
            hb->h[k] = NULL;
            st = cuda_fail(r->cu, e, "cudaHostAlloc of pinned host memory", d->index);
        } else {
            memset(hb->h[k], 0, r->p->bytes); /* touched from this node's CPUs */
        }
    }
    if (bound)
        sched_setaffinity(0, sizeof saved, &saved);
    d->hb = r->nhb++;
    return st;
}

cc_status cc_gpu_list(struct cc_gpu_info **info, int *n, char *err, size_t errlen)
{
    const struct cc_cuda *cu = cc_cuda_load(err, errlen);
    *info = NULL;
    *n = 0;
    if (!cu)
        return CC_ENODEV;
    struct cc_gpu_info *g = calloc((size_t)cu->ndev, sizeof *g);
    if (!g)
        return CC_ENOMEM;
    for (int i = 0; i < cu->ndev; i++) {
        CUdevice d;
        g[i].index = i;
        if (cu->cuDeviceGet(&d, i) != CUDA_SUCCESS ||
            cu->cuDeviceGetName(g[i].name, sizeof g[i].name, d) != CUDA_SUCCESS)
            snprintf(g[i].name, sizeof g[i].name, "?");
        if (cu->cudaDeviceGetPCIBusId(g[i].busid, sizeof g[i].busid, i) != cudaSuccess)
            snprintf(g[i].busid, sizeof g[i].busid, "?");
        cu->cudaDeviceGetAttribute(&g[i].sms, cudaDevAttrMultiProcessorCount, i);
        if (cu->cudaDeviceGetAttribute(&g[i].l2_bytes, cudaDevAttrL2CacheSize, i) != cudaSuccess)
            g[i].l2_bytes = 0;
    }
    *info = g;
    *n = cu->ndev;
    return CC_OK;
}

void cc_gpu_versions(char *rt, char *drv, size_t len)
{
    char err[8];
    const struct cc_cuda *cu = cc_cuda_load(err, sizeof err);
    int a = cu ? cu->rt_version : 0, b = cu ? cu->drv_version : 0;
    snprintf(rt, len, "%d.%d", a / 1000, a % 1000 / 10);
    snprintf(drv, len, "%d.%d", b / 1000, b % 1000 / 10);
}

cc_status cc_copy_run(const struct cc_copy_params *p, cc_copy_cb cb, void *user, char *err,
                      size_t errlen)
{
    struct run run = {.p = p, .pattern_of = -1}, *r = &run;
    cc_status st = CC_OK;
    if (!(r->cu = cc_cuda_load(err, errlen)))
        return CC_ENODEV;
    if (p->bytes < 16 || p->bytes % 16 || p->iters < 1 || p->reps < 1 || p->warmup < 0) {
        cc_errbuf(err, errlen, "copy size %zu must be a positive multiple of 16 bytes, and "
                  "iterations and repetitions at least 1", p->bytes);
        return CC_EUSAGE;
    }
    r->n = p->devs ? p->ndevs : r->cu->ndev;
    if (!(r->dv = calloc((size_t)r->n, sizeof *r->dv)))
        return CC_ENOMEM;
    for (int i = 0; i < r->n; i++) {
        r->dv[i].index = p->devs ? p->devs[i] : i;
        if (r->dv[i].index < 0 || r->dv[i].index >= r->cu->ndev) {
            cc_errbuf(err, errlen, "GPU %d does not exist (%d visible)", r->dv[i].index,
                      r->cu->ndev);
            st = CC_EUSAGE;
            goto done;
        }
    }
    for (int i = 0; i < r->n && st == CC_OK; i++)
        st = setup_dev(r, &r->dv[i]);
    for (int i = 0; i < r->n && st == CC_OK; i++)
        st = host_buffers(r, &r->dv[i]);
    if (st == CC_OK)
        st = enable_peers(r);
    if (st != CC_OK) {
        cc_errbuf(err, errlen, "GPU set-up failed (see above)");
        goto done;
    }
    for (int t = 0; t < CC_COPY_TEST_COUNT && st == CC_OK; t++) {
        if (!(p->tests & (1u << t)))
            continue;
        for (int e = 0; e < CC_ENGINE_COUNT && st == CC_OK; e++) {
            if (!(p->engines & (1u << e)))
                continue;
            for (int i = 0; i < r->n && st == CC_OK; i++) {
                if (t < CC_COPY_P2P_WRITE) {
                    int si = t == CC_COPY_H2D || t == CC_COPY_HBIDIR ? -1 : i;
                    int di = t == CC_COPY_D2H ? -1 : i;
                    st = one(r, (enum cc_copy_test)t, (enum cc_copy_engine)e, si, di, cb, user);
                    continue;
                }
                for (int j = 0; j < r->n && st == CC_OK; j++)
                    if (i != j && (t != CC_COPY_P2P_BIDIR || i < j))
                        st = one(r, (enum cc_copy_test)t, (enum cc_copy_engine)e, i, j, cb, user);
            }
        }
    }
    if (st != CC_OK)
        cc_errbuf(err, errlen, "copy benchmark stopped: %s (see above)", cc_status_str(st));
done:
    teardown(r);
    return st;
}

#else

cc_status cc_gpu_list(struct cc_gpu_info **info, int *n, char *err, size_t errlen)
{
    *info = NULL;
    *n = 0;
    cc_cuda_load(err, errlen);
    return CC_ENOTBUILT;
}

void cc_gpu_versions(char *rt, char *drv, size_t len)
{
    snprintf(rt, len, "none");
    snprintf(drv, len, "none");
}

cc_status cc_copy_run(const struct cc_copy_params *p, cc_copy_cb cb, void *user, char *err,
                      size_t errlen)
{
    (void)p, (void)cb, (void)user;
    cc_cuda_load(err, errlen);
    return CC_ENOTBUILT;
}

#endif
