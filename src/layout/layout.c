/* layout.c - habits, the text form of a layout and the costs of its parts; one layout's
 * evaluation is in eval.c, memory.c and steptime.c, the search in search.c. */
#include "layout/layout.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/opt.h"
#include "layout/eval.h"
#include "layout/gemm.h"

double cc_layout_zero3_unit(const struct cc_model *m, int tp)
{
    struct cc_model r = *m;
    if (r.kv_heads < tp)
        r.kv_heads = tp; /* one replicated K/V head per rank */
    double outp = (double)r.vocab * r.hidden;
    return fmax(cc_model_layer_params(&r), fmax(cc_model_embed_params(&r), outp)) / tp;
}

/* ZeRO 3: gathered units (layers) whose full 16-bit weights are alive at once: the one being
 * computed and the next one, prefetched (PyTorch FSDP keeps two all-gather outputs alive:
 * limit_all_gathers, the default since 2023, and FSDP2's prefetching, pytorch#128884;
 * DeepSpeed's stage3_prefetch_bucket_size prefetches ahead the same way). */
#define ZERO3_LIVE_UNITS 2.0

double cc_habits_attn_efficiency(const struct cc_habits *hb)
{
    return hb->efficiency_attn > 0 ? hb->efficiency_attn : hb->efficiency;
}

int cc_habits_dp_overlaps(const struct cc_habits *hb, int pp)
{
    return hb->dp_overlap == 1 || (hb->dp_overlap == 2 && pp == 1);
}

const char *cc_layout_ep_overlap_needs(const struct cc_layout *l)
{
    if (l->rc != CC_RC_NONE && l->rc != CC_RC_SELECTIVE)
        return "no full or block recomputation";
    if (l->pp > 1 && l->vpp < 2)
        return "an interleaved pipeline (v > 1) when pp > 1";
    return NULL;
}

int cc_layout_ep_overlaps(const struct cc_model *m, const struct cc_habits *hb,
                          const struct cc_layout *l)
{
    return hb->ep_overlap && cc_model_moe(m) && l->ep > 1 && !cc_layout_ep_overlap_needs(l);
}

const char *const cc_dispatcher_names[] = {"alltoall", "deepep", "hybridep", NULL};

void cc_habits_default(struct cc_habits *hb)
{
    memset(hb, 0, sizeof *hb);
    hb->efficiency = CC_LAYOUT_EFFICIENCY;
    hb->efficiency_fp8 = CC_LAYOUT_FP8_EFFICIENCY;
    hb->mem_margin = 0.10;
    hb->bucket_bytes = 25u << 20;
    hb->grad_bytes = 4;
    hb->zero_min = 0;
    hb->zero_max = 3;
    hb->sp = -1;
    hb->dp_overlap = 1;
    hb->accum_fusion = 1;
    hb->gemm_waves = 1;
    hb->uneven_pp = 1;
    hb->pp_overlap = 1;
    hb->pp_scatter = 0;
    hb->vocab_pad = 128;
    hb->tp_max = 0; /* GPUs per node */
    hb->cp_max = 1;
    hb->vpp_max = 8;
    hb->mb_max = 16;
    hb->recompute = CC_RC_AUTO;
    hb->offload = 2; /* auto */
    hb->moe_imbalance = 1.0;
    hb->dispatcher = CC_DISPATCH_ALLTOALL;
}

int cc_habits_offload_searched(const struct cc_habits *hb, const struct cc_cluster *c)
{
    return hb->offload == 1 || (hb->offload == 2 && c->host_Bps >= CC_OFFLOAD_AUTO_BPS);
}

const struct cc_pplan *cc_layout_plan(const struct cc_model *m, const struct cc_habits *hb,
                                      const struct cc_layout *l, struct cc_pplan *buf)
{
    char unused[160];
    if (l->pp < 2)
        return NULL;
    if (hb && hb->plan)
        return hb->plan;
    if (l->fill && !l->split && l->lfirst <= 0 &&
        cc_pplan_fill(buf, m->layers, m->mtp, l->pp, l->vpp > 0 ? l->vpp : 1, unused,
                      sizeof unused) == CC_OK)
        return buf;
    return NULL;
}

