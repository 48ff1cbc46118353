/* Datatypes: half conversions, reduction kernels, seeded inputs and expected values for
 * every op and type, in every reduction order. */
#include <stdint.h>
#include <stdlib.h>

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
    cc_fill_input(acc, t, op, 7, first, 0, n);
    for (int k = 1; k < nranks; k++) {
        int r = reverse ? nranks - 1 - k : k;
        cc_fill_input(in, t, op, 7, r, 0, n);
        cc_reduce(t, op, acc, in, n);
    }
    if (op == CC_AVG)
        cc_scale_avg(t, acc, n, nranks);
    int good = 1;
    for (size_t i = 0; i < n && good; i++) {
        double e = cc_expected_reduce(7, t, op, nranks, i);
        double g = cc_dtype_get(t, acc, i);
        if (!cc_value_matches(t, g, e, nranks)) {
            diag("%s %s n=%d i=%zu got %g want %g", cc_dtype_name(t), cc_op_name(op), nranks, i, g, e);
            good = 0;
        }
    }
    free(acc);
    free(in);
    return good;
}

int main(void)
{
    half_tests();
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
    /* inputs differ by rank and element, and stay small */
    int differs = 0, small = 1;
    for (size_t i = 0; i < 1000; i++) {
        double a = cc_input_value(1, CC_FLOAT32, CC_SUM, 0, i), b = cc_input_value(1, CC_FLOAT32, CC_SUM, 1, i);
        differs += a != b;
        small &= fabs(a) <= 4;
    }
    ok(differs > 700, "inputs of two ranks differ in most elements (%d of 1000)", differs);
    ok(small, "sum inputs are small integers");
    ok(cc_input_value(1, CC_INT32, CC_SUM, 0, 5) != cc_input_value(2, CC_INT32, CC_SUM, 0, 5) ||
           cc_input_value(1, CC_INT32, CC_SUM, 0, 6) != cc_input_value(2, CC_INT32, CC_SUM, 0, 6),
       "the seed changes the inputs");
    /* integer wrap-around is modelled */
    is_near(cc_expected_reduce(3, CC_UINT8, CC_SUM, 300, 0) >= 0 && cc_expected_reduce(3, CC_UINT8, CC_SUM, 300, 0) < 256, 1, 0,
            "uint8 sums over 300 ranks wrap into range");
    /* detection: a changed element does not match */
    ok(!cc_value_matches(CC_FLOAT32, 13, 12, 4), "float32 off by one is wrong");
    ok(!cc_value_matches(CC_BFLOAT16, 112, 12, 4), "bf16 +100 is wrong");
    ok(!cc_value_matches(CC_FLOAT16, NAN, 12, 4), "NaN poison is wrong");
    ok(!cc_value_matches(CC_INT8, 90, 12, 4), "int8 poison is wrong");
    ok(cc_value_matches(CC_FLOAT32, 12.0000005, 12, 4), "float32 rounding within tolerance");
    /* element access round trip */
    int64_t v64 = 0;
    cc_dtype_set(CC_INT64, &v64, 0, -5);
    is_int(v64, -5, "int64 set");
    uint8_t u8 = 0;
    cc_dtype_set(CC_UINT8, &u8, 0, 257);
    is_int(u8, 1, "uint8 set wraps");
    return tap_done();
}
