/* verbs backend: RDMA writes over InfiniBand or RoCE reliable-connected queue pairs.
 *
 * Ranks form a ring. Each rank has --ib-qps RC queue pairs to its right neighbour (it writes
 * on them: "out") and as many from its left neighbour ("in"); their parameters travel over
 * MPI as fixed big-endian records (gpu/qp_wire.h). Every transfer is striped over the QPs,
 * cut into work requests of at most 1 MiB with many outstanding, and the last write on each
 * QP carries an immediate value that tells the receiver its stripe has landed.
 *
 *   sendrecv   each rank writes to its right neighbour: for one pair (2 ranks) or a ring.
 *              Up to 64 KiB (eager) into a receive slot of the neighbour, which copies it
 *              out: one one-way write latency, the figure ib_write_lat reports. Above, zero
 *              copy straight into the neighbour's receive buffer, after a zero-byte "ready"
 *              the neighbour sends when its run starts (its buffer may not be overwritten
 *              before): the RDMA-write bandwidth ib_write_bw reports.
 *   allreduce  ring reduce-scatter then ring all-gather over RDMA writes into two receive
 *              slots on the right neighbour, reduced on the host (cc_reduce). A slot is
 *              reused only after the neighbour acknowledged it (credits).
 *   allgather  the all-gather half of the above.
 * Other collectives are reported n/a.
 *
 * Device and port: --ib-dev (else NCCL_IB_HCA) in NCCL_IB_HCA syntax; among matching ACTIVE
 * ports, local rank i takes the (i mod count)-th. GID: --gid-index, else on RoCE the first
 * routable RoCE v2 GID (gpu/ib_select.h); on InfiniBand the LID.
 * GPU memory (GPUDirect RDMA): with --gpu N the buffers are cudaMalloc'd on GPU N and
 * registered through dma-buf (cuMemGetHandleForAddressRange + ibv_reg_dmabuf_mr) or, failing
 * that, plain ibv_reg_mr (works when nvidia-peermem is loaded); only sendrecv runs then (the
 * reductions are on the host). The results header says which registration was used.
 */
#include "backend/backend.h"

#include <arpa/inet.h>
#include <sched.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/log.h"
#include "gpu/cuda_dl.h"
#include "gpu/ib_select.h"
#include "gpu/qp_wire.h"
#include "gpu/verbs_dl.h"

#ifdef CC_HAVE_VERBS

#define WR_MAX (1u << 20)      /* bytes per work request */
#define SQ_DEPTH 256           /* send queue depth per QP */
#define RQ_DEPTH 128           /* receive WRs posted per QP */
#define SIGNAL_EVERY 64        /* signal one send WR in this many */
#define MAX_BUFS 8
#define BUF_ALIGN ((size_t)2 << 20) /* benchmark buffers are rounded up to this */
#define EAGER_MAX (64u << 10) /* sendrecv through the receive slots up to this size */

/* immediate values: kind in the top bits */
#define IMM_DATA 0x10000000u
#define IMM_ACK 0x20000000u
#define IMM_READY 0x30000000u
#define IMM_KIND 0xf0000000u

struct vbuf {
    void *ptr;
    size_t len;
    struct ibv_mr *mr;
    struct cc_mr_info right; /* the same buffer on the right neighbour */
};

struct verbs_ctx {
    const struct cc_verbs *v;
    const struct cc_cuda *cu;   /* GPU mode only */
    const struct cc_rte *rte;
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *scq, *rcq_in, *rcq_out;
    struct ibv_qp *qout[CC_QP_WIRE_MAX], *qin[CC_QP_WIRE_MAX];
    int nqp, rank, size, right, left;
    double timeout_s;
    /* port */
    char dev[64];
    int port, ethernet, gid_index, mtu;
    int tc, sl;                     /* NCCL_IB_TC (RoCE traffic class), NCCL_IB_SL */
    int ib_timeout, ib_retry;       /* NCCL_IB_TIMEOUT (4.096 us x 2^N ACK timeout), and
                                       NCCL_IB_RETRY_CNT; NCCL's defaults 20 and 7 */
    union ibv_gid gid;
    uint16_t lid;
    uint32_t psn;
    /* receive slots for ring steps: 2 * slot bytes, written by the left neighbour */
    char *slots;
    size_t slot;
    struct ibv_mr *slot_mr;
    struct cc_qp_info rinfo, linfo; /* right and left neighbours' records */
    /* flow control and progress (persistent across calls) */
    int credits;                    /* free slots at the right neighbour */
    int readies;                    /* "ready" messages received from the right */
    uint64_t seq_out, seq_in;       /* data transfers sent / consumed (all kinds) */
    uint64_t ring_out, ring_in;     /* ring steps sent / consumed: choose the slot */
    uint64_t arrived[CC_QP_WIRE_MAX]; /* data notifications per in-QP */
    int outstanding[CC_QP_WIRE_MAX];  /* unreaped send WRs per out-QP */
    int unsignaled[CC_QP_WIRE_MAX];
    int ack_outstanding;            /* unreaped sends on in-QP 0 (acks, readies) */
    /* benchmark buffers */
    struct vbuf bufs[MAX_BUFS];
    int nbufs;
    int gpu;                        /* -1 host memory */
    const char *gpu_reg;            /* "dma-buf" or "nvidia-peermem" */
};

/* ---- completions ---------------------------------------------------------------------- */

static cc_status wc_fail(struct verbs_ctx *c, const struct ibv_wc *wc, const char *what)
{
    cc_err("RDMA %s failed on %s:%d (rank %d, peers %d/%d): %s (vendor error 0x%x)", what, c->dev,
           c->port, c->rank, c->left, c->right, c->v->wc_status_str(wc->status), wc->vendor_err);
    return CC_EPEER;
}

/* Post a receive (no buffer: it only catches an immediate) on QP index k of a direction. */
static int post_recv(struct verbs_ctx *c, struct ibv_qp *qp, uint64_t id)
{
    struct ibv_recv_wr wr = {.wr_id = id, .sg_list = NULL, .num_sge = 0}, *bad;
    return ibv_post_recv(qp, &wr, &bad);
}

