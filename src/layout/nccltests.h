/* nccltests.h - read the text output of nccl-tests (all_reduce_perf and the other *_perf
 * programs) as measurements: one point per table row, with the row's collective, the group
 * size and the hosts it spanned.
 *
 * What is taken from the log:
 *   - the test: the "# Collective test starting: NAME" line (nccl-tests since mid 2025), or
 *     else the file's name (all_reduce_perf.log, allgather-16gpu.txt, ...); gather, scatter,
 *     alltoallv and the other tests ccbench has no collective for are passed over;
 *   - the group: the "#  Rank N Group G Pid P on HOST device D ..." lines (older versions
 *     print no "Group"): ranks = the lines of the first line's group (NCCL_TESTS_SPLIT
 *     runs several groups and reports the first), hosts = their distinct HOST names;
 *   - the columns: from the "#  size count type redop [root] time ..." header (older tests
 *     print no root column);
 *   - each row: size (bytes, nccl-tests convention = coll/coll.h), out-of-place and in-place
 *     time (us; no in-place for alltoall and sendrecv, which ccbench defines without one). A
 *     run whose #wrong is not 0 is counted, not used; logs from before nccl-tests 2.13 print
 *     the largest deviation instead, so a test whose footer reports out-of-bounds values is left out
 *     whole. Host CPU times (-C, "cputime") are counted, not used.
 * Several tests in one file (run one after another into one log) are read section by section;
 * when the log names none of them, the file's name stands for each, and a section whose rows
 * are not of that collective (redop and root columns, busbw/algbw against its bus factor at
 * that many ranks) is an error, as is a rank listed twice in one test (separate one-GPU runs,
 * not one test). A launcher's line tags ("12: " from srun -l, "[1,0]<stdout>:" from mpirun
 * --tag-output, "[3] " from MPICH/Intel MPI, "host: " from pdsh) are skipped. Lines that are
 * not nccl-tests' own (NCCL INFO, launcher or script messages, anything before a column
 * header) are passed over, and so is a line that starts like a row but does not read as one
 * (counted, and named in a warning).
 */
#ifndef CC_LAYOUT_NCCLTESTS_H
#define CC_LAYOUT_NCCLTESTS_H

#include <stddef.h>
#include <stdio.h>
#include "coll/coll.h"
#include "core/status.h"

/* One timed run of one row. */
struct cc_nt_point {
    enum cc_coll_id coll;
    int nranks;      /* GPUs in the test */
    int nhosts;      /* distinct host names among them (at least 1) */
    double bytes;    /* nccl-tests "size" */
    double time_s;
    int inplace;
};

/* Called for every point; a non-zero return stops the read with CC_ENOMEM (out of room). */
typedef int (*cc_nt_point_fn)(const struct cc_nt_point *p, void *ctx);

/* Counts of what a read passed over, for the caller's message. */
struct cc_nt_summary {
    int rows;          /* result rows read */
    int points;        /* points handed to the callback */
    int wrong_runs;    /* out-of-place or in-place runs with #wrong > 0 */
    int failed_rows;   /* usable rows of an old log's test whose footer reports out-of-bounds
                          values */
    int cputime_rows;  /* rows timed on the host (-C) */
    int single_rows;   /* rows of a one-GPU test (nothing to fit) */
    int other_rows;    /* rows of a test ccbench has no collective for */
    int empty_rows;    /* rows of size 0 or time 0 (printed 0.00: under 5 ns, not a time) */
    int bad_rows;      /* lines after a column header that start like a row but do not read
                          as one (NCCL's log inside a row, a script's message): passed over */
    long first_bad_line;
    int pre_header;    /* lines starting with a number before any column header: passed over
                          (named only when the log yields no rows) */
};

/* Whether the stream holds nccl-tests output (a "# nThread ", "# Collective test starting:"
 * or "# nccl-tests version" line). Rewinds the stream. */
int cc_nccltests_sniff(FILE *f);

/* Read the whole stream; `path` names it in messages and, when the log does not name its
 * test, its base name names the collective. CC_EPARSE with "results 'PATH': line N: ..." on a
 * malformed row or a test whose collective cannot be told. */
cc_status cc_nccltests_read(FILE *f, const char *path, cc_nt_point_fn fn, void *ctx,
                            struct cc_nt_summary *sum, char *err, size_t errlen);

/* The collective a test or file name stands for: 0 and *id set; 1 a test ccbench has no
 * collective for (gather, scatter, alltoallv, hypercube, ...; with from_log also any other
 * *_perf program); -1 no test named. */
int cc_nccltests_name(const char *name, int from_log, enum cc_coll_id *id);

/* The text after a launcher's tag in front of a line: "12: " (srun -l), "[1,0]<stdout>:"
 * (Open MPI --tag-output), "[3] " (MPICH -prepend-rank, Intel MPI -l) or "node-a: " or
 * "10.0.0.1: " (pdsh, clush) before a comment or a row; the line itself when it has none. Also read by the OSU
 * reader (layout/osu.h). */
char *cc_nccltests_untag(char *line);

/* Whether some line of the stream, its launcher tag skipped, satisfies `is`. Rewinds the
 * stream. */
int cc_log_has_line(FILE *f, int (*is)(const char *line));

#endif
