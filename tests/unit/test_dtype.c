/* Datatypes: half conversions, reduction kernels, seeded inputs and expected values for
 * every op and type, in every reduction order. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "core/dtype.h"

static void half_tests(void)
{
    is_int(cc_float_to_half(1.0f), 0x3c00, "half 1.0");
    is_int(cc_float_to_half(-2.0f), 0xc000, "half -2");
    is_int(cc_float_to_half(65504.0f), 0x7bff, "half max");
    is_int(cc_float_to_half(65520.0f), 0x7c00, "half overflow to inf");
    is_int(cc_float_to_half(5.9604645e-8f), 0x0001, "half smallest subnormal");
    is_int(cc_float_to_half(0.1f), 0x2e66, "half 0.1 rounds to nearest");
    is_int(cc_float_to_half(1.0f + 1.0f / 2048), 0x3c00, "half tie rounds to even (down)");
    is_int(cc_float_to_half(1.0f + 3.0f / 2048), 0x3c02, "half tie rounds to even (up)");
    is_near(cc_half_to_float(0x3555), 0.333251953125, 1e-12, "half 0x3555");
    is_near(cc_half_to_float(0x0001), 5.9604645e-8, 1e-15, "half subnormal back");
    ok(isinf(cc_half_to_float(0x7c00)), "half inf back");
    ok(isnan(cc_half_to_float(cc_float_to_half(NAN))), "half nan round trip");
    int rt = 1;
    for (uint32_t h = 0; h < 0x7c00; h++)
        rt &= cc_float_to_half(cc_half_to_float((uint16_t)h)) == h;
    ok(rt, "every finite positive half round-trips");
    is_int(cc_float_to_bf16(1.0f), 0x3f80, "bf16 1.0");
    is_int(cc_float_to_bf16(-3.0f), 0xc040, "bf16 -3");
    is_int(cc_float_to_bf16(1.0f + 1.0f / 256), 0x3f80, "bf16 tie to even (down)");
    is_int(cc_float_to_bf16(1.0f + 3.0f / 256), 0x3f82, "bf16 tie to even (up)");
    is_near(cc_bf16_to_float(0x4049), 3.140625, 0, "bf16 pi-ish");
}

/* Reduce the ranks' inputs with the type's own kernels in a given order and compare each
 * element with cc_expected_reduce. */
static int check_order(enum cc_dtype t, enum cc_op op, int nranks, int reverse, size_t n)
{
    size_t es = cc_dtype_size(t);
    unsigned char *acc = malloc(n * es), *in = malloc(n * es);
    int first = reverse ? nranks - 1 : 0;
    cc_fill_input(acc, t, op, 7, first, nranks, 0, n);
    for (int k = 1; k < nranks; k++) {
        int r = reverse ? nranks - 1 - k : k;
        cc_fill_input(in, t, op, 7, r, nranks, 0, n);
        cc_reduce(t, op, acc, in, n);
    }
    if (op == CC_AVG)
        cc_scale_avg(t, acc, n, nranks);
    int good = 1;
    for (size_t i = 0; i < n && good; i++) {
        double e = cc_expected_reduce(7, t, op, nranks, i);
        double g = cc_dtype_get(t, acc, i);
        if (!cc_value_matches(t, op, g, e, nranks)) {
            diag("%s %s n=%d i=%zu got %g want %g", cc_dtype_name(t), cc_op_name(op), nranks, i, g, e);
            good = 0;
        }
    }
    free(acc);
    free(in);
    return good;
}

/* Elements of a reduction over nranks in which rank `bad` was left out (drop) or counted twice,
 * that the check still accepts: a check that cannot see a missing rank passes wrong data. */
