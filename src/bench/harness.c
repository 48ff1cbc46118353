#include "bench/harness.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "core/stats.h"
#include "net/be.h"
#include "net/ifmatch.h"
#include "net/wdwire.h"

/* ---- watchdog ----------------------------------------------------------------------
 * A thread per rank that ends the process when the current operation runs past the timeout.
 * It also keeps a UDP socket (the side channel of net/wdwire.h): when a watchdog fires, it
 * asks every rank's watchdog what that rank is doing and names the rank most likely holding
 * the others up. Rank 0 reports at once; the others wait WD_GRACE_S first, answering, so that
 * rank 0's verdict comes first and no rank is gone before it is asked. */

#define WD_GRACE_S 3.0     /* a rank other than 0 waits this long before it reports */
#define WD_ASK_S 1.0       /* how long a firing rank collects answers */
#define WD_ADDRS 4         /* IPv4 addresses a rank publishes besides loopback */
#define WD_LIST 8          /* culprits named in the verdict */

/* What every rank publishes at wd_connect, packed with explicit offsets (the same bytes on
 * every rank): 0 port u16, 2 address count u8, 8 the addresses (4 bytes each, network order) */
#define WD_CARD_BYTES (8 + 4 * WD_ADDRS)
struct wd_card {
    uint16_t port;           /* 0: no side channel on that rank */
    int naddr;
    uint32_t addr[WD_ADDRS]; /* network byte order */
};

/* cc_watchdog_leave runs in a signal handler too: its atomics must be lock-free */
_Static_assert(__atomic_always_lock_free(sizeof(double), 0), "lock-free 8-byte atomics");

static struct {
    pthread_t thread;
    int running;
    double timeout_s;
    const struct cc_rte *rte;
    /* written by the main thread (or a signal handler on it), read by the watchdog: `since`
     * is stored last with release order, so a reader that sees it sees its what and extra */
    _Atomic double since;         /* start of the current operation, 0 when idle */
    _Atomic double extra;         /* seconds the current operation may take on top */
    const char *_Atomic what;     /* description of the current operation */
    _Atomic double idle_since;    /* when the last operation ended */
    _Atomic uint64_t seq;         /* operations entered (only the main thread adds) */
    atomic_int stop;
    int wake[2];                  /* pipe: cc_watchdog_stop wakes the thread */
    void (*on_fire)(void);
    /* the side channel: the socket is the thread's once it runs; the table is complete when
     * `ready` is set (release) and read-only after */
    int sock;
    atomic_int ready;
    uint64_t job;
    struct wd_card *cards;        /* [size] */
    struct cc_wd_peer *peers;     /* [size], the thread's */
    struct sockaddr_in *via;      /* [size], the thread's: the address a rank answered from at
                                   * start-up (port 0: none yet), the only one asked later */
    const char **hostp;           /* [size] */
    uint32_t round;               /* the thread's current round of questions */
    double asked_start;           /* the thread asked at start-up (0: not yet) */
    int asked_again;              /* and once more, those that had not answered */
    int fired;
} wd = {.wake = {-1, -1}, .sock = -1};

/* The description of a measurement changes per size; the thread reads it to answer, so it
 * is written under a sequence lock (odd: being written). */
static char wd_what[256];
static atomic_uint wd_what_gen;

static void wd_describe(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void wd_describe(const char *fmt, ...)
{
    va_list ap;
    atomic_fetch_add_explicit(&wd_what_gen, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    va_start(ap, fmt);
    vsnprintf(wd_what, sizeof wd_what, fmt, ap);
    va_end(ap);
    atomic_fetch_add_explicit(&wd_what_gen, 1, memory_order_release);
}

/* The thread: a copy of the current description (whole or "?"). */
static void wd_copy_what(char *out, size_t len)
{
    for (int tries = 0; tries < 8; tries++) {
        const char *w = atomic_load_explicit(&wd.what, memory_order_acquire);
        if (w != wd_what) {
            snprintf(out, len, "%s", w ? w : "");
            return;
        }
        unsigned g = atomic_load_explicit(&wd_what_gen, memory_order_acquire);
        if (g & 1u)
            continue;
        size_t i = 0;
        for (; i + 1 < len && i < sizeof wd_what - 1 && wd_what[i]; i++)
            out[i] = wd_what[i];
        out[i] = 0;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&wd_what_gen, memory_order_relaxed) == g)
            return;
    }
    snprintf(out, len, "?");
}

/* This rank's state, as an answer. */
static void wd_state(struct cc_wd_answer *a)
{
    double since = atomic_load_explicit(&wd.since, memory_order_acquire);
    double now = cc_now();
    memset(a, 0, sizeof *a);
    a->job = wd.job;
    a->rank = (uint32_t)wd.rte->rank;
    a->seq = atomic_load_explicit(&wd.seq, memory_order_relaxed);
    a->in_op = since > 0;
    a->fired = wd.fired;
    double idle = atomic_load_explicit(&wd.idle_since, memory_order_relaxed);
    a->secs = since > 0 ? now - since : idle > 0 ? now - idle : 0;
    wd_copy_what(a->what, sizeof a->what);
}

static void wd_send_to(const struct sockaddr_in *sa, const void *msg, size_t len)
{
    ssize_t w = sendto(wd.sock, msg, len, MSG_DONTWAIT, (const struct sockaddr *)sa, sizeof *sa);
    (void)w; /* best effort: a question unanswered is itself the evidence */
}

/* Ask rank r: at the address it answered from at start-up (unless every_addr), else at
 * every address it published (and loopback when it shares this node). */
static void wd_ask(int r, uint32_t round, int every_addr)
{
    const struct wd_card *c = &wd.cards[r];
    struct cc_wd_query q = {wd.job, (uint32_t)wd.rte->rank, round};
    uint8_t msg[CC_WD_QUERY_BYTES];
    struct sockaddr_in sa;
    if (!wd.peers[r].channel || r == wd.rte->rank)
        return;
    cc_wd_query_pack(&q, msg);
    if (wd.via[r].sin_port && !every_addr) {
        wd_send_to(&wd.via[r], msg, sizeof msg);
        return;
    }
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(c->port);
    for (int i = 0; i < c->naddr; i++) {
        sa.sin_addr.s_addr = c->addr[i];
        wd_send_to(&sa, msg, sizeof msg);
    }
    if (!c->naddr || wd.rte->node_of[r] == wd.rte->node_of[wd.rte->rank]) {
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        wd_send_to(&sa, msg, sizeof msg);
    }
}

/* Read what came in: answer questions of this job, record answers to this rank's. */
static void wd_wait(double secs);

/* Ask every other rank: in a round of questions (round > 0) those that have not answered
 * it; at start-up (round 0, only_unreached) those that have not answered then. Paced: 32
 * questions, then 1 ms reading the answers, so that thousands of answers do not overflow the
 * socket's buffer (about 16,000 ranks in half a second). */
static void wd_ask_all(uint32_t round, int only_unreached, int every_addr)
{
    int sent = 0;
    for (int i = 0; i < wd.rte->size; i++) {
        const struct cc_wd_peer *p = &wd.peers[i];
        if (i == wd.rte->rank || (round && p->answered) || (only_unreached && p->reached == 1))
            continue;
        wd_ask(i, round, every_addr);
        if (++sent % 32 == 0)
            wd_wait(0.001);
    }
}

