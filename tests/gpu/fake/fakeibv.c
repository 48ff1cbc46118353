/* fakeibv.c - a stand-in for libibverbs.so.1, for tests only: RC queue pairs between the
 * processes of one host, so the verbs backend's set-up, exchange, striping, flow control and
 * ring algorithms run with several MPI ranks on a machine without an RDMA device.
 *
 * One device "fake0" with one InfiniBand port whose LID is the process id (so pids must be
 * below 65536). An RDMA write copies into the peer process with process_vm_writev (the peer is
 * found from the destination LID); a write with immediate then appends an entry to the
 * destination QP's ring in the peer's mailbox (/dev/shm/fakeibv-<pid>, a shared mapping),
 * which the peer's ibv_poll_cq turns into a receive completion, consuming a posted receive
 * (no posted receive: the entry waits, as an RNR retry would). Signaled sends complete at
 * once. Environment: FAKEIBV_DEVICES=0 (no device), FAKEIBV_PORT_DOWN=1; FAKEIBV_ROCE=1 makes
 * the port Ethernet (RoCE) with GIDs at indices 0 (link-local) and 3 (IPv4-mapped), and then
 * connecting a QP needs a global route to the peer's GID (FAKEIBV_EXPECT_GID and
 * FAKEIBV_EXPECT_TC: its source GID index and traffic class); FAKEIBV_EXPECT_SL=N: the
 * service level.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define EXPORT __attribute__((visibility("default")))
#define MAXQP 256
#define RING 1024
#define MAXPEER 64

struct entry {
    _Atomic uint32_t ready;
    uint32_t imm; /* network order, as posted */
    uint32_t len;
    uint32_t pad;
};

struct mailbox {
    _Atomic uint32_t tail[MAXQP];
    struct entry e[MAXQP][RING];
};

struct fqp {
    struct ibv_qp qp;     /* first: the library hands out &qp */
    int idx;
    pid_t rpid;
    uint32_t rqpn;
    uint64_t *recv_ids;   /* posted receives, FIFO */
    size_t rhead, rtail, rcap;
    uint32_t head;        /* next mailbox entry to consume */
};

struct fcq {
    struct ibv_cq cq;
    struct ibv_wc *done;  /* send completions */
    size_t n, cap;
};

static struct mailbox *mine;
static char mine_name[64];
static struct fqp *qps[MAXQP];
static struct { pid_t pid; struct mailbox *mb; } peers[MAXPEER];
static int npeers;

static struct mailbox *peer_box(pid_t pid)
{
    if (pid == getpid())
        return mine;
    for (int i = 0; i < npeers; i++)
        if (peers[i].pid == pid)
            return peers[i].mb;
    char name[64];
    snprintf(name, sizeof name, "/fakeibv-%d", (int)pid);
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0 || npeers == MAXPEER)
        return NULL;
    struct mailbox *mb = mmap(NULL, sizeof *mb, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mb == MAP_FAILED)
        return NULL;
    peers[npeers].pid = pid;
    peers[npeers++].mb = mb;
    return mb;
}

static int f_post_send(struct ibv_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct fqp *f = (struct fqp *)q;
    for (; wr; wr = wr->next) {
        *bad = wr;
        if (wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM)
            return EINVAL;
        if (q->state != IBV_QPS_RTS)
            return EINVAL;
        uint32_t len = 0;
        for (int i = 0; i < wr->num_sge; i++) {
            struct iovec l = {(void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length};
            struct iovec r = {(void *)(uintptr_t)(wr->wr.rdma.remote_addr + len), l.iov_len};
            if (!l.iov_len)
                continue;
            if (f->rpid == getpid())
                memmove(r.iov_base, l.iov_base, l.iov_len);
            else if (process_vm_writev(f->rpid, &l, 1, &r, 1, 0) != (ssize_t)l.iov_len)
                return errno ? errno : EIO;
            len += wr->sg_list[i].length;
        }
        if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
            struct mailbox *mb = peer_box(f->rpid);
            uint32_t ri = f->rqpn - 1;
            if (!mb || ri >= MAXQP)
                return EIO;
            uint32_t slot = atomic_fetch_add(&mb->tail[ri], 1) % RING;
            struct entry *e = &mb->e[ri][slot];
            while (atomic_load_explicit(&e->ready, memory_order_acquire))
                ; /* ring full: the consumer is behind */
            e->imm = wr->imm_data;
            e->len = len;
            atomic_store_explicit(&e->ready, 1, memory_order_release);
        }
        if (wr->send_flags & IBV_SEND_SIGNALED) {
            struct fcq *c = (struct fcq *)q->send_cq;
            if (c->n == c->cap) {
                size_t nc = c->cap ? 2 * c->cap : 64;
                struct ibv_wc *nw = realloc(c->done, nc * sizeof *nw);
                if (!nw)
                    return ENOMEM;
                c->done = nw;
                c->cap = nc;
            }
            c->done[c->n++] = (struct ibv_wc){.wr_id = wr->wr_id, .status = IBV_WC_SUCCESS,
                                              .opcode = IBV_WC_RDMA_WRITE, .qp_num = q->qp_num};
        }
    }
    *bad = NULL;
    return 0;
}