static double accepted_share(enum cc_dtype t, enum cc_op op, int nranks, int bad, int twice,
                             size_t n)
{
    size_t es = cc_dtype_size(t), pass = 0;
    unsigned char *acc = malloc(n * es), *in = malloc(n * es);
    cc_fill_input(acc, t, op, 9, 0, nranks, 0, n);
    for (int r = 1; r < nranks; r++) {
        if (r == bad && !twice)
            continue;
        cc_fill_input(in, t, op, 9, r, nranks, 0, n);
        cc_reduce(t, op, acc, in, n);
        if (r == bad && twice)
            cc_reduce(t, op, acc, in, n);
    }
    if (op == CC_AVG)
        cc_scale_avg(t, acc, n, nranks);
    for (size_t i = 0; i < n; i++)
        pass += cc_value_matches(t, op, cc_dtype_get(t, acc, i),
                                 cc_expected_reduce(9, t, op, nranks, i), nranks);
    free(acc);
    free(in);
    return (double)pass / (double)n;
}

/* NCCL's floating-point average: every input multiplied by 1/n in the type, then summed in
 * the type; the check must accept what that order gives. */
static int premul_avg_ok(enum cc_dtype t, int nranks, size_t n)
{
    int good = 1;
    for (size_t i = 0; i < n && good; i++) {
        uint16_t h = 0;
        float acc = 0;
        cc_dtype_set(t, &h, 0, 1.0 / nranks); /* the scalar, rounded to the type */
        double scale = cc_dtype_get(t, &h, 0);
        for (int r = 0; r < nranks; r++) {
            double x = cc_input_value(5, t, CC_AVG, r, nranks, i);
            cc_dtype_set(t, &h, 0, x * scale); /* each product rounded to the type */
            float term = (float)cc_dtype_get(t, &h, 0);
            cc_dtype_set(t, &h, 0, acc + term);
            acc = (float)cc_dtype_get(t, &h, 0);
        }
        double e = cc_expected_reduce(5, t, CC_AVG, nranks, i);
        if (!cc_value_matches(t, CC_AVG, acc, e, nranks)) {
            diag("%s avg premultiplied n=%d i=%zu got %g want %g", cc_dtype_name(t), nranks, i,
                 (double)acc, e);
            good = 0;
        }
    }
    return good;
}

/* One reduction over nranks with rank `bad` left out (twice = 0) or counted twice, in the
 * order sum-then-divide (premul = 0) or NCCL's inputs-times-1/n (premul = 1, avg only), over
 * elements [0, n). Returns 1 when the check rejects exactly the elements where `bad` gives a
 * non-zero input (*heard of them, at least one): a window rank is caught wherever it speaks,
 * and nothing else is called wrong. */
static int caught_where_heard(enum cc_dtype t, enum cc_op op, int nranks, int bad, int twice,
                              int premul, int window_only, size_t n, size_t *heard)
{
    int good = 1;
    uint64_t h = 0; /* one element of any type */
    cc_dtype_set(t, &h, 0, 1.0 / nranks);
    double scale = cc_dtype_get(t, &h, 0); /* the scalar, rounded to the type */
    *heard = 0;
    for (size_t i = 0; i < n && good; i++) {
        double acc = 0;
        int speaks = cc_input_value(11, t, op, bad, nranks, i) != 0, start = 0;
        int w = window_only ? cc_sum_window(11, t, op, nranks, i, &start) : nranks;
        /* window_only: the ranks of the element's window alone, for rank counts too large to
         * walk; the others give 0 (cc_input_value, shown by the shape test at 100-1,000
         * ranks), which adds nothing exactly */
        for (int k = 0; k < w; k++) {
            int r = (start + k) % nranks;
            double x = cc_input_value(11, t, op, r, nranks, i);
            for (int c = 0; c < (r == bad ? 2 * !!twice : 1); c++) {
                double term = x;
                if (premul) { /* each product rounded to the type */
                    cc_dtype_set(t, &h, 0, x * scale);
                    term = cc_dtype_get(t, &h, 0);
                }
                cc_dtype_set(t, &h, 0, acc + term); /* each partial sum rounded */
                acc = cc_dtype_get(t, &h, 0);
            }
        }
        if (op == CC_AVG && !premul) {
            cc_dtype_set(t, &h, 0, acc / nranks);
            acc = cc_dtype_get(t, &h, 0);
        }
        int match = cc_value_matches(t, op, acc, cc_expected_reduce(11, t, op, nranks, i), nranks);
        *heard += speaks;
        if (match == speaks) {
            diag("%s %s n=%d bad=%d%s i=%zu: %s", cc_dtype_name(t), cc_op_name(op), nranks, bad,
                 twice ? " twice" : "", i, speaks ? "accepted" : "rejected though not heard");
            good = 0;
        }
    }
    return good && *heard > 0;
}

