/* report.h - the output formats, one file each, reading only result structs.
 *   text  : nccl-tests' table plus p50/p99, iterations and the slowest rank
 *   jsonl : JSON Lines: a header object, one object per measurement, a summary
 *   csv   : one line per measurement, header line first
 * Each cc_sink_* returns a sink writing to `out` (not closed by the sink unless own_file);
 * a write that fails (disk full) makes the call return -1 with errno set. */
#ifndef CC_REPORT_H
#define CC_REPORT_H

#include <stdio.h>

#include "bench/result.h"
#include "core/status.h"

struct cc_text_opts {
    int places;      /* bit 0: out-of-place, bit 1: in-place */
};

cc_status cc_sink_text(struct cc_sink *s, FILE *out, const struct cc_text_opts *o);
cc_status cc_sink_jsonl(struct cc_sink *s, FILE *out, int own_file);
cc_status cc_sink_csv(struct cc_sink *s, FILE *out, int own_file);

/* A measurement as a JSON object (used by the jsonl writer; exposed for tests and tools). */
json_t *cc_measure_json(const struct cc_row *row, enum cc_place p);

/* A summary line as a JSON object: "interrupted" is true after a signal only, and "stopped"
 * says why the run ended early: null, "error", "interrupted" (SIGINT) or "terminated"
 * (SIGTERM). Used by the jsonl writer and for the lines written on a signal. */
json_t *cc_summary_json(const struct cc_summary *s, enum cc_stop stop);

/* Flush what a sink wrote: 0, or -1 with errno set (EIO if the C library kept no reason)
 * when the stream could not take it, now or earlier (its error flag is set). */
int cc_report_flush(FILE *out);

/* One summary as a text line, newline included, into buf: its length, 0 when the summary
 * is empty (no rows). "# allreduce float32 sum   busbw ... GB/s at 64M, ..." (the operator
 * only for collectives that take one). */
size_t cc_summary_line(char *buf, size_t len, const struct cc_summary *s);

/* Every non-empty summary line to out: 0, or -1 as cc_report_flush. */
int cc_summary_print(FILE *out, const struct cc_summary *sums, int nsums);

#endif
