/* Collectives: busbw factors, counts, and the expected output of each collective checked
 * against a host simulation of that collective (so a wrong expectation would fail here). */
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "coll/coll.h"

/* The shared check of outputs out[0..n) as the harness runs it (CC_COLL_SHARED_CHECK): rank
 * k gets share k of the output of every rank that has one and checks those copies. */
static size_t check_shared(const struct cc_coll *c, const struct cc_coll_ctx *x0,
                           unsigned char *const *out)
{
    struct cc_coll_ctx x = *x0;
    int n = x.nranks, rooted = (c->flags & CC_COLL_HAS_ROOT) != 0;
    size_t es = cc_dtype_size(x.dtype), wrong = 0;
    unsigned char *copies = malloc(x.recvcount * es * (size_t)n + 1);
    for (int k = 0; k < n; k++) {
        size_t lo, hi;
        int m = 0;
        cc_coll_share(x.recvcount, n, k, &lo, &hi);
        for (int r = 0; r < n; r++)
            if (!rooted || r == x.root)
                memcpy(copies + (size_t)m++ * (hi - lo) * es, out[r] + lo * es, (hi - lo) * es);
        x.rank = k; /* the checker's own rank must not matter */
        wrong += cc_coll_check_copies(c, &x, rooted ? x.root : 0, lo, hi, copies, m);
    }
    free(copies);
    return wrong;
}

/* Simulate collective c over n ranks on the host; returns wrong elements summed over
 * ranks (should be 0) and, with corrupt, after changing one element on rank n-1 (a reduce's
 * root). For collectives checked in shares, *shared gets what the shared check counts. */
static size_t simulate(const struct cc_coll *c, enum cc_dtype t, enum cc_op op, int n,
                       size_t bytes, int corrupt, size_t *shared)
{
    size_t es = cc_dtype_size(t), wrong = 0, sc, rc;
    cc_coll_counts(c, bytes, t, n, &sc, &rc);
    unsigned char **in = calloc((size_t)n, sizeof *in);
    struct cc_coll_ctx x = {.dtype = t, .op = op, .root = n > 1 ? 1 : 0, .nranks = n, .seed = 99,
                            .sendcount = sc, .recvcount = rc};
    for (int r = 0; r < n; r++) {
        x.rank = r;
        in[r] = malloc(sc * es);
        c->fill(&x, in[r]);
    }
    unsigned char **outs = calloc((size_t)n, sizeof *outs), *tmp = malloc(sc * es);
    for (int r = 0; r < n; r++) {
        unsigned char *out = outs[r] = malloc(rc * es + 1);
        x.rank = r;
        memset(out, 0, rc * es);
        switch (c->id) {
        case CC_ALLREDUCE:
        case CC_REDUCE:
        case CC_REDUCESCATTER: {
            memcpy(tmp, in[0], sc * es);
            for (int k = 1; k < n; k++)
                cc_reduce(t, op, tmp, in[k], sc);
            if (op == CC_AVG)
                cc_scale_avg(t, tmp, sc, n);
            size_t off = c->id == CC_REDUCESCATTER ? (size_t)r * rc : 0;
            memcpy(out, tmp + off * es, rc * es);
            break;
        }
        case CC_ALLGATHER:
            for (int k = 0; k < n; k++)
                memcpy(out + (size_t)k * sc * es, in[k], sc * es);
            break;
        case CC_BROADCAST:
            memcpy(out, in[x.root], rc * es);
            break;
        case CC_ALLTOALL: {
            size_t per = sc / (size_t)n;
            for (int k = 0; k < n; k++)
                memcpy(out + (size_t)k * per * es, in[k] + (size_t)r * per * es, per * es);
            break;
        }
        case CC_SENDRECV:
            memcpy(out, in[(r - 1 + n) % n], rc * es);
            break;
        default:
            break;
        }
        if (corrupt && r == (c->id == CC_REDUCE ? x.root : n - 1))
            cc_dtype_set(t, out, rc / 2, cc_dtype_get(t, out, rc / 2) + 100);
        wrong += cc_coll_check(c, &x, out);
    }
    if (c->flags & CC_COLL_SHARED_CHECK)
        *shared = check_shared(c, &x, outs);
    for (int r = 0; r < n; r++)
        free(in[r]), free(outs[r]);
    free(in);
    free(outs);
    free(tmp);
    return wrong;
}

