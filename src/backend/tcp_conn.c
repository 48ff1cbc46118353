/* tcp_conn.c - start-up of the tcp backend: interface, listener, token, connections.
 *
 * Order (no rank waits on another in a cycle): every rank listens, the addresses are
 * allgathered over the rte and rank 0's random token and job id broadcast; then each rank
 * connects to every lower rank (the listener's kernel backlog completes these even before
 * the peer accepts) and sends a hello per stream, accepts the hellos of every higher rank
 * and answers each with its own hello, and finally reads the answers of the lower ranks.
 * Every wait has the --timeout deadline; strangers met meanwhile are logged and dropped. */
#include "backend/tcp_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/grow.h"
#include "core/log.h"
#include "net/ifmatch.h"

#define SOCK_BUF_BYTES (4 << 20)
#define STRANGER_MAX_S 10.0 /* a stranger gets at most this long to send its hello */

const char *cc_tcp_addr_str(const struct tcp_addr *a, int without_port, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int af = a->family == 6 ? AF_INET6 : AF_INET;
    inet_ntop(af, a->ip, ip, sizeof ip);
    if (without_port)
        snprintf(buf, len, "%s", ip);
    else
        snprintf(buf, len, af == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, (unsigned)ntohs(a->port));
    return buf;
}

const char *cc_tcp_peer_desc(const struct tcp_ctx *c, int peer, char *buf, size_t len)
{
    char ep[80];
    snprintf(buf, len, "rank %d (%s, %s)", peer, c->rte->hosts[peer],
             cc_tcp_addr_str(&c->addrs[peer], 0, ep, sizeof ep));
    return buf;
}

int cc_tcp_host_silent(int fd, double *ack_s)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
        len < offsetof(struct tcp_info, tcpi_last_ack_recv) + sizeof ti.tcpi_last_ack_recv)
        return -1;
    uint32_t ack = ti.tcpi_last_ack_recv; /* ms */
    *ack_s = ack / 1000.0;
    /* silent: nothing acknowledged for a second while data sent waits for it or probes go
     * unanswered (a host that still sends window-0 acknowledgements is not silent) */
    if (ack >= 1000 && (ti.tcpi_unacked > 0 || ti.tcpi_probes >= 2))
        return 1;
    /* alive: the latest probe answered, recently (within a keepalive interval, or the current
     * window-probe interval, rto << backoff), and after the last data either way, so it
     * answered a probe (a host does so even while its rank reads nothing); otherwise (a
     * deadline shorter than the first probe, an answer that may predate a cut) unknown */
    uint32_t last_data = ti.tcpi_last_data_recv < ti.tcpi_last_data_sent ? ti.tcpi_last_data_recv
                                                                          : ti.tcpi_last_data_sent;
    uint32_t rto_ms = ti.tcpi_rto / 1000, probe_ms = 1500;
    if (ti.tcpi_backoff < 16 && rto_ms < 120000 && (rto_ms << ti.tcpi_backoff) + 500 > probe_ms)
        probe_ms = (rto_ms << ti.tcpi_backoff) + 500;
    return ti.tcpi_probes == 0 && ack <= probe_ms && ack + 250 < last_data ? 0 : -1;
}

/* The socket address of a published address. */
static socklen_t to_sockaddr(const struct tcp_addr *a, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (a->family == 6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
        s6->sin6_family = AF_INET6;
        memcpy(&s6->sin6_addr, a->ip, 16);
        s6->sin6_port = a->port;
        return sizeof *s6;
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    s4->sin_family = AF_INET;
    memcpy(&s4->sin_addr, a->ip, 4);
    s4->sin_port = a->port;
    return sizeof *s4;
}

/* The reverse: family, address and port of an AF_INET or AF_INET6 socket address (the
 * interface name is left as it is). */
static void from_sockaddr(const struct sockaddr *sa, struct tcp_addr *a)
{
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
        a->family = 6, a->port = s6->sin6_port;
        memcpy(a->ip, &s6->sin6_addr, 16);
    } else {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
        a->family = 4, a->port = s4->sin_port;
        memcpy(a->ip, &s4->sin_addr, 4);
    }
}

/* ---- interface --------------------------------------------------------------------------- */

