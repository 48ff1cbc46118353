/* harness_vs_loop - does ccbench's harness add anything to what it measures? In ONE process,
 * for each size, a plain OSU-style MPI_Allreduce loop (own buffers, 10 + 100 iterations, each
 * timed alone, barrier after each, mean per rank averaged over ranks) and ccbench's harness on
 * the MPI backend (cc_bench_run: 10 warm-up + 100 timed iterations, barrier between them,
 * times averaged over ranks) are alternated REPS times (order swapped every repetition), so the
 * launch-to-launch noise of a shared machine hits both alike. Prints a markdown table of the
 * medians. Usage: mpirun -np N harness_vs_loop [reps [min_bytes [max_bytes]]]
 *
 * With "sweep" as the first argument: whole sweeps 8 B - 64 MiB alternated REPS times, the
 * plain loop with OSU's fixed counts (1000 + 200 up to 8 KiB, 100 + 10 above) against the
 * harness's adaptive iterations (--precision 2 defaults); reports the wall time of each sweep
 * and, per size, the spread (max - min) / median of each tool over the repetitions.
 * Usage: mpirun -np N harness_vs_loop sweep [reps] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "core/stats.h"
#include "rte/rte.h"

static double plain_loop_n(size_t bytes, int iters, int skip)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    float *s = malloc(bytes), *r = malloc(bytes);
    for (size_t i = 0; i < bytes / sizeof *s; i++)
        s[i] = (float)(i % 7);
    memset(r, 0, bytes);
    double timer = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + skip; i++) {
        double t0 = MPI_Wtime();
        MPI_Allreduce(s, r, (int)(bytes / sizeof *s), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        if (i >= skip)
            timer += t1 - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double lat = timer * 1e6 / iters, sum = 0;
    MPI_Allreduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    free(s);
    free(r);
    return sum / n;
}

static double plain_loop(size_t bytes) { return plain_loop_n(bytes, 100, 10); }

static cc_status on_row(const struct cc_row *row, void *user)
{
    *(double *)user = row->m[CC_OOP].time_us;
    return CC_OK;
}

#define NSIZES 24 /* 8 B .. 64 MiB */
static double sweep_t[NSIZES];
static cc_status on_sweep_row(const struct cc_row *row, void *user)
{
    (void)user;
    int k = 0;
    while (((size_t)8 << k) < row->bytes)
        k++;
    sweep_t[k] = row->m[CC_OOP].time_us;
    return CC_OK;
}

static double spread(const double *v, int n)
{
    struct cc_stats s;
    cc_stats_compute(v, (size_t)n, &s);
    return s.p50 > 0 ? (s.max - s.min) / s.p50 : 0;
}

/* Whole sweeps alternated: fixed OSU counts vs the adaptive harness. */
static void sweeps(struct cc_rte *rte, const struct cc_backend *be, void *ctx, int reps)
{
    double (*a)[NSIZES] = calloc((size_t)reps, sizeof *a), (*b)[NSIZES] = calloc((size_t)reps, sizeof *b);
    double *wa = calloc((size_t)reps, sizeof *wa), *wb = calloc((size_t)reps, sizeof *wb);
    for (int k = 0; k < reps; k++) {
        for (int pass = 0; pass < 2; pass++) {
            double t0 = MPI_Wtime();
            if ((pass == 0) == (k % 2 == 0)) {
                for (int i = 0; i < NSIZES; i++) {
                    size_t bytes = (size_t)8 << i;
                    a[k][i] = plain_loop_n(bytes, bytes <= 8192 ? 1000 : 100, bytes <= 8192 ? 200 : 10);
                }
                wa[k] = MPI_Wtime() - t0;
            } else {
                struct cc_bench_params p = {
                    .rte = rte, .backend = be, .bctx = ctx, .coll_mask = 1u << CC_ALLREDUCE,
                    .dtype_mask = 1u << CC_FLOAT32, .op_mask = 1u << CC_SUM,
                    .sweep = {8, (size_t)64 << 20, 2, 0}, .places = 1, .warmup = 3, .iters = 0,
                    .precision_pct = 2, .max_time_s = 0.2, .min_iters = 5, .max_iters = 1000000,
                    .check_iters = 1, .time_mode = CC_TIME_AVG, .iter_barrier = 1, .seed = 42,
                    .corrupt_rank = -1, .timeout_s = 60, .on_row = on_sweep_row,
                };
                cc_bench_run(&p);
                memcpy(b[k], sweep_t, sizeof sweep_t);
                wb[k] = MPI_Wtime() - t0;
            }
        }
    }
    if (rte->rank == 0) {
        printf("| size (B) | fixed loop median (µs) | adaptive harness median (µs) | spread fixed | spread adaptive |\n"
               "|---:|---:|---:|---:|---:|\n");
        double sa[NSIZES], sb[NSIZES], col[64];
        for (int i = 0; i < NSIZES; i++) {
            double ca[64], cb[64];
            for (int k = 0; k < reps; k++) {
                ca[k] = a[k][i];
                cb[k] = b[k][i];
            }
            sa[i] = spread(ca, reps);
            sb[i] = spread(cb, reps);
            printf("| %zu | %.2f | %.2f | %.1f%% | %.1f%% |\n", (size_t)8 << i, cc_median(ca, (size_t)reps),
                   cc_median(cb, (size_t)reps), sa[i] * 100, sb[i] * 100);
        }
        (void)col;
        printf("\nWall time per sweep (median of %d): fixed %.2f s, adaptive %.2f s (ratio %.2f); "
               "median spread over sizes: fixed %.1f%%, adaptive %.1f%%.\n", reps,
               cc_median(wa, (size_t)reps), cc_median(wb, (size_t)reps),
               cc_median(wb, (size_t)reps) / cc_median(wa, (size_t)reps),
               cc_median(sa, NSIZES) * 100, cc_median(sb, NSIZES) * 100);
    }
    free(a);
    free(b);
    free(wa);
    free(wb);
}

