/* tcp backend: ccbench's own socket transport on host memory.
 *
 * Start-up (tcp_conn.c) opens --tcp-streams sockets between every pair of ranks once; every
 * collective then runs as a set of flows over them. A flow is one direction to one peer: a
 * logical byte stream made of segments (a block of a buffer each). The stream is cut into
 * --tcp-chunk pieces dealt round-robin over the peer's sockets; each socket carries a 16-byte
 * frame header (net/wire.h) and then exactly its share. A receive flow either stores bytes
 * straight into place or stages them in a ring and reduces them into place as soon as whole
 * elements have arrived. A send flow may be gated by a receive flow: it may send logical byte
 * p only once the receive flow has processed p - lead bytes. This one rule pipelines every
 * algorithm here at the granularity of single recv() calls:
 *   ring all-reduce  reduce-scatter then all-gather; the block sent at step k+1 is the block
 *                    received at step k, so the whole send stream trails the receive stream
 *                    by one block (lead = first block);
 *   ring all-gather and reduce-scatter: the same with n-1 steps;
 *   chain broadcast  root -> root+1 -> ..., each rank forwards what it has (lead 0);
 *   chain reduce     root+1 -> ... -> root, each rank adds its input and forwards;
 *   all-to-all       pairwise: n-1 steps, step k sends to rank+k and receives from rank-k;
 *   send/recv        ring shift: send to rank+1, receive from rank-1.
 * One thread and non-blocking sockets: sending, receiving and reducing overlap because the
 * kernel keeps moving data while the thread reduces. The listening socket stays in every
 * poll, so strangers are dropped while collectives run. No data moved for --timeout seconds
 * is an error naming the peer waited for; a socket error names its peer at once. */
#include "backend/backend.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backend/tcp_conn.h"
#include "core/log.h"
#include "core/size.h"

#define DEFAULT_CHUNK (512u << 10)
#define TCP_DEBUG_STOP_SEQ 50 /* --debug-stop: the collective call that stops the rank */
#define MIN_WINDOW (8u << 20)
#define POLL_EVERY_S 0.05 /* while data flows, check strangers and idle sockets this often */

enum seg_mode { SEG_STORE, SEG_REDUCE };

struct tcp_seg {
    size_t start, len;      /* position in the flow's logical stream, bytes */
    enum seg_mode mode;     /* receive: store, or reduce into dst */
    char *dst;              /* receive: destination (reduce: dst = src op incoming) */
    const char *src;        /* send: source; receive/reduce: this rank's own operand */
};

struct tcp_flow {
    int peer, send;
    struct tcp_seg *segs;
    int nsegs;
    size_t total;                 /* bytes in the logical stream */
    size_t done;                  /* receive: bytes processed (stored or reduced) in order */
    const struct tcp_flow *gate;  /* send: may send byte p once gate->done + lead > p */
    size_t lead;
};

/* ---- logical stream <-> sockets --------------------------------------------------------- */

/* Payload bytes of stream k of K for a logical stream of `total` bytes. */
static uint64_t share_of(const struct tcp_ctx *c, int k, size_t total)
{
    size_t C = c->chunk, K = (size_t)c->nstreams, full = total / C, rem = total % C;
    uint64_t b = (uint64_t)(full / K + ((size_t)k < full % K)) * C;
    if (rem && full % K == (size_t)k)
        b += rem;
    return b;
}

/* Logical position of byte b of stream k's share. */
static size_t logical(const struct tcp_ctx *c, int k, uint64_t b)
{
    size_t C = c->chunk;
    return ((size_t)(b / C) * (size_t)c->nstreams + (size_t)k) * C + (size_t)(b % C);
}

static const struct tcp_seg *seg_at(const struct tcp_flow *f, size_t pos)
{
    for (int i = 0; i < f->nsegs; i++)
        if (pos >= f->segs[i].start && pos < f->segs[i].start + f->segs[i].len)
            return &f->segs[i];
    return NULL; /* not reached for pos < total */
}

static size_t minz(size_t a, size_t b) { return a < b ? a : b; }

