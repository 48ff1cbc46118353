/* eval.h - one layout's evaluation, shared by the files that make it (internal to
 * src/layout: layout.c the parts' costs, eval.c the rules and the stages, memory.c the
 * memory per GPU, steptime.c the step time, search.c the search). Not an API: struct ctx and
 * these functions change with the model. */
#ifndef CC_LAYOUT_EVAL_H
#define CC_LAYOUT_EVAL_H

#include <math.h>
#include <stddef.h>

#include "layout/layout.h"
#include "layout/pplayout.h"

/* Shared quantities of one evaluation. */
struct ctx {
    const struct cc_model *m;
    struct cc_model mr;     /* the model as one tp rank holds it: with fewer KV heads than tp,
                               each rank keeps one (Megatron-Core replicates them), so the
                               K/V projections cost max(kv/tp, 1) heads per rank */
    const struct cc_cluster *c;
    const struct cc_habits *hb;
    int tp, pp, dp, cp, mb, v, sp, zero, shard;
    int ep, eshard;         /* expert parallelism; ranks holding the same experts
                               (tp*cp*dp/(ep*etp)) */
    int etp;                /* expert tensor parallelism (1: none) */
    enum cc_recompute rc;
    int rcl;                /* rc = block: layers of every model chunk recomputed */
    int off;                /* layers whose activations go to host memory (-1: the fewest) */
    int split;
    int lfirst, llast;      /* uneven first and last stage (both > 0), else 0 */
    const struct cc_pplan *plan; /* an explicit pipeline layout (pp > 1), given or filled, else
                                    NULL */
    int fill;               /* fill=1 asked */
    const char *fill_why;   /* why fill=1 made no layout ("" if it did) */
    long long N;
    double mm, s_loc, peak;
    double Lf, Lm, Ll;      /* transformer layers on the first, a middle and the last stage */
    double Ef, Em, El;      /* of them, layers with experts (a mixed model's dense layers are
                               the rest; a dense model: 0) */
    int mid_r;              /* the middle stage costed (pp > 2): the second, or with a mixed
                               model the middle one with the most expert layers */
    int mem_mid_r;          /* an explicit layout's middle stage whose micro-batches in flight
                               the middle stage's memory counts: of them the one with the most
                               layers in flight (as the second's with even stages); else -1 */
    int mid_lo_r;           /* a mixed model's middle stage with the fewest expert layers (its
                               Em_lo), whose step time is costed too; -1: none other */
    double Em_lo;
    int mtp_r;              /* an explicit layout's standalone MTP stage (its MTP layers on a
                               middle rank): that rank, costed as a stage of its own with
                               Lx layers, Ex of them with experts; -1: the MTP layers, if any,
                               are on the last stage */
    double Lx, Ex;
    struct cc_model md;     /* mr's dense layer (a mixed model's layers without experts) */
    double p_first, p_mid, p_last, p_mtp; /* parameters per GPU of those stages */
    double pe_first, pe_mid, pe_last, pe_mtp; /* of which routed experts' (sharded over eshard) */
    double logits;          /* logit bytes per micro-batch per GPU */
    double w_sync;          /* parameters every tp rank holds whole whose gradients it sums
                               over tp after the backward pass (sequence parallelism), on the
                               stage with the most */
};

