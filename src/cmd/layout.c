/* `ccbench layout`: rank data/tensor/pipeline-parallel layouts by estimated step time. Pure
 * computation (no MPI): parse options, build the model, cluster and habits, call the engine
 * in src/layout/, print. */
#include "config.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cmd/cmd.h"
#include "core/log.h"
#include "core/opt.h"
#include "core/text.h"
#include "layout/layout.h"
#include "layout/megatron.h"
#include "layout/report.h"

struct layout_cfg {
    const char *model, *topology, *results, *explain;
    int gpus, gpn, gph;
    const char *gpu_model;
    double gpu_mem_gb, peak_tflops, hbm_GBps, host_GBps, host_mem_gb, intra_GBps, inter_GBps;
    int seq_len, mtp;
    long long global_batch;
    const char *precision, *optimizer, *recompute, *rc_modules, *pp_layout;
    double efficiency, efficiency_fp8, efficiency_attn, mem_margin, moe_imbalance, moe_capacity;
    size_t bucket;
    int grad_reduce, grad_copy, grad_accum, accum_fusion, gemm_waves, uneven_pp, pp_overlap, pp_scatter, vocab_pad, tp_overlap, ep_overlap, dispatcher, moe_pad, fp8_cache, offload, zero, sp, dp_overlap, tp_max, cp_max, vpp_max, mb_max;
    int top, json, validate, list_models, list_gpus;
};

/* Names for a "did you mean": the model presets, the GPU table's ids. */
static const char *preset_name_at(int i, const void *ctx)
{
    (void)ctx;
    const struct cc_model *p = cc_model_preset_at(i);
    return p ? p->name : NULL;
}

static const char *gpu_id_at(int i, const void *ctx)
{
    (void)ctx;
    for (int k = 0; cc_gpu_table[k].id; k++)
        if (k == i)
            return cc_gpu_table[k].id;
    return NULL;
}

static const char *const grad_names[] = {"auto", "bf16", "fp16", "fp32", NULL};
static const char *const copy_names[] = {"auto", "0", "4", NULL};
static const char *const zero_names[] = {"auto", "0", "1", "2", "3", NULL};
static const char *const sp_names[] = {"auto", "off", "on", NULL};

