/* snippets.c - what `ccbench layout` hands to the tools that run a layout: Megatron-LM
 * arguments, a torchrun line, a DeepSpeed config fragment, and the notes on what they leave
 * out or what the estimate assumed. */
#include "layout/report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/size.h"

/* Megatron-LM's names for ZeRO stages 2 and 3: Megatron-FSDP's sharding strategies. */
static const char *const fsdp_strategy[] = {"no_shard", "optim", "optim_grads",
                                            "optim_grads_params"};

/* What goes before torchrun: Megatron-LM refuses tensor or context parallelism on GPUs before
 * Blackwell unless the device runs one connection (work queued in launch order), and
 * Megatron-FSDP refuses exactly that setting, so an inherited one is cleared. */
/* Whether Megatron-LM wants CUDA_DEVICE_MAX_CONNECTIONS=1: tensor or context parallelism
 * before Blackwell (with the expert all-to-all overlap it only warns, and 1 is kept). */
/* Whether the layout runs Megatron-Core's flex dispatcher: asked for, and the experts spread
 * over ep or etp ranks (its DeepEP asserts ep x etp > 1; nothing is dispatched otherwise). */
static int flex_dispatch(const struct cc_model *m, const struct cc_habits *hb,
                         const struct cc_layout *l)
{
    return cc_model_moe(m) && hb->dispatcher != CC_DISPATCH_ALLTOALL &&
           (long long)cc_layout_ep(l) * cc_layout_etp(l) > 1;
}

static int one_connection(const struct cc_cluster *c, const struct cc_layout *l)
{
    return (l->tp > 1 || l->cp > 1) && !c->blackwell;
}

static const char *connection_prefix(const struct cc_model *m, const struct cc_habits *hb,
                                     const struct cc_cluster *c, const struct cc_layout *l)
{
    if (l->zero >= 2)
        return "env -u CUDA_DEVICE_MAX_CONNECTIONS ";
    if (one_connection(c, l))
        return "CUDA_DEVICE_MAX_CONNECTIONS=1 ";
    /* the overlapped all-to-alls run on streams of their own */
    return cc_layout_ep_overlaps(m, hb, l) ? "CUDA_DEVICE_MAX_CONNECTIONS=32 " : "";
}

