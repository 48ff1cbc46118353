/* model.h - a transformer model for `ccbench layout`: its shape, presets with sources, the
 * JSON spec, and the closed-form counts the layout engine builds on.
 *
 * Units: parameters and FLOPs are plain counts; memory in bytes. b is the micro-batch size
 * (sequences), s the sequence length, h the hidden size, a the attention heads, l the layers,
 * V the vocabulary, t the tensor-parallel degree. Formulas and their sources: docs/layout.md.
 */
#ifndef CC_LAYOUT_MODEL_H
#define CC_LAYOUT_MODEL_H

#include <stddef.h>
#include "core/status.h"

enum cc_prec { CC_PREC_BF16, CC_PREC_FP16, CC_PREC_FP8, CC_PREC_COUNT };
enum cc_optim { CC_OPTIM_ADAM, CC_OPTIM_SGD };
/* block: full recomputation of the first N layers of every model chunk, the rest kept
 * (Megatron-LM --recompute-method block; N per layout, struct cc_layout.rcl) */
enum cc_recompute { CC_RC_NONE, CC_RC_SELECTIVE, CC_RC_FULL, CC_RC_BLOCK, CC_RC_AUTO };
enum cc_mlp { CC_MLP_GELU, CC_MLP_SWIGLU };

extern const char *const cc_prec_names[];      /* "bf16", "fp16", "fp8" */
extern const char *const cc_optim_names[];     /* "adam", "sgd" */
extern const char *const cc_recompute_names[]; /* "none", "selective", "full", "block",
                                                  "auto" */
extern const char *const cc_mlp_names[];       /* "gelu", "swiglu" */

/* What selective recomputation recomputes instead of keeping (Megatron-Core
 * --recompute-modules with --recompute-granularity selective), one bit each; a set of 0 is
 * Megatron-Core's default, core_attn alone (cc_model_rc_modules). */
enum {
    CC_RCM_CORE_ATTN = 1 << 0,      /* the attention products (the s x s scores, without flash) */
    CC_RCM_LAYERNORM = 1 << 1,      /* the outputs of the norms that are modules of their own:
                                       an expert layer's pre-MLP norm (the router's input), the
                                       input norm of latent attention */
    CC_RCM_MOE_ACT = 1 << 2,        /* the routed experts' activation outputs */
    CC_RCM_MLA_UP_PROJ = 1 << 3,    /* latent attention's up projections: Q, K, V */
    CC_RCM_MLP = 1 << 4,            /* a dense layer's MLP (its input and inner activations) */
    CC_RCM_MOE = 1 << 5,            /* an expert layer's MLP whole: router, experts, shared
                                       expert, their all-to-alls */
    CC_RCM_SHARED_EXPERTS = 1 << 6, /* the shared expert */
};
#define CC_RCM_COUNT 7
/* Names by bit ("core_attn", "layernorm", "moe_act", "mla_up_proj", "mlp", "moe",
 * "shared_experts"), Megatron-Core's spelling. */
extern const char *const cc_rc_module_names[CC_RCM_COUNT];
/* Parse a comma- or space-separated list of those names into a set (at least one). CC_EUSAGE
 * with a one-line message naming the unknown word (and Megatron-Core's modules that ccbench
 * does not cost) otherwise. */
cc_status cc_rc_modules_parse(const char *text, unsigned *mods, char *err, size_t errlen);
/* The names of a set, joined by sep, into buf (the default set's too). */
const char *cc_rc_modules_format(unsigned mods, const char *sep, char *buf, size_t len);