#define F(x) offsetof(struct layout_cfg, x)
static const struct cc_opt layout_opts[] = {
    {"model", 'm', CC_OPT_STR, F(model), NULL, "NAME|FILE", "model preset (see --list-models), JSON spec file or Hugging Face config.json"},
    {"topology", 't', CC_OPT_STR, F(topology), NULL, "FILE", "cluster topology JSON (docs/topology.md)"},
    {"gpus", 'g', CC_OPT_INT, F(gpus), "0", "N", "quick cluster: number of GPUs (instead of --topology)", NULL, CC_OPT_RANGE, 0, 16777216},
    {"gpus-per-node", 0, CC_OPT_INT, F(gpn), "8", "N", "quick cluster: GPUs per node, the NVLink domain (an NVL72 rack: 72)", NULL, CC_OPT_RANGE, 1, 1024},
    {"gpus-per-host", 0, CC_OPT_INT, F(gph), "0", "N", "quick cluster: GPUs per host when a node's NVLink domain spans hosts (NVL72: 4); the torchrun line's (0: --gpus-per-node)", NULL, CC_OPT_RANGE, 0, 1024},
    {"gpu-model", 0, CC_OPT_STR, F(gpu_model), "h100-sxm", "ID", "quick cluster: GPU (see --list-gpus; another name needs --peak-tflops and --gpu-mem-gb)"},
    {"gpu-mem-gb", 0, CC_OPT_DOUBLE, F(gpu_mem_gb), "0", "GB", "override GPU memory (GB, 1e9 bytes; 0: table/topology)", NULL, CC_OPT_RANGE, 0, 1e6},
    {"peak-tflops", 0, CC_OPT_DOUBLE, F(peak_tflops), "0", "TF", "override dense peak TFLOP/s of the chosen precision", NULL, CC_OPT_RANGE, 0, 1e6},
    {"hbm-GBps", 0, CC_OPT_DOUBLE, F(hbm_GBps), "0", "GB/s", "override GPU memory bandwidth (element-wise work; 0: the table's, else 2000)", NULL, CC_OPT_RANGE, 0, 1e6},
    {"host-GBps", 0, CC_OPT_DOUBLE, F(host_GBps), "0", "GB/s", "override the GPU's link to host memory, one direction (activation offloading; 0: the table's)", NULL, CC_OPT_RANGE, 0, 1e6},
    {"host-mem-gb", 0, CC_OPT_DOUBLE, F(host_mem_gb), "0", "GB", "override host memory per GPU for offloaded activations (GB, 1e9 bytes; 0: the topology's nodes[].memory_bytes / GPUs, else the table's)", NULL, CC_OPT_RANGE, 0, 1e6},
    {"intra-GBps", 0, CC_OPT_DOUBLE, F(intra_GBps), "0", "GB/s", "override all-reduce busbw within a node", NULL, CC_OPT_RANGE, 0, 1e6},
    {"inter-GBps", 0, CC_OPT_DOUBLE, F(inter_GBps), "0", "GB/s", "override all-reduce busbw across nodes (per node)", NULL, CC_OPT_RANGE, 0, 1e6},
    {"results", 'r', CC_OPT_STR, F(results), NULL, "FILE[,FILE]", "fit the communication model to ccbench bench JSON Lines, nccl-tests logs or OSU logs (FILE@NODESxPER_NODE)"},
    {"seq-len", 0, CC_OPT_INT, F(seq_len), "0", "N", "override the model's sequence length (a preset's batch in tokens keeps its tokens)", NULL, CC_OPT_RANGE, 0, 1e8},
    {"global-batch", 0, CC_OPT_LONG, F(global_batch), "0", "N", "override the global batch (sequences, kept at any --seq-len)", NULL, CC_OPT_RANGE, 0, 1e12},
    {"mtp", 0, CC_OPT_INT, F(mtp), "-1", "N", "multi-token-prediction layers trained (Megatron-LM --mtp-num-layers; -1: the model's, as its spec or config says; 0: none)", NULL, CC_OPT_RANGE, -1, 100},
    {"precision", 0, CC_OPT_STR, F(precision), NULL, "bf16|fp16|fp8", "override the model's precision"},
    {"optimizer", 0, CC_OPT_STR, F(optimizer), NULL, "adam|sgd", "override the model's optimizer"},
    {"recompute", 0, CC_OPT_STR, F(recompute), "auto", "MODE", "activation recomputation: none|selective|full|block (the fewest layers per chunk that fit)|auto (search)|model"},
    {"recompute-modules", 0, CC_OPT_STR, F(rc_modules), NULL, "LIST", "what selective recomputation recomputes, comma-separated: core_attn (the default), layernorm, moe_act, mla_up_proj, mlp, moe, shared_experts (Megatron-Core --recompute-modules)"},
    {"efficiency", 'e', CC_OPT_DOUBLE, F(efficiency), "0.71", "F", "achieved/peak FLOP/s of a fully occupied matrix multiply (calibrated on Megatron-LM)", NULL, CC_OPT_RANGE, 0.01, 1},
    {"attn-efficiency", 0, CC_OPT_DOUBLE, F(efficiency_attn), "0", "F", "the same for the attention products, counted as full s x s products (0: --efficiency; docs/layout.md)", NULL, CC_OPT_RANGE, 0, 1},
    {"fp8-efficiency", 0, CC_OPT_DOUBLE, F(efficiency_fp8), "0.48", "F", "the same for the fp8 linear layers, of the fp8 peak (calibrated on NeMo fp8 runs on H100)", NULL, CC_OPT_RANGE, 0.01, 1},
    {"moe-capacity", 0, CC_OPT_DOUBLE, F(moe_capacity), "0", "F", "experts: capacity factor, tokens beyond F times an expert's balanced share dropped (Megatron-Core --moe-expert-capacity-factor; 0: dropless)", NULL, CC_OPT_RANGE, 0, 64},
    {"moe-pad", 0, CC_OPT_INT, F(moe_pad), "0", "0|1", "experts: every expert's input padded to the capacity (--moe-pad-expert-input-to-capacity; needs --moe-capacity)", NULL, CC_OPT_RANGE, 0, 1},
    {"moe-imbalance", 0, CC_OPT_DOUBLE, F(moe_imbalance), "1", "F", "experts: the busiest expert-parallel rank's routed tokens over its balanced share (1: balanced; its expert GEMMs, all-to-alls and expert activations grow by F, up to what one rank can take)", NULL, CC_OPT_RANGE, 1, 64},
    {"mem-margin", 0, CC_OPT_DOUBLE, F(mem_margin), "0.10", "F", "fraction of GPU memory kept free (and of host memory for offloaded activations)", NULL, CC_OPT_RANGE, 0, 0.9},
    {"bucket", 0, CC_OPT_SIZE, F(bucket), "25M", "SIZE", "gradient bucket size (PyTorch DDP default 25M)", NULL, CC_OPT_RANGE, 4096, 1125899906842624.0},
    {"grad-reduce", 0, CC_OPT_CHOICE, F(grad_reduce), "auto", NULL, "gradient reduction precision (auto: fp16 for fp16, else fp32)", grad_names},
    {"grad-copy", 0, CC_OPT_CHOICE, F(grad_copy), "auto", NULL, "bytes per parameter of the fp32 gradient copy the optimizer keeps (auto: 4 when gradients are reduced in 16 bits, as Megatron-LM does, else 0)", copy_names},
    {"grad-accum", 0, CC_OPT_INT, F(grad_accum), "0", "N", "fix the gradient accumulation steps (0: any)", NULL, CC_OPT_RANGE, 0, 1e9},
    {"accum-fusion", 0, CC_OPT_INT, F(accum_fusion), "1", "0|1", "weight-gradient GEMMs accumulate in place (0: a memory-bound add per micro-batch, Megatron-LM 2021)", NULL, CC_OPT_RANGE, 0, 1},
    {"gemm-waves", 0, CC_OPT_INT, F(gemm_waves), "1", "0|1", "GEMM time follows tile and wave quantization on the GPU's SMs (0: every GEMM at --efficiency)", NULL, CC_OPT_RANGE, 0, 1},
    {"zero", 'z', CC_OPT_CHOICE, F(zero), "auto", NULL, "ZeRO stage (1 = distributed optimizer); auto searches 0-3", zero_names},
    {"sp", 0, CC_OPT_CHOICE, F(sp), "auto", NULL, "sequence parallelism", sp_names},
    {"dp-overlap", 0, CC_OPT_INT, F(dp_overlap), "1", "0|1|2", "overlap the gradient reduction with the last backward, ZeRO 1-2's weight all-gather with the next forward (2: only when pp = 1)", NULL, CC_OPT_RANGE, 0, 2},
    {"pp-overlap", 0, CC_OPT_INT, F(pp_overlap), "1", "0|1", "interleaved pipelines send while other chunks compute, and pp = 2 may interleave (Megatron-Core default; 0: blocking, Megatron-LM 2021)", NULL, CC_OPT_RANGE, 0, 1},
    {"pp-scatter", 0, CC_OPT_INT, F(pp_scatter), "0", "0|1", "without sequence parallelism a pipeline send carries 1/tp of the activations per tp rank, all-gathered on arrival (Megatron-LM 2021; 0: whole activations, Megatron-Core)", NULL, CC_OPT_RANGE, 0, 1},
    {"vocab-pad", 0, CC_OPT_INT, F(vocab_pad), "128", "N", "the vocabulary is padded to a multiple of N x tp (Megatron-LM and NeMo: --make-vocab-size-divisible-by 128; 1: only to a multiple of tp, as vocabulary-parallel layers need; at tp=1 not at all, as Hugging Face models under FSDP)", NULL, CC_OPT_RANGE, 1, 65536},
    {"fp8-weight-cache", 0, CC_OPT_INT, F(fp8_cache), "0", "0|1", "fp8: count Transformer Engine's cached fp8 weights and transposes, 2 bytes per linear parameter (Megatron-Core's default unless --disable-parameter-transpose-cache; 0: left to the memory margin)", NULL, CC_OPT_RANGE, 0, 1},
    {"offload", 0, CC_OPT_CHOICE, F(offload), "auto", NULL, "also search offloading the activations of the fewest layers that fit to host memory where Megatron-Core can (pp = 1, no recomputation: --cpu-offloading-num-layers); auto: only over a Grace superchip's NVLink-C2C (GH200, GB200), as NVIDIA's recipes do", sp_names},
    {"tp-overlap", 0, CC_OPT_INT, F(tp_overlap), "0", "0|1", "sequence-parallel all-gathers and reduce-scatters pipelined with the linear layers (Megatron-Core --tp-comm-overlap)", NULL, CC_OPT_RANGE, 0, 1},
    {"ep-overlap", 0, CC_OPT_INT, F(ep_overlap), "0", "0|1", "experts: one micro-batch's all-to-alls beside another's compute, at best (Megatron-Core --overlap-moe-expert-parallel-comm; pp = 1 or interleaved, no full or block recomputation)", NULL, CC_OPT_RANGE, 0, 1},
    {"dispatcher", 0, CC_OPT_CHOICE, F(dispatcher), "alltoall", NULL, "experts: Megatron-Core's token dispatcher: alltoall (a copy per expert), deepep or hybridep (flex: a copy per GPU, across nodes per node, then NVLink; hybridep also across hosts of one NVLink domain)", cc_dispatcher_names},
    {"uneven-pp", 0, CC_OPT_INT, F(uneven_pp), "1", "0|1", "also pipelines of uneven stages: layers + 2 split evenly, embedding and loss counted as one layer each (Megatron-Core --account-for-embedding/loss-in-pipeline-split), or where that does not divide either, other layer counts on the first and last stage (--decoder-first/last-pipeline-num-layers), and at v > 1 the filled layout fill=1 (virtual stages of ceil(layers / (pp v)), the last the rest; --pipeline-model-parallel-layout)", NULL, CC_OPT_RANGE, 0, 1},
    {"pipeline-layout", 0, CC_OPT_STR, F(pp_layout), NULL, "LAYOUT", "an explicit pipeline layout for every layout with pp > 1, in Megatron-Core's notation (--pipeline-model-parallel-layout; e.g. 'Et*4|(t*4|)*14tmL': E embedding, t layer, m MTP layer, L loss, | between the pp x v virtual stages); v = its stages / pp"},
    {"tp-max", 0, CC_OPT_INT, F(tp_max), "0", "N", "largest tensor-parallel degree (0: GPUs per node)", NULL, CC_OPT_RANGE, 0, 1024},
    {"cp-max", 0, CC_OPT_INT, F(cp_max), "1", "N", "largest context-parallel degree (1: off)", NULL, CC_OPT_RANGE, 1, 1024},
    {"interleave", 0, CC_OPT_INT, F(vpp_max), "8", "N", "largest interleaved-schedule degree (1: off)", NULL, CC_OPT_RANGE, 1, 64},
    {"mb-max", 0, CC_OPT_INT, F(mb_max), "16", "N", "largest micro-batch searched", NULL, CC_OPT_RANGE, 1, 4096},
    {"top", 'k', CC_OPT_INT, F(top), "5", "K", "layouts shown", NULL, CC_OPT_RANGE, 1, 10000},
    {"explain", 'x', CC_OPT_STR, F(explain), NULL, "LAYOUT", "full breakdown of one layout, e.g. tp=8,pp=8,dp=16,mb=1, and where it ranks in the search"},
    {"json", 'j', CC_OPT_FLAG, F(json), NULL, NULL, "print JSON instead of text"},
    {"validate-megatron", 0, CC_OPT_FLAG, F(validate), NULL, NULL, "compare with Megatron-LM SC'21 Table 1 (Markdown; exit 1 if a row fails; the paper's habits: only --efficiency, --interleave and --gemm-waves apply)"},
    {"list-models", 0, CC_OPT_FLAG, F(list_models), NULL, NULL, "list model presets"},
    {"list-gpus", 0, CC_OPT_FLAG, F(list_gpus), NULL, NULL, "list the built-in GPU table"},
    CC_OPT_END,
};
#undef F

