/* harness_vs_loop - does ccbench's harness add anything to what it measures? In ONE process,
 * for each size, a plain OSU-style MPI_Allreduce loop (own buffers, 10 + 100 iterations, each
 * timed alone, barrier after each, mean per rank averaged over ranks) and ccbench's harness on
 * the MPI backend (cc_bench_run: 10 warm-up + 100 timed iterations, barrier between them,
 * times averaged over ranks) are alternated REPS times (order swapped every repetition), so the
 * launch-to-launch noise of a shared machine hits both alike. Prints a markdown table of the
 * medians. Usage: mpirun -np N harness_vs_loop [reps [min_bytes [max_bytes]]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/harness.h"
#include "core/stats.h"
#include "rte/rte.h"

static double plain_loop(size_t bytes)
{
    int n;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    float *s = malloc(bytes), *r = malloc(bytes);
    for (size_t i = 0; i < bytes / sizeof *s; i++)
        s[i] = (float)(i % 7);
    memset(r, 0, bytes);
    double timer = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 110; i++) {
        double t0 = MPI_Wtime();
        MPI_Allreduce(s, r, (int)(bytes / sizeof *s), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        if (i >= 10)
            timer += t1 - t0;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double lat = timer * 1e6 / 100, sum = 0;
    MPI_Allreduce(&lat, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    free(s);
    free(r);
    return sum / n;
}

static void on_row(const struct cc_row *row, void *user) { *(double *)user = row->m[CC_OOP].time_us; }

int main(int argc, char **argv)
{
    struct cc_rte rte;
    if (cc_rte_init(&rte, &argc, &argv) != CC_OK)
        return 2;
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    size_t minb = argc > 2 ? strtoull(argv[2], NULL, 0) : 65536;
    size_t maxb = argc > 3 ? strtoull(argv[3], NULL, 0) : (size_t)64 << 20;
    const struct cc_backend *be = cc_backend_find("mpi");
    struct cc_backend_conf conf = {.timeout_s = 60, .seed = 42, .max_bytes = maxb};
    void *ctx;
    char err[256];
    if (be->init(&conf, &rte, &ctx, err, sizeof err) != CC_OK)
        return 2;
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