/* An address ccbench can listen on and other hosts can reach: on an interface that is up
 * and running (a carrier: a bridge with nothing attached or an unplugged port is not), IPv4,
 * or IPv6 that is not link-local (which would need the peer's own interface index) nor
 * IPv4-mapped. */
static int usable(const struct ifaddrs *i, int af)
{
    if (!i->ifa_addr || (i->ifa_flags & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING) ||
        i->ifa_addr->sa_family != af)
        return 0;
    if (af == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
        return !IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_V4MAPPED(a);
    }
    return 1;
}

/* An IPv4 link-local address (169.254/16): a BMC's USB NIC often has the same one on every
 * host, and other hosts cannot route to it. */
static int link_local4(const struct ifaddrs *i)
{
    const uint8_t *a = (const uint8_t *)&((const struct sockaddr_in *)i->ifa_addr)->sin_addr;
    return i->ifa_addr->sa_family == AF_INET && a[0] == 169 && a[1] == 254;
}

/* The first interface (in the kernel's order) matching spec with a usable address of family
 * af; with loop set (and no spec), the first loopback one instead. Without a spec, IPv4
 * link-local addresses are passed over (a --tcp-if that names the interface takes them). */
static const struct ifaddrs *pick_in(const struct ifaddrs *ifs, const char *spec, int af, int loop)
{
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!usable(i, af) || (!spec && link_local4(i)))
            continue;
        if (loop ? (i->ifa_flags & IFF_LOOPBACK) != 0
                 : cc_if_match(spec ? spec : CC_IF_DEFAULT, i->ifa_name))
            return i;
    }
    return NULL;
}

/* family: 4, 6, or 0 (NCCL_SOCKET_FAMILY=AF_INET/AF_INET6 if set, else IPv4 and then IPv6:
 * the first matching interface with an IPv4 address wins; IPv6 only when none has one).
 * nnodes: the job's hosts; loopback is a fallback only for a job on one host. */
static cc_status choose_interface(const char *spec, int family, int nnodes, struct tcp_addr *out,
                                  char *err, size_t errlen)
{
    struct ifaddrs *ifs = NULL;
    char seen[256] = "";
    const struct ifaddrs *pick = NULL;
    const char *env = getenv("NCCL_SOCKET_FAMILY");
    if (spec && cc_if_spec_check(spec, err, errlen) != CC_OK)
        return CC_EUSAGE;
    if (family == 0 && env && *env) {
        if (strcmp(env, "AF_INET") == 0)
            family = 4;
        else if (strcmp(env, "AF_INET6") == 0)
            family = 6;
        else {
            cc_errbuf(err, errlen, "NCCL_SOCKET_FAMILY '%s' is neither AF_INET nor AF_INET6", env);
            return CC_EUSAGE;
        }
    }
    if (getifaddrs(&ifs) != 0) {
        cc_errbuf(err, errlen, "cannot list network interfaces: %s", strerror(errno));
        return CC_ESYS;
    }
    for (const struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!(usable(i, AF_INET) || usable(i, AF_INET6)) || strstr(seen, i->ifa_name))
            continue; /* (a name that is part of another is listed once: fine for a message) */
        size_t n = strlen(seen);
        snprintf(seen + n, sizeof seen - n, "%s%s", n ? ", " : "", i->ifa_name);
    }
    /* an IPv4 interface, else a routable IPv6 one, and loopback (default --tcp-if only) when
     * nothing else is up: a laptop or a single host (the other hosts' loopback is their own) */
    for (int loop = 0; loop <= (spec || nnodes > 1 ? 0 : 1) && !pick; loop++) {
        if (family != 6)
            pick = pick_in(ifs, spec, AF_INET, loop);
        if (!pick && family != 4)
            pick = pick_in(ifs, spec, AF_INET6, loop);
    }
    if (!pick) {
        cc_errbuf(err, errlen, "no interface with %s address matches --tcp-if '%s' (up and "
                  "running: %s)%s",
                  family == 4 ? "an IPv4" : family == 6 ? "a routable IPv6" : "an IPv4 or IPv6",
                  spec ? spec : CC_IF_DEFAULT, seen[0] ? seen : "none",
                  !spec && nnodes > 1 ? "; loopback cannot reach the job's other hosts" : "");
        freeifaddrs(ifs);
        return CC_ENODEV;
    }
    memset(out, 0, sizeof *out);
    from_sockaddr(pick->ifa_addr, out); /* port 0 until the listener is bound */
    snprintf(out->ifname, sizeof out->ifname, "%s", pick->ifa_name);
    freeifaddrs(ifs);
    return CC_OK;
}

