/* tcp_conn.h - the tcp backend's connections: interface choice, listening socket, the
 * handshake that opens K sockets per pair of ranks once at start-up, and the service of
 * strangers (connections that arrive later are read, logged and dropped).
 * Internal to the tcp backend (tcp.c runs the collectives over these sockets). */
#ifndef CC_BACKEND_TCP_CONN_H
#define CC_BACKEND_TCP_CONN_H

#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "net/wire.h"

/* Connections whose hello is being read at once: at start-up every connection still expected
 * from a higher rank (ranks x --tcp-streams of them may sit in the listen backlog together),
 * plus this many strangers; when the table is full one is closed, a likely stranger first
 * (pend_evict in tcp_conn.c). */
#define TCP_MAX_PENDING 16

/* One socket to a peer. The per-collective fields are (re)set by tcp.c for each call. */
struct tcp_sock {
    int fd, peer, stream;
    struct tcp_flow *sf, *rf;            /* current send / receive flow using it, or NULL */
    uint8_t shdr[CC_WIRE_FRAME_BYTES], rhdr[CC_WIRE_FRAME_BYTES];
    size_t shdr_n, rhdr_n;               /* frame header bytes sent / received */
    uint64_t sbytes, sdone, rbytes, rdone; /* payload bytes of this socket: due and moved */
};

struct tcp_addr {        /* what each rank publishes (allgathered) */
    uint8_t family;      /* 4 or 6 */
    uint8_t pad[3];
    uint8_t ip[16];      /* IPv4 in the first 4 bytes, or IPv6; network order */
    uint16_t port;       /* network order */
    uint16_t pad2;
    char ifname[16];
};

/* "198.18.0.3:40123" or "[fd00:cc::3]:40123" (without_port: no port, no brackets). */
const char *cc_tcp_addr_str(const struct tcp_addr *a, int without_port, char *buf, size_t len);

struct tcp_pending {     /* an accepted connection whose hello is not complete yet */
    int fd;
    int from_peer;       /* from the address of a rank expected to connect: worked out by
                            pend_evict for each pending connection when the table is full */
    int sent;            /* has sent something (read, or waiting in the socket): likewise */
    struct tcp_addr addr;
    uint8_t buf[CC_WIRE_HELLO_BYTES];
    size_t got;
    double deadline;
    char from[80];
};

struct tcp_ctx {
    const struct cc_rte *rte;
    int rank, size, nstreams;
    int stop_rank;                 /* --debug-stop (tests), -1 off */
    int stop_startup_rank;         /* --debug-stop-startup (tests), -1 off */
    int fail_startup_rank;         /* --debug-fail-startup (tests), -1 off */
    double timeout_s;
    void (*progress)(void);        /* cc_backend_conf.progress */
    double told;                   /* when progress was last called (across transfers: an
                                      all-to-all is one transfer per peer) */
    size_t chunk, window;          /* stripe/pipeline unit; receive staging ring bytes */
    struct cc_wire_hello me;       /* token, job id, rank and counts of this job */
    int listen_fd;
    struct tcp_addr *addrs;        /* [size] */
    struct tcp_sock *socks;        /* [size * nstreams]; entries of this rank unused */
    int accepting;                 /* start-up: hellos from higher ranks are adopted */
    struct cc_rte_alarm *alarm;    /* start-up: raised by a rank that gave up (NULL: none) */
    struct tcp_pending *pend;      /* [pend_alloc], grown as connections arrive */
    int npend, pend_alloc, pend_cap; /* pend_cap: TCP_MAX_PENDING + connections from higher
                                        ranks */
    int expected_left;             /* start-up: sockets of higher ranks not adopted yet */
    long rejected;                 /* strangers dropped so far */
    int accept_errno;              /* accept(2) failed for a reason other than a lost peer
                                      (EMFILE, ...): start-up fails with it */
    double accept_paused_until;    /* after such a failure the listener rests a moment (a
                                      readable listener would otherwise spin the poll) */
    struct pollfd *pfds;           /* scratch for poll: 1 + pend_cap + sockets */
    /* collective state (tcp.c) */
    uint32_t seq;
    char what[96];                 /* "allreduce of 64M" for messages */
    char *ring;                    /* receive staging for reductions, `window` bytes */
    char *work;                    /* scratch for partial results */
    size_t work_bytes;
    struct tcp_seg *segs;          /* [4 * size] segment lists of the current flows */
};

static inline struct tcp_sock *tcp_sock_of(struct tcp_ctx *c, int peer, int stream)
{
    return &c->socks[peer * c->nstreams + stream];
}

/* Open everything: choose the interface, listen, exchange addresses and the token over the
 * rte, connect and handshake. One-line reason in err on failure (ctx left cleaned up). */
cc_status cc_tcp_connect_all(struct tcp_ctx *c, const struct cc_backend_conf *conf, char *err,
                             size_t errlen);
/* Close every socket and free what cc_tcp_connect_all allocated. */
void cc_tcp_close_all(struct tcp_ctx *c);

/* "rank 2 (host, 198.18.0.3:40123)" or "rank 2 (host, [fd00:cc::3]:40123)" */
const char *cc_tcp_peer_desc(const struct tcp_ctx *c, int peer, char *buf, size_t len);

/* What the kernel knows of a peer's host on socket fd (TCP_INFO), for a stall's message:
 * 1 when the host has stopped answering (data sent and not acknowledged, or two keepalive
 * probes unanswered), 0 when it still acknowledges (a probe answered after the last data:
 * the link is up, and the rank itself is stuck, busy, or waits on another), -1 when the
 * kernel cannot say (no probe yet, or no TCP_INFO). *ack_s: seconds since the host's last
 * acknowledgement. */
int cc_tcp_host_silent(int fd, double *ack_s);

/* Strangers: add the listener and pending connections to pfds (returns how many were added),
 * then after poll() serve them (accept, read hellos, log and drop). */
int cc_tcp_strangers_poll(struct tcp_ctx *c, struct pollfd *pfds);
void cc_tcp_strangers_serve(struct tcp_ctx *c, const struct pollfd *pfds, int n);
/* Milliseconds until the first pending stranger's deadline (or `cap`). */
int cc_tcp_strangers_wait_ms(const struct tcp_ctx *c, int cap);

#endif
