#include "net/wdwire.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/be.h"

void cc_wd_query_pack(const struct cc_wd_query *q, uint8_t out[CC_WD_QUERY_BYTES])
{
    memcpy(out, "CCWQ", 4);
    cc_put16(out + 4, CC_WD_VERSION);
    cc_put16(out + 6, 0);
    cc_put64(out + 8, q->job);
    cc_put32(out + 16, q->from);
    cc_put32(out + 20, q->round);
}

cc_status cc_wd_query_unpack(const uint8_t *in, size_t len, struct cc_wd_query *q)
{
    if (len != CC_WD_QUERY_BYTES || memcmp(in, "CCWQ", 4) || cc_get16(in + 4) != CC_WD_VERSION)
        return CC_EPARSE;
    q->job = cc_get64(in + 8);
    q->from = cc_get32(in + 16);
    q->round = cc_get32(in + 20);
    return CC_OK;
}

size_t cc_wd_answer_pack(const struct cc_wd_answer *a, uint8_t out[CC_WD_ANSWER_MAX])
{
    size_t n = strnlen(a->what, CC_WD_WHAT_MAX);
    double ms = a->secs * 1000.0;
    memcpy(out, "CCWA", 4);
    cc_put16(out + 4, CC_WD_VERSION);
    cc_put16(out + 6, (uint16_t)n);
    cc_put64(out + 8, a->job);
    cc_put32(out + 16, a->rank);
    cc_put32(out + 20, a->round);
    cc_put64(out + 24, a->seq);
    cc_put32(out + 32, ms <= 0 ? 0 : ms >= 4294967295.0 ? 0xffffffffu : (uint32_t)ms);
    cc_put32(out + 36, (a->in_op ? 1u : 0u) | (a->fired ? 2u : 0u));
    memcpy(out + CC_WD_ANSWER_MIN, a->what, n);
    return CC_WD_ANSWER_MIN + n;
}

cc_status cc_wd_answer_unpack(const uint8_t *in, size_t len, struct cc_wd_answer *a)
{
    if (len < CC_WD_ANSWER_MIN || memcmp(in, "CCWA", 4) || cc_get16(in + 4) != CC_WD_VERSION)
        return CC_EPARSE;
    size_t n = cc_get16(in + 6);
    if (n > CC_WD_WHAT_MAX || len != CC_WD_ANSWER_MIN + n)
        return CC_EPARSE;
    a->job = cc_get64(in + 8);
    a->rank = cc_get32(in + 16);
    a->round = cc_get32(in + 20);
    a->seq = cc_get64(in + 24);
    a->secs = cc_get32(in + 32) / 1000.0;
    uint32_t flags = cc_get32(in + 36);
    a->in_op = (flags & 1u) != 0;
    a->fired = (flags & 2u) != 0;
    memcpy(a->what, in + CC_WD_ANSWER_MIN, n);
    a->what[n] = 0;
    /* a description is printed: no control characters from the wire */
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)a->what[i] < 0x20 || a->what[i] == 0x7f)
            a->what[i] = '?';
    return CC_OK;
}

/* ---- verdict --------------------------------------------------------------------------- */

struct out {
    char *buf;
    size_t len, used;
};

static void say(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct out *o, const char *fmt, ...)
{
    if (!o->len || o->used >= o->len - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->used, o->len - o->used, fmt, ap);
    va_end(ap);
    if (k > 0)
        o->used += (size_t)k < o->len - o->used ? (size_t)k : o->len - o->used - 1;
}

static const struct cc_wd_peer *sort_base;

/* furthest behind first (fewest operations entered), then by rank */
static int by_seq(const void *x, const void *y)
{
    int i = *(const int *)x, j = *(const int *)y;
    uint64_t a = sort_base[i].a.seq, b = sort_base[j].a.seq;
    return a < b ? -1 : a > b ? 1 : i - j;
}

static int same_state(const struct cc_wd_answer *a, const struct cc_wd_answer *b)
{
    return a->in_op == b->in_op && strcmp(a->what, b->what) == 0;
}

static void name(struct out *o, const char *const *hosts, int r)
{
    say(o, "rank %d (%s)", r, hosts && hosts[r] ? hosts[r] : "?");
}

/* "rank 1 (h1), rank 3 (h2) and 4 more" for the first `list` of idx[0..k) */
static void name_list(struct out *o, const char *const *hosts, const int *idx, int k, int list)
{
    for (int i = 0; i < k && i < list; i++) {
        say(o, "%s", i ? ", " : "");
        name(o, hosts, idx[i]);
    }
    if (k > list)
        say(o, " and %d more", k - list);
}

/* Has rank b moved past the asker's operation? Further in the count, or at the same count
 * but out of the operation the asker is still in. */
static int is_ahead(const struct cc_wd_answer *b, const struct cc_wd_answer *me)
{
    return b->seq > me->seq || (b->seq == me->seq && me->in_op && !b->in_op);
}