/* This rank's address published by a rank of another host as well (a BMC's USB NIC or a
 * container's bridge can give every host the same one): a connection to it would reach this
 * host, not that one. Said at once rather than as a refused or crossed connection. */
static cc_status unique_address(const struct tcp_ctx *c, char *err, size_t errlen)
{
    const struct tcp_addr *me = &c->addrs[c->rank];
    size_t len = me->family == 6 ? 16 : 4;
    for (int j = 0; j < c->size; j++)
        if (c->rte->node_of[j] != c->rte->node_of[c->rank] && c->addrs[j].family == me->family &&
            memcmp(c->addrs[j].ip, me->ip, len) == 0) {
            char ip[64];
            cc_errbuf(err, errlen, "rank %d on %s publishes this host's address %s (interface "
                      "%s) as well: an address more than one host has (a BMC's USB NIC, a "
                      "container's bridge); choose another interface with --tcp-if", j,
                      c->rte->hosts[j], cc_tcp_addr_str(me, 1, ip, sizeof ip), me->ifname);
            return CC_ENODEV;
        }
    return CC_OK;
}

/* ---- socket options and waiting ------------------------------------------------------------ */

static void set_buffers(int fd)
{
    int b = SOCK_BUF_BYTES;
    /* the FORCE variants pass the rmem_max/wmem_max caps (root); else keep autotuning */
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &b, sizeof b) != 0)
        cc_debug("tcp: SO_SNDBUFFORCE refused (%s); kernel autotuning kept", strerror(errno));
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &b, sizeof b) != 0)
        cc_debug("tcp: SO_RCVBUFFORCE refused (%s); kernel autotuning kept", strerror(errno));
}

/* Data socket options: no Nagle delay; keepalive every second and a user timeout of the
 * deadline and a second, so a cut link errors out every socket to that host (idle ones too)
 * about when the collective's own deadline fires. Not less: the kernel also applies the user
 * timeout to a peer whose receive window stays closed, so a peer that only reads late (busy,
 * or behind the others) would be cut off as lost; a stall is the deadline's to report (it
 * says whether the peer's host still answers). */
static void set_data_opts(int fd, double timeout_s)
{
    int one = 1, idle = 1, cnt = 3;
    unsigned ut = (unsigned)(timeout_s * 1000) + 1000;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof ut);
}