static void layout_help(FILE *o)
{
    fprintf(o, "usage: ccbench layout --model NAME|FILE (--topology FILE | --gpus N) [options]\n\n"
               "Rank data/tensor/pipeline-parallel layouts of a training job by estimated step\n"
               "time: memory per GPU, compute, communication, pipeline bubble (docs/layout.md).\n"
               "Runs without mpirun.\n\noptions:\n");
    cc_opt_help(o, layout_opts);
    fprintf(o, "\nExit status: 0 ok, 1 --validate-megatron found a failing row, 2 bad input or\n"
               "no layout fits.\n");
}

static int list_models(void)
{
    for (int i = 0; i < cc_model_preset_count(); i++) {
        const struct cc_model *m = cc_model_preset_at(i);
        char extra[192] = ""; /* experts, attention width */
        if (cc_model_moe(m))
            snprintf(extra, sizeof extra, "  %d experts of ffn %d, top %d, %.1fB active",
                     m->experts, m->moe_ffn, m->topk, cc_model_active_params(m) / 1e9);
        if (m->shared_ffn)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", shared expert %d",
                     m->shared_ffn);
        if (cc_model_mixed(m))
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                     ", %lld of %d layers with experts", cc_model_expert_layers(m), m->layers);
        if (cc_model_mla(m))
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                     ", latent attention (q %d, kv %d)", m->q_lora, m->kv_lora);
        if (m->head_dim)
            snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", head_dim %d%s",
                     m->head_dim, m->qk_norm ? ", QK norm" : "");
        printf("%-16s %7.1fB  l=%-3d h=%-5d a=%-3d kv=%-3d ffn=%-5d V=%-6d s=%-5d batch=%-5lld %s%s\n"
               "%18s%s\n", m->name, cc_model_params(m) / 1e9, m->layers, m->hidden, m->heads,
               m->kv_heads, m->ffn, m->vocab, m->seq_len, m->global_batch,
               cc_prec_names[m->prec], extra, "", m->source);
    }
    return 0;
}

