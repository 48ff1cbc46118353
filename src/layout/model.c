/* model.c - model presets, their checks, and the parameter/FLOP/activation formulas (a model
 * read from a file: modelfile.c). */
#include "layout/model.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/jsonfile.h"
#include "core/log.h"

const char *const cc_prec_names[] = {"bf16", "fp16", "fp8", NULL};
const char *const cc_optim_names[] = {"adam", "sgd", NULL};
const char *const cc_recompute_names[] = {"none", "selective", "full", "block", "auto", NULL};
const char *const cc_mlp_names[] = {"gelu", "swiglu", NULL};
const char *const cc_rc_module_names[CC_RCM_COUNT] = {
    "core_attn", "layernorm", "moe_act", "mla_up_proj", "mlp", "moe", "shared_experts"};

cc_status cc_rc_modules_parse(const char *text, unsigned *mods, char *err, size_t errlen)
{
    unsigned set = 0;
    const char *p = text ? text : "";
    while (*p) {
        size_t n = strcspn(p, ", ");
        if (n > 0) {
            int k = 0;
            while (k < CC_RCM_COUNT &&
                   (strlen(cc_rc_module_names[k]) != n || strncmp(p, cc_rc_module_names[k], n)))
                k++;
            if (k == CC_RCM_COUNT) {
                cc_errbuf(err, errlen, "recompute module '%.*s' is not one of core_attn, "
                          "layernorm, moe_act, mla_up_proj, mlp, moe, shared_experts (Megatron-Core's "
                          "others are not costed)", (int)(n > 64 ? 64 : n), p);
                return CC_EUSAGE;
            }
            set |= 1u << k;
        }
        p += n;
        p += strspn(p, ", ");
    }
    if (!set) {
        cc_errbuf(err, errlen, "recompute modules: give at least one of core_attn, layernorm, "
                  "moe_act, mla_up_proj, mlp, moe, shared_experts");
        return CC_EUSAGE;
    }
    *mods = set;
    return CC_OK;
}

const char *cc_rc_modules_format(unsigned mods, const char *sep, char *buf, size_t len)
{
    size_t at = 0;
    if (len)
        buf[0] = '\0';
    if (!mods)
        mods = CC_RCM_CORE_ATTN;
    for (int k = 0; k < CC_RCM_COUNT && at < len; k++)
        if (mods & (1u << k)) {
            int w = snprintf(buf + at, len - at, "%s%s", at ? sep : "", cc_rc_module_names[k]);
            at += w > 0 ? (size_t)w : 0;
        }
    return buf;
}

unsigned cc_model_rc_modules(const struct cc_model *m)
{
    return m->rc_modules ? m->rc_modules : CC_RCM_CORE_ATTN;
}

#define GPT(nm, src, l, h, a, B)                                                              \
    {nm, src, l, h, a, a, 4 * (h), 51200, 2048, B, CC_PREC_FP16, CC_OPTIM_ADAM, CC_RC_FULL,     \
     CC_MLP_GELU, 0, 1}
#define MEGATRON_SRC "Narayanan et al., SC'21, arXiv 2104.04473, Table 1 (s=2048, V=51200)"
#define LLAMA2_SRC "Touvron et al. 2023, arXiv 2307.09288 (Llama 2), Table 1 and Sec. 2.2: s=4096, 4M-token batches"
#define MIXTRAL_SRC "Jiang et al. 2024, arXiv 2401.04088 (Mixtral of Experts), Table 1; s=4096 and a 4M-token batch assumed"
#define QWEN3_SRC "Qwen Team 2025, arXiv 2505.09388 (Qwen3), Table 2, and the config.json; s=4096 (stage 1) and a 4M-token batch assumed"
#define LLAMA3_SRC "Llama Team 2024, arXiv 2407.21783 (The Llama 3 Herd of Models), Table 3; s=8192"