static int ms_until(double deadline)
{
    double left = deadline - cc_now();
    return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

/* poll(2) for at most ms. During start-up (c->alarm set) the wait is cut into slices of
 * ALARM_SLICE_MS so that a rank that gave up is seen at once: then -2. */
#define ALARM_SLICE_MS 20
static int poll_watch(struct tcp_ctx *c, struct pollfd *p, nfds_t n, int ms)
{
    while (c && c->alarm) {
        if (cc_rte_alarm_test(c->alarm) >= 0)
            return -2;
        int slice = ms < ALARM_SLICE_MS ? ms : ALARM_SLICE_MS;
        int r = poll(p, n, slice);
        if (r != 0 || slice == ms)
            return r;
        ms -= slice;
    }
    return poll(p, n, ms);
}

/* Move exactly len bytes on a non-blocking socket before the deadline (c: for the alarm;
 * may be NULL). ECANCELED in *err when another rank gave up meanwhile. */
static cc_status io_full(struct tcp_ctx *c, int fd, void *buf, size_t len, int out,
                         double deadline, int *err)
{
    size_t done = 0;
    *err = 0;
    while (done < len) {
        ssize_t r = out ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
                        : recv(fd, (char *)buf + done, len - done, 0);
        if (r > 0) {
            done += (size_t)r;
            continue;
        }
        if (r == 0) {
            *err = ECONNRESET;
            return CC_EPEER;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            *err = errno;
            return CC_EPEER;
        }
        struct pollfd p = {fd, out ? POLLOUT : POLLIN, 0};
        int ms = ms_until(deadline), pr = ms ? poll_watch(c, &p, 1, ms) : 0;
        if (pr == -2) {
            *err = ECANCELED;
            return CC_EPEER;
        }
        if (pr == 0) {
            *err = ETIMEDOUT;
            return CC_ETIMEOUT;
        }
    }
    return CC_OK;
}

/* ---- strangers ----------------------------------------------------------------------------- */

static void pend_drop(struct tcp_ctx *c, int i, const char *why)
{
    cc_warn("tcp: rejected connection from %s: %s", c->pend[i].from, why);
    close(c->pend[i].fd);
    c->rejected++;
    c->pend[i] = c->pend[--c->npend];
}

/* How many connections may be in handshake at once: at start-up, one per socket still
 * expected from a higher rank plus TCP_MAX_PENDING strangers; afterwards only strangers. */
static int pend_limit(const struct tcp_ctx *c)
{
    int n = TCP_MAX_PENDING + (c->accepting ? c->expected_left : 0);
    return n < c->pend_cap ? n : c->pend_cap;
}

/* Does a connection come from the address of a higher rank that has yet to connect? */
static int from_expected_peer(const struct tcp_ctx *c, const struct tcp_addr *from)
{
    size_t len = from->family == 6 ? 16 : 4;
    for (int j = c->rank + 1; c->accepting && j < c->size; j++) {
        if (c->addrs[j].family != from->family || memcmp(c->addrs[j].ip, from->ip, len) != 0)
            continue;
        for (int k = 0; k < c->nstreams; k++)
            if (c->socks[j * c->nstreams + k].fd < 0)
                return 1;
    }
    return 0;
}

/* The table is full: close the oldest connection, preferring one that cannot be a rank's (a
 * flood of strangers must not push out a rank's hello). A rank sends its hello as soon as it
 * connects, so a connection that has sent nothing (read or still in its socket: connections
 * accepted in one burst have not been read yet) is suspected first, then one from an address
 * no expected rank listens on (a multi-homed rank may connect from another one), then any. */
static void pend_evict(struct tcp_ctx *c)
{
    int victim = -1;
    for (int i = 0; i < c->npend; i++) { /* rare (a full table): only now is it worth a scan */
        struct tcp_pending *q = &c->pend[i];
        int waiting = 0;
        q->from_peer = from_expected_peer(c, &q->addr);
        q->sent = q->got > 0 || (ioctl(q->fd, FIONREAD, &waiting) == 0 && waiting > 0);
    }
    for (int pass = 0; pass < 4 && victim < 0; pass++)
        for (int i = 0; i < c->npend; i++) {
            const struct tcp_pending *q = &c->pend[i];
            int suspect = pass == 0 ? !q->sent && !q->from_peer
                          : pass == 1 ? !q->sent
                          : pass == 2 ? !q->from_peer
                                      : 1;
            if (suspect && (victim < 0 || q->deadline < c->pend[victim].deadline))
                victim = i;
        }
    pend_drop(c, victim, "too many connections in handshake");
}

static void accept_new(struct tcp_ctx *c)
{
    for (;;) {
        struct sockaddr_storage sa;
        socklen_t sl = sizeof sa;
        int fd = accept(c->listen_fd, (struct sockaddr *)&sa, &sl);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
                errno != ECONNABORTED && errno != EPROTO) {
                if (!c->accept_errno && !c->accepting)
                    cc_warn("tcp: rank %d cannot accept connections: %s", c->rank,
                            strerror(errno));
                c->accept_errno = errno;
                c->accept_paused_until = cc_now() + 0.1;
            }
            return;
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        while (c->npend >= pend_limit(c))
            pend_evict(c);
        struct tcp_pending *np = cc_grow(c->pend, &c->pend_alloc, c->npend, sizeof *c->pend, 32);
        if (!np) {
            close(fd); /* out of memory: the peer retries until its deadline */
            return;
        }
        c->pend = np;
        struct tcp_pending *p = &c->pend[c->npend++];
        memset(p, 0, sizeof *p);
        p->fd = fd;
        p->deadline = cc_now() + (c->timeout_s < STRANGER_MAX_S ? c->timeout_s : STRANGER_MAX_S);
        from_sockaddr((const struct sockaddr *)&sa, &p->addr);
        cc_tcp_addr_str(&p->addr, 0, p->from, sizeof p->from);
    }
}