/* Bytes socket s may send now, and from where. */
static size_t send_avail(const struct tcp_ctx *c, const struct tcp_sock *s, const char **from)
{
    const struct tcp_flow *f = s->sf;
    if (s->sdone == s->sbytes)
        return 0;
    size_t pos = logical(c, s->stream, s->sdone);
    size_t limit = f->gate ? minz(f->total, f->lead + f->gate->done) : f->total;
    if (pos >= limit)
        return 0;
    const struct tcp_seg *g = seg_at(f, pos);
    *from = g->src + (pos - g->start);
    return minz(minz(c->chunk - (size_t)(s->sdone % c->chunk), limit - pos),
                g->start + g->len - pos);
}

/* Bytes socket s may receive now, and where to. */
static size_t recv_avail(const struct tcp_ctx *c, const struct tcp_sock *s, char **to)
{
    const struct tcp_flow *f = s->rf;
    if (s->rdone == s->rbytes)
        return 0;
    size_t pos = logical(c, s->stream, s->rdone);
    if (pos >= f->done + c->window)
        return 0;
    const struct tcp_seg *g = seg_at(f, pos);
    size_t n = minz(minz(c->chunk - (size_t)(s->rdone % c->chunk), f->done + c->window - pos),
                    g->start + g->len - pos);
    if (g->mode == SEG_STORE) {
        *to = g->dst + (pos - g->start);
        return n;
    }
    *to = c->ring + pos % c->window;
    return minz(n, c->window - pos % c->window);
}

/* Store or reduce what has arrived in order on every stream of flow f. */
static void recv_process(struct tcp_ctx *c, struct tcp_flow *f, enum cc_dtype t, enum cc_op op)
{
    size_t prefix = f->total, es = cc_dtype_size(t);
    for (int k = 0; k < c->nstreams; k++) {
        const struct tcp_sock *s = tcp_sock_of(c, f->peer, k);
        if (s->rdone < s->rbytes)
            prefix = minz(prefix, logical(c, k, s->rdone));
    }
    while (f->done < prefix) {
        const struct tcp_seg *g = seg_at(f, f->done);
        size_t end = minz(prefix, g->start + g->len);
        if (g->mode == SEG_STORE) {
            f->done = end;
            continue;
        }
        size_t n = minz(end - f->done, c->window - f->done % c->window);
        n -= n % es;
        if (!n)
            break;
        size_t off = f->done - g->start;
        cc_reduce3(t, op, g->dst + off, g->src + off, c->ring + f->done % c->window, n / es);
        f->done += n;
    }
}

/* ---- moving bytes ------------------------------------------------------------------------ */

static cc_status peer_fail(struct tcp_ctx *c, int peer, const char *doing, int err)
{
    char pd[128];
    if (err == 0)
        cc_err("tcp: %s closed the connection during %s", cc_tcp_peer_desc(c, peer, pd, sizeof pd),
               c->what);
    else
        cc_err("tcp: lost connection to %s during %s (%s): %s",
               cc_tcp_peer_desc(c, peer, pd, sizeof pd), c->what, doing, strerror(err));
    return CC_EPEER;
}

/* One non-blocking send on s; returns bytes moved (0: would block), -1 on error (*st set). */
static ssize_t sock_send(struct tcp_ctx *c, struct tcp_sock *s, cc_status *st)
{
    struct iovec iov[2];
    int niov = 0;
    const char *from = NULL;
    size_t hdr = CC_WIRE_FRAME_BYTES - s->shdr_n;
    if (hdr)
        iov[niov++] = (struct iovec){s->shdr + s->shdr_n, hdr};
    size_t n = send_avail(c, s, &from);
    if (n)
        iov[niov++] = (struct iovec){(void *)from, n};
    if (!niov)
        return 0;
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
    ssize_t w = sendmsg(s->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return 0;
        *st = peer_fail(c, s->peer, "sending", errno);
        return -1;
    }
    size_t h = minz((size_t)w, hdr);
    s->shdr_n += h;
    s->sdone += (size_t)w - h;
    return w;
}