/* The Llama batches are given in tokens: --seq-len keeps the tokens, not the sequences. */
static const struct cc_model presets[] = {
    {"gpt3-175b", "Brown et al. 2020, arXiv 2005.14165, Table 2.1 (V padded to 51200 as Megatron does)",
     96, 12288, 96, 96, 4 * 12288, 51200, 2048, 1536, CC_PREC_BF16, CC_OPTIM_ADAM,
     CC_RC_SELECTIVE, CC_MLP_GELU, 1, 1},
    {"llama2-7b", LLAMA2_SRC, 32, 4096, 32, 32, 11008, 32000, 4096, 1024, CC_PREC_BF16,
     CC_OPTIM_ADAM, CC_RC_SELECTIVE, CC_MLP_SWIGLU, 1, 0, 4LL << 20},
    {"llama2-13b", LLAMA2_SRC, 40, 5120, 40, 40, 13824, 32000, 4096, 1024, CC_PREC_BF16,
     CC_OPTIM_ADAM, CC_RC_SELECTIVE, CC_MLP_SWIGLU, 1, 0, 4LL << 20},
    {"llama2-70b", LLAMA2_SRC, 80, 8192, 64, 8, 28672, 32000, 4096, 1024, CC_PREC_BF16,
     CC_OPTIM_ADAM, CC_RC_SELECTIVE, CC_MLP_SWIGLU, 1, 0, 4LL << 20},
    {"llama3-8b", LLAMA3_SRC "; global batch assumed 4M tokens", 32, 4096, 32, 8, 14336, 128256,
     8192, 512, CC_PREC_BF16, CC_OPTIM_ADAM, CC_RC_SELECTIVE, CC_MLP_SWIGLU, 1, 0, 4LL << 20,
     500000},
    {"llama3-70b", LLAMA3_SRC "; global batch assumed 4M tokens", 80, 8192, 64, 8, 28672, 128256,
     8192, 512, CC_PREC_BF16, CC_OPTIM_ADAM, CC_RC_SELECTIVE, CC_MLP_SWIGLU, 1, 0, 4LL << 20,
     500000},
    {"llama3-405b", LLAMA3_SRC "; 16M-token batches (Sec. 3.4)", 126, 16384, 128, 8, 53248,
     128256, 8192, 2048, CC_PREC_BF16, CC_OPTIM_ADAM, CC_RC_SELECTIVE, CC_MLP_SWIGLU, 1, 0, 16LL << 20,
     500000},
    /* mixtures of experts: batches not published, assumed 4M tokens at s=4096 */
    {.name = "mixtral-8x7b", .source = MIXTRAL_SRC, .layers = 32, .hidden = 4096, .heads = 32,
     .kv_heads = 8, .ffn = 14336, .vocab = 32000, .seq_len = 4096, .global_batch = 1024,
     .prec = CC_PREC_BF16, .optim = CC_OPTIM_ADAM, .recompute = CC_RC_SELECTIVE,
     .mlp = CC_MLP_SWIGLU, .flash_attn = 1, .batch_tokens = 4LL << 20, .rope_base = 1e6,
     .experts = 8, .topk = 2, .moe_ffn = 14336},
    {.name = "mixtral-8x22b", .source = "Mistral AI, Mixtral-8x22B-v0.1 config.json (141B, "
     "39B active); s=4096 and a 4M-token batch assumed", .layers = 56, .hidden = 6144,
     .heads = 48, .kv_heads = 8, .ffn = 16384, .vocab = 32768, .seq_len = 4096,
     .global_batch = 1024, .prec = CC_PREC_BF16, .optim = CC_OPTIM_ADAM,
     .recompute = CC_RC_SELECTIVE, .mlp = CC_MLP_SWIGLU, .flash_attn = 1,
     .batch_tokens = 4LL << 20, .rope_base = 1e6, .experts = 8, .topk = 2, .moe_ffn = 16384},
    {.name = "qwen3-30b-a3b", .source = QWEN3_SRC, .layers = 48, .hidden = 2048, .heads = 32,
     .kv_heads = 4, .ffn = 6144, .vocab = 151936, .seq_len = 4096, .global_batch = 1024,
     .prec = CC_PREC_BF16, .optim = CC_OPTIM_ADAM, .recompute = CC_RC_SELECTIVE,
     .mlp = CC_MLP_SWIGLU, .flash_attn = 1, .batch_tokens = 4LL << 20, .rope_base = 1e6,
     .experts = 128, .topk = 8, .moe_ffn = 768, .head_dim = 128, .qk_norm = 1},
    {.name = "qwen3-235b-a22b", .source = QWEN3_SRC, .layers = 94, .hidden = 4096, .heads = 64,
     .kv_heads = 4, .ffn = 12288, .vocab = 151936, .seq_len = 4096, .global_batch = 1024,
     .prec = CC_PREC_BF16, .optim = CC_OPTIM_ADAM, .recompute = CC_RC_SELECTIVE,
     .mlp = CC_MLP_SWIGLU, .flash_attn = 1, .batch_tokens = 4LL << 20, .rope_base = 1e6,
     .experts = 128, .topk = 8, .moe_ffn = 1536, .head_dim = 128, .qk_norm = 1},
    /* latent attention, dense layers first, multi-token prediction left out */
    {.name = "deepseek-v3", .source = "DeepSeek-AI 2024, arXiv 2412.19437 (DeepSeek-V3), Sec. 4.2 "
     "and its config.json (Megatron-LM's examples agree); s=4096, batch 15360 (the final one); "
     "one multi-token-prediction layer (--mtp 0: none)", .layers = 61, .hidden = 7168,
     .heads = 128, .kv_heads = 128, .ffn = 18432, .vocab = 129280, .seq_len = 4096,
     .global_batch = 15360, .prec = CC_PREC_BF16, .optim = CC_OPTIM_ADAM,
     .recompute = CC_RC_SELECTIVE, .mlp = CC_MLP_SWIGLU, .flash_attn = 1, .experts = 256,
     .topk = 8, .moe_ffn = 2048, .shared_ffn = 2048, .first_dense = 3, .q_lora = 1536,
     .kv_lora = 512, .qk_nope = 128, .qk_rope = 64, .v_dim = 128, .mtp = 1,
     .route_groups = 8, .route_group_topk = 4},
    GPT("megatron-1.7b", MEGATRON_SRC, 24, 2304, 24, 512),
    GPT("megatron-3.6b", MEGATRON_SRC, 30, 3072, 32, 512),
    GPT("megatron-7.5b", MEGATRON_SRC, 36, 4096, 32, 512),
    GPT("megatron-18.4b", MEGATRON_SRC, 40, 6144, 48, 1024),
    GPT("megatron-39.1b", MEGATRON_SRC, 48, 8192, 64, 1536),
    GPT("megatron-76.1b", MEGATRON_SRC, 60, 10240, 80, 1792),
    GPT("megatron-145.6b", MEGATRON_SRC, 80, 12288, 96, 2304),
    GPT("megatron-310.1b", MEGATRON_SRC, 96, 16384, 128, 2160),
    GPT("megatron-529.6b", MEGATRON_SRC, 105, 20480, 128, 2520),
    GPT("megatron-1t", MEGATRON_SRC, 128, 25600, 160, 3072),
};
#define NPRESETS ((int)(sizeof presets / sizeof presets[0]))


int cc_model_preset_count(void) { return NPRESETS; }

