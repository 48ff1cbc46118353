/* ref_allreduce - a plain MPI_Allreduce timing loop in the manner of OSU's osu_allreduce,
 * the reference ccbench's MPI backend is compared with (tests/perf/bench-mpi-vs-reference.sh).
 *
 * For each size from 8 B to 64 MiB (x2): `skip` untimed then `iters` timed iterations of
 * MPI_Allreduce on float32 with MPI_SUM, each timed alone with MPI_Wtime and followed by an
 * untimed MPI_Barrier; iters/skip are OSU's defaults (1000/200 up to 8 KiB, 100/10 above).
 * Prints "size avg_us" (the average over ranks of each rank's mean) and the sweep's wall time.
 * Usage: mpirun -np N ref_allreduce [max_bytes [min_bytes]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    size_t maxb = (size_t)64 << 20, minb = 8;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        maxb = strtoull(argv[1], NULL, 0);
    if (argc > 2)
        minb = strtoull(argv[2], NULL, 0);
    float *send = malloc(maxb), *recv = malloc(maxb);
    if (!send || !recv)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (size_t i = 0; i < maxb / sizeof(float); i++)
        send[i] = (float)(i % 7);
    memset(recv, 0, maxb);
    double wall0 = MPI_Wtime();
    for (size_t bytes = minb; bytes <= maxb; bytes *= 2) {
        int count = (int)(bytes / sizeof(float));
        int large = bytes > 8192;
        int iters = large ? 100 : 1000, skip = large ? 10 : 200;
        double timer = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters + skip; i++) {
            double t0 = MPI_Wtime();
            MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            if (i >= skip)
                timer += t1 - t0;
            MPI_Barrier(MPI_COMM_WORLD);
        }
        double lat = timer * 1e6 / iters, avg = 0;
        MPI_Reduce(&lat, &avg, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("%zu %.3f\n", bytes, avg / size);
        fflush(stdout);
    }
    if (rank == 0)
        printf("# wall %.3f s\n", MPI_Wtime() - wall0);
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
