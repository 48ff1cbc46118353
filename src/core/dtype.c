#include "core/dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

const char *const cc_dtype_names[] = {"int8",    "uint8",    "int32",   "uint32",
                                      "int64",   "uint64",   "float16", "bfloat16",
                                      "float32", "float64",  NULL};
const char *const cc_op_names[] = {"sum", "prod", "min", "max", "avg", NULL};

static const size_t dtype_sizes[CC_DTYPE_COUNT] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};

size_t cc_dtype_size(enum cc_dtype t) { return (unsigned)t < CC_DTYPE_COUNT ? dtype_sizes[t] : 0; }
int cc_dtype_is_float(enum cc_dtype t) { return t >= CC_FLOAT16 && t <= CC_FLOAT64; }
int cc_dtype_is_signed(enum cc_dtype t)
{
    return t == CC_INT8 || t == CC_INT32 || t == CC_INT64 || cc_dtype_is_float(t);
}
const char *cc_dtype_name(enum cc_dtype t) { return (unsigned)t < CC_DTYPE_COUNT ? cc_dtype_names[t] : "?"; }
const char *cc_op_name(enum cc_op op) { return (unsigned)op < CC_OP_COUNT ? cc_op_names[op] : "?"; }
int cc_op_valid(enum cc_op op, enum cc_dtype t) { return op != CC_AVG || cc_dtype_is_float(t); }

/* ---- half precision ---------------------------------------------------------------- */

float cc_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    float f;
    if (exp == 0) {
        /* zero or subnormal: man * 2^-24 */
        f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    if (exp == 31)
        bits = sign | 0x7f800000u | (man << 13);
    else
        bits = sign | ((exp + 112) << 23) | (man << 13);
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t cc_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0);
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow */
        return sign | 0x7c00;
    if (absx < 0x38800000u) { /* below 2^-14: subnormal half */
        float a;
        memcpy(&a, &absx, sizeof a);
        float m = a * 16777216.0f; /* a / 2^-24 */
        uint32_t r = (uint32_t)lrintf(m); /* round to nearest even */
        return sign | (uint16_t)r;
    }
    uint32_t exp = (absx >> 23) - 112, man = absx & 0x7fffff;
    uint32_t h = (exp << 10) | (man >> 13);
    uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
        h++;
    return sign | (uint16_t)h;
}

float cc_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t cc_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

/* ---- element access ----------------------------------------------------------------- */

double cc_dtype_get(enum cc_dtype t, const void *buf, size_t i)
{
    switch (t) {
    case CC_INT8: return ((const int8_t *)buf)[i];
    case CC_UINT8: return ((const uint8_t *)buf)[i];
    case CC_INT32: return ((const int32_t *)buf)[i];
    case CC_UINT32: return ((const uint32_t *)buf)[i];
    case CC_INT64: return (double)((const int64_t *)buf)[i];
    case CC_UINT64: return (double)((const uint64_t *)buf)[i];
    case CC_FLOAT16: return cc_half_to_float(((const uint16_t *)buf)[i]);
    case CC_BFLOAT16: return cc_bf16_to_float(((const uint16_t *)buf)[i]);
    case CC_FLOAT32: return ((const float *)buf)[i];
    case CC_FLOAT64: return ((const double *)buf)[i];
    default: return 0;
    }
}

/* Convert a double holding an integer to the wrapped integer of the type (two's complement). */
static uint64_t wrap_u64(double v)
{
    if (v < 0)
        return (uint64_t)(int64_t)v;
    return (uint64_t)v;
}

void cc_dtype_set(enum cc_dtype t, void *buf, size_t i, double v)
{
    switch (t) {
    case CC_INT8: ((int8_t *)buf)[i] = (int8_t)(uint8_t)wrap_u64(v); break;
    case CC_UINT8: ((uint8_t *)buf)[i] = (uint8_t)wrap_u64(v); break;
    case CC_INT32: ((int32_t *)buf)[i] = (int32_t)(uint32_t)wrap_u64(v); break;
    case CC_UINT32: ((uint32_t *)buf)[i] = (uint32_t)wrap_u64(v); break;
    case CC_INT64: ((int64_t *)buf)[i] = (int64_t)wrap_u64(v); break;
    case CC_UINT64: ((uint64_t *)buf)[i] = wrap_u64(v); break;
    case CC_FLOAT16: ((uint16_t *)buf)[i] = cc_float_to_half((float)v); break;
    case CC_BFLOAT16: ((uint16_t *)buf)[i] = cc_float_to_bf16((float)v); break;
    case CC_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case CC_FLOAT64: ((double *)buf)[i] = v; break;
    default: break;
    }
}