/* Floating sums and averages over more ranks than their rounding lets every rank speak: a
 * window of ranks moving with the element gives the non-zero inputs. */
static void window_tests(void)
{
    /* widths, by hand: avg every rank while 8n(n + 2) <= 2^bits or at a power of two with
     * 4n <= 2^bits; else the widest w with 2(4w^2 + 13w) <= 2^bits (bf16: w = 4 gives 232
     * <= 256, 5 gives 330; float16: 14 gives 1932 <= 2048, 15 gives 2190), and for float16
     * beyond 16,384 ranks (4w^2 + 13w) / 2048 + 5wn / 2^25 <= 1/2 (n = 16,385: 14 gives
     * 0.506, 13 0.444; 100,000: 11 gives 0.470, 12 0.536; a million: 3 gives 0.484, 4
     * 0.653; 4 million: even 1 gives 0.604, so every rank, unchecked for a missing one);
     * sums every rank while 4n <= 2^bits, else 2^bits / 4 */
    static const struct {
        enum cc_dtype t;
        enum cc_op op;
        int n, want;
    } widths[] = {
        {CC_BFLOAT16, CC_AVG, 4, 4},     {CC_BFLOAT16, CC_AVG, 5, 4},
        {CC_BFLOAT16, CC_AVG, 64, 64},   {CC_BFLOAT16, CC_AVG, 128, 4},
        {CC_FLOAT16, CC_AVG, 15, 15},    {CC_FLOAT16, CC_AVG, 16, 16},
        {CC_FLOAT16, CC_AVG, 17, 14},    {CC_FLOAT16, CC_AVG, 512, 512},
        {CC_FLOAT16, CC_AVG, 513, 14},   {CC_FLOAT16, CC_AVG, 16384, 14},
        {CC_FLOAT16, CC_AVG, 16385, 13}, {CC_FLOAT16, CC_AVG, 100000, 11},
        {CC_FLOAT16, CC_AVG, 1000000, 3}, {CC_FLOAT16, CC_AVG, 4000000, 4000000},
        {CC_FLOAT32, CC_AVG, 1447, 1447},
        {CC_FLOAT32, CC_AVG, 1448, 1446}, {CC_FLOAT64, CC_AVG, 100000, 100000},
        {CC_BFLOAT16, CC_SUM, 64, 64},   {CC_BFLOAT16, CC_SUM, 65, 64},
        {CC_FLOAT16, CC_SUM, 600, 512},  {CC_FLOAT32, CC_SUM, 100000, 100000},
        {CC_INT8, CC_SUM, 1000, 1000},   {CC_BFLOAT16, CC_MAX, 1000, 1000},
    };
    for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++)
        is_int(cc_sum_width(widths[k].t, widths[k].op, widths[k].n), widths[k].want,
               "%s %s over %d ranks: %d give non-zero inputs to each element",
               cc_dtype_name(widths[k].t), cc_op_name(widths[k].op), widths[k].n, widths[k].want);

    /* shape: exactly w non-zero inputs per element, each +-1..4; any ceil(n/w) consecutive
     * elements hear every rank */
    static const struct {
        enum cc_dtype t;
        enum cc_op op;
        int n;
    } shapes[] = {{CC_BFLOAT16, CC_AVG, 100}, {CC_FLOAT16, CC_AVG, 1000}, {CC_BFLOAT16, CC_SUM, 200}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int n = shapes[k].n, w = cc_sum_width(shapes[k].t, shapes[k].op, n), good = 1;
        size_t span = (size_t)(n + w - 1) / (size_t)w;
        char *seen = calloc((size_t)n, 1);
        for (size_t i = 0; i < 3 * span && good; i++) {
            int nz = 0;
            for (int r = 0; r < n; r++) {
                double x = cc_input_value(3, shapes[k].t, shapes[k].op, r, n, i);
                if (x != 0) {
                    nz++;
                    good &= fabs(x) >= 1 && fabs(x) <= 4 && x == (int)x;
                    seen[r] = 1;
                }
            }
            good &= nz == w;
            if (i % span == span - 1) { /* a full cycle: every rank heard */
                for (int r = 0; r < n; r++)
                    good &= seen[r];
                memset(seen, 0, (size_t)n);
            }
        }
        free(seen);
        ok(good, "%s %s over %d ranks: %d non-zero inputs per element, every rank heard in any "
           "%zu consecutive elements", cc_dtype_name(shapes[k].t), cc_op_name(shapes[k].op), n,
           w, span);
    }

    /* a rank left out or counted twice is caught in every element where it speaks, and
     * only there, in both rounding orders, at counts where the check could not see it
     * before (float16 beyond 16,384 ranks: quotients below 2^-14 are subnormal) */
    static const struct {
        enum cc_dtype t;
        enum cc_op op;
        int n, bad;
    } lost[] = {
        {CC_BFLOAT16, CC_AVG, 7, 3},      {CC_BFLOAT16, CC_AVG, 100, 37},
        {CC_BFLOAT16, CC_AVG, 128, 127},  {CC_FLOAT16, CC_AVG, 17, 0},
        {CC_FLOAT16, CC_AVG, 1000, 999},  {CC_FLOAT16, CC_AVG, 17000, -1},
        {CC_FLOAT16, CC_AVG, 250000, -1}, {CC_FLOAT16, CC_AVG, 3000000, -1},
        {CC_FLOAT32, CC_AVG, 3000, 1500}, {CC_BFLOAT16, CC_SUM, 200, 150},
        {CC_FLOAT16, CC_SUM, 600, 599},
    };
    for (size_t k = 0; k < sizeof lost / sizeof lost[0]; k++) {
        int n = lost[k].n, w = cc_sum_width(lost[k].t, lost[k].op, n), bad = lost[k].bad;
        size_t span = (size_t)(n + w - 1) / (size_t)w, elems = span < 64 ? 64 : span, hd = 0;
        int good = 1;
        int only = 0;
        if (bad < 0) { /* many ranks: 64 elements, and a rank that speaks in element 10 */
            int start;
            elems = 64;
            cc_sum_window(11, lost[k].t, lost[k].op, n, 10, &start);
            bad = (start + w / 2) % n;
            only = n > 100000; /* walk the window alone */
        }
        for (int twice = 0; twice < 2; twice++)
            for (int premul = 0; premul < 1 + (lost[k].op == CC_AVG); premul++)
                good &= caught_where_heard(lost[k].t, lost[k].op, n, bad, twice, premul, only,
                                           elems, &hd);
        ok(good, "%s %s over %d ranks: rank %d left out or counted twice is caught in the %zu of "
           "%zu elements where it speaks, in every order", cc_dtype_name(lost[k].t),
           cc_op_name(lost[k].op), n, bad, hd, elems);
    }
}