const struct cc_model *cc_model_preset_at(int i)
{
    return i >= 0 && i < NPRESETS ? &presets[i] : NULL;
}

cc_status cc_model_preset(const char *name, struct cc_model *m)
{
    for (int i = 0; i < NPRESETS; i++)
        if (strcasecmp(presets[i].name, name) == 0) {
            *m = presets[i];
            return CC_OK;
        }
    return CC_EINVAL;
}

long long cc_model_key_max(const char *key)
{
    /* beyond any model trained so far by orders of magnitude, and small enough that every
     * product the estimates form stays exact */
    static const struct { const char *key; long long max; } caps[] = {
        {"layers", 100000},     {"hidden", 1000000},  {"heads", 1000000},
        {"kv_heads", 1000000},  {"ffn", 100000000},   {"vocab", 100000000},
        {"seq_len", 100000000}, {"global_batch", 1000000000000LL}, {"experts", 100000}, {"head_dim", 100000},
        {"topk", 100000},       {"moe_ffn", 100000000}, {"shared_ffn", 100000000},
        {"first_dense_layers", 100000}, {"moe_layer_step", 100000}, {"q_lora_rank", 1000000},
        {"kv_lora_rank", 1000000}, {"qk_nope_head_dim", 100000}, {"qk_rope_head_dim", 100000},
        {"v_head_dim", 100000}, {"mtp_layers", 100}, {"router_groups", 1024},
        {"router_group_topk", 1024}};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        if (strcmp(caps[i].key, key) == 0)
            return caps[i].max;
    return 1000000000LL;
}

cc_status cc_model_check(const struct cc_model *m, char *err, size_t errlen)
{
    const struct { const char *name; long long v; } pos[] = {
        {"layers", m->layers}, {"hidden", m->hidden}, {"heads", m->heads},
        {"kv_heads", m->kv_heads}, {"ffn", m->ffn}, {"vocab", m->vocab},
        {"seq_len", m->seq_len}, {"global_batch", m->global_batch}};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
        long long max = cc_model_key_max(pos[i].name);
        if (pos[i].v <= 0 || pos[i].v > max) {
            cc_errbuf(err, errlen, "model '%s': %s must be from 1 to %lld, got '%lld'", m->name,
                      pos[i].name, max, pos[i].v);
            return CC_EINVAL;
        }
    }
    if (m->head_dim < 0 || m->head_dim > cc_model_key_max("head_dim")) {
        cc_errbuf(err, errlen, "model '%s': head_dim must be from 1 to %lld, got '%d'", m->name,
                  cc_model_key_max("head_dim"), m->head_dim);
        return CC_EINVAL;
    }
    if (!m->head_dim && !cc_model_mla(m) && m->hidden % m->heads) {
        cc_errbuf(err, errlen, "model '%s': heads '%d' do not divide hidden size %d (give "
                  "head_dim for attention of another width)", m->name, m->heads, m->hidden);
        return CC_EINVAL;
    }
    if (m->heads % m->kv_heads) {
        cc_errbuf(err, errlen, "model '%s': kv_heads '%d' do not divide heads %d", m->name,
                  m->kv_heads, m->heads);
        return CC_EINVAL;
    }
    if (m->experts == 1 || m->experts < 0) {
        cc_errbuf(err, errlen, "model '%s': experts '%d': 0 for a dense model, else at least 2",
                  m->name, m->experts);
        return CC_EINVAL;
    }
    if (cc_model_moe(m) && (m->topk < 1 || m->topk > m->experts)) {
        cc_errbuf(err, errlen, "model '%s': topk '%d' must be from 1 to the %d experts", m->name,
                  m->topk, m->experts);
        return CC_EINVAL;
    }
    if (cc_model_moe(m) && (m->moe_ffn < 1 || m->shared_ffn < 0)) {
        cc_errbuf(err, errlen, "model '%s': moe_ffn '%d' must be at least 1 and shared_ffn '%d' "
                  "at least 0", m->name, m->moe_ffn, m->shared_ffn);
        return CC_EINVAL;
    }
    if (cc_model_mla(m)) {
        const char *bad = m->qk_nope + m->qk_rope < 1 || m->v_dim < 1
                              ? "qk_nope_head_dim + qk_rope_head_dim and v_head_dim must be at least 1"
                          : m->kv_heads != m->heads ? "kv_heads must equal heads (every head has its own keys and values)"
                          : m->mlp != CC_MLP_SWIGLU ? "it is modelled with the swiglu layer (RMSNorm, no biases): mlp swiglu"
                          : m->qk_norm || m->qkv_bias ? "qk_norm and Q/K/V biases do not apply (its latent norms are counted)"
                          : m->head_dim ? "head_dim does not apply (qk_nope_head_dim, qk_rope_head_dim, v_head_dim)"
                                        : NULL;
        if (bad) {
            cc_errbuf(err, errlen, "model '%s': latent attention (kv_lora_rank %d): %s", m->name,
                      m->kv_lora, bad);
            return CC_EINVAL;
        }
    } else if (m->q_lora || m->qk_nope || m->qk_rope || m->v_dim) {
        cc_errbuf(err, errlen, "model '%s': q_lora_rank, qk_nope_head_dim, qk_rope_head_dim and "
                  "v_head_dim are for latent attention, which kv_lora_rank > 0 turns on", m->name);
        return CC_EINVAL;
    }
    if (m->mtp < 0 || m->mtp > cc_model_key_max("mtp_layers")) {
        cc_errbuf(err, errlen, "model '%s': mtp_layers '%d' must be from 0 to %lld", m->name,
                  m->mtp, cc_model_key_max("mtp_layers"));
        return CC_EINVAL;
    }
    if (m->first_dense < 0) {
        cc_errbuf(err, errlen, "model '%s': first_dense_layers '%d' must be at least 0", m->name,
                  m->first_dense);
        return CC_EINVAL;
    }
    if (m->moe_step < 0 || m->moe_step > m->layers) {
        cc_errbuf(err, errlen, "model '%s': moe_layer_step (every k-th layer with experts) '%d' "
                  "must be from 0 to the %d layers", m->name, m->moe_step, m->layers);
        return CC_EINVAL;
    }
    if (!cc_model_moe(m) && (m->first_dense > 0 || m->moe_step > 1)) {
        cc_errbuf(err, errlen, "model '%s': %s '%d' without experts (a dense model's layers are "
                  "all dense)", m->name, m->first_dense > 0 ? "first_dense_layers" : "moe_layer_step",
                  m->first_dense > 0 ? m->first_dense : m->moe_step);
        return CC_EINVAL;
    }
    if (m->route_groups < 0 || m->route_group_topk < 0 ||
        (m->route_groups > 0) != (m->route_group_topk > 0)) {
        cc_errbuf(err, errlen, "model '%s': router_groups %d and router_group_topk %d: give "
                  "both (group-limited routing) or neither", m->name, m->route_groups,
                  m->route_group_topk);
        return CC_EINVAL;
    }
    if (m->route_groups > 0 &&
        (!cc_model_moe(m) || m->experts % m->route_groups || m->route_group_topk > m->route_groups ||
         (long long)m->route_group_topk * (m->experts / m->route_groups) < m->topk)) {
        cc_errbuf(err, errlen, "model '%s': router_groups %d, router_group_topk %d: the groups "
                  "must divide the %d experts, at most router_groups of them be chosen, and "
                  "the chosen groups hold at least topk %d experts (Megatron-Core's "
                  "group-limited routing)", m->name, m->route_groups, m->route_group_topk,
                  m->experts, m->topk);
        return CC_EINVAL;
    }
    if (cc_model_moe(m) && cc_model_expert_layers(m) < 1) {
        cc_errbuf(err, errlen, "model '%s': no layer has experts (first_dense_layers %d, "
                  "moe_layer_step %d, %d layers; experts 0 for a dense model)", m->name,
                  m->first_dense, m->moe_step, m->layers);
        return CC_EINVAL;
    }
    /* a recompute module the model does not have would recompute nothing */
    const struct { unsigned bit; int lacks; const char *why; } need[] = {
        {CC_RCM_MOE_ACT, !cc_model_moe(m), "no experts"},
        {CC_RCM_MOE, !cc_model_moe(m), "no experts"},
        {CC_RCM_SHARED_EXPERTS, m->shared_ffn <= 0, "no shared expert"},
        {CC_RCM_MLA_UP_PROJ, !cc_model_mla(m), "no latent attention"},
        {CC_RCM_MLP, cc_model_moe(m) && !cc_model_mixed(m), "experts in every layer (no dense MLP)"},
        {CC_RCM_LAYERNORM, !cc_model_moe(m) && !cc_model_mla(m),
         "neither experts nor latent attention (Transformer Engine fuses its norms into the "
         "linear layers after them)"}};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if ((m->rc_modules & need[i].bit) && need[i].lacks) {
            int k = 0;
            while (need[i].bit >> (k + 1))
                k++;
            cc_errbuf(err, errlen, "model '%s': recompute module %s has nothing to recompute: "
                      "the model has %s", m->name, cc_rc_module_names[k], need[i].why);
            return CC_EINVAL;
        }
    return CC_OK;
}

