/* layout.h - the layout engine of `ccbench layout`: evaluate one parallel layout (memory per
 * GPU and step time) and search all layouts of a cluster for the fastest.
 *
 * A layout is tp x cp x dp x pp = GPUs, with rank order tp (innermost), cp, dp, pp as
 * Megatron-LM places them. Times in seconds, memory in bytes. The formulas, with sources, are
 * in docs/layout.md; each is one small function here or in model.c so tests can check it.
 */
#ifndef CC_LAYOUT_LAYOUT_H
#define CC_LAYOUT_LAYOUT_H

#include <stddef.h>
#include "core/status.h"
#include "layout/cluster.h"
#include "layout/model.h"
#include "layout/pplayout.h"

/* The calibrated constants (docs/layout.md). Achieved/peak FLOP/s of a 16-bit matrix multiply
 * that fills every SM (tile and wave losses come on top, layout/gemm.h), chosen to minimise
 * the worst throughput error over Megatron-LM SC'21 Table 1. The command's --efficiency and
 * --fp8-efficiency defaults repeat them. */
#define CC_LAYOUT_EFFICIENCY 0.71
/* The same for the fp8 linear layers, as a fraction of the fp8 peak: calibrated on NVIDIA's
 * published NeMo fp8 runs on H100 (results/layout-megatron.md). */
#define CC_LAYOUT_FP8_EFFICIENCY 0.48

/* Megatron-Core's token dispatchers (--moe-token-dispatcher-type, and with flex
 * --moe-flex-dispatcher-backend): the all-to-all sends each token's copy to every expert it
 * is routed to; DeepEP and HybridEP (flex) send it once per GPU its experts are on, and
 * across nodes once per node, forwarding it over NVLink there (cc_dispatch_time). */
enum cc_dispatcher { CC_DISPATCH_ALLTOALL, CC_DISPATCH_DEEPEP, CC_DISPATCH_HYBRIDEP };
extern const char *const cc_dispatcher_names[]; /* "alltoall", "deepep", "hybridep" */