/* Reap whatever completions are there; returns CC_OK or an error. */
static cc_status progress(struct verbs_ctx *c)
{
    struct ibv_wc wc[32];
    int n;
    while ((n = ibv_poll_cq(c->scq, 32, wc)) > 0)
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                return wc_fail(c, &wc[i], "write");
            int q = (int)(wc[i].wr_id >> 32), covered = (int)(uint32_t)wc[i].wr_id;
            if (q == 0xffff)
                c->ack_outstanding -= covered;
            else
                c->outstanding[q] -= covered;
        }
    if (n < 0)
        goto poll_err;
    while ((n = ibv_poll_cq(c->rcq_in, 32, wc)) > 0)
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                return wc_fail(c, &wc[i], "receive");
            int q = (int)wc[i].wr_id;
            c->arrived[q]++;
            if (post_recv(c, c->qin[q], (uint64_t)q))
                goto post_err;
        }
    if (n < 0)
        goto poll_err;
    while ((n = ibv_poll_cq(c->rcq_out, 32, wc)) > 0)
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS)
                return wc_fail(c, &wc[i], "receive");
            uint32_t imm = ntohl(wc[i].imm_data);
            if ((imm & IMM_KIND) == IMM_ACK)
                c->credits++;
            else if ((imm & IMM_KIND) == IMM_READY)
                c->readies++;
            int q = (int)wc[i].wr_id;
            if (post_recv(c, c->qout[q], (uint64_t)q))
                goto post_err;
        }
    if (n < 0)
        goto poll_err;
    return CC_OK;
poll_err:
    cc_err("ibv_poll_cq failed on %s:%d", c->dev, c->port);
    return CC_EPEER;
post_err:
    cc_err("ibv_post_recv failed on %s:%d", c->dev, c->port);
    return CC_EPEER;
}

/* Spin on progress() until *done(c) or the deadline. */
static cc_status wait_for(struct verbs_ctx *c, int (*done)(struct verbs_ctx *), const char *what)
{
    double t0 = cc_now();
    unsigned spins = 0;
    for (;;) {
        cc_status st = progress(c);
        if (st != CC_OK)
            return st;
        if (done(c))
            return CC_OK;
        /* after a while, let oversubscribed ranks (tests, shared nodes) run */
        if (++spins > 20000 && (spins & 15) == 0)
            sched_yield();
        if ((spins & 0xfff) == 0 && cc_now() - t0 > c->timeout_s) {
            cc_err("rank %d (%s) waited %.0f s for %s from rank %d or %d (%s:%d): peer gone or "
                   "fabric stuck", c->rank, c->rte->host, c->timeout_s, what, c->left, c->right,
                   c->dev, c->port);
            return CC_ETIMEOUT;
        }
    }
}

static int sends_done(struct verbs_ctx *c)
{
    for (int k = 0; k < c->nqp; k++)
        if (c->outstanding[k])
            return 0;
    return c->ack_outstanding == 0;
}
static int have_credit(struct verbs_ctx *c) { return c->credits > 0; }
static int ack_room(struct verbs_ctx *c) { return c->ack_outstanding < SQ_DEPTH / 2; }
static int have_ready(struct verbs_ctx *c) { return c->readies > 0; }
static int step_arrived(struct verbs_ctx *c)
{
    for (int k = 0; k < c->nqp; k++)
        if (c->arrived[k] <= c->seq_in)
            return 0;
    return 1;
}

/* ---- sending ---------------------------------------------------------------------------- */

static int sq_room(struct verbs_ctx *c)
{
    for (int k = 0; k < c->nqp; k++)
        if (c->outstanding[k] + c->unsignaled[k] >= SQ_DEPTH - 1)
            return 0;
    return 1;
}

/* One write on out-QP q; with_imm: last of its stripe (signaled, carries imm). */
static cc_status post_write(struct verbs_ctx *c, int q, const char *src, uint32_t lkey,
                            uint64_t raddr, uint32_t rkey, uint32_t len, int with_imm,
                            uint32_t imm)
{
    cc_status st;
    if (c->outstanding[q] + c->unsignaled[q] >= SQ_DEPTH - 1 &&
        (st = wait_for(c, sq_room, "send-queue room")) != CC_OK)
        return st;
    int signal = with_imm || c->unsignaled[q] + 1 >= SIGNAL_EVERY;
    struct ibv_sge sge = {.addr = (uintptr_t)src, .length = len, .lkey = lkey};
    struct ibv_send_wr wr = {
        .wr_id = (uint64_t)q << 32 | (uint32_t)(c->unsignaled[q] + 1),
        .sg_list = len ? &sge : NULL,
        .num_sge = len ? 1 : 0,
        .opcode = with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
        .send_flags = signal ? IBV_SEND_SIGNALED : 0,
        .imm_data = htonl(imm),
        .wr.rdma = {.remote_addr = raddr, .rkey = rkey},
    }, *bad;
    if (ibv_post_send(c->qout[q], &wr, &bad)) {
        cc_err("ibv_post_send of %u bytes to rank %d failed on %s:%d", len, c->right, c->dev,
               c->port);
        return CC_EPEER;
    }
    if (signal) {
        c->outstanding[q] += c->unsignaled[q] + 1;
        c->unsignaled[q] = 0;
    } else {
        c->unsignaled[q]++;
    }
    return CC_OK;
}

/* Write `bytes` from src to the right neighbour at raddr, striped over the out-QPs; each
 * stripe ends with an immediate so the receiver counts one arrival per QP. */
static cc_status xfer(struct verbs_ctx *c, const void *src, uint32_t lkey, uint64_t raddr,
                      uint32_t rkey, size_t bytes, uint32_t imm)
{
    size_t per = ((bytes + (size_t)c->nqp - 1) / (size_t)c->nqp + 63) & ~(size_t)63, off = 0;
    cc_status st;
    for (int q = 0; q < c->nqp; q++) {
        size_t len = bytes - off < per ? bytes - off : per, done = 0;
        do {
            uint32_t w = (uint32_t)(len - done < WR_MAX ? len - done : WR_MAX);
            int last = done + w == len;
            if ((st = post_write(c, q, (const char *)src + off + done, lkey, raddr + off + done,
                                 rkey, w, last, imm)) != CC_OK)
                return st;
            done += w;
        } while (done < len);
        off += len;
    }
    return CC_OK;
}

/* Zero-byte message to the left neighbour on in-QP 0 (an ack or a ready). */
static cc_status signal_left(struct verbs_ctx *c, uint32_t imm)
{
    struct ibv_send_wr wr = {
        .wr_id = (uint64_t)0xffff << 32 | 1, .num_sge = 0,
        .opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
        .imm_data = htonl(imm),
        .wr.rdma = {.remote_addr = c->linfo.addr, .rkey = c->linfo.rkey},
    }, *bad;
    cc_status st;
    if (!ack_room(c) && (st = wait_for(c, ack_room, "completions of control messages")) != CC_OK)
        return st;
    if (ibv_post_send(c->qin[0], &wr, &bad)) {
        cc_err("ibv_post_send of a control message to rank %d failed on %s:%d", c->left, c->dev,
               c->port);
        return CC_EPEER;
    }
    c->ack_outstanding++;
    return CC_OK;
}