void cc_model_set_seq_len(struct cc_model *m, int seq_len)
{
    m->seq_len = seq_len;
    if (m->batch_tokens > 0 && seq_len > 0) /* an assumed batch stays the same tokens */
        m->global_batch = m->batch_tokens / seq_len > 0 ? m->batch_tokens / seq_len : 1;
}

/* ---- counts ------------------------------------------------------------------------------ */

double cc_model_head_dim(const struct cc_model *m)
{
    return m->head_dim > 0 ? (double)m->head_dim : (double)(m->hidden / m->heads);
}

double cc_model_q_dim(const struct cc_model *m)
{
    return m->heads * cc_model_head_dim(m);
}

static double kv_dim(const struct cc_model *m)
{
    return m->kv_heads * cc_model_head_dim(m);
}

int cc_model_mla(const struct cc_model *m)
{
    return m->kv_lora > 0;
}

double cc_model_attn_width(const struct cc_model *m)
{
    if (!cc_model_mla(m))
        return cc_model_q_dim(m);
    return m->heads * ((double)m->qk_nope + m->qk_rope + m->v_dim) / 2.0;
}

double cc_model_attn_whole_params(const struct cc_model *m)
{
    if (!cc_model_mla(m))
        return 0.0;
    double h = m->hidden; /* the down projections: to the latent queries, keys/values + rope */
    return (m->q_lora > 0 ? h * m->q_lora : 0.0) + h * ((double)m->kv_lora + m->qk_rope);
}

double cc_model_attn_params(const struct cc_model *m)
{
    double h = m->hidden;
    if (!cc_model_mla(m))
        return 2.0 * h * cc_model_q_dim(m) + 2.0 * h * kv_dim(m); /* Q, O; K, V */
    double n = m->heads, dqk = (double)m->qk_nope + m->qk_rope;
    double q_up = (m->q_lora > 0 ? m->q_lora : h) * n * dqk;
    double kv_up = (double)m->kv_lora * n * ((double)m->qk_nope + m->v_dim);
    return cc_model_attn_whole_params(m) + q_up + kv_up + n * m->v_dim * h; /* and O */
}

