/* Unit tests of the watchdog's side channel (net/wdwire.h): the query and answer datagrams
 * byte for byte, their validation, and the verdict drawn from every rank's answer. */
#include <stdint.h>
#include <string.h>

#include "../tap.h"
#include "core/status.h"
#include "net/wdwire.h"

static void test_query(void)
{
    struct cc_wd_query q = {0x0102030405060708ull, 7, 3}, g;
    uint8_t b[CC_WD_QUERY_BYTES];
    static const uint8_t want[CC_WD_QUERY_BYTES] = {'C', 'C', 'W', 'Q', 0, 1, 0, 0, 1, 2, 3, 4,
                                                    5, 6, 7, 8, 0, 0, 0, 7, 0, 0, 0, 3};
    cc_wd_query_pack(&q, b);
    ok(memcmp(b, want, sizeof b) == 0, "query: magic, version, job, rank, round big-endian");
    is_int(cc_wd_query_unpack(b, sizeof b, &g), CC_OK, "query decodes");
    ok(g.job == q.job && g.from == 7 && g.round == 3, "query round trip");
    is_int(cc_wd_query_unpack(b, sizeof b - 1, &g), CC_EPARSE, "short query refused");
    b[4] = 9;
    is_int(cc_wd_query_unpack(b, sizeof b, &g), CC_EPARSE, "other version refused");
    b[4] = 0;
    b[3] = 'A';
    is_int(cc_wd_query_unpack(b, sizeof b, &g), CC_EPARSE, "an answer is no query");
}

static void test_answer(void)
{
    struct cc_wd_answer a = {.job = 42, .rank = 5, .round = 2, .seq = 1ull << 40, .in_op = 1,
                             .fired = 0, .secs = 12.3456},
                        g;
    uint8_t b[CC_WD_ANSWER_MAX + 8];
    strcpy(a.what, "allreduce 1M");
    size_t n = cc_wd_answer_pack(&a, b);
    is_int(n, CC_WD_ANSWER_MIN + 12, "answer length: header and the description");
    is_int(b[6] << 8 | b[7], 12, "description length at offset 6");
    is_int((uint32_t)b[32] << 24 | b[33] << 16 | b[34] << 8 | b[35], 12345, "milliseconds at 32");
    is_int(b[39], 1, "flags: inside an operation");
    is_int(cc_wd_answer_unpack(b, n, &g), CC_OK, "answer decodes");
    ok(g.job == 42 && g.rank == 5 && g.round == 2 && g.seq == 1ull << 40 && g.in_op && !g.fired,
       "answer round trip");
    is_near(g.secs, 12.345, 1e-9, "seconds kept to the millisecond");
    is_str(g.what, "allreduce 1M", "description round trip");
    is_int(cc_wd_answer_unpack(b, n + 1, &g), CC_EPARSE, "length disagreeing with the header refused");
    is_int(cc_wd_answer_unpack(b, CC_WD_ANSWER_MIN - 1, &g), CC_EPARSE, "short answer refused");
    b[7] = 0xff;
    b[6] = 0xff;
    is_int(cc_wd_answer_unpack(b, n, &g), CC_EPARSE, "description longer than the maximum refused");

    memset(a.what, 'x', sizeof a.what - 1);
    a.what[sizeof a.what - 1] = 0;
    a.secs = 1e12;
    a.fired = 1;
    a.in_op = 0;
    n = cc_wd_answer_pack(&a, b);
    is_int(n, CC_WD_ANSWER_MAX, "a long description is cut to the maximum");
    is_int(cc_wd_answer_unpack(b, n, &g), CC_OK, "the longest answer decodes");
    ok(g.fired && !g.in_op, "flags: fired, between operations");
    is_near(g.secs, 4294967.295, 1e-6, "seconds saturate");

    strcpy(a.what, "evil\033[2J\n");
    n = cc_wd_answer_pack(&a, b);
    cc_wd_answer_unpack(b, n, &g);
    is_str(g.what, "evil?[2J?", "control characters from the wire are not printed");
}

/* n ranks, two per node, all answered and waiting in "allreduce 1M" for 10 s unless changed */
static void setup(struct cc_wd_peer *p, int n)
{
    memset(p, 0, (size_t)n * sizeof *p);
    for (int i = 0; i < n; i++) {
        p[i].node = i / 2;
        p[i].channel = 1;
        p[i].answered = 1;
        p[i].reached = 1;
        p[i].a.rank = (uint32_t)i;
        p[i].a.seq = 100;
        p[i].a.in_op = 1;
        p[i].a.secs = 10;
        strcpy(p[i].a.what, "allreduce 1M");
    }
}

