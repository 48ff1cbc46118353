/* modelfile.c - a model from a file: a ccbench JSON spec (keys in docs/layout.md, optionally
 * over a preset) or a Hugging Face config.json, read into struct cc_model and checked
 * (cc_model_load). */
#include "layout/model.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/jsonfile.h"
#include "core/text.h"
#include "core/log.h"

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
        if (groups <= 1 && group_topk > 1) {
            cc_errbuf(err, errlen, "model spec '%s': \"topk_group\" %lld without \"n_group\" "
                      "(the groups it chooses among)", path, group_topk);
            return CC_EINVAL;
        }
        if (groups > 1 && (moe % groups || group_topk * (moe / groups) < topk)) {
            cc_errbuf(err, errlen, "model spec '%s': \"n_group\" %lld must divide the %lld "
                      "experts, and \"topk_group\" %lld of the groups hold at least the %lld "
                      "experts per token", path, groups, moe, group_topk, topk);
            return CC_EINVAL;
        }
        if (groups <= 1)
            groups = group_topk = 0; /* one group: no limit */
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