const char *cc_layout_megatron_args(const struct cc_model *m, const struct cc_habits *hb,
                                    const struct cc_layout *l, char *buf, size_t len)
{
    size_t n = 0;
#define PUT(...) do { int w_ = snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__); \
                      if (w_ > 0) n += (size_t)w_; } while (0)
    buf[0] = 0;
    PUT("--tensor-model-parallel-size %d --pipeline-model-parallel-size %d", l->tp, l->pp);
    struct cc_pplan pbuf;
    const struct cc_pplan *plan = cc_layout_plan(m, hb, l, &pbuf);
    if (plan) { /* it sets v (stages / pp) and where every layer goes */
        PUT(" --pipeline-model-parallel-layout '%s'", plan->text);
    } else {
        if (l->split && l->pp > 1)
            PUT(" --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split");
        if (l->lfirst > 0 && l->pp > 1) /* uneven: the virtual stages by count, not by size */
            PUT(" --decoder-first-pipeline-num-layers %d --decoder-last-pipeline-num-layers %d",
                l->lfirst, l->llast);
        if (l->vpp > 1 && l->lfirst > 0)
            PUT(" --num-virtual-stages-per-pipeline-rank %d", l->vpp);
        else if (l->vpp > 1)
            PUT(" --num-layers-per-virtual-pipeline-stage %lld",
                (m->layers + (l->split && l->pp > 1 ? 2 : 0)) / ((long long)l->pp * l->vpp));
    }
    if (l->cp > 1) /* the exchange costed: K and V gathered (Llama 3's way) */
        PUT(" --context-parallel-size %d --cp-comm-type allgather", l->cp);
    if (l->sp)
        PUT(" --sequence-parallel");
    PUT(" --micro-batch-size %d --global-batch-size %lld", l->mb, m->global_batch);
    if (l->zero >= 2) /* ZeRO 2 and 3 are Megatron-FSDP's; version 1 needs the optimizer flag */
        PUT(" --use-megatron-fsdp --data-parallel-sharding-strategy %s "
            "--use-distributed-optimizer --ckpt-format fsdp_dtensor", fsdp_strategy[l->zero]);
    else if (l->zero == 1)
        PUT(" --use-distributed-optimizer");
    if (l->rc == CC_RC_FULL)
        PUT(" --recompute-granularity full --recompute-method uniform --recompute-num-layers 1");
    else if (l->rc == CC_RC_BLOCK)
        PUT(" --recompute-granularity full --recompute-method block --recompute-num-layers %d",
            l->rcl);
    if (l->off > 0)
        PUT(" --cpu-offloading-num-layers %d", l->off);
    else if (l->rc == CC_RC_SELECTIVE) {
        PUT(" --recompute-granularity selective");
        if (cc_model_rc_modules(m) != CC_RCM_CORE_ATTN) {
            char mods[128];
            PUT(" --recompute-modules %s", cc_rc_modules_format(m->rc_modules, " ", mods, sizeof mods));
        }
    }
    PUT(" --num-layers %d --hidden-size %d --ffn-hidden-size %d --num-attention-heads %d",
        m->layers, m->hidden, m->ffn, m->heads);
    if (m->kv_heads != m->heads)
        PUT(" --group-query-attention --num-query-groups %d", m->kv_heads);
    if (m->head_dim > 0) /* Megatron-LM's default is hidden / heads */
        PUT(" --kv-channels %d", m->head_dim);
    if (m->qk_norm)
        PUT(" --qk-layernorm");
    if (cc_model_mla(m)) { /* with its two latent norms, which --qk-layernorm builds */
        PUT(" --multi-latent-attention --qk-layernorm");
        if (m->q_lora > 0)
            PUT(" --q-lora-rank %d", m->q_lora);
        PUT(" --kv-lora-rank %d --qk-head-dim %d --qk-pos-emb-head-dim %d --v-head-dim %d",
            m->kv_lora, m->qk_nope, m->qk_rope, m->v_dim);
    }
    if (cc_model_moe(m)) { /* the experts as costed: whole on each GPU, tokens all-to-all */
        PUT(" --num-experts %d --moe-router-topk %d --moe-ffn-hidden-size %d", m->experts,
            m->topk, m->moe_ffn);
        if (m->shared_ffn > 0)
            PUT(" --moe-shared-expert-intermediate-size %d", m->shared_ffn);
        if (cc_model_mixed(m)) { /* which layers have experts; the others an ffn MLP */
            char pat[128];
            PUT(" --moe-layer-freq '%s'", cc_model_moe_pattern(m, pat, sizeof pat));
        }
        if (m->route_groups > 0)
            PUT(" --moe-router-num-groups %d --moe-router-group-topk %d", m->route_groups,
                m->route_group_topk);
        int flex = flex_dispatch(m, hb, l);
        PUT(" --expert-model-parallel-size %d --expert-tensor-parallel-size %d "
            "--moe-token-dispatcher-type %s --moe-grouped-gemm",
            cc_layout_ep(l), cc_layout_etp(l), flex ? "flex" : "alltoall");
        if (flex)
            PUT(" --moe-flex-dispatcher-backend %s", cc_dispatcher_names[hb->dispatcher]);
        if (hb->moe_capacity > 0)
            PUT(" --moe-expert-capacity-factor %g%s", hb->moe_capacity,
                hb->moe_pad ? " --moe-pad-expert-input-to-capacity" : "");
    }
    if (m->mtp > 0)
        PUT(" --mtp-num-layers %d", m->mtp);
    PUT(" --seq-length %d --max-position-embeddings %d", m->seq_len, m->seq_len);
    if (m->mlp == CC_MLP_SWIGLU) /* costed as Llama: no biases, RMSNorm, no learned positions */
        PUT(" --swiglu --normalization RMSNorm --position-embedding-type rope "
            "--disable-bias-linear%s", m->qkv_bias ? " --add-qkv-bias" : "");
    if (!cc_model_dropout(m)) /* Megatron-LM's default is 0.1 */
        PUT(" --attention-dropout 0.0 --hidden-dropout 0.0");
    if (m->mlp == CC_MLP_SWIGLU && m->rope_base > 0 && m->rope_base != 10000)
        PUT(" --rotary-base %.0f", m->rope_base); /* Megatron-LM's default base: 10000 */
    if (!m->tied_embed)
        PUT(" --untie-embeddings-and-output-weights");
    if (m->optim == CC_OPTIM_SGD)
        PUT(" --optimizer sgd");
    PUT(m->prec == CC_PREC_FP16 ? " --fp16" : " --bf16");
    if (m->prec == CC_PREC_FP8)
        PUT(" --fp8-format hybrid");
    if (m->flash_attn)
        PUT(" --use-flash-attn");
    if (hb->vocab_pad != 128) /* Megatron-LM's default */
        PUT(" --make-vocab-size-divisible-by %d", hb->vocab_pad);
    if (!hb->accum_fusion)
        PUT(" --no-gradient-accumulation-fusion");
    if (hb->grad_bytes == 4 && m->prec == CC_PREC_FP16)
        PUT(" --accumulate-allreduce-grads-in-fp32");
    if (hb->grad_bytes == 2 && m->prec != CC_PREC_FP16)
        PUT(" --grad-reduce-in-bf16");
    if (hb->tp_overlap && l->sp && l->tp > 1)
        PUT(" --tp-comm-overlap");
    if (cc_layout_ep_overlaps(m, hb, l))
        PUT(" --overlap-moe-expert-parallel-comm");
    if (!hb->pp_overlap && l->vpp > 1)
        PUT(" --no-overlap-p2p-communication");
    /* gradients to reduce: over dp*cp, or with experts over the ranks holding the same ones */
    int ep = cc_layout_ep(l);
    int reduced = l->dp * l->cp > 1 ||
                  (cc_model_moe(m) && (long long)l->tp * l->cp * l->dp / ep > 1);
    if (cc_habits_dp_overlaps(hb, l->pp) && reduced) {
        PUT(" --overlap-grad-reduce%s", l->zero >= 1 ? " --overlap-param-gather" : "");
        /* Megatron's DDP buckets count parameters, and exist only with the overlap */
        if (l->zero <= 1)
            PUT(" --ddp-bucket-size %zu", hb->bucket_bytes / (size_t)(hb->grad_bytes > 0
                                                                          ? hb->grad_bytes : 1));
    }