/* ---- reduction kernels --------------------------------------------------------------- */

#define CC_MINV(a, b) ((b) < (a) ? (b) : (a))
#define CC_MAXV(a, b) ((b) > (a) ? (b) : (a))

/* Integer kernels compute sums and products in the unsigned type U so overflow wraps. */
#define CC_INT_KERNEL(T, U)                                                                   \
    static void red_##T(enum cc_op op, T *o, const T *a, const T *b, size_t n)                \
    {                                                                                         \
        size_t i;                                                                             \
        switch (op) {                                                                         \
        case CC_SUM:                                                                          \
        case CC_AVG:                                                                          \
            for (i = 0; i < n; i++) o[i] = (T)(U)((U)a[i] + (U)b[i]);                         \
            break;                                                                            \
        case CC_PROD:                                                                         \
            for (i = 0; i < n; i++) o[i] = (T)(U)((U)a[i] * (U)b[i]);                         \
            break;                                                                            \
        case CC_MIN:                                                                          \
            for (i = 0; i < n; i++) o[i] = CC_MINV(a[i], b[i]);                               \
            break;                                                                            \
        case CC_MAX:                                                                          \
            for (i = 0; i < n; i++) o[i] = CC_MAXV(a[i], b[i]);                               \
            break;                                                                            \
        default: break;                                                                       \
        }                                                                                     \
    }

#define CC_FLT_KERNEL(T)                                                                      \
    static void red_##T(enum cc_op op, T *o, const T *a, const T *b, size_t n)                \
    {                                                                                         \
        size_t i;                                                                             \
        switch (op) {                                                                         \
        case CC_SUM:                                                                          \
        case CC_AVG:                                                                          \
            for (i = 0; i < n; i++) o[i] = a[i] + b[i];                                       \
            break;                                                                            \
        case CC_PROD:                                                                         \
            for (i = 0; i < n; i++) o[i] = a[i] * b[i];                                       \
            break;                                                                            \
        case CC_MIN:                                                                          \
            for (i = 0; i < n; i++) o[i] = CC_MINV(a[i], b[i]);                               \
            break;                                                                            \
        case CC_MAX:                                                                          \
            for (i = 0; i < n; i++) o[i] = CC_MAXV(a[i], b[i]);                               \
            break;                                                                            \
        default: break;                                                                       \
        }                                                                                     \
    }

typedef unsigned int cc_u32_promo; /* uint8 products promote through unsigned int */
CC_INT_KERNEL(int8_t, uint8_t)
CC_INT_KERNEL(uint8_t, cc_u32_promo)
CC_INT_KERNEL(int32_t, uint32_t)
CC_INT_KERNEL(uint32_t, uint32_t)
CC_INT_KERNEL(int64_t, uint64_t)
CC_INT_KERNEL(uint64_t, uint64_t)
CC_FLT_KERNEL(float)
CC_FLT_KERNEL(double)

static float apply_f(enum cc_op op, float x, float y)
{
    switch (op) {
    case CC_PROD: return x * y;
    case CC_MIN: return CC_MINV(x, y);
    case CC_MAX: return CC_MAXV(x, y);
    default: return x + y;
    }
}

static void red_half(enum cc_op op, uint16_t *o, const uint16_t *a, const uint16_t *b, size_t n,
                     int bf)
{
    if (bf)
        for (size_t i = 0; i < n; i++)
            o[i] = cc_float_to_bf16(apply_f(op, cc_bf16_to_float(a[i]), cc_bf16_to_float(b[i])));
    else
        for (size_t i = 0; i < n; i++)
            o[i] = cc_float_to_half(apply_f(op, cc_half_to_float(a[i]), cc_half_to_float(b[i])));
}

