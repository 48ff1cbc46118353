/* gemm.c - tile and wave quantization of a matrix multiply (see gemm.h). */
#include "layout/gemm.h"

#include <math.h>

/* The largest 16-bit tile shape of cuBLAS/CUTLASS on A100/H100-class GPUs, both ways round. */
static const double tile_shapes[][2] = {{256.0, 128.0}, {128.0, 256.0}};
/* split-K keeps slices of the reduction at least this long */
#define SPLITK_MIN 256.0

double cc_gemm_wave_eff(double rows, double cols, double k, double batch, int sms)
{
    if (sms <= 0 || rows <= 0 || cols <= 0 || k <= 0 || batch <= 0)
        return 1.0;
    double best = 0.0;
    for (unsigned i = 0; i < sizeof tile_shapes / sizeof tile_shapes[0]; i++) {
        double tm = tile_shapes[i][0], tn = tile_shapes[i][1];
        double tiles = ceil(rows / tm) * ceil(cols / tn) * batch;
        double split = 1.0;
        if (tiles < sms) { /* too few tiles for one wave: split the reduction */
            split = floor(sms / tiles);
            double kmax = fmax(1.0, floor(k / SPLITK_MIN));
            split = fmin(split, kmax);
        }
        double waves = ceil(tiles * split / sms);
        /* useful work / work the SMs could have done in those waves */
        double eff = rows * cols * batch * split / (waves * sms * tm * tn);
        if (eff > best)
            best = eff;
    }
    return best > 1.0 ? 1.0 : best;
}

double cc_gemm_time(double M, double N, double K, double batch, double rate, int sms, int nfwd,
                    int bwd)
{
    if (rate <= 0 || M <= 0 || N <= 0 || K <= 0 || batch <= 0)
        return 0.0;
    double one = 2.0 * M * N * K * batch / rate;
    double t = nfwd * one / cc_gemm_wave_eff(M, N, K, batch, sms);
    if (bwd)
        t += one / cc_gemm_wave_eff(M, K, N, batch, sms) +
             one / cc_gemm_wave_eff(K, N, M, batch, sms);
    return t;
}