static ssize_t sock_recv(struct tcp_ctx *c, struct tcp_sock *s, cc_status *st)
{
    char *to = NULL, why[160], pd[128];
    size_t n;
    int hdr = s->rhdr_n < CC_WIRE_FRAME_BYTES;
    if (hdr) {
        to = (char *)s->rhdr + s->rhdr_n;
        n = CC_WIRE_FRAME_BYTES - s->rhdr_n;
    } else if (!(n = recv_avail(c, s, &to))) {
        return 0;
    }
    ssize_t r = recv(s->fd, to, n, MSG_DONTWAIT);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        *st = peer_fail(c, s->peer, "receiving", r == 0 ? 0 : errno);
        return -1;
    }
    if (r < 0)
        return 0;
    if (!hdr) {
        s->rdone += (size_t)r;
        return r;
    }
    s->rhdr_n += (size_t)r;
    if (s->rhdr_n == CC_WIRE_FRAME_BYTES &&
        cc_wire_frame_check(s->rhdr, c->seq, s->rbytes, why, sizeof why) != CC_OK) {
        cc_err("tcp: bad data from %s during %s: %s", cc_tcp_peer_desc(c, s->peer, pd, sizeof pd),
               c->what, why);
        *st = CC_EPEER;
        return -1;
    }
    return r;
}

static int flow_complete(struct tcp_ctx *c, const struct tcp_flow *f)
{
    for (int k = 0; k < c->nstreams; k++) {
        const struct tcp_sock *s = tcp_sock_of(c, f->peer, k);
        if (f->send ? (s->shdr_n < CC_WIRE_FRAME_BYTES || s->sdone < s->sbytes)
                    : s->rhdr_n < CC_WIRE_FRAME_BYTES)
            return 0;
    }
    return f->send || f->done == f->total;
}

/* Whether peer's host has gone silent (1), still answers (0) or cannot be told (-1), over its
 * streams: one that hears from the host shows it alive; *ack_s from the stream that decided. */
static int host_state(struct tcp_ctx *c, int peer, double *ack_s)
{
    int state = -1;
    for (int k = 0; k < c->nstreams && state != 0; k++) {
        double a;
        int v = cc_tcp_host_silent(tcp_sock_of(c, peer, k)->fd, &a);
        if (v == 0 || (v == 1 && state < 0))
            state = v, *ack_s = a;
    }
    return state;
}

/* No byte moved for the deadline: name the peer to blame and say whether its host still
 * answers (the rank is stuck or waits on another) or not (host or link down). The peer: one
 * this rank waits on whose host has gone silent, else the first it waits to receive from,
 * else the first it waits to send to. */
static cc_status stalled(struct tcp_ctx *c, struct tcp_flow *fl, int nf)
{
    char pd[128], how[160] = "";
    int peer = -1, recv = 0, silent = -1, best = -1;
    double ack_s = 0;
    for (int i = 0; i < nf; i++) {
        if (flow_complete(c, &fl[i]))
            continue;
        double a = 0;
        int v = host_state(c, fl[i].peer, &a);
        int score = (v == 1 ? 2 : 0) + !fl[i].send;
        if (score > best) {
            best = score, peer = fl[i].peer, recv = !fl[i].send, silent = v, ack_s = a;
        }
    }
    if (silent == 1)
        snprintf(how, sizeof how, ": its host has acknowledged nothing for %.1f s (host or "
                 "link down)", ack_s);
    else if (silent == 0)
        snprintf(how, sizeof how, ": its host still acknowledges (%.1f s ago), so rank %d "
                 "itself is stuck, busy or waiting on another rank", ack_s, peer);
    cc_err("tcp: timed out after %g s without progress during %s, %s %s%s", c->timeout_s,
           c->what, recv ? "waiting for data from" : "waiting to send to",
           cc_tcp_peer_desc(c, peer, pd, sizeof pd), how);
    return CC_ETIMEOUT;
}

/* A socket that poll() reports in error: the peer's host or link is gone. */
static cc_status check_errors(struct tcp_ctx *c, const struct pollfd *p, int n)
{
    for (int i = 0; i < n; i++) {
        if (!(p[i].revents & (POLLERR | POLLHUP | POLLNVAL)))
            continue;
        const struct tcp_sock *s = NULL;
        for (size_t j = 0; j < (size_t)c->size * (size_t)c->nstreams && !s; j++)
            if (c->socks[j].fd == p[i].fd)
                s = &c->socks[j];
        int e = 0;
        socklen_t el = sizeof e;
        getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &e, &el);
        if (s && (e || (p[i].revents & (POLLHUP | POLLNVAL))))
            return peer_fail(c, s->peer, "connection check", e ? e : ECONNRESET);
    }
    return CC_OK;
}