#undef PUT
    return buf;
}

const char *cc_layout_torchrun(const struct cc_model *m, const struct cc_habits *hb,
                               const struct cc_cluster *c, const struct cc_layout *l,
                               const char *args, char *buf, size_t len)
{
    snprintf(buf, len, "%storchrun --nnodes %d --nproc-per-node %d --rdzv-backend c10d "
             "--rdzv-endpoint $MASTER_ADDR:29500 pretrain_gpt.py %s",
             connection_prefix(m, hb, c, l),
             cc_cluster_hosts(c), cc_cluster_per_host(c), args);
    return buf;
}

json_t *cc_layout_deepspeed_json(const struct cc_model *m, const struct cc_habits *hb,
                                 const struct cc_layout *l, const struct cc_eval *e)
{
    /* DeepSpeed's bucket sizes count elements, not bytes: the gradients reduced (and, in as
     * many buckets, the weights gathered) per bucket of hb->bucket_bytes */
    json_int_t bucket = (json_int_t)(hb->bucket_bytes / (size_t)(hb->grad_bytes > 0
                                                                     ? hb->grad_bytes : 1));
    json_t *o = json_object(), *z = json_object();
    json_object_set_new(o, "train_batch_size", json_integer(m->global_batch));
    json_object_set_new(o, "train_micro_batch_size_per_gpu", json_integer(l->mb));
    json_object_set_new(o, "gradient_accumulation_steps", json_integer(e->m));
    json_object_set_new(o, m->prec == CC_PREC_FP16 ? "fp16" : "bf16",
                        json_pack("{s:b}", "enabled", 1));
    json_object_set_new(o, "communication_data_type",
                        json_string(hb->grad_bytes == 4 ? "fp32"
                                    : m->prec == CC_PREC_FP16 ? "fp16" : "bf16"));
    json_object_set_new(z, "stage", json_integer(l->zero));
    json_object_set_new(z, "overlap_comm",
                        json_boolean(cc_habits_dp_overlaps(hb, l->pp)));
    json_object_set_new(z, "contiguous_gradients", json_true());
    json_object_set_new(z, "reduce_bucket_size", json_integer(bucket));
    if (l->zero < 3) {
        json_object_set_new(z, "allgather_bucket_size", json_integer(bucket));
    } else { /* the memory estimate holds two gathered units: the one computed, the next */
        struct cc_model mp = *m; /* the vocabulary as the estimate pads it */
        mp.vocab = e->vocab > 0 ? e->vocab : m->vocab;
        json_int_t unit = (json_int_t)ceil(cc_layout_zero3_unit(&mp, l->tp));
        json_object_set_new(z, "stage3_prefetch_bucket_size", json_integer(unit));
        json_object_set_new(z, "stage3_max_live_parameters", json_integer(2 * unit));
    }
    json_object_set_new(o, "zero_optimization", z);
    /* partitioning applies to the checkpointed layer inputs: only with full recomputation */
    if (l->rc == CC_RC_FULL || l->rc == CC_RC_BLOCK)
        json_object_set_new(o, "activation_checkpointing",
                            json_pack("{s:b}", "partition_activations", l->sp));
    return o;
}