int main(int argc, char **argv)
{
    struct cc_rte rte;
    if (cc_rte_init(&rte, &argc, &argv) != CC_OK)
        return 2;
    int sweep_mode = argc > 1 && strcmp(argv[1], "sweep") == 0;
    if (sweep_mode) {
        argv++;
        argc--;
    }
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1 || reps > 64)
        reps = 7;
    size_t minb = argc > 2 ? strtoull(argv[2], NULL, 0) : 65536;
    size_t maxb = argc > 3 ? strtoull(argv[3], NULL, 0) : (size_t)64 << 20;
    const struct cc_backend *be = cc_backend_find("mpi");
    struct cc_backend_conf conf = {.timeout_s = 60, .seed = 42, .max_bytes = maxb};
    void *ctx;
    char err[256];
    if (be->init(&conf, &rte, &ctx, err, sizeof err) != CC_OK)
        return 2;
    if (sweep_mode) {
        sweeps(&rte, be, ctx, reps);
        be->fini(ctx);
        cc_rte_fini(&rte);
        return 0;
    }
    double *a = calloc((size_t)reps, sizeof *a), *b = calloc((size_t)reps, sizeof *b);
    if (rte.rank == 0)
        printf("| size (B) | plain loop (µs) | ccbench harness (µs) | harness / loop | loop min-max (µs) | harness min-max (µs) |\n"
               "|---:|---:|---:|---:|---:|---:|\n");
    for (size_t bytes = minb; bytes <= maxb; bytes *= 2) {
        for (int k = 0; k < reps; k++) {
            double h = 0;
            struct cc_bench_params p = {
                .rte = &rte, .backend = be, .bctx = ctx, .coll_mask = 1u << CC_ALLREDUCE,
                .dtype_mask = 1u << CC_FLOAT32, .op_mask = 1u << CC_SUM,
                .sweep = {bytes, bytes, 2, 0}, .places = 1, .warmup = 10, .iters = 100,
                .precision_pct = 2, .max_time_s = 1, .min_iters = 5, .max_iters = 100,
                .check_iters = 0, .time_mode = CC_TIME_AVG, .iter_barrier = 1, .seed = 42,
                .corrupt_rank = -1, .timeout_s = 60, .on_row = on_row, .user = &h,
            };
            if (k % 2 == 0) {
                a[k] = plain_loop(bytes);
                cc_bench_run(&p);
            } else {
                cc_bench_run(&p);
                a[k] = plain_loop(bytes);
            }
            b[k] = h;
        }
        struct cc_stats sa, sb;
        cc_stats_compute(a, (size_t)reps, &sa);
        cc_stats_compute(b, (size_t)reps, &sb);
        if (rte.rank == 0)
            printf("| %zu | %.2f | %.2f | %.3f | %.1f-%.1f | %.1f-%.1f |\n", bytes, sa.p50, sb.p50,
                   sb.p50 / sa.p50, sa.min, sa.max, sb.min, sb.max);
        fflush(stdout);
    }
    free(a);
    free(b);
    be->fini(ctx);
    cc_rte_fini(&rte);
    return 0;
}