static struct vbuf *find_buf(struct verbs_ctx *c, const void *p, size_t len)
{
    for (int i = 0; i < c->nbufs; i++) {
        const char *b = c->bufs[i].ptr;
        if ((const char *)p >= b && (const char *)p + len <= b + c->bufs[i].len)
            return &c->bufs[i];
    }
    return NULL;
}

/* ---- collectives ---------------------------------------------------------------------- */

/* One ring step: send `bytes` at src to the right neighbour's next slot, wait for the left
 * neighbour's data in my next slot; returns that slot (to be consumed, then acked). */
static cc_status ring_step(struct verbs_ctx *c, const void *src, uint32_t lkey, size_t bytes,
                           char **got)
{
    cc_status st;
    if ((st = wait_for(c, have_credit, "a free receive slot")) != CC_OK)
        return st;
    c->credits--;
    uint64_t raddr = c->rinfo.addr + (c->ring_out % 2) * c->slot;
    if ((st = xfer(c, src, lkey, raddr, c->rinfo.rkey, bytes,
                   IMM_DATA | (uint32_t)(c->seq_out & 0xffffff))) != CC_OK)
        return st;
    c->seq_out++;
    c->ring_out++;
    if ((st = wait_for(c, step_arrived, "ring data")) != CC_OK)
        return st;
    *got = c->slots + (c->ring_in % 2) * c->slot;
    return CC_OK;
}

static cc_status consumed(struct verbs_ctx *c)
{
    c->seq_in++;
    c->ring_in++;
    return signal_left(c, IMM_ACK);
}

/* Ring all-gather phase over `base` holding n chunks; chunk i starts at off(i) bytes.
 * first: the chunk this rank sends first. */
static cc_status ring_allgather(struct verbs_ctx *c, char *base, uint32_t lkey,
                                const size_t *off, int first)
{
    int n = c->size;
    cc_status st;
    for (int s = 0; s < n - 1; s++) {
        int sc = ((first - s) % n + n) % n, rc = ((first - s - 1) % n + n) % n;
        char *got;
        if ((st = ring_step(c, base + off[sc], lkey, off[sc + 1] - off[sc], &got)) != CC_OK)
            return st;
        memcpy(base + off[rc], got, off[rc + 1] - off[rc]);
        if ((st = consumed(c)) != CC_OK)
            return st;
    }
    return CC_OK;
}

static cc_status run_ring(struct verbs_ctx *c, const struct cc_coll_args *a)
{
    int n = c->size, r = c->rank;
    size_t es = cc_dtype_size(a->dtype);
    size_t total = (a->coll == CC_ALLGATHER ? a->sendcount * (size_t)n : a->recvcount);
    struct vbuf *rb = find_buf(c, a->recvbuf, total * es);
    size_t *off = malloc(((size_t)n + 1) * sizeof *off);
    cc_status st = CC_OK;
    if (!rb || !off) {
        free(off);
        cc_err("verbs: receive buffer %p was not allocated by this backend", a->recvbuf);
        return rb ? CC_ENOMEM : CC_EINVAL;
    }
    for (int i = 0; i <= n; i++)
        off[i] = (a->coll == CC_ALLGATHER ? a->sendcount * (size_t)i
                                          : total * (size_t)i / (size_t)n) * es;
    char *base = a->recvbuf;
    uint32_t lkey = rb->mr->lkey;
    if (a->coll == CC_ALLGATHER) {
        if (base + off[r] != (const char *)a->sendbuf)
            memcpy(base + off[r], a->sendbuf, off[r + 1] - off[r]);
        st = ring_allgather(c, base, lkey, off, r);
    } else {
        if (!a->inplace)
            memcpy(base, a->sendbuf, total * es);
        for (int s = 0; s < n - 1 && st == CC_OK; s++) {
            int sc = ((r - s) % n + n) % n, rc = ((r - s - 1) % n + n) % n;
            char *got;
            if ((st = ring_step(c, base + off[sc], lkey, off[sc + 1] - off[sc], &got)) != CC_OK)
                break;
            cc_reduce(a->dtype, a->op, base + off[rc], got, (off[rc + 1] - off[rc]) / es);
            st = consumed(c);
        }
        /* the chunks sent above are rewritten below: their writes must have completed */
        if (st == CC_OK)
            st = wait_for(c, sends_done, "write completions");
        if (st == CC_OK)
            st = ring_allgather(c, base, lkey, off, (r + 1) % n);
        if (st == CC_OK && a->op == CC_AVG)
            cc_scale_avg(a->dtype, base, total, n);
    }
    if (st == CC_OK)
        st = wait_for(c, sends_done, "write completions");
    free(off);
    return st;
}

static cc_status run_sendrecv(struct verbs_ctx *c, const struct cc_coll_args *a)
{
    size_t bytes = a->sendcount * cc_dtype_size(a->dtype);
    struct vbuf *sb = find_buf(c, a->sendbuf, bytes), *rb = find_buf(c, a->recvbuf, bytes);
    cc_status st;
    if (!sb || !rb) {
        cc_err("verbs: sendrecv buffers were not allocated by this backend");
        return CC_EINVAL;
    }
    /* eager: small messages land in a receive slot and are copied out (no ready needed) */
    if (c->gpu < 0 && bytes <= EAGER_MAX && bytes <= c->slot) {
        char *got;
        if ((st = ring_step(c, a->sendbuf, sb->mr->lkey, bytes, &got)) != CC_OK)
            return st;
        memcpy(a->recvbuf, got, bytes);
        if ((st = consumed(c)) != CC_OK)
            return st;
        return wait_for(c, sends_done, "write completions");
    }
    /* my receive buffer may be written from now on; wait until the right one's may */
    if ((st = signal_left(c, IMM_READY)) != CC_OK ||
        (st = wait_for(c, have_ready, "a ready message")) != CC_OK)
        return st;
    c->readies--;
    /* the harness lays buffers out alike on every rank: same buffer, same offset */
    uint64_t raddr = rb->right.addr + (uint64_t)((const char *)a->recvbuf - (const char *)rb->ptr);
    if ((st = xfer(c, a->sendbuf, sb->mr->lkey, raddr, rb->right.rkey, bytes,
                   IMM_DATA | (uint32_t)(c->seq_out & 0xffffff))) != CC_OK)
        return st;
    c->seq_out++;
    if ((st = wait_for(c, step_arrived, "sendrecv data")) != CC_OK)
        return st;
    c->seq_in++;
    return wait_for(c, sends_done, "write completions");
}