const struct cc_pplan *cc_eval_plan(const struct cc_model *m, const struct cc_layout *l,
                                    const struct cc_eval *e, struct cc_pplan *buf)
{
    return e->plan ? e->plan : e->filled ? cc_layout_plan(m, NULL, l, buf) : NULL;
}

const char *cc_layout_format(const struct cc_layout *l, char *buf, size_t len)
{
    char rcl[24] = "", off[24] = "", ep[48] = "", fl[48] = "";
    if (l->rc == CC_RC_BLOCK && l->rcl > 0)
        snprintf(rcl, sizeof rcl, ",rcl=%d", l->rcl);
    if (l->off > 0)
        snprintf(off, sizeof off, ",off=%d", l->off);
    if (l->ep > 1 || l->etp > 1)
        snprintf(ep, sizeof ep, ",ep=%d", cc_layout_ep(l));
    if (l->etp > 1)
        snprintf(ep + strlen(ep), sizeof ep - strlen(ep), ",etp=%d", l->etp);
    if (l->lfirst > 0 || l->llast > 0)
        snprintf(fl, sizeof fl, ",first=%d,last=%d", l->lfirst, l->llast);
    snprintf(buf, len, "tp=%d,pp=%d,dp=%d,cp=%d,mb=%d,v=%d,sp=%d,zero=%d,rc=%s%s%s%s%s%s%s",
             l->tp, l->pp, l->dp, l->cp, l->mb, l->vpp, l->sp, l->zero, cc_recompute_names[l->rc],
             rcl, off, l->split ? ",split=1" : "", fl, l->fill ? ",fill=1" : "", ep);
    return buf;
}