/* The latent attention's two norms (of the compressed queries and keys/values). */
static double mla_norm_params(const struct cc_model *m)
{
    return cc_model_mla(m) ? (double)m->q_lora + m->kv_lora : 0.0;
}

int cc_model_moe(const struct cc_model *m)
{
    return m->experts >= 2;
}

long long cc_model_expert_layers_in(const struct cc_model *m, long long lo, long long hi)
{
    if (!cc_model_moe(m))
        return 0;
    if (lo < m->first_dense)
        lo = m->first_dense;
    if (hi > m->layers)
        hi = m->layers;
    if (lo >= hi)
        return 0;
    long long k = m->moe_step > 1 ? m->moe_step : 1;
    return hi / k - lo / k; /* i + 1 in [lo + 1, hi] a multiple of k */
}

long long cc_model_expert_layers(const struct cc_model *m)
{
    return cc_model_expert_layers_in(m, 0, m->layers);
}

int cc_model_mixed(const struct cc_model *m)
{
    return cc_model_moe(m) && cc_model_expert_layers(m) < m->layers;
}

void cc_model_dense_layer(const struct cc_model *m, struct cc_model *dense)
{
    *dense = *m;
    dense->experts = dense->topk = dense->moe_ffn = dense->shared_ffn = 0;
    dense->first_dense = dense->moe_step = 0;
    dense->route_skew = 0.0;
}

const char *cc_model_moe_pattern(const struct cc_model *m, char *buf, size_t len)
{
    long long l = m->layers, k = m->moe_step > 1 ? m->moe_step : 1;
    if (!cc_model_mixed(m)) {
        snprintf(buf, len, "1");
        return buf;
    }
    /* dense up to the first expert layer, then periods of an expert layer and k-1 dense */
    long long first = m->first_dense;
    while (first < l && (first + 1) % k)
        first++;
    long long n = (l - first) / k, r = (l - first) % k;
    size_t o = 0;
#define PAT(...) (o += (size_t)snprintf(buf + (o < len ? o : len), o < len ? len - o : 0, __VA_ARGS__))
    if (first == k - 1 && l % k == 0) { /* periods of k-1 dense and an expert layer */
        PAT("([0]*%lld+[1])*%lld", k - 1, l / k);
        return buf;
    }
    PAT("(");
    if (first > 0)
        PAT("[0]*%lld", first);
    if (n > 0 && k > 1)
        PAT("%s([1]+[0]*%lld)*%lld", first > 0 ? "+" : "", k - 1, n);
    else if (n > 0)
        PAT("%s[1]*%lld", first > 0 ? "+" : "", n);
    if (r > 1) /* an expert layer and r-1 dense at the end */
        PAT("+[1]+[0]*%lld", r - 1);
    else if (r == 1)
        PAT("+[1]");
    PAT(")");
#undef PAT
    return buf;
}

double cc_model_route_skew(const struct cc_model *m)
{
    return m->route_skew > 0.0 ? m->route_skew : 1.0;
}

/* log C(n, r). */
static double lchoose(double n, double r)
{
    return lgamma(n + 1.0) - lgamma(r + 1.0) - lgamma(n - r + 1.0);
}

/* C(a - x, k) / C(a, k): the chance that k draws without replacement from a items miss x of
 * them. */
static double miss_all(double a, double x, int k)
{
    double p = 1.0;
    for (int i = 0; i < k && p > 0.0; i++)
        p *= a - x - i > 0.0 ? (a - x - i) / (a - i) : 0.0;
    return p;
}

double cc_model_route_spread(const struct cc_model *m, int bins)
{
    if (!cc_model_moe(m) || bins <= 1)
        return 1.0;
    double E = m->experts, per_bin = E / bins;
    int k = m->topk, G = m->route_groups, M = m->route_group_topk;
    if (G <= 0 || (G % bins && bins % G)) /* unlimited: topk of all the experts */
        return bins * (1.0 - miss_all(E, per_bin, k));
    double cand = (double)M * (E / G); /* the experts of the chosen groups */
    if (bins % G == 0) /* a group over bins / G bins: touched when chosen, then by a draw */
        return bins * ((double)M / G) * (1.0 - miss_all(cand, per_bin, k));
    /* a bin of q = G / bins groups: j of them chosen (hypergeometric, C(q, j) C(G - q, M - j) /
     * C(G, M), in logarithms: the terms are large), then its j groups' experts among the
     * candidates */
    int q = G / bins, lo = M - (G - q) > 1 ? M - (G - q) : 1, hi = q < M ? q : M;
    double touched = 0.0, all = lchoose(G, M);
    for (int j = lo; j <= hi; j++)
        touched += exp(lchoose(q, j) + lchoose(G - q, M - j) - all) *
                   (1.0 - miss_all(cand, j * (E / G), k));
    return bins * touched;
}

static double mlp_mats(const struct cc_model *m)
{
    return m->mlp == CC_MLP_SWIGLU ? 3.0 : 2.0;
}

double cc_model_layer_expert_params(const struct cc_model *m)
{
    return cc_model_moe(m) ? (double)m->experts * mlp_mats(m) * m->hidden * m->moe_ffn : 0.0;
}

/* The attention's matrices, and those of the MLP outside the routed experts (a dense MLP; with
 * experts the shared expert and the router). */
static double layer_fixed_matmul(const struct cc_model *m)
{
    double h = m->hidden;
    double attn = cc_model_attn_params(m);
    if (!cc_model_moe(m))
        return attn + mlp_mats(m) * h * m->ffn;
    return attn + mlp_mats(m) * h * m->shared_ffn + h * m->experts;
}