/* A complete hello from pending i: adopt it (start-up, expected rank and stream) or drop it. */
static void pend_judge(struct tcp_ctx *c, int i)
{
    struct tcp_pending *p = &c->pend[i];
    struct cc_wire_hello got;
    char why[160];
    if (cc_wire_hello_check(p->buf, &c->me, &got, why, sizeof why) != CC_OK)
        return pend_drop(c, i, why);
    struct tcp_sock *s = tcp_sock_of(c, (int)got.rank, (int)got.stream);
    if (!c->accepting || (int)got.rank <= c->rank || s->fd >= 0) {
        snprintf(why, sizeof why, "%s hello of rank %u stream %u",
                 c->accepting ? "unexpected or duplicate" : "connection after start-up:",
                 (unsigned)got.rank, (unsigned)got.stream);
        return pend_drop(c, i, why);
    }
    uint8_t ack[CC_WIRE_HELLO_BYTES];
    struct cc_wire_hello mine = c->me;
    int e;
    mine.stream = got.stream;
    cc_wire_hello_pack(&mine, ack);
    if (io_full(c, p->fd, ack, sizeof ack, 1, cc_now() + c->timeout_s, &e) != CC_OK) {
        snprintf(why, sizeof why, "cannot answer rank %u: %s", (unsigned)got.rank, strerror(e));
        return pend_drop(c, i, why);
    }
    set_data_opts(p->fd, c->timeout_s);
    s->fd = p->fd;
    c->expected_left--;
    c->pend[i] = c->pend[--c->npend];
}

int cc_tcp_strangers_poll(struct tcp_ctx *c, struct pollfd *pfds)
{
    /* (a negative fd is skipped by poll: the listener rests after accept failed) */
    pfds[0] = (struct pollfd){cc_now() < c->accept_paused_until ? -1 : c->listen_fd, POLLIN, 0};
    for (int i = 0; i < c->npend; i++)
        pfds[1 + i] = (struct pollfd){c->pend[i].fd, POLLIN, 0};
    return 1 + c->npend;
}

void cc_tcp_strangers_serve(struct tcp_ctx *c, const struct pollfd *pfds, int n)
{
    double now = cc_now();
    /* walk backwards: dropping entry i moves the last one into its place */
    for (int i = (n - 1 < c->npend ? n - 1 : c->npend) - 1; i >= 0; i--) {
        struct tcp_pending *p = &c->pend[i];
        if (pfds[1 + i].revents) {
            ssize_t r = recv(p->fd, p->buf + p->got, sizeof p->buf - p->got, 0);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                pend_drop(c, i, "closed before completing the handshake");
                continue;
            }
            if (r > 0 && (p->got += (size_t)r) == sizeof p->buf) {
                pend_judge(c, i);
                continue;
            }
        }
        if (now > p->deadline)
            pend_drop(c, i, "no handshake before the deadline");
    }
    if (pfds[0].revents)
        accept_new(c);
}

int cc_tcp_strangers_wait_ms(const struct tcp_ctx *c, int cap)
{
    for (int i = 0; i < c->npend; i++) {
        int ms = ms_until(c->pend[i].deadline);
        if (ms < cap)
            cap = ms;
    }
    return cap;
}

/* ---- start-up ------------------------------------------------------------------------------ */

static cc_status make_listener(struct tcp_ctx *c, char *err, size_t errlen)
{
    struct tcp_addr *me = &c->addrs[c->rank];
    struct sockaddr_storage sa;
    socklen_t sl = to_sockaddr(me, &sa);
    int one = 1;
    c->listen_fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->listen_fd < 0) {
        cc_errbuf(err, errlen, "cannot create a socket: %s", strerror(errno));
        return CC_ESYS;
    }
    setsockopt(c->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    set_buffers(c->listen_fd); /* inherited by accepted sockets */
    if (bind(c->listen_fd, (struct sockaddr *)&sa, sl) != 0 ||
        listen(c->listen_fd, SOMAXCONN) != 0 ||
        getsockname(c->listen_fd, (struct sockaddr *)&sa, &sl) != 0) {
        char ip[INET6_ADDRSTRLEN + 8];
        cc_errbuf(err, errlen, "cannot listen on %s (%s): %s",
                  cc_tcp_addr_str(me, 1, ip, sizeof ip), me->ifname, strerror(errno));
        return CC_ESYS;
    }
    from_sockaddr((struct sockaddr *)&sa, me); /* the port the kernel chose */
    return CC_OK;
}