cc_status cc_layout_parse(const char *text, struct cc_layout *l, int *dp_given, char *err,
                          size_t errlen)
{
    const char *p = text;
    char kv[64];
    int more, rc_given = 0, rcl_given = 0, off_given = 0;
    *dp_given = 0;
    if (strlen(text) >= 256) {
        cc_errbuf(err, errlen, "layout '%.40s...' is too long", text);
        return CC_EUSAGE;
    }
    if (!*text) {
        cc_errbuf(err, errlen, "layout '' names nothing (e.g. tp=8,pp=4,dp=2,mb=1)");
        return CC_EUSAGE;
    }
    while ((more = cc_list_next(&p, "layout", text, kv, sizeof kv, err, errlen)) > 0) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            cc_errbuf(err, errlen, "layout '%s': '%s' is not key=value", text, kv);
            return CC_EUSAGE;
        }
        *eq = 0;
        const char *key = kv, *val = eq + 1;
        if (strcmp(key, "rc") == 0) {
            int i = cc_choice_index(cc_recompute_names, val);
            if (i < 0 || i == CC_RC_AUTO) {
                cc_errbuf(err, errlen, "layout '%s': unknown rc '%s' "
                          "(none|selective|full|block)", text, val);
                return CC_EUSAGE;
            }
            l->rc = (enum cc_recompute)i;
            rc_given = 1;
            continue;
        }
        static const char *const ikeys[] = {"tp", "pp", "dp", "cp", "mb", "v", "vpp", "sp",
                                            "zero", "split", "rcl", "off", "ep", "etp",
                                            "first", "last", "fill", NULL};
        if (cc_choice_index(ikeys, key) < 0) {
            cc_errbuf(err, errlen, "layout '%s': unknown key '%s' (tp, pp, dp, cp, mb, v, sp, "
                      "zero, rc, rcl, off, split, first, last, fill, ep, etp)", text, key);
            return CC_EUSAGE;
        }
        char *end;
        long v = strtol(val, &end, 10);
        /* sp, zero and split may be 0; the degrees and sizes start at 1 */
        int sw = strcmp(key, "sp") == 0 || strcmp(key, "split") == 0 || strcmp(key, "fill") == 0;
        int lo = !sw && strcmp(key, "zero") != 0 && strcmp(key, "off") != 0;
        /* sp, split and fill are switches, zero a stage */
        long hi = sw ? 1
                  : strcmp(key, "zero") == 0                           ? 3
                                                                       : 1000000;
        if (*val < '0' || *val > '9' || *end || v > hi || v < lo) {
            cc_errbuf(err, errlen, "layout '%s': %s needs an integer from %d to %ld, got '%s'",
                      text, key, lo, hi, val);
            return CC_EUSAGE;
        }
        int iv = (int)v;
        if (strcmp(key, "tp") == 0) l->tp = iv;
        else if (strcmp(key, "pp") == 0) l->pp = iv;
        else if (strcmp(key, "dp") == 0) l->dp = iv, *dp_given = 1;
        else if (strcmp(key, "cp") == 0) l->cp = iv;
        else if (strcmp(key, "mb") == 0) l->mb = iv;
        else if (strcmp(key, "v") == 0 || strcmp(key, "vpp") == 0) l->vpp = iv;
        else if (strcmp(key, "sp") == 0) l->sp = iv;
        else if (strcmp(key, "zero") == 0) l->zero = iv;
        else if (strcmp(key, "rcl") == 0) l->rcl = iv, rcl_given = 1;
        else if (strcmp(key, "off") == 0) l->off = iv, off_given = 1;
        else if (strcmp(key, "ep") == 0) l->ep = iv;
        else if (strcmp(key, "etp") == 0) l->etp = iv;
        else if (strcmp(key, "first") == 0) l->lfirst = iv;
        else if (strcmp(key, "last") == 0) l->llast = iv;
        else if (strcmp(key, "fill") == 0) l->fill = iv;
        else l->split = iv;
    }
    if (more < 0)
        return CC_EUSAGE;
    if (rcl_given && rc_given && l->rc != CC_RC_BLOCK) {
        cc_errbuf(err, errlen, "layout '%s': rcl (layers recomputed per model chunk) is for "
                  "rc=block, not rc=%s", text, cc_recompute_names[l->rc]);
        return CC_EUSAGE;
    }
    if (rcl_given)
        l->rc = CC_RC_BLOCK;
    else if (rc_given || l->rc != CC_RC_BLOCK)
        l->rcl = 0; /* block without a count: the fewest layers that fit */
    if (off_given && l->off > 0 && !rc_given && !rcl_given)
        l->rc = CC_RC_NONE; /* offloading runs without recomputation */
    if (l->sp == 1 && l->tp == 1) {
        cc_errbuf(err, errlen, "layout '%s': sp=1 (sequence parallelism) needs tp > 1", text);
        return CC_EUSAGE;
    }
    if (l->split && l->pp == 2)
        l->split = 0; /* two stages of (layers + 2) / 2 slots less one each: the uniform split */
    if ((l->lfirst > 0) != (l->llast > 0)) {
        cc_errbuf(err, errlen, "layout '%s': first and last (the layers of the first and the last "
                  "pipeline stage) go together", text);
        return CC_EUSAGE;
    }
    if ((l->lfirst > 0) + l->split + l->fill > 1) {
        cc_errbuf(err, errlen, "layout '%s': %s are two ways to split the pipeline unevenly; "
                  "give one", text, l->fill && l->split ? "fill=1 and split=1"
                                  : l->fill           ? "fill=1 and first/last"
                                                      : "first/last and split=1");
        return CC_EUSAGE;
    }
    return CC_OK;
}

