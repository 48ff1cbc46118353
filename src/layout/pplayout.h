/* pplayout.h - an explicit pipeline layout: which layers each virtual pipeline stage holds,
 * in Megatron-Core's notation (--pipeline-model-parallel-layout, docs/layout.md).
 *
 * The text lists the pp x v virtual stages separated by '|', stage k = chunk c of pipeline
 * rank r with k = c * pp + r; in each, 'E' the embedding, 't' a transformer layer, 'm' a
 * multi-token-prediction layer, 'L' the loss (and output layer); "x*n" repeats a character,
 * "(...)*n" a group (no nesting), commas are cosmetic. "Et*4|(t*4|)*14tmL" is 16 stages: the
 * embedding and 4 layers, 14 of 4, then 1 layer, the MTP layer and the loss.
 *
 * Stricter than Megatron-Core where ccbench's costing or output needs it: 'E' opens the
 * first stage and 'L' closes the last (Megatron-Core also takes them after or before empty
 * stages), only the notation's characters anywhere (also inside a repeat of 0: the text is
 * passed on verbatim), no empty group, at most 255 characters and CC_PPLAN_MAX stages.
 */
#ifndef CC_LAYOUT_PPLAYOUT_H
#define CC_LAYOUT_PPLAYOUT_H

#include <stddef.h>
#include "core/status.h"

#define CC_PPLAN_MAX 1024 /* virtual stages */

struct cc_pplan {
    char text[256];           /* as given (Megatron-LM's argument) */
    int n;                    /* virtual stages: pp x v */
    int layers[CC_PPLAN_MAX]; /* transformer layers of each */
    int total;                /* all of them */
    int mtp;                  /* MTP layers, all in one stage */
    int mtp_stage;            /* that stage; -1 without */
};

/* Parse text. The rules that need no model: characters, repetition, one 'E' opening the first
 * stage, one 'L' closing the last, no transformer layer after an MTP one, the MTP layers in
 * one stage. CC_EUSAGE with a one-line message naming what is wrong. */
cc_status cc_pplan_parse(const char *text, struct cc_pplan *p, char *err, size_t errlen);

/* Whether the plan fits a model of `layers` transformer layers and `mtp` MTP layers on pp
 * pipeline ranks (pp divides the stages; the MTP layers in the last chunk of a rank, as
 * Megatron-Core places them, and not the first rank's, which ccbench does not cost); pp = 0:
 * only what holds at every pp (the layers and MTP layers it places). 0, or -1 with a reason in
 * why. */
int cc_pplan_check(const struct cc_pplan *p, int layers, int mtp, int pp, char *why,
                   size_t len);

/* The pipeline rank whose last chunk holds the MTP layers (pp - 1, or an earlier one: a
 * standalone MTP stage, whose stages after it hold no transformer layer, the loss still on
 * the last), or -1 without them. */
int cc_pplan_mtp_rank(const struct cc_pplan *p, int pp);

/* The layout NVIDIA's Megatron-Bridge recipes give DeepSeek-V3 and Kimi-K2 (61 layers) at
 * every pp x v they list, as a rule: pp x v virtual stages of ceil(layers / (pp x v))
 * transformer layers each, the last one the rest (at least one), the embedding on the first,
 * the MTP layers and the loss on the last; e.g. 61 layers, pp 4, v 4: "Et*4|(t*4|)*14tmL".
 * Writes p (text in the notation, n, layers up to n, total, mtp) without clearing the rest of
 * its arrays. CC_EUSAGE with a reason (pp < 2, more than CC_PPLAN_MAX stages, a last stage
 * left without a layer, the same as the even split). */
cc_status cc_pplan_fill(struct cc_pplan *p, int layers, int mtp, int pp, int v, char *err,
                        size_t errlen);

/* Layers of chunk c of rank r (c < n / pp), the layers before it in the model's order, and
 * all of rank r's. */
int cc_pplan_chunk(const struct cc_pplan *p, int pp, int r, int c);
long long cc_pplan_offset(const struct cc_pplan *p, int pp, int r, int c);
int cc_pplan_rank_layers(const struct cc_pplan *p, int pp, int r);

#endif