struct cc_model {
    char name[64];
    char source[256];     /* where the shape comes from */
    int layers;           /* l */
    int hidden;           /* h */
    int heads;            /* a */
    int kv_heads;         /* KV heads (grouped-query attention); = heads for MHA */
    int ffn;              /* MLP inner size */
    int vocab;            /* V as the model gives it (--vocab-pad pads it per layout) */
    int seq_len;          /* s */
    long long global_batch; /* sequences per optimizer step */
    enum cc_prec prec;
    enum cc_optim optim;
    enum cc_recompute recompute;
    enum cc_mlp mlp;      /* gelu: 2 matrices with biases and LayerNorm; swiglu: 3, no biases */
    int flash_attn;       /* 1: attention scores never stored (no 5as^2b term) */
    int tied_embed;       /* 1: input embedding and output layer share weights */
    long long batch_tokens; /* >0: the batch is this many tokens (a preset whose batch is
                               given in tokens, a Hugging Face config's assumed batch), and
                               global_batch follows any new sequence length (a spec's
                               seq_len or --seq-len); 0 once a batch is stated in sequences
                               (a spec's global_batch, --global-batch) */
    double rope_base;     /* rotary embedding base (theta) of a swiglu (RoPE) model; 0: the
                             usual 10000. Costs nothing; the launch arguments carry it */
    int dropout;          /* 0: as the MLP implies (gelu: Megatron-LM's 0.1; swiglu: none, as
                             Llama trains); 1: dropout; -1: none (cc_model_dropout) */
    int qkv_bias;         /* 1: the QKV projection has a bias (Qwen2, Qwen2.5), in a swiglu model
                             otherwise without biases (Megatron-LM --add-qkv-bias); after the
                             presets' positional initialisers, which leave it 0 */
    /* Mixture of experts (experts >= 2): every layer's MLP is `experts` routed experts of
     * inner size moe_ffn, of which each token goes to topk, beside an optional shared expert
     * (inner size shared_ffn, every token) and a router (h x experts); ffn is then only the
     * size Megatron-LM's --ffn-hidden-size carries. 0: a dense model. */
    int experts;
    int topk;
    int moe_ffn;
    int shared_ffn;
    int head_dim;         /* width of one attention head; 0: hidden / heads. Qwen3 and others
                             set it apart: the queries are then heads x head_dim wide */
    int qk_norm;          /* 1: queries and keys normalised per head (Qwen3; Megatron-LM
                             --qk-layernorm): 2 x head_dim parameters a layer */
    /* Multi-head latent attention (kv_lora > 0: DeepSeek-V2/V3, Kimi K2; Megatron-LM
     * --multi-latent-attention): queries from h, or through a q_lora-wide compressed copy
     * (q_lora > 0), heads x (qk_nope + qk_rope) wide; keys and values from a kv_lora-wide
     * compressed copy plus a shared qk_rope-wide rotary key, heads x qk_nope and heads x
     * v_dim wide; the output projection from heads x v_dim. The down projections and the two
     * latent norms are held whole by every tensor-parallel rank (Megatron-Core duplicates
     * them), the rest is split by heads. kv_heads is then heads. 0: ordinary attention. */
    int q_lora, kv_lora, qk_nope, qk_rope, v_dim;
    /* Layers without experts in a mixture of experts (0 and 0: every layer has them): the
     * first first_dense layers (DeepSeek-V3's 3, GLM-4.5's 3), and with moe_step k > 1 of
     * the rest only every k-th layer counted from 1 has experts (layer index i with
     * (i + 1) % k == 0: Qwen2-MoE's decoder_sparse_step, Llama 4's interleave_moe_layer_step).
     * A layer without experts has a dense MLP of size ffn. */
    int first_dense;
    int moe_step;
    /* Group-limited routing (DeepSeek-V3's node-limited routing; Megatron-LM
     * --moe-router-num-groups, --moe-router-group-topk): the experts in route_groups equal
     * groups, each token choosing route_group_topk of them and its topk experts among those.
     * 0 and 0: none. It changes no FLOP; the flex dispatcher (DeepEP, HybridEP) sends a token
     * once per node its experts are on, which it bounds. */
    int route_groups;
    int route_group_topk;
    /* Multi-token prediction layers trained beside the model (DeepSeek-V3, GLM-4.5; Megatron-LM
     * --mtp-num-layers): each a transformer layer of the last layer's kind after two norms and
     * a 2h -> h projection of the hidden state and the next token's embedding, then a norm and
     * the shared output layer: on the last pipeline stage, which then also holds a copy of the
     * input embedding (its gradients summed with the first stage's). 0: none. */
    int mtp;
    int expert_tp;        /* costing only: the expert tensor-parallel degree of the layout
                             costed (its routed experts' matrices split over it, their tokens
                             gathered over it); 0 or 1: none */
    unsigned rc_modules;  /* costing only: what selective recomputation recomputes (CC_RCM_*
                             bits; 0: Megatron-Core's default, core_attn) */
    double route_skew;    /* costing only, not the model: the routed tokens of the busiest
                             expert-parallel rank over its balanced share (habits'
                             moe_imbalance where ep > 1, then the capacity factor); 0 or 1:
                             balanced. Scales the routed experts' activations, expert GEMM
                             rows and all-to-all bytes */
};

/* Width of one attention head (head_dim, else hidden / heads) and of the queries (heads x
 * that); K and V are kv_heads x head_dim wide. */
double cc_model_head_dim(const struct cc_model *m);
double cc_model_q_dim(const struct cc_model *m);

/* Whether the attention is multi-head latent attention (kv_lora > 0). */
int cc_model_mla(const struct cc_model *m);
/* Half the summed width of the two attention products' operands per token: (QK^T over heads x
 * query-key width, softmax(.)V over heads x value width) / 2; q for ordinary attention, heads
 * x (qk_nope + qk_rope + v_dim) / 2 for latent attention. The products' forward FLOPs for b
 * sequences are 4 b s^2 times this. */