void cc_reduce3(enum cc_dtype t, enum cc_op op, void *o, const void *a, const void *b, size_t n)
{
    switch (t) {
    case CC_INT8: red_int8_t(op, o, a, b, n); break;
    case CC_UINT8: red_uint8_t(op, o, a, b, n); break;
    case CC_INT32: red_int32_t(op, o, a, b, n); break;
    case CC_UINT32: red_uint32_t(op, o, a, b, n); break;
    case CC_INT64: red_int64_t(op, o, a, b, n); break;
    case CC_UINT64: red_uint64_t(op, o, a, b, n); break;
    case CC_FLOAT16: red_half(op, o, a, b, n, 0); break;
    case CC_BFLOAT16: red_half(op, o, a, b, n, 1); break;
    case CC_FLOAT32: red_float(op, o, a, b, n); break;
    case CC_FLOAT64: red_double(op, o, a, b, n); break;
    default: break;
    }
}

void cc_reduce(enum cc_dtype t, enum cc_op op, void *dst, const void *src, size_t n)
{
    cc_reduce3(t, op, dst, dst, src, n);
}

void cc_scale_avg(enum cc_dtype t, void *buf, size_t n, int nranks)
{
    switch (t) {
    case CC_FLOAT32: {
        float *f = buf;
        for (size_t i = 0; i < n; i++) f[i] /= (float)nranks;
        break;
    }
    case CC_FLOAT64: {
        double *d = buf;
        for (size_t i = 0; i < n; i++) d[i] /= (double)nranks;
        break;
    }
    case CC_FLOAT16: { /* the same arithmetic as cc_dtype_get/set, without their dispatch */
        uint16_t *u = buf;
        for (size_t i = 0; i < n; i++)
            u[i] = cc_float_to_half((float)((double)cc_half_to_float(u[i]) / nranks));
        break;
    }
    case CC_BFLOAT16: {
        uint16_t *u = buf;
        for (size_t i = 0; i < n; i++)
            u[i] = cc_float_to_bf16((float)((double)cc_bf16_to_float(u[i]) / nranks));
        break;
    }
    default:
        break;
    }
}

/* ---- seeded inputs and expected results --------------------------------------------- */

static inline uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Significand bits of a floating type, the implicit bit included (integers up to 2^bits are
 * exact); 0 for integer types. */
static int sig_bits(enum cc_dtype t)
{
    switch (t) {
    case CC_FLOAT16: return 11;
    case CC_BFLOAT16: return 8;
    case CC_FLOAT32: return 24;
    case CC_FLOAT64: return 53;
    default: return 0;
    }
}

/* A window's rounding in an average, in units of u (the unit roundoff) times 1/n: w non-zero
 * inputs of at most 4, each times 1/n rounded twice (1/n itself, then the product: at most
 * 2.01 u * 4/n each), and w - 1 partial sums of at most 4w/n rounded once each. */
static double window_err(int w) { return 4.0 * w * w + 9.0 * w; }

/* float16 quotients below 2^-14 (beyond 16,384 ranks) are subnormal, with a fixed spacing of
 * 2^-24: the error of the rounded 1/n (at most half of that) is multiplied by each input (at
 * most 4), 4w * 2^-25 for w inputs however small their share (products below 2^-13 are then
 * exact; larger ones round relatively, in window_err). 5w * 2^-25 bounds it with room. */
static double sub_slack(enum cc_dtype t, int w, int n)
{
    return t == CC_FLOAT16 && n > 16384 ? 5.0 * w * ldexp(1.0, -25) : 0;
}

static int sum_width(enum cc_dtype t, enum cc_op op, int nranks)
{
    int n = nranks > 0 ? nranks : 1, bits = sig_bits(t);
    if (!bits || (op != CC_SUM && op != CC_AVG))
        return n; /* integers wrap exactly; other ops have inputs of their own */
    double span = ldexp(1.0, bits); /* 1/u */
    if (op == CC_SUM) {
        /* every rank's input within 4: exact while 4n fits the significand, else a window
         * of 2^bits/4 ranks, whose sum is exact */
        double w = span / 4;
        return (double)n <= w ? n : (int)w;
    }
    /* avg, every rank giving an input: exact at a power of two whose 4n fits (1/n is exact,
     * every term and partial sum a multiple of 1/n within 4); elsewhere checked within the
     * rounding u * (4 + 4(n + 1)), which must stay under half of one rank's share (1/n) */
    if (!(n & (n - 1)) && 4.0 * n <= span)
        return n;
    if (8.0 * n * (n + 2) <= span)
        return n;
    /* else a window, the widest whose rounding (the result itself at most 4w/n, plus
     * window_err, plus float16's subnormal slack) stays under half a share: bfloat16 4,
     * float16 14 up to 16,384 ranks and fewer beyond (13 at 20,000, 11 at 100,000, 3 at a
     * million, 1 up to about 3.3 million), float32 1446. Beyond float16's last width of 1
     * none would do: every rank gives an input, and a missing one cannot be seen there. */
    int w = (int)((sqrt(676.0 + 32.0 * span) - 26.0) / 16.0); /* 2(4w^2 + 13w) <= span */
    while (w > 0 && (window_err(w) + 4.0 * w) / span + sub_slack(t, w, n) * n > 0.5)
        w--;
    while (w > 0 && (window_err(w + 1) + 4.0 * (w + 1)) / span + sub_slack(t, w + 1, n) * n <= 0.5)
        w++;
    return w > 0 ? w : n;
}