/* ---- set-up ------------------------------------------------------------------------------ */

/* Has this process CAP_IPC_LOCK (no memlock limit applies)? */
static int cap_ipc_lock(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long cap = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "CapEff: %llx", &cap) == 1)
            break;
    fclose(f);
    return (cap >> 14) & 1;
}

static cc_status check_memlock(size_t need, char *err, size_t errlen)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || cap_ipc_lock())
        return CC_OK;
    if ((unsigned long long)rl.rlim_cur < need) {
        cc_errbuf(err, errlen, "memlock limit %llu KiB is too low for RDMA registration of "
                  "%zu MiB: raise ulimit -l (unlimited is usual on RDMA hosts)",
                  (unsigned long long)rl.rlim_cur / 1024, need >> 20);
        return CC_ENODEV;
    }
    return CC_OK;
}

static const char *port_state(enum ibv_port_state s)
{
    switch (s) {
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    default: return "not ready";
    }
}

/* Port attributes as verbs.h's inline ibv_query_port gets them: through the provider's
 * extended operation when it has one (the full structure), else the exported compatible
 * function (which fills the older, shorter layout; the rest stays zero). */
static int query_port(const struct cc_verbs *v, struct ibv_context *ctx, int port,
                      struct ibv_port_attr *pa)
{
    memset(pa, 0, sizeof *pa);
    struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);
    if (vctx)
        return vctx->query_port(ctx, (uint8_t)port, pa, sizeof *pa);
    return v->query_port(ctx, (uint8_t)port, (struct _compat_ibv_port_attr *)pa);
}

/* Open the device/port this rank uses. */
/* An NCCL_IB_* variable that NCCL would honour, as an integer in [lo, hi]; unset or empty
 * leaves *out alone. */
static cc_status env_int(const char *name, int lo, int hi, int *out, char *err, size_t errlen)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return CC_OK;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || end == v || x < lo || x > hi) {
        cc_errbuf(err, errlen, "%s='%s' is not an integer from %d to %d", name, v, lo, hi);
        return CC_EUSAGE;
    }
    *out = (int)x;
    return CC_OK;
}

static cc_status open_port(struct verbs_ctx *c, const struct cc_backend_conf *conf, char *err,
                           size_t errlen)
{
    const struct cc_verbs *v = c->v;
    const char *spec = conf->ib_dev ? conf->ib_dev : getenv("NCCL_IB_HCA");
    struct cc_hca_filter f;
    cc_status st = cc_hca_parse(spec, &f, err, errlen);
    if (st != CC_OK)
        return st;
    int ndev = 0;
    struct ibv_device **list = v->get_device_list(&ndev);
    if (!list || ndev == 0) {
        if (list)
            v->free_device_list(list);
        cc_errbuf(err, errlen, "no RDMA device on %s (ibv_get_device_list found none: no "
                  "InfiniBand/RoCE adapter, or its driver such as mlx5_ib is not loaded)",
                  c->rte->host);
        return CC_ENODEV;
    }
    int env_gid = -1; /* -1: choose (NCCL's own default since 2.21) */
    if (conf->gid_index < 0 &&
        (st = env_int("NCCL_IB_GID_INDEX", -1, 255, &env_gid, err, errlen)) != CC_OK) {
        v->free_device_list(list);
        return st;
    }
    int gid_given = conf->gid_index >= 0 || env_gid >= 0;
    /* candidate active ports, in device then port order */
    struct cand { int d, port; } cands[64];
    struct cc_port_cand kind[64];
    int nc = 0, matched = 0;
    char down[160] = "", names[256] = "", noroute[320] = "";
    for (int d = 0; d < ndev; d++) {
        const char *name = v->get_device_name(list[d]);
        size_t nl = strlen(names);
        snprintf(names + nl, sizeof names - nl, "%s%s", nl ? ", " : "", name);
        struct ibv_context *ctx = v->open_device(list[d]);
        struct ibv_device_attr da;
        if (!ctx)
            continue;
        if (v->query_device(ctx, &da) == 0)
            for (int p = 1; p <= da.phys_port_cnt; p++) {
                if (!cc_hca_match(&f, name, p))
                    continue;
                matched++;
                struct ibv_port_attr pa;
                if (query_port(v, ctx, p, &pa) != 0)
                    continue;
                if (pa.state != IBV_PORT_ACTIVE) {
                    if (!down[0])
                        snprintf(down, sizeof down, "port %s:%d is %s", name, p,
                                 port_state(pa.state));
                    continue;
                }
                if (nc == 64)
                    continue;
                int eth = pa.link_layer == IBV_LINK_LAYER_ETHERNET, usable = 1;
                if (eth && !gid_given) { /* RoCE: a routable GID, or no traffic between hosts */
                    struct cc_gid_entry *t = NULL;
                    size_t ng = 0;
                    char why[256];
                    usable = cc_gid_read_sysfs("/sys", name, p, &t, &ng, why, sizeof why) ==
                                 CC_OK &&
                             cc_gid_choose(t, ng, 1, why, sizeof why) >= 0;
                    free(t);
                    if (!usable && !noroute[0])
                        snprintf(noroute, sizeof noroute, "port %s:%d: %s", name, p, why);
                }
                kind[nc] = (struct cc_port_cand){eth, usable};
                cands[nc++] = (struct cand){d, p};
            }
        v->close_device(ctx);
    }
    if (!nc) {
        if (!matched)
            cc_errbuf(err, errlen, "no RDMA device matches '%s' on %s (devices: %s)",
                      spec ? spec : "", c->rte->host, names);
        else
            cc_errbuf(err, errlen, "%s on %s (no ACTIVE port among those selected; cable, "
                      "subnet manager or link partner?)", down, c->rte->host);
        v->free_device_list(list);
        return CC_ENODEV;
    }
    int keep[64], nk = cc_port_keep(kind, nc, keep);
    if (!nk) {
        cc_errbuf(err, errlen, "no usable RDMA port on %s: %s", c->rte->host, noroute);
        v->free_device_list(list);
        return CC_ENODEV;
    }
    struct cand pick = cands[keep[c->rte->local_rank % nk]];
    snprintf(c->dev, sizeof c->dev, "%s", v->get_device_name(list[pick.d]));
    c->port = pick.port;
    c->ctx = v->open_device(list[pick.d]);
    v->free_device_list(list);
    if (!c->ctx) {
        cc_errbuf(err, errlen, "cannot open RDMA device %s", c->dev);
        return CC_ENODEV;
    }
    struct ibv_port_attr pa;
    if (query_port(v, c->ctx, c->port, &pa) != 0) {
        cc_errbuf(err, errlen, "cannot query port %s:%d", c->dev, c->port);
        return CC_ENODEV;
    }
    c->ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
    c->lid = pa.lid;
    c->mtu = pa.active_mtu;
    if (gid_given) {
        c->gid_index = conf->gid_index >= 0 ? conf->gid_index : env_gid;
    } else if (c->ethernet || pa.lid == 0) {
        struct cc_gid_entry *t = NULL;
        size_t n = 0;
        char why[256];
        if ((st = cc_gid_read_sysfs("/sys", c->dev, c->port, &t, &n, err, errlen)) != CC_OK)
            return st;
        c->gid_index = cc_gid_choose(t, n, c->ethernet, why, sizeof why);
        free(t);
        if (c->gid_index < 0) {
            cc_errbuf(err, errlen, "port %s:%d: %s", c->dev, c->port, why);
            return CC_ENODEV;
        }
    } else {
        c->gid_index = 0;
    }
    static const uint8_t zero[16];
    if (v->query_gid(c->ctx, (uint8_t)c->port, c->gid_index, &c->gid) != 0 ||
        ((c->ethernet || pa.lid == 0) && memcmp(c->gid.raw, zero, 16) == 0)) {
        cc_errbuf(err, errlen, "cannot read GID %d of port %s:%d, or it is empty (see "
                  "--gid-index)", c->gid_index, c->dev, c->port);
        return CC_ENODEV;
    }
    return CC_OK;
}