/* Training habits and search limits (what the user sets; defaults in the command). */
struct cc_habits {
    double efficiency;     /* achieved / peak FLOP/s of the matrix multiplies (0..1] */
    double efficiency_fp8; /* the same for the fp8 linear layers, of the fp8 peak */
    double efficiency_attn; /* the attention products (QK^T, softmax.V), of the 16-bit peak,
                               counted as full s x s products; 0: `efficiency` */
    double mem_margin;     /* fraction of GPU memory kept free (allocator, NCCL, context) */
    size_t bucket_bytes;   /* gradient bucket (DDP: 25 MB) */
    int grad_bytes;        /* bytes per gradient element reduced: 2 (bf16/fp16) or 4 (fp32) */
    int main_grad_bytes;   /* fp32 copy of 16-bit reduced gradients that the optimizer keeps
                              (Megatron-LM, fp16 and bf16 alike: 4), bytes/param; sharded
                              with the optimizer state from ZeRO 1 on */
    int grad_accum;        /* fixed accumulation steps (0: any) */
    int gemm_waves;        /* 1: GEMM time follows tile and wave quantization on the GPU's
                              SMs (layout/gemm.h); 0: every GEMM at `efficiency` */
    int accum_fusion;      /* 1: the weight-gradient GEMM accumulates into the gradient buffer
                              (Megatron-LM --gradient-accumulation-fusion, 2022 on); 0: each
                              micro-batch's 16-bit gradient is added to the buffer by a separate
                              memory-bound pass (PyTorch autograd, Megatron-LM 2021) */
    int zero_min, zero_max;/* ZeRO stages searched (1 = distributed optimizer) */
    int sp;                /* sequence parallel: -1 search, 0 off, 1 on (when tp > 1) */
    int dp_overlap;        /* overlap the gradient reduction with the last backward: 0 never,
                              1 always, 2 only without pipeline parallelism (Megatron-LM 2021:
                              PyTorch DDP when pp = 1, its own DDP after the flush otherwise) */
    int pp_overlap;        /* 1: with the interleaved schedule the pipeline sends overlap the
                              other chunks' compute and pp = 2 may interleave (Megatron-Core's
                              default, off with --no-overlap-p2p-communication); 0: every exchange
                              blocks and interleaving needs pp > 2 (Megatron-LM 2021) */
    int fp8_cache;         /* 1: fp8 runs keep Transformer Engine's fp8 copy of each linear
                              weight and of its transpose across the micro-batches of a step
                              (Megatron-Core's default): 2 bytes per linear parameter of the
                              stage, ZeRO 0-2; 0: not counted */
    int pp_scatter;        /* 1: without sequence parallelism a pipeline send carries 1/tp of
                              the activations from each tensor-parallel rank, which the
                              receiving stage all-gathers over its tp ranks (Megatron-LM 2021,
                              --scatter-gather-tensors-in-pipeline); 0: every rank sends the
                              whole activations (Megatron-Core) */
    int offload;           /* 1: also search activation offloading to host memory (the fewest
                              layers that fit) where Megatron-Core has it: pp = 1, no
                              recomputation; 2: only where the host link is a Grace
                              superchip's NVLink-C2C (CC_OFFLOAD_AUTO_BPS and up); 0: never */
    int tp_overlap;        /* 1: the sequence-parallel all-gathers and reduce-scatters are
                              pipelined with the linear layers beside them (Transformer Engine
                              userbuffers, Megatron-Core --tp-comm-overlap); 0: not overlapped */
    int uneven_pp;         /* 1: also search pipelines that count the embedding and the loss as
                              one layer each (layers + 2 split over pp; Megatron-Core
                              --account-for-embedding/loss-in-pipeline-split), uneven first
                              and last stages, and with v > 1 the filled layout (fill=1) */
    int vocab_pad;         /* the vocabulary is padded to a multiple of vocab_pad x tp (Megatron-LM
                              and NeMo: --make-vocab-size-divisible-by, 128); 1: only to a
                              multiple of tp, which vocabulary-parallel layers need (at
                              tp = 1 not at all: Hugging Face models under FSDP) */
    int tp_max;            /* largest TP (default: GPUs per node) */
    int cp_max;            /* largest context-parallel degree (1: off) */
    int vpp_max;           /* largest interleaving degree (1: off) */
    int mb_max;            /* largest micro-batch */
    int quiet;             /* 1: a long search prints no progress note */
    enum cc_recompute recompute; /* CC_RC_AUTO searches none, selective, full and block */
    double moe_imbalance;  /* experts with ep > 1: the busiest expert-parallel rank's routed
                              tokens over its balanced share (1: balanced, as forced-balance
                              benchmarks run); its expert GEMMs, all-to-all bytes and expert
                              activations grow by this factor, and every rank waits for it */
    double moe_capacity;   /* experts: Megatron-Core's capacity factor (tokens beyond it times
                              an expert's balanced share dropped); 0: dropless */
    int moe_pad;           /* 1: every expert's input padded to that capacity
                              (--moe-pad-expert-input-to-capacity) */
    const struct cc_pplan *plan; /* an explicit pipeline layout (--pipeline-layout, Megatron-Core
                              --pipeline-model-parallel-layout): every layout with a pipeline
                              follows it, pp dividing its stages and v = stages / pp; NULL:
                              none */
    int ep_overlap;        /* 1: one micro-batch's expert all-to-alls run beside another's
                              compute where Megatron-Core allows it (combined 1F1B,
                              --overlap-moe-expert-parallel-comm; cc_layout_ep_overlaps) */
    enum cc_dispatcher dispatcher; /* how routed tokens reach their experts (ep > 1) */
};