static cc_status make_token(struct tcp_ctx *c, char *err, size_t errlen)
{
    uint8_t rnd[CC_WIRE_TOKEN_BYTES + 8];
    long long ok = 1;
    if (c->rank == 0) {
        ssize_t r = getrandom(rnd, sizeof rnd, 0);
        if (r != (ssize_t)sizeof rnd) {
            int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
            ok = fd >= 0 && read(fd, rnd, sizeof rnd) == (ssize_t)sizeof rnd;
            if (fd >= 0)
                close(fd);
        }
    }
    if (cc_rte_bcast(c->rte, &ok, sizeof ok, 0) != CC_OK ||
        cc_rte_bcast(c->rte, rnd, sizeof rnd, 0) != CC_OK) {
        cc_errbuf(err, errlen, "cannot share the job token over MPI");
        return CC_EPEER;
    }
    if (!ok) {
        cc_errbuf(err, errlen, "rank 0 cannot read random bytes for the job token");
        return CC_ESYS;
    }
    memcpy(c->me.token, rnd, CC_WIRE_TOKEN_BYTES);
    memcpy(&c->me.job, rnd + CC_WIRE_TOKEN_BYTES, 8);
    c->me.rank = (uint32_t)c->rank;
    c->me.nranks = (uint32_t)c->size;
    c->me.nstreams = (uint32_t)c->nstreams;
    return CC_OK;
}

/* Connect to every lower rank and send one hello per stream. */
/* This rank stops waiting: another one raised the alarm (it says why itself). */
static cc_status gave_up(struct tcp_ctx *c, char *err, size_t errlen)
{
    char pd[128];
    cc_errbuf(err, errlen, "stopped waiting: %s gave up during start-up",
              cc_tcp_peer_desc(c, cc_rte_alarm_test(c->alarm), pd, sizeof pd));
    return CC_EPEER;
}

static cc_status connect_lower(struct tcp_ctx *c, double deadline, char *err, size_t errlen)
{
    char pd[128];
    int e = 0, j, k;
    for (j = 0; j < c->rank; j++)
        for (k = 0; k < c->nstreams; k++) {
            struct tcp_sock *s = tcp_sock_of(c, j, k);
            struct sockaddr_storage sa;
            socklen_t sl = to_sockaddr(&c->addrs[j], &sa);
            s->fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (s->fd < 0) {
                cc_errbuf(err, errlen, "cannot create a socket: %s", strerror(errno));
                return CC_ESYS;
            }
            set_buffers(s->fd);
            set_data_opts(s->fd, c->timeout_s);
            if (connect(s->fd, (struct sockaddr *)&sa, sl) != 0 && errno != EINPROGRESS) {
                e = errno;
                goto fail;
            }
        }
    for (j = 0; j < c->rank; j++)
        for (k = 0; k < c->nstreams; k++) {
            struct tcp_sock *s = tcp_sock_of(c, j, k);
            struct pollfd p = {s->fd, POLLOUT, 0};
            socklen_t el = sizeof e;
            int ms = ms_until(deadline), pr = ms ? poll_watch(c, &p, 1, ms) : 0;
            if (pr == -2 || pr == 0) {
                e = pr ? ECANCELED : ETIMEDOUT;
                goto fail;
            }
            if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e != 0)
                goto fail;
            uint8_t h[CC_WIRE_HELLO_BYTES];
            struct cc_wire_hello mine = c->me;
            mine.stream = (uint32_t)k;
            cc_wire_hello_pack(&mine, h);
            if (io_full(c, s->fd, h, sizeof h, 1, deadline, &e) != CC_OK)
                goto fail;
        }
    return CC_OK;
fail:
    if (e == ECANCELED)
        return gave_up(c, err, errlen);
    cc_errbuf(err, errlen, "cannot connect to %s: %s", cc_tcp_peer_desc(c, j, pd, sizeof pd),
              strerror(e));
    return e == ETIMEDOUT ? CC_ETIMEOUT : CC_EPEER;
}