/* Run flows to completion (all ranks involved run their matching flows). */
static cc_status xfer(struct tcp_ctx *c, struct tcp_flow *fl, int nf, enum cc_dtype t,
                      enum cc_op op)
{
    size_t nsock = (size_t)c->size * (size_t)c->nstreams;
    for (size_t j = 0; j < nsock; j++)
        c->socks[j].sf = c->socks[j].rf = NULL;
    for (int i = 0; i < nf; i++) {
        struct tcp_flow *f = &fl[i];
        for (int k = 0; k < c->nstreams; k++) {
            struct tcp_sock *s = tcp_sock_of(c, f->peer, k);
            uint64_t b = share_of(c, k, f->total);
            if (f->send) {
                s->sf = f;
                s->sbytes = b;
                s->sdone = 0;
                s->shdr_n = 0;
                cc_wire_frame_pack(c->seq, b, s->shdr);
            } else {
                s->rf = f;
                s->rbytes = b;
                s->rdone = 0;
                s->rhdr_n = 0;
            }
        }
    }
    double last = cc_now(), polled = last;
    cc_status st = CC_OK;
    for (;;) {
        ssize_t moved = 0;
        int complete = 1;
        for (int i = 0; i < nf; i++) {
            struct tcp_flow *f = &fl[i];
            for (int k = 0; k < c->nstreams; k++) {
                struct tcp_sock *s = tcp_sock_of(c, f->peer, k);
                ssize_t r = f->send ? sock_send(c, s, &st) : sock_recv(c, s, &st);
                if (r < 0)
                    return st;
                moved += r;
            }
            if (!f->send)
                recv_process(c, f, t, op);
            complete &= flow_complete(c, f);
        }
        if (complete)
            return CC_OK;
        double now = cc_now();
        if (moved) {
            last = now;
            if (c->progress && now - c->told >= 1.0) { /* alive: the watchdog waits on */
                c->progress();
                c->told = now;
            }
            if (now - polled < POLL_EVERY_S)
                continue; /* busy moving data; still poll now and then (below, no wait) */
        } else if (now - last > c->timeout_s) {
            return stalled(c, fl, nf);
        }
        /* wait: strangers first, then every socket (idle ones too, for errors) */
        int n = cc_tcp_strangers_poll(c, c->pfds), first = n;
        for (size_t j = 0; j < nsock; j++) {
            struct tcp_sock *s = &c->socks[j];
            const char *fp;
            char *tp;
            if (s->fd < 0)
                continue;
            short ev = 0;
            if (s->sf && (s->shdr_n < CC_WIRE_FRAME_BYTES || send_avail(c, s, &fp)))
                ev |= POLLOUT;
            if (s->rf && (s->rhdr_n < CC_WIRE_FRAME_BYTES || recv_avail(c, s, &tp)))
                ev |= POLLIN;
            c->pfds[n++] = (struct pollfd){s->fd, ev, 0};
        }
        int ms = moved ? 0 : cc_tcp_strangers_wait_ms(c, (int)((last + c->timeout_s - now) * 1000) + 1);
        polled = now;
        if (poll(c->pfds, (nfds_t)n, ms) < 0 && errno != EINTR) {
            cc_err("tcp: poll failed during %s: %s", c->what, strerror(errno));
            return CC_ESYS;
        }
        if ((st = check_errors(c, c->pfds + first, n - first)) != CC_OK)
            return st;
        cc_tcp_strangers_serve(c, c->pfds, first);
    }
}

/* ---- collectives --------------------------------------------------------------------------- */

static int mod(int a, int n) { return ((a % n) + n) % n; }

/* Balanced split of count elements in n blocks: block b's first element and length. */
static size_t blk_start(size_t count, int n, int b)
{
    size_t base = count / (size_t)n, rem = count % (size_t)n;
    return (size_t)b * base + minz((size_t)b, rem);
}
static size_t blk_len(size_t count, int n, int b)
{
    return count / (size_t)n + ((size_t)b < count % (size_t)n);
}

static void seg_add(struct tcp_flow *f, enum seg_mode mode, size_t len, char *dst, const char *src)
{
    f->segs[f->nsegs++] = (struct tcp_seg){f->total, len, mode, dst, src};
    f->total += len;
}

static cc_status need_work(struct tcp_ctx *c, size_t bytes)
{
    if (bytes <= c->work_bytes)
        return CC_OK;
    char *w = realloc(c->work, bytes);
    if (!w) {
        cc_err("tcp: cannot allocate a %zu-byte work buffer for the collective (lower -e)", bytes);
        return CC_ENOMEM;
    }
    c->work = w;
    c->work_bytes = bytes;
    return CC_OK;
}