/* Host links from which --offload auto searches activation offloading: NVLink-C2C, not PCIe
 * (over PCIe the GPUs of a host share its memory bandwidth, which the model does not count;
 * NVIDIA's recipes offload only on Grace systems). Bytes/s, one direction. */
#define CC_OFFLOAD_AUTO_BPS 200e9

/* Whether the search tries activation offloading on cluster c: --offload on, or auto where the
 * host link is NVLink-C2C (CC_OFFLOAD_AUTO_BPS and up). */
int cc_habits_offload_searched(const struct cc_habits *hb, const struct cc_cluster *c);

/* Fill habits with the defaults documented in docs/layout.md. */
void cc_habits_default(struct cc_habits *hb);
/* The attention products' efficiency: efficiency_attn, or efficiency when it is 0. */
double cc_habits_attn_efficiency(const struct cc_habits *hb);
/* Whether the gradient reduction overlaps the last backward pass with pp pipeline stages
 * (dp_overlap 1, or 2 and pp = 1). */
int cc_habits_dp_overlaps(const struct cc_habits *hb, int pp);

struct cc_layout {
    int tp, pp, dp, cp;
    int mb;      /* micro-batch, sequences */
    int vpp;     /* interleaved schedule: model chunks per GPU (1: plain 1F1B) */
    int sp;      /* sequence parallel */
    int zero;    /* 0..3 (1: distributed optimizer) */
    enum cc_recompute rc;
    int split;   /* 0: layers / pp per stage; 1: (layers + 2) / pp slots per stage, the first
                    stage's first slot holding the embedding and the last stage's last slot
                    the output layer and loss (first and last stage: one layer fewer) */
    int rcl;     /* rc = CC_RC_BLOCK: layers of every model chunk recomputed (the first rcl; 1
                    to the chunk's layers less one); 0: the fewest with which the layout fits
                    (cc_layout_eval resolves it into cc_eval.rcl) */
    int off;     /* layers whose activations are offloaded to host memory (Megatron-Core
                    --cpu-offloading-num-layers; pp = 1, rc = none, fewer than the layers);
                    0: none; -1: the fewest with which it fits (resolved into cc_eval.off) */
    int ep;      /* expert parallelism (a model with experts): each GPU holds experts/ep of
                    every layer's routed experts (whole with etp 1), ep ranks etp apart among
                    the tp x cp x dp ranks of a stage exchanging tokens all-to-all; 0 or 1:
                    none */
    int lfirst, llast; /* uneven pipeline (Megatron-LM --decoder-first-pipeline-num-layers,
                          --decoder-last-pipeline-num-layers): the first and the last stage
                          hold these many layers, the others (layers - lfirst - llast) /
                          (pp - 2) each; with v > 1 every stage's layers in v equal chunks.
                          0 and 0: not used (uniform, or the split above); both or neither */
    int etp;     /* expert tensor parallelism (Megatron-Core --expert-tensor-parallel-size):
                    each expert's matrices split over etp consecutive ranks, which gather the
                    tokens routed to them and scatter the results; ep x etp divides tp x cp x
                    dp; 0 or 1: none */
    int fill;    /* 1: the pipeline layout NVIDIA's recipes give models whose layers pp x v does
                    not divide (cc_pplan_fill): every virtual stage ceil(layers / (pp v))
                    layers, the last the rest, passed on as --pipeline-model-parallel-layout;
                    0: not used */
};

/* The explicit pipeline layout that layout l follows on model m: the given one (hb->plan,
 * when hb is not NULL and pp > 1), or with l->fill the generated one, written into buf; NULL
 * for none (also when fill cannot make one: cc_layout_eval says why). */
const struct cc_pplan *cc_layout_plan(const struct cc_model *m, const struct cc_habits *hb,
                                      const struct cc_layout *l, struct cc_pplan *buf);

/* The expert tensor-parallel degree of l: l->etp, or 1 (0 or 1). */
static inline int cc_layout_etp(const struct cc_layout *l)
{
    return l->etp > 1 ? l->etp : 1;
}