static int f_post_recv(struct ibv_qp *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct fqp *f = (struct fqp *)q;
    for (; wr; wr = wr->next) {
        if (f->rtail - f->rhead == f->rcap) {
            size_t nc = f->rcap ? 2 * f->rcap : 256;
            uint64_t *n = malloc(nc * sizeof *n);
            if (!n) {
                *bad = wr;
                return ENOMEM;
            }
            for (size_t i = 0; i < f->rtail - f->rhead; i++)
                n[i] = f->recv_ids[(f->rhead + i) % f->rcap];
            f->rtail -= f->rhead;
            f->rhead = 0;
            free(f->recv_ids);
            f->recv_ids = n;
            f->rcap = nc;
        }
        f->recv_ids[f->rtail++ % f->rcap] = wr->wr_id;
    }
    *bad = NULL;
    return 0;
}

static int f_poll_cq(struct ibv_cq *cq, int max, struct ibv_wc *wc)
{
    struct fcq *c = (struct fcq *)cq;
    int n = 0;
    while (n < max && c->n) {
        wc[n++] = c->done[0];
        memmove(c->done, c->done + 1, --c->n * sizeof *c->done);
    }
    for (int i = 0; i < MAXQP && n < max; i++) {
        struct fqp *f = qps[i];
        if (!f || f->qp.recv_cq != cq)
            continue;
        while (n < max && f->rtail != f->rhead) {
            struct entry *e = &mine->e[i][f->head % RING];
            if (!atomic_load_explicit(&e->ready, memory_order_acquire))
                break;
            wc[n++] = (struct ibv_wc){.wr_id = f->recv_ids[f->rhead++ % f->rcap],
                                      .status = IBV_WC_SUCCESS,
                                      .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
                                      .wc_flags = IBV_WC_WITH_IMM, .imm_data = e->imm,
                                      .byte_len = e->len, .qp_num = f->qp.qp_num};
            atomic_store_explicit(&e->ready, 0, memory_order_release);
            f->head++;
        }
    }
    return n;
}

static struct ibv_device fake_dev = {.name = "fake0", .dev_name = "uverbs0"};

EXPORT struct ibv_device **(ibv_get_device_list)(int *n)
{
    const char *e = getenv("FAKEIBV_DEVICES");
    int have = !(e && atoi(e) == 0);
    struct ibv_device **l = calloc(2, sizeof *l);
    if (!l)
        return NULL;
    if (have)
        l[0] = &fake_dev;
    if (n)
        *n = have;
    return l;
}
EXPORT void ibv_free_device_list(struct ibv_device **l) { free(l); }
EXPORT const char *ibv_get_device_name(struct ibv_device *d) { return d->name; }

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *d)
{
    struct ibv_context *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->device = d;
    c->ops.post_send = f_post_send;
    c->ops.post_recv = f_post_recv;
    c->ops.poll_cq = f_poll_cq;
    if (!mine) {
        snprintf(mine_name, sizeof mine_name, "/fakeibv-%d", (int)getpid());
        int fd = shm_open(mine_name, O_CREAT | O_RDWR | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, sizeof *mine) != 0) {
            if (fd >= 0)
                close(fd);
            free(c);
            return NULL;
        }
        mine = mmap(NULL, sizeof *mine, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (mine == MAP_FAILED) {
            mine = NULL;
            free(c);
            return NULL;
        }
    }
    return c;
}

EXPORT int ibv_close_device(struct ibv_context *c)
{
    free(c);
    return 0;
}

__attribute__((destructor)) static void cleanup(void)
{
    if (mine)
        shm_unlink(mine_name);
}

EXPORT int ibv_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
    (void)c;
    memset(a, 0, sizeof *a);
    a->phys_port_cnt = 1;
    a->max_qp = MAXQP;
    return 0;
}

EXPORT int (ibv_query_port)(struct ibv_context *c, uint8_t port, struct _compat_ibv_port_attr *pa)
{
    (void)c;
    struct ibv_port_attr *a = (struct ibv_port_attr *)pa;
    if (port != 1)
        return EINVAL;
    a->state = getenv("FAKEIBV_PORT_DOWN") ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
    a->active_mtu = IBV_MTU_4096;
    a->max_mtu = IBV_MTU_4096;
    a->lid = (uint16_t)getpid();
    a->link_layer = getenv("FAKEIBV_ROCE") ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    return 0;
}