/* Two flows (send to `to`, receive from `from`) with segment space for 2n steps each. */
static void flows_init(struct tcp_ctx *c, struct tcp_flow f[2], int to, int from)
{
    memset(f, 0, 2 * sizeof *f);
    f[0] = (struct tcp_flow){.peer = to, .send = 1, .segs = c->segs};
    f[1] = (struct tcp_flow){.peer = from, .segs = c->segs + 2 * c->size};
}

static cc_status ring_allreduce(struct tcp_ctx *c, const struct cc_coll_args *a)
{
    int n = c->size, r = c->rank;
    size_t es = cc_dtype_size(a->dtype), cnt = a->recvcount;
    const char *in = a->sendbuf;
    char *out = a->recvbuf;
    struct tcp_flow f[2];
    flows_init(c, f, mod(r + 1, n), mod(r - 1, n));
    for (int k = 0; k < 2 * (n - 1); k++) {
        int sb = mod(r - k, n), rb = mod(r - k - 1, n);
        seg_add(&f[0], SEG_STORE, blk_len(cnt, n, sb) * es,
                NULL, (k ? out : in) + blk_start(cnt, n, sb) * es);
        seg_add(&f[1], k < n - 1 ? SEG_REDUCE : SEG_STORE, blk_len(cnt, n, rb) * es,
                out + blk_start(cnt, n, rb) * es, in + blk_start(cnt, n, rb) * es);
    }
    f[0].gate = &f[1];
    f[0].lead = blk_len(cnt, n, r) * es;
    return xfer(c, f, 2, a->dtype, a->op);
}

static cc_status ring_allgather(struct tcp_ctx *c, const struct cc_coll_args *a)
{
    int n = c->size, r = c->rank;
    size_t bl = a->sendcount * cc_dtype_size(a->dtype);
    char *out = a->recvbuf;
    struct tcp_flow f[2];
    flows_init(c, f, mod(r + 1, n), mod(r - 1, n));
    for (int k = 0; k < n - 1; k++) {
        int sb = mod(r - k, n), rb = mod(r - k - 1, n);
        seg_add(&f[0], SEG_STORE, bl, NULL, k ? out + (size_t)sb * bl : (const char *)a->sendbuf);
        seg_add(&f[1], SEG_STORE, bl, out + (size_t)rb * bl, NULL);
    }
    f[0].gate = &f[1];
    f[0].lead = bl;
    return xfer(c, f, 2, a->dtype, a->op);
}

static cc_status ring_reducescatter(struct tcp_ctx *c, const struct cc_coll_args *a)
{
    int n = c->size, r = c->rank;
    size_t bl = a->recvcount * cc_dtype_size(a->dtype);
    const char *in = a->sendbuf;
    char *tmp = (char *)a->sendbuf; /* in place: partial sums may overwrite the input */
    cc_status st;
    if (!a->inplace) {
        if ((st = need_work(c, (size_t)n * bl)) != CC_OK)
            return st;
        tmp = c->work;
    }
    struct tcp_flow f[2];
    flows_init(c, f, mod(r + 1, n), mod(r - 1, n));
    char *prev = NULL;
    for (int k = 0; k < n - 1; k++) {
        int sb = mod(r - k - 1, n), rb = mod(r - k - 2, n);
        char *dst = k == n - 2 ? (char *)a->recvbuf : tmp + (size_t)rb * bl;
        seg_add(&f[0], SEG_STORE, bl, NULL, k ? prev : in + (size_t)sb * bl);
        seg_add(&f[1], SEG_REDUCE, bl, dst, in + (size_t)rb * bl);
        prev = dst;
    }
    f[0].gate = &f[1];
    f[0].lead = bl;
    return xfer(c, f, 2, a->dtype, a->op);
}