int cc_layout_launch_notes(const struct cc_model *m, const struct cc_habits *hb,
                           const struct cc_cluster *c, const struct cc_layout *l,
                           const struct cc_eval *e, struct cc_launch_note *note, int max)
{
    int n = 0;
#define NOTE(ds, ...) do { if (n < max) { note[n].deepspeed = (ds); \
        snprintf(note[n].text, sizeof note[n].text, __VA_ARGS__); n++; } } while (0)
    if (l->zero >= 2)
        NOTE(0, "ZeRO %d is Megatron-FSDP's --data-parallel-sharding-strategy %s%s%s", l->zero,
             fsdp_strategy[l->zero],
             hb->accum_fusion ? "; its guide also sets --no-gradient-accumulation-fusion, which "
                                "this estimate does not assume (--accum-fusion 0 costs it)" : "",
             one_connection(c, l) ? "; it runs without CUDA_DEVICE_MAX_CONNECTIONS=1 (cleared "
                                    "on the torchrun line), which can slow tensor and context "
                                    "parallelism before Blackwell (Megatron-LM warns of the "
                                    "combination; not costed here)" : "");
    if (m->prec == CC_PREC_FP8)
        NOTE(1, "fp8: DeepSpeed's config has no fp8 switch; the linear layers need Transformer "
                "Engine's fp8_autocast (Megatron-DeepSpeed: its --fp8 flags), the rest runs in "
                "bf16 as set here");
    if (l->rc == CC_RC_SELECTIVE)
        NOTE(1, "selective recomputation is Megatron-LM's (--recompute-granularity selective); "
                "DeepSpeed's activation checkpointing recomputes whole layers");
    if (l->off > 0)
        NOTE(1, "activation offloading (%d layers' activations to host memory) is Megatron-Core's "
                "--cpu-offloading-num-layers (Transformer Engine's offload context); DeepSpeed "
                "moves activations to the host only as checkpoints of recomputation "
                "(activation_checkpointing.cpu_checkpointing)", l->off);
    if (e->plan || e->filled)
        NOTE(1, "the explicit pipeline layout is Megatron-Core's (--pipeline-model-parallel-layout); "
                "DeepSpeed's PipelineModule places layers by its own partition_method");
    if (l->rc == CC_RC_BLOCK)
        NOTE(1, "block recomputation (the first %d layer%s of every model chunk, the others "
                "kept) is Megatron-LM's --recompute-method block; DeepSpeed's config does not "
                "choose the layers: the model code checkpoints those and no others",
             l->rcl, l->rcl == 1 ? "" : "s");
    if (cc_model_moe(m) && e->capacity > 0)
        NOTE(0, "experts: capacity factor %g: an expert's tokens beyond %g times its balanced "
                "share are dropped%s; the busiest expert-parallel rank is costed at %.2fx its "
                "balanced share (--moe-imbalance %.2f%s)", e->capacity, e->capacity,
             e->capacity_pad ? ", and every expert's input is padded to that share" : "",
             e->skew > 0 ? e->skew : 1.0, hb->moe_imbalance,
             e->capacity_pad ? ", which padding makes irrelevant" : "");
    else if (cc_model_moe(m) && e->skew > 1.0)
        NOTE(0, "experts: routing is costed with the busiest expert-parallel rank getting "
                "%.2fx its balanced share of the tokens (--moe-imbalance), no token dropped; "
                "a router that is worse makes the step slower and needs more memory",
             e->skew);
    else if (cc_model_moe(m) && hb->moe_imbalance > 1.0 && cc_layout_ep(l) == 1)
        NOTE(0, "experts: without expert parallelism every GPU holds every expert and computes "
                "all its tokens' routed work however the router spreads them, so "
                "--moe-imbalance %.2f changes nothing at ep = 1",
             hb->moe_imbalance);
    else if (cc_model_moe(m) && hb->moe_imbalance > 1.0 && m->topk >= m->experts)
        NOTE(0, "experts: every token goes to all %d experts (top %d), so every GPU's share is "
                "fixed and --moe-imbalance %.2f changes nothing", m->experts, m->topk,
             hb->moe_imbalance);
    else if (cc_model_moe(m) && cc_layout_ep(l) > 1) /* at ep = 1 the balance is irrelevant */
        NOTE(0, "experts: routing is costed as balanced (each expert gets its share of the "
                "tokens, no token dropped); an unbalanced router makes the busiest expert-"
                "parallel rank, and with it the step, slower (--moe-imbalance costs that)");
    if (cc_model_moe(m) && m->topk < m->experts) /* the model's quality, at any ep */
        NOTE(0, "experts: these arguments set no load balancing: Megatron-LM's "
                "--moe-aux-loss-coeff defaults to 0 (no load-balancing loss); add your "
                "model's router settings");
    if (cc_layout_ep_overlaps(m, hb, l) && one_connection(c, l) && l->zero < 2)
        NOTE(0, "experts: before Blackwell, tensor or context parallelism wants "
                "CUDA_DEVICE_MAX_CONNECTIONS=1 (the torchrun line sets it) and the all-to-all "
                "overlap a larger value (32); Megatron-LM warns and leaves the choice, and this "
                "estimate costs the overlap at best either way");
    const char *ep_needs = cc_layout_ep_overlap_needs(l);
    if (!hb->ep_overlap && cc_model_moe(m) && l->ep > 1 && e->t_step > 0 &&
        e->t_ep > 0.15 * e->t_step)
        NOTE(0, "experts: the all-to-all is %.0f%% of this step; Megatron-Core's "
                "--overlap-moe-expert-parallel-comm can hide part of it behind other "
                "micro-batches' compute (--ep-overlap 1 costs that at best)%s%s",
             100.0 * e->t_ep / e->t_step, ep_needs ? "; it needs " : "",
             ep_needs ? ep_needs : "");
    if (hb->ep_overlap && cc_model_moe(m) && l->ep > 1 && ep_needs)
        NOTE(0, "experts: --ep-overlap 1 is not costed or passed on for this layout: Megatron-"
                "Core's --overlap-moe-expert-parallel-comm needs %s", ep_needs);
    int flex = flex_dispatch(m, hb, l);
    if (flex && hb->dispatcher == CC_DISPATCH_DEEPEP &&
        cc_cluster_per_host(c) < c->gpus_per_node &&
        (long long)l->ep * cc_layout_etp(l) > cc_cluster_per_host(c))
        NOTE(0, "experts: the expert-parallel group spans hosts of one NVLink domain, which "
                "Megatron-Core's DeepEP backend does not run across (only hybridep does): "
                "--dispatcher hybridep");
    if (flex)
        NOTE(0, "experts: the %s dispatcher is costed by the bytes it moves (a copy of each "
                "token per GPU its experts are on, across nodes per node, routing balanced); "
                "its own SMs and buffers are not", cc_dispatcher_names[hb->dispatcher]);
    if (cc_model_moe(m) && m->prec == CC_PREC_FP16)
        NOTE(0, "experts in fp16: Megatron-LM before late December 2025 refuses expert "
                "parallelism and --moe-grouped-gemm without --bf16; use a newer one, or bf16");
    if (cc_model_moe(m) && l->dp % cc_layout_ep(l) == 0)
        NOTE(1, "experts in DeepSpeed: deepspeed.moe.layer.MoE(num_experts=%d, ep_size=%d, "
                "k=%d) in the model code, and the optimizer's parameter groups split with "
                "split_params_into_different_moe_groups_for_optimizer; the config has no expert "
                "settings%s", m->experts, cc_layout_ep(l), m->topk,
             cc_layout_ep_overlaps(m, hb, l) ? ", and the all-to-all overlap this estimate "
                                               "counts is Megatron-Core's" : "");
    else if (cc_model_moe(m))
        NOTE(1, "experts in DeepSpeed: its expert-parallel groups are carved out of the "
                "data-parallel ranks, so ep_size must divide dp = %d: ep = %d (over tensor- or "
                "context-parallel ranks too, as Megatron-Core does) has no DeepSpeed equivalent",
             l->dp, cc_layout_ep(l));
    if (l->cp > 1)
        NOTE(0, "context parallelism is costed as an all-gather of K and V not overlapped with "
                "the attention (Llama 3's way, --cp-comm-type allgather, as set here); "
                "Megatron-LM's default p2p ring overlaps its exchanges and may be faster");
    if (l->cp > 1)
        NOTE(1, "DeepSpeed has no context parallelism: this batch counts the dp = %d "
                "data-parallel ranks (%d x %lld x %d = %lld), DeepSpeed would count dp x cp = "
                "%d and refuse it; DeepSpeed-Ulysses sequence parallelism is the nearest",
             l->dp, l->mb, e->m, l->dp, (long long)l->mb * e->m * l->dp, l->dp * l->cp);
    char part[160] = "";
    if (l->split)
        snprintf(part, sizeof part, ", partitioned so that the embedding and the output layer "
                 "each count as one layer");
    else if (l->lfirst > 0)
        snprintf(part, sizeof part, ", partitioned with %d layers on the first stage and %d on "
                 "the last (Megatron-LM's uneven split; set DeepSpeed's partitioning to match)",
                 l->lfirst, l->llast);
    if (l->pp > 1)
        NOTE(1, "pipeline parallel in DeepSpeed: PipelineModule(num_stages=%d%s)%s%.0d%s", l->pp,
             part,
             l->tp > 1 ? "; tensor parallel " : "", l->tp > 1 ? l->tp : 0,
             l->tp > 1 ? " comes from Megatron-DeepSpeed" : "");
    else if (l->tp > 1 && l->cp == 1) /* the batch below counts dp, not the world size (with
                                        cp > 1 the note above says what DeepSpeed counts) */
        NOTE(1, "tensor parallel %d comes from Megatron-DeepSpeed (its mpu, passed to "
                "deepspeed.initialize), which makes the data-parallel size dp = %d that "
                "train_batch_size counts; plain DeepSpeed would count all %lld GPUs", l->tp,
             l->dp, (long long)l->tp * l->dp * l->cp);
    if (l->pp > 1 && l->vpp > 1)
        NOTE(1, "DeepSpeed's pipeline engine has no interleaved schedule: this estimate's v=%d "
                "is Megatron-LM's; with DeepSpeed the bubble is v times larger (--explain the "
                "layout with v=1 for its step)", l->vpp);
    char bk[32];
    /* Megatron's own DDP reduces gradients (with experts, theirs over e->edp ranks) */
    int ddp = l->zero <= 1 && (l->dp * l->cp > 1 || (cc_model_moe(m) && e->edp > 1));
    if (ddp && cc_habits_dp_overlaps(hb, l->pp))
        NOTE(0, "--ddp-bucket-size is the estimate's --bucket (%s bytes of %d-byte gradients; "
                "Megatron-LM never splits a tensor across buckets, and buckets only the first "
                "pipeline stage's first chunk); its own default is max(40M, 1M x dp x cp) "
                "parameters, fewer collectives at large dp: give --bucket to cost that",
             cc_size_format(hb->bucket_bytes, bk, sizeof bk), hb->grad_bytes);
    else if (ddp)
        NOTE(0, "without --overlap-grad-reduce Megatron-LM reduces the gradients in one bucket; "
                "the estimate's %s-byte buckets each pay a collective's latency, so it is a "
                "little pessimistic there", cc_size_format(hb->bucket_bytes, bk, sizeof bk));