double cc_model_layer_matmul_params(const struct cc_model *m)
{
    double routed = cc_model_moe(m) ? (double)m->topk * mlp_mats(m) * m->hidden * m->moe_ffn
                                    : 0.0;
    return layer_fixed_matmul(m) + routed;
}

static double qk_norm_params(const struct cc_model *m)
{
    return m->qk_norm ? 2.0 * cc_model_head_dim(m) * (m->mlp == CC_MLP_GELU ? 2.0 : 1.0) : 0.0;
}

double cc_model_layer_params(const struct cc_model *m)
{
    double h = m->hidden, f = cc_model_moe(m) ? 0.0 : m->ffn; /* experts: no MLP biases */
    double q = cc_model_q_dim(m);
    double small = m->mlp == CC_MLP_GELU
                       ? (q + 2.0 * kv_dim(m)) + h + f + h + 4.0 * h /* biases, 2 LayerNorms */
                       : 2.0 * h + (m->qkv_bias ? q + 2.0 * kv_dim(m) : 0.0); /* 2 RMSNorms */
    return layer_fixed_matmul(m) + cc_model_layer_expert_params(m) + small + qk_norm_params(m) +
           mla_norm_params(m);
}

double cc_model_layer_tp_whole_params(const struct cc_model *m)
{
    double h = m->hidden;
    double whole = m->mlp == CC_MLP_GELU ? 2.0 * h + 4.0 * h /* row biases, 2 LayerNorms */
                                         : 2.0 * h;          /* 2 RMSNorms */
    return whole + qk_norm_params(m) + (cc_model_moe(m) ? h * m->experts : 0.0) +
           cc_model_attn_whole_params(m) + mla_norm_params(m);
}

double cc_model_final_norm_params(const struct cc_model *m)
{
    return (m->mlp == CC_MLP_GELU ? 2.0 : 1.0) * m->hidden;
}

double cc_model_embed_params(const struct cc_model *m)
{
    double e = (double)m->vocab * m->hidden;
    if (m->mlp == CC_MLP_GELU)
        e += (double)m->seq_len * m->hidden; /* learned positions */
    return e;
}

int cc_model_mtp_experts(const struct cc_model *m)
{
    return cc_model_expert_layers_in(m, (long long)m->layers - 1, m->layers) > 0;
}

/* An MTP layer as a layer: the model itself where its last layer has experts, else its dense
 * layer. */
static void mtp_layer(const struct cc_model *m, struct cc_model *k)
{
    if (cc_model_mtp_experts(m))
        *k = *m;
    else
        cc_model_dense_layer(m, k);
}

double cc_model_mtp_params(const struct cc_model *m)
{
    if (m->mtp <= 0)
        return 0.0;
    struct cc_model k;
    double h = m->hidden;
    mtp_layer(m, &k);
    return m->mtp * (cc_model_layer_params(&k) + 2.0 * h * h + 3.0 * h);
}

/* Sum of a per-layer count over the model's layers: the expert layers' and the dense ones'. */
static double over_layers(const struct cc_model *m, double (*per_layer)(const struct cc_model *))
{
    struct cc_model d;
    long long ne = cc_model_expert_layers(m);
    cc_model_dense_layer(m, &d);
    return (ne ? ne * per_layer(m) : 0.0) + (m->layers - ne ? (m->layers - ne) * per_layer(&d) : 0.0);
}

/* Forward FLOPs of the layers for b sequences: the expert layers' and the dense ones'. */
static double layers_fwd_flops(const struct cc_model *m, double b)
{
    struct cc_model d;
    long long ne = cc_model_expert_layers(m);
    cc_model_dense_layer(m, &d);
    return (ne ? ne * cc_model_layer_fwd_flops(m, b) : 0.0) +
           (m->layers - ne ? (m->layers - ne) * cc_model_layer_fwd_flops(&d, b) : 0.0);
}

/* Forward FLOPs of the MTP layers for b sequences: each a layer, its 2h -> h projection and
 * the output layer again. */
static double mtp_fwd_flops(const struct cc_model *m, double b)
{
    if (m->mtp <= 0)
        return 0.0;
    struct cc_model k;
    double h = m->hidden;
    mtp_layer(m, &k);
    return m->mtp * (cc_model_layer_fwd_flops(&k, b) + 2.0 * b * m->seq_len * 2.0 * h * h +
                     cc_model_logit_fwd_flops(m, b));
}

/* The matrices of a layer that Megatron-LM's FLOP count sees: all but the router; with latent
 * attention it counts each latent norm's weights as one more row of the up projection. */
static double megatron_layer_params(const struct cc_model *m)
{
    return cc_model_layer_matmul_params(m) - (cc_model_moe(m) ? (double)m->hidden * m->experts : 0.0) +
           mla_norm_params(m);
}

double cc_model_params(const struct cc_model *m)
{
    return over_layers(m, cc_model_layer_params) + cc_model_mtp_params(m) + cc_model_embed_params(m) +
           (m->tied_embed ? 0.0 : (double)m->vocab * m->hidden) + cc_model_final_norm_params(m);
}

double cc_model_active_params(const struct cc_model *m)
{
    double idle = cc_model_moe(m) ? 1.0 - (double)m->topk / m->experts : 0.0;
    double idle_layers = cc_model_expert_layers(m) + (cc_model_mtp_experts(m) ? m->mtp : 0);
    return cc_model_params(m) - idle_layers * cc_model_layer_expert_params(m) * idle;
}

double cc_model_layer_fwd_flops(const struct cc_model *m, double b)
{
    double s = m->seq_len;
    return 2.0 * b * s * cc_model_layer_matmul_params(m) + 4.0 * b * s * s * cc_model_attn_width(m);
}

