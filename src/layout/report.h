/* report.h - what `ccbench layout` prints: the ranked table with the reasons the best layout
 * wins, the full breakdown of one layout, launch arguments (Megatron-LM, torchrun, DeepSpeed),
 * JSON, and the Megatron-LM comparison table (Markdown). Reads only the engine's structs. */
#ifndef CC_LAYOUT_REPORT_H
#define CC_LAYOUT_REPORT_H

#include <jansson.h>
#include <stdio.h>
#include "layout/layout.h"
#include "layout/megatron.h"

/* A hint for long sequences searched without context parallelism, or NULL. */
const char *cc_layout_hint(const struct cc_model *m, const struct cc_cluster *c,
                           const struct cc_habits *hb, char *buf, size_t len);

/* One line of caution when the estimate rests on a default constant that was not fitted on
 * this GPU: the 16-bit --efficiency away from the A100 (results/layout-heldout.md). Written
 * into buf; NULL when there is nothing to say. */
const char *cc_layout_caution(const struct cc_model *m, const struct cc_cluster *c,
                              const struct cc_habits *hb, char *buf, size_t len);
/* Header lines: model, cluster, where the rates come from, habits, a caution if any. */
void cc_layout_print_context(FILE *out, const struct cc_model *m, const struct cc_cluster *c,
                             const struct cc_habits *hb);
/* The top k of a search as a table, then why the first beats the next ones. */
void cc_layout_print_table(FILE *out, const struct cc_model *m, const struct cc_cluster *c,
                           const struct cc_search *s, int k);
/* Every number of one layout, feasible or not. */
void cc_layout_print_explain(FILE *out, const struct cc_model *m, const struct cc_cluster *c,
                             const struct cc_layout *l, const struct cc_eval *e);
/* --explain against a search run with the same habits (st: its status): the fastest layout,
 * how far this one is behind it, and where this tp/pp/cp/dp ranks at its own best setting. */
void cc_layout_print_versus(FILE *out, const struct cc_cluster *c, const struct cc_search *s,
                            cc_status st, const struct cc_layout *l, const struct cc_eval *e);
/* The same as JSON (docs/layout.md names the keys). */
json_t *cc_layout_versus_json(const struct cc_model *m, const struct cc_cluster *c,
                              const struct cc_habits *hb, const struct cc_search *s,
                              cc_status st, const struct cc_layout *l, const struct cc_eval *e);
/* Why layout evaluation o is slower than b: the one or two components of the step that
 * differ most, e.g. "0.412 s more tensor-parallel communication" (and "(it needs less
 * memory)" when it does). Written into buf. */
/* 1 when more of the search's tp x pp x cp were left out because their dp does not divide
 * the global batch than were kept (the table's '# note'); KEEP: the smallest batch at or
 * above it that keeps them all, 0 if too large to say. */
int cc_search_batch_note(const struct cc_model *m, const struct cc_search *s, long long *keep);

const char *cc_layout_behind_why(const struct cc_eval *b, const struct cc_eval *o, char *buf,
                                 size_t len);
/* Ready-to-paste Megatron-LM arguments, a torchrun line and a DeepSpeed config fragment, each
 * followed by its notes. */
void cc_layout_print_args(FILE *out, const struct cc_model *m, const struct cc_cluster *c,
                          const struct cc_habits *hb, const struct cc_layout *l,
                          const struct cc_eval *e);
/* The Megatron-LM arguments alone, one line (also used in JSON). */
const char *cc_layout_megatron_args(const struct cc_model *m, const struct cc_habits *hb,
                                    const struct cc_layout *l, char *buf, size_t len);

/* The torchrun line for every host, around the Megatron-LM arguments `args`
 * (cc_layout_megatron_args): CUDA_DEVICE_MAX_CONNECTIONS=1 in front where Megatron-LM
 * requires it (tensor or context parallelism before Blackwell, without Megatron-FSDP), or
 * `env -u` of it under Megatron-FSDP; =32 for the expert all-to-all overlap
 * (cc_layout_ep_overlaps) where nothing needs 1. */
const char *cc_layout_torchrun(const struct cc_model *m, const struct cc_habits *hb,
                               const struct cc_cluster *c, const struct cc_layout *l,
                               const char *args, char *buf, size_t len);
/* The DeepSpeed config fragment (batch, micro-batch, accumulation, precision, ZeRO stage and
 * buckets in elements, activation partitioning with full recomputation). New reference. */
json_t *cc_layout_deepspeed_json(const struct cc_model *m, const struct cc_habits *hb,
                                 const struct cc_layout *l, const struct cc_eval *e);
/* A caveat of the snippets: for the Megatron-LM arguments (deepspeed = 0) or for the DeepSpeed
 * fragment (1). */
struct cc_launch_note {
    int deepspeed;
    char text[400];
};
/* The caveats of this layout's snippets, at most max; returns how many. */
int cc_layout_launch_notes(const struct cc_model *m, const struct cc_habits *hb,
                           const struct cc_cluster *c, const struct cc_layout *l,
                           const struct cc_eval *e, struct cc_launch_note *note, int max);

/* JSON object of one layout and its evaluation, with its launch snippets and their notes. */
json_t *cc_layout_ranked_json(const struct cc_model *m, const struct cc_cluster *c,
                              const struct cc_habits *hb, const struct cc_layout *l,
                              const struct cc_eval *e);
/* JSON of the context (model, cluster, habits). */
json_t *cc_layout_context_json(const struct cc_model *m, const struct cc_cluster *c,
                               const struct cc_habits *hb);

/* Markdown comparison with the Megatron-LM paper, headed by the command that produced it. */
void cc_layout_print_megatron(FILE *out, const struct cc_megatron_check *k, int n,
                              const struct cc_habits *hb, const char *command);

#endif