static int list_gpus(void)
{
    printf("%-13s %-29s %8s %8s %8s %6s %8s %8s %8s %5s %6s\n", "id", "name", "bf16", "fp16",
           "fp8", "GiB", "HBM GB/s", "intra", "inter", "SMs", "host");
    for (int i = 0; cc_gpu_table[i].id; i++) {
        const struct cc_gpu_spec *g = &cc_gpu_table[i];
        printf("%-13s %-29s %8.0f %8.0f %8.0f %6.0f %8.0f %8.0f %8.0f %5d %6.0f\n", g->id,
               g->name, g->tflops[0], g->tflops[1], g->tflops[2], g->mem_gib, g->hbm_GBps,
               g->intra_GBps, g->inter_GBps, g->sms, g->host_GBps);
    }
    printf("(TFLOP/s dense; intra/inter: expected all-reduce busbw GB/s within a node and "
           "across nodes; SMs: AMD compute units; host: GB/s to host memory, one direction)\n");
    return 0;
}

static int validate(const struct layout_cfg *cfg)
{
    struct cc_habits hb;
    struct cc_megatron_check k[32];
    char cmd[160];
    size_t n;
    cc_megatron_habits(&hb, cfg->efficiency);
    hb.vpp_max = cfg->vpp_max;
    hb.gemm_waves = cfg->gemm_waves;
    cc_status st = cc_megatron_validate(&hb, k);
    n = (size_t)snprintf(cmd, sizeof cmd, "ccbench layout --validate-megatron");
    if (cfg->efficiency != CC_LAYOUT_EFFICIENCY) /* the documented defaults */
        n += (size_t)snprintf(cmd + n, sizeof cmd - n, " --efficiency %.17g", cfg->efficiency);
    if (cfg->vpp_max != 8 && n < sizeof cmd)
        n += (size_t)snprintf(cmd + n, sizeof cmd - n, " --interleave %d", cfg->vpp_max);
    if (!cfg->gemm_waves && n < sizeof cmd)
        snprintf(cmd + n, sizeof cmd - n, " --gemm-waves 0");
    cc_layout_print_megatron(stdout, k, cc_megatron_nrows, &hb, cmd);
    return st == CC_OK ? 0 : 1;
}

static cc_status build_model(const struct layout_cfg *cfg, struct cc_model *m, char *err,
                             size_t errlen)
{
    cc_status st;
    if (!cfg->model) {
        cc_errbuf(err, errlen, "no model given (--model NAME|FILE; see --list-models)");
        return CC_EUSAGE;
    }
    if (cc_model_preset(cfg->model, m) != CC_OK) {
        if (!strchr(cfg->model, '/') && !strstr(cfg->model, ".json")) {
            char dym[96];
            cc_errbuf(err, errlen, "unknown model '%s' (%sa preset from --list-models or a "
                      "JSON file)", cfg->model,
                      cc_did_you_mean(dym, sizeof dym, "", cfg->model, preset_name_at, NULL));
            return CC_EUSAGE;
        }
        if ((st = cc_model_load(cfg->model, m, err, errlen)) != CC_OK)
            return st;
    }
    /* one rule for the spec and the flags: a batch stated in sequences is kept, a batch in
     * tokens (a preset's) follows the sequence length */
    if (cfg->global_batch) {
        m->global_batch = cfg->global_batch;
        m->batch_tokens = 0;
    }
    if (cfg->seq_len)
        cc_model_set_seq_len(m, cfg->seq_len);
    if (cfg->mtp >= 0)
        m->mtp = cfg->mtp;
    if (cfg->rc_modules &&
        (st = cc_rc_modules_parse(cfg->rc_modules, &m->rc_modules, err, errlen)) != CC_OK)
        return st;
    const struct { const char *opt, *val; const char *const *names; int *field; } ch[] = {
        {"precision", cfg->precision, cc_prec_names, (int *)&m->prec},
        {"optimizer", cfg->optimizer, cc_optim_names, (int *)&m->optim}};
    for (int i = 0; i < 2; i++) {
        if (!ch[i].val)
            continue;
        int x = cc_choice_index(ch[i].names, ch[i].val);
        if (x < 0) {
            char list[64];
            cc_errbuf(err, errlen, "unknown --%s '%s' (one of %s)", ch[i].opt, ch[i].val,
                      cc_choice_join(ch[i].names, list, sizeof list));
            return CC_EUSAGE;
        }
        *ch[i].field = x;
    }
    return cc_model_check(m, err, errlen);
}

/* Whether option NAME was set on the command line. */
static int given_opt(const unsigned char *given, const char *name)
{
    int i = cc_opt_find(layout_opts, name);
    return given && i >= 0 && given[i];
}