static cc_status chain_broadcast(struct tcp_ctx *c, const struct cc_coll_args *a)
{
    int n = c->size, pos = mod(c->rank - a->root, n);
    size_t bytes = a->sendcount * cc_dtype_size(a->dtype);
    struct tcp_flow f[2];
    flows_init(c, f, mod(c->rank + 1, n), mod(c->rank - 1, n));
    if (pos == 0) {
        seg_add(&f[0], SEG_STORE, bytes, NULL, a->sendbuf);
        return xfer(c, f, 1, a->dtype, a->op);
    }
    seg_add(&f[1], SEG_STORE, bytes, a->recvbuf, NULL);
    if (pos == n - 1)
        return xfer(c, f + 1, 1, a->dtype, a->op);
    seg_add(&f[0], SEG_STORE, bytes, NULL, a->recvbuf);
    f[0].gate = &f[1];
    return xfer(c, f, 2, a->dtype, a->op);
}

static cc_status chain_reduce(struct tcp_ctx *c, const struct cc_coll_args *a)
{
    int n = c->size, pos = mod(c->rank - a->root - 1, n);
    size_t bytes = a->sendcount * cc_dtype_size(a->dtype);
    struct tcp_flow f[2];
    cc_status st;
    flows_init(c, f, mod(c->rank + 1, n), mod(c->rank - 1, n));
    if (pos == 0) {
        seg_add(&f[0], SEG_STORE, bytes, NULL, a->sendbuf);
        return xfer(c, f, 1, a->dtype, a->op);
    }
    if (pos == n - 1) {
        seg_add(&f[1], SEG_REDUCE, bytes, a->recvbuf, a->sendbuf);
        return xfer(c, f + 1, 1, a->dtype, a->op);
    }
    if ((st = need_work(c, bytes)) != CC_OK)
        return st;
    seg_add(&f[1], SEG_REDUCE, bytes, c->work, a->sendbuf);
    seg_add(&f[0], SEG_STORE, bytes, NULL, c->work);
    f[0].gate = &f[1];
    return xfer(c, f, 2, a->dtype, a->op);
}

static cc_status pairwise_alltoall(struct tcp_ctx *c, const struct cc_coll_args *a)
{
    int n = c->size, r = c->rank;
    size_t per = a->sendcount / (size_t)n * cc_dtype_size(a->dtype);
    const char *in = a->sendbuf;
    char *out = a->recvbuf;
    cc_status st = CC_OK;
    memcpy(out + (size_t)r * per, in + (size_t)r * per, per);
    for (int k = 1; k < n && st == CC_OK; k++) {
        struct tcp_flow f[2];
        int to = mod(r + k, n), from = mod(r - k, n);
        flows_init(c, f, to, from);
        seg_add(&f[0], SEG_STORE, per, NULL, in + (size_t)to * per);
        seg_add(&f[1], SEG_STORE, per, out + (size_t)from * per, NULL);
        st = xfer(c, f, 2, a->dtype, a->op);
    }
    return st;
}

static cc_status ring_sendrecv(struct tcp_ctx *c, const struct cc_coll_args *a)
{
    size_t bytes = a->sendcount * cc_dtype_size(a->dtype);
    struct tcp_flow f[2];
    flows_init(c, f, mod(c->rank + 1, c->size), mod(c->rank - 1, c->size));
    seg_add(&f[0], SEG_STORE, bytes, NULL, a->sendbuf);
    seg_add(&f[1], SEG_STORE, bytes, a->recvbuf, NULL);
    return xfer(c, f, 2, a->dtype, a->op);
}

/* One rank: every collective is a local copy (reductions of one input are that input). */
static void run_local(const struct cc_coll_args *a)
{
    size_t es = cc_dtype_size(a->dtype);
    size_t bytes = (a->coll == CC_ALLGATHER ? a->sendcount : a->recvcount) * es;
    char *dst = a->recvbuf;
    if (dst != (const char *)a->sendbuf)
        memmove(dst, a->sendbuf, bytes);
}