double cc_model_selective_fwd_flops(const struct cc_model *m, double b)
{
    unsigned mods = cc_model_rc_modules(m);
    double T = b * m->seq_len, h = m->hidden, f = 0.0;
    double up = m->mlp == CC_MLP_SWIGLU ? 3.0 : 2.0; /* matrices of an MLP */
    if (mods & CC_RCM_CORE_ATTN)
        f += 4.0 * b * m->seq_len * (double)m->seq_len * cc_model_attn_width(m);
    if ((mods & CC_RCM_MLA_UP_PROJ) && cc_model_mla(m))
        f += 2.0 * T * m->heads *
             ((m->q_lora > 0 ? (double)m->q_lora * (m->qk_nope + m->qk_rope) : 0.0) +
              (double)m->kv_lora * ((double)m->qk_nope + m->v_dim));
    if (!cc_model_moe(m)) {
        if (mods & CC_RCM_MLP)
            f += 2.0 * T * up * h * m->ffn;
    } else if (mods & CC_RCM_MOE) {
        f += 2.0 * T * (up * h * ((double)m->topk * m->moe_ffn + m->shared_ffn) + h * m->experts);
    } else if (mods & CC_RCM_SHARED_EXPERTS) {
        f += 2.0 * T * up * h * m->shared_ffn;
    }
    return f;
}

double cc_model_logit_fwd_flops(const struct cc_model *m, double b)
{
    return 2.0 * b * m->seq_len * (double)m->hidden * m->vocab;
}

double cc_model_step_flops(const struct cc_model *m)
{
    double B = (double)m->global_batch;
    return 3.0 * (layers_fwd_flops(m, B) + cc_model_logit_fwd_flops(m, B) + mtp_fwd_flops(m, B));
}

int cc_model_padded_vocab(const struct cc_model *m, long long unit)
{
    if (unit <= 1)
        return m->vocab;
    long long v = (m->vocab + unit - 1) / unit * unit;
    return v > INT_MAX ? INT_MAX : (int)v;
}

double cc_model_megatron_log_flops(const struct cc_model *m, long long vocab_unit)
{
    double B = (double)m->global_batch, s = m->seq_len, h = m->hidden;
    double Vp = cc_model_padded_vocab(m, vocab_unit);
    /* Megatron-LM's count leaves out the router (h x experts per expert layer) */
    /* with MTP: its layers as the last layer's kind, its norms and projection (3h + 2h^2 a
     * token, the norms counted as Megatron-LM counts them) and the output layer again */
    double mtp = 0.0;
    if (m->mtp > 0) {
        struct cc_model k;
        mtp_layer(m, &k);
        mtp = m->mtp * (megatron_layer_params(&k) + 3.0 * h + 2.0 * h * h + h * Vp);
    }
    return 6.0 * B * s * (over_layers(m, megatron_layer_params) + h * Vp + mtp) +
           6.0 * B * s * s * cc_model_attn_width(m) * (m->layers + (m->mtp > 0 ? m->mtp : 0));
}

double cc_model_step_hw_flops(const struct cc_model *m, enum cc_recompute rc)
{
    double B = (double)m->global_batch;
    double f = cc_model_step_flops(m);
    if (rc == CC_RC_FULL) { /* MTP layers recomputed alike */
        f += layers_fwd_flops(m, B);
        if (m->mtp > 0) {
            struct cc_model k;
            mtp_layer(m, &k);
            f += m->mtp * cc_model_layer_fwd_flops(&k, B);
        }
    } else if (rc == CC_RC_SELECTIVE) {
        struct cc_model d, k;
        long long ne = cc_model_expert_layers(m);
        cc_model_dense_layer(m, &d);
        f += (double)ne * cc_model_selective_fwd_flops(m, B) +
             (double)(m->layers - ne) * cc_model_selective_fwd_flops(&d, B);
        if (m->mtp > 0) {
            mtp_layer(m, &k);
            f += m->mtp * cc_model_selective_fwd_flops(&k, B);
        }
    }
    return f;
}