double cc_layer_gemm_time(const struct cc_model *m, double mb, double s_loc, int tp, double rate,
                          double rate_attn, int sms, int nfwd, int attn_again)
{
    double h = m->hidden, s = m->seq_len, T = mb * s_loc, t = tp > 0 ? tp : 1;
    double dh = cc_model_head_dim(m), kv = m->kv_heads * dh, q = cc_model_q_dim(m);
    double up = (m->mlp == CC_MLP_SWIGLU ? 2.0 : 1.0) * m->ffn; /* gate and up fused */
    double heads = mb * m->heads / t;                            /* attention batch */
    double dqk = dh, dv = dh, w; /* the attention products' widths per head */
    if (cc_model_mla(m)) {
        /* latent attention: the down projections on this rank's 1/tp of the tokens (held
         * whole; sequence parallelism is required with tp > 1), the up projections and the
         * output projection split by heads */
        double n = m->heads;
        dqk = (double)m->qk_nope + m->qk_rope, dv = m->v_dim;
        double down = (m->q_lora > 0 ? (double)m->q_lora : 0.0) + m->kv_lora + m->qk_rope;
        w = cc_gemm_time(T / t, down, h, 1, rate, sms, nfwd, 1) +
            cc_gemm_time(T, n * dqk / t, m->q_lora > 0 ? m->q_lora : h, 1, rate, sms, nfwd, 1) +
            cc_gemm_time(T, n * ((double)m->qk_nope + dv) / t, m->kv_lora, 1, rate, sms, nfwd, 1) +
            cc_gemm_time(T, h, n * dv / t, 1, rate, sms, nfwd, 1);
    } else {
        w = cc_gemm_time(T, (q + 2.0 * kv) / t, h, 1, rate, sms, nfwd, 1) + /* QKV */
            cc_gemm_time(T, h, q / t, 1, rate, sms, nfwd, 1);               /* proj */
    }
    w = w + cc_gemm_time(T, up / t, h, 1, rate, sms, nfwd, 1) +             /* MLP in */
        cc_gemm_time(T, h, m->ffn / t, 1, rate, sms, nfwd, 1);              /* MLP out */
    int na = nfwd + (attn_again ? 1 : 0);
    double a = cc_gemm_time(s_loc, s, dqk, heads, rate_attn, sms, na, 1) + /* Q K^T */
               cc_gemm_time(s_loc, dv, s, heads, rate_attn, sms, na, 1);   /* softmax(.) V */
    return w + a;
}

double cc_expert_gemm_time(const struct cc_model *m, double mb, double s_loc, int tp, int ep,
                           double rate, int sms, int nfwd)
{
    if (!cc_model_moe(m))
        return 0.0;
    double h = m->hidden, t = tp > 0 ? tp : 1, e = ep > 0 ? ep : 1;
    double et = m->expert_tp > 1 ? m->expert_tp : 1;
    double tokens = mb * s_loc / t;                     /* this GPU's, sequence-parallel */
    /* rows per expert of the busiest rank: with expert tensor parallelism gathered over its
     * etp group, each rank computing 1/etp of the expert's width */
    double rows = e * et * tokens * m->topk / m->experts * cc_model_route_skew(m);
    double local = m->experts / e;
    double up = (m->mlp == CC_MLP_SWIGLU ? 2.0 : 1.0) * m->moe_ffn / et;
    return cc_gemm_time(rows, up, h, local, rate, sms, nfwd, 1) +               /* experts in */
           cc_gemm_time(rows, h, m->moe_ffn / et, local, rate, sms, nfwd, 1) +  /* experts out */
           cc_gemm_time(tokens, m->experts, h, 1, rate, sms, nfwd, 1);          /* router */
}

double cc_expert_a2a_bytes(const struct cc_model *m, double mb, double s_loc, int tp)
{
    if (!cc_model_moe(m))
        return 0.0;
    return mb * s_loc / (tp > 0 ? tp : 1) * m->topk * m->hidden * 2.0 *
           cc_model_route_skew(m); /* the busiest rank's */
}

double cc_dispatch_time(const struct cc_model *m, const struct cc_cluster *c,
                        enum cc_dispatcher d, double mb, double s_loc, int tp, int ep, int etp)
{
    /* a group is at most the cluster (larger ones are refused, but still costed: finitely) */
    long long nn = (long long)ep * (etp > 1 ? etp : 1);
    int n = (int)(nn < c->gpus ? nn : c->gpus);
    if (!cc_model_moe(m) || n <= 1 || (d == CC_DISPATCH_ALLTOALL && ep <= 1))
        return 0.0;
    ep = ep < n ? ep : n;
    double bytes = cc_expert_a2a_bytes(m, mb, s_loc, tp); /* topk copies of every token */
    if (d == CC_DISPATCH_ALLTOALL)
        return 2.0 * cc_comm_time(c, CC_ALLTOALL, ep, cc_per_node(c, ep, etp), bytes);
    /* flex: one group of the ep x etp adjacent ranks, each token to every etp copy of each of
     * its experts (no gather over etp after it) */
    int pn = cc_per_node(c, n, 1);
    double copy = bytes / m->topk, gpus = cc_model_route_spread(m, ep) * ((double)n / ep);
    if (pn >= n) /* one NVLink domain */
        return 2.0 * cc_comm_time(c, CC_ALLTOALL, n, pn, copy * gpus);
    /* the all-to-all model sends (n - pn) / n of its bytes off the node: sized so that the
     * copies to the other nodes the token's experts are on go through the NICs */
    int nodes = (n + pn - 1) / pn;
    double remote = cc_model_route_spread(m, nodes) * (nodes - 1.0) / nodes;
    double rdma = cc_comm_time(c, CC_ALLTOALL, n, pn, copy * remote * n / (double)(n - pn));
    double nvl = cc_comm_time(c, CC_ALLTOALL, pn, pn, copy * gpus);
    return 2.0 * fmax(rdma, nvl);
}