/* Accept the hellos of every higher rank (strangers are dropped meanwhile). */
static cc_status accept_higher(struct tcp_ctx *c, double deadline, char *err, size_t errlen)
{
    char pd[128];
    c->accepting = 1;
    while (c->expected_left > 0) {
        int ms = ms_until(deadline);
        if (ms == 0) {
            int missing = c->rank + 1; /* the lowest rank still missing, named */
            for (int j = c->size - 1; j > c->rank; j--)
                for (int k = 0; k < c->nstreams; k++)
                    if (tcp_sock_of(c, j, k)->fd < 0)
                        missing = j;
            c->accepting = 0;
            cc_errbuf(err, errlen, "timed out after %g s waiting for %s to connect", c->timeout_s,
                      cc_tcp_peer_desc(c, missing, pd, sizeof pd));
            return CC_ETIMEOUT;
        }
        int n = cc_tcp_strangers_poll(c, c->pfds);
        int pr = poll_watch(c, c->pfds, (nfds_t)n, cc_tcp_strangers_wait_ms(c, ms));
        if (pr == -2) {
            c->accepting = 0;
            return gave_up(c, err, errlen);
        }
        if (pr > 0 || c->npend)
            cc_tcp_strangers_serve(c, c->pfds, n);
        if (c->accept_errno) {
            c->accepting = 0;
            cc_errbuf(err, errlen, "cannot accept the connections of higher ranks: %s%s",
                      strerror(c->accept_errno),
                      c->accept_errno == EMFILE || c->accept_errno == ENFILE
                          ? " (raise ulimit -n, or use fewer --tcp-streams)" : "");
            return CC_ESYS;
        }
    }
    c->accepting = 0;
    return CC_OK;
}

/* Read each lower rank's answer and check it is that rank, on that stream, of this job. */
static cc_status read_answers(struct tcp_ctx *c, double deadline, char *err, size_t errlen)
{
    char pd[128], why[160];
    for (int j = 0; j < c->rank; j++)
        for (int k = 0; k < c->nstreams; k++) {
            uint8_t h[CC_WIRE_HELLO_BYTES];
            struct cc_wire_hello got;
            int e;
            cc_status st = io_full(c, tcp_sock_of(c, j, k)->fd, h, sizeof h, 0, deadline, &e);
            if (st != CC_OK && e == ECANCELED)
                return gave_up(c, err, errlen);
            if (st != CC_OK) {
                cc_errbuf(err, errlen, "no handshake answer from %s: %s",
                          cc_tcp_peer_desc(c, j, pd, sizeof pd), strerror(e));
                return st;
            }
            cc_status hs = cc_wire_hello_check(h, &c->me, &got, why, sizeof why);
            if (hs != CC_OK || got.rank != (uint32_t)j || got.stream != (uint32_t)k) {
                if (hs == CC_OK) /* (got is only filled by a check that passed) */
                    snprintf(why, sizeof why, "answered as rank %u stream %u", (unsigned)got.rank,
                             (unsigned)got.stream);
                cc_errbuf(err, errlen, "bad handshake answer from %s: %s",
                          cc_tcp_peer_desc(c, j, pd, sizeof pd), why);
                return CC_EPEER;
            }
        }
    return CC_OK;
}