int cc_sum_width(enum cc_dtype t, enum cc_op op, int nranks)
{
    /* asked for every element filled and checked, always with the same arguments in a run:
     * the last answer is kept (per thread) */
    static _Thread_local struct { int t, op, n, w; } last = {-1, -1, -1, 0};
    if (last.t != (int)t || last.op != (int)op || last.n != nranks) {
        last.w = sum_width(t, op, nranks);
        last.t = (int)t, last.op = (int)op, last.n = nranks;
    }
    return last.w;
}

/* First rank of element i's window: consecutive elements take consecutive windows, so any
 * ceil(n / w) consecutive elements hear every rank. */
static int window_start(uint64_t seed, size_t i, int n, int w)
{
    uint64_t off = mix64(seed ^ 0x77696e646f77ull) % (uint64_t)n;
    return (int)(((uint64_t)(i % (size_t)n) * (uint64_t)w + off) % (uint64_t)n);
}

int cc_sum_window(uint64_t seed, enum cc_dtype t, enum cc_op op, int nranks, size_t i, int *start)
{
    int n = nranks > 0 ? nranks : 1, w = cc_sum_width(t, op, n);
    *start = w < n ? window_start(seed, i, n, w) : 0;
    return w;
}

static uint64_t input_hash(uint64_t seed, int rank, size_t i)
{
    return mix64(seed ^ mix64(((uint64_t)(unsigned)rank << 40) ^ (uint64_t)i));
}

/* A window rank's input: +-1..4, never 0 (a rank left out always shows) */
static double window_value(uint64_t h)
{
    double v = (double)(1 + (h >> 1) % 4);
    return (h & 1) ? -v : v;
}

/* cc_input_value, with element i's sum/avg window (width w, first rank start) given: the
 * callers that walk many elements or ranks find it once. n >= 1. */
static double input_in(uint64_t seed, enum cc_dtype t, enum cc_op op, int rank, int n, size_t i,
                       int w, int start)
{
    uint64_t h = input_hash(seed, rank, i);
    int sgn = cc_dtype_is_signed(t);
    switch (op) {
    case CC_PROD: {
        /* products of at most six 2s (<= 64) and signs stay exact in every type: the 2s come
         * from a window of six ranks that moves with the element, so every rank's data
         * shows in some products (a rank left out or counted twice is caught) */
        uint64_t first = mix64(seed ^ 0x70726f64ull ^ mix64((uint64_t)i)) % (uint64_t)n;
        int in_window = ((uint64_t)rank + (uint64_t)n - first) % (uint64_t)n < 6;
        if (in_window && (h & 1))
            return 2;
        if (sgn && ((h >> 3) & 7) == 0)
            return -1;
        return 1;
    }
    case CC_MIN:
    case CC_MAX:
        return sgn ? (double)((int)(h % 128) - 64) : (double)(h % 128);
    default: /* sum, avg */
        if (w >= n)
            return sgn ? (double)((int)(h % 9) - 4) : (double)(h % 9);
        /* a window of w ranks gives each element +-1..4, the others 0: the sum is exact
         * whatever n */
        if (((uint64_t)rank + (uint64_t)n - (uint64_t)start) % (uint64_t)n >= (uint64_t)w)
            return 0;
        return window_value(h);
    }
}

double cc_input_value(uint64_t seed, enum cc_dtype t, enum cc_op op, int rank, int nranks,
                      size_t i)
{
    int n = nranks > 0 ? nranks : 1, start, w = cc_sum_window(seed, t, op, n, i, &start);
    return input_in(seed, t, op, rank, n, i, w, start);
}

