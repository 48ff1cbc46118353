/* megatron.h - the reference `ccbench layout` is checked against: Table 1 of Narayanan et
 * al., "Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM",
 * SC'21 (arXiv 2104.04473): GPT models from 1.7B to 1T parameters on A100 80 GB, 8 per node,
 * 8x HDR 200 Gb/s, with the published tensor/pipeline degrees, batch sizes and achieved
 * TFLOP/s per GPU (the paper's FLOP formula, with recomputation). Transcribed from the paper.
 */
#ifndef CC_LAYOUT_MEGATRON_H
#define CC_LAYOUT_MEGATRON_H

#include "core/status.h"
#include "layout/layout.h"

struct cc_megatron_row {
    const char *preset;   /* model preset (shape, batch) */
    double params_b;      /* published parameter count, billions */
    int tp, pp, gpus;     /* published layout; dp = gpus / (tp * pp) */
    double tflops;        /* published achieved TFLOP/s per GPU */
    double pct_peak;      /* published percentage of the 312 TFLOP/s peak */
    int mb, vpp;          /* micro-batch and interleaving degree the row was run with (NVIDIA's
                             examples/sc21/run_table_1.sh; v = layers / (p * layers per
                             virtual stage), 1 without interleaving) */
};

extern const struct cc_megatron_row cc_megatron_rows[];
extern const int cc_megatron_nrows;

/* The paper's training habits: fp16 with fp16 gradient all-reduce, full recomputation, no
 * distributed optimizer (ZeRO 0), no sequence parallelism (it came later), reduction after
 * the backward pass; efficiency as given. */
void cc_megatron_habits(struct cc_habits *hb, double efficiency);

struct cc_megatron_check {
    const struct cc_megatron_row *row;
    int rank;                  /* 0-based position of the published tp/pp/dp; -1: absent */
    struct cc_ranked top;      /* ccbench's first choice */
    struct cc_ranked published;/* the best setting of the published tp/pp/dp */
    double pred_tflops;        /* predicted TFLOP/s per GPU, paper's formula */
    double err_pct;            /* (predicted - published) / published * 100 */
    struct cc_eval as_run;     /* the published layout at the row's own mb and v */
    double run_tflops, run_err_pct; /* its predicted TFLOP/s per GPU and error */
    int pass;                  /* rank < 3, |err| <= 15 and |run_err| <= 15 */
};

/* Run the search for every row (out has cc_megatron_nrows entries). Returns CC_EFAIL if any
 * row misses the acceptance criterion, CC_OK if all pass. */
cc_status cc_megatron_validate(const struct cc_habits *hb, struct cc_megatron_check *out);

#endif
