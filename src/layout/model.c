/* model.c - model presets, the JSON spec, parameter/FLOP/activation formulas. */
#include "layout/model.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/jsonfile.h"
#include "core/text.h"
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
        {"v_head_dim", 100000}, {"mtp_layers", 100}, {"router_groups", 100000},
        {"router_group_topk", 100000}};
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

/* ---- JSON spec ---------------------------------------------------------------------------- */

static cc_status get_int(json_t *o, const char *key, long long *v, const char *path, char *err,
                         size_t errlen)
{
    json_t *x = json_object_get(o, key);
    if (!x)
        return CC_OK;
    if (!json_is_integer(x)) {
        cc_errbuf(err, errlen, "model spec '%s': \"%s\" must be an integer", path, key);
        return CC_EINVAL;
    }
    *v = json_integer_value(x);
    return CC_OK;
}

static cc_status get_bool(json_t *o, const char *key, int *v, const char *path, char *err,
                          size_t errlen)
{
    json_t *x = json_object_get(o, key);
    if (!x)
        return CC_OK;
    if (!json_is_boolean(x)) {
        cc_errbuf(err, errlen, "model spec '%s': \"%s\" must be true or false", path, key);
        return CC_EINVAL;
    }
    *v = json_is_true(x);
    return CC_OK;
}

int cc_model_dropout(const struct cc_model *m)
{
    return m->dropout ? m->dropout > 0 : m->mlp != CC_MLP_SWIGLU;
}

/* Dropout from the probabilities under `keys` (numbers from 0 to 1; absent or null: kept):
 * -1 (none) when every one given is 0, 1 when one is above. */
static cc_status get_dropout(json_t *o, const char *const *keys, int *v, const char *path,
                             char *err, size_t errlen)
{
    for (int i = 0; keys[i]; i++) {
        json_t *x = json_object_get(o, keys[i]);
        if (!x || json_is_null(x))
            continue;
        double p = json_number_value(x);
        if (!json_is_number(x) || !(p >= 0 && p < 1)) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" must be a probability from 0 to "
                      "below 1", path, keys[i]);
            return CC_EINVAL;
        }
        if (p > 0)
            *v = 1;
        else if (*v != 1)
            *v = -1;
    }
    return CC_OK;
}

/* The rotary base under `key` (a number from 1 to 1e12; absent or null: kept). */
static cc_status get_rope(json_t *o, const char *key, double *v, const char *path, char *err,
                          size_t errlen)
{
    json_t *x = json_object_get(o, key);
    if (!x || json_is_null(x))
        return CC_OK;
    double r = json_number_value(x);
    if (!json_is_number(x) || !(r >= 1 && r <= 1e12)) {
        cc_errbuf(err, errlen, "model spec '%s': \"%s\" must be a number from 1 to 1e12", path,
                  key);
        return CC_EINVAL;
    }
    *v = r;
    return CC_OK;
}

/* Where s stands in a NULL-ended list; -1 if it does not (or s is NULL). */
static int list_index(const char *s, const char *const *list)
{
    for (int i = 0; s && list[i]; i++)
        if (strcmp(s, list[i]) == 0)
            return i;
    return -1;
}

static cc_status get_choice(json_t *o, const char *key, const char *const *names, int *v,
                            const char *path, char *err, size_t errlen)
{
    json_t *x = json_object_get(o, key);
    if (!x)
        return CC_OK;
    const char *s = json_string_value(x);
    int i = list_index(s, names);
    if (i >= 0) {
        *v = i;
        return CC_OK;
    }
    cc_errbuf(err, errlen, "model spec '%s': unknown \"%s\" '%s'", path, key,
              s ? s : "(not a string)");
    return CC_EINVAL;
}

/* "recompute_modules": Megatron-Core's list (["core_attn", "moe_act"]) or one string of them,
 * comma-separated. */
static cc_status get_rc_modules(json_t *o, unsigned *mods, const char *path, char *err,
                                size_t errlen)
{
    json_t *x = json_object_get(o, "recompute_modules"), *e;
    char list[256] = "", why[192];
    size_t i;
    int names = json_is_string(x) || json_is_array(x), fits = 1;
    if (!x)
        return CC_OK;
    if (json_is_string(x))
        fits = snprintf(list, sizeof list, "%s", json_string_value(x)) < (int)sizeof list;
    else if (json_is_array(x))
        json_array_foreach(x, i, e) {
            if (!(names = json_is_string(e)) ||
                !(fits = strlen(list) + strlen(json_string_value(e)) + 2 <= sizeof list))
                break;
            strcat(strcat(list, i ? "," : ""), json_string_value(e));
        }
    if (!names || !fits) {
        if (!names)
            cc_errbuf(err, errlen, "model spec '%s': \"recompute_modules\" must be a list of "
                      "module names", path);
        else
            cc_errbuf(err, errlen, "model spec '%s': \"recompute_modules\" is longer than "
                      "%zu characters", path, sizeof list - 1);
        return CC_EINVAL;
    }
    if (cc_rc_modules_parse(list, mods, why, sizeof why) != CC_OK) {
        cc_errbuf(err, errlen, "model spec '%s': %s", path, why);
        return CC_EINVAL;
    }
    return CC_OK;
}

/* ---- Hugging Face config.json ------------------------------------------------------------ */

/* The first of keys present (names differ between model families) into *v: CC_OK, or
 * CC_EINVAL with a message naming the key if it is not a whole number in 1..1e9; *v stays 0
 * if none is present. */
static cc_status hf_int(json_t *o, const char *const *keys, long long *v, const char *path,
                        char *err, size_t errlen)
{
    *v = 0;
    for (int i = 0; keys[i]; i++) {
        json_t *x = json_object_get(o, keys[i]);
        if (!x || json_is_null(x))
            continue;
        if (!json_is_integer(x) || json_integer_value(x) < 1 ||
            json_integer_value(x) > 1000000000LL) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" must be a whole number from 1 to "
                      "1e9", path, keys[i]);
            return CC_EINVAL;
        }
        *v = json_integer_value(x);
        return CC_OK;
    }
    return CC_OK;
}

/* Families whose MLP is gated (gate and up projections: SwiGLU, or GeGLU, which costs the
 * same) and families whose is not, whatever their activation is called. */
static const char *const hf_gated[] = {"llama", "mistral", "mixtral", "qwen", "qwen2", "qwen3",
                                       "qwen2_moe", "qwen3_moe", "olmoe", "gemma",
                                       "gemma2", "gemma3_text", "phi3", "phi3small", "olmo",
                                       "olmo2", "cohere", "internlm2", "granite", "deepseek",
                                       "chatglm", "yi", NULL};