/* The expert-parallel degree of l as a count of ranks: l->ep, or 1 for none (0 or 1). */
static inline int cc_layout_ep(const struct cc_layout *l)
{
    return l->ep > 1 ? l->ep : 1;
}

/* Whether the expert all-to-alls of layout l overlap another micro-batch's compute: the
 * habit is on, the model has experts, ep > 1, no full or block recomputation (Megatron-Core
 * pairs modules of a forward and a backward pass, which recomputing whole layers breaks),
 * and pp = 1 or an interleaved pipeline (v > 1), as --overlap-moe-expert-parallel-comm
 * requires. */
int cc_layout_ep_overlaps(const struct cc_model *m, const struct cc_habits *hb,
                          const struct cc_layout *l);
/* What combined 1F1B needs that layout l lacks, as a phrase ("no full or block
 * recomputation", "an interleaved pipeline (v > 1) when pp > 1"); NULL when it can run. */
const char *cc_layout_ep_overlap_needs(const struct cc_layout *l);

/* Format as "tp=8,pp=8,dp=16,cp=1,mb=1,v=1,sp=1,zero=1,rc=full" (",split=1" appended when
 * set; ",rcl=N" after rc=block when N is known; ",off=N" with offloading; ",first=F,last=L"
 * and ",fill=1" when set; ",ep=N" when ep > 1, ",etp=N" when etp > 1). */
const char *cc_layout_format(const struct cc_layout *l, char *buf, size_t len);
/* Parse "tp=8,pp=8,dp=16,mb=1" (any subset of the keys above; dp may be
 * omitted; rcl=N means rc=block, off=N without rc rc=none). Keys not
 * given stay as in *l on entry; split=1 with pp=2 becomes 0 (the same split). CC_EUSAGE with a
 * message on a bad key or value. */
cc_status cc_layout_parse(const char *text, struct cc_layout *l, int *dp_given, char *err,
                          size_t errlen);

/* Everything known about one layout. */
/* Relative step-time difference within which layouts count as indistinguishable: the
 * estimates of published runs err by up to ~6% (docs/layout.md, Calibration and validation). */
#define CC_LAYOUT_NEAR 0.05