/* rank p somewhere else: in (or after) `what`, having entered `seq` operations */
static void elsewhere(struct cc_wd_peer *p, const char *what, uint64_t seq)
{
    strcpy(p->a.what, what);
    p->a.seq = seq;
}

static void test_verdict(void)
{
    enum { N = 12 };
    struct cc_wd_peer p[N];
    const char *hosts[N] = {"n0", "n0", "n1", "n1", "n2", "n2", "n3", "n3", "n4", "n4", "n5", "n5"};
    char line[1024];

    setup(p, 4);
    p[2].answered = 0;
    is_int(cc_wd_verdict(p, 4, 0, hosts, 8, line, sizeof line), 1, "one silent rank named");
    is_str(line, "likely culprit: rank 2 (n1) no longer answers the watchdog (it answered at "
                 "start-up): stopped, dead, or the host is down; 3 of 4 ranks wait in allreduce 1M",
           "a stopped rank");

    p[2].reached = -1;
    cc_wd_verdict(p, 4, 1, hosts, 8, line, sizeof line);
    is_str(line, "likely culprit: rank 2 (n1) does not answer the watchdog (stopped, dead, or "
                 "unreachable over UDP); 3 of 4 ranks wait in allreduce 1M",
           "not asked at start-up: the wording does not claim more");
    p[2].reached = 0;
    cc_wd_verdict(p, 4, 1, hosts, 8, line, sizeof line);
    ok(strstr(line, "does not answer the watchdog and did not at start-up either (stopped, dead, "
                    "or UDP to it blocked)") != NULL, "asked at start-up, silent then too: %s", line);
    p[2].channel = 0;
    is_int(cc_wd_verdict(p, 4, 1, hosts, 8, line, sizeof line), 0,
           "a rank without a side channel is not blamed for its silence");
    ok(strstr(line, "no rank is missing: all 3 answered") &&
       strstr(line, "(1 rank without a side channel not asked)"), "it is counted: %s", line);

    setup(p, 4);
    p[1].answered = 0;
    p[1].reached = 0;
    p[3].a.in_op = 0;
    elsewhere(&p[3], "allreduce 512K", 99);
    cc_wd_verdict(p, 4, 0, hosts, 8, line, sizeof line);
    ok(strstr(line, "likely culprit: rank 3 (n1) is between operations") && !strstr(line, "rank 1"),
       "a rank elsewhere outweighs one that never answered: %s", line);

    setup(p, 4);
    p[1].answered = p[2].answered = p[3].answered = 0;
    p[1].reached = p[2].reached = p[3].reached = 0;
    is_int(cc_wd_verdict(p, 4, 0, hosts, 8, line, sizeof line), -1,
           "nobody answered, now or at start-up: cannot tell");
    ok(strstr(line, "cannot tell") && strstr(line, "UDP"), "says why: %s", line);
    p[3].reached = 1;
    is_int(cc_wd_verdict(p, 4, 0, hosts, 8, line, sizeof line), 1,
           "nobody answered, one did at start-up: that one is named");
    ok(strstr(line, "likely culprit: rank 3 (n1) no longer answers") && !strstr(line, "rank 1") &&
       strstr(line, "(no rank on another node answered either: this node's own network may be "
                    "the fault)") &&
       strstr(line, "(2 more do not answer and were not heard from at start-up)"),
       "only rank 3, with the doubt said: %s", line);

    setup(p, 6);
    for (int i = 2; i < 6; i++)
        p[i].answered = 0;
    is_int(cc_wd_verdict(p, 6, 0, hosts, 8, line, sizeof line), -1,
           "only this node answers, two other nodes did at start-up: this node is cut off");
    is_str(line, "no rank on another node answers the watchdog now, though ranks on 2 other "
                 "nodes did at start-up: this node's own network is the likelier fault (or all "
                 "of them stopped)", "says so, blaming nobody");
    p[5].answered = 1;
    is_int(cc_wd_verdict(p, 6, 0, hosts, 8, line, sizeof line), 3,
           "one rank of another node answers: the silent ones are named");

    setup(p, 3);
    for (int i = 1; i < 3; i++) {
        elsewhere(&p[i], "reduce 8M", 120);
    }
    is_int(cc_wd_verdict(p, 3, 0, hosts, 8, line, sizeof line), 1, "this rank behind the rest");
    is_str(line, "likely culprit: this rank, rank 0 (n0): every other rank that answered is "
                 "further along (rank 1 (n0) is in reduce 8M); 1 of 3 ranks wait in allreduce 1M",
           "names itself");
    setup(p, 3);
    p[2].a.in_op = 0; /* same count, out of the operation the others are still in */
    is_int(cc_wd_verdict(p, 3, 0, hosts, 8, line, sizeof line), 2,
           "a rank past the operation is not blamed; the two still in it are");
    is_str(line, "likely culprits: this rank, rank 0 (n0), and rank 1 (n0): every other rank "
                 "that answered is further along (rank 2 (n1) is after allreduce 1M); 2 of 3 "
                 "ranks wait in allreduce 1M", "names the ranks still in it");
    setup(p, 4);
    elsewhere(&p[2], "reduce 8M", 120);
    elsewhere(&p[3], "reduce 4M", 90);
    cc_wd_verdict(p, 4, 0, hosts, 8, line, sizeof line);
    ok(strstr(line, "likely culprit: rank 3 (n1) is in reduce 4M") && !strstr(line, "rank 2"),
       "of the ranks elsewhere, the one behind is named, not the one ahead: %s", line);

    setup(p, 4);
    p[3].a.in_op = 0;
    p[3].a.secs = 41;
    elsewhere(&p[3], "allreduce 512K", 99);
    is_int(cc_wd_verdict(p, 4, 0, hosts, 8, line, sizeof line), 1, "a rank elsewhere is named");
    is_str(line, "likely culprit: rank 3 (n1) is between operations (host work) for 41 s, after "
                 "allreduce 512K; 3 of 4 ranks wait in allreduce 1M",
           "a rank in host work");

    setup(p, 4);
    elsewhere(&p[1], "reduce 8M", 80);
    p[1].a.secs = 3;
    elsewhere(&p[2], "reduce 4M", 70);
    p[2].a.secs = 5;
    is_int(cc_wd_verdict(p, 4, 0, hosts, 8, line, sizeof line), 2, "two ranks elsewhere");
    is_str(line, "likely culprits: rank 2 (n1) is in reduce 4M for 5 s; rank 1 (n0) is in reduce "
                 "8M for 3 s; 2 of 4 ranks wait in allreduce 1M",
           "the furthest behind first");

    setup(p, 4);
    p[1].answered = 0;
    strcpy(p[2].a.what, "reduce 4M");
    cc_wd_verdict(p, 4, 0, hosts, 8, line, sizeof line);
    ok(strstr(line, "rank 1 (n0)") && !strstr(line, "rank 2"),
       "a silent rank outweighs one elsewhere: %s", line);

    setup(p, 4);
    p[1].a.secs = 12;
    p[3].a.secs = 9;
    is_int(cc_wd_verdict(p, 4, 2, hosts, 8, line, sizeof line), 0, "all in the same operation");
    is_str(line, "no rank is missing: all 4 answered and are in allreduce 1M (9-12 s); the "
                 "operation itself does not finish (transport, network or device)",
           "the operation itself is stuck");

    setup(p, N);
    for (int i = 1; i < N; i++)
        p[i].answered = (i % 2) == 0;
    is_int(cc_wd_verdict(p, N, 0, hosts, 3, line, sizeof line), 6, "six silent ranks counted");
    ok(strstr(line, "likely culprits: rank 1 (n0), rank 3 (n1), rank 5 (n2) and 3 more no longer "
                    "answer the watchdog (all answered at start-up)") != NULL,
       "at most `list` named, then how many more: %s", line);

    setup(p, 4);
    p[1].answered = 0;
    p[1].reached = 1;
    p[2].answered = 0;
    p[2].reached = 0;
    cc_wd_verdict(p, 4, 0, hosts, 8, line, sizeof line);
    ok(strstr(line, "likely culprit: rank 1 (n0) no longer answers") &&
       strstr(line, "(1 more do not answer and were not heard from at start-up)") &&
       !strstr(line, "rank 2"),
       "mixed start-up evidence: the one that answered then is named, the other counted: %s", line);

    char tiny[24];
    setup(p, 4);
    p[1].answered = 0;
    cc_wd_verdict(p, 4, 0, hosts, 8, tiny, sizeof tiny);
    is_int(strlen(tiny), sizeof tiny - 1, "a short buffer is filled, not overrun");
}

int main(void)
{
    test_query();
    test_answer();
    test_verdict();
    return tap_done();
}