int main(void)
{
    half_tests();
    window_tests();
    static const int counts[] = {1, 2, 3, 4, 7, 16};
    for (int t = 0; t < CC_DTYPE_COUNT; t++)
        for (int op = 0; op < CC_OP_COUNT; op++) {
            if (!cc_op_valid((enum cc_op)op, (enum cc_dtype)t)) {
                ok(op == CC_AVG && !cc_dtype_is_float((enum cc_dtype)t), "%s %s invalid only for avg on integers",
                   cc_dtype_names[t], cc_op_names[op]);
                continue;
            }
            int good = 1;
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
                good &= check_order((enum cc_dtype)t, (enum cc_op)op, counts[k], 0, 4099) &&
                        check_order((enum cc_dtype)t, (enum cc_op)op, counts[k], 1, 4099);
            ok(good, "%s %s: reductions in both orders match the expected values for 1..16 ranks",
               cc_dtype_names[t], cc_op_names[op]);
        }
    /* many ranks: exact while partial sums fit the significand, tolerant beyond (both orders) */
    ok(check_order(CC_BFLOAT16, CC_SUM, 64, 0, 4099) && check_order(CC_BFLOAT16, CC_SUM, 64, 1, 4099) &&
           check_order(CC_BFLOAT16, CC_SUM, 200, 0, 4099) && check_order(CC_BFLOAT16, CC_SUM, 200, 1, 4099) &&
           check_order(CC_FLOAT16, CC_SUM, 600, 0, 4099) && check_order(CC_FLOAT16, CC_SUM, 600, 1, 4099),
       "bf16 sums of 64 and 200 ranks, float16 of 600, accepted in both orders");
    ok(premul_avg_ok(CC_BFLOAT16, 8, 4099) && premul_avg_ok(CC_BFLOAT16, 7, 4099) &&
           premul_avg_ok(CC_BFLOAT16, 64, 4099) && premul_avg_ok(CC_BFLOAT16, 100, 4099) &&
           premul_avg_ok(CC_FLOAT16, 8, 4099) && premul_avg_ok(CC_FLOAT16, 3, 4099) &&
           premul_avg_ok(CC_FLOAT16, 512, 4099),
       "avg computed as NCCL does (inputs times 1/n, then summed) accepted");
    /* a rank missing or counted twice is caught in most elements (sum, avg) or in enough of
     * them (prod: every rank gives a 2 to some elements) */
    static const struct {
        enum cc_dtype t;
        enum cc_op op;
        int nranks, bad;
        double most; /* share of elements the check may still accept */
        const char *what;
    } dropped[] = {
        {CC_BFLOAT16, CC_SUM, 16, 3, 0.2, "bf16 sum, 16 ranks, one missing"},
        {CC_FLOAT16, CC_SUM, 32, 31, 0.2, "float16 sum, 32 ranks, the last missing"},
        {CC_BFLOAT16, CC_AVG, 8, 5, 0.2, "bf16 avg, 8 ranks, one missing"},
        {CC_BFLOAT16, CC_AVG, 16, 3, 0.2, "bf16 avg, 16 ranks (exact: a power of two), one missing"},
        {CC_FLOAT16, CC_AVG, 64, 40, 0.2, "float16 avg, 64 ranks, one missing"},
        {CC_FLOAT16, CC_AVG, 12, 7, 0.4, "float16 avg, 12 ranks (rounding allowed), one missing"},
        {CC_UINT32, CC_PROD, 8, 7, 0.9, "uint32 prod, 8 ranks, rank 7 missing"},
    };
    double sh;
    for (size_t k = 0; k < sizeof dropped / sizeof dropped[0]; k++) {
        sh = accepted_share(dropped[k].t, dropped[k].op, dropped[k].nranks, dropped[k].bad, 0,
                            20000);
        ok(sh < dropped[k].most, "%s: %.1f%% of elements accepted", dropped[k].what, sh * 100);
    }
    sh = accepted_share(CC_UINT8, CC_PROD, 64, 40, 1, 20000);
    ok(sh < 0.99 && sh > 0.5,
       "uint8 prod, 64 ranks, rank 40 counted twice: caught in %.1f%% of elements",
       (1 - sh) * 100);
    int prod_ok = 1;
    for (int n = 1; n <= 64 && prod_ok; n++)
        for (size_t i = 0; i < 2000; i++) {
            double e = cc_expected_reduce(4, CC_INT8, CC_PROD, n, i);
            prod_ok &= fabs(e) <= 64 && e != 0;
        }
    ok(prod_ok, "int8 products stay within +-64 for 1..64 ranks (at most six 2s)");
    /* the integer poison is never a right answer below 32 ranks */
    int poison_ok = 1;
    for (int t = CC_INT8; t <= CC_UINT8 && poison_ok; t++) {
        unsigned char pz;
        cc_fill_poison(&pz, (enum cc_dtype)t, 1);
        double pv = cc_dtype_get((enum cc_dtype)t, &pz, 0);
        for (int op = 0; op < CC_OP_COUNT; op++)
            for (int n = 1; n < 32 && cc_op_valid((enum cc_op)op, (enum cc_dtype)t); n++)
                for (size_t i = 0; i < 3000; i++)
                    poison_ok &= cc_expected_reduce(2, (enum cc_dtype)t, (enum cc_op)op, n, i) != pv;
    }
    ok(poison_ok, "int8/uint8 poison differs from every expected value, every op, 1..31 ranks");
    /* inputs differ by rank and element, and stay small */
    int differs = 0, small = 1;
    for (size_t i = 0; i < 1000; i++) {
        double a = cc_input_value(1, CC_FLOAT32, CC_SUM, 0, 2, i), b = cc_input_value(1, CC_FLOAT32, CC_SUM, 1, 2, i);
        differs += a != b;
        small &= fabs(a) <= 4;
    }
    ok(differs > 700, "inputs of two ranks differ in most elements (%d of 1000)", differs);
    ok(small, "sum inputs are small integers");
    ok(cc_input_value(1, CC_INT32, CC_SUM, 0, 2, 5) != cc_input_value(2, CC_INT32, CC_SUM, 0, 2, 5) ||
           cc_input_value(1, CC_INT32, CC_SUM, 0, 2, 6) != cc_input_value(2, CC_INT32, CC_SUM, 0, 2, 6),
       "the seed changes the inputs");
    /* integer wrap-around is modelled */
    is_near(cc_expected_reduce(3, CC_UINT8, CC_SUM, 300, 0) >= 0 && cc_expected_reduce(3, CC_UINT8, CC_SUM, 300, 0) < 256, 1, 0,
            "uint8 sums over 300 ranks wrap into range");
    /* detection: a changed element does not match */
    ok(!cc_value_matches(CC_FLOAT32, CC_SUM, 13, 12, 4), "float32 off by one is wrong");
    ok(!cc_value_matches(CC_BFLOAT16, CC_SUM, 112, 12, 4), "bf16 +100 is wrong");
    ok(!cc_value_matches(CC_BFLOAT16, CC_SUM, 13, 12, 16), "bf16 sum off by one at 16 ranks is wrong");
    ok(!cc_value_matches(CC_FLOAT16, CC_SUM, NAN, 12, 4), "NaN poison is wrong");
    ok(!cc_value_matches(CC_INT8, CC_SUM, 90, 12, 4), "int8 off by 78 is wrong");
    ok(!cc_value_matches(CC_FLOAT32, CC_SUM, 12.0000005, 12, 4), "float32 sums are exact: no tolerance");
    ok(cc_value_matches(CC_FLOAT32, CC_AVG, 1.5 + 1e-7, 1.5, 3), "float32 avg of 3 ranks: rounding within tolerance");
    ok(!cc_value_matches(CC_FLOAT32, CC_AVG, 1.5 + 1e-7, 1.5, 4), "float32 avg of 4 ranks: exact, no tolerance");
    ok(!cc_value_matches(CC_BFLOAT16, CC_AVG, 12.0 / 7, 12.0 / 8, 8), "bf16 avg divided by n-1 is wrong");
    /* element access round trip */
    int64_t v64 = 0;
    cc_dtype_set(CC_INT64, &v64, 0, -5);
    is_int(v64, -5, "int64 set");
    uint8_t u8 = 0;
    cc_dtype_set(CC_UINT8, &u8, 0, 257);
    is_int(u8, 1, "uint8 set wraps");
    /* the 16-bit average's own loop gives what cc_dtype_get / cc_dtype_set give, for every
     * bit pattern and rank count 3 and 7 */
    {
        static uint16_t all[65536], ref[65536];
        static const enum cc_dtype half[2] = {CC_FLOAT16, CC_BFLOAT16};
        for (int k = 0; k < 2; k++)
            for (int n = 3; n <= 7; n += 4) {
                size_t diff = 0;
                for (size_t i = 0; i < 65536; i++) {
                    all[i] = (uint16_t)i;
                    cc_dtype_set(half[k], ref, i, cc_dtype_get(half[k], all, i) / n);
                }
                cc_scale_avg(half[k], all, 65536, n);
                for (size_t i = 0; i < 65536; i++) {
                    double a = cc_dtype_get(half[k], all, i), b = cc_dtype_get(half[k], ref, i);
                    diff += all[i] != ref[i] && !(a != a && b != b); /* NaNs may differ in payload */
                }
                is_int((long long)diff, 0, "%s / %d: scale loop equals get/set on all 65536 patterns",
                       cc_dtype_name(half[k]), n);
            }
    }
    return tap_done();
}