static const char *const hf_plain[] = {"gpt2", "gpt_neox", "gptj", "gpt_neo", "opt", "falcon",
                                       "bloom", "mpt", "gpt_bigcode", "starcoder2", "phi", NULL};
/* Families that normalise queries and keys per head (as Megatron-LM's --qk-layernorm does;
 * OLMo 2's norms span the whole projection, a few parameters more, not passed on), and
 * families whose alternating sliding-window or chunked layers the estimate has no form for:
 * Gemma 2 and 3 (and their soft-capped logits), Llama 4 (chunked attention, layers without
 * positions, a shared expert named otherwise). */
static const char *const hf_qk_norm[] = {"qwen3", "qwen3_moe", "dots1", NULL};
static const char *const hf_window[] = {"gemma2", "gemma3", "gemma3_text", "llama4",
                                        "llama4_text", NULL};
static const char *const hf_gated_act[] = {"silu", "swish", "swiglu", "geglu", "gegelu", NULL};
/* Families whose transformers config class leaves the embeddings untied when the config
 * does not say (the base class, and so every other family, ties them). */
static const char *const hf_untied[] = {"llama", "mistral", "mixtral", "qwen2", "qwen3",
                                        "qwen2_moe", "qwen3_moe", "olmoe", "phi", "phi3",
                                        "gpt_neox", "gptj", "olmo", "olmo2", "internlm2",
                                        "deepseek", "chatglm", "yi", "deepseek_v2",
                                        "deepseek_v3", "glm4_moe", "dots1", NULL};

/* Recognised as a transformers config (rather than a ccbench spec) by these keys. */
static int hf_like(json_t *root)
{
    static const char *const keys[] = {"model_type", "architectures", "transformers_version",
                                       "num_hidden_layers", "n_layer", NULL};
    for (int i = 0; keys[i]; i++)
        if (json_object_get(root, keys[i]))
            return 1;
    return 0;
}

/* A Hugging Face transformers config.json: the shape from its keys (a multimodal config's
 * "text_config" for the language model). A config says how the checkpoint is stored, not how
 * the model was trained: the precision stays bf16, the sequence is the trained window
 * (original_max_position_embeddings where a longer one was reached by extension, else
 * max_position_embeddings) up to 8192, or 2048 if the config names none, and the batch is 4M
 * tokens; the source line says so, and --precision, --seq-len, --global-batch set them. */
/* The layers of a mixture of experts that have a dense MLP instead, as Hugging Face configs
 * name them: the first k (first_k_dense_replace: DeepSeek, GLM-4.5, dots.llm1, with
 * DeepSeek's moe_layer_freq 1; ERNIE 4.5's moe_layer_start_index) and every k-th counted from
 * 1 (decoder_sparse_step: Qwen2-MoE; interleave_moe_layer_step: Llama 4; ERNIE 4.5's
 * moe_layer_interval). A family's own default where its config leaves the key out. Other
 * placements are refused by name. */
static cc_status hf_mixed_layers(json_t *root, const char *type, long long *first,
                                 long long *step, const char *path, char *err, size_t errlen)
{
    static const struct { const char *type; long long first; } defaults[] = {
        {"deepseek_v3", 3}, {"glm4_moe", 1}, {"glm4_moe_lite", 1}, {"ernie4_5_moe", 1}};
    static const char *const k_first[] = {"first_k_dense_replace", "moe_layer_start_index", NULL};
    static const char *const k_step[] = {"decoder_sparse_step", "interleave_moe_layer_step",
                                         "moe_layer_interval", NULL};
    *first = 0, *step = 0;
    for (size_t i = 0; type && i < sizeof defaults / sizeof defaults[0]; i++)
        if (strcmp(type, defaults[i].type) == 0)
            *first = defaults[i].first;
    const struct { const char *const *keys; long long *v; } read[] = {{k_first, first},
                                                                      {k_step, step}};
    for (int r = 0; r < 2; r++)
        for (int i = 0; read[r].keys[i]; i++) {
            json_t *x = json_object_get(root, read[r].keys[i]);
            if (!x || json_is_null(x))
                continue;
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) > cc_model_key_max("first_dense_layers")) {
                cc_errbuf(err, errlen, "model spec '%s': \"%s\" must be a whole number from 0 "
                          "to %lld", path, read[r].keys[i], cc_model_key_max("first_dense_layers"));
                return CC_EINVAL;
            }
            if (r == 1 && json_integer_value(x) == 0) {
                cc_errbuf(err, errlen, "model spec '%s': \"%s\" 0: every k-th layer needs k of "
                          "at least 1", path, read[r].keys[i]);
                return CC_EINVAL;
            }
            *read[r].v = json_integer_value(x);
            break;
        }
    /* a list of "dense" and "sparse" per layer (GLM-4.7-Flash, DeepSeek-V3.2): read where it
     * is the first k dense and then every k-th layer sparse */
    json_t *types = json_object_get(root, "mlp_layer_types"), *tv;
    json_t *nl = json_object_get(root, "num_hidden_layers");
    if (types && !json_is_null(types)) {
        size_t n = json_array_size(types), i, lead = 0;
        int fits = json_is_array(types) && json_is_integer(nl) &&
                   (json_int_t)n == json_integer_value(nl) && n > 0;
        json_array_foreach(types, i, tv) {
            const char *t = json_string_value(tv);
            if (!t || (strcmp(t, "dense") && strcmp(t, "sparse")))
                fits = 0;
            else if (lead == i && !strcmp(t, "dense"))
                lead++;
        }
        /* the step can only be the gap between the first two sparse layers, or with one
         * sparse layer 1 or its position + 1: each tried once over the list */
        long long found = 0, sp1 = -1, sp2 = -1;
        json_array_foreach(types, i, tv) {
            const char *t = json_string_value(tv);
            if (!t || strcmp(t, "sparse"))
                continue;
            if (sp1 < 0)
                sp1 = (long long)i;
            else if (sp2 < 0)
                sp2 = (long long)i;
        }
        long long cand[3] = {1, sp2 > sp1 ? sp2 - sp1 : 1, sp1 >= 0 ? sp1 + 1 : 1};
        for (int c = 0; fits && !found && c < 3; c++) {
            long long k = cand[c];
            int same = 1;
            json_array_foreach(types, i, tv) {
                int sparse = (long long)i >= (long long)lead && ((long long)i + 1) % k == 0;
                if (sparse != (strcmp(json_string_value(tv), "sparse") == 0))
                    same = 0;
            }
            if (same)
                found = k;
        }
        if (!found) {
            cc_errbuf(err, errlen, "model spec '%s': \"mlp_layer_types\" places dense and "
                      "expert layers in a way not modelled (a list of \"dense\" and "
                      "\"sparse\", one per layer: the first k dense, then every k-th sparse)",
                      path);
            return CC_EINVAL;
        }
        *first = (long long)lead, *step = found > 1 ? found : 0;
    }
    json_t *freq = json_object_get(root, "moe_layer_freq"); /* DeepSeek: i % freq == 0 */
    json_t *only = json_object_get(root, "mlp_only_layers"); /* Qwen2-MoE: a list */
    json_t *end = json_object_get(root, "moe_layer_end_index"); /* ERNIE 4.5 */
    json_t *layers = json_object_get(root, "num_hidden_layers");
    const char *bad = json_object_get(root, "num_dense_layers") ? "num_dense_layers"
                      : freq && !json_is_null(freq) &&
                              !(json_is_integer(freq) && json_integer_value(freq) == 1)
                          ? "moe_layer_freq"
                      : only && !json_is_null(only) &&
                              !(json_is_array(only) && json_array_size(only) == 0)
                          ? "mlp_only_layers"
                      : end && !json_is_null(end) && json_is_integer(layers) &&
                              !(json_is_integer(end) &&
                                (json_integer_value(end) == -1 ||
                                 (json_is_integer(layers) &&
                                  json_integer_value(end) == json_integer_value(layers) - 1)))
                          ? "moe_layer_end_index"
                          : NULL;
    if (bad) {
        cc_errbuf(err, errlen, "model spec '%s': \"%s\" places dense and expert layers in a way "
                  "not modelled (the first k layers dense, then every k-th layer with experts: "
                  "first_dense_layers and moe_layer_step in a ccbench spec)", path, bad);
        return CC_EINVAL;
    }
    return CC_OK;
}