int cc_wd_verdict(const struct cc_wd_peer *peers, int n, int self, const char *const *hosts,
                  int list, char *buf, size_t len)
{
    struct out o = {buf, len, 0};
    const struct cc_wd_answer *me = &peers[self].a;
    int mynode = peers[self].node;
    int *strong = malloc((size_t)n * sizeof(int)), *weak = malloc((size_t)n * sizeof(int));
    int *away = malloc((size_t)n * sizeof(int)), *same = malloc((size_t)n * sizeof(int));
    char *seen = calloc((size_t)n, 1);
    int ns = 0, nw = 0, nw0 = 0, na = 0, nsame = 1, nanswered = 0, nochan = 0, ahead = 0;
    int remote_answered = 0, strong_remote = 0, strong_nodes = 0, named = -1;
    double lo = me->secs, hi = me->secs;
    if (len)
        buf[0] = 0;
    if (!strong || !weak || !away || !same || !seen)
        goto out;
    if (list < 1)
        list = 1;
    same[0] = self;
    for (int i = 0; i < n; i++) {
        const struct cc_wd_peer *p = &peers[i];
        int remote = p->node != mynode;
        if (i == self)
            continue;
        if (!p->answered) {
            if (!p->channel) {
                nochan++;
            } else if (p->reached == 1) {
                strong[ns++] = i;
                if (remote) {
                    strong_remote++;
                    if (p->node >= 0 && p->node < n && !seen[p->node]++)
                        strong_nodes++;
                }
            } else {
                weak[nw++] = i;
                nw0 += p->reached == 0;
            }
            continue;
        }
        nanswered++;
        remote_answered += remote;
        if (same_state(&p->a, me)) {
            same[nsame++] = i;
            lo = p->a.secs < lo ? p->a.secs : lo;
            hi = p->a.secs > hi ? p->a.secs : hi;
        } else {
            away[na++] = i;
            ahead += is_ahead(&p->a, me);
        }
    }

    if (!remote_answered && strong_nodes >= 2) {
        say(&o, "no rank on another node answers the watchdog now, though ranks on %d other "
                "nodes did at start-up: this node's own network is the likelier fault (or all of "
                "them stopped)", strong_nodes);
        goto out;
    }
    if (!nanswered && !ns && nw) {
        say(&o, "no other rank's watchdog answered, nor at start-up: cannot tell which rank "
                "holds the job up (is UDP between the ranks blocked?)");
        goto out;
    }
    if (ns) {
        named = ns;
        say(&o, "likely culprit%s: ", ns > 1 ? "s" : "");
        name_list(&o, hosts, strong, ns, list);
        say(&o, " no longer answer%s the watchdog (%s at start-up): stopped, dead, or the host "
                "is down", ns > 1 ? "" : "s", ns > 1 ? "all answered" : "it answered");
        if (!remote_answered && strong_remote)
            say(&o, " (no rank on another node answered either: this node's own network may be "
                    "the fault)");
        if (nw)
            say(&o, " (%d more do not answer and were not heard from at start-up)", nw);
    } else if (na && ahead == na) {
        /* every rank elsewhere has moved past the asker's operation: the ones still in it
         * (the asker and any others) are behind */
        named = nsame;
        say(&o, "likely culprit%s: this rank, ", nsame > 1 ? "s" : "");
        name(&o, hosts, self);
        if (nsame > 1) {
            say(&o, ", and ");
            name_list(&o, hosts, same + 1, nsame - 1, list);
        }
        say(&o, ": every other rank that answered is further along (");
        name(&o, hosts, away[0]);
        say(&o, " is %s %s)", peers[away[0]].a.in_op ? "in" : "after", peers[away[0]].a.what);
    } else if (na) {
        int k = 0; /* the ranks elsewhere that have not moved past: the furthest behind first */
        for (int i = 0; i < na; i++)
            if (!is_ahead(&peers[away[i]].a, me))
                away[k++] = away[i];
        named = k;
        sort_base = peers;
        qsort(away, (size_t)k, sizeof *away, by_seq);
        say(&o, "likely culprit%s: ", k > 1 ? "s" : "");
        for (int i = 0; i < k && i < list; i++) {
            const struct cc_wd_answer *a = &peers[away[i]].a;
            say(&o, "%s", i ? "; " : "");
            name(&o, hosts, away[i]);
            if (a->in_op)
                say(&o, " is in %s for %.0f s", a->what, a->secs);
            else
                say(&o, " is between operations (host work) for %.0f s, after %s", a->secs,
                    a->what[0] ? a->what : "none yet");
        }
        if (k > list)
            say(&o, " (and %d more ranks elsewhere)", k - list);
    } else if (nw) {
        named = nw;
        say(&o, "likely culprit%s: ", nw > 1 ? "s" : "");
        name_list(&o, hosts, weak, nw, list);
        if (nw0 == nw)
            say(&o, " do%s not answer the watchdog and did not at start-up either (stopped, "
                    "dead, or UDP to %s blocked)", nw > 1 ? "" : "es", nw > 1 ? "them" : "it");
        else
            say(&o, " do%s not answer the watchdog (stopped, dead, or unreachable over UDP)",
                nw > 1 ? "" : "es");
    } else {
        named = 0;
        say(&o, "no rank is missing: all %d answered and are in %s (%.0f-%.0f s); the operation "
                "itself does not finish (transport, network or device)",
            n - nochan, me->what, lo, hi);
    }
    if (named > 0)
        say(&o, "; %d of %d ranks wait in %s", nsame, n, me->what);
    if (nochan)
        say(&o, " (%d rank%s without a side channel not asked)", nochan, nochan > 1 ? "s" : "");
out:
    free(strong);
    free(weak);
    free(away);
    free(same);
    free(seen);
    return named;
}