static void wd_serve(void)
{
    uint8_t buf[CC_WD_ANSWER_MAX + 1];
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(wd.sock, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n <= 0)
            return;
        struct cc_wd_query q;
        struct cc_wd_answer a;
        if (cc_wd_query_unpack(buf, (size_t)n, &q) == CC_OK) {
            if (q.job != wd.job || fl != sizeof from)
                continue; /* another job's, or a stranger's */
            wd_state(&a);
            a.round = q.round;
            uint8_t out[CC_WD_ANSWER_MAX];
            wd_send_to(&from, out, cc_wd_answer_pack(&a, out));
        } else if (cc_wd_answer_unpack(buf, (size_t)n, &a) == CC_OK) {
            if (a.job != wd.job || a.rank >= (uint32_t)wd.rte->size)
                continue;
            struct cc_wd_peer *p = &wd.peers[a.rank];
            if (a.round == 0) {
                p->reached = 1;
                if (fl == sizeof from && !wd.via[a.rank].sin_port)
                    wd.via[a.rank] = from;
            }
            else if (a.round == wd.round && !p->answered) {
                p->answered = 1;
                p->a = a;
            }
        }
    }
}

/* Wait up to `secs` for the socket or the stop pipe, serving what comes in. */
static void wd_wait(double secs)
{
    struct pollfd pf[2] = {{wd.wake[0], POLLIN, 0}, {wd.sock, POLLIN, 0}};
    int n = wd.sock >= 0 && atomic_load_explicit(&wd.ready, memory_order_acquire) ? 2 : 1;
    if (poll(pf, (nfds_t)n, (int)(secs * 1000)) <= 0)
        return;
    if (pf[0].revents & POLLIN) {
        char b[16];
        ssize_t r = read(wd.wake[0], b, sizeof b);
        (void)r;
    }
    if (n == 2 && (pf[1].revents & POLLIN))
        wd_serve();
}

/* The firing rank: ask every rank, collect for WD_ASK_S, print the verdict. */
static void wd_investigate(void)
{
    const struct cc_rte *r = wd.rte;
    char line[1024];
    if (wd.sock < 0 || !atomic_load_explicit(&wd.ready, memory_order_acquire) || r->size < 2)
        return;
    wd.round = wd.round < 1 ? 1 : wd.round + 1;
    for (int i = 0; i < r->size; i++)
        wd.peers[i].answered = 0;
    wd.peers[r->rank].answered = 1;
    double t0 = cc_now();
    for (int attempt = 0; attempt < 4; attempt++) {
        int missing = 0;
        for (int i = 0; i < r->size; i++)
            missing |= !wd.peers[i].answered && wd.peers[i].channel;
        if (!missing)
            break;
        wd_ask_all(wd.round, 0, attempt == 3); /* the last try: every address again */
        while (cc_now() - t0 < WD_ASK_S * (attempt + 1) / 4)
            wd_wait(WD_ASK_S / 16);
    }
    wd_state(&wd.peers[r->rank].a);
    cc_wd_verdict(wd.peers, r->size, r->rank, wd.hostp, WD_LIST, line, sizeof line);
    if (line[0])
        cc_err("watchdog: %s", line);
}

static void *watchdog_main(void *arg)
{
    double ready_seen = 0, tick = 0.25;
    (void)arg;
    while (!atomic_load(&wd.stop)) {
        wd_wait(tick);
        tick = 0.25;
        if (atomic_load(&wd.stop))
            break;
        /* rank 0 asks everyone once at start-up: an answer then and none later tells a
         * stopped rank from a firewall; the others ask rank 0, spread over a second by rank
         * (thousands of questions at once would overflow rank 0's socket) */
        int ready = atomic_load_explicit(&wd.ready, memory_order_acquire) && wd.sock >= 0;
        if (ready && !ready_seen)
            ready_seen = cc_now();
        double delay = wd.rte->rank ? 0.004 * (wd.rte->rank % 250) : 0;
        if (ready && !wd.asked_start && cc_now() - ready_seen < delay) {
            tick = delay - (cc_now() - ready_seen);
        } else if (ready && !wd.asked_start) {
            wd.asked_start = cc_now();
            if (wd.rte->rank == 0)
                wd_ask_all(0, 1, 1);
            else
                wd_ask(0, 0, 1);
        } else if (wd.asked_start > 0 && wd.asked_again < 3 &&
                   cc_now() - wd.asked_start > 1.0 + wd.asked_again) {
            wd.asked_again++; /* again to those silent: a datagram may have been lost */
            if (wd.rte->rank == 0)
                wd_ask_all(0, 1, 1);
            else if (wd.peers[0].reached != 1)
                wd_ask(0, 0, 1);
        }
        double since = atomic_load_explicit(&wd.since, memory_order_acquire);
        double extra = atomic_load_explicit(&wd.extra, memory_order_relaxed);
        if (since <= 0 || cc_now() - since <= wd.timeout_s + extra)
            continue;
        wd.fired = 1;
        if (wd.rte->rank != 0) {
            /* rank 0 speaks first: keep answering it, and leave only if still stuck; the others
             * in rank order, so that without rank 0 one verdict comes before the launcher
             * ends the job, not thousands */
            double t0 = cc_now();
            double grace = WD_GRACE_S + 0.1 * (wd.rte->rank < 100 ? wd.rte->rank : 100);
            while (cc_now() - t0 < grace && !atomic_load(&wd.stop))
                wd_wait(0.1);
            if (atomic_load(&wd.stop) ||
                atomic_load_explicit(&wd.since, memory_order_acquire) != since) {
                wd.fired = 0;
                continue;
            }
        }
        char what[CC_WD_WHAT_MAX + 1];
        wd_copy_what(what, sizeof what);
        cc_err("watchdog: rank %d (%s) made no progress for %.0f s in %s; aborting the job "
               "(raise --timeout if this operation is legitimately slow)",
               wd.rte->rank, wd.rte->host, cc_now() - since, what[0] ? what : "?");
        wd_investigate();
        if (wd.on_fire)
            wd.on_fire();
        _exit(cc_status_exit(CC_ETIMEOUT));
    }
    return NULL;
}