static struct ibv_qp *make_qp(struct verbs_ctx *c, struct ibv_cq *rcq)
{
    struct ibv_qp_init_attr ia = {
        .send_cq = c->scq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
        .cap = {.max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH, .max_send_sge = 1,
                .max_recv_sge = 1},
    };
    struct ibv_qp *qp = c->v->create_qp(c->pd, &ia);
    if (!qp)
        return NULL;
    struct ibv_qp_attr at = {.qp_state = IBV_QPS_INIT, .pkey_index = 0,
                             .port_num = (uint8_t)c->port,
                             .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE};
    if (c->v->modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                     IBV_QP_ACCESS_FLAGS)) {
        c->v->destroy_qp(qp);
        return NULL;
    }
    return qp;
}

static int connect_qp(struct verbs_ctx *c, struct ibv_qp *qp, const struct cc_qp_info *peer,
                      uint32_t peer_qpn)
{
    struct ibv_qp_attr at = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = (enum ibv_mtu)(c->mtu < peer->mtu ? c->mtu : peer->mtu),
        .dest_qp_num = peer_qpn,
        .rq_psn = peer->psn,
        .max_dest_rd_atomic = 1,
        .min_rnr_timer = 12,
        .ah_attr = {.dlid = peer->lid, .sl = (uint8_t)c->sl, .src_path_bits = 0,
                    .port_num = (uint8_t)c->port},
    };
    if (c->ethernet || peer->lid == 0) {
        at.ah_attr.is_global = 1;
        memcpy(at.ah_attr.grh.dgid.raw, peer->gid, 16);
        at.ah_attr.grh.sgid_index = (uint8_t)c->gid_index;
        at.ah_attr.grh.hop_limit = 64;
        at.ah_attr.grh.traffic_class = (uint8_t)c->tc; /* RoCE: the lossless class's DSCP */
    }
    if (c->v->modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                     IBV_QP_MIN_RNR_TIMER))
        return -1;
    struct ibv_qp_attr rts = {.qp_state = IBV_QPS_RTS, .timeout = (uint8_t)c->ib_timeout,
                              .retry_cnt = (uint8_t)c->ib_retry,
                              .rnr_retry = 7, .sq_psn = c->psn, .max_rd_atomic = 1};
    return c->v->modify_qp(qp, &rts, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                         IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                         IBV_QP_MAX_QP_RD_ATOMIC);
}

static void release(struct verbs_ctx *c)
{
    const struct cc_verbs *v = c->v;
    if (v) {
        for (int k = 0; k < CC_QP_WIRE_MAX; k++) {
            if (c->qout[k])
                v->destroy_qp(c->qout[k]);
            if (c->qin[k])
                v->destroy_qp(c->qin[k]);
        }
        if (c->slot_mr)
            v->dereg_mr(c->slot_mr);
        struct ibv_cq *cqs[] = {c->scq, c->rcq_in, c->rcq_out};
        for (int i = 0; i < 3; i++)
            if (cqs[i])
                v->destroy_cq(cqs[i]);
        if (c->pd)
            v->dealloc_pd(c->pd);
        if (c->ctx)
            v->close_device(c->ctx);
    }
    free(c->slots);
    free(c);
}