double cc_model_attn_width(const struct cc_model *m);
/* Parameters of the attention's matrices (Q, K, V, O; latent: down and up projections, O),
 * and of those, what every tensor-parallel rank holds whole (latent: the down projections). */
double cc_model_attn_params(const struct cc_model *m);
double cc_model_attn_whole_params(const struct cc_model *m);

/* Whether the model is a mixture of experts (experts >= 2). */
int cc_model_moe(const struct cc_model *m);
/* The factor the busiest expert-parallel rank's routed work is costed at: route_skew, or 1
 * (balanced) when it is 0; below 1 where a capacity factor under 1 drops tokens. */
double cc_model_route_skew(const struct cc_model *m);
/* Expected number of the `bins` equal, consecutive shares of the experts (GPUs or nodes of an
 * expert-parallel group; bins divides the experts) that one token's topk experts fall in,
 * with routing balanced: topk of the experts at random, or with group-limited routing
 * route_group_topk of the groups at random and topk of their experts (exact where groups
 * and bins nest, one in the other; else as if unlimited). 1 for a dense model or bins <= 1. */
double cc_model_route_spread(const struct cc_model *m, int bins);
/* Parameters of one layer's routed experts (all of them: what expert parallelism divides):
 * experts x (3 or 2 matrices) x h x moe_ffn. 0 for a dense model. */
double cc_model_layer_expert_params(const struct cc_model *m);

/* Layers with experts among layer indexes [lo, hi) (0-based; clamped to the model's): a
 * closed form of first_dense and moe_step. 0 for a dense model. */
long long cc_model_expert_layers_in(const struct cc_model *m, long long lo, long long hi);
/* Layers with experts in the whole model (layers for a mixture whose every layer has them). */
long long cc_model_expert_layers(const struct cc_model *m);
/* Whether some layers of a mixture of experts have a dense MLP instead (first_dense, moe_step). */
int cc_model_mixed(const struct cc_model *m);
/* The model's dense layer: m without experts (its MLP of size ffn), everything else kept; for a
 * dense model m itself. The per-layer counts below describe an expert layer when given a
 * mixture; give them this for its dense layers. */
void cc_model_dense_layer(const struct cc_model *m, struct cc_model *dense);
/* Megatron-LM's --moe-layer-freq pattern of a mixed model, as a Python list expression
 * ("([0]*3+[1]*58)"), into buf; "1" when every layer has experts. */
const char *cc_model_moe_pattern(const struct cc_model *m, char *buf, size_t len);

/* Parameters of the multi-token-prediction layers (mtp x (a layer of the last layer's kind +
 * 2h^2 + 3h)); their embedding and output layer are the model's. 0 without. */
double cc_model_mtp_params(const struct cc_model *m);
/* Whether the last layer, and so an MTP layer, has experts. */
int cc_model_mtp_experts(const struct cc_model *m);

/* The modules selective recomputation recomputes: rc_modules, or CC_RCM_CORE_ATTN when 0. */
unsigned cc_model_rc_modules(const struct cc_model *m);
/* Forward FLOPs that selective recomputation runs again in one layer of m's kind for b
 * sequences (its modules' matrix products: the attention products, the up projections, a
 * dense MLP, the routed and shared experts and router); 0 for the others' element-wise work. */
double cc_model_selective_fwd_flops(const struct cc_model *m, double b);

/* Whether the model trains with dropout (its masks are stored; Megatron-LM's 0.1). */
int cc_model_dropout(const struct cc_model *m);

/* Presets: lookup by name (case-insensitive); CC_EINVAL if unknown. */
cc_status cc_model_preset(const char *name, struct cc_model *m);
/* Number of presets and the i-th one (for listing). */
int cc_model_preset_count(void);
const struct cc_model *cc_model_preset_at(int i);

/* Load a JSON spec file (fields in docs/layout.md); a "preset" field starts from a preset.
 * Errors: CC_EIO/CC_EPARSE/CC_EINVAL with a one-line message in err. */
cc_status cc_model_load(const char *path, struct cc_model *m, char *err, size_t errlen);
/* Check the shape (positive sizes, heads divide hidden, kv heads divide heads). */
cc_status cc_model_check(const struct cc_model *m, char *err, size_t errlen);

/* Set the sequence length; a batch given in tokens (batch_tokens > 0: a preset's or a Hugging
 * Face config's assumed batch) keeps its tokens, so global_batch becomes batch_tokens /
 * seq_len (at least 1). A batch stated in sequences (batch_tokens = 0) is kept. */
void cc_model_set_seq_len(struct cc_model *m, int seq_len);