int main(void)
{
    const struct cc_coll *ar = cc_coll_find("allreduce");
    is_near(ar->busbw_factor(4), 1.5, 1e-12, "allreduce busbw factor 2(n-1)/n at 4 ranks");
    is_near(ar->busbw_factor(1), 0, 1e-12, "allreduce busbw factor 0 at 1 rank");
    is_near(cc_coll_find("allgather")->busbw_factor(8), 0.875, 1e-12, "allgather (n-1)/n");
    is_near(cc_coll_find("reducescatter")->busbw_factor(8), 0.875, 1e-12, "reducescatter (n-1)/n");
    is_near(cc_coll_find("alltoall")->busbw_factor(4), 0.75, 1e-12, "alltoall (n-1)/n");
    is_near(cc_coll_find("broadcast")->busbw_factor(8), 1, 0, "broadcast 1");
    is_near(cc_coll_find("reduce")->busbw_factor(8), 1, 0, "reduce 1");
    is_near(cc_coll_find("sendrecv")->busbw_factor(8), 1, 0, "sendrecv 1");

    size_t sc, rc;
    cc_coll_counts(cc_coll_find("allgather"), 4096, CC_FLOAT32, 4, &sc, &rc);
    ok(sc == 256 && rc == 1024, "allgather 4 KiB float32 on 4 ranks: send 256, recv 1024");
    cc_coll_counts(cc_coll_find("reducescatter"), 4096, CC_FLOAT32, 4, &sc, &rc);
    ok(sc == 1024 && rc == 256, "reducescatter: send 1024, recv 256");
    cc_coll_counts(ar, 4096, CC_INT8, 3, &sc, &rc);
    ok(sc == 4096 && rc == 4096, "allreduce int8: 4096 each");
    /* the count one MPI call passes: 8 GiB of float32 on 4 ranks (2^31 elements) */
    {
        size_t n31 = (size_t)1 << 31, s, r;
        cc_coll_counts(ar, n31 * 4, CC_FLOAT32, 4, &s, &r);
        is_int((long long)cc_coll_call_count(CC_ALLREDUCE, s, r, 4), (long long)n31,
               "allreduce passes the whole count (2^31: over MPI's int)");
        cc_coll_counts(cc_coll_find("allgather"), n31 * 4, CC_FLOAT32, 4, &s, &r);
        is_int((long long)cc_coll_call_count(CC_ALLGATHER, s, r, 4), (long long)(n31 / 4),
               "allgather passes the per-rank count");
        cc_coll_counts(cc_coll_find("reducescatter"), n31 * 4, CC_FLOAT32, 4, &s, &r);
        is_int((long long)cc_coll_call_count(CC_REDUCESCATTER, s, r, 4), (long long)(n31 / 4),
               "reducescatter passes the result's count");
        cc_coll_counts(cc_coll_find("alltoall"), n31 * 4, CC_FLOAT32, 4, &s, &r);
        is_int((long long)cc_coll_call_count(CC_ALLTOALL, s, r, 4), (long long)(n31 / 4),
               "alltoall passes the per-peer count");
        is_int((long long)cc_coll_call_count(CC_SENDRECV, 5, 7, 4), 7, "sendrecv: the larger");
        is_int((long long)cc_coll_call_count(CC_BROADCAST, 9, 9, 4), 9, "broadcast: the count");
    }
    is_int(cc_coll_granule(cc_coll_find("alltoall"), CC_FLOAT64, 3), 24, "alltoall granule 3x8");
    is_int(cc_coll_granule(ar, CC_FLOAT64, 3), 8, "allreduce granule 8");

    char why[256];
    is_int(cc_coll_parse_list("all", why, sizeof why), (1 << CC_COLL_COUNT) - 1, "all");
    is_int(cc_coll_parse_list("allreduce,sendrecv", why, sizeof why),
           (1 << CC_ALLREDUCE) | (1 << CC_SENDRECV), "list of two");
    ok(cc_coll_parse_list("allreduc", why, sizeof why) == 0 && strstr(why, "'allreduc'"),
       "unknown collective named: %s", why);

    /* shares: consecutive, covering the range once, sizes within one of each other */
    static const struct { size_t count; int n; } sh[] = {{10, 4}, {2, 4}, {0, 3}, {7, 1},
                                                          {1000003, 64}, {5, 5}};
    int shares_ok = 1;
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        size_t next = 0, lo, hi, q = sh[i].count / (size_t)sh[i].n;
        for (int k = 0; k < sh[i].n; k++) {
            cc_coll_share(sh[i].count, sh[i].n, k, &lo, &hi);
            if (lo != next || hi < lo || hi - lo < q || hi - lo > q + 1)
                shares_ok = 0;
            next = hi;
        }
        cc_coll_share(sh[i].count, sh[i].n, sh[i].n, &lo, &hi); /* past the last: empty */
        if (next != sh[i].count || lo != hi)
            shares_ok = 0;
    }
    ok(shares_ok, "shares of a range: consecutive, covering it once, sizes within one");
    size_t lo, hi;
    cc_coll_share(10, 4, 2, &lo, &hi);
    ok(lo == 6 && hi == 8, "10 elements over 4 ranks: rank 2 checks [6, 8) (got [%zu, %zu))", lo, hi);
    cc_coll_share((size_t)1 << 62, 1 << 20, (1 << 20) - 1, &lo, &hi);
    ok(hi == (size_t)1 << 62 && hi - lo == (size_t)1 << 42, "no overflow at 2^62 elements");

    static const int ns[] = {1, 2, 3, 4, 5};
    for (int c = 0; c < CC_COLL_COUNT; c++) {
        const struct cc_coll *coll = cc_colls[c];
        int good = 1, detected = 1, shared_good = 1, shared_detected = 1;
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
            for (int t = 0; t < CC_DTYPE_COUNT; t++)
                for (int op = 0; op < CC_OP_COUNT; op++) {
                    if (!cc_op_valid((enum cc_op)op, (enum cc_dtype)t))
                        continue;
                    /* collectives that only move data get the max inputs, as in the harness */
                    if (!(coll->flags & CC_COLL_HAS_OP) && op != CC_MAX)
                        continue;
                    size_t bytes = cc_coll_granule(coll, (enum cc_dtype)t, ns[k]) * 37;
                    size_t shw = 99;
                    size_t w = simulate(coll, (enum cc_dtype)t, (enum cc_op)op, ns[k], bytes, 0, &shw);
                    if (w) {
                        diag("%s %s %s n=%d: %zu wrong", coll->name, cc_dtype_names[t], cc_op_names[op], ns[k], w);
                        good = 0;
                    }
                    if (shw != 0)
                        shared_good = 0;
                    shw = 99;
                    if (simulate(coll, (enum cc_dtype)t, (enum cc_op)op, ns[k], bytes, 1, &shw) != 1)
                        detected = 0;
                    if (shw != 1)
                        shared_detected = 0;
                }
        ok(good, "%s: expected output matches a host simulation (1-5 ranks, all types and ops)", coll->name);
        ok(detected, "%s: one corrupted element is counted exactly once", coll->name);
        if (coll->flags & CC_COLL_SHARED_CHECK) {
            ok(shared_good, "%s: the check shared out over the ranks finds nothing wrong either", coll->name);
            ok(shared_detected, "%s: and counts the corrupted element exactly once", coll->name);
        }
    }
    /* what a collective only moves is checked byte for byte: -0.0 where +0.0 was sent is
     * wrong (equal as numbers); a reduction's check compares values */
    {
        const struct cc_coll *bc = cc_coll_find("broadcast");
        struct cc_coll_ctx x = {.dtype = CC_FLOAT32, .op = CC_SUM, .root = 0, .nranks = 2,
                                .rank = 1, .seed = 99, .sendcount = 4096, .recvcount = 4096};
        float *buf = malloc(4096 * sizeof *buf);
        x.rank = 0;
        bc->fill(&x, buf); /* the root's input is everyone's expected output */
        x.rank = 1;
        size_t zero = 4096;
        for (size_t i = 0; i < 4096 && zero == 4096; i++) {
            double e;
            if (bc->expected(&x, i, &e) && e == 0 && buf[i] == 0)
                zero = i;
        }
        ok(zero < 4096 && cc_coll_check(bc, &x, buf) == 0, "broadcast: the input checks clean, "
           "with a zero at element %zu", zero);
        if (zero < 4096) {
            buf[zero] = -0.0f;
            is_int((long long)cc_coll_check(bc, &x, buf), 1, "broadcast: -0.0 for 0.0 is one wrong element");
        } else {
            ok(0, "broadcast: no zero element to flip");
        }
        free(buf);
    }
    return tap_done();
}