EXPORT int ibv_query_gid(struct ibv_context *c, uint8_t port, int index, union ibv_gid *gid)
{
    (void)c;
    int roce = getenv("FAKEIBV_ROCE") != NULL;
    if (port != 1 || (index != 0 && !(roce && index == 3)))
        return EINVAL;
    memset(gid, 0, sizeof *gid);
    if (index == 3) { /* ::ffff:10.0.x.y, a RoCE v2 GID */
        gid->raw[10] = gid->raw[11] = 0xff;
        gid->raw[12] = 10;
        gid->raw[14] = (uint8_t)(getpid() >> 8);
    } else {
        gid->raw[0] = 0xfe;
        gid->raw[1] = 0x80;
    }
    gid->raw[15] = (uint8_t)getpid();
    return 0;
}

EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *c)
{
    struct ibv_pd *pd = calloc(1, sizeof *pd);
    if (pd)
        pd->context = c;
    return pd;
}
EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
    free(pd);
    return 0;
}

EXPORT struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    static uint32_t key = 0x100;
    (void)access;
    struct ibv_mr *mr = calloc(1, sizeof *mr);
    if (!mr)
        return NULL;
    mr->context = pd->context;
    mr->pd = pd;
    mr->addr = addr;
    mr->length = len;
    mr->lkey = mr->rkey = key++;
    return mr;
}
EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
    free(mr);
    return 0;
}

EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *c, int cqe, void *ctx,
                                    struct ibv_comp_channel *ch, int vec)
{
    (void)ctx, (void)ch, (void)vec;
    struct fcq *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->cq.context = c;
    f->cq.cqe = cqe;
    return &f->cq;
}
EXPORT int ibv_destroy_cq(struct ibv_cq *cq)
{
    struct fcq *f = (struct fcq *)cq;
    free(f->done);
    free(f);
    return 0;
}

EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
    int i = 0;
    while (i < MAXQP && qps[i])
        i++;
    if (i == MAXQP || ia->qp_type != IBV_QPT_RC)
        return NULL;
    struct fqp *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->idx = i;
    f->qp.context = pd->context;
    f->qp.pd = pd;
    f->qp.send_cq = ia->send_cq;
    f->qp.recv_cq = ia->recv_cq;
    f->qp.qp_num = (uint32_t)i + 1;
    f->qp.qp_type = IBV_QPT_RC;
    f->qp.state = IBV_QPS_RESET;
    f->head = atomic_load(&mine->tail[i]); /* start after anything left by a previous QP */
    qps[i] = f;
    return &f->qp;
}

EXPORT int ibv_destroy_qp(struct ibv_qp *q)
{
    struct fqp *f = (struct fqp *)q;
    qps[f->idx] = NULL;
    free(f->recv_ids);
    free(f);
    return 0;
}

EXPORT int ibv_modify_qp(struct ibv_qp *q, struct ibv_qp_attr *a, int mask)
{
    struct fqp *f = (struct fqp *)q;
    if (!(mask & IBV_QP_STATE))
        return EINVAL;
    switch (a->qp_state) {
    case IBV_QPS_INIT:
        if (q->state != IBV_QPS_RESET || !(mask & IBV_QP_PORT) || a->port_num != 1)
            return EINVAL;
        break;
    case IBV_QPS_RTR:
        if (q->state != IBV_QPS_INIT || !(mask & IBV_QP_AV) || !(mask & IBV_QP_DEST_QPN) ||
            !a->ah_attr.dlid || a->dest_qp_num == 0 || a->dest_qp_num > MAXQP)
            return EINVAL;
        /* FAKEIBV_EXPECT_SL=N: the address vector must carry service level N (what a fabric
         * would use to pick the lane) */
        if (getenv("FAKEIBV_EXPECT_SL") && a->ah_attr.sl != atoi(getenv("FAKEIBV_EXPECT_SL")))
            return EINVAL;
        /* RoCE: no route without a global header naming the peer's GID (its last byte is the
         * low byte of the peer's pid, the fake's LID), from the expected GID, in the expected
         * traffic class */
        if (getenv("FAKEIBV_ROCE") &&
            (!a->ah_attr.is_global || a->ah_attr.grh.dgid.raw[15] != (uint8_t)a->ah_attr.dlid ||
             (getenv("FAKEIBV_EXPECT_GID") &&
              a->ah_attr.grh.sgid_index != atoi(getenv("FAKEIBV_EXPECT_GID"))) ||
             (getenv("FAKEIBV_EXPECT_TC") &&
              a->ah_attr.grh.traffic_class != atoi(getenv("FAKEIBV_EXPECT_TC")))))
            return EINVAL;
        f->rpid = a->ah_attr.dlid;
        f->rqpn = a->dest_qp_num;
        break;
    case IBV_QPS_RTS:
        if (q->state != IBV_QPS_RTR)
            return EINVAL;
        break;
    default:
        return EINVAL;
    }
    q->state = a->qp_state;
    return 0;
}

EXPORT const char *ibv_wc_status_str(enum ibv_wc_status s)
{
    return s == IBV_WC_SUCCESS ? "success" : "fake failure";
}