#undef NOTE
    return n;
}

void cc_layout_print_args(FILE *out, const struct cc_model *m, const struct cc_cluster *c,
                          const struct cc_habits *hb, const struct cc_layout *l,
                          const struct cc_eval *e)
{
    char args[2048], run[2400];
    struct cc_launch_note note[16];
    int nn = cc_layout_launch_notes(m, hb, c, l, e, note, (int)(sizeof note / sizeof note[0]));
    fprintf(out, "\nMegatron-LM arguments:\n  %s\n",
            cc_layout_megatron_args(m, hb, l, args, sizeof args));
    for (int i = 0; i < nn; i++)
        if (!note[i].deepspeed)
            fprintf(out, "  # %s\n", note[i].text);
    int hosts = cc_cluster_hosts(c);
    fprintf(out, "\ntorchrun (run on %s%d %s%s):\n  %s\n", hosts > 1 ? "each of the " : "the ",
            hosts, cc_cluster_per_host(c) < c->gpus_per_node ? "host" : "node",
            hosts > 1 ? "s" : "", cc_layout_torchrun(m, hb, c, l, args, run, sizeof run));
    json_t *ds = cc_layout_deepspeed_json(m, hb, l, e);
    char *txt = json_dumps(ds, JSON_INDENT(2));
    json_decref(ds);
    fprintf(out, "\nDeepSpeed config fragment:\n  ");
    for (const char *p = txt ? txt : "{}"; *p; p++) { /* indented as the other snippets */
        fputc(*p, out);
        if (*p == '\n')
            fputs("  ", out);
    }
    fputc('\n', out);
    free(txt);
    for (int i = 0; i < nn; i++)
        if (note[i].deepspeed)
            fprintf(out, "  # %s\n", note[i].text);
}