static cc_status tcp_run(void *ctx, const struct cc_coll_args *a)
{
    struct tcp_ctx *c = ctx;
    size_t es = cc_dtype_size(a->dtype);
    char sz[32];
    cc_status st;
    cc_size_format((a->coll == CC_ALLGATHER ? a->recvcount : a->sendcount) * es, sz, sizeof sz);
    snprintf(c->what, sizeof c->what, "%s of %s bytes", cc_coll_names[a->coll], sz);
    c->seq++;
    if (c->stop_rank == c->rank && c->seq == TCP_DEBUG_STOP_SEQ)
        raise(SIGSTOP); /* tests: a peer that hangs in the middle of the job */
    if (c->size == 1) {
        run_local(a);
        return CC_OK;
    }
    switch (a->coll) {
    case CC_ALLREDUCE: st = ring_allreduce(c, a); break;
    case CC_ALLGATHER:
        if (!a->inplace)
            memcpy((char *)a->recvbuf + (size_t)c->rank * a->sendcount * es, a->sendbuf,
                   a->sendcount * es);
        st = ring_allgather(c, a);
        break;
    case CC_REDUCESCATTER: st = ring_reducescatter(c, a); break;
    case CC_BROADCAST:
        st = chain_broadcast(c, a);
        if (st == CC_OK && c->rank == a->root && !a->inplace)
            memcpy(a->recvbuf, a->sendbuf, a->sendcount * es);
        break;
    case CC_REDUCE: st = chain_reduce(c, a); break;
    case CC_ALLTOALL: st = pairwise_alltoall(c, a); break;
    case CC_SENDRECV: st = ring_sendrecv(c, a); break;
    default: return CC_ENOTSUP;
    }
    if (st != CC_OK || a->op != CC_AVG)
        return st;
    if (a->coll == CC_ALLREDUCE || a->coll == CC_REDUCESCATTER ||
        (a->coll == CC_REDUCE && c->rank == a->root))
        cc_scale_avg(a->dtype, a->recvbuf, a->recvcount, c->size);
    return CC_OK;
}

/* ---- vtable -------------------------------------------------------------------------------- */

static cc_status tcp_init(const struct cc_backend_conf *conf, const struct cc_rte *rte, void **ctx,
                          char *err, size_t errlen)
{
    struct tcp_ctx *c = calloc(1, sizeof *c);
    cc_status st;
    char ip[80] = "?", csz[32], wsz[32];
    size_t chunk = conf->tcp_chunk ? conf->tcp_chunk : DEFAULT_CHUNK;
    int nstreams = conf->tcp_streams > 0 ? conf->tcp_streams : 1;
    /* tests: a rank of "another version", with another default (the arguments are compared
     * across ranks, the environment is not) */
    const char *dbg = getenv("CCBENCH_DEBUG_TCP_DEFAULT_CHUNK");
    if (!conf->tcp_chunk && dbg && atol(dbg) > 0)
        chunk = (size_t)atol(dbg);
    dbg = getenv("CCBENCH_DEBUG_TCP_DEFAULT_STREAMS"); /* likewise, for the stream count */
    if (dbg && atoi(dbg) > 0 && atoi(dbg) <= 64)
        nstreams = atoi(dbg);
    if (c) {
        c->rte = rte;
        c->rank = rte->rank;
        c->size = rte->size;
        c->nstreams = nstreams;
        c->stop_rank = conf->tcp_stop - 1;
        c->stop_startup_rank = conf->tcp_stop_startup - 1;
        c->fail_startup_rank = conf->tcp_fail_startup - 1;
        c->timeout_s = conf->timeout_s > 0 ? conf->timeout_s : 60;
        c->progress = conf->progress;
        c->chunk = chunk;
        c->window = 2 * chunk * (size_t)nstreams;
        if (c->window < MIN_WINDOW)
            c->window = (MIN_WINDOW + chunk - 1) / chunk * chunk;
        if (chunk % 8 == 0 && chunk >= 4096) { /* else refused below, by every rank */
            c->ring = malloc(c->window);
            c->segs = calloc(4 * (size_t)c->size, sizeof *c->segs);
        }
    }
    int mem_ok = c && (chunk % 8 || chunk < 4096 || (c->ring && c->segs));
    /* every rank must cut the data alike and open as many streams (binaries of another
     * version, with other defaults): misplaced bytes, or hellos refused until the deadline.
     * A rank that could not allocate says so here too (-1), so that every rank makes the same
     * MPI calls. */
    long long lo2[2] = {mem_ok ? (long long)chunk : -1, nstreams}, hi2[2] = {(long long)chunk, nstreams};
    if (cc_rte_allreduce_ll(rte, lo2, 2, CC_RTE_MIN) != CC_OK ||
        cc_rte_allreduce_ll(rte, hi2, 2, CC_RTE_MAX) != CC_OK) {
        st = CC_EPEER;
        goto fail;
    }
    long long lo = lo2[0], hi = hi2[0];
    if (lo >= 0 && lo2[1] != hi2[1]) {
        cc_errbuf(err, errlen, "the ranks open different numbers of streams per peer (%lld and "
                  "%lld: ccbench binaries of different versions?): give every rank the same "
                  "--tcp-streams", lo2[1], hi2[1]);
        st = CC_EUSAGE;
        goto fail;
    }
    if (lo < 0) {
        if (mem_ok) {
            cc_errbuf(err, errlen, CC_BACKEND_PEER_FAILED "could not allocate its buffers");
            st = CC_EPEER;
        } else {
            cc_errbuf(err, errlen, "cannot allocate the %zu-byte staging window (lower "
                      "--tcp-chunk or --tcp-streams)", c ? c->window : 2 * chunk * (size_t)nstreams);
            st = CC_ENOMEM;
        }
        goto fail;
    }
    if (lo != hi) {
        cc_errbuf(err, errlen, "the ranks cut data into different chunks (%lld and %lld bytes: "
                  "ccbench binaries of different versions?): give every rank the same "
                  "--tcp-chunk", lo, hi);
        st = CC_EUSAGE;
        goto fail;
    }
    if (chunk % 8 || chunk < 4096) {
        cc_errbuf(err, errlen, "--tcp-chunk '%zu' must be a multiple of 8 bytes and at least 4K",
                  chunk);
        st = CC_EUSAGE;
        goto fail;
    }
    if ((st = cc_tcp_connect_all(c, conf, err, errlen)) != CC_OK)
        goto fail;
    cc_info("tcp: rank 0 uses interface %s (%s); %d stream%s per peer, %s chunks, %s window%s",
            c->addrs[0].ifname, cc_tcp_addr_str(&c->addrs[0], 0, ip, sizeof ip), c->nstreams,
            c->nstreams > 1 ? "s" : "", cc_size_format(c->chunk, csz, sizeof csz),
            cc_size_format(c->window, wsz, sizeof wsz), conf->tcp_if ? "" : " (default choice)");
    *ctx = c;
    return CC_OK;
fail:
    if (c) {
        free(c->ring);
        free(c->segs);
        free(c);
    }
    return st;
}