struct cc_eval {
    int feasible;
    char why[320];         /* empty if feasible; else the first reason it is not */
    int mem_only;          /* infeasible only because it does not fit in memory */
    int too_long;          /* infeasible because a step would last over 1e9 s (the batch x
                              sequence is too large for the rates), whatever the memory */
    long long m;           /* micro-batches per step per pipeline (grad accumulation) */
    int rcl;               /* rc=block: layers of every model chunk recomputed (the layout's,
                              or the fewest that fit); 0 otherwise */
    int off;               /* layers whose activations are offloaded (the layout's, or the
                              fewest that fit) */
    double off_bytes;      /* bytes offloaded per micro-batch, each way */
    /* memory on the fullest pipeline stage, bytes per GPU */
    double mem_weights, mem_grads, mem_optim, mem_act, mem_total, mem_limit;
    double host_limit;     /* host memory per GPU for offloaded activations, less the margin */
    int mem_stage;         /* 0: first stage, 1: last stage, 2: second stage (the middle one
                              costed), 3: a standalone MTP stage (mtp_rank) */
    double mem_stages[4];  /* bytes per GPU of each of those stages (0: not evaluated) */
    int mtp_rank;          /* an explicit layout's MTP layers on a rank before the last (a
                              standalone MTP stage, costed as a stage of its own): that rank;
                              else -1 */
    int vocab;             /* the vocabulary as padded for this tp (habits' vocab_pad) */
    int z3_units;          /* ZeRO 3: units gathered per micro-batch on the fullest stage (a
                              layer each; the embedding and the output layer); 0 otherwise */
    double layers_first, layers_mid, layers_last; /* transformer layers per stage */
    double experts_first, experts_mid, experts_last; /* of them, layers with experts */
    const struct cc_pplan *plan; /* the explicit pipeline layout given (--pipeline-layout) that
                              the stages follow, or NULL */
    int filled;            /* 1: the stages follow the filled layout (fill=1; cc_layout_plan
                              makes it again) */
    int mid_stage;         /* the middle stage costed when pp > 2 (0-based): the second, or
                              with a mixed model's dense layers the middle one with the most
                              expert layers (its micro-batches in flight taken as the
                              second's, the most of any middle stage) */
    int mid_inflight_stage; /* whose micro-batches in flight the middle stage's memory counts:
                              the second, or with an explicit layout the middle stage with the
                              most layers in flight */
    /* per step, seconds (critical path of the slowest stage) */
    double t_compute, t_tp, t_cp, t_ep, t_pp, t_bubble, t_dp, t_opt, t_step;
    double t_ep_hidden;    /* expert all-to-all time hidden behind other micro-batches'
                              compute (cc_layout_ep_overlaps), not in t_ep */
    int edp;               /* with experts: the ranks that hold the same experts (tp*cp*dp /
                              ep), over which their gradients are reduced; 0 otherwise */
    double skew;           /* experts: the busiest rank's routed tokens over its balanced
                              share as costed (habits' moe_imbalance with ep > 1, at most
                              skew_max; then the capacity: at most it, or it when padded);
                              0: balanced */
    double capacity;       /* experts: the capacity factor costed (habits'); 0: dropless */
    int capacity_pad;      /* 1: every expert padded to it */
    double skew_max;       /* the most that share can be: every token's copies that the rank
                              could take (ep x min(topk, experts/ep) / topk); 0: not skewed */
    double t_offload;      /* of t_compute: offload transfers not hidden behind compute */
    double tokens_per_s;
    double mfu;            /* model FLOPs / (GPUs * peak * step) */
    double hw_tflops;      /* executed FLOP/s per GPU incl. recomputation, TFLOP/s */
    double megatron_tflops; /* what Megatron-LM's log would show per GPU at this step time
                               (cc_model_megatron_log_flops), TFLOP/s */
};

/* The explicit pipeline layout that evaluation e of layout l followed: the given one
 * (e->plan), or the filled one (e->filled) made again into buf; NULL for none. */
const struct cc_pplan *cc_eval_plan(const struct cc_model *m, const struct cc_layout *l,
                                    const struct cc_eval *e, struct cc_pplan *buf);

/* "first", "last", "second" or "mtp" for cc_eval.mem_stage. */
const char *cc_stage_name(int mem_stage);

/* Evaluate one layout. Never fails: infeasible layouts still get every number that can be
 * computed, with feasible = 0 and the reason. */
void cc_layout_eval(const struct cc_model *m, const struct cc_cluster *c,
                    const struct cc_habits *hb, const struct cc_layout *l, struct cc_eval *e);

/* Pieces of the model, exposed for tests. */
/* Layers' worth of activations that pipeline stage r (of pp) holds at the end of the warm-up:
 * the micro-batches (model chunks, with interleaving) it has run forward and not yet
 * backward. `slots` is the stage's share of layers (layers/pp, or (layers + 2)/pp with the
 * embedding/loss split); `short_chunk` is the chunk holding one layer fewer (with the split:
 * chunk 0 on the first stage, chunk v-1 on the last), or -1. Plain 1F1B: min(pp - r, mm)
 * micro-batches. Interleaved: 2(pp - r - 1) + (v - 1)pp + 1 chunks of slots/v (Megatron-LM's
 * warm-up count and the step in progress), never more than the step's mm*v. pp = 1: one
 * micro-batch. */