/* Everything that needs no peer. */
static cc_status local_setup(struct verbs_ctx *c, const struct cc_backend_conf *conf, char *err,
                             size_t errlen)
{
    cc_status st;
    if (!(c->v = cc_verbs_load(err, errlen)))
        return CC_ENODEV;
    if ((st = open_port(c, conf, err, errlen)) != CC_OK)
        return st;
    c->ib_timeout = 20, c->ib_retry = 7;
    if ((st = env_int("NCCL_IB_TC", 0, 255, &c->tc, err, errlen)) != CC_OK ||
        (st = env_int("NCCL_IB_SL", 0, 15, &c->sl, err, errlen)) != CC_OK ||
        (st = env_int("NCCL_IB_TIMEOUT", 1, 31, &c->ib_timeout, err, errlen)) != CC_OK ||
        (st = env_int("NCCL_IB_RETRY_CNT", 0, 7, &c->ib_retry, err, errlen)) != CC_OK)
        return st;
    /* a ring chunk is at most ceil(count / n) elements: max_bytes / n plus one element; with
     * --gpu only sendrecv runs, which writes straight into the peer's buffer (no slots) */
    c->slot = c->gpu >= 0 ? 4096
                          : ((conf->max_bytes + (size_t)c->size - 1) / (size_t)c->size + 64 +
                             4095) & ~(size_t)4095;
    /* pinned host memory: two benchmark buffers (rounded as verbs_alloc rounds them; GPU
     * memory is not charged to the limit), the receive slots, a margin */
    size_t bufs = c->gpu >= 0 ? 0 : 2 * ((conf->max_bytes + BUF_ALIGN - 1) & ~(BUF_ALIGN - 1));
    if ((st = check_memlock(bufs + 2 * c->slot + (1 << 20), err, errlen)) != CC_OK)
        return st;
    if (c->gpu >= 0) {
        if (!(c->cu = cc_cuda_load(err, errlen)))
            return CC_ENODEV;
#ifdef CC_HAVE_CUDA
        if (c->gpu >= c->cu->ndev || c->cu->cudaSetDevice(c->gpu) != cudaSuccess) {
            cc_errbuf(err, errlen, "--gpu %d: no such GPU on %s", c->gpu, c->rte->host);
            return CC_ENODEV;
        }
#endif
    }
    /* completion queues deep enough for every WR that can complete unreaped */
    int scqe = 2 * SQ_DEPTH * c->nqp + 64, rcqe = RQ_DEPTH * c->nqp + 64;
    if (!(c->pd = c->v->alloc_pd(c->ctx)) ||
        !(c->scq = c->v->create_cq(c->ctx, scqe, NULL, NULL, 0)) ||
        !(c->rcq_in = c->v->create_cq(c->ctx, rcqe, NULL, NULL, 0)) ||
        !(c->rcq_out = c->v->create_cq(c->ctx, rcqe, NULL, NULL, 0))) {
        cc_errbuf(err, errlen, "cannot allocate a protection domain or completion queues on %s",
                  c->dev);
        return CC_ENODEV;
    }
    if (posix_memalign((void **)&c->slots, 4096, 2 * c->slot) != 0) {
        c->slots = NULL;
        return CC_ENOMEM;
    }
    memset(c->slots, 0, 2 * c->slot);
    c->slot_mr = c->v->reg_mr(c->pd, c->slots, 2 * c->slot,
                              IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!c->slot_mr) {
        cc_errbuf(err, errlen, "ibv_reg_mr of %zu bytes on %s failed (memlock limit?)",
                  2 * c->slot, c->dev);
        return CC_ENODEV;
    }
    for (int k = 0; k < c->nqp; k++)
        if (!(c->qout[k] = make_qp(c, c->rcq_out)) || !(c->qin[k] = make_qp(c, c->rcq_in))) {
            cc_errbuf(err, errlen, "cannot create RC queue pair %d on %s:%d", k, c->dev, c->port);
            return CC_ENODEV;
        }
    c->psn = (uint32_t)(conf->seed * 2654435761u + (uint64_t)c->rank * 40503u) & 0xffffff;
    return CC_OK;
}

static cc_status verbs_init(const struct cc_backend_conf *conf, const struct cc_rte *rte,
                            void **ctx, char *err, size_t errlen)
{
    struct verbs_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return CC_ENOMEM;
    c->rte = rte;
    c->rank = rte->rank;
    c->size = rte->size;
    c->right = (rte->rank + 1) % rte->size;
    c->left = (rte->rank - 1 + rte->size) % rte->size;
    c->nqp = conf->ib_qps < 1 ? 1 : conf->ib_qps > CC_QP_WIRE_MAX ? CC_QP_WIRE_MAX : conf->ib_qps;
    c->timeout_s = conf->timeout_s > 0 ? conf->timeout_s : 60;
    c->gpu = conf->gpu;
    c->credits = 2;
    cc_status st = local_setup(c, conf, err, errlen);

    long long worst = st;
    cc_status cst = cc_rte_allreduce_ll(rte, &worst, 1, CC_RTE_MAX);
    if (cst != CC_OK || worst != CC_OK) {
        if (st == CC_OK)
            cc_errbuf(err, errlen, CC_BACKEND_PEER_FAILED "could not set up its RDMA port");
        release(c);
        return st != CC_OK ? st : cst != CC_OK ? cst : (cc_status)worst;
    }

    /* exchange the records */
    struct cc_qp_info me = {.nqp = (uint16_t)c->nqp, .lid = c->lid, .port = (uint8_t)c->port,
                            .mtu = (uint8_t)c->mtu, .psn = c->psn, .rkey = c->slot_mr->rkey,
                            .link = (uint8_t)(c->ethernet ? CC_QP_LINK_ETH : CC_QP_LINK_IB),
                            .addr = (uintptr_t)c->slots, .len = 2 * c->slot};
    memcpy(me.gid, c->gid.raw, 16);
    for (int k = 0; k < c->nqp; k++) {
        me.qpn_out[k] = c->qout[k]->qp_num;
        me.qpn_in[k] = c->qin[k]->qp_num;
    }
    uint8_t *all = malloc((size_t)rte->size * CC_QP_WIRE_BYTES);
    uint8_t mine[CC_QP_WIRE_BYTES];
    if (!all || cc_qp_encode(&me, mine) != CC_OK) {
        free(all);
        release(c);
        return CC_ENOMEM;
    }
    st = cc_rte_allgather(rte, mine, all, CC_QP_WIRE_BYTES);
    if (st == CC_OK)
        st = cc_qp_decode(all + (size_t)c->right * CC_QP_WIRE_BYTES, CC_QP_WIRE_BYTES, &c->rinfo,
                          err, errlen);
    if (st == CC_OK)
        st = cc_qp_decode(all + (size_t)c->left * CC_QP_WIRE_BYTES, CC_QP_WIRE_BYTES, &c->linfo,
                          err, errlen);
    free(all);
    if (st == CC_OK && (c->rinfo.nqp != c->nqp || c->linfo.nqp != c->nqp)) {
        cc_errbuf(err, errlen, "neighbours use a different number of QPs (--ib-qps)");
        st = CC_EMISMATCH;
    }
    /* InfiniBand and RoCE ports do not reach each other: said here rather than as a QP that
     * will not connect or a first write that times out */
    int mylink = c->ethernet ? CC_QP_LINK_ETH : CC_QP_LINK_IB;
    for (int s = 0; s < 2 && st == CC_OK; s++) {
        const struct cc_qp_info *nb = s ? &c->linfo : &c->rinfo;
        if (nb->link != mylink) {
            cc_errbuf(err, errlen, "rank %d's RDMA port is %s, this rank's %s:%d is %s: the "
                      "ranks need ports on one fabric (--ib-dev or NCCL_IB_HCA)",
                      s ? c->left : c->right, nb->link == CC_QP_LINK_ETH ? "Ethernet (RoCE)"
                                                                         : "InfiniBand",
                      c->dev, c->port, c->ethernet ? "Ethernet (RoCE)" : "InfiniBand");
            st = CC_EMISMATCH;
        }
    }
    for (int k = 0; k < c->nqp && st == CC_OK; k++) {
        if (connect_qp(c, c->qout[k], &c->rinfo, c->rinfo.qpn_in[k]) ||
            connect_qp(c, c->qin[k], &c->linfo, c->linfo.qpn_out[k])) {
            cc_errbuf(err, errlen, "cannot connect queue pair %d of %s:%d to ranks %d/%d "
                      "(GID index %d: try another --gid-index)", k, c->dev, c->port, c->left,
                      c->right, c->gid_index);
            st = CC_EPEER;
        }
        for (int i = 0; i < RQ_DEPTH && st == CC_OK; i++)
            if (post_recv(c, c->qout[k], (uint64_t)k) || post_recv(c, c->qin[k], (uint64_t)k))
                st = CC_EPEER;
    }
    worst = st;
    cst = cc_rte_allreduce_ll(rte, &worst, 1, CC_RTE_MAX); /* also: all are RTR before any send */
    if (cst != CC_OK || worst != CC_OK) {
        if (st == CC_OK)
            cc_errbuf(err, errlen, CC_BACKEND_PEER_FAILED "could not connect its queue pairs");
        release(c);
        return st != CC_OK ? st : cst != CC_OK ? cst : (cc_status)worst;
    }
    *ctx = c;
    return CC_OK;
}