static cc_status hf_config(json_t *root, struct cc_model *m, const char *path, char *err,
                           size_t errlen)
{
    static const char *const k_layers[] = {"num_hidden_layers", "n_layer", "n_layers",
                                           "num_layers", NULL};
    static const char *const k_hidden[] = {"hidden_size", "n_embd", "n_embed", "d_model", NULL};
    static const char *const k_heads[] = {"num_attention_heads", "n_head", "n_heads",
                                          "num_heads", NULL};
    static const char *const k_kv[] = {"num_key_value_heads", "num_kv_heads", "n_head_kv",
                                       "multi_query_group_num", NULL};
    static const char *const k_ffn[] = {"intermediate_size", "ff_intermediate_size",
                                        "ffn_hidden_size", "n_inner", "ffn_dim", NULL};
    static const char *const k_vocab[] = {"vocab_size", "padded_vocab_size", NULL};
    static const char *const k_opos[] = {"original_max_position_embeddings", NULL};
    static const char *const k_pos[] = {"max_position_embeddings", "n_positions", "max_seq_len",
                                        "max_sequence_length", "seq_length", NULL};
    static const char *const k_moe[] = {"num_local_experts", "num_experts", "n_routed_experts",
                                        "moe_num_experts", NULL};
    static const char *const k_hd[] = {"head_dim", NULL};
    static const char *const k_exp[] = {"expansion_ratio", NULL};
    json_t *tc = json_object_get(root, "text_config");
    if (json_is_object(tc))
        root = tc; /* multimodal: the language model's part */
    const char *type = json_string_value(json_object_get(root, "model_type"));
    const char *act = json_string_value(json_object_get(root, "hidden_act"));
    if (!act)
        act = json_string_value(json_object_get(root, "activation_function"));
    long long layers, hidden, heads, kv, ffn, vocab, opos = 0, pos, moe, hd, exp;
    cc_status st;
    /* "num_experts": 0 (a dense model's config that names the key) is no mixture */
    moe = 0;
    const char *moe_key = "num_experts";
    for (int i = 0; k_moe[i] && !moe; i++) {
        json_t *x = json_object_get(root, k_moe[i]);
        if (json_is_integer(x) && json_integer_value(x) == 0)
            continue;
        const char *one[2] = {k_moe[i], NULL};
        if ((st = hf_int(root, one, &moe, path, err, errlen)) != CC_OK)
            return st;
        moe_key = k_moe[i];
    }
    json_t *ffc = json_object_get(root, "ffn_config"); /* DBRX keeps its experts there */
    if (!moe && json_is_object(ffc) && (st = hf_int(ffc, k_moe, &moe, path, err, errlen)) != CC_OK)
        return st;
    if (moe == 1) {
        cc_errbuf(err, errlen, "model spec '%s': \"%s\" 1: 0 or absent for a dense model, "
                  "else at least 2 experts", path, moe_key);
        return CC_EINVAL;
    }
    /* latent attention (DeepSeek V2/V3, Kimi K2, MiniCPM3): its ranks and head widths */
    static const char *const mla_keys[] = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                           "qk_rope_head_dim", "v_head_dim"};
    long long mla[5] = {0, 0, 0, 0, 0};
    for (int i = 0; i < 5; i++) {
        const char *one[2] = {mla_keys[i], NULL};
        if ((st = hf_int(root, one, &mla[i], path, err, errlen)) != CC_OK)
            return st;
        if (mla[i] > cc_model_key_max(mla_keys[i])) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" %lld is more than %lld", path,
                      mla_keys[i], mla[i], cc_model_key_max(mla_keys[i]));
            return CC_EINVAL;
        }
    }
    static const char *const dsa[] = {"index_topk", "index_n_heads", "index_head_dim", NULL};
    for (int i = 0; dsa[i]; i++)
        if (json_object_get(root, dsa[i]) && !json_is_null(json_object_get(root, dsa[i]))) {
            cc_errbuf(err, errlen, "model spec '%s': sparse attention with an indexer (\"%s\": "
                      "DeepSeek-V3.2, GLM-5) is not modelled", path, dsa[i]);
            return CC_EINVAL;
        }
    /* the head widths as the families' config classes default them where a config.json
     * leaves them out: DeepSeek 128 + 64 and 128, MiniCPM3 64 + 32 and hidden / heads */
    if (mla[1] && type && (strncmp(type, "deepseek_v", 10) == 0 || strcmp(type, "minicpm3") == 0)) {
        int mc = strcmp(type, "minicpm3") == 0;
        json_t *hs = json_object_get(root, "hidden_size"), *nh = json_object_get(root, "num_attention_heads");
        if (!mla[2])
            mla[2] = mc ? 64 : 128;
        if (!mla[3])
            mla[3] = mc ? 32 : 64;
        if (!mla[4] && !mc)
            mla[4] = 128;
        else if (!mla[4] && json_is_integer(hs) && json_is_integer(nh) && json_integer_value(nh) > 0)
            mla[4] = json_integer_value(hs) / json_integer_value(nh);
    }
    if (mla[1] && (!mla[2] || !mla[3] || !mla[4])) {
        cc_errbuf(err, errlen, "model spec '%s': a latent-attention config (\"kv_lora_rank\") "
                  "without \"%s\"", path, !mla[2] ? "qk_nope_head_dim" : !mla[3] ?
                  "qk_rope_head_dim" : "v_head_dim");
        return CC_EINVAL;
    }
    for (int i = 2; i < 5 && !mla[1]; i++)
        if (mla[i]) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" without \"kv_lora_rank\" (the head "
                      "widths of latent attention, which kv_lora_rank turns on)", path, mla_keys[i]);
            return CC_EINVAL;
        }
    if (!mla[1] && mla[0]) {
        cc_errbuf(err, errlen, "model spec '%s': \"q_lora_rank\" without \"kv_lora_rank\" "
                  "(latent attention needs both compressed keys/values)", path);
        return CC_EINVAL;
    }
    long long topk = 0, moe_ffn = 0, shared = 0, nshared = 0, first_dense = 0, moe_step = 0;
    long long groups = 0, group_topk = 0;
    if (moe > 1) {
        static const char *const k_topk[] = {"num_experts_per_tok", "experts_per_token",
                                             "moe_top_k", "moe_k", NULL};
        static const char *const k_moe_ffn[] = {"moe_intermediate_size", NULL};
        /* a shared expert by its size (Qwen2-MoE, Granite-MoE-shared), or by a count of
         * experts of the routed ones' size (DeepSeek-MoE) */
        static const char *const k_shared[] = {"shared_expert_intermediate_size",
                                               "shared_intermediate_size", NULL};
        static const char *const k_nshared[] = {"n_shared_experts", "num_shared_experts",
                                                "num_shared_expert", "moe_num_shared_experts",
                                                NULL};
        if ((st = hf_mixed_layers(root, type, &first_dense, &moe_step, path, err, errlen)))
            return st;
        /* with dense layers beside them, intermediate_size is the dense layers' MLP and the
         * experts' size must be given (Mixtral's experts take intermediate_size, every layer
         * having them) */
        json_t *mis = json_object_get(root, "moe_intermediate_size");
        if ((first_dense > 0 || moe_step > 1) && (!mis || json_is_null(mis))) {
            cc_errbuf(err, errlen, "model spec '%s': dense and expert layers mixed without "
                      "\"moe_intermediate_size\" (intermediate_size is then the dense layers')",
                      path);
            return CC_EINVAL;
        }
        if (json_is_object(ffc)) {
            cc_errbuf(err, errlen, "model spec '%s': experts described in \"ffn_config\" "
                      "(DBRX) are not read; write a ccbench spec (docs/layout.md)", path);
            return CC_EINVAL;
        }
        /* group-limited routing (DeepSeek-V3: n_group 8, topk_group 4; 1 and 1 elsewhere) */
        static const char *const k_groups[] = {"n_group", NULL};
        static const char *const k_group_topk[] = {"topk_group", NULL};
        if ((st = hf_int(root, k_topk, &topk, path, err, errlen)) ||
            (st = hf_int(root, k_moe_ffn, &moe_ffn, path, err, errlen)) ||
            (st = hf_int(root, k_shared, &shared, path, err, errlen)) ||
            (st = hf_int(root, k_groups, &groups, path, err, errlen)) ||
            (st = hf_int(root, k_group_topk, &group_topk, path, err, errlen)))
            return st;
        for (int i = 0; !shared && k_nshared[i]; i++) {
            json_t *x = json_object_get(root, k_nshared[i]);
            if (!x || json_is_null(x) || (json_is_integer(x) && json_integer_value(x) == 0))
                continue; /* none */
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) > 1000) {
                cc_errbuf(err, errlen, "model spec '%s': \"%s\" must be a whole number from 0 "
                          "to 1000", path, k_nshared[i]);
                return CC_EINVAL;
            }
            nshared = json_integer_value(x);
        }
        if (!topk) {
            cc_errbuf(err, errlen, "model spec '%s': a mixture-of-experts config (%lld experts) "
                      "without num_experts_per_tok", path, moe);
            return CC_EINVAL;
        }
        const struct { const char *key, *what; long long v; } msz[] = {
            {"experts", "experts", moe}, {"topk", "experts per token", topk},
            {"moe_ffn", "expert MLP size", moe_ffn}, {"shared_ffn", "shared expert size", shared},
            {"router_groups", "n_group", groups}, {"router_group_topk", "topk_group", group_topk}};
        if (groups > 1 && (group_topk < 1 || group_topk > groups)) {
            cc_errbuf(err, errlen, "model spec '%s': \"n_group\" %lld needs a \"topk_group\" "
                      "from 1 to %lld (the groups each token's experts come from)", path, groups,
                      groups);
            return CC_EINVAL;
        }
        for (size_t i = 0; i < sizeof msz / sizeof msz[0]; i++)
            if (msz[i].v > cc_model_key_max(msz[i].key)) {
                cc_errbuf(err, errlen, "model spec '%s': %s %lld is more than %lld", path,
                          msz[i].what, msz[i].v, cc_model_key_max(msz[i].key));
                return CC_EINVAL;
            }
    }
    /* state-space (Mamba) or linear-attention layers (Qwen3-Next's gated DeltaNet), alone
     * or beside attention: not a transformer's cost */
    static const char *const hybrid[] = {"hybrid_override_pattern", "layers_block_type",
                                         "ssm_state_size", "mamba_d_state", "mamba_n_heads",
                                         "state_size", "attn_layer_indices",
                                         "full_attention_interval", "linear_num_key_heads",
                                         NULL};
    for (int i = 0; hybrid[i]; i++)
        if (json_object_get(root, hybrid[i])) {
            cc_errbuf(err, errlen, "model spec '%s': a state-space (Mamba), linear-attention "
                      "or hybrid config (\"%s\"); only transformer layers are modelled", path,
                      hybrid[i]);
            return CC_EINVAL;
        }
    /* layers of more than one kind (sliding-window or linear attention beside full
     * attention: GPT-OSS, Qwen3-Next): the estimate has one kind of layer */
    json_t *lt = json_object_get(root, "layer_types"), *ltv;
    size_t lti;
    json_array_foreach(lt, lti, ltv) {
        if (!json_is_string(ltv) || strcmp(json_string_value(ltv), "full_attention") != 0) {
            char shown[48];
            cc_text_copy(shown, sizeof shown,
                         json_is_string(ltv) ? json_string_value(ltv) : "(not a string)");
            cc_errbuf(err, errlen, "model spec '%s': \"layer_types\" has \"%s\" layers; only "
                      "full-attention transformer layers are modelled", path, shown);
            return CC_EINVAL;
        }
    }
    if (json_is_true(json_object_get(root, "is_encoder_decoder"))) {
        cc_errbuf(err, errlen, "model spec '%s': an encoder-decoder config (T5, BART: "
                  "\"is_encoder_decoder\"); only decoder-only transformers are modelled", path);
        return CC_EINVAL;
    }
    if ((st = hf_int(root, k_layers, &layers, path, err, errlen)) ||
        (st = hf_int(root, k_hidden, &hidden, path, err, errlen)) ||
        (st = hf_int(root, k_heads, &heads, path, err, errlen)) ||
        (st = hf_int(root, k_kv, &kv, path, err, errlen)) ||
        (st = hf_int(root, k_ffn, &ffn, path, err, errlen)) ||
        (st = hf_int(root, k_vocab, &vocab, path, err, errlen)) ||
        (st = hf_int(root, k_pos, &pos, path, err, errlen)) ||
        (st = hf_int(root, k_hd, &hd, path, err, errlen)) ||
        (st = hf_int(root, k_exp, &exp, path, err, errlen)))
        return st;
    json_t *rs = json_object_get(root, "rope_scaling");
    json_t *rp = json_object_get(root, "rope_parameters"); /* transformers v5 keeps both there */
    if ((st = hf_int(root, k_opos, &opos, path, err, errlen)) ||
        (!opos && json_is_object(rs) && (st = hf_int(rs, k_opos, &opos, path, err, errlen))) ||
        (!opos && json_is_object(rp) && (st = hf_int(rp, k_opos, &opos, path, err, errlen))))
        return st;
    const struct { const char *what; long long v; } need[] = {
        {"num_hidden_layers (or n_layer, n_layers, num_layers)", layers},
        {"hidden_size (or n_embd, n_embed, d_model)", hidden},
        {"num_attention_heads (or n_head, n_heads, num_heads)", heads},
        {"vocab_size", vocab}};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!need[i].v) {
            cc_errbuf(err, errlen, "model spec '%s': a Hugging Face config without %s", path,
                      need[i].what);
            return CC_EINVAL;
        }
    if (json_is_true(json_object_get(root, "multi_query")) && !kv)
        kv = 1;
    if (type && list_index(type, hf_window) >= 0) {
        cc_errbuf(err, errlen, "model spec '%s': model_type \"%s\": its %s are not "
                  "modelled", path, type, strncmp(type, "llama4", 6) == 0
                      ? "chunked-attention layers, layers without positions and shared expert"
                      : "sliding-window layers and logit soft-capping");
        return CC_EINVAL;
    }
    if (hd > cc_model_key_max("head_dim")) {
        cc_errbuf(err, errlen, "model spec '%s': head_dim %lld is more than %lld", path, hd,
                  cc_model_key_max("head_dim"));
        return CC_EINVAL;
    }
    int gated = list_index(type, hf_gated) >= 0 || list_index(act, hf_gated_act) >= 0;
    if (list_index(type, hf_plain) >= 0)
        gated = 0;
    if (type && strcmp(type, "qwen") == 0 && ffn) {
        if (ffn < 2) {
            cc_errbuf(err, errlen, "model spec '%s': a Qwen config's intermediate_size (gate "
                      "and up together) of %lld", path, ffn);
            return CC_EINVAL;
        }
        ffn /= 2; /* Qwen-1 gives gate and up together */
    }
    if (!ffn && gated) {
        cc_errbuf(err, errlen, "model spec '%s': a gated MLP without intermediate_size", path);
        return CC_EINVAL;
    }
    const struct { const char *key, *what; long long v; } sz[] = {
        {"layers", "layers", layers}, {"hidden", "hidden size", hidden},
        {"heads", "attention heads", heads}, {"kv_heads", "KV heads", kv},
        {"ffn", "MLP size", ffn ? ffn : exp ? exp * hidden : 4 * hidden},
        {"shared_ffn", "shared expert size (n_shared_experts x the expert size)",
         nshared * (moe_ffn ? moe_ffn : ffn ? ffn : exp ? exp * hidden : 4 * hidden)},
        {"vocab", "vocabulary", vocab}};
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
        if (sz[i].v > cc_model_key_max(sz[i].key)) {
            cc_errbuf(err, errlen, "model spec '%s': %s %lld is more than %lld", path, sz[i].what,
                      sz[i].v, cc_model_key_max(sz[i].key));
            return CC_EINVAL;
        }
    if (!ffn && exp)
        ffn = exp * hidden; /* MPT */
    m->layers = (int)layers, m->hidden = (int)hidden, m->heads = (int)heads;
    m->kv_heads = (int)(kv ? kv : heads), m->ffn = (int)(ffn ? ffn : 4 * hidden);
    m->vocab = (int)vocab;
    if (hd && hd * heads != hidden && !mla[1])
        m->head_dim = (int)hd; /* queries of another width than the model (Qwen3) */
    if (mla[1]) { /* latent attention: every head its own keys and values */
        m->q_lora = (int)mla[0], m->kv_lora = (int)mla[1], m->qk_nope = (int)mla[2];
        m->qk_rope = (int)mla[3], m->v_dim = (int)mla[4];
        m->kv_heads = m->heads;
    }
    m->qk_norm = list_index(type, hf_qk_norm) >= 0 ||
                 json_is_true(json_object_get(root, "use_qk_norm")); /* GLM-4.5 */
    if (moe > 1) {
        m->moe_ffn = moe_ffn ? (int)moe_ffn : m->ffn; /* Mixtral: intermediate_size */
        m->experts = (int)moe, m->topk = (int)topk;
        m->shared_ffn = (int)(shared ? shared : nshared * m->moe_ffn);
        m->first_dense = (int)first_dense, m->moe_step = (int)moe_step;
        m->route_groups = (int)groups, m->route_group_topk = (int)group_topk;
    }
    long long win = opos ? opos : pos;
    m->seq_len = !win ? 2048 : win <= 8192 ? (int)win : 8192;
    m->global_batch = (4LL << 20) / m->seq_len;
    m->batch_tokens = 4LL << 20;
    m->mlp = gated ? CC_MLP_SWIGLU : CC_MLP_GELU;
    m->tied_embed = list_index(type, hf_untied) < 0; /* the family's default, unless given */
    m->qkv_bias = type && (strcmp(type, "qwen2") == 0 || /* Qwen2, 2.5 always bias Q, K, V */
                           strcmp(type, "qwen2_moe") == 0 ||
                           (strcmp(type, "glm4_moe") == 0 && /* GLM-4.5: Q, K, V, not O */
                            json_is_true(json_object_get(root, "attention_bias"))));
    static const char *const hf_dropout[] = {"attention_dropout", "hidden_dropout",
                                             "resid_pdrop", "attn_pdrop", "hidden_dropout_prob",
                                             "attention_probs_dropout_prob", "dropout",
                                             "embd_pdrop", NULL};
    if ((st = get_bool(root, "tie_word_embeddings", &m->tied_embed, path, err, errlen)) != CC_OK ||
        (st = get_rope(root, "rope_theta", &m->rope_base, path, err, errlen)) != CC_OK ||
        (json_is_object(rp) && m->rope_base == 0 &&
         (st = get_rope(rp, "rope_theta", &m->rope_base, path, err, errlen)) != CC_OK) ||
        (st = get_dropout(root, hf_dropout, &m->dropout, path, err, errlen)) != CC_OK)
        return st;
    const char *nm = json_string_value(json_object_get(root, "_name_or_path"));
    if (nm && strrchr(nm, '/') && strrchr(nm, '/')[1])
        nm = strrchr(nm, '/') + 1; /* a local path's last part */
    snprintf(m->name, sizeof m->name, "%s", nm && nm[0] ? nm : type ? type : "hf-config");
    /* multi-token prediction (DeepSeek-V3, GLM-4.5): layers the config's training added
     * (Megatron-LM --mtp-num-layers), costed unless --mtp 0 */
    json_t *mtp = json_object_get(root, "num_nextn_predict_layers");
    char mtp_note[96] = "";
    if (mtp && !json_is_null(mtp) &&
        (!json_is_integer(mtp) || json_integer_value(mtp) < 0 ||
         json_integer_value(mtp) > cc_model_key_max("mtp_layers"))) {
        cc_errbuf(err, errlen, "model spec '%s': \"num_nextn_predict_layers\" must be a whole "
                  "number from 0 to %lld", path, cc_model_key_max("mtp_layers"));
        return CC_EINVAL;
    }
    if (json_is_integer(mtp) && json_integer_value(mtp) > 0) {
        m->mtp = (int)json_integer_value(mtp);
        snprintf(mtp_note, sizeof mtp_note, "; %d multi-token-prediction layer%s trained (--mtp 0: "
                 "none)", m->mtp, m->mtp > 1 ? "s" : "");
    }
    snprintf(m->source, sizeof m->source,
             "Hugging Face config, %s MLP%s; unless given: bf16, sequence %d (%s), a batch of "
             "4M tokens%s; %s", gated ? "gated" : "plain", m->tied_embed ? ", tied embeddings" : "",
             m->seq_len, !win ? "no window in the config" : win > 8192 ? "of a longer window"
                                                                     : "its window", mtp_note, path);
    return CC_OK;
}