double cc_inflight_layers(int r, int pp, int v, double slots, int short_chunk, double mm);
/* GEMM seconds of one transformer layer for one micro-batch of mb sequences of s_loc tokens
 * (s_loc = s / cp) on one GPU of a tp group: QKV, output projection, MLP and the two attention
 * products (batched over mb*heads/tp), nfwd forward passes (2 with full recomputation) and the
 * backward products, plus one more forward of the attention products when attn_again
 * (selective recomputation). Wave quantization on `sms` SMs (0: none). The linear layers run
 * at `rate` FLOP/s, the attention products at `rate_attn` (they stay 16-bit in fp8 training:
 * Transformer Engine casts only the linear layers). */
double cc_layer_gemm_time(const struct cc_model *m, double mb, double s_loc, int tp, double rate,
                          double rate_attn, int sms, int nfwd, int attn_again);
/* GEMM seconds of the output layer (logits, V/tp columns) for one micro-batch: forward and
 * backward, never recomputed; `rate` is the 16-bit rate in fp8 training too (Megatron-LM's
 * output layer is not a Transformer Engine layer). */
double cc_logit_gemm_time(const struct cc_model *m, double mb, double s_loc, int tp, double rate,
                          int sms);
/* GEMM seconds of one layer's routed experts and router for one micro-batch (experts, else
 * 0): each GPU routes its mb*s_loc/tp tokens (sequence parallel with tp > 1) to topk experts;
 * the ep GPUs of an expert-parallel group hold experts/ep experts each, and each expert
 * receives ep*tokens*topk/experts of them (routing balanced): a grouped GEMM of that many rows
 * per local expert, up (gate and up fused) and down, nfwd forward passes and the backward
 * products, wave-quantized on `sms` SMs. */
double cc_expert_gemm_time(const struct cc_model *m, double mb, double s_loc, int tp, int ep,
                           double rate, int sms, int nfwd);
/* Bytes each GPU sends in one all-to-all of a layer's routed tokens (the dispatch or the
 * combine; nccl-tests' size): mb*s_loc/tp tokens x topk copies x h x 2 bytes. 0 without
 * experts. */
double cc_expert_a2a_bytes(const struct cc_model *m, double mb, double s_loc, int tp);
/* One pass's dispatch and combine of a layer's routed tokens over an expert-parallel group of
 * ep ranks etp apart, seconds. The all-to-all dispatcher: two all-to-alls of
 * cc_expert_a2a_bytes (with etp > 1 the gather over etp is costed apart). DeepEP and
 * HybridEP: over the ep x etp adjacent ranks, each token once per GPU its experts are on
 * (cc_model_route_spread over ep, times etp: every copy of an expert gets it); where the group
 * spans nodes, once per other node over the NICs and from there over NVLink to those GPUs,
 * the two pipelined (the slower sets the time); the combine the same way back. 0 without
 * experts, or with ep = 1 (the flex dispatcher: ep x etp = 1). */
double cc_dispatch_time(const struct cc_model *m, const struct cc_cluster *c,
                        enum cc_dispatcher d, double mb, double s_loc, int tp, int ep, int etp);
/* Pipeline bubble time: (p-1)/v micro-batch slots of t_mb seconds. */
double cc_bubble_time(int pp, int vpp, double t_mb);

/* The fewest members per node of a group of n ranks with `stride` between consecutive ones
 * (ranks numbered node by node, groups tiling them): n when the group lies in one node;
 * gcd(n*stride, gpus per node)/stride when stride divides the node; else 1. */
int cc_group_per_node(const struct cc_cluster *c, int n, int stride);
/* Once per step with pp > 1 and tied embeddings (or multi-token prediction, whose stage
 * keeps a copy of the input embedding): the first stage (input embedding) and the last
 * (output layer) hold copies of the V x h word embedding (/tp), and all-reduce their
 * gradients (hb->grad_bytes per element) between them, after the data-parallel reduction
 * (not overlapped). With mtp_apart (the MTP layers on a rank before the last: a standalone
 * MTP stage) that rank holds the MTP's copy, and the group is the first, it and, tied, the
 * last (Megatron-LM's embedding ranks). stride: rank distance between consecutive stages
 * (tp*cp*dp). 0 if pp = 1 or the embeddings are neither tied nor used by MTP. Seconds. */