static cc_status build_cluster(const struct layout_cfg *cfg, const struct cc_model *m,
                               const unsigned char *given, struct cc_cluster *c, char *err,
                               size_t errlen)
{
    cc_status st;
    if (cfg->topology && cfg->gpus) {
        cc_errbuf(err, errlen, "give either --topology or --gpus, not both");
        return CC_EUSAGE;
    }
    if (cfg->topology && (given_opt(given, "gpu-model") || given_opt(given, "gpus-per-node") ||
                          given_opt(given, "gpus-per-host"))) {
        cc_errbuf(err, errlen, "--gpu-model, --gpus-per-node and --gpus-per-host describe a "
                  "--gpus cluster; a --topology file names its own GPUs and nodes");
        return CC_EUSAGE;
    }
    /* 0 keeps the default (the table's value); anything else must be a plausible figure */
    const struct { const char *opt; double v, min; } ov[] = {
        {"gpu-mem-gb", cfg->gpu_mem_gb, 1}, {"peak-tflops", cfg->peak_tflops, 0.1},
        {"hbm-GBps", cfg->hbm_GBps, 1}, {"host-GBps", cfg->host_GBps, 0.01},
        {"host-mem-gb", cfg->host_mem_gb, 0.01},
        {"intra-GBps", cfg->intra_GBps, 0.01}, {"inter-GBps", cfg->inter_GBps, 0.01},
        {"attn-efficiency", cfg->efficiency_attn, 0.01}};
    for (size_t i = 0; i < sizeof ov / sizeof ov[0]; i++)
        if (ov[i].v != 0 && ov[i].v < ov[i].min) {
            cc_errbuf(err, errlen, "--%s %g is too small (0: the default; otherwise at least %g)",
                      ov[i].opt, ov[i].v, ov[i].min);
            return CC_EUSAGE;
        }
    if (cfg->topology) {
        if ((st = cc_cluster_load_topology(c, cfg->topology, cfg->peak_tflops > 0, err,
                                           errlen)) != CC_OK)
            return st;
    } else if (cfg->gpus) {
        const struct cc_gpu_spec *g = cc_gpu_lookup(cfg->gpu_model);
        struct cc_gpu_spec other = {.id = cfg->gpu_model, .name = cfg->gpu_model,
                                    .eff16 = cc_eff16_unchecked};
        if (!g && (cfg->peak_tflops <= 0 || cfg->gpu_mem_gb <= 0)) {
            char dym[96];
            cc_errbuf(err, errlen, "unknown --gpu-model '%s' (%ssee --list-gpus; a GPU the "
                      "table lacks needs --peak-tflops and --gpu-mem-gb)", cfg->gpu_model,
                      cc_did_you_mean(dym, sizeof dym, "", cfg->gpu_model, gpu_id_at, NULL));
            return CC_EUSAGE;
        }
        if (!g) /* its rates: --intra-GBps and --inter-GBps (checked below) */
            g = &other;
        if ((st = cc_cluster_quick(c, cfg->gpus, cfg->gpn, g, err, errlen)) != CC_OK)
            return st;
        /* against the node as planned: a cluster smaller than --gpus-per-node is one node of
         * --gpus GPUs */
        int gpn = c->gpus_per_node;
        if (cfg->gph > 0 && cfg->gpn > 0 && cfg->gph > cfg->gpn) {
            cc_errbuf(err, errlen, "--gpus-per-host %d is more than the %d GPUs per node (a "
                      "node is an NVLink domain of one or more hosts)", cfg->gph, cfg->gpn);
            return CC_EUSAGE;
        }
        if (cfg->gph > 0 && cfg->gph < gpn && gpn % cfg->gph) {
            cc_errbuf(err, errlen, "--gpus-per-host %d does not divide the %d GPUs per node%s",
                      cfg->gph, gpn, gpn < cfg->gpn ? " (--gpus is smaller than --gpus-per-node)"
                                                    : "");
            return CC_EUSAGE;
        }
        c->gpus_per_host = cfg->gph;
        if (g == &other)
            snprintf(c->bw_source, sizeof c->bw_source, "no table entry for %.64s",
                     cfg->gpu_model);
    } else {
        cc_errbuf(err, errlen, "no cluster given (--topology FILE or --gpus N with N >= 1)");
        return CC_EUSAGE;
    }
    if (cfg->gpu_mem_gb > 0)
        c->mem_bytes = cfg->gpu_mem_gb * 1e9;
    if (cfg->peak_tflops > 0) { /* the efficiencies were fitted against data-sheet peaks */
        c->peak_flops[m->prec] = cfg->peak_tflops * 1e12;
        if (m->prec == CC_PREC_FP8) /* the 16-bit work runs at half of it, as on every GPU */
            c->peak_flops[CC_PREC_BF16] = c->peak_flops[CC_PREC_FP16] = cfg->peak_tflops * 0.5e12;
        c->eff16_note = cc_eff16_unchecked;
    }
    if (cfg->hbm_GBps > 0)
        c->hbm_Bps = cfg->hbm_GBps * 1e9;
    if (cfg->host_GBps > 0)
        c->host_Bps = cfg->host_GBps * 1e9;
    if (cfg->host_mem_gb > 0)
        c->host_mem_bytes = cfg->host_mem_gb * 1e9;
    if (cfg->intra_GBps > 0)
        c->intra_busbw_Bps = c->p2p_intra_Bps = cfg->intra_GBps * 1e9;
    if (cfg->inter_GBps > 0)
        c->inter_node_Bps = cfg->inter_GBps * 1e9;
    if (cfg->intra_GBps > 0 || cfg->inter_GBps > 0) { /* the header says which were given */
        size_t n = strlen(c->bw_source);
        snprintf(c->bw_source + n, sizeof c->bw_source - n, "%s%s%s%s given", n ? "; " : "",
                 cfg->intra_GBps > 0 ? "--intra-GBps" : "",
                 cfg->intra_GBps > 0 && cfg->inter_GBps > 0 ? " and " : "",
                 cfg->inter_GBps > 0 ? "--inter-GBps" : "");
    }
    if (c->peak_flops[m->prec] <= 0) {
        cc_errbuf(err, errlen, "GPU '%s' has no %s peak in the table (give --peak-tflops or "
                  "another --precision)", c->gpu_name, cc_prec_names[m->prec]);
        return CC_EUSAGE;
    }
    if (c->mem_bytes <= 0) {
        cc_errbuf(err, errlen, "GPU memory unknown for '%s' (give --gpu-mem-gb)", c->gpu_name);
        return CC_EUSAGE;
    }
    if (c->gpus_per_node > 1 && c->intra_busbw_Bps <= 0) {
        cc_errbuf(err, errlen, "no all-reduce rate within a node for GPU '%s' (give "
                  "--intra-GBps or the topology's nodes[].expected.intra_allreduce_busbw_GBps)",
                  c->gpu_name);
        return CC_EUSAGE;
    }
    if (c->nodes > 1 && c->inter_node_Bps <= 0) {
        cc_errbuf(err, errlen, "no all-reduce rate across nodes for GPU '%s' (give "
                  "--inter-GBps or the topology's fabric)", c->gpu_name);
        return CC_EUSAGE;
    }
    if (cfg->results) {
        const char *p = cfg->results;
        char path[4096];
        int more;
        while ((more = cc_list_next(&p, "--results", cfg->results, path, sizeof path, err,
                                    errlen)) > 0)
            if ((st = cc_cluster_load_results(c, path, err, errlen)) != CC_OK)
                return st;
        if (more < 0)
            return CC_EUSAGE;
    }
    return CC_OK;
}

