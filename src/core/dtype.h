/* dtype.h - datatypes and reduction operators, host-side arithmetic on them, and the seeded
 * input values from which every collective's expected output is predicted.
 *
 * Half types (float16, bfloat16) are stored as uint16_t bit patterns and computed on the host
 * through float. Integer arithmetic wraps modulo 2^bits (computed unsigned), so results do not
 * depend on reduction order; floating-point inputs are small integers so sums and products are
 * exact (checked exactly: beyond what the significand holds for every rank, a window of ranks
 * gives each element its inputs, see cc_sum_width), and checks allow only the rounding an
 * average can do, which the inputs keep below one rank's share.
 */
#ifndef CC_DTYPE_H
#define CC_DTYPE_H

#include <stddef.h>
#include <stdint.h>

enum cc_dtype {
    CC_INT8, CC_UINT8, CC_INT32, CC_UINT32, CC_INT64, CC_UINT64,
    CC_FLOAT16, CC_BFLOAT16, CC_FLOAT32, CC_FLOAT64,
    CC_DTYPE_COUNT
};

enum cc_op { CC_SUM, CC_PROD, CC_MIN, CC_MAX, CC_AVG, CC_OP_COUNT };

/* NULL-terminated name lists in enum order (usable as option choices). */
extern const char *const cc_dtype_names[];
extern const char *const cc_op_names[];

size_t cc_dtype_size(enum cc_dtype t);
int cc_dtype_is_float(enum cc_dtype t);
int cc_dtype_is_signed(enum cc_dtype t);
const char *cc_dtype_name(enum cc_dtype t);
const char *cc_op_name(enum cc_op op);
/* Is `op` meaningful for `t`? avg needs a floating-point type (integer averages truncate). */
int cc_op_valid(enum cc_op op, enum cc_dtype t);

/* Half-precision conversions (round to nearest even). */
float cc_half_to_float(uint16_t h);
uint16_t cc_float_to_half(float f);
float cc_bf16_to_float(uint16_t h);
uint16_t cc_float_to_bf16(float f);

/* Element access as double (integers exactly up to 2^53). */
double cc_dtype_get(enum cc_dtype t, const void *buf, size_t i);
void cc_dtype_set(enum cc_dtype t, void *buf, size_t i, double v);

/* dst[i] = dst[i] op src[i] for n elements (avg behaves as sum here; see cc_scale_avg). */
void cc_reduce(enum cc_dtype t, enum cc_op op, void *dst, const void *src, size_t n);
/* out[i] = a[i] op b[i] (out may alias a or b). */
void cc_reduce3(enum cc_dtype t, enum cc_op op, void *out, const void *a, const void *b, size_t n);
/* Finish an average: buf[i] /= nranks (floating-point types only). */
void cc_scale_avg(enum cc_dtype t, void *buf, size_t n, int nranks);

/* The seeded input: value of element `i` of the buffer that rank `rank` contributes.
 * Small integers chosen so reductions are exact (see file comment). Floating sums and
 * averages over more ranks than cc_sum_width allows come from a window of that many ranks
 * that moves with the element (+-1..4 each, never 0); the other ranks give 0. */
double cc_input_value(uint64_t seed, enum cc_dtype t, enum cc_op op, int rank, int nranks,
                      size_t i);
/* How many ranks give a non-zero input to each element of a sum or average (n: every rank):
 * floating sums a window of 2^bits/4 beyond that many ranks (exact at any n); averages every
 * rank where the result is exact or one rank's share shows above the rounding (bfloat16 up
 * to 4 ranks or a power of two up to 64, float16 15 or a power of two up to 512, float32
 * 1447), else a window of the widest such width (bfloat16 4, float32 1446, float16 14 up to
 * 16,384 ranks and fewer beyond, as subnormal quotients round more; beyond about 3.3 million
 * ranks no width keeps a float16 average's missing rank visible: n, as below the window). */
int cc_sum_width(enum cc_dtype t, enum cc_op op, int nranks);
/* The window of element i: its width (cc_sum_width) and its first rank in *start (the window
 * is ranks start .. start + w - 1, modulo n; 0 when every rank gives an input). */
int cc_sum_window(uint64_t seed, enum cc_dtype t, enum cc_op op, int nranks, size_t i, int *start);
/* Fill n elements of buf with cc_input_value(seed, t, op, rank, nranks, first + k). */
void cc_fill_input(void *buf, enum cc_dtype t, enum cc_op op, uint64_t seed, int rank,
                   int nranks, size_t first, size_t n);
/* Expected value of element i after reducing the inputs of ranks 0..nranks-1 with op,
 * computed with the type's own arithmetic (wrapping integers, exact-or-tolerant floats). */
double cc_expected_reduce(uint64_t seed, enum cc_dtype t, enum cc_op op, int nranks, size_t i);
/* Does `got` match `expected` for type t after reducing with op over nranks ranks? Exact for
 * every op but avg (the inputs make every result exact); avg within the rounding a correct
 * reduction can do (sum then divide, or NCCL's inputs times 1/n then summed), exact where
 * that is none (a power of two whose 4n fits the significand). */
int cc_value_matches(enum cc_dtype t, enum cc_op op, double got, double expected, int nranks);

/* Value a never-written output element is set to before a collective (a detectable poison). */
void cc_fill_poison(void *buf, enum cc_dtype t, size_t n);

#endif