static void verbs_free(void *ctx, void *ptr);

static void verbs_fini(void *ctx)
{
    struct verbs_ctx *c = ctx;
    if (c->nbufs)
        cc_warn("verbs: %d buffers still registered at shutdown", c->nbufs);
    while (c->nbufs) /* an MR left registered keeps the protection domain busy */
        verbs_free(c, c->bufs[c->nbufs - 1].ptr);
    release(c);
}

static int verbs_supports(void *ctx, enum cc_coll_id coll, enum cc_dtype t, enum cc_op op,
                          int inplace, const char **why)
{
    struct verbs_ctx *c = ctx;
    (void)t, (void)op, (void)inplace;
    if (coll == CC_SENDRECV)
        return 1;
    if (coll != CC_ALLREDUCE && coll != CC_ALLGATHER) {
        *why = "verbs backend: allreduce, allgather and sendrecv only";
        return 0;
    }
    if (c->gpu >= 0) {
        *why = "ring with host reduction needs host memory (run without --gpu)";
        return 0;
    }
    return 1;
}

/* Register `len` bytes at p: host memory, or GPU memory through dma-buf or nvidia-peermem. */
static struct ibv_mr *reg(struct verbs_ctx *c, void *p, size_t len)
{
    int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
#ifdef CC_HAVE_CUDA
    if (c->gpu >= 0 && c->v->reg_dmabuf_mr && c->cu->cuMemGetHandleForAddressRange) {
        int fd = -1;
        if (c->cu->cuMemGetHandleForAddressRange(&fd, (CUdeviceptr)(uintptr_t)p, len,
                                                 CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0) ==
            CUDA_SUCCESS) {
            struct ibv_mr *mr = c->v->reg_dmabuf_mr(c->pd, 0, len, (uintptr_t)p, fd, acc);
            close(fd);
            if (mr) {
                c->gpu_reg = "dma-buf";
                return mr;
            }
        }
    }
#endif
    struct ibv_mr *mr = c->v->reg_mr(c->pd, p, len, acc);
    if (mr && c->gpu >= 0)
        c->gpu_reg = "nvidia-peermem";
    return mr;
}

static cc_status verbs_alloc(void *ctx, size_t bytes, void **ptr)
{
    struct verbs_ctx *c = ctx;
    size_t len = ((bytes ? bytes : 1) + BUF_ALIGN - 1) & ~(BUF_ALIGN - 1);
    void *p = NULL;
    struct ibv_mr *mr = NULL;
    cc_status st = CC_OK;
#ifdef CC_HAVE_CUDA
    if (c->nbufs == MAX_BUFS) {
        cc_err("verbs: more than %d buffers", MAX_BUFS);
    } else if (c->gpu >= 0) {
        if (c->cu->cudaMalloc(&p, len) != cudaSuccess) {
            p = NULL;
        } else if (c->cu->cudaMemset(p, 0, len) != cudaSuccess ||
                   c->cu->cudaDeviceSynchronize() != cudaSuccess) {
            c->cu->cudaFree(p); /* the NIC must never read a buffer still being cleared */
            p = NULL;
        }
    } else
#else
    if (c->nbufs == MAX_BUFS)
        cc_err("verbs: more than %d buffers", MAX_BUFS);
    else
#endif
        if (posix_memalign(&p, 4096, len) != 0)
            p = NULL;
        else
            memset(p, 0, len);
    if (!p)
        st = CC_ENOMEM;
    else if (!(mr = reg(c, p, len))) {
        cc_err("cannot register %zu bytes of %s memory on %s for RDMA%s", len,
               c->gpu >= 0 ? "GPU" : "host", c->dev,
               c->gpu >= 0 ? " (neither dma-buf nor nvidia-peermem is available)"
                           : " (memlock limit?)");
        st = CC_ENODEV;
    }
    /* every rank learns the right neighbour's buffer (all take part, even after a failure) */
    struct cc_mr_info me = {.rkey = mr ? mr->rkey : 0, .addr = (uintptr_t)p, .len = mr ? len : 0};
    uint8_t rec[CC_MR_WIRE_BYTES], *all = malloc((size_t)c->size * CC_MR_WIRE_BYTES);
    cc_mr_encode(&me, rec);
    cc_status xs = all ? cc_rte_allgather(c->rte, rec, all, CC_MR_WIRE_BYTES) : CC_ENOMEM;
    struct cc_mr_info right = {0};
    char err[256];
    if (xs == CC_OK)
        for (int i = 0; i < c->size && xs == CC_OK; i++) {
            struct cc_mr_info m;
            xs = cc_mr_decode(all + (size_t)i * CC_MR_WIRE_BYTES, CC_MR_WIRE_BYTES, &m, err,
                              sizeof err);
            if (xs == CC_OK && m.len == 0)
                xs = CC_EPEER;
            if (i == c->right)
                right = m;
        }
    free(all);
    if (st == CC_OK && xs != CC_OK) {
        cc_err("verbs: rank %d's neighbours could not register their buffers", c->rank);
        st = xs;
    }
    if (st != CC_OK) {
        if (mr)
            c->v->dereg_mr(mr);
#ifdef CC_HAVE_CUDA
        if (p && c->gpu >= 0)
            c->cu->cudaFree(p);
        else
#endif
            free(p);
        return st;
    }
    c->bufs[c->nbufs++] = (struct vbuf){.ptr = p, .len = len, .mr = mr, .right = right};
    *ptr = p;
    return CC_OK;
}