static void build_habits(const struct layout_cfg *cfg, const struct cc_model *m,
                         struct cc_habits *hb)
{
    cc_habits_default(hb);
    hb->efficiency = cfg->efficiency;
    hb->efficiency_fp8 = cfg->efficiency_fp8;
    hb->efficiency_attn = cfg->efficiency_attn;
    hb->moe_imbalance = cfg->moe_imbalance;
    hb->moe_capacity = cfg->moe_capacity;
    hb->moe_pad = cfg->moe_pad;
    hb->mem_margin = cfg->mem_margin;
    hb->bucket_bytes = cfg->bucket;
    hb->grad_bytes = cfg->grad_reduce == 0 ? (m->prec == CC_PREC_FP16 ? 2 : 4)
                                           : (cfg->grad_reduce == 3 ? 4 : 2);
    hb->grad_accum = cfg->grad_accum;
    /* Megatron-LM's optimizer casts 16-bit main gradients to fp32 (fp16 and bf16 alike);
     * fp32 gradients are used as they are */
    hb->main_grad_bytes = cfg->grad_copy == 0 ? (hb->grad_bytes == 2 ? 4 : 0)
                                              : (cfg->grad_copy == 2 ? 4 : 0);
    hb->accum_fusion = cfg->accum_fusion;
    hb->gemm_waves = cfg->gemm_waves;
    hb->uneven_pp = cfg->uneven_pp;
    if (cfg->zero > 0)
        hb->zero_min = hb->zero_max = cfg->zero - 1;
    hb->sp = cfg->sp == 0 ? -1 : cfg->sp - 1;
    hb->dp_overlap = cfg->dp_overlap;
    hb->pp_overlap = cfg->pp_overlap;
    hb->pp_scatter = cfg->pp_scatter;
    hb->vocab_pad = cfg->vocab_pad;
    hb->tp_overlap = cfg->tp_overlap;
    hb->ep_overlap = cfg->ep_overlap;
    hb->dispatcher = (enum cc_dispatcher)cfg->dispatcher;
    hb->fp8_cache = cfg->fp8_cache;
    hb->offload = cfg->offload == 0 ? 2 : cfg->offload - 1; /* auto, off, on */
    hb->tp_max = cfg->tp_max;
    hb->cp_max = cfg->cp_max;
    hb->vpp_max = cfg->vpp_max;
    hb->mb_max = cfg->mb_max;
    hb->recompute = (enum cc_recompute)cc_choice_index(cc_recompute_names, cfg->recompute);
    if (strcmp(cfg->recompute, "model") == 0)
        hb->recompute = m->recompute;
}

/* Exit status of a failure to build the model or the cluster: an unreadable input file is bad
 * input (2) here, not a fault of the run. */
static int input_exit(cc_status st)
{
    return st == CC_EIO ? 2 : cc_status_exit(st);
}

/* BIG = C with N GPUs of its kind: its nodes as many as they take, everything else C's. */
static void grow_cluster(struct cc_cluster *big, const struct cc_cluster *c, long long n)
{
    *big = *c;
    big->gpus = (int)n;
    big->nodes = (int)((n + c->gpus_per_node - 1) / c->gpus_per_node);
}

/* --explain: the named layout with unspecified knobs at plain defaults. */
static int explain(const struct layout_cfg *cfg, const struct cc_model *m,
                   const struct cc_cluster *c, const struct cc_habits *hb)
{
    char err[256];
    int dp_given;
    struct cc_layout l = {1, 1, 0, 1, 1, 0 /* v: below */, 0, hb->zero_min,
                          hb->recompute == CC_RC_AUTO ? m->recompute : hb->recompute};
    l.sp = -1;
    if (cc_layout_parse(cfg->explain, &l, &dp_given, err, sizeof err) != CC_OK) {
        cc_err("%s", err);
        return 2;
    }
    if (l.sp < 0)
        l.sp = l.tp > 1 && hb->sp != 0;
    if (l.vpp == 0) /* not given: 1, or the explicit pipeline layout's */
        l.vpp = hb->plan && l.pp > 1 && hb->plan->n % l.pp == 0 ? hb->plan->n / l.pp : 1;
    if (!dp_given) {
        double rest = (double)c->gpus / ((double)l.tp * l.pp * l.cp);
        l.dp = rest >= 1 ? (int)rest : 1;
    }
    struct cc_eval e;
    /* each degree is at most 1,000,000, so the product is formed in double */
    double need_f = (double)l.tp * l.pp * l.dp * l.cp;
    long long need = need_f <= 16777216 ? (long long)need_f : 0;
    struct cc_cluster *big = NULL; /* a layout larger than the cluster: as many GPUs of its kind */
    const struct cc_cluster *on = c; /* the cluster the layout is evaluated (and launched) on */
    if (need_f > c->gpus && need_f <= 16777216) {
        if (!(big = malloc(sizeof *big))) {
            cc_err("out of memory");
            return 3;
        }
        grow_cluster(big, c, need);
        if (big->nodes > 1 && big->inter_node_Bps <= 0) {
            cc_err("layout '%s' uses %lld GPUs, more than the cluster's %d, and no rate across "
                   "nodes is known to cost them (give --inter-GBps)", cfg->explain, need, c->gpus);
            free(big);
            return 2;
        }
        on = big;
    }
    cc_layout_eval(m, on, hb, &l, &e);
    if (l.rc == CC_RC_BLOCK)
        l.rcl = e.rcl; /* rc=block without rcl: the fewest layers that fit */
    if (big && (e.feasible || e.t_step > 0)) {
        char why[sizeof e.why];
        snprintf(why, sizeof why, "tp*pp*dp*cp is %lld but the cluster has %d GPUs (figures for "
                 "%lld such GPUs)%s%.200s", need, c->gpus, need, e.feasible ? "" : "; ",
                 e.feasible ? "" : e.why);
        snprintf(e.why, sizeof e.why, "%s", why);
        e.feasible = 0;
        e.mem_only = 0;
    }
    if (!e.feasible && e.t_step <= 0) { /* nothing to show: the products cannot be formed */
        cc_err("layout '%s' is infeasible: %s", cfg->explain, e.why);
        free(big);
        return 2;
    }
    /* the search with the same habits, to say where this layout stands */
    struct cc_search s = {0};
    cc_status st = cc_layout_search(m, c, hb, &s);
    if (st == CC_ENOMEM) {
        cc_search_free(&s);
        free(big);
        cc_err("out of memory");
        return 3;
    }
    if (cfg->json) {
        json_t *o = cc_layout_context_json(m, c, hb);
        json_object_set_new(o, "explain", cc_layout_ranked_json(m, on, hb, &l, &e));
        json_object_set_new(o, "search", cc_layout_versus_json(m, c, hb, &s, st, &l, &e));
        char *txt = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        puts(txt);
        free(txt);
        json_decref(o);
    } else {
        struct cc_habits hx = *hb; /* no context-parallelism hint over a layout that has it */
        if (l.cp > hx.cp_max)
            hx.cp_max = l.cp;
        cc_layout_print_context(stdout, m, c, &hx);
        cc_layout_print_explain(stdout, m, c, &l, &e);
        cc_layout_print_versus(stdout, c, &s, st, &l, &e);
        if (e.feasible)
            cc_layout_print_args(stdout, m, c, hb, &l, &e);
    }
    cc_search_free(&s);
    free(big);
    if (e.feasible)
        return 0;
    cc_err("layout '%s' is infeasible: %s", cfg->explain, e.why);
    return 2;
}

