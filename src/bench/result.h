/* result.h - what a measurement produced. Writers (src/report/) read only these structs.
 *
 * Units: times in microseconds (per iteration), bandwidths in GB/s (1e9 bytes per second,
 * as nccl-tests), sizes in bytes, counts in elements.
 */
#ifndef CC_RESULT_H
#define CC_RESULT_H

#include <stddef.h>
#include <jansson.h>

#include "coll/coll.h"
#include "core/dtype.h"

enum cc_place { CC_OOP = 0, CC_INPLACE = 1 };

/* One placement (out-of-place or in-place) of one size. */
struct cc_measure {
    int valid;              /* 0: not measured; na_reason says why ("no in-place variant") */
    const char *na_reason;
    long iters;             /* timed iterations (after warm-up) */
    double time_us;         /* mean iteration time, reduced across ranks by the time mode */
    double p50_us, p99_us;  /* percentiles of the reduced per-iteration times */
    double min_us, max_us;
    double ci95_us;         /* half-width of the 95% confidence interval of time_us */
    double algbw;           /* GB/s: bytes / time */
    double busbw;           /* GB/s: algbw * the collective's factor */
    long long wrong;        /* wrong elements over all ranks and checked iterations; -1: not checked */
    int slow_rank;          /* rank whose own mean time was largest */
    double skew_pct;        /* (largest - smallest per-rank mean) / smallest, in percent */
    double wall_s;          /* seconds spent on this measurement, checking included */
    const char *slow_host;  /* host of slow_rank */
};

/* One size of one collective. */
struct cc_row {
    const struct cc_coll *coll;
    const char *backend;
    enum cc_dtype dtype;
    enum cc_op op;
    int root;               /* -1 when the collective has none */
    size_t bytes;           /* nccl-tests "size" (see coll.h) */
    size_t count;           /* bytes / element size */
    int nranks;
    struct cc_measure m[2]; /* indexed by enum cc_place */
};

/* Summary of one collective, element type and operator over a sweep: float16 and float64, or
 * sum and max, are different figures and are never averaged together. */
struct cc_summary {
    const struct cc_coll *coll;
    enum cc_dtype dtype;
    enum cc_op op;          /* meaningful when coll has CC_COLL_HAS_OP */
    int rows;
    size_t largest_bytes;
    double busbw_largest;   /* busbw at the largest size (out-of-place if measured) */
    double busbw_mean;      /* plain mean over every placement of every row, as nccl-tests'
                               "Avg bus bandwidth" */
    int bw_samples;         /* placements behind busbw_mean */
    double busbw_weighted;  /* mean weighted by size: small sizes do not drag it down */
    long long wrong;        /* total wrong elements (-1: nothing checked) */
    double wall_s;
    double weight_bytes;    /* sum of sizes behind busbw_weighted */
    int nranks;             /* of the rows (the same in a run) */
    double algbw_largest;   /* algbw beside busbw_largest: the figure of a one-rank run, whose
                               busbw is 0 for most collectives (the factor (n-1)/n) */
};

void cc_summary_add(struct cc_summary *s, const struct cc_row *row);

/* Summaries of a run: one slot per collective, type and operator, in sweep order. */
#define CC_SUMMARY_SLOTS (CC_COLL_COUNT * CC_DTYPE_COUNT * CC_OP_COUNT)
static inline int cc_summary_slot(const struct cc_row *row)
{
    return ((int)row->coll->id * CC_DTYPE_COUNT + (int)row->dtype) * CC_OP_COUNT + (int)row->op;
}

/* Why a run ended before its sweep did; the summaries say it. */
enum cc_stop {
    CC_STOP_NONE,      /* the sweep completed */
    CC_STOP_ERROR,     /* a runtime fault (timeout, peer lost) or an output that failed */
    CC_STOP_INTERRUPT, /* SIGINT (^C) */
    CC_STOP_TERM,      /* SIGTERM: the launcher or a batch system ended the job */
};

/* An output format: begin with the run header, one call per row, end with the summaries.
 * Each writes and flushes as it is called, so an interrupted run keeps what it measured.
 * Every call returns 0, or -1 with errno set when the output could not be written (a full
 * disk): the caller says so and stops. close releases the sink even when it fails. */
struct cc_sink {
    void *state;
    int (*begin)(void *state, json_t *header);
    int (*row)(void *state, const struct cc_row *row);
    int (*end)(void *state, const struct cc_summary *sums, int nsums, enum cc_stop stop);
    int (*close)(void *state);
};

#endif
