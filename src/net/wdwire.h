/* wdwire.h - the watchdog's side channel. When an operation hangs, the rank whose watchdog
 * fires asks every rank's watchdog thread what it is doing, over UDP and outside MPI (a rank
 * stuck inside MPI, or stopped, cannot hold the question up), and names the rank most
 * likely holding the others up. This is the pure part: the two datagrams, packed big-endian
 * with explicit offsets, and the verdict drawn from the answers. docs/bench.md describes it.
 *
 * query (24 bytes):
 *    0 magic "CCWQ"   4 version u16   6 reserved u16 (0)   8 job u64   16 from rank u32
 *   20 round u32
 * answer (40 bytes + what):
 *    0 magic "CCWA"   4 version u16   6 length of what u16 (<= CC_WD_WHAT_MAX)   8 job u64
 *   16 rank u32      20 round u32    24 operations entered so far u64
 *   32 milliseconds in the current operation, or since the last one ended u32
 *   36 flags u32 (bit 0: inside a watched operation; bit 1: its own watchdog fired)
 *   40 what: the operation's description (bytes as given, no NUL)
 *
 * No sockets here: unit-tested without a network. */
#ifndef CC_NET_WDWIRE_H
#define CC_NET_WDWIRE_H

#include <stddef.h>
#include <stdint.h>
#include "core/status.h"

#define CC_WD_VERSION 1
#define CC_WD_WHAT_MAX 200
#define CC_WD_QUERY_BYTES 24
#define CC_WD_ANSWER_MIN 40
#define CC_WD_ANSWER_MAX (CC_WD_ANSWER_MIN + CC_WD_WHAT_MAX)

struct cc_wd_query {
    uint64_t job;    /* per-job random id: datagrams of another job are ignored */
    uint32_t from;   /* the asking rank */
    uint32_t round;  /* which round of questions; answers echo it */
};

struct cc_wd_answer {
    uint64_t job;
    uint32_t rank, round;
    uint64_t seq;    /* watched operations entered so far */
    int in_op;       /* inside a watched operation (else between operations: host work) */
    int fired;       /* its own watchdog fired too */
    double secs;     /* in the current operation, or since the last one ended */
    char what[CC_WD_WHAT_MAX + 1]; /* the current (or last) operation, NUL-terminated */
};

void cc_wd_query_pack(const struct cc_wd_query *q, uint8_t out[CC_WD_QUERY_BYTES]);
/* Decode a query; CC_EPARSE unless it is one (magic, version, length). */
cc_status cc_wd_query_unpack(const uint8_t *in, size_t len, struct cc_wd_query *q);

/* Pack an answer (what cut to CC_WD_WHAT_MAX bytes); returns the datagram's length. */
size_t cc_wd_answer_pack(const struct cc_wd_answer *a, uint8_t out[CC_WD_ANSWER_MAX]);
/* Decode an answer; CC_EPARSE unless it is one (magic, version, lengths agreeing). */
cc_status cc_wd_answer_unpack(const uint8_t *in, size_t len, struct cc_wd_answer *a);

/* What the asking rank knows of one rank after a round of questions. */
struct cc_wd_peer {
    int node;        /* its node's index (ranks of one node share it) */
    int channel;     /* the asking rank could ask it (it published a port and an address the
                      * asker can use); a rank without is never blamed for not answering */
    int answered;    /* an answer of this round came in (the asking rank itself: 1) */
    int reached;     /* answered when asked at start-up: 1 yes, 0 no, -1 not asked */
    struct cc_wd_answer a; /* valid when answered */
};

/* One line (no newline) naming the rank or ranks most likely holding the job up, for the
 * asking rank `self` (whose own entry is its state, answered), given every rank's entry and
 * host name. In order of evidence:
 *   1. ranks that answered at start-up and no longer do (stopped, dead, host down); when no
 *      rank on another node answers and ranks on two or more other nodes did at start-up,
 *      this node's own network is the likelier fault, and the line says so instead (-1);
 *   2. ranks doing something other than what this rank waits in and not past it: the
 *      furthest behind first; when every rank elsewhere is past it, this rank (and any
 *      other still in its operation) is the one behind;
 *   3. ranks not heard from, now or at start-up (not asked then, or UDP to them blocked);
 *   4. none: every rank is inside the same operation, which is then itself stuck.
 * Ranks without a side channel are only counted. At most `list` ranks are named, then how
 * many more. Returns the number of ranks named as likely culprits, 0 when there are none,
 * -1 when the answers cannot tell. */
int cc_wd_verdict(const struct cc_wd_peer *peers, int n, int self, const char *const *hosts,
                  int list, char *buf, size_t len);

#endif
