/* gemm.h - how well one matrix multiply fills a GPU: tile and wave quantization.
 *
 * A GEMM library (cuBLAS, CUTLASS, hipBLASLt) splits the M x N output into tiles, one per
 * thread block, and runs them in waves of one tile per SM. The last wave is usually partly
 * empty and edge tiles are partly padding, so the achieved fraction of peak depends on the
 * shape: NVIDIA's "Matrix Multiplication Background User's Guide" works the A100 example (108
 * SMs, 256 x 128 tiles). ccbench models the largest 16-bit tile, 256 x 128 in either
 * orientation (the library picks the better one), and splits the reduction dimension when a
 * GEMM has fewer tiles than SMs (split-K). Everything else a GEMM loses (the efficiency of a
 * perfectly filled wave) is the layout engine's one calibrated constant. docs/layout.md.
 */
#ifndef CC_LAYOUT_GEMM_H
#define CC_LAYOUT_GEMM_H

/* Fraction (0..1] of `sms` SMs doing useful work while computing `batch` products with
 * rows x cols outputs each, reducing over k. 1.0 when sms <= 0 (quantization not modelled)
 * or a size (k included) is not positive. Deterministic; no allocation. */
double cc_gemm_wave_eff(double rows, double cols, double k, double batch, int sms);

/* Seconds for C = A(M x K) * B(K x N), `batch` times, at `rate` FLOP/s for a perfectly
 * filled machine: nfwd forward products (2 with full recomputation), plus the two backward
 * products when bwd is set: dA = dC * B^T (M x K output, reduces N) and dB = A^T * dC (K x N
 * output, reduces M). Each product takes 2*M*N*K*batch / (rate * its wave efficiency). */
double cc_gemm_time(double M, double N, double K, double batch, double rate, int sms, int nfwd,
                    int bwd);

#endif