static void verbs_free(void *ctx, void *ptr)
{
    struct verbs_ctx *c = ctx;
    for (int i = 0; i < c->nbufs; i++)
        if (c->bufs[i].ptr == ptr) {
            c->v->dereg_mr(c->bufs[i].mr);
#ifdef CC_HAVE_CUDA
            if (c->gpu >= 0)
                c->cu->cudaFree(ptr);
            else
#endif
                free(ptr);
            c->bufs[i] = c->bufs[--c->nbufs];
            return;
        }
}

static cc_status verbs_copy(struct verbs_ctx *c, void *dst, const void *src, size_t bytes,
                           int out)
{
#ifdef CC_HAVE_CUDA
    if (c->gpu >= 0) {
        /* what the NIC wrote into GPU memory is visible to the GPU's own reads only after a
         * flush (CUDA 11.3 on; older drivers order it themselves or not at all) */
        if (out && c->cu->cuFlushGPUDirectRDMAWrites)
            c->cu->cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                              CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER);
        /* a copy from pageable host memory may return before its DMA has landed: the NIC
         * reads the buffer next, so wait for it */
        cudaError_t e = c->cu->cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
        if (e == cudaSuccess)
            e = c->cu->cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            cc_err("cudaMemcpy of %zu bytes on GPU %d failed: %s", bytes, c->gpu,
                   c->cu->cudaGetErrorString(e));
            return CC_EBACKEND;
        }
        return CC_OK;
    }
#endif
    (void)c, (void)out;
    memmove(dst, src, bytes);
    return CC_OK;
}

static cc_status verbs_copy_in(void *ctx, void *dst, const void *src, size_t bytes)
{
    return verbs_copy(ctx, dst, src, bytes, 0);
}

static cc_status verbs_copy_out(void *ctx, void *dst, const void *src, size_t bytes)
{
    return verbs_copy(ctx, dst, src, bytes, 1);
}

static cc_status verbs_run(void *ctx, const struct cc_coll_args *a)
{
    struct verbs_ctx *c = ctx;
    switch (a->coll) {
    case CC_SENDRECV:
        return run_sendrecv(c, a);
    case CC_ALLREDUCE:
    case CC_ALLGATHER:
        if (c->gpu < 0)
            return run_ring(c, a);
        /* fall through */
    default:
        return CC_ENOTSUP;
    }
}

static cc_status verbs_sync(void *ctx)
{
    (void)ctx;
    return CC_OK; /* run() returns when its data has landed and its writes completed */
}

static void verbs_describe(void *ctx, json_t *o)
{
    struct verbs_ctx *c = ctx;
    char gid[48];
    static const int mtus[] = {0, 256, 512, 1024, 2048, 4096};
    cc_gid_format(c->gid.raw, gid, sizeof gid);
    json_object_set_new(o, "rdma_device", json_string(c->dev));
    json_object_set_new(o, "rdma_port", json_integer(c->port));
    json_object_set_new(o, "rdma_link_layer", json_string(c->ethernet ? "Ethernet (RoCE)"
                                                                      : "InfiniBand"));
    json_object_set_new(o, "rdma_gid_index", json_integer(c->gid_index));
    json_object_set_new(o, "rdma_traffic_class", json_integer(c->tc));
    json_object_set_new(o, "rdma_service_level", json_integer(c->sl));
    json_object_set_new(o, "rdma_ib_timeout", json_integer(c->ib_timeout));
    json_object_set_new(o, "rdma_ib_retry_cnt", json_integer(c->ib_retry));
    json_object_set_new(o, "rdma_gid", json_string(gid));
    json_object_set_new(o, "rdma_lid", json_integer(c->lid));
    json_object_set_new(o, "rdma_mtu", json_integer(c->mtu >= 1 && c->mtu <= 5 ? mtus[c->mtu] : 0));
    json_object_set_new(o, "rdma_qps_per_peer", json_integer(c->nqp));
    json_object_set_new(o, "rdma_write_request_bytes", json_integer(WR_MAX));
    if (c->gpu >= 0) {
        char m[96];
        snprintf(m, sizeof m, "GPU %d (GPUDirect RDMA via %s)", c->gpu,
                 c->gpu_reg ? c->gpu_reg : "?");
        json_object_set_new(o, "rdma_memory", json_string(m));
    } else {
        json_object_set_new(o, "rdma_memory", json_string("host"));
    }
}

/* The port bench would open with no --ib-dev (NCCL_IB_HCA applies): a device with an ACTIVE
 * port and, on RoCE, a routable GID. */
static int verbs_usable(char *why, size_t whylen)
{
    struct cc_rte rte = {.size = 1, .local_size = 1, .nnodes = 1};
    struct cc_backend_conf conf = {.gid_index = -1};
    struct verbs_ctx c = {.rte = &rte};
    if (gethostname(rte.host, sizeof rte.host - 1) != 0)
        snprintf(rte.host, sizeof rte.host, "this host");
    if (!(c.v = cc_verbs_load(why, whylen)))
        return 0;
    int ok = open_port(&c, &conf, why, whylen) == CC_OK;
    if (ok)
        snprintf(why, whylen, "port %s:%d (%s), GID index %d", c.dev, c.port,
                 c.ethernet ? "RoCE" : "InfiniBand", c.gid_index);
    if (c.ctx)
        c.v->close_device(c.ctx);
    return ok;
}

const struct cc_backend cc_backend_verbs = {
    .name = "verbs",
    .summary = "RDMA writes over InfiniBand/RoCE RC queue pairs (sendrecv, ring allreduce/allgather)",
    .built = 1,
    .mem = CC_MEM_HOST,
    .usable = verbs_usable,
    .init = verbs_init,
    .fini = verbs_fini,
    .supports = verbs_supports,
    .alloc = verbs_alloc,
    .free = verbs_free,
    .copy_in = verbs_copy_in,
    .copy_out = verbs_copy_out,
    .run = verbs_run,
    .sync = verbs_sync,
    .describe = verbs_describe,
};

#else

const struct cc_backend cc_backend_verbs = {
    .name = "verbs",
    .summary = "RDMA writes over InfiniBand/RoCE RC queue pairs",
    .built = 0,
    .how_to_build = "configure found no infiniband/verbs.h: apt-get install libibverbs-dev and "
                    "run ./configure --with-verbs",
    .mem = CC_MEM_HOST,
};

#endif