double cc_model_megatron_flops(const struct cc_model *m)
{
    double B = (double)m->global_batch, s = m->seq_len, l = m->layers, h = m->hidden,
           V = m->vocab;
    return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

/* Saved activations; fp8: the linear layers' inputs kept as 1-byte copies. */
static double act_bytes(const struct cc_model *m, double b, double s, int t, int sp,
                        enum cc_recompute rc, int fp8)
{
    double h = m->hidden, a = m->heads, sbh = s * b * h;
    double etp = m->expert_tp > 1 ? m->expert_tp : 1;
    if (rc == CC_RC_FULL)
        return sp ? 2.0 * sbh / t : 2.0 * sbh;
    /* Per token: 10h bytes outside the tensor-parallel region (LayerNorm inputs, QKV and MLP
     * inputs, dropout masks); inside it Q and K/V (2h + 4*kv), the projection input (2h),
     * and the MLP inner activations (4*ffn for gelu, 6*ffn for swiglu). GPT: 24h. Without
     * dropout (a swiglu model unless said, as Llama trains): no masks (8h), and of the
     * attention scores only the softmax output (2as^2b, not 5as^2b). */
    int dropout = cc_model_dropout(m);
    double per_f = m->mlp == CC_MLP_SWIGLU ? 6.0 : 4.0;
    double q = cc_model_q_dim(m);
    /* attention inside the tensor-parallel region: Q, K, V and the projection input (latent:
     * Q and K heads x (qk_nope + qk_rope), V and the projection input heads x v_dim) */
    double attn = cc_model_mla(m) ? 8.0 * cc_model_attn_width(m) : 4.0 * q + 4.0 * kv_dim(m);
    /* QK norm (Qwen3): each head's RMSNorm keeps its input, the queries and keys before it
     * (2 bytes each), and its fp32 reciprocal RMS per head and token; the rotary embedding
     * after it keeps nothing (Transformer Engine's fused kernel) */
    if (m->qk_norm && !cc_model_mla(m))
        attn += 2.0 * (q + kv_dim(m)) + 4.0 * ((double)m->heads + m->kv_heads);
    double o_in = cc_model_mla(m) ? (double)m->heads * m->v_dim : q;
    /* latent attention outside it (split by tp only with sequence parallelism, like the 10h):
     * the compressed queries and keys/values with the rotary key before their norms and
     * after (the up projections' inputs) */
    double lat = cc_model_mla(m) ? 4.0 * ((double)m->q_lora + m->kv_lora) + 2.0 * m->qk_rope : 0.0;
    double par = attn + per_f * m->ffn, routed = 0.0;
    if (cc_model_moe(m)) {
        /* topk routed copies of each token: the experts' inner activations and their permuted
         * inputs (2h each: the experts' first GEMM keeps them; the routing weights are applied
         * inside the activation, so the outputs are summed back unsaved), as many more on the
         * busiest rank as routing is skewed; the shared expert's; the router's fp32
         * probabilities */
        par = attn + per_f * m->shared_ffn + 4.0 * m->experts;
        /* with expert tensor parallelism a rank takes etp times the copies (gathered over
         * its etp group) at 1/etp of the experts' width: the inner activations are the same,
         * the permuted inputs etp times as many */
        routed = (double)m->topk * (per_f * m->moe_ffn + 2.0 * h * etp);
    }
    double out = dropout ? 10.0 : 8.0;
    if (fp8) {
        /* Transformer Engine keeps a linear layer's input for the backward pass as its fp8
         * copy: 1 byte instead of 2 for the QKV and MLP inputs (outside the tensor-parallel
         * region) and for the projection and MLP-out inputs (inside it). With experts the
         * router keeps the MLP input at 16 bits (a shared expert adds its own fp8 copy), and
         * the experts' permuted inputs are fp8 */
        out -= cc_model_moe(m) ? (m->shared_ffn > 0 ? 0.0 : 1.0) : 2.0;
        par -= o_in + (cc_model_moe(m) ? m->shared_ffn : m->ffn);
        lat -= cc_model_mla(m) ? (double)m->q_lora + m->kv_lora : 0.0; /* up projections' */
        routed -= cc_model_moe(m) ? (double)m->topk * (m->moe_ffn + h * etp) : 0.0;
    }
    double shared = cc_model_moe(m) ? per_f * m->shared_ffn - (fp8 ? m->shared_ffn : 0.0) : 0.0;
    unsigned mods = rc == CC_RC_SELECTIVE ? cc_model_rc_modules(m) : 0;
    if (mods) {
        /* selective recomputation: what its modules produce is let go and made again in the
         * backward pass (docs/layout.md); core_attn is the scores below */
        int moe = cc_model_moe(m);
        /* the norms Transformer Engine does not fuse into a linear: their outputs, which in
         * fp8 the linear layers after them keep instead of their 1-byte copies (an expert
         * layer's router keeps its input at 16 bits either way) */
        if (mods & CC_RCM_LAYERNORM)
            out -= (moe ? 2.0 + (fp8 && m->shared_ffn > 0 ? 1.0 : 0.0) : 0.0) +
                   (cc_model_mla(m) ? (fp8 ? 1.0 : 2.0) : 0.0);
        if ((mods & CC_RCM_MLA_UP_PROJ) && cc_model_mla(m)) /* Q, K, V; the projection input stays */
            par -= 2.0 * m->heads * (2.0 * ((double)m->qk_nope + m->qk_rope) + m->v_dim);
        if ((mods & CC_RCM_MLP) && !moe) { /* the MLP's input copy and inner activations */
            out -= fp8 ? 1.0 : 2.0;
            par -= per_f * m->ffn - (fp8 ? m->ffn : 0.0);
        }
        if (moe && (mods & CC_RCM_MOE)) { /* router, routed and shared experts: only the input */
            par -= 4.0 * m->experts + shared;
            routed = 0.0;
            if (fp8 && m->shared_ffn > 0 && !(mods & CC_RCM_LAYERNORM))
                out -= 1.0; /* the shared expert's 1-byte input copy (layernorm's already) */
        } else if (moe) {
            if (mods & CC_RCM_SHARED_EXPERTS)
                par -= shared;
            if (mods & CC_RCM_MOE_ACT) /* each routed copy's activation output (fc2's input) */
                routed -= (double)m->topk * m->moe_ffn * (fp8 ? 1.0 : 2.0);
        }
    }
    par += routed * cc_model_route_skew(m);
    int keep_scores = rc == CC_RC_NONE || (rc == CC_RC_SELECTIVE && !(mods & CC_RCM_CORE_ATTN));
    double scores = (keep_scores && !m->flash_attn) ? (dropout ? 5.0 : 2.0) * a * s * s * b : 0.0;
    if (sp)
        return (out * sbh + lat * s * b + par * s * b + scores) / t;
    return out * sbh + lat * s * b + (par * s * b + scores) / t;
}

double cc_model_layer_act_bytes(const struct cc_model *m, double b, double s, int t, int sp,
                                enum cc_recompute rc)
{
    return act_bytes(m, b, s, t, sp, rc, m->prec == CC_PREC_FP8);
}

double cc_model_layer_traffic_bytes(const struct cc_model *m, double b, double s, int t, int sp)
{
    return act_bytes(m, b, s, t, sp, CC_RC_NONE, 0);
}
