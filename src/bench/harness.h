/* harness.h - the measurement engine: sweep, warm-up, adaptive iterations, timing, checking
 * after timing, cross-rank reduction of times, watchdog. Backends only move bytes; the
 * harness owns everything else. Every rank calls cc_bench_run with the same parameters.
 *
 * Timing of one iteration: [barrier] start; run; sync; stop. Per-iteration times are
 * reduced across ranks (time mode: rank 0's, average, min or max, as nccl-tests -a) and the
 * reduced samples give the mean, percentiles and the confidence interval.
 *
 * Adaptive iterations (iters == 0): time batches until the 95% CI half-width of the mean is
 * within precision_pct of the mean (after at least min_iters), or max_time_s is spent. All
 * ranks stop together because they decide on identical, reduced samples.
 */
#ifndef CC_HARNESS_H
#define CC_HARNESS_H

#include <stdint.h>

#include "backend/backend.h"
#include "bench/result.h"
#include "core/size.h"
#include "rte/rte.h"

enum cc_time_mode { CC_TIME_RANK0 = 0, CC_TIME_AVG = 1, CC_TIME_MIN = 2, CC_TIME_MAX = 3 };

struct cc_bench_params {
    const struct cc_rte *rte;
    const struct cc_backend *backend;
    void *bctx;                 /* from backend->init */
    unsigned coll_mask;         /* 1 << enum cc_coll_id */
    unsigned dtype_mask;        /* 1 << enum cc_dtype (nccl-tests -d all) */
    unsigned op_mask;           /* 1 << enum cc_op (nccl-tests -o all); invalid pairs skipped */
    int root;
    struct cc_sweep sweep;
    int places;                 /* bit 0 out-of-place, bit 1 in-place */
    int warmup;                 /* -w */
    long iters;                 /* -n; 0: adaptive; never more than max_iters */
    double precision_pct;       /* --precision */
    double max_time_s;          /* --max-time, per measurement */
    long min_iters;             /* adaptive: at least this many timed iterations */
    long max_iters;             /* never more timed iterations than this (adaptive or -n) */
    int check_iters;            /* -c */
    enum cc_time_mode time_mode;/* -a */
    int iter_barrier;           /* barrier between timed iterations (default 1) */
    uint64_t seed;
    int corrupt_rank;           /* debug: corrupt one output element on this rank; -1 off */
    int busy_rank1;             /* debug: 1 + the rank that stays in host work when it first
                                 * checks a result; 0 off */
    double timeout_s;           /* watchdog: an operation longer than this aborts the job */
    /* Called on every rank once the buffers are allocated, before the first measurement
     * (write the header now: a run that cannot start leaves its files alone). CC_OK goes on;
     * any other status on any rank ends the run on every rank and is returned. */
    cc_status (*on_start)(void *user);
    /* Called on every rank after each row (identical data on every rank). CC_OK goes on;
     * any other status on any rank stops the sweep on every rank and is returned by
     * cc_bench_run (a file rank 0 cannot write). */
    cc_status (*on_row)(const struct cc_row *row, void *user);
    /* Called before each measurement with progress so far. */
    void (*on_progress)(const struct cc_coll *c, size_t bytes, int done, int total,
                        double elapsed_s, void *user);
    void *user;
    char *err;                  /* a one-line reason when cc_bench_run fails before measuring */
    size_t errlen;              /* (the buffers of the largest size cannot be allocated) */
};

/* Run the sweep for every selected collective. Returns CC_OK, CC_EWRONG if any element was
 * wrong (the sweep still completes), CC_ETOOBIG (reason in err) when some rank cannot
 * allocate the buffers of the largest size, the status of a failed on_start or on_row, or
 * the first backend error. */
cc_status cc_bench_run(const struct cc_bench_params *p);

/* Validate a parameter set before any communication: sizes (at most CC_SWEEP_MAX_SIZES),
 * divisibility, op/type combinations (at least one valid pair per collective with an op),
 * something to measure in place, -n and --min-iters within --max-iters. Returns CC_EUSAGE
 * or CC_EINFEASIBLE (no size fits the collective) with a one-line message. */
cc_status cc_bench_validate(const struct cc_bench_params *p, int nranks, char *err, size_t errlen);

/* The selected (op, type) pairs that make no sense (avg of an integer type) and are skipped,
 * as "avg with int8, avg with int32" in buf. Returns how many there are. */
size_t cc_bench_skipped_pairs(const struct cc_bench_params *p, char *buf, size_t len);

/* Watchdog: a thread that aborts the process with a message naming what hung when the
 * current operation (set by cc_watchdog_enter) runs longer than the timeout (since its start
 * or its last cc_watchdog_progress), followed by a
 * line naming the rank most likely holding the job up (from every rank's answer over the
 * side channel; rank 0 reports first, the other ranks after a grace of a few seconds). */
void cc_watchdog_start(const struct cc_rte *rte, double timeout_s);
/* Collective, after cc_watchdog_start on every rank (with the timeout or not): publish each
 * rank's side-channel address, so that a watchdog that fires can ask every rank what it is
 * doing and name the likely culprit (net/wdwire.h). Without it, or when a rank has no
 * socket, the watchdog still ends a hung run, naming only its own rank. CC_EPEER on an MPI
 * error. */
cc_status cc_watchdog_connect(const struct cc_rte *rte);
void cc_watchdog_enter(const char *what);
/* The same, for an operation allowed extra_s seconds more than the timeout (a wait on peers
 * busy with host work proportional to the data). */
void cc_watchdog_enter_longer(const char *what, double extra_s);
void cc_watchdog_leave(void);
/* The current operation moved data (a backend's cc_backend_conf.progress): its time starts
 * again, so that the watchdog ends an operation that stopped moving, not a long one that
 * still moves. No effect outside an operation. */
void cc_watchdog_progress(void);
void cc_watchdog_stop(void);
/* Called on the watchdog's thread just before it ends the process (after its error line),
 * while the main thread is stuck: it may only write(2) what was prepared beforehand. NULL:
 * nothing. */
void cc_watchdog_on_fire(void (*fn)(void));

#endif