void cc_watchdog_start(const struct cc_rte *rte, double timeout_s)
{
    if (wd.running || timeout_s <= 0)
        return;
    wd.rte = rte;
    wd.timeout_s = timeout_s;
    atomic_store(&wd.stop, 0);
    atomic_store(&wd.since, 0.0);
    /* without the pipe (out of descriptors) the thread still ticks; it only ends later */
    if (pipe(wd.wake) != 0)
        wd.wake[0] = wd.wake[1] = -1;
    for (int i = 0; i < 2 && wd.wake[i] >= 0; i++) {
        fcntl(wd.wake[i], F_SETFD, FD_CLOEXEC);
        fcntl(wd.wake[i], F_SETFL, O_NONBLOCK);
    }
    /* the side channel's socket now, so that its port can be published at connect */
    wd.sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (wd.sock >= 0) {
        struct sockaddr_in sa;
        int big = 4 << 20;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_ANY);
        /* room for many answers at once (past net.core.rmem_max only as root) */
#ifdef SO_RCVBUFFORCE
        if (setsockopt(wd.sock, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0)
#endif
            setsockopt(wd.sock, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
        if (bind(wd.sock, (struct sockaddr *)&sa, sizeof sa) != 0) {
            close(wd.sock);
            wd.sock = -1;
        }
    }
    /* signals go to the main thread: the thread's own summary and a handler's never meet on
     * one thread */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (pthread_create(&wd.thread, NULL, watchdog_main, NULL) == 0) {
        wd.running = 1;
    } else {
        cc_warn("watchdog: cannot start its thread: a hang will not be ended or named");
        for (int i = 0; i < 2; i++)
            if (wd.wake[i] >= 0)
                close(wd.wake[i]);
        if (wd.sock >= 0)
            close(wd.sock);
        wd.wake[0] = wd.wake[1] = wd.sock = -1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void card_pack(const struct wd_card *c, uint8_t *out)
{
    memset(out, 0, WD_CARD_BYTES);
    cc_put16(out, c->port);
    out[2] = (uint8_t)c->naddr;
    for (int i = 0; i < c->naddr; i++)
        memcpy(out + 8 + 4 * i, &c->addr[i], 4); /* already in network order */
}

static void card_unpack(const uint8_t *in, struct wd_card *c)
{
    c->port = cc_get16(in);
    c->naddr = in[2] <= WD_ADDRS ? in[2] : WD_ADDRS;
    for (int i = 0; i < c->naddr; i++)
        memcpy(&c->addr[i], in + 8 + 4 * i, 4);
}

cc_status cc_watchdog_connect(const struct cc_rte *rte)
{
    struct wd_card mine = {0};
    uint8_t *all = NULL, card[WD_CARD_BYTES];
    uint64_t job = 0;
    cc_status st;
    /* every rank takes part, watchdog or not: the exchange is a collective */
    if (wd.running && wd.sock >= 0) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        struct ifaddrs *ifs = NULL, *i;
        if (getsockname(wd.sock, (struct sockaddr *)&sa, &sl) == 0)
            mine.port = ntohs(sa.sin_port);
        if (getifaddrs(&ifs) == 0) {
            /* the interfaces the tcp backend would choose first (not docker or virtual bridges,
             * whose addresses repeat on every node), then the others */
            for (int pass = 0; pass < 2; pass++)
                for (i = ifs; i && mine.naddr < WD_ADDRS; i = i->ifa_next)
                    if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                        (i->ifa_flags & IFF_UP) && (i->ifa_flags & IFF_RUNNING) &&
                        !(i->ifa_flags & IFF_LOOPBACK) &&
                        cc_if_match(CC_IF_DEFAULT ",virbr", i->ifa_name) == (pass == 0))
                        mine.addr[mine.naddr++] =
                            ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
            freeifaddrs(ifs);
        }
    }
    if (rte->rank == 0)
        job = ((uint64_t)getpid() << 32) ^ (uint64_t)(cc_now() * 1e9) ^ (uint64_t)(uintptr_t)&job;
    card_pack(&mine, card);
    all = malloc((size_t)rte->size * WD_CARD_BYTES);
    int ok = all != NULL;
    long long okall = ok;
    if ((st = cc_rte_allreduce_ll(rte, &okall, 1, CC_RTE_MIN)) != CC_OK)
        goto out;
    if (!okall) {
        st = CC_OK; /* no side channel anywhere; the watchdog itself still works */
        goto out;
    }
    if ((st = cc_rte_bcast(rte, &job, sizeof job, 0)) != CC_OK ||
        (st = cc_rte_allgather(rte, card, all, WD_CARD_BYTES)) != CC_OK)
        goto out;
    if (!wd.running || wd.sock < 0)
        goto out;
    wd.cards = calloc((size_t)rte->size, sizeof *wd.cards);
    wd.peers = calloc((size_t)rte->size, sizeof *wd.peers);
    wd.hostp = calloc((size_t)rte->size, sizeof *wd.hostp);
    wd.via = calloc((size_t)rte->size, sizeof *wd.via);
    if (!wd.cards || !wd.peers || !wd.hostp || !wd.via)
        goto out; /* not ready: the watchdog works without the side channel */
    for (int r = 0; r < rte->size; r++) {
        struct wd_card *c = &wd.cards[r];
        card_unpack(all + (size_t)r * WD_CARD_BYTES, c);
        /* askable: a port, and an address this rank can use (loopback only on its node) */
        wd.peers[r].node = rte->node_of[r];
        wd.peers[r].channel =
            c->port && (c->naddr > 0 || rte->node_of[r] == rte->node_of[rte->rank]);
        wd.peers[r].reached = rte->rank == 0 || r == 0 ? 0 : -1;
        wd.hostp[r] = rte->hosts[r];
    }
    wd.peers[rte->rank].channel = 1;
    wd.peers[rte->rank].reached = 1;
    wd.job = job;
    atomic_store_explicit(&wd.ready, 1, memory_order_release);
    /* the thread asks at start-up now, not at its next tick: a rank stopped early must have
     * been asked before */
    if (wd.wake[1] >= 0) {
        ssize_t w = write(wd.wake[1], "r", 1);
        (void)w;
    }
out:
    free(all);
    return st;
}

void cc_watchdog_enter(const char *what)
{
    cc_watchdog_enter_longer(what, 0);
}

void cc_watchdog_enter_longer(const char *what, double extra_s)
{
    atomic_store_explicit(&wd.what, what, memory_order_release); /* its text before it */
    atomic_store_explicit(&wd.extra, extra_s > 0 ? extra_s : 0, memory_order_relaxed);
    atomic_store_explicit(&wd.seq, atomic_load_explicit(&wd.seq, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&wd.since, cc_now(), memory_order_release);
}

void cc_watchdog_leave(void)
{
    atomic_store_explicit(&wd.idle_since, cc_now(), memory_order_relaxed);
    atomic_store_explicit(&wd.since, 0.0, memory_order_release);
}

void cc_watchdog_progress(void)
{
    /* only if the operation is still the one loaded: a signal handler's cc_watchdog_leave
     * between the two must not be undone */
    double cur = atomic_load_explicit(&wd.since, memory_order_acquire);
    if (cur != 0.0)
        atomic_compare_exchange_strong_explicit(&wd.since, &cur, cc_now(), memory_order_release,
                                                memory_order_relaxed);
}

void cc_watchdog_on_fire(void (*fn)(void)) { wd.on_fire = fn; }

void cc_watchdog_stop(void)
{
    if (!wd.running)
        return;
    atomic_store(&wd.stop, 1);
    if (wd.wake[1] >= 0) {
        ssize_t w = write(wd.wake[1], "x", 1);
        (void)w;
    }
    pthread_join(wd.thread, NULL);
    wd.running = 0;
    for (int i = 0; i < 2; i++)
        if (wd.wake[i] >= 0)
            close(wd.wake[i]);
    wd.wake[0] = wd.wake[1] = -1;
    if (wd.sock >= 0)
        close(wd.sock);
    wd.sock = -1;
    atomic_store(&wd.ready, 0);
    free(wd.cards);
    free(wd.peers);
    free(wd.hostp);
    free(wd.via);
    wd.via = NULL;
    wd.cards = NULL;
    wd.peers = NULL;
    wd.hostp = NULL;
}

/* ---- validation -------------------------------------------------------------------- */

/* Does one call of `bytes` pass more elements than the backend's count type holds (MPI's
 * int)? Such a size is n/a, and no buffer is allocated for it. */
static int over_call_count(const struct cc_bench_params *p, const struct cc_coll *coll,
                           enum cc_dtype t, size_t bytes)
{
    size_t limit = p->backend->max_call_count, sc, rc;
    if (!limit)
        return 0;
    cc_coll_counts(coll, bytes, t, p->rte->size, &sc, &rc);
    return cc_coll_call_count(coll->id, sc, rc, p->rte->size) > limit;
}

/* Ops to run for a collective and type: the selected valid ones, or one (sum) when the
 * collective takes no op. */
static unsigned ops_for(const struct cc_bench_params *p, const struct cc_coll *coll, enum cc_dtype t)
{
    if (!(coll->flags & CC_COLL_HAS_OP))
        return 1u << CC_SUM;
    unsigned m = 0;
    for (int op = 0; op < CC_OP_COUNT; op++)
        if ((p->op_mask & (1u << op)) && cc_op_valid((enum cc_op)op, t))
            m |= 1u << op;
    return m;
}

/* Why the sizes of a collective must be multiples of its granule, for messages. */
static void granule_rule(const struct cc_coll *coll, enum cc_dtype t, int nranks, char *buf,
                         size_t len)
{
    if (coll->flags & CC_COLL_SPLIT)
        snprintf(buf, len, "%s splits the buffer over the ranks: %zu-byte %s elements x %d ranks",
                 coll->name, cc_dtype_size(t), cc_dtype_name(t), nranks);
    else
        snprintf(buf, len, "the size of one %s element", cc_dtype_name(t));
}

cc_status cc_bench_validate(const struct cc_bench_params *p, int nranks, char *err, size_t errlen)
{
    int has_root = 0, has_inplace = 0;
    if (!p->coll_mask || !p->dtype_mask || !p->op_mask) {
        cc_errbuf(err, errlen, "no collective, datatype or op selected");
        return CC_EUSAGE;
    }
    for (int c = 0; c < CC_COLL_COUNT; c++) {
        if (!(p->coll_mask & (1u << c)))
            continue;
        const struct cc_coll *coll = cc_coll_get((enum cc_coll_id)c);
        int pairs = 0;
        has_root |= !!(coll->flags & CC_COLL_HAS_ROOT);
        has_inplace |= !(coll->flags & CC_COLL_NO_INPLACE);
        for (int t = 0; t < CC_DTYPE_COUNT; t++) {
            if (!(p->dtype_mask & (1u << t)))
                continue;
            if (!ops_for(p, coll, (enum cc_dtype)t))
                continue; /* a type no selected op applies to is skipped, not swept */
            pairs++;
            size_t *sizes, n;
            char why[256] = "", rule[128];
            cc_status st = cc_sweep_expand(&p->sweep, cc_coll_granule(coll, (enum cc_dtype)t, nranks),
                                           &sizes, &n, why, sizeof why);
            if (st != CC_OK) {
                granule_rule(coll, (enum cc_dtype)t, nranks, rule, sizeof rule);
                cc_errbuf(err, errlen, "%s of %s with %d ranks: %s%s%s%s", coll->name,
                          cc_dtype_name((enum cc_dtype)t), nranks, why[0] ? why : cc_status_str(st),
                          st == CC_EINFEASIBLE ? " (" : "", st == CC_EINFEASIBLE ? rule : "",
                          st == CC_EINFEASIBLE ? ")" : "");
                return st;
            }
            free(sizes);
        }
        if (!pairs) {
            cc_errbuf(err, errlen, "op '%s' makes no sense for datatype '%s' (integer averages "
                      "truncate; use a floating-point type or another op)",
                      cc_op_name((enum cc_op)__builtin_ctz(p->op_mask)),
                      cc_dtype_name((enum cc_dtype)__builtin_ctz(p->dtype_mask)));
            return CC_EUSAGE;
        }
    }
    if (has_root && (p->root < 0 || p->root >= nranks)) {
        cc_errbuf(err, errlen, "root %d is not a rank (0 to %d)", p->root, nranks - 1);
        return CC_EUSAGE;
    }
    if (!p->places) {
        cc_errbuf(err, errlen, "neither in-place nor out-of-place selected");
        return CC_EUSAGE;
    }
    if (p->places == 2 && !has_inplace) {
        char names[128] = "";
        size_t w = 0;
        for (int c = 0; c < CC_COLL_COUNT && w < sizeof names; c++)
            if (p->coll_mask & (1u << c)) {
                int k = snprintf(names + w, sizeof names - w, "%s%s", w ? ", " : "",
                                 cc_coll_get((enum cc_coll_id)c)->name);
                w = k < 0 ? sizeof names : w + (size_t)k;
            }
        cc_errbuf(err, errlen, "--inplace leaves nothing to measure: no in-place variant of %s",
                  names);
        return CC_EUSAGE;
    }
    if (p->iters == 0 && p->precision_pct <= 0) {
        cc_errbuf(err, errlen, "--precision must be > 0 when iterations are adaptive");
        return CC_EUSAGE;
    }
    if (p->max_iters > 0 && p->iters > p->max_iters) {
        cc_errbuf(err, errlen, "-n %ld is more than --max-iters %ld (raise --max-iters)", p->iters,
                  p->max_iters);
        return CC_EUSAGE;
    }
    if (p->iters == 0 && p->max_iters > 0 && p->min_iters > p->max_iters) {
        cc_errbuf(err, errlen, "--min-iters %ld is more than --max-iters %ld", p->min_iters,
                  p->max_iters);
        return CC_EUSAGE;
    }
    if (p->corrupt_rank >= nranks) {
        cc_errbuf(err, errlen, "corrupt rank %d is not a rank", p->corrupt_rank);
        return CC_EUSAGE;
    }
    return CC_OK;
}

size_t cc_bench_skipped_pairs(const struct cc_bench_params *p, char *buf, size_t len)
{
    size_t n = 0, w = 0;
    int used = 0; /* does any chosen collective take an op at all */
    if (len)
        buf[0] = 0;
    for (int c = 0; c < CC_COLL_COUNT; c++)
        used |= (p->coll_mask & (1u << c)) &&
                (cc_coll_get((enum cc_coll_id)c)->flags & CC_COLL_HAS_OP);
    for (int op = 0; used && op < CC_OP_COUNT; op++)
        for (int t = 0; t < CC_DTYPE_COUNT; t++) {
            if (!(p->op_mask & (1u << op)) || !(p->dtype_mask & (1u << t)) ||
                cc_op_valid((enum cc_op)op, (enum cc_dtype)t))
                continue;
            if (w < len) {
                int k = snprintf(buf + w, len - w, "%s%s with %s", n ? ", " : "",
                                 cc_op_name((enum cc_op)op), cc_dtype_name((enum cc_dtype)t));
                w = k < 0 ? len : w + (size_t)k;
            }
            n++;
        }
    return n;
}

/* ---- one measurement ----------------------------------------------------------------- */

struct bufs {
    void *a, *b;                 /* backend memory, `bytes` each */
    size_t bytes;
    unsigned char *hsend, *hrecv, *hpoison; /* host staging */
    unsigned char *hshare;       /* shared checks' copies: share_buf_bytes, or NULL when no
                                    shared check runs (-c 0, one rank, no such collective) */
    int *counts;                 /* shared checks' all-to-all: 4 arrays of ranks ints */
    size_t share_round;          /* bytes of output per exchange, the same on every rank */
    double share_min;            /* shared only when count x ranks reaches this */
};

/* A shared check (CC_COLL_SHARED_CHECK) moves at most this many bytes of output per round,
 * so MPI's int counts never overflow and its copies buffer stays small. */
#define SHARE_ROUND_BYTES ((size_t)64 << 20)
/* ...and runs only when a rank checking alone would compute at least this many input values
 * (count x ranks, tens of ms): below it, the exchange's n - 1 steps of latency would cost
 * more than the work they save. */
#define SHARE_MIN_WORK 4194304.0

static size_t share_buf_bytes(size_t maxb, size_t round, int nranks)
{
    return (maxb < round ? maxb : round) + 8 * (size_t)nranks;
}

/* Whether this run checks some output in shares. */
static int shares_checks(const struct cc_bench_params *p)
{
    if (p->check_iters <= 0 || p->rte->size < 2)
        return 0;
    for (int c = 0; c < CC_COLL_COUNT; c++)
        if ((p->coll_mask & (1u << c)) && (cc_colls[c]->flags & CC_COLL_SHARED_CHECK))
            return 1;
    return 0;
}

/* The round size, SHARE_ROUND_BYTES, and the work from which checks are shared,
 * SHARE_MIN_WORK; CCBENCH_DEBUG_SHARE_ROUND (tests) sets a round size and shares every check.
 * The ranks agree on the smallest values, so they make the same exchanges whatever each one's
 * environment says. */
static cc_status share_setup(const struct cc_rte *r, struct bufs *B)
{
    long long v[2] = {SHARE_ROUND_BYTES, (long long)SHARE_MIN_WORK};
    const char *dbg = getenv("CCBENCH_DEBUG_SHARE_ROUND");
    if (dbg && atoll(dbg) > 0) {
        v[0] = atoll(dbg) < v[0] ? atoll(dbg) : v[0];
        v[1] = 0;
    }
    cc_watchdog_enter("agreeing on how checks are shared");
    cc_status st = cc_rte_allreduce_ll(r, v, 2, CC_RTE_MIN);
    cc_watchdog_leave();
    B->share_round = (size_t)v[0];
    B->share_min = (double)v[1];
    return st;
}

static void place_args(const struct cc_coll *coll, const struct cc_coll_ctx *cx, int inplace,
                       const struct bufs *B, struct cc_coll_args *a)
{
    size_t es = cc_dtype_size(cx->dtype);
    char *A = B->a;
    if (!inplace) {
        a->sendbuf = B->a;
        a->recvbuf = B->b;
    } else if (coll->id == CC_ALLGATHER) {
        a->recvbuf = A;
        a->sendbuf = A + coll->inplace_offset(cx) * es;
    } else if (coll->id == CC_REDUCESCATTER) {
        a->sendbuf = A;
        a->recvbuf = A + coll->inplace_offset(cx) * es;
    } else {
        a->sendbuf = a->recvbuf = A;
    }
    a->inplace = inplace;
}

static cc_status one_iteration(const struct cc_bench_params *p, const struct cc_coll_args *a,
                               double *us)
{
    const struct cc_backend *be = p->backend;
    cc_status st;
    if (p->iter_barrier && (st = cc_rte_barrier(p->rte)) != CC_OK)
        return st;
    if (be->timer_record) {
        if ((st = be->timer_record(p->bctx, 0)) != CC_OK || (st = be->run(p->bctx, a)) != CC_OK ||
            (st = be->timer_record(p->bctx, 1)) != CC_OK || (st = be->sync(p->bctx)) != CC_OK)
            return st;
        return be->timer_elapsed_us(p->bctx, 0, 1, us);
    }
    double t0 = cc_now();
    if ((st = be->run(p->bctx, a)) != CC_OK || (st = be->sync(p->bctx)) != CC_OK)
        return st;
    *us = (cc_now() - t0) * 1e6;
    return CC_OK;
}

/* Reduce a batch of per-iteration times across ranks by the time mode. */
static cc_status reduce_times(const struct cc_bench_params *p, double *v, size_t n)
{
    const struct cc_rte *r = p->rte;
    cc_status st;
    switch (p->time_mode) {
    case CC_TIME_RANK0:
        if (r->rank != 0)
            memset(v, 0, n * sizeof *v);
        return cc_rte_allreduce_d(r, v, n, CC_RTE_SUM);
    case CC_TIME_MIN:
        return cc_rte_allreduce_d(r, v, n, CC_RTE_MIN);
    case CC_TIME_MAX:
        return cc_rte_allreduce_d(r, v, n, CC_RTE_MAX);
    default:
        st = cc_rte_allreduce_d(r, v, n, CC_RTE_SUM);
        for (size_t i = 0; i < n; i++)
            v[i] /= r->size;
        return st;
    }
}

static long clampl(double x, long lo, long hi)
{
    if (!(x >= (double)lo))
        return lo;
    if (x > (double)hi)
        return hi;
    return (long)x;
}

/* Check an output that every rank holding one expects alike (allreduce; a reduce's root):
 * rank k receives share k of every such output through the RTE and checks those copies
 * against expected values it computes once, in rounds of SHARE_ROUND_BYTES. Each rank
 * computes count input values instead of count x ranks (results/check-cost.md): at 512
 * ranks, a 64 MB float32 allreduce is checked in well under a second instead of a minute. */
static cc_status check_shared(const struct cc_bench_params *p, const struct cc_coll *coll,
                              const struct cc_coll_ctx *cx, const struct bufs *B,
                              double check_s, long long *wrong)
{
    const struct cc_rte *r = p->rte;
    int n = r->size, rooted = (coll->flags & CC_COLL_HAS_ROOT) != 0;
    int nsrc = rooted ? 1 : n, src0 = rooted ? cx->root : 0;
    int is_src = !rooted || r->rank == cx->root;
    size_t es = cc_dtype_size(cx->dtype), count = cx->recvcount;
    size_t round = B->share_round / es > 0 ? B->share_round / es : 1;
    int *sc = B->counts, *sd = sc + n, *rc = sd + n, *rd = rc + n;
    cc_status st = CC_OK;
    char what[sizeof wd_what];
    memcpy(what, wd_what, sizeof what); /* this thread is the only writer */
    /* a hang in the exchange is named as one, not as the collective's */
    wd_describe("exchanging outputs to check %s", what);

    for (size_t base = 0; base < count && st == CC_OK; base += round) {
        size_t len = count - base < round ? count - base : round, lo, hi, mlo, mhi;
        cc_coll_share(len, n, r->rank, &mlo, &mhi);
        for (int k = 0; k < n; k++) {
            cc_coll_share(len, n, k, &lo, &hi);
            sc[k] = is_src ? (int)((hi - lo) * es) : 0;
            sd[k] = (int)(lo * es);
            int from = rooted ? (k == cx->root) : 1;
            rc[k] = from ? (int)((mhi - mlo) * es) : 0;
            rd[k] = from ? (int)((size_t)(rooted ? 0 : k) * (mhi - mlo) * es) : 0;
        }
        /* a peer may still be copying its output out, or checking its share of the last
         * round: host work proportional to the data */
        cc_watchdog_enter_longer(wd_what, check_s);
        st = cc_rte_alltoallv(r, B->hrecv + base * es, sc, sd, B->hshare, rc, rd);
        cc_watchdog_leave();
        if (st == CC_OK)
            *wrong += (long long)cc_coll_check_copies(coll, cx, src0, base + mlo, base + mhi,
                                                      B->hshare, nsrc);
    }
    wd_describe("%s", what);
    return st;
}

/* Time one placement of one size; fill m. */
static cc_status measure(const struct cc_bench_params *p, const struct cc_coll *coll,
                         const struct cc_coll_ctx *cx, const struct cc_coll_args *a,
                         const struct bufs *B, struct cc_measure *m)
{
    const struct cc_backend *be = p->backend;
    const struct cc_rte *r = p->rte;
    size_t es = cc_dtype_size(cx->dtype);
    size_t bytes = (coll->id == CC_ALLGATHER ? cx->recvcount : cx->sendcount) * es;
    double *samples = NULL, *batchv = NULL;
    size_t cap = 0, bcap = 0, n = 0; /* samples: all so far; batchv: one batch */
    double local_sum = 0, t_begin = cc_now(), us;
    struct cc_running run = {0};
    cc_status st = CC_OK;
    char szb[32];

    wd_describe("%s %s %s (%s, backend %s)", coll->name,
             cc_size_format(bytes, szb, sizeof szb), a->inplace ? "in-place" : "out-of-place",
             cc_dtype_name(cx->dtype), be->name);

    /* inputs in place before warm-up, so timed iterations move real data (the fill is host
     * work, not watched); on device memory only the first slot (backend.h: rot_slots) */
    cc_watchdog_leave();
    coll->fill(cx, B->hsend);
    cc_watchdog_enter(wd_what);
    CC_TRY(be->copy_in(p->bctx, (void *)a->sendbuf, B->hsend, cx->sendcount * es));
    /* device memory: warm-up and timed launches move through the buffers (backend.h) */
    struct cc_coll_args ta = *a;
    if (be->mem == CC_MEM_DEVICE) {
        size_t span = (cx->sendcount > cx->recvcount ? cx->sendcount : cx->recvcount) * es;
        ta.rot_stride = (span + 255) / 256 * 256; /* NCCL's fast paths want aligned buffers */
        ta.rot_slots = ta.rot_stride ? B->bytes / ta.rot_stride : 1;
    }

    /* warm-up, then an estimate of the wall time of one iteration (max over ranks) */
    double w0 = cc_now();
    for (int i = 0; i < p->warmup; i++) {
        cc_watchdog_enter(wd_what);
        st = one_iteration(p, &ta, &us);
        if (st != CC_OK)
            goto done;
    }
    double est[1] = {p->warmup ? (cc_now() - w0) / p->warmup : 0};
    cc_watchdog_enter(wd_what);
    CC_TRY(cc_rte_allreduce_d(r, est, 1, CC_RTE_MAX));
    double wall_per_iter = est[0] > 0 ? est[0] : 1e-5;
    double target_batch_s = fmin(0.1, fmax(0.005, p->max_time_s / 20));
    long batch;
    long most = p->max_iters > 0 ? p->max_iters : LONG_MAX; /* never more than --max-iters */
    long fixed = p->iters < most ? p->iters : most;          /* -n, within that */
    if (p->iters > 0)
        batch = clampl(target_batch_s / wall_per_iter, 1, fixed);
    else
        batch = p->min_iters < most ? p->min_iters : most; /* adaptive: first the minimum */

    double t_timed = cc_now();
    for (;;) {
        if (n + (size_t)batch > cap) {
            size_t ncap = cap ? cap : 64;
            while (ncap < n + (size_t)batch)
                ncap *= 2;
            double *ns = realloc(samples, ncap * sizeof *ns);
            if (!ns) {
                st = CC_ENOMEM;
                goto done;
            }
            samples = ns;
            cap = ncap;
        }
        if ((size_t)batch > bcap) {
            double *nb = realloc(batchv, (size_t)batch * sizeof *nb);
            if (!nb) {
                st = CC_ENOMEM;
                goto done;
            }
            batchv = nb;
            bcap = (size_t)batch;
        }
        for (long i = 0; i < batch; i++) {
            cc_watchdog_enter(wd_what);
            st = one_iteration(p, &ta, &batchv[i]);
            if (st != CC_OK)
                goto done;
            local_sum += batchv[i];
        }
        cc_watchdog_enter(wd_what);
        CC_TRY(reduce_times(p, batchv, (size_t)batch));
        for (long i = 0; i < batch; i++) {
            samples[n++] = batchv[i];
            cc_running_add(&run, batchv[i]);
        }
        /* agree on the elapsed wall time and the samples' relative CI (max over ranks): the
         * mean-time mode sums doubles across ranks, and MPI does not promise every rank the
         * same bits of a sum, so each rank's own CI could stop it a batch before the others */
        double agree[2] = {cc_now() - t_timed, cc_running_relci(&run) * 100};
        CC_TRY(cc_rte_allreduce_d(r, agree, 2, CC_RTE_MAX));
        double elapsed = agree[0], relci = agree[1];
        wall_per_iter = elapsed / (double)n;
        if ((long)n >= most)
            break;
        if (p->iters > 0) {
            if ((long)n >= p->iters)
                break;
            batch = clampl(target_batch_s / wall_per_iter, 1, fixed - (long)n);
            continue;
        }
        double left = (p->max_time_s - elapsed) / wall_per_iter;
        if ((long)n >= p->min_iters && (relci <= p->precision_pct || left <= 0))
            break;
        /* iterations still needed for the CI to shrink to the target (ci ~ 1/sqrt(n)), but
         * never fewer than min_iters in all, and no more than the time left allows */
        double need = isfinite(relci)
                          ? (double)n * (relci / p->precision_pct) * (relci / p->precision_pct) - (double)n
                          : (double)p->min_iters;
        if ((double)n + need < (double)p->min_iters)
            need = (double)(p->min_iters - (long)n);
        double cap_it = fmin(target_batch_s / wall_per_iter, fmax(left, (double)(p->min_iters - (long)n)));
        batch = clampl(fmin(need * 1.1 + 1, cap_it), 1, most - (long)n);
    }

    /* statistics of the reduced samples */
    struct cc_stats s;
    if (cc_stats_compute(samples, n, &s) != 0) {
        cc_err("cannot allocate the statistics of %zu samples", n);
        st = CC_ENOMEM;
        goto done;
    }
    m->valid = 1;
    m->iters = (long)n;
    m->time_us = s.mean;
    m->p50_us = s.p50;
    m->p99_us = s.p99;
    m->min_us = s.min;
    m->max_us = s.max;
    m->ci95_us = s.ci95;
    m->algbw = s.mean > 0 ? (double)bytes / (s.mean * 1e-6) / 1e9 : 0;
    m->busbw = m->algbw * coll->busbw_factor(r->size);

    /* slowest rank: each rank's own mean (the lowest rank among equals) */
    {
        double mine = n ? local_sum / (double)n : 0, lo, hi;
        int fast, slow;
        if ((st = cc_rte_minmaxloc(r, mine, &lo, &fast, &hi, &slow)) != CC_OK)
            goto done;
        m->slow_rank = slow;
        m->skew_pct = lo > 0 ? (hi - lo) / lo * 100 : 0;
    }

    /* checking, after timing so it never slows the timed run; a collective of the check
     * may wait on a peer still checking the previous one: that host work, some input values
     * per element of the larger buffer (below SHARE_MIN_WORK: count x ranks), is allowed 1 us
     * per element, tens of times what it takes */
    long long wrong = 0;
    size_t elems = cx->sendcount > cx->recvcount ? cx->sendcount : cx->recvcount;
    double check_s = (double)elems * 1e-6 + SHARE_MIN_WORK * 1e-7;
    for (int c = 0; c < p->check_iters; c++) {
        size_t poison_n = a->inplace ? elems : cx->recvcount;
        void *poison_at = a->inplace ? B->a : a->recvbuf;
        cc_watchdog_leave(); /* host work: filling and checking large buffers is no hang */
        while (p->busy_rank1 == r->rank + 1) /* debug: a rank stuck in host work */
            sleep(1);
        cc_fill_poison(B->hpoison, cx->dtype, poison_n);
        cc_watchdog_enter(wd_what);
        CC_TRY(be->copy_in(p->bctx, poison_at, B->hpoison, poison_n * es));
        CC_TRY(be->copy_in(p->bctx, (void *)a->sendbuf, B->hsend, cx->sendcount * es));
        /* every rank done with the previous check first: a transport with its own deadline
         * (tcp) would take a root busy checking for a lost peer */
        cc_watchdog_enter_longer(wd_what, c > 0 ? check_s : 0);
        if (c > 0 && (st = cc_rte_barrier(r)) != CC_OK)
            goto done;
        cc_watchdog_enter(wd_what);
        st = be->run(p->bctx, a);
        if (st == CC_OK)
            st = be->sync(p->bctx);
        if (st != CC_OK)
            goto done;
        CC_TRY(be->copy_out(p->bctx, B->hrecv, a->recvbuf, cx->recvcount * es));
        cc_watchdog_leave();
        if (p->corrupt_rank == r->rank && c == 0) {
            /* the first element the collective defines, or with CCBENCH_DEBUG_CORRUPT_LAST the
             * last (tests: the last share of the last round of a shared check) */
            const char *last = getenv("CCBENCH_DEBUG_CORRUPT_LAST");
            int from_end = last && *last && strcmp(last, "0") != 0;
            for (size_t k = 0; k < cx->recvcount; k++) {
                size_t i = from_end ? cx->recvcount - 1 - k : k;
                double e;
                if (coll->expected(cx, i, &e)) {
                    cc_dtype_set(cx->dtype, B->hrecv, i, e + 100);
                    break;
                }
            }
        }
        if ((coll->flags & CC_COLL_SHARED_CHECK) && B->hshare &&
            (double)cx->recvcount * r->size >= B->share_min) {
            if ((st = check_shared(p, coll, cx, B, check_s, &wrong)) != CC_OK)
                goto done;
        } else {
            wrong += (long long)cc_coll_check(coll, cx, B->hrecv);
        }
    }
    /* the ranks that checked little wait here for those that check much: that host work is
     * no hang */
    cc_watchdog_enter_longer(wd_what, (double)p->check_iters * check_s);
    CC_TRY(cc_rte_allreduce_ll(r, &wrong, 1, CC_RTE_SUM));
    m->wrong = p->check_iters > 0 ? wrong : -1;
    m->wall_s = cc_now() - t_begin;

done:
    /* the watchdog stays armed from the first operation to here: exchanges between
     * iterations (reductions of times, agreement) are covered as much as the collectives */
    cc_watchdog_leave();
    free(samples);
    free(batchv);
    return st;
}

/* ---- the sweep ---------------------------------------------------------------------- */

/* One row: every requested placement of one size of one (collective, type, op). */
static cc_status run_row(const struct cc_bench_params *p, const struct cc_coll *coll,
                         enum cc_dtype t, enum cc_op op, size_t bytes, const struct bufs *B,
                         struct cc_row *row)
{
    const struct cc_rte *r = p->rte;
    const struct cc_backend *be = p->backend;
    cc_status st = CC_OK;
    /* collectives that only move data are fed the min/max inputs (128 values, every rank
     * giving one to every element): a sum's inputs can be mostly 0 at many ranks */
    struct cc_coll_ctx cx = {
        .dtype = t,
        .op = (coll->flags & CC_COLL_HAS_OP) ? op : CC_MAX,
        .root = (coll->flags & CC_COLL_HAS_ROOT) ? p->root : 0,
        .rank = r->rank, .nranks = r->size, .seed = p->seed,
    };
    cc_coll_counts(coll, bytes, t, r->size, &cx.sendcount, &cx.recvcount);
    memset(row, 0, sizeof *row);
    row->coll = coll;
    row->backend = be->name;
    row->dtype = t;
    row->op = op;
    row->root = (coll->flags & CC_COLL_HAS_ROOT) ? p->root : -1;
    row->bytes = bytes;
    row->count = bytes / cc_dtype_size(t);
    if (coll->id == CC_ALLGATHER || coll->id == CC_REDUCESCATTER || coll->id == CC_ALLTOALL)
        row->count /= (size_t)r->size; /* per rank, as nccl-tests' count column */
    row->nranks = r->size;
    for (int pl = 0; pl < 2; pl++) {
        struct cc_measure *m = &row->m[pl];
        const char *na = NULL;
        if (!(p->places & (1 << pl)))
            continue;
        m->wrong = -1;
        if (pl == CC_INPLACE && (coll->flags & CC_COLL_NO_INPLACE)) {
            m->na_reason = "no in-place variant";
            continue;
        }
        if (over_call_count(p, coll, t, bytes)) {
            m->na_reason = "more elements per call than the backend's count type holds";
            continue;
        }
        if (be->supports && !be->supports(p->bctx, coll->id, t, op, pl, &na)) {
            m->na_reason = na ? na : "not supported by this backend";
            continue;
        }
        struct cc_coll_args a = {.coll = coll->id, .dtype = t, .op = op, .root = cx.root,
                                 .sendcount = cx.sendcount, .recvcount = cx.recvcount};
        place_args(coll, &cx, pl, B, &a);
        if ((st = measure(p, coll, &cx, &a, B, m)) != CC_OK) {
            m->valid = 0;
            m->na_reason = "failed"; /* the caller still writes the other placement */
            return st;
        }
        m->slow_host = r->hosts[m->slow_rank];
    }
    return CC_OK;
}

/* Sizes of a collective for a type (nccl-tests sizes rounded to the type's granule). */
static cc_status sizes_for(const struct cc_bench_params *p, const struct cc_coll *coll,
                           enum cc_dtype t, size_t **sizes, size_t *n)
{
    char why[256];
    return cc_sweep_expand(&p->sweep, cc_coll_granule(coll, t, p->rte->size), sizes, n, why,
                           sizeof why);
}

/* The worst of every rank's status (a caller's callback failed on some rank). */
static cc_status agree(const struct cc_bench_params *p, cc_status mine)
{
    long long worst = mine;
    cc_watchdog_enter("agreeing on the caller's callback");
    cc_status st = cc_rte_allreduce_ll(p->rte, &worst, 1, CC_RTE_MAX);
    cc_watchdog_leave();
    return st != CC_OK ? st : (cc_status)worst;
}

/* The buffers of the largest size: two of backend memory, three on the host. Every rank
 * must have them before anything is measured; otherwise the run ends at once, with a reason
 * in p->err and CC_ETOOBIG when memory ran out. */
static cc_status alloc_buffers(const struct cc_bench_params *p, size_t maxb, struct bufs *B)
{
    const struct cc_backend *be = p->backend;
    const struct cc_rte *r = p->rte;
    int shares = shares_checks(p); /* the same on every rank: the arguments agree */
    if (shares && share_setup(r, B) != CC_OK)
        return CC_EPEER;
    cc_status st = be->alloc(p->bctx, maxb, &B->a);
    if (st == CC_OK)
        st = be->alloc(p->bctx, maxb, &B->b);
    if (st == CC_OK) {
        size_t hb = maxb ? maxb : 1; /* every size n/a: nothing measured, still buffers */
        B->hsend = malloc(hb);
        B->hrecv = malloc(hb);
        B->hpoison = malloc(hb);
        if (shares) {
            B->hshare = malloc(share_buf_bytes(maxb, B->share_round, r->size));
            B->counts = malloc(4 * sizeof(int) * (size_t)r->size);
        }
        if (!B->hsend || !B->hrecv || !B->hpoison || (shares && (!B->hshare || !B->counts)))
            st = CC_ENOMEM;
        B->bytes = maxb;
    }
    /* out of memory anywhere is the answer (a neighbour's failure that follows from it is
     * not), and the first rank that ran out is named */
    long long worst = st, oom = st == CC_ENOMEM;
    /* a peer may still be allocating (device memory, first touch): allowed time for it */
    cc_watchdog_enter_longer("agreeing that the buffers were allocated", 3.0 * (double)maxb * 2e-9);
    cc_status ag = cc_rte_allreduce_ll(r, &worst, 1, CC_RTE_MAX);
    if (ag == CC_OK)
        ag = cc_rte_allreduce_ll(r, &oom, 1, CC_RTE_MAX);
    cc_watchdog_leave();
    if (ag != CC_OK)
        return CC_EPEER;
    if (worst == CC_OK)
        return CC_OK;
    if (oom)
        worst = CC_ENOMEM;
    long long first = (oom ? st == CC_ENOMEM : st != CC_OK) ? r->rank : r->size;
    cc_watchdog_enter("naming the rank that could not allocate");
    ag = cc_rte_allreduce_ll(r, &first, 1, CC_RTE_MIN);
    cc_watchdog_leave();
    if (ag != CC_OK)
        return CC_EPEER;
    char sz[32], e[32], chk[32] = "", need[160];
    cc_size_format(maxb, sz, sizeof sz);
    cc_size_format(p->sweep.maxbytes, e, sizeof e);
    if (shares) { /* the copies of shared checks */
        double kib = ceil((double)share_buf_bytes(maxb, B->share_round, r->size) / 1024.0);
        if (kib >= 1024)
            snprintf(chk, sizeof chk, " + %.1fM", kib / 1024.0);
        else
            snprintf(chk, sizeof chk, " + %.0fK", kib);
    }
    if (be->mem == CC_MEM_DEVICE)
        snprintf(need, sizeof need, "2 x %s of device memory and 3 x %s%s of host memory", sz,
                 sz, chk);
    else
        snprintf(need, sizeof need, "5 x %s%s of memory", sz, chk);
    if (p->err)
        cc_errbuf(p->err, p->errlen, "cannot allocate the %s buffers of -e %s: rank %lld (%s) "
                  "needs %s (%s)", sz, e, first, r->hosts[first], need,
                  worst == CC_ENOMEM ? "lower -e" : cc_status_str((cc_status)worst));
    return worst == CC_ENOMEM ? CC_ETOOBIG : (cc_status)worst;
}

cc_status cc_bench_run(const struct cc_bench_params *p)
{
    const struct cc_backend *be = p->backend;
    struct bufs B = {0};
    size_t maxb = 0, *sizes = NULL, n;
    int total = 0, done = 0;
    cc_status st = CC_OK, result = CC_OK;
    double t0 = cc_now();

    /* first pass: how many rows, and the largest buffer */
    for (int c = 0; c < CC_COLL_COUNT; c++)
        for (int t = 0; t < CC_DTYPE_COUNT; t++) {
            const struct cc_coll *coll = cc_coll_get((enum cc_coll_id)c);
            unsigned ops = ops_for(p, coll, (enum cc_dtype)t);
            if (!(p->coll_mask & (1u << c)) || !(p->dtype_mask & (1u << t)) || !ops)
                continue;
            CC_TRY(sizes_for(p, coll, (enum cc_dtype)t, &sizes, &n));
            total += (int)n * __builtin_popcount(ops);
            for (size_t k = n; k-- > 0;) /* the largest size measured (not n/a by count) */
                if (!over_call_count(p, coll, (enum cc_dtype)t, sizes[k])) {
                    if (sizes[k] > maxb)
                        maxb = sizes[k];
                    break;
                }
            free(sizes);
            sizes = NULL;
        }
    CC_TRY(alloc_buffers(p, maxb, &B));
    if (p->on_start)
        CC_TRY(agree(p, p->on_start(p->user)));

    for (int c = 0; c < CC_COLL_COUNT; c++) {
        const struct cc_coll *coll = cc_coll_get((enum cc_coll_id)c);
        if (!(p->coll_mask & (1u << c)))
            continue;
        for (int t = 0; t < CC_DTYPE_COUNT; t++) {
            if (!(p->dtype_mask & (1u << t)))
                continue;
            unsigned ops = ops_for(p, coll, (enum cc_dtype)t);
            if (!ops)
                continue;
            CC_TRY(sizes_for(p, coll, (enum cc_dtype)t, &sizes, &n));
            for (int op = 0; op < CC_OP_COUNT; op++) {
                if (!(ops & (1u << op)))
                    continue;
                for (size_t k = 0; k < n; k++) {
                    struct cc_row row;
                    if (p->on_progress)
                        p->on_progress(coll, sizes[k], done, total, cc_now() - t0, p->user);
                    st = run_row(p, coll, (enum cc_dtype)t, (enum cc_op)op, sizes[k], &B, &row);
                    if (st != CC_OK) {
                        /* the placement measured before the other failed is written (rank
                         * 0's sinks; no collective, as the ranks may not agree now) */
                        if (p->on_row && (row.m[CC_OOP].valid || row.m[CC_INPLACE].valid))
                            (void)p->on_row(&row, p->user);
                        goto done;
                    }
                    for (int pl = 0; pl < 2; pl++)
                        if (row.m[pl].wrong > 0)
                            result = CC_EWRONG;
                    done++;
                    if (p->on_row) {
                        /* a row the caller could not take (rank 0 could not write its output
                         * file) stops every rank */
                        CC_TRY(agree(p, p->on_row(&row, p->user)));
                    }
                }
            }
            free(sizes);
            sizes = NULL;
        }
    }

done:
    free(sizes);
    if (B.a)
        be->free(p->bctx, B.a);
    if (B.b)
        be->free(p->bctx, B.b);
    free(B.hsend);
    free(B.hrecv);
    free(B.hpoison);
    free(B.hshare);
    free(B.counts);
    return st != CC_OK ? st : result;
}