/* Nothing fits in memory on C: the fewest GPUs of the same kind, doubling, up to 64 times as
 * many (at most six searches), on which something does, written to BUF as "; ..." (empty if
 * none does, or if more nodes have no rate to cost them with). A --gpus cluster is built again
 * at each count, as the command line would build it (nodes of --gpus-per-node, their rate
 * across nodes); a --topology one gets more of its nodes. */
static const char *more_gpus(const struct layout_cfg *cfg, const unsigned char *given,
                             const struct cc_model *m, const struct cc_cluster *c,
                             const struct cc_habits *hb, char *buf, size_t len)
{
    char err[512];
    buf[0] = 0;
    struct cc_cluster *big = malloc(sizeof *big);
    if (!big)
        return buf;
    for (long long n = 2LL * c->gpus; n <= 64LL * c->gpus && n <= 16777216; n *= 2) {
        if (cfg->topology) {
            grow_cluster(big, c, n);
            snprintf(big->name, sizeof big->name, "%lld x %s", n, c->gpu_name);
        } else {
            struct layout_cfg more = *cfg;
            more.gpus = (int)n;
            if (build_cluster(&more, m, given, big, err, sizeof err) != CC_OK)
                break;
        }
        if (big->nodes > 1 && big->inter_node_Bps <= 0)
            break;
        struct cc_search t = {0};
        struct cc_habits hq = *hb;
        hq.quiet = 1; /* the error stays one line */
        cc_status st = cc_layout_search(m, big, &hq, &t);
        if (st == CC_OK && t.nbest > 0) {
            char lb[128];
            snprintf(buf, len, "; with %lld such GPUs it fits (first: %s)", n,
                     cc_layout_format(&t.best[0].layout, lb, sizeof lb));
            cc_search_free(&t);
            break;
        }
        cc_search_free(&t);
        if (st == CC_ENOMEM || !t.none_for_memory)
            break; /* more GPUs do not help with another reason */
    }
    free(big);
    return buf;
}