cc_status cc_tcp_connect_all(struct tcp_ctx *c, const struct cc_backend_conf *conf, char *err,
                             size_t errlen)
{
    size_t nsock = (size_t)c->size * (size_t)c->nstreams;
    struct tcp_addr mine;
    cc_status st;
    long long ok;

    c->listen_fd = -1;
    c->pend_cap = TCP_MAX_PENDING + (c->size - 1 - c->rank) * c->nstreams;
    c->addrs = calloc((size_t)c->size, sizeof *c->addrs);
    c->socks = calloc(nsock, sizeof *c->socks);
    for (size_t i = 0; c->socks && i < nsock; i++)
        c->socks[i].fd = -1; /* before anything can fail: close_all must not close fd 0 */
    c->expected_left = (c->size - 1 - c->rank) * c->nstreams;
    c->pend = NULL, c->npend = c->pend_alloc = 0;
    c->pfds = calloc(1 + (size_t)c->pend_cap + nsock, sizeof *c->pfds);
    memset(&mine, 0, sizeof mine);
    if (!c->addrs || !c->socks || !c->pfds) {
        /* said to the others through the agreement below, not by leaving early: every rank
         * must make the same MPI calls */
        cc_errbuf(err, errlen, "cannot allocate the connection tables (%zu sockets)", nsock);
        st = CC_ENOMEM;
    } else {
        for (size_t i = 0; i < nsock; i++) {
            c->socks[i].fd = -1;
            c->socks[i].peer = (int)(i / (size_t)c->nstreams);
            c->socks[i].stream = (int)(i % (size_t)c->nstreams);
        }
        /* every rank must agree it has an interface and a listener before anyone connects */
        st = choose_interface(conf->tcp_if, conf->tcp_family, c->rte->nnodes, &mine, err,
                              errlen);
        if (st == CC_OK) {
            c->addrs[c->rank] = mine;
            st = make_listener(c, err, errlen);
            mine = c->addrs[c->rank];
        }
    }
    ok = st;
    if (cc_rte_allreduce_ll(c->rte, &ok, 1, CC_RTE_MAX) != CC_OK) {
        cc_errbuf(err, errlen, "cannot exchange addresses over MPI");
        st = CC_EPEER;
    } else if (ok) { /* some rank failed: nobody exchanges addresses */
        if (st == CC_OK) {
            cc_errbuf(err, errlen, CC_BACKEND_PEER_FAILED "could not set up its listener");
            st = (cc_status)ok;
        }
    } else if (cc_rte_allgather(c->rte, &mine, c->addrs, sizeof mine) != CC_OK) {
        cc_errbuf(err, errlen, "cannot exchange addresses over MPI");
        st = CC_EPEER;
    }
    /* a rank that gives up from here on tells the others, which stop waiting for it at once
     * instead of at the deadline (every rank reaches here, or none: st is agreed so far) */
    if (st == CC_OK && cc_rte_alarm_arm(c->rte, &c->alarm) == CC_EPEER) {
        cc_errbuf(err, errlen, "cannot set up the start-up alarm over MPI");
        st = CC_EPEER;
    }
    int armed = st == CC_OK;
    if (st == CC_OK)
        st = make_token(c, err, errlen);
    if (st == CC_OK && c->stop_startup_rank == c->rank)
        raise(SIGSTOP); /* tests: strangers reach the lower ranks while they wait for us */
    double deadline = cc_now() + c->timeout_s;
    int own = st == CC_OK; /* a failure from here on is this rank's alone (not agreed) */
    if (st == CC_OK)
        st = unique_address(c, err, errlen);
    if (st == CC_OK)
        st = connect_lower(c, deadline, err, errlen);
    if (st == CC_OK && c->fail_startup_rank == c->rank) {
        /* tests: a second later, when the ranks that need nothing more from this one are done */
        struct timespec one = {1, 0};
        nanosleep(&one, NULL);
        cc_errbuf(err, errlen, "gave up on purpose (--debug-fail-startup)");
        st = CC_ESYS;
    }
    if (st == CC_OK)
        st = accept_higher(c, deadline, err, errlen);
    if (st == CC_OK)
        st = read_answers(c, deadline, err, errlen);
    if (armed) {
        if (own && st != CC_OK && cc_rte_alarm_test(c->alarm) < 0)
            cc_rte_alarm_raise(c->alarm);
        cc_rte_alarm_settle(c->alarm, deadline + 1.0);
        cc_rte_alarm_disarm(c->rte, c->alarm);
        c->alarm = NULL;
    }
    if (st != CC_OK)
        cc_tcp_close_all(c);
    return st;
}

void cc_tcp_close_all(struct tcp_ctx *c)
{
    size_t nsock = (size_t)c->size * (size_t)c->nstreams;
    for (size_t i = 0; c->socks && i < nsock; i++)
        if (c->socks[i].fd >= 0)
            close(c->socks[i].fd);
    for (int i = 0; i < c->npend; i++)
        close(c->pend[i].fd);
    c->npend = 0;
    if (c->listen_fd >= 0)
        close(c->listen_fd);
    c->listen_fd = -1;
    free(c->addrs);
    free(c->socks);
    free(c->pend);
    free(c->pfds);
    c->addrs = NULL;
    c->socks = NULL;
    c->pend = NULL;
    c->pfds = NULL;
}