/* A spec that starts from a preset and changes its shape is another model: its name says so
 * ("llama3-8b (changed)") and its source names the file and the keys changed before the
 * preset's source. Precision, optimizer, batch and the like are training settings, not the
 * model, and leave the name alone. */
static void preset_changes(json_t *root, json_t *pre, const char *path, struct cc_model *m)
{
    static const char *const shape[] = {"layers", "hidden", "heads", "kv_heads", "ffn", "vocab",
                                        "mlp", "tied_embeddings", "experts", "topk",
                                        "moe_ffn", "shared_ffn", "head_dim", "qk_norm",
                                        "first_dense_layers", "moe_layer_step", "q_lora_rank",
                                        "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                                        "v_head_dim", "mtp_layers", "router_groups",
                                        "router_group_topk", NULL};
    struct cc_model p;
    char keys[128] = "";
    size_t n = 0;
    if (cc_model_preset(json_string_value(pre), &p) != CC_OK)
        return;
    const int now[] = {m->layers, m->hidden, m->heads, m->kv_heads, m->ffn, m->vocab, m->mlp,
                       m->tied_embed, m->experts, m->topk, m->moe_ffn, m->shared_ffn,
                       m->head_dim, m->qk_norm, m->first_dense, m->moe_step, m->q_lora,
                       m->kv_lora, m->qk_nope, m->qk_rope, m->v_dim, m->mtp, m->route_groups,
                       m->route_group_topk};
    const int was[] = {p.layers, p.hidden, p.heads, p.kv_heads, p.ffn, p.vocab, p.mlp,
                       p.tied_embed, p.experts, p.topk, p.moe_ffn, p.shared_ffn, p.head_dim,
                       p.qk_norm, p.first_dense, p.moe_step, p.q_lora, p.kv_lora, p.qk_nope,
                       p.qk_rope, p.v_dim, p.mtp, p.route_groups, p.route_group_topk};
    for (int i = 0; shape[i]; i++)
        if (now[i] != was[i] && n < sizeof keys) {
            int w = snprintf(keys + n, sizeof keys - n, "%s%s", n ? ", " : "", shape[i]);
            n += w > 0 ? (size_t)w : 0;
        }
    if (!n)
        return;
    snprintf(m->name, sizeof m->name, "%.50s (changed)", p.name);
    if (!json_object_get(root, "source")) { /* cut to the buffer; cc_text_line mends the end */
        char src[1024];
        snprintf(src, sizeof src, "%.500s: preset %s with %s changed; the preset: %s", path,
                 p.name, keys, p.source);
        size_t k = strlen(src) < sizeof m->source ? strlen(src) : sizeof m->source - 1;
        memcpy(m->source, src, k);
        m->source[k] = 0;
    }
}