double cc_logit_gemm_time(const struct cc_model *m, double mb, double s_loc, int tp, double rate,
                          int sms)
{
    return cc_gemm_time(mb * s_loc, (double)m->vocab / (tp > 0 ? tp : 1), m->hidden, 1, rate,
                        sms, 1, 1);
}

double cc_bubble_time(int pp, int vpp, double t_mb)
{
    return pp > 1 ? (double)(pp - 1) / (vpp > 0 ? vpp : 1) * t_mb : 0.0;
}

double cc_grad_accum_time(const struct cc_habits *hb, double params, double hbm_Bps)
{
    if (hb->accum_fusion || hbm_Bps <= 0)
        return 0.0;
    return params * (2.0 + 2.0 * hb->grad_bytes) / hbm_Bps;
}

double cc_embed_sync_time(const struct cc_model *m, const struct cc_cluster *c,
                          const struct cc_habits *hb, int tp, int pp, long long stride,
                          int mtp_apart)
{
    if (pp < 2 || (!m->tied_embed && m->mtp <= 0)) /* tied, or MTP's copy on its stage */
        return 0.0;
    /* the first, the MTP stage's and (tied) the last copy; one node only if the whole
     * pipeline of this rank fits in one */
    int n = mtp_apart && m->mtp > 0 && m->tied_embed ? 3 : 2;
    int pn = cc_group_in_node(c, pp, stride) ? n : 1;
    double bytes = (double)m->vocab * m->hidden / (tp > 0 ? tp : 1) * hb->grad_bytes;
    return cc_comm_time(c, CC_ALLREDUCE, n, pn, bytes);
}

void cc_state_bytes(const struct cc_model *m, const struct cc_habits *hb, double params,
                    double unit, int zero, int shard, double *w, double *g, double *o)
{
    double opt = m->optim == CC_OPTIM_ADAM ? 12.0 : 8.0; /* fp32 master + moment(s) */
    double sh = shard > 0 ? shard : 1;
    *w = params * 2.0 / (zero >= 3 ? sh : 1.0);
    /* the fp32 copy of 16-bit gradients belongs to the optimizer: Megatron-LM's distributed
     * optimizer keeps it for its shard only (4 + 16/d bytes for fp16, dist_optimizer.md) */
    *g = params * hb->grad_bytes / (zero >= 2 ? sh : 1.0) +
         params * hb->main_grad_bytes / (zero >= 1 ? sh : 1.0);
    *o = params * opt / (zero >= 1 ? sh : 1.0);
    if (zero >= 3 && sh > 1) { /* the gathered working set on top of the shards */
        double u = fmin(unit, params);
        *w += fmin(ZERO3_LIVE_UNITS * u, params) * 2.0; /* computed + prefetched, 16-bit */
        *g += u * hb->grad_bytes; /* one unit's gradients before their reduce-scatter */
    }
}

const char *cc_stage_name(int mem_stage)
{
    return mem_stage == 1 ? "last" : mem_stage == 2 ? "second" : mem_stage == 3 ? "mtp" : "first";
}

int cc_group_per_node(const struct cc_cluster *c, int n, int stride)
{
    return cc_per_node(c, n, stride);
}

double cc_inflight_layers(int r, int pp, int v, double slots, int short_chunk, double mm)
{
    if (pp == 1)
        return fmax(slots - (short_chunk >= 0 ? 1.0 : 0.0), 0.0);
    double w = cc_warm_chunks(r, pp, v, mm);
    double layers = w * slots / v;
    if (short_chunk >= 0)
        layers -= v == 1 ? w : cc_chunk_steps(w, pp, v, short_chunk);
    return fmax(layers, 0.0);
}