static void tcp_fini(void *ctx)
{
    struct tcp_ctx *c = ctx;
    if (c->rejected)
        cc_info("tcp: %ld foreign connection%s rejected", c->rejected, c->rejected > 1 ? "s" : "");
    cc_tcp_close_all(c);
    free(c->ring);
    free(c->work);
    free(c->segs);
    free(c);
}

static cc_status tcp_alloc(void *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0)
        return CC_ENOMEM;
    memset(p, 0, bytes); /* touch every page before timing */
    *ptr = p;
    return CC_OK;
}

static void tcp_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
}

static cc_status tcp_copy(void *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    memmove(dst, src, bytes);
    return CC_OK;
}

static cc_status tcp_sync(void *ctx)
{
    (void)ctx;
    return CC_OK; /* run() completes the collective on this rank */
}

static void tcp_describe(void *ctx, json_t *o)
{
    struct tcp_ctx *c = ctx;
    json_t *ranks = json_array();
    char ep[80];
    for (int i = 0; i < c->size; i++) {
        json_t *r = json_object();
        cc_tcp_addr_str(&c->addrs[i], 0, ep, sizeof ep);
        json_object_set_new(r, "rank", json_integer(i));
        json_object_set_new(r, "interface", json_string(c->addrs[i].ifname));
        json_object_set_new(r, "listen", json_string(ep));
        json_array_append_new(ranks, r);
    }
    json_object_set_new(o, "tcp_interface", json_string(c->addrs[c->rank].ifname));
    json_object_set_new(o, "tcp_streams", json_integer(c->nstreams));
    json_object_set_new(o, "tcp_chunk_bytes", json_integer((json_int_t)c->chunk));
    json_object_set_new(o, "tcp_window_bytes", json_integer((json_int_t)c->window));
    json_object_set_new(o, "tcp_ranks", ranks);
}

const struct cc_backend cc_backend_tcp = {
    .name = "tcp",
    .summary = "ccbench's own pipelined ring/chain collectives over TCP sockets (host memory)",
    .built = 1,
    .mem = CC_MEM_HOST,
    .init = tcp_init,
    .fini = tcp_fini,
    .alloc = tcp_alloc,
    .free = tcp_free,
    .copy_in = tcp_copy,
    .copy_out = tcp_copy,
    .run = tcp_run,
    .sync = tcp_sync,
    .describe = tcp_describe,
};