/* Record why a layout is infeasible (the first reason is kept) and mark it so. */
void cc_eval_why(struct cc_eval *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether every group of n members with `stride` between consecutive ranks lies in one node
 * (ranks are numbered node by node). */
static inline int cc_group_in_node(const struct cc_cluster *c, long long n, long long stride)
{
    long long span = n * stride;
    return span <= c->gpus_per_node && c->gpus_per_node % span == 0;
}

static inline long long cc_gcd(long long a, long long b)
{
    while (b) {
        long long r = a % b;
        a = b, b = r;
    }
    return a;
}

/* The fewest members of a group with `stride` between consecutive ranks that share a node
 * (the node that paces it): all of them when the group lies in one node; else, when stride
 * divides the node, gcd(span, gpn)/stride: the groups tile the ranks in spans of n*stride,
 * so a node boundary falls on a multiple of that gcd inside a span (gpn/stride when a span
 * covers whole nodes; 12 ranks on 8-GPU nodes meet nodes in 8 and 4); otherwise 1. */
static inline int cc_per_node(const struct cc_cluster *c, int n, int stride)
{
    int gpn = c->gpus_per_node;
    long long span = (long long)n * stride;
    if (cc_group_in_node(c, n, stride))
        return n;
    if (stride >= gpn || gpn % stride)
        return 1;
    long long k = cc_gcd(span, gpn) / stride;
    return k > 1 ? (int)k : 1;
}

/* How many of the first w forward chunk steps of an interleaved stage run model chunk k:
 * Megatron-LM runs chunk 0 for pp micro-batches, then chunk 1, ..., chunk v-1, and again. */
static inline double cc_chunk_steps(double w, int pp, int v, int k)
{
    double cycle = (double)pp * v, full = floor(w / cycle), rem = w - full * cycle;
    return full * pp + fmin(fmax(rem - (double)k * pp, 0.0), pp);
}

/* Forward chunk steps in flight on stage r (pp > 1): Megatron-LM's warm-up count and the step
 * in progress, at most every chunk step (all of them in warm-up); before November 2024
 * Megatron-LM ran every stage's whole step as warm-up when m = pp, which the min gives only
 * for the first stages. */
static inline double cc_warm_chunks(int r, int pp, int v, double mm)
{
    return v == 1 ? fmin(pp - r, mm) : fmin(2.0 * (pp - r - 1) + (v - 1.0) * pp + 1.0, mm * v);
}

/* A stage of L layers, E of them with experts: the sum of a per-layer amount (a for an
 * expert layer, b for a dense one), and its mean per layer. Exact products where the stage's
 * layers are all of one kind. */
static inline double cc_mix(double L, double E, double a, double b)
{
    return E >= L ? L * a : E <= 0.0 ? L * b : E * a + (L - E) * b;
}

static inline double cc_mix1(double L, double E, double a, double b)
{
    return E >= L ? a : E <= 0.0 ? b : (E * a + (L - E) * b) / L;
}

/* Stages evaluated, in this order: the first; the last (pp > 1); the second (pp > 2, the
 * first of the middle ones: most micro-batches in flight among them). */
static inline int cc_stages_evaluated(int pp)
{
    return pp < 3 ? pp : 3;
}

/* Whether the stages follow an explicit pipeline layout (given or filled) of pp x v stages. */
static inline int cc_planned(const struct ctx *x)
{
    return x->plan && x->plan->n == x->pp * x->v;
}

/* cc_layout_ep_overlaps for the layout being evaluated. */
int cc_ctx_ep_overlaps(const struct ctx *x);

/* Megatron-LM's uneven first and last stage as the search tries it: middle stages of
 * ceil(layers / pp) (*mid), the first and last sharing the rest (returned), each 1 to *mid. */
int cc_first_last_rest(int layers, int pp, int *mid);

/* Where the layers do not divide evenly: the uneven splits that would place them at this pp
 * and v, as " (split=1 ...; fill=1 ...)" for a reason, or "". */
const char *cc_uneven_hint(const struct ctx *x, char *buf, size_t len);

/* Divisibility and support rules; every failure is a reason (the first one is kept). */
void cc_eval_check(struct ctx *x, struct cc_eval *e);

/* Layers with experts on pipeline stage r (*E), and of its recomputed layers (*RE: rc=full
 * all, rc=block the first rcl of each of its model chunks, else none). Megatron-LM gives
 * stage r the model chunks c*pp + r of pp*v equal runs of slots (layers, and with the split
 * the embedding before the first and the loss after the last). */
void cc_stage_experts(const struct ctx *x, int r, double *E, double *RE);

/* Layers recomputed whole per micro-batch on stage r (-1: the middle one costed) of L
 * layers: all with full recomputation; with block, the first rcl of each of its v model
 * chunks (an explicit layout's chunks as it sizes them, each at most all of its own). */
double cc_recomputed_layers(const struct ctx *x, int r, double L);

/* An explicit layout's largest model chunk: of stage r, or of all (r = -1). */
int cc_plan_chunk_max(const struct cc_pplan *p, int pp, int r);

/* The activations of stage r of an explicit layout under block recomputation of rcl layers
 * per chunk, from `act` kept without it: each chunk's recomputed layers times its steps in
 * flight free `saved` each (a kept layer's less a recomputed one's); a chunk recomputed whole
 * has no kept layer to make room for the one recomputed, which holds `kept` again. */
double cc_plan_block_act(const struct ctx *x, int r, int rcl, double act, double saved,
                             double kept);

/* Layers in flight on stage r (cc_inflight_layers; a middle stage, r = -1, as the second,
 * which holds the most micro-batches of them); with an explicit pipeline layout its chunks
 * as the layout sizes them, the middle stage being the one costed (mid_r: the most layers). */
double cc_stage_inflight(const struct ctx *x, int r, double slots, int short_chunk);

/* Weights, gradients, optimizer state and activations of the fullest pipeline stage: the
 * first (embedding, most micro-batches in flight), the second (a full complement of layers
 * when the first and last hold one fewer) or the last (output layer and logits). */
void cc_eval_memory(struct ctx *x, struct cc_eval *e);

/* Step time: micro-batches on the slowest stage, bubble, gradient reduction, optimizer.
 * Returns 1 if the step would last over 1e9 s (about 30 years) or for ever. */
int cc_eval_time(const struct ctx *x, struct cc_eval *e);

#endif
