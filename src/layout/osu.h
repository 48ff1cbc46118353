/* osu.h - read the text output of the OSU Micro-Benchmarks (osu_allreduce and the other
 * blocking collectives, osu_latency) as measurements, one point per table row.
 *
 * OSU prints neither how many ranks ran a test nor where: the caller says (ccbench layout
 * --results FILE@NODESxPER_NODE), and every test of the file is taken to have run so.
 *
 * What is taken from the log:
 *   - the test: each "# OSU <library> <name> Test [vX.Y]" title starts one. The library
 *     ("MPI", "MPI-CUDA", "MPI-ROCM", "NCCL", ...) says where the buffers were; the name
 *     gives the collective: Allreduce, Reduce, Broadcast, Reduce_scatter, Allgather,
 *     All-to-All Personalized Exchange, and the point-to-point "Latency" test as send/recv of
 *     two ranks. Every other test (gather, scatter, barrier, the v-variants, non-blocking and
 *     persistent tests, bandwidth and message-rate tests, one-sided tests) is passed over:
 *     its rows are counted, not used;
 *   - each row after the test's "# Size ..." column header: the size and the first time
 *     column (the average latency, us). OSU's size is what one rank contributes to an
 *     all-gather and sends to each peer in an all-to-all; it is turned into nccl-tests'
 *     size (coll/coll.h: times the rank count) so that both logs mean the same bytes. A row
 *     whose validation column (-c) says "Fail" is counted, not used.
 * Launcher line tags are skipped as in nccl-tests logs (cc_nccltests_untag). Lines that are
 * not OSU's own are passed over; a line that starts like a row but does not read as one is
 * counted, and named in a warning.
 */
#ifndef CC_LAYOUT_OSU_H
#define CC_LAYOUT_OSU_H

#include <stdio.h>
#include "core/status.h"
#include "layout/nccltests.h"

/* Counts of what a read found and passed over, for the caller's messages. */
struct cc_osu_summary {
    int tests;          /* test titles read */
    int rows;           /* result rows read */
    int points;         /* points handed to the callback */
    int other_rows;     /* rows of a test ccbench has no collective for */
    int failed_rows;    /* rows whose validation failed */
    int empty_rows;     /* rows of size 0 or time 0 */
    int bad_rows;       /* lines after a column header that start like a row but do not read
                           as one */
    long first_bad_line;
    int pre_header;     /* lines starting with a number before any test's column header */
    int host_tests;     /* tests read of MPI on host memory */
    int device_tests;   /* tests read of MPI on GPU memory (MPI-CUDA, MPI-ROCM, ...) */
};

/* Whether the stream holds OSU Micro-Benchmarks output (a "# OSU ... Test" title line).
 * Rewinds the stream. */
int cc_osu_sniff(FILE *f);

/* Read the whole stream: every test ran on nodes x per_node ranks (both at least 1). `path`
 * names the input in messages. CC_EPARSE with "results 'PATH': line N: ..." for a
 * point-to-point test said to run on other than 2 ranks. */
cc_status cc_osu_read(FILE *f, const char *path, int nodes, int per_node, cc_nt_point_fn fn,
                      void *ctx, struct cc_osu_summary *sum, char *err, size_t errlen);

#endif