double cc_embed_sync_time(const struct cc_model *m, const struct cc_cluster *c,
                          const struct cc_habits *hb, int tp, int pp, long long stride,
                          int mtp_apart);
/* Time per micro-batch to add the stage's fresh 16-bit weight gradients into the gradient
 * buffer when the GEMM does not accumulate in place (hb->accum_fusion = 0): `params` per GPU
 * x (2 bytes read + hb->grad_bytes read + hb->grad_bytes written) / HBM bandwidth. 0 when
 * fused. Seconds. */
double cc_grad_accum_time(const struct cc_habits *hb, double params, double hbm_Bps);
/* Weights, gradients, optimizer bytes per GPU for `params` parameters on this GPU's stage
 * (already divided by tp), sharded over `shard` ranks by ZeRO stage `zero`. At ZeRO 3 (shard
 * > 1) the gathered working set comes on top: the full 16-bit weights of 2 units of `unit`
 * parameters (the one computed and the one prefetched; a unit is the largest of a layer and
 * the embedding, /tp) and one unit's gradients (hb->grad_bytes) before their reduce-scatter,
 * never more than `params`. */
void cc_state_bytes(const struct cc_model *m, const struct cc_habits *hb, double params,
                    double unit, int zero, int shard, double *w, double *g, double *o);

/* Parameters per GPU of the unit ZeRO 3 gathers at a time: a transformer layer (its K/V heads
 * replicated up to tp), or the embedding or the output layer when that is larger, divided by
 * tp. */
double cc_layout_zero3_unit(const struct cc_model *m, int tp);

struct cc_ranked {
    struct cc_layout layout;
    struct cc_eval eval;
};

struct cc_search {
    long long evaluated, feasible;
    int nbest;                 /* entries in best[] (one per tp/pp/cp/dp, fastest first) */
    struct cc_ranked *best;    /* malloc'd; free with cc_search_free */
    struct cc_ranked closest;  /* if nothing fits: the layout needing the least memory */
    char why_none[512];        /* if nothing is feasible: why (one line) */
    int none_for_memory;       /* ... and that reason is memory alone ("no layout fits in
                                  memory": more GPUs may help) */
    long long batch_whole;     /* tp x pp x cp layouts whose dp divides the global batch */
    long long batch_skipped;   /* ... and those skipped because it does not */
    long long batch_lcm;       /* least common multiple of the skipped dp (0: too large) */
};

/* Enumerate tp (divides the heads, divides or is a multiple of the KV heads, <= tp_max), pp
 * (divides layers, or layers + 2 with hb->uneven_pp; with it, where neither divides, uneven
 * first and last stages around middle stages of ceil(layers / pp), each way of sharing the
 * rest that leaves both 1 to that many; with v > 1 also the filled layout, fill=1, where it
 * exists), cp (s a multiple of 2*cp), dp =
 * GPUs/(tp*pp*cp), mb, sp (tp divides s/cp), zero, vpp and recomputation; keep the fastest
 * setting of each tp/pp/cp/dp (exact ties, to 1e-9: smaller zero, then smaller vpp, then the
 * larger mb, then the first enumerated), sorted by step time (ties: smaller tp, pp, cp).
 * CC_EINFEASIBLE (with why_none) if no layout fits; why_none names the real reason: "no
 * layout fits in memory" when some layout failed for memory alone, else the step-time refusal
 * if a whole layout had one, else the first reason met. */
cc_status cc_layout_search(const struct cc_model *m, const struct cc_cluster *c,
                           const struct cc_habits *hb, struct cc_search *s);
void cc_search_free(struct cc_search *s);

/* Position (0-based) of the layout with these tp, pp, dp, cp in a search, or -1. */
int cc_search_rank(const struct cc_search *s, int tp, int pp, int dp, int cp);

#endif