/* The keys of a ccbench spec (docs/layout.md); any other is a mistake worth naming. */
static const char *const spec_keys[] = {"preset", "name", "source", "layers", "hidden", "heads",
                                        "kv_heads", "ffn", "vocab", "seq_len", "global_batch",
                                        "precision", "optimizer", "recompute", "mlp",
                                        "flash_attention", "tied_embeddings", "rope_theta",
                                        "dropout", "experts", "topk", "moe_ffn", "shared_ffn",
                                        "head_dim", "qk_norm", "first_dense_layers",
                                        "moe_layer_step", "q_lora_rank", "kv_lora_rank",
                                        "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
                                        "mtp_layers", "recompute_modules", "router_groups",
                                        "router_group_topk", NULL};

cc_status cc_model_load(const char *path, struct cc_model *m, char *err, size_t errlen)
{
    json_t *root;
    cc_status st = cc_json_read_file(path, "model spec", &root, err, errlen);
    long long v[8];
    int c[4];

    if (st != CC_OK)
        return st;
    memset(m, 0, sizeof *m);
    if (!json_is_object(root)) {
        cc_errbuf(err, errlen, "model spec '%s': top level must be an object", path);
        st = CC_EPARSE;
        goto done;
    }
    m->kv_heads = 0;
    m->prec = CC_PREC_BF16;
    m->optim = CC_OPTIM_ADAM;
    m->recompute = CC_RC_SELECTIVE;
    m->flash_attn = 1;
    json_t *pre = json_object_get(root, "preset");
    if (pre) {
        if (!json_is_string(pre) || cc_model_preset(json_string_value(pre), m) != CC_OK) {
            char shown[64];
            cc_text_copy(shown, sizeof shown,
                         json_is_string(pre) ? json_string_value(pre) : "(not a string)");
            cc_errbuf(err, errlen, "model spec '%s': unknown preset '%s'", path, shown);
            st = CC_EINVAL;
            goto done;
        }
    }
    /* a Hugging Face config.json is read as it is, under its own names (ccbench's keys
     * could collide with its own; the command line overrides it) */
    if (!pre && (json_object_get(root, "model_type") || json_object_get(root, "architectures") ||
                 (!json_object_get(root, "layers") && hf_like(root)))) {
        st = hf_config(root, m, path, err, errlen);
        goto done;
    }
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
        if (list_index(key, spec_keys) < 0) {
            cc_errbuf(err, errlen, "model spec '%s': unknown key \"%s\" (docs/layout.md lists "
                      "the keys)", path, key);
            st = CC_EINVAL;
            goto done;
        }
        if (json_is_null(val)) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" is null (leave a key out for its "
                      "default)", path, key);
            st = CC_EINVAL;
            goto done;
        }
    }
    json_t *nm = json_object_get(root, "name");
    const char *tk = nm && !json_is_string(nm) ? "name"
                     : json_object_get(root, "source") &&
                               !json_is_string(json_object_get(root, "source"))
                         ? "source"
                         : NULL;
    if (tk) {
        cc_errbuf(err, errlen, "model spec '%s': \"%s\" must be a string", path, tk);
        st = CC_EINVAL;
        goto done;
    }
    if (json_is_string(nm) && !json_string_value(nm)[0]) {
        cc_errbuf(err, errlen, "model spec '%s': \"name\" is empty", path);
        st = CC_EINVAL;
        goto done;
    }
    if (json_is_string(nm)) /* else the preset's or the config's name, else the path */
        snprintf(m->name, sizeof m->name, "%s", json_string_value(nm));
    else if (!m->name[0])
        snprintf(m->name, sizeof m->name, "%s", path);
    json_t *src = json_object_get(root, "source");
    if (json_is_string(src))
        snprintf(m->source, sizeof m->source, "%s", json_string_value(src));
    else if (!pre)
        snprintf(m->source, sizeof m->source, "%s", path);

    static const char *const ikeys[] = {"layers", "hidden", "heads", "kv_heads", "ffn",
                                        "vocab", "seq_len", "global_batch"};
    int *iptr[] = {&m->layers, &m->hidden, &m->heads, &m->kv_heads, &m->ffn, &m->vocab,
                   &m->seq_len};
    for (int i = 0; i < 8; i++) {
        v[i] = i < 7 ? *iptr[i] : m->global_batch;
        if ((st = get_int(root, ikeys[i], &v[i], path, err, errlen)) != CC_OK)
            goto done;
        if (json_object_get(root, ikeys[i]) &&
            (v[i] < 1 || v[i] > cc_model_key_max(ikeys[i]))) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" '%lld' is out of range (1 to "
                      "%lld)", path, ikeys[i], v[i], cc_model_key_max(ikeys[i]));
            st = CC_EINVAL;
            goto done;
        }
    }
    for (int i = 0; i < 8; i++) {
        int optional = i == 3 || i == 4; /* kv_heads, ffn */
        if (!pre && !optional && !json_object_get(root, ikeys[i])) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" is required (or a \"preset\" to "
                      "start from)", path, ikeys[i]);
            st = CC_EINVAL;
            goto done;
        }
    }
    for (int i = 0; i < 6; i++)
        *iptr[i] = (int)v[i];
    if (json_object_get(root, "global_batch")) { /* stated: kept at any sequence length */
        m->global_batch = v[7];
        m->batch_tokens = 0;
    }
    m->seq_len = (int)v[6];
    if (json_object_get(root, "seq_len")) /* a preset's batch in tokens follows it */
        cc_model_set_seq_len(m, m->seq_len);
    if (!m->kv_heads)
        m->kv_heads = m->heads;
    c[0] = m->prec, c[1] = m->optim, c[2] = m->recompute, c[3] = m->mlp;
    if ((st = get_choice(root, "precision", cc_prec_names, &c[0], path, err, errlen)) ||
        (st = get_choice(root, "optimizer", cc_optim_names, &c[1], path, err, errlen)) ||
        (st = get_choice(root, "recompute", cc_recompute_names, &c[2], path, err, errlen)) ||
        (st = get_choice(root, "mlp", cc_mlp_names, &c[3], path, err, errlen)))
        goto done;
    if (c[2] == CC_RC_AUTO) {
        cc_errbuf(err, errlen, "model spec '%s': \"recompute\" is none, selective, full or block (the "
                  "search over them is --recompute auto)", path);
        st = CC_EINVAL;
        goto done;
    }
    m->prec = c[0], m->optim = c[1], m->recompute = c[2], m->mlp = c[3];
    if ((st = get_rc_modules(root, &m->rc_modules, path, err, errlen)))
        goto done;
    if (!m->ffn && m->hidden)
        m->ffn = 4 * m->hidden; /* hidden is at most 1e6 here */
    if ((st = get_bool(root, "flash_attention", &m->flash_attn, path, err, errlen)) ||
        (st = get_bool(root, "tied_embeddings", &m->tied_embed, path, err, errlen)) ||
        (st = get_rope(root, "rope_theta", &m->rope_base, path, err, errlen)))
        goto done;
    static const char *const spec_dropout[] = {"dropout", NULL};
    if ((st = get_dropout(root, spec_dropout, &m->dropout, path, err, errlen)))
        goto done;
    /* experts: all optional; moe_ffn defaults to ffn, topk is needed with experts */
    static const char *const moe_keys[] = {"experts", "topk", "moe_ffn", "shared_ffn",
                                           "first_dense_layers", "moe_layer_step",
                                           "router_groups", "router_group_topk"};
    int *moe_ptr[] = {&m->experts, &m->topk, &m->moe_ffn, &m->shared_ffn, &m->first_dense,
                      &m->moe_step, &m->route_groups, &m->route_group_topk};
    for (int i = 0; i < 8; i++) {
        long long mv = *moe_ptr[i];
        if ((st = get_int(root, moe_keys[i], &mv, path, err, errlen)) != CC_OK)
            goto done;
        int lo = i == 1 || i == 2 ? 1 : 0; /* experts 0: dense; shared_ffn 0: none; no
                                              dense layers; 0 or 1: every layer */
        if (json_object_get(root, moe_keys[i]) &&
            (mv < lo || mv > cc_model_key_max(moe_keys[i]))) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" '%lld' is out of range (%d to "
                      "%lld)", path, moe_keys[i], mv, lo, cc_model_key_max(moe_keys[i]));
            st = CC_EINVAL;
            goto done;
        }
        *moe_ptr[i] = (int)mv;
    }
    if (m->experts >= 2 && !m->topk) {
        cc_errbuf(err, errlen, "model spec '%s': \"experts\" needs \"topk\" (the experts each "
                  "token goes to)", path);
        st = CC_EINVAL;
        goto done;
    }
    if (m->experts >= 2 && !m->moe_ffn)
        m->moe_ffn = m->ffn;
    for (int i = 1; i < 8 && m->experts == 0; i++)
        if (json_integer_value(json_object_get(root, moe_keys[i])) > (i == 5 ? 1 : 0)) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" without experts (\"experts\" "
                      "0 or absent: a dense model)", path, moe_keys[i]);
            st = CC_EINVAL;
            goto done;
        }
    if (m->experts == 0) /* a dense model, whatever a preset's experts were */
        m->topk = m->moe_ffn = m->shared_ffn = m->first_dense = m->moe_step = 0,
        m->route_groups = m->route_group_topk = 0;
    if (m->moe_step == 1) /* every layer: the same as 0 */
        m->moe_step = 0;
    long long hdv = m->head_dim;
    if ((st = get_int(root, "head_dim", &hdv, path, err, errlen)) != CC_OK)
        goto done;
    if (json_object_get(root, "head_dim") &&
        (hdv < 1 || hdv > cc_model_key_max("head_dim"))) {
        cc_errbuf(err, errlen, "model spec '%s': \"head_dim\" '%lld' is out of range (1 to "
                  "%lld)", path, hdv, cc_model_key_max("head_dim"));
        st = CC_EINVAL;
        goto done;
    }
    m->head_dim = (int)hdv;
    if ((st = get_bool(root, "qk_norm", &m->qk_norm, path, err, errlen)))
        goto done;
    /* latent attention: kv_lora_rank turns it on; the head widths default to DeepSeek's */
    static const char *const mla_keys[] = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                           "qk_rope_head_dim", "v_head_dim"};
    int *mla_ptr[] = {&m->q_lora, &m->kv_lora, &m->qk_nope, &m->qk_rope, &m->v_dim};
    for (int i = 0; i < 5; i++) {
        long long mv = *mla_ptr[i];
        if ((st = get_int(root, mla_keys[i], &mv, path, err, errlen)) != CC_OK)
            goto done;
        if (json_object_get(root, mla_keys[i]) && (mv < 0 || mv > cc_model_key_max(mla_keys[i]))) {
            cc_errbuf(err, errlen, "model spec '%s': \"%s\" '%lld' is out of range (0 to "
                      "%lld)", path, mla_keys[i], mv, cc_model_key_max(mla_keys[i]));
            st = CC_EINVAL;
            goto done;
        }
        *mla_ptr[i] = (int)mv;
    }
    long long mtpv = m->mtp;
    if ((st = get_int(root, "mtp_layers", &mtpv, path, err, errlen)) != CC_OK)
        goto done;
    if (json_object_get(root, "mtp_layers") && (mtpv < 0 || mtpv > cc_model_key_max("mtp_layers"))) {
        cc_errbuf(err, errlen, "model spec '%s': \"mtp_layers\" '%lld' is out of range (0 to %lld)",
                  path, mtpv, cc_model_key_max("mtp_layers"));
        st = CC_EINVAL;
        goto done;
    }
    m->mtp = (int)mtpv;
    if (m->kv_lora > 0) {
        if (!json_object_get(root, "qk_nope_head_dim") && !m->qk_nope)
            m->qk_nope = 128;
        if (!json_object_get(root, "qk_rope_head_dim") && !m->qk_rope)
            m->qk_rope = 64;
        if (!json_object_get(root, "v_head_dim") && !m->v_dim)
            m->v_dim = 128;
        if (!json_object_get(root, "kv_heads"))
            m->kv_heads = m->heads;
    }
    if (pre && !json_object_get(root, "name"))
        preset_changes(root, pre, path, m);
done:
    cc_text_line(m->name); /* before the checks, whose messages may name it */
    cc_text_line(m->source);
    if (st == CC_OK)
        st = cc_model_check(m, err, errlen);
    if (st == CC_OK && m->route_groups > 0 && m->route_group_topk >= m->route_groups)
        m->route_groups = m->route_group_topk = 0; /* every group chosen (or one): no limit */
    json_decref(root);
    return st;
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
    /* a bin of q = G / bins groups: j of them chosen (hypergeometric), then its j groups'
     * experts among the candidates */
    int q = G / bins;
    double touched = 0.0;
    for (int j = 1; j <= q && j <= M; j++) {
        double pj = 1.0; /* C(q, j) C(G - q, M - j) / C(G, M) */
        for (int i = 0; i < j; i++)
            pj *= (double)(q - i) / (j - i);
        for (int i = 0; i < M - j; i++)
            pj *= (double)(G - q - i) / (M - j - i);
        for (int i = 0; i < M; i++)
            pj /= (double)(G - i) / (M - i);
        touched += pj * (1.0 - miss_all(cand, j * (E / G), k));
    }
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