/* The largest value ccbench accepts for a spec key ("layers", "hidden", ..., "global_batch"). */
long long cc_model_key_max(const char *key);

/* Parameters of one transformer layer (weights, biases, norms; with experts all of them). */
double cc_model_layer_params(const struct cc_model *m);
/* Of cc_model_layer_params: those every tensor-parallel rank holds whole (Megatron-LM): the
 * norms (and QK norms), the biases of the row-parallel output projection and MLP out, and
 * with experts the router. */
double cc_model_layer_tp_whole_params(const struct cc_model *m);
/* The final norm's parameters (held whole by every tensor-parallel rank of the last stage). */
double cc_model_final_norm_params(const struct cc_model *m);
/* Parameters in the layer matrices that one token meets (what the matmul FLOPs see): with
 * experts the attention, topk routed experts, the shared expert and the router. */
double cc_model_layer_matmul_params(const struct cc_model *m);
/* Embedding parameters: V*h (+ s*h learned positions for gelu models). */
double cc_model_embed_params(const struct cc_model *m);
/* Whole model: l layers (expert and dense ones), embedding, untied output layer, final norm. */
double cc_model_params(const struct cc_model *m);

/* Parameters one token meets: the whole model less the routed experts it does not go to
 * (cc_model_params for a dense model). */
double cc_model_active_params(const struct cc_model *m);
/* Forward FLOPs of one layer for b sequences: 2*b*s*P_matmul + 4*b*s^2*q, q = heads x
 * head_dim (h unless head_dim says otherwise). */
double cc_model_layer_fwd_flops(const struct cc_model *m, double b);
/* Forward FLOPs of the output layer (logits) for b sequences: 2*b*s*h*V. */
double cc_model_logit_fwd_flops(const struct cc_model *m, double b);
/* Model FLOPs per optimizer step (3x forward, no recomputation): the MFU numerator. For a
 * GPT shape this is 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)) (Korthikanti et al. 2022). */
double cc_model_step_flops(const struct cc_model *m);
/* FLOPs per optimizer step as Megatron-LM counts them for the "throughput per GPU (TFLOP/s/GPU)"
 * of its training log (megatron/training/training.py, num_floating_point_operations): 6 x
 * tokens x (the layers' matrices, a mixture of experts' router left out, + h x the vocabulary padded to a multiple of vocab_unit: its
 * --make-vocab-size-divisible-by times tp, 128 x tp by default) + 6 x B x s^2 x q per layer (the two attention
 * products at half size, for the causal mask); no recomputation. That is Megatron-LM's count
 * since March 2025 (commit 8873b55d6a); before, it counted the attention products whole, as
 * the MFU numerator above does (with the vocabulary unpadded). */
double cc_model_megatron_log_flops(const struct cc_model *m, long long vocab_unit);
/* The vocabulary as a framework pads it: V rounded up to a multiple of unit (Megatron-LM and
 * NeMo: --make-vocab-size-divisible-by 128 times tp, so that every tp rank holds the same
 * slice of the embedding and the output layer); unit <= 1: V itself. */
int cc_model_padded_vocab(const struct cc_model *m, long long unit);
/* FLOPs executed per step with recomputation mode rc (full: + one forward of every layer;
 * selective: + what its modules run again, cc_model_selective_fwd_flops, in every layer). With full recompute and a GPT shape this is
 * 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) (Narayanan et al. 2021). */
double cc_model_step_hw_flops(const struct cc_model *m, enum cc_recompute rc);
/* The paper's formula itself, for comparison with published figures. */
double cc_model_megatron_flops(const struct cc_model *m);

/* Activation bytes of one layer for one micro-batch of b sequences of s tokens on one GPU
 * (Korthikanti et al. 2022, generalised to GQA and the MLP size): with no recomputation
 * s*b*h*(10 + 24/t + 5*a*s/(h*t)) for a GPT shape; sequence parallel divides everything by
 * t; selective drops what its modules produce (cc_model_rc_modules; the default core_attn
 * the 5as/h term, as flash attention does); full keeps 2*s*b*h (/t with sp). s here is the per-GPU sequence length (divide by the context-parallel degree).
 * fp8 (Transformer Engine): the four linear layers' inputs are kept as 1-byte copies, so
 * 8h outside the tensor-parallel region instead of 10h, and h + ffn less inside it. */
double cc_model_layer_act_bytes(const struct cc_model *m, double b, double s, int t, int sp,
                                enum cc_recompute rc);
/* The 16-bit activations of one layer without recomputation, whatever the precision: the
 * proxy for its element-wise memory traffic (fp8 casts read them too). */
double cc_model_layer_traffic_bytes(const struct cc_model *m, double b, double s, int t, int sp);

#endif