int cc_cmd_layout(int argc, char **argv)
{
    struct layout_cfg cfg;
    struct cc_opt_result res;
    char *pos[argc > 0 ? argc : 1];
    char err[512];
    struct cc_model m;
    struct cc_cluster *c = NULL;
    struct cc_habits hb;
    struct cc_search s = {0};
    struct cc_pplan *plan = NULL; /* --pipeline-layout */
    int rc = 2;

    unsigned char given[sizeof layout_opts / sizeof layout_opts[0]] = {0};
    res.pos = pos;
    res.given = given;
    if (cc_opt_parse(layout_opts, argc - 1, argv + 1, &cfg, &res, err, sizeof err) != CC_OK) {
        cc_err("%s", err);
        return 2;
    }
    if (res.help) {
        layout_help(stdout);
        return 0;
    }
    if (res.npos) {
        cc_err("unexpected argument '%s' (see --help)", res.pos[0]);
        return 2;
    }
    if (cfg.json && (cfg.validate || cfg.list_models || cfg.list_gpus)) {
        cc_err("--json applies to a search or --explain, not to %s",
               cfg.validate ? "--validate-megatron (Markdown)" : cfg.list_models ? "--list-models"
                                                                                  : "--list-gpus");
        return 2;
    }
    /* the listings take nothing else, the Table 1 check only its three model habits */
    if (cfg.validate || cfg.list_models || cfg.list_gpus) {
        const char *mode = cfg.list_models ? "list-models"
                           : cfg.list_gpus ? "list-gpus"
                                           : "validate-megatron";
        static const char *const validate_takes[] = {"efficiency", "interleave", "gemm-waves",
                                                     NULL};
        for (int i = 0; layout_opts[i].name; i++) {
            const char *name = layout_opts[i].name;
            if (!given[i] || strcmp(name, mode) == 0 ||
                (cfg.validate && !cfg.list_models && !cfg.list_gpus &&
                 cc_choice_index(validate_takes, name) >= 0))
                continue;
            cc_err("--%s does not apply to --%s%s", name, mode,
                   strcmp(mode, "validate-megatron") == 0
                       ? " (it takes only --efficiency, --interleave and --gemm-waves)" : "");
            return 2;
        }
    }
    if (cfg.list_models)
        return list_models();
    if (cfg.list_gpus)
        return list_gpus();
    if (cfg.validate)
        return validate(&cfg);
    if (cc_choice_index(cc_recompute_names, cfg.recompute) < 0 &&
        strcmp(cfg.recompute, "model") != 0) {
        cc_err("unknown --recompute '%s' (one of none|selective|full|block|auto|model)", cfg.recompute);
        return 2;
    }
    cc_status st = build_model(&cfg, &m, err, sizeof err);
    if (st != CC_OK) {
        cc_err("%s", err);
        return input_exit(st);
    }
    /* the options that only a model with experts reads: a dense model would ignore them */
    if (!cc_model_moe(&m)) {
        static const char *const moe_only[] = {"dispatcher", "moe-capacity", "moe-pad",
                                               "moe-imbalance", "ep-overlap", NULL};
        for (int i = 0; moe_only[i]; i++)
            if (given_opt(given, moe_only[i])) {
                cc_err("--%s applies to models with experts; model '%s' has none", moe_only[i],
                       m.name);
                return 2;
            }
    }
    if (cfg.moe_pad && cfg.dispatcher == CC_DISPATCH_DEEPEP) {
        cc_err("--dispatcher deepep does not pad the experts' input to the capacity (Megatron-"
               "Core refuses --moe-pad-expert-input-to-capacity with it): --moe-pad 0, or "
               "--dispatcher alltoall or hybridep");
        return 2;
    }
    if (cfg.moe_pad && !(cfg.moe_capacity > 0)) {
        cc_err("--moe-pad 1 pads every expert's input to the capacity: give --moe-capacity F "
               "(a capacity factor above 0)");
        return 2;
    }
    /* 16-bit gradients are reduced in the training's own 16-bit type (bf16 for fp8) */
    if ((cfg.grad_reduce == 2) != (m.prec == CC_PREC_FP16) && cfg.grad_reduce != 0 &&
        cfg.grad_reduce != 3) {
        cc_err("--grad-reduce %s with %s training: 16-bit gradients are reduced in %s (or give "
               "fp32)", grad_names[cfg.grad_reduce], cc_prec_names[m.prec],
               m.prec == CC_PREC_FP16 ? "fp16" : "bf16");
        return 2;
    }
    c = malloc(sizeof *c); /* the fit tables make it large */
    if (!c) {
        cc_err("out of memory");
        return 3;
    }
    if ((st = build_cluster(&cfg, &m, given, c, err, sizeof err)) != CC_OK) {
        cc_err("%s", err);
        rc = input_exit(st);
        goto done;
    }
    build_habits(&cfg, &m, &hb);
    /* recompute modules (the flag's or the spec's) with layouts that recompute otherwise */
    if (m.rc_modules && hb.recompute != CC_RC_AUTO && hb.recompute != CC_RC_SELECTIVE) {
        if (cfg.rc_modules && strcmp(cfg.recompute, "model"))
            cc_err("--recompute-modules is for selective recomputation (--recompute selective, "
                   "auto or model), not --recompute %s", cfg.recompute);
        else
            cc_err("recompute modules (%s) are for selective recomputation, and the layouts "
                   "here recompute %s (--recompute %s)",
                   cfg.rc_modules ? "--recompute-modules" : "the spec's recompute_modules",
                   cc_recompute_names[hb.recompute], cfg.recompute);
        rc = 2;
        goto done;
    }
    if (cfg.pp_layout) {
        if ((plan = malloc(sizeof *plan)) == NULL) {
            cc_err("out of memory");
            rc = 3;
            goto done;
        }
        if ((st = cc_pplan_parse(cfg.pp_layout, plan, err, sizeof err)) != CC_OK) {
            cc_err("%s", err);
            rc = 2;
            goto done;
        }
        /* the layers and MTP layers it places, whatever pp (the rest with the layout) */
        if (cc_pplan_check(plan, m.layers, m.mtp, 0, err, sizeof err)) {
            cc_err("--pipeline-layout '%s': %s", cfg.pp_layout, err);
            rc = 2;
            goto done;
        }
        hb.plan = plan;
    }
    if (cfg.explain) {
        rc = explain(&cfg, &m, c, &hb);
        goto done;
    }
    st = cc_layout_search(&m, c, &hb, &s);
    if (st == CC_ENOMEM) {
        cc_err("out of memory");
        rc = 3;
        goto done;
    }
    char more[256] = ""; /* nothing fits in memory: on how many GPUs it would */
    if (st == CC_EINFEASIBLE && s.none_for_memory)
        more_gpus(&cfg, given, &m, c, &hb, more, sizeof more);
    if (cfg.json) {
        json_t *o = cc_layout_context_json(&m, c, &hb);
        json_t *top = json_array();
        long long keep;
        json_object_set_new(o, "evaluated", json_integer(s.evaluated));
        json_object_set_new(o, "feasible", json_integer(s.feasible));
        if (cc_search_batch_note(&m, &s, &keep)) {
            json_t *bn = json_object();
            json_object_set_new(bn, "left_out", json_integer(s.batch_skipped));
            json_object_set_new(bn, "of", json_integer(s.batch_skipped + s.batch_whole));
            json_object_set_new(bn, "keeps_all", keep > 0 ? json_integer(keep) : json_null());
            json_object_set_new(o, "batch_note", bn);
        } else {
            json_object_set_new(o, "batch_note", json_null());
        }
        for (int i = 0; i < s.nbest && i < cfg.top; i++) {
            json_t *r = cc_layout_ranked_json(&m, c, &hb, &s.best[i].layout, &s.best[i].eval);
            double behind = s.best[i].eval.t_step / s.best[0].eval.t_step - 1;
            char why[256];
            json_object_set_new(r, "behind_why", i == 0 ? json_null()
                : json_string(cc_layout_behind_why(&s.best[0].eval, &s.best[i].eval, why,
                                                   sizeof why)));
            json_object_set_new(r, "behind_best_pct",
                                isfinite(behind) ? json_real(behind * 100) : json_null());
            json_object_set_new(r, "near_best", json_boolean(behind <= CC_LAYOUT_NEAR));
            json_array_append_new(top, r);
        }
        json_object_set_new(o, "top", top);
        if (st != CC_OK) {
            char e2[sizeof s.why_none + sizeof more];
            snprintf(e2, sizeof e2, "%s%s", s.why_none, more);
            json_object_set_new(o, "error", json_string(e2));
        }
        char *txt = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
        puts(txt);
        free(txt);
        json_decref(o);
    } else if (st == CC_OK) {
        cc_layout_print_context(stdout, &m, c, &hb);
        cc_layout_print_table(stdout, &m, c, &s, cfg.top);
        cc_layout_print_args(stdout, &m, c, &hb, &s.best[0].layout, &s.best[0].eval);
    }
    if (st != CC_OK) {
        char hintbuf[384];
        const char *hint = cc_layout_hint(&m, c, &hb, hintbuf, sizeof hintbuf);
        cc_err("model '%s' on %d GPU%s: %s%s%s%s", m.name, c->gpus, c->gpus == 1 ? "" : "s",
               s.why_none, more,
               hint ? "; " : "", hint ? hint : "");
        rc = 2;
        goto done;
    }
    rc = 0;
done:
    cc_search_free(&s);
    free(plan);
    free(c);
    return rc;
}