void cc_fill_input(void *buf, enum cc_dtype t, enum cc_op op, uint64_t seed, int rank,
                   int nranks, size_t first, size_t n)
{
    int nr = nranks > 0 ? nranks : 1, w = cc_sum_width(t, op, nr);
    for (size_t k = 0; k < n; k++) {
        int start = w < nr ? window_start(seed, first + k, nr, w) : 0;
        cc_dtype_set(t, buf, k, input_in(seed, t, op, rank, nr, first + k, w, start));
    }
}

/* Wrap an exact integer to the type's range, as the type's own arithmetic would. */
static double wrap_int(enum cc_dtype t, double v)
{
    uint64_t u = wrap_u64(v);
    switch (t) {
    case CC_INT8: return (int8_t)(uint8_t)u;
    case CC_UINT8: return (uint8_t)u;
    case CC_INT32: return (int32_t)(uint32_t)u;
    case CC_UINT32: return (uint32_t)u;
    case CC_INT64: return (double)(int64_t)u;
    case CC_UINT64: return (double)u;
    default: return v;
    }
}

double cc_expected_reduce(uint64_t seed, enum cc_dtype t, enum cc_op op, int nranks, size_t i)
{
    int start, w = cc_sum_window(seed, t, op, nranks, i, &start);
    if (nranks > 0 && w < nranks) { /* a window: the other ranks give 0 */
        double acc = 0;
        for (int k = 0; k < w; k++)
            acc += window_value(input_hash(seed, (start + k) % nranks, i));
        return op == CC_AVG ? acc / nranks : acc;
    }
    int n = nranks > 0 ? nranks : 1;
    double acc = input_in(seed, t, op, 0, n, i, w, start);
    for (int r = 1; r < nranks; r++) {
        double v = input_in(seed, t, op, r, n, i, w, start);
        switch (op) {
        case CC_PROD: acc *= v; break;
        case CC_MIN: acc = CC_MINV(acc, v); break;
        case CC_MAX: acc = CC_MAXV(acc, v); break;
        default: acc += v; break;
        }
        if (!cc_dtype_is_float(t))
            acc = wrap_int(t, acc);
    }
    if (op == CC_AVG)
        acc /= nranks;
    return acc;
}

int cc_value_matches(enum cc_dtype t, enum cc_op op, double got, double exp, int nranks)
{
    if (!cc_dtype_is_float(t))
        return got == exp;
    if (got == exp)
        return 1;
    if (isnan(got))
        return 0;
    int bits = sig_bits(t);
    double u = ldexp(1.0, -bits); /* unit roundoff */
    int nr = nranks > 0 ? nranks : 1, w = cc_sum_width(t, op, nr);
    double n = nr;
    if (op != CC_AVG)
        return 0; /* small integers, powers of two, sums within the significand: exact */
    /* n a power of two whose 4n fits the significand: 1/n is exact, every term x/n and every
     * partial sum is a multiple of 1/n within 4, so both orders below are exact */
    if (w == nr && !(nr & (nr - 1)) && 4.0 * n <= ldexp(1.0, bits))
        return 0;
    /* sum then divide: the sum is exact, one rounding of the quotient; or each input
     * multiplied by 1/n rounded to the type (NCCL's floating-point avg), then summed: two
     * roundings of each term of at most 4/n, and of the partial sums (every rank giving an
     * input: n - 1 of at most 4; a window: w of at most 4w/n) */
    if (w == nr)
        return fabs(got - exp) <= u * (fabs(exp) + 4.0 * (n + 1));
    return fabs(got - exp) <= u * (fabs(exp) + window_err(w) / n) + sub_slack(t, w, nr);
}

void cc_fill_poison(void *buf, enum cc_dtype t, size_t n)
{
    if (cc_dtype_is_float(t)) {
        for (size_t i = 0; i < n; i++)
            cc_dtype_set(t, buf, i, NAN);
        return;
    }
    /* a value no collective can produce from the inputs: 127 and 255 lie outside every
     * 8-bit result below 32 ranks (sums within 4n or 8n, min/max inputs within 7 bits,
     * products powers of two); 0x5a5a... is out of reach of the wider types' results */
    int byte = t == CC_INT8 ? 0x7f : t == CC_UINT8 ? 0xff : 0x5a;
    memset(buf, byte, n * cc_dtype_size(t));
}
