/* layout.c - memory and step time of one layout; the search over all layouts. */
#include "layout/layout.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/opt.h"
#include "layout/gemm.h"

/* A search still running after this many seconds says so once, on stderr (a wide search,
 * --mb-max 4096 with --interleave 64 on a model of many layers, takes tens of seconds). */
#define SEARCH_NOTE_S 3.0

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Bytes of memory traffic per activation byte and pass (one write, one read): the element-wise
 * work (norms, activations, softmax, dropout, residuals) runs at memory speed. Fixed a priori,
 * not fitted; see docs/layout.md. */
#ifndef ELEMWISE_TRAFFIC
#define ELEMWISE_TRAFFIC 2.0
#endif
/* Optimizer update, bytes read+written per parameter besides the gradient: Adam reads and
 * writes fp32 master, m, v (24) and writes the 16-bit weight (2); SGD with momentum 16 + 2. */
#define ADAM_STEP_BYTES 26.0
#define SGD_STEP_BYTES 18.0
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

/* Whether every group of n members with `stride` between consecutive ranks lies in one node
 * (ranks are numbered node by node). */
static int group_in_node(const struct cc_cluster *c, long long n, long long stride)
{
    long long span = n * stride;
    return span <= c->gpus_per_node && c->gpus_per_node % span == 0;
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
    int pn = group_in_node(c, pp, stride) ? n : 1;
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

static void why(struct cc_eval *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why(struct cc_eval *e, const char *fmt, ...)
{
    if (!e->feasible)
        return; /* keep the first reason */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->why, sizeof e->why, fmt, ap);
    va_end(ap);
    e->feasible = 0;
}

static long long gcd(long long a, long long b)
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
static int per_node(const struct cc_cluster *c, int n, int stride)
{
    int gpn = c->gpus_per_node;
    long long span = (long long)n * stride;
    if (group_in_node(c, n, stride))
        return n;
    if (stride >= gpn || gpn % stride)
        return 1;
    long long k = gcd(span, gpn) / stride;
    return k > 1 ? (int)k : 1;
}

int cc_group_per_node(const struct cc_cluster *c, int n, int stride)
{
    return per_node(c, n, stride);
}

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

/* cc_layout_ep_overlaps for the layout being evaluated. */
static int ep_overlaps(const struct ctx *x)
{
    struct cc_layout l = {.ep = x->ep, .rc = x->rc, .pp = x->pp, .vpp = x->v};
    return cc_layout_ep_overlaps(x->m, x->hb, &l);
}

/* Megatron-LM's uneven first and last stage as the search tries it: middle stages of
 * ceil(layers / pp) (*mid), the first and last sharing the rest (returned), each 1 to *mid. */
static int first_last_rest(int layers, int pp, int *mid)
{
    *mid = (layers + pp - 1) / pp;
    return layers - (pp - 2) * *mid;
}

/* Where the layers do not divide evenly: the uneven splits that would place them at this pp
 * and v, as " (split=1 ...; fill=1 ...)" for a reason, or "". */
static const char *uneven_hint(const struct ctx *x, char *buf, size_t len)
{
    const struct cc_model *m = x->m;
    int pp = x->pp, v = x->v;
    long long S = (long long)pp * v;
    char split[128] = "", fill[300] = "", fw[64];
    struct cc_pplan f; /* only its text is read */
    buf[0] = 0;
    if (pp < 2 || x->fill || x->lfirst > 0 || x->split || x->hb->plan)
        return buf;
    if (pp > 2 && (m->layers + 2) % S == 0)
        snprintf(split, sizeof split, "split=1 makes %d slot%s per stage, the embedding and the "
                 "loss counting as one layer each", (m->layers + 2) / pp,
                 (m->layers + 2) / pp == 1 ? "" : "s");
    int mid, rest = first_last_rest(m->layers, pp, &mid);
    if (cc_pplan_fill(&f, m->layers, m->mtp, pp, v, fw, sizeof fw) == CC_OK)
        snprintf(fill, sizeof fill, "fill=1 places them as %s", f.text);
    else if (v == 1 && rest >= 2 && rest <= 2 * mid)
        snprintf(fill, sizeof fill, "first=F,last=L sets the first and last stage's layers");
    if (split[0] || fill[0])
        snprintf(buf, len, " (%s%s%s)", split, split[0] && fill[0] ? "; " : "", fill);
    return buf;
}

/* Divisibility and support rules; every failure is a reason (the first one is kept). */
static void check_structure(struct ctx *x, struct cc_eval *e)
{
    const struct cc_model *m = x->m;
    int gpn = x->c->gpus_per_node;
    int tp_max = x->hb->tp_max > 0 ? x->hb->tp_max : gpn;
    int tp = x->tp, pp = x->pp, v = x->v;
    char hint[448];

    /* what the model and the node allow first: a dp floored to fill the cluster (--explain
     * without dp) would otherwise hide it behind the product */
    if (m->heads % tp)
        why(e, "tp %d does not divide the %d attention heads", tp, m->heads);
    if (m->kv_heads % tp && tp % m->kv_heads)
        why(e, "tp %d neither divides the %d KV heads nor is a multiple of them", tp,
            m->kv_heads);
    if (tp < gpn && gpn % tp)
        why(e, "tp %d does not divide the %d GPUs of a node", tp, gpn);
    if (tp > tp_max)
        why(e, "tp %d is larger than %d (a node has %d GPUs; see --tp-max)", tp, tp_max, gpn);
    int slots = m->layers + (x->split ? 2 : 0);
    int fl = x->lfirst > 0;
    if (x->split && pp < 2)
        why(e, "split=1 (embedding and loss counted as layers) needs pp >= 2");
    if (x->fill && x->hb->plan && pp > 1)
        why(e, "fill=1 and an explicit pipeline layout (--pipeline-layout) do not go together: "
            "the layout places every layer");
    else if (x->fill && (fl || x->split))
        why(e, "fill=1 and %s are two ways to split the pipeline unevenly; give one",
            fl ? "first/last" : "split=1");
    else if (x->fill && !x->plan)
        why(e, "%s", x->fill_why);
    else if (fl && x->plan)
        why(e, "first/last and an explicit pipeline layout (--pipeline-layout) do not go "
            "together: the layout places every layer");
    else if (fl) { /* Megatron-LM's uneven first and last stage */
        long long mid = (long long)m->layers - x->lfirst - x->llast;
        if (pp < 2)
            why(e, "first/last (uneven pipeline stages) need pp >= 2");
        else if (pp == 2 && mid != 0)
            why(e, "first %d + last %d must be the %d layers with pp 2", x->lfirst, x->llast,
                m->layers);
        else if (pp > 2 && mid < pp - 2)
            why(e, "first %d + last %d leave %lld of the %d layers for the %d middle stages (at "
                "least one each)", x->lfirst, x->llast, mid < 0 ? 0 : mid, m->layers, pp - 2);
        else if (pp > 2 && mid % (pp - 2))
            why(e, "the %lld layers between first %d and last %d do not divide evenly into the "
                "%d middle stages", mid, x->lfirst, x->llast, pp - 2);
        else if (v > 1 && (x->lfirst % v || x->llast % v || (pp > 2 && (mid / (pp - 2)) % v)))
            why(e, "v %d does not divide the layers of every stage (first %d, middle %lld, last "
                "%d)", v, x->lfirst, pp > 2 ? mid / (pp - 2) : 0, x->llast);
    } else if (x->plan) {
        char pw[160];
        if (x->split)
            why(e, "split=1 and an explicit pipeline layout (--pipeline-layout) do not go "
                "together: the layout places the embedding and the loss");
        else if (cc_pplan_check(x->plan, m->layers, m->mtp, pp, pw, sizeof pw))
            why(e, "%s", pw);
        else if (v != x->plan->n / pp)
            why(e, "v %d: the pipeline layout's %d stages on pp %d make v %d", v, x->plan->n, pp,
                x->plan->n / pp);
    } else if (slots % pp)
        why(e, x->split ? "pp %d does not divide the %d slots (layers + embedding + loss)%s"
                        : "pp %d does not divide the %d layers%s", pp, slots,
            uneven_hint(x, hint, sizeof hint));
    if (x->cp > 1 && !m->flash_attn) /* the local s x s attention has no context-parallel form */
        why(e, "cp %d needs flash or fused attention (Megatron-LM's context parallelism runs "
            "inside Transformer Engine's attention); the model sets flash_attention false", x->cp);
    else if (x->cp > 1 && m->seq_len % (2 * x->cp)) /* Megatron: load-balanced, 2*cp chunks */
        why(e, "cp %d needs the sequence length %d to be a multiple of 2*cp = %d (Megatron-LM's "
            "load-balanced context parallelism)", x->cp, m->seq_len, 2 * x->cp);
    else if (x->sp && (m->seq_len / x->cp) % tp) /* the sequence dimension is split by tp */
        why(e, "sequence parallelism needs tp %d to divide the %d tokens per context-parallel "
            "rank", tp, m->seq_len / x->cp);
    if (cc_model_mla(m) && tp > 1 && !x->sp) /* its down projections run on 1/tp of the tokens */
        why(e, "latent attention with tp %d is costed with sequence parallelism only (sp=1)", tp);
    if (x->N != x->c->gpus)
        why(e, "tp*pp*dp*cp is %lld but the cluster has %d GPUs", x->N, x->c->gpus);
    if (m->global_batch % ((long long)x->dp * x->mb))
        why(e, "global batch %lld is not a multiple of dp*mb = %lld", m->global_batch,
            (long long)x->dp * x->mb);
    if (v > 1 && pp < 2)
        why(e, "an interleaved schedule (v=%d) needs a pipeline (pp > 1)", v);
    else if (v > 1 && pp < 3 && !x->hb->pp_overlap) /* blocking exchanges: no two sends
                                                      between the same two ranks at once */
        why(e, "an interleaved schedule (v=%d) with blocking pipeline sends (--pp-overlap 0) "
            "needs pp > 2 (Megatron-LM)", v);
    if (v > 1 && !fl && !x->plan && slots % ((long long)pp * v))
        why(e, x->split ? "v %d does not divide the %d slots per stage (layers + embedding + loss)%s"
                        : "v %d does not divide the %d layers per stage%s", v, slots / pp,
            uneven_hint(x, hint, sizeof hint));
    if (v > 1 && e->m % pp)
        why(e, "an interleaved schedule needs the micro-batch count (%lld) to be a multiple of "
            "pp %d", e->m, pp);
    if (x->hb->grad_accum > 0 && e->m != x->hb->grad_accum)
        why(e, "%lld micro-batches per step, but --grad-accum is %d", e->m, x->hb->grad_accum);
    if (cc_model_moe(m)) {
        if (m->experts % x->ep)
            why(e, "ep %d does not divide the %d experts", x->ep, m->experts);
        else if (((long long)tp * x->cp * x->dp) % ((long long)x->ep * x->etp))
            why(e, "ep %d x etp %d does not divide tp*cp*dp = %lld, the ranks of a pipeline "
                "stage that share the experts", x->ep, x->etp, (long long)tp * x->cp * x->dp);
        else if (m->moe_ffn % x->etp)
            why(e, "etp %d does not divide the experts' size %d", x->etp, m->moe_ffn);
        if (x->etp > 1 && m->mlp != CC_MLP_SWIGLU)
            why(e, "etp %d: Megatron-Core's experts take biases (a gelu model's) only with etp 1",
                x->etp);
        if (tp > 1 && !x->sp)
            why(e, "experts with tp %d need sequence parallelism (Megatron-Core)", tp);
        if (x->zero == 3)
            why(e, "ZeRO stage 3 with experts is not modelled");
    } else if (x->ep > 1 || x->etp > 1) {
        why(e, "%s %d: model '%s' has no experts", x->ep > 1 ? "ep" : "etp",
            x->ep > 1 ? x->ep : x->etp, m->name);
    }
    if (x->zero >= 2 && pp > 1)
        why(e, "ZeRO stage %d with pipeline parallelism is not supported (DeepSpeed, "
            "Megatron-LM)", x->zero);
    if (x->off != 0 && (x->pp > 1 || x->rc != CC_RC_NONE))
        why(e, "off=%d: activation offloading runs without a pipeline and without "
            "recomputation (Megatron-Core)", x->off);
    else if (x->off >= m->layers)
        why(e, "off=%d: offloading needs fewer layers than the model's %d", x->off, m->layers);
    if (x->peak <= 0) {
        why(e, "%s has no %s peak (choose another --precision or give --peak-tflops)",
            x->c->gpu_name, cc_prec_names[m->prec]);
        x->peak = 1e12; /* keep the numbers finite */
    }
}

/* How many of the first w forward chunk steps of an interleaved stage run model chunk k:
 * Megatron-LM runs chunk 0 for pp micro-batches, then chunk 1, ..., chunk v-1, and again. */
static double chunk_steps(double w, int pp, int v, int k)
{
    double cycle = (double)pp * v, full = floor(w / cycle), rem = w - full * cycle;
    return full * pp + fmin(fmax(rem - (double)k * pp, 0.0), pp);
}

/* Forward chunk steps in flight on stage r (pp > 1): Megatron-LM's warm-up count and the step
 * in progress, at most every chunk step (all of them in warm-up); before November 2024
 * Megatron-LM ran every stage's whole step as warm-up when m = pp, which the min gives only
 * for the first stages. */
static double warm_chunks(int r, int pp, int v, double mm)
{
    return v == 1 ? fmin(pp - r, mm) : fmin(2.0 * (pp - r - 1) + (v - 1.0) * pp + 1.0, mm * v);
}

double cc_inflight_layers(int r, int pp, int v, double slots, int short_chunk, double mm)
{
    if (pp == 1)
        return fmax(slots - (short_chunk >= 0 ? 1.0 : 0.0), 0.0);
    double w = warm_chunks(r, pp, v, mm);
    double layers = w * slots / v;
    if (short_chunk >= 0)
        layers -= v == 1 ? w : chunk_steps(w, pp, v, short_chunk);
    return fmax(layers, 0.0);
}

/* A stage of L layers, E of them with experts: the sum of a per-layer amount (a for an
 * expert layer, b for a dense one), and its mean per layer. Exact products where the stage's
 * layers are all of one kind. */
static double mix(double L, double E, double a, double b)
{
    return E >= L ? L * a : E <= 0.0 ? L * b : E * a + (L - E) * b;
}

static double mix1(double L, double E, double a, double b)
{
    return E >= L ? a : E <= 0.0 ? b : (E * a + (L - E) * b) / L;
}

/* Layers with experts on pipeline stage r (*E), and of its recomputed layers (*RE: rc=full
 * all, rc=block the first rcl of each of its model chunks, else none). Megatron-LM gives
 * stage r the model chunks c*pp + r of pp*v equal runs of slots (layers, and with the split
 * the embedding before the first and the loss after the last). */
static void stage_experts(const struct ctx *x, int r, double *E, double *RE)
{
    const struct cc_model *m = x->m;
    int pp = x->pp, v = x->v, off = x->split && pp > 2 ? 1 : 0;
    *E = *RE = 0.0;
    if (!cc_model_moe(m))
        return;
    double slots = m->layers + 2.0 * off, runs = (double)pp * v;
    /* uneven first and last stage: each round of chunks holds lfirst/v, then (middle
     * layers)/(v (pp - 2)) per middle stage, then llast/v (Megatron-Core's offsets) */
    double cf = x->lfirst / (double)v, cl = x->llast / (double)v;
    double cm = pp > 2 ? ((double)m->layers - x->lfirst - x->llast) / ((double)v * (pp - 2)) : 0.0;
    for (int c = 0; c < v; c++) {
        long long lo, hi;
        if (x->plan) {
            lo = cc_pplan_offset(x->plan, pp, r, c);
            hi = lo + cc_pplan_chunk(x->plan, pp, r, c);
        } else if (x->lfirst > 0) {
            double start = c * (cf + cm * (pp - 2) + cl) + (r > 0 ? cf + (r - 1) * cm : 0.0);
            double size = r == 0 ? cf : r == pp - 1 ? cl : cm;
            lo = (long long)floor(start + 1e-9), hi = (long long)floor(start + size + 1e-9);
        } else {
            double k = (double)c * pp + r;
            lo = (long long)floor(k * slots / runs + 1e-9) - off;
            hi = (long long)floor((k + 1.0) * slots / runs + 1e-9) - off;
        }
        lo = lo < 0 ? 0 : lo;
        hi = hi > m->layers ? m->layers : hi;
        if (lo >= hi)
            continue;
        long long n = cc_model_expert_layers_in(m, lo, hi);
        *E += (double)n;
        if (x->rc == CC_RC_FULL)
            *RE += (double)n;
        else if (x->rc == CC_RC_BLOCK && x->rcl > 0)
            *RE += (double)cc_model_expert_layers_in(m, lo, lo + x->rcl < hi ? lo + x->rcl : hi);
    }
}

/* Stages evaluated, in this order: the first; the last (pp > 1); the second (pp > 2, the
 * first of the middle ones: most micro-batches in flight among them). */
static int stages_evaluated(int pp)
{
    return pp < 3 ? pp : 3;
}

/* Whether the stages follow an explicit pipeline layout (given or filled) of pp x v stages. */
static int planned(const struct ctx *x)
{
    return x->plan && x->plan->n == x->pp * x->v;
}

/* Layers recomputed whole per micro-batch on stage r (-1: the middle one costed) of L
 * layers: all with full recomputation; with block, the first rcl of each of its v model
 * chunks (an explicit layout's chunks as it sizes them, each at most all of its own). */
static double recomputed_layers(const struct ctx *x, int r, double L)
{
    if (x->rc == CC_RC_FULL)
        return L;
    if (x->rc != CC_RC_BLOCK)
        return 0.0;
    if (!planned(x))
        return fmin((double)x->rcl * x->v, L);
    int q = r < 0 ? x->mid_r : r, R = 0;
    for (int c = 0; c < x->v; c++) {
        int n = cc_pplan_chunk(x->plan, x->pp, q, c);
        R += n < x->rcl ? n : x->rcl;
    }
    return R;
}

/* An explicit layout's largest model chunk: of stage r, or of all (r = -1). */
static int plan_chunk_max(const struct cc_pplan *p, int pp, int r)
{
    int most = 0;
    for (int k = 0; k < p->n; k++)
        if ((r < 0 || k % pp == r) && p->layers[k] > most)
            most = p->layers[k];
    return most;
}

/* The activations of stage r of an explicit layout under block recomputation of rcl layers
 * per chunk, from `act` kept without it: each chunk's recomputed layers times its steps in
 * flight free `saved` each (a kept layer's less a recomputed one's); a chunk recomputed whole
 * has no kept layer to make room for the one recomputed, which holds `kept` again. */
static double plan_block_act(const struct ctx *x, int r, int rcl, double act, double saved,
                             double kept)
{
    int pp = x->pp, v = x->v, whole = 0;
    double w = warm_chunks(r, pp, v, x->mm), n = 0.0;
    for (int c = 0; c < v; c++) {
        int k = cc_pplan_chunk(x->plan, pp, r, c);
        n += chunk_steps(w, pp, v, c) * (k < rcl ? k : rcl);
        whole |= k > 0 && k <= rcl;
    }
    return fmax(act - saved * n, 0.0) + (whole ? kept : 0.0);
}

/* Layers in flight on stage r (cc_inflight_layers; a middle stage, r = -1, as the second,
 * which holds the most micro-batches of them); with an explicit pipeline layout its chunks
 * as the layout sizes them, the middle stage being the one costed (mid_r: the most layers). */
static double stage_inflight(const struct ctx *x, int r, double slots, int short_chunk)
{
    int pp = x->pp, v = x->v;
    if (!planned(x))
        return cc_inflight_layers(r < 0 ? 1 : r, pp, v, slots, short_chunk, x->mm);
    int q = r < 0 ? x->mem_mid_r : r;
    double w = warm_chunks(q, pp, v, x->mm), layers = 0.0;
    for (int c = 0; c < v; c++)
        layers += chunk_steps(w, pp, v, c) * cc_pplan_chunk(x->plan, pp, q, c);
    return layers;
}

/* Weights, gradients, optimizer state and activations of the fullest pipeline stage: the
 * first (embedding, most micro-batches in flight), the second (a full complement of layers
 * when the first and last hold one fewer) or the last (output layer and logits). */
static void eval_memory(struct ctx *x, struct cc_eval *e)
{
    const struct cc_model *m = &x->mr, *d = &x->md;
    int tp = x->tp, pp = x->pp, v = x->v;
    double V = m->vocab;
    /* per layer: an expert layer's (every layer of a dense model, with Pe = 0) and a mixed
     * model's dense layer's (_d) */
    double Pe = cc_model_layer_expert_params(m); /* the routed experts, split by ep */
    double embed = cc_model_embed_params(m), outp = V * m->hidden;
    double norm = cc_model_final_norm_params(m);
    /* held whole by every tp rank (Megatron-LM): learned positions, a plain embedding
     * (LanguageModelEmbedding), and each layer's norms, row-parallel biases and router; the
     * vocabulary and the layers' matrices are split by tp */
    double pos = m->mlp == CC_MLP_GELU ? (double)m->seq_len * m->hidden : 0.0;
    double Pw = cc_model_layer_tp_whole_params(m), Pw_d = cc_model_layer_tp_whole_params(d);
    double Ps = cc_model_layer_params(m) - Pe - Pw; /* split by tp */
    double Ps_d = cc_model_layer_params(d) - Pw_d;
    /* [3]: a standalone MTP stage's rank, its layers before the MTP layers */
    const double L[4] = {x->Lf, x->Ll, x->Lm, x->Lx}, E[4] = {x->Ef, x->El, x->Em, x->Ex};
    double wf, wm, wl, wx = 0.0; /* held whole */
    if (pp == 1) {
        x->p_first = cc_model_params(m) - cc_model_mtp_params(m) - E[0] * (Pe + Pw) -
                     (L[0] - E[0]) * Pw_d - pos - norm;
        wf = pos + mix(L[0], E[0], Pw, Pw_d) + norm;
        x->p_mid = x->p_last = x->p_first, wm = wl = wf;
    } else {
        x->p_first = mix(L[0], E[0], Ps, Ps_d) + embed - pos, wf = mix(L[0], E[0], Pw, Pw_d) + pos;
        x->p_mid = mix(L[2], E[2], Ps, Ps_d), wm = mix(L[2], E[2], Pw, Pw_d);
        x->p_last = mix(L[1], E[1], Ps, Ps_d) + outp,
        wl = mix(L[1], E[1], Pw, Pw_d) + norm; /* tied: the last stage keeps its own copy */
    }
    x->p_first = x->p_first / tp + wf, x->p_mid = x->p_mid / tp + wm;
    x->p_last = x->p_last / tp + wl;
    x->p_mtp = 0.0, x->pe_mtp = 0.0;
    if (x->mtp_r >= 0)
        wx = mix(L[3], E[3], Pw, Pw_d), x->p_mtp = mix(L[3], E[3], Ps, Ps_d) / tp + wx;
    double egpus = (double)x->ep * x->etp; /* the GPUs one layer's routed experts span */
    x->pe_first = x->Ef * Pe / egpus, x->pe_mid = x->Em * Pe / egpus;
    x->pe_last = x->El * Pe / egpus, x->pe_mtp = x->Ex * Pe / egpus;
    x->p_first += x->pe_first, x->p_mid += x->pe_mid, x->p_last += x->pe_last;
    x->p_mtp += x->pe_mtp;
    /* multi-token prediction: its layers, norms and 2h -> h projection on the last stage (the
     * only one at pp = 1) or a standalone MTP stage, which also keeps a copy of the input
     * embedding (the output layer stays on the last) */
    int mtp_e = cc_model_mtp_experts(m);
    double nm = m->mtp > 0 ? m->mtp : 0.0, h = m->hidden;
    if (nm > 0) {
        double split = nm * ((mtp_e ? Ps : Ps_d) + 2.0 * h * h), whole = nm * ((mtp_e ? Pw : Pw_d) + 3.0 * h);
        double pe = nm * (mtp_e ? Pe : 0.0) / egpus;
        /* at pp > 1 the last stage builds the embedding for them; tied, it is the weight
         * the output layer uses, and Megatron-LM's output layer there still allocates its
         * own (unused, but a parameter with its gradient and optimizer state) */
        if (pp > 1)
            split += embed - pos, whole += pos;
        double add = split / tp + whole + pe;
        if (pp == 1) {
            wl += whole;
            x->p_first += add, x->pe_first += pe;
            x->p_mid = x->p_last = x->p_first, x->pe_mid = x->pe_last = x->pe_first;
        } else if (x->mtp_r >= 0) {
            wx += whole - pos;
            x->p_mtp += add, x->pe_mtp += pe;
        } else {
            wl += whole - pos;
            x->p_last += add, x->pe_last += pe;
        }
    }
    /* with sequence parallelism each tp rank's share of the tokens gives only part of the
     * gradients of what it holds whole (norms, row-parallel biases, a router, latent
     * attention's down projections and norms): Megatron-Core sums them over tp once the
     * backward pass is done; learned positions are gathered whole and need no sum */
    x->w_sync = x->sp && tp > 1 ? fmax(wf - pos, pp == 1 ? wl - pos : fmax(fmax(wm, wl), wx))
                                : 0.0;
    double unit = cc_layout_zero3_unit(m, tp);
    int block = x->rc == CC_RC_BLOCK;
    /* per layer, [0] an expert layer's, [1] a dense one's */
    double act[2], kept[2], saved[2] = {0.0, 0.0};
    for (int k = 0; k < 2; k++) {
        const struct cc_model *mk = k ? d : m;
        act[k] = cc_model_layer_act_bytes(mk, x->mb, x->s_loc, tp, x->sp, block ? CC_RC_NONE : x->rc);
        /* a layer recomputed whole holds its full activations again while its backward runs;
         * with block recomputation the first rcl layers of each chunk keep only their input,
         * and the backward pass reaches them after a kept layer of the chunk has let its
         * activations go, which makes room for the one being recomputed (but see the short
         * chunk below) */
        kept[k] = cc_model_layer_act_bytes(mk, x->mb, x->s_loc, tp, x->sp, CC_RC_NONE);
        if (block) /* per recomputed layer of a chunk in flight */
            saved[k] = kept[k] - cc_model_layer_act_bytes(mk, x->mb, x->s_loc, tp, x->sp, CC_RC_FULL);
    }
    x->logits = x->mb * x->s_loc * V * 6.0 / tp; /* 16-bit logits + fp32 softmax */

    /* Transformer Engine's fp8 copy of each linear weight and its transpose, kept across the
     * micro-batches (2 bytes per linear parameter of the stage; not with ZeRO 3, whose
     * gathered weights are let go) */
    double routed = Pe * (cc_model_moe(m) ? (double)m->topk / m->experts : 0.0);
    int fp8_cache = x->hb->fp8_cache && m->prec == CC_PREC_FP8 && x->zero < 3;
    /* what every tp rank holds whole (latent attention's down projections) is not divided by
     * tp; the router is no Transformer Engine layer and has no fp8 copy */
    double whole_e = cc_model_attn_whole_params(m);
    double whole_d = cc_model_attn_whole_params(d);
    double router = cc_model_moe(m) ? (double)m->hidden * m->experts : 0.0;
    double cache_e = fp8_cache ? 2.0 * ((cc_model_layer_matmul_params(m) - routed - router - whole_e) / tp +
                                        whole_e + Pe / ((double)x->ep * x->etp))
                               : 0.0;
    double cache_d = fp8_cache ? 2.0 * ((cc_model_layer_matmul_params(d) - whole_d) / tp + whole_d)
                               : 0.0;
    /* per stage (first, last, second, MTP): a layer's activations, as the stage's layers mix
     * expert and dense ones (the micro-batches in flight hold all its layers alike; with
     * interleaving the early chunks are more often in flight, which this averages over) */
    double a[4], kp[4], sv[4], work[4];
    for (int i = 0; i < 4; i++) {
        a[i] = mix1(L[i], E[i], act[0], act[1]);
        kp[i] = mix1(L[i], E[i], kept[0], kept[1]);
        sv[i] = mix1(L[i], E[i], saved[0], saved[1]);
        /* full recomputation: one layer whole at a time, the largest kind the stage has */
        work[i] = x->rc != CC_RC_FULL ? 0.0
                  : E[i] <= 0.0       ? kept[1]
                  : E[i] >= L[i]      ? kept[0]
                                      : fmax(kept[0], kept[1]);
    }
    /* w: model chunks in flight (forward steps not yet backward) */
    int xr = x->mtp_r >= 0 ? x->mtp_r : 0;
    struct { double p, pe, act, w; } st[4] = {
        {x->p_first, x->pe_first, a[0] * stage_inflight(x, 0, x->lfirst > 0 ? x->Lf : x->Lm, x->split ? 0 : -1) +
                         work[0] + (pp == 1 ? x->logits : 0.0),
         cc_inflight_layers(0, pp, v, v, -1, x->mm)},
        {x->p_last, x->pe_last, a[1] * stage_inflight(x, pp - 1, x->lfirst > 0 ? x->Ll : x->Lm, x->split ? v - 1 : -1) +
                                    work[1] + x->logits,
         cc_inflight_layers(pp - 1, pp, v, v, -1, x->mm)},
        {x->p_mid, x->pe_mid, a[2] * stage_inflight(x, -1, x->Lm, -1) + work[2],
         cc_inflight_layers(1, pp, v, v, -1, x->mm)},
        {x->p_mtp, x->pe_mtp, x->mtp_r >= 0 ? a[3] * stage_inflight(x, xr, x->Lx, -1) + work[3] : 0.0,
         cc_inflight_layers(xr, pp, v, v, -1, x->mm)},
    };
    double cache[4] = {mix(L[0], E[0], cache_e, cache_d), mix(L[1], E[1], cache_e, cache_d),
                       mix(L[2], E[2], cache_e, cache_d), mix(L[3], E[3], cache_e, cache_d)};
    if (nm > 0) { /* the MTP layers' activations and fp8 copies, on the last stage or their
                   * own (each micro-batch its last chunk holds in flight), the second
                   * logits on the last */
        int i = pp == 1 ? 0 : x->mtp_r >= 0 ? 3 : 1;
        double held = x->mtp_r >= 0 ? chunk_steps(warm_chunks(xr, pp, v, x->mm), pp, v, v - 1) : 1.0;
        /* beside the layer's own: recomputed (rc=full), the shifted tokens' embedding kept as
         * the second input of the checkpoint; else the inputs of the two norms and of the
         * 2h -> h projection (2h + 2h + 4h bytes a token, the projection's 2h in fp8; 1/tp of
         * the tokens with sequence parallelism). The final norm's input is left out, as the
         * decoder's own is */
        double tok = x->mb * x->s_loc / (x->sp ? tp : 1);
        double around = (x->rc == CC_RC_FULL ? 2.0 : m->prec == CC_PREC_FP8 ? 6.0 : 8.0) * h * tok;
        st[i].act += nm * held * ((mtp_e ? act[0] : act[1]) + around);
        if (x->rc == CC_RC_FULL && kept[mtp_e ? 0 : 1] > work[i]) { /* recomputed whole too */
            st[i].act += kept[mtp_e ? 0 : 1] - work[i];
            work[i] = kept[mtp_e ? 0 : 1];
        }
        st[pp == 1 ? 0 : 1].act += nm * x->logits;
        cache[i] += nm * ((mtp_e ? cache_e : cache_d) + (fp8_cache ? 2.0 * 2.0 * h * h / tp : 0.0));
    }
    int nst = stages_evaluated(pp) + (x->mtp_r >= 0 ? 1 : 0); /* the MTP stage is [3] */
    /* the expert all-to-all overlap (combined 1F1B) runs one more warm-up chunk on every stage
     * of an interleaved pipeline (Megatron-Core's schedule) */
    if (pp > 1 && ep_overlaps(x))
        for (int i = 0; i < nst; i++)
            st[i].act += a[i] * (x->lfirst > 0 || x->plan ? L[i] : x->Lm) / v, st[i].w += 1.0;
    double sw[4], sg[4], so[4], state[4]; /* weights (with the fp8 cache), gradients, optimizer */
    for (int i = 0; i < nst; i++) {
        cc_state_bytes(m, x->hb, st[i].p - st[i].pe, unit, x->zero, x->shard, &sw[i], &sg[i],
                       &so[i]);
        if (st[i].pe > 0) { /* the experts' state, sharded over the ranks that hold them */
            double ew, eg, eo;
            cc_state_bytes(m, x->hb, st[i].pe, unit, x->zero, x->eshard, &ew, &eg, &eo);
            sw[i] += ew, sg[i] += eg, so[i] += eo;
        }
        sw[i] += cache[i];
        state[i] = sw[i] + sg[i] + so[i];
    }
    e->mem_limit = x->c->mem_bytes * (1.0 - x->hb->mem_margin);
    if (block) {
        /* the first rcl layers of each chunk recomputed (Megatron-LM checkpoints a chunk's
         * layers below rcl, all of a chunk that has no more): 1 to the largest chunk's layers
         * less one (all of them everywhere is rc=full); unless given, the fewest with which
         * every stage fits. A stage's chunks hold L/v layers (the first, last, second) */
        int cs[4] = {0, 0, 0, 0}, chunk = 0, plan = planned(x);
        const int rk[4] = {0, pp - 1, x->mem_mid_r, xr};
        for (int i = 0; i < nst; i++) {
            cs[i] = plan ? plan_chunk_max(x->plan, pp, rk[i])
                         : (int)floor((x->lfirst > 0 ? L[i] : x->Lm) / v + 1e-9);
            chunk = cs[i] > chunk ? cs[i] : chunk;
        }
        if (plan) /* one count for every chunk of every stage */
            chunk = plan_chunk_max(x->plan, pp, -1);
        if (chunk < 2)
            why(e, "rc=block recomputes some of a model chunk's layers, and a chunk here has "
                "%d (rc=full recomputes it whole)", chunk);
        else if (x->rcl >= chunk)
            why(e, "rcl %d: the largest model chunk here has %d layers, and block recomputation "
                "keeps at least one (rc=full recomputes them all)", x->rcl, chunk);
        if (x->rcl <= 0 && plan) { /* chunks of several sizes: the fewest that fit, by trial */
            for (x->rcl = 1; x->rcl < chunk - 1; x->rcl++) {
                int fits = 1;
                for (int i = 0; i < nst; i++)
                    fits &= state[i] + plan_block_act(x, rk[i], x->rcl, st[i].act, sv[i], kp[i]) <=
                            e->mem_limit;
                if (fits)
                    break;
            }
        } else if (x->rcl <= 0) {
            double need = 1.0;
            for (int i = 0; i < nst; i++)
                if (sv[i] > 0 && st[i].w > 0)
                    need = fmax(need, ceil((state[i] + st[i].act - e->mem_limit) /
                                           (sv[i] * st[i].w) - 1e-9));
            x->rcl = (int)fmax(1.0, fmin(need, chunk - 1.0));
        }
        for (int i = 0; plan && i < nst; i++)
            st[i].act = plan_block_act(x, rk[i], x->rcl, st[i].act, sv[i], kp[i]);
        for (int i = 0; !plan && i < nst; i++) {
            int r = x->rcl < cs[i] ? x->rcl : cs[i];
            st[i].act = fmax(st[i].act - sv[i] * r * st[i].w, 0.0);
            /* a chunk recomputed whole keeps no layer whose activations make room for the one
             * recomputed: an uneven stage's short chunks where rcl reaches them, and with the
             * split the first and the last stage's chunk of one layer fewer */
            if (x->rcl >= cs[i] - (x->split && i < 2 ? 1 : 0))
                st[i].act += kp[i];
        }
        e->rcl = x->rcl;
    }
    if (x->off != 0 && pp == 1) {
        /* Megatron-Core (Transformer Engine's offload context) copies the first `off` layers'
         * activations to host memory as the forward pass goes, and back ahead of the backward
         * pass: they leave the GPU but for the layer in transit, which is gone before the
         * logits are formed and comes back after they are (so only what it holds beyond them
         * counts); unless given, the fewest layers with which it fits */
        int most = m->layers - 1;
        double largest = E[0] <= 0.0 ? act[1] : E[0] >= L[0] ? act[0] : fmax(act[0], act[1]);
        double transit = fmax(largest - x->logits, 0.0);
        if (x->off < 0) {
            double need = a[0] > 0 ? ceil((state[0] + st[0].act + transit - e->mem_limit) /
                                          a[0] - 1e-9)
                                   : 1.0;
            x->off = (int)fmax(1.0, fmin(need, most));
        }
        int k = x->off < most ? x->off : most;
        /* the first k layers: a mixed model's dense ones first */
        double ke = cc_model_moe(m) ? (double)cc_model_expert_layers_in(m, 0, k) : 0.0;
        double bytes = mix(k, ke, act[0], act[1]);
        st[0].act = fmax(st[0].act - bytes + transit, 0.0);
        e->off = x->off;
        e->off_bytes = bytes;
    }
    double best = -1;
    for (int i = 0; i < nst; i++) {
        double tot = state[i] + st[i].act;
        e->mem_stages[i] = tot;
        if (tot > best) { /* ties: the first stage named */
            best = tot;
            e->mem_stage = i;
            e->mem_weights = sw[i], e->mem_grads = sg[i], e->mem_optim = so[i];
            e->mem_act = st[i].act;
        }
    }
    e->mem_total = best;
    /* pp 3 with the MTP layers on rank 1: the middle row is that rank without them, less
     * than the MTP row and no GPU's: not listed */
    if (x->mtp_r >= 0 && x->mid_r == x->mtp_r && x->mem_mid_r == x->mtp_r)
        e->mem_stages[2] = 0.0;
    char where[48];
    if (e->mem_stage == 3)
        snprintf(where, sizeof where, "stage %d (the MTP layers')", x->mtp_r);
    else
        snprintf(where, sizeof where, "the %s stage", cc_stage_name(e->mem_stage));
    if (e->mem_total > e->mem_limit)
        why(e, "needs %.1f GB per GPU on %s, more than %.1f GB (%.0f GB less the "
            "%.0f%% margin)", e->mem_total / 1e9, where,
            e->mem_limit / 1e9, x->c->mem_bytes / 1e9, x->hb->mem_margin * 100);
    e->host_limit = x->c->host_mem_bytes * (1.0 - x->hb->mem_margin);
    if (e->off_bytes > e->host_limit)
        why(e, "offloads %.1f GB of activations per GPU to host memory, more than %.1f GB "
            "(%.0f GB per GPU less the %.0f%% margin; --host-mem-gb)", e->off_bytes / 1e9,
            e->host_limit / 1e9, x->c->host_mem_bytes / 1e9, x->hb->mem_margin * 100);
}

/* Step time: micro-batches on the slowest stage, bubble, gradient reduction, optimizer.
 * Returns 1 if the step would last over 1e9 s (about 30 years) or for ever. */
static int eval_time(const struct ctx *x, struct cc_eval *e)
{
    const struct cc_model *m = x->m;
    const struct cc_cluster *c = x->c;
    const struct cc_habits *hb = x->hb;
    int tp = x->tp, pp = x->pp, cp = x->cp, v = x->v, sp = x->sp, shard = x->shard;
    double mm = x->mm, s_loc = x->s_loc, h = m->hidden, mb = x->mb;
    /* fp8 training casts only the transformer's linear layers: attention and logits stay
     * 16-bit (at the bf16 peak; half the fp8 one where the table has none, as on every GPU
     * with fp8 so far) */
    int fp8 = m->prec == CC_PREC_FP8;
    double rate = x->peak * (fp8 ? hb->efficiency_fp8 : hb->efficiency);
    double peak16 = !fp8 ? x->peak
                    : c->peak_flops[CC_PREC_BF16] > 0 ? c->peak_flops[CC_PREC_BF16] : x->peak / 2;
    double rate16 = peak16 * hb->efficiency;
    /* attention kernels (flash attention above all) reach their own fraction of it */
    double rate_attn = peak16 * cc_habits_attn_efficiency(hb);
    double hbm = c->hbm_Bps > 0 ? c->hbm_Bps : 2e12;
    int sms = hb->gemm_waves ? c->sms : 0;

    /* compute per micro-batch: GEMMs (shape-aware), element-wise work at memory speed; [0] a
     * layer whose activations are kept (forward, backward: 3 passes), [1] one recomputed
     * whole (a second forward) */
    const struct cc_model *mr = &x->mr; /* K/V heads as one rank holds them */
    int use[2] = {x->rc != CC_RC_FULL, x->rc == CC_RC_FULL || x->rc == CC_RC_BLOCK};
    /* [0] an expert layer (every layer of a dense model), [1] a mixed model's dense layer;
     * with experts the tensor-parallel MLP is the shared expert's (if any), and the routed
     * experts and the router come beside it */
    struct cc_model mlp[2] = {*mr, x->md};
    if (cc_model_moe(m))
        mlp[0].ffn = m->shared_ffn;
    /* selective recomputation's modules (core_attn: the attention products once more) */
    unsigned mods = x->rc == CC_RC_SELECTIVE ? cc_model_rc_modules(mr) : 0;
    double t_layer[2][2];
    for (int k = 0; k < 2; k++) {
        const struct cc_model *mk = k ? &x->md : mr;
        double traffic = ELEMWISE_TRAFFIC * cc_model_layer_traffic_bytes(mk, mb, s_loc, tp, sp) / hbm;
        t_layer[k][0] = use[0] ? cc_layer_gemm_time(&mlp[k], mb, s_loc, tp, rate, rate_attn, sms, 1,
                                                    (mods & CC_RCM_CORE_ATTN) != 0) +
                                     cc_expert_gemm_time(mk, mb, s_loc, tp, x->ep, rate, sms, 1) +
                                     3.0 * traffic
                               : 0.0;
        t_layer[k][1] = use[1] ? cc_layer_gemm_time(&mlp[k], mb, s_loc, tp, rate, rate_attn, sms, 2, 0) +
                                     cc_expert_gemm_time(mk, mb, s_loc, tp, x->ep, rate, sms, 2) +
                                     4.0 * traffic
                               : 0.0;
    }
    double t_logit = cc_logit_gemm_time(mr, mb, s_loc, tp, rate16, sms) +
                     ELEMWISE_TRAFFIC * 3.0 * x->logits / hbm;
    /* communication per layer and micro-batch */
    double tp_layer[2][2] = {{0, 0}, {0, 0}}, cp_layer[2] = {0, 0}, ep_layer[2] = {0, 0};
    /* one pass's expert communication: the routed tokens go to their experts' GPUs and come
     * back (dispatch and combine, all-to-all over the ep group, whose ranks are etp apart);
     * with expert tensor parallelism the etp ranks of an expert then all-gather what reached
     * them and reduce-scatter the results */
    double a2a = 0.0, etp_pair = 0.0;
    if (x->ep > 1)
        a2a = 2.0 * cc_comm_time(c, CC_ALLTOALL, x->ep, per_node(c, x->ep, x->etp),
                                 cc_expert_a2a_bytes(mr, mb, s_loc, tp));
    if (x->etp > 1) { /* on the compute stream, beside no other micro-batch: costed with tp */
        double routed = cc_expert_a2a_bytes(mr, mb, s_loc, tp) * x->etp; /* gathered */
        int pn = per_node(c, x->etp, 1);
        etp_pair = cc_comm_time(c, CC_ALLGATHER, x->etp, pn, routed) +
                   cc_comm_time(c, CC_REDUCESCATTER, x->etp, pn, routed);
    }
    /* forward and backward, and a recomputed forward */
    ep_layer[0] = 2.0 * a2a, ep_layer[1] = 3.0 * a2a;
    double pp_mb = 0, pp_shapes = 0, pp_hop = 0, z3_mb = 0, tp_embed = 0, tp_output = 0;
    double one = 0.0; /* one tensor-parallel pair of collectives around a linear block */
    if (tp > 1) {
        double S = mb * s_loc * h * 2.0; /* 16-bit activations */
        int pn = per_node(c, tp, 1);
        one = sp ? cc_comm_time(c, CC_ALLGATHER, tp, pn, S) +
                       cc_comm_time(c, CC_REDUCESCATTER, tp, pn, S)
                 : cc_comm_time(c, CC_ALLREDUCE, tp, pn, S);
        /* per pass, a pair around the attention and one around the MLP; with experts (expert
         * tensor parallelism 1) the router and the experts work on the rank's own tokens and
         * only a shared expert, split over tp, gathers and scatters */
        for (int k = 0; k < 2; k++) { /* [1]: a dense layer's two pairs */
            double pairs = !k && cc_model_moe(m) && m->shared_ffn == 0 ? 1.0 : 2.0;
            tp_layer[k][0] = 2.0 * pairs * one; /* forward and backward */
            tp_layer[k][1] = 3.0 * pairs * one; /* and the recomputed forward */
        }
        /* outside the layers (not recomputed): the vocabulary-parallel embedding sums the tp
         * ranks' lookups (an all-reduce; with sequence parallelism a reduce-scatter, and an
         * all-gather of its gradient; with learned positions Megatron-Core all-reduces before
         * adding them and only then splits the sequence, whose gradient is all-gathered);
         * the output layer's input gradient is all-reduced
         * (with sequence parallelism its input all-gathered, the gradient reduce-scattered);
         * the vocabulary-parallel cross entropy all-reduces three fp32 values per token
         * (the maximum logit, the target's logit, the sum of exponentials) */
        tp_embed = sp && m->mlp == CC_MLP_GELU
                       ? cc_comm_time(c, CC_ALLREDUCE, tp, pn, S) +
                             cc_comm_time(c, CC_ALLGATHER, tp, pn, S)
                       : one;
        tp_output = one + 3.0 * cc_comm_time(c, CC_ALLREDUCE, tp, pn, mb * s_loc * 4.0);
        if (sp && hb->tp_overlap) {
            /* pipelined with the linear layers beside them: only what outlasts those GEMMs
             * shows, and never less than one of the tp chunks */
            for (int j = 0; j < 2; j++)
                for (int k = 0; k < 2; k++) {
                    if (!use[k])
                        continue;
                    double lin = cc_layer_gemm_time(&mlp[j], mb, s_loc, tp, rate, INFINITY, sms,
                                                    k + 1, 0); /* the tensor-parallel GEMMs only */
                    tp_layer[j][k] = fmax(tp_layer[j][k] - lin, tp_layer[j][k] / tp);
                }
        }
    }
    if (cp > 1) {
        /* K and V of this rank's heads (its tp share; replicated heads count once each) */
        double kv = cc_model_mla(m)
                        ? mb * s_loc * ((double)m->heads / tp *
                                        ((double)m->qk_nope + m->qk_rope + m->v_dim)) * 2.0
                        : mb * s_loc * 2.0 * ((double)x->mr.kv_heads / tp * cc_model_head_dim(m)) * 2.0;
        int pn = per_node(c, cp, tp);
        /* gathered in the forward pass, again in the backward (only this rank's K/V are
         * saved) and once more in a recomputed forward; their gradients reduce-scattered */
        double ag = cc_comm_time(c, CC_ALLGATHER, cp, pn, kv * cp);
        double rs = cc_comm_time(c, CC_REDUCESCATTER, cp, pn, kv * cp);
        cp_layer[0] = 2.0 * ag + rs, cp_layer[1] = 3.0 * ag + rs;
    }
    /* expert tensor parallelism's gather and scatter of an expert layer's routed tokens, per
     * pass: on the compute stream (Megatron-Core runs them inside the experts' part, which
     * the all-to-all overlap does not hide), so with the tensor-parallel collectives */
    tp_layer[0][0] += 2.0 * etp_pair, tp_layer[0][1] += 3.0 * etp_pair;
    /* selective recomputation beyond the attention products (Megatron-Core
     * --recompute-modules): each module's forward again in the backward pass, with the
     * collectives inside it (a dense MLP's or the shared expert's tp pair, the experts'
     * dispatch and combine); element-wise modules at memory speed */
    for (int k = 0; k < 2 && (mods & ~(unsigned)CC_RCM_CORE_ATTN); k++) {
        const struct cc_model *mk = k ? &x->md : mr;
        int moe = cc_model_moe(mk), mla = cc_model_mla(mk);
        double T = mb * s_loc, own = T / (sp ? tp : 1), again = 0.0, coll = 0.0, bytes = 0.0;
        double n = mk->heads;
        double up = mk->mlp == CC_MLP_SWIGLU ? 2.0 : 1.0; /* gate and up fused */
        if (mla && (mods & CC_RCM_MLA_UP_PROJ)) {
            if (mk->q_lora > 0)
                again += cc_gemm_time(T, n * ((double)mk->qk_nope + mk->qk_rope) / tp, mk->q_lora,
                                      1, rate, sms, 1, 0);
            again += cc_gemm_time(T, n * ((double)mk->qk_nope + mk->v_dim) / tp, mk->kv_lora, 1,
                                  rate, sms, 1, 0);
        }
        double mlp_ffn = !moe && (mods & CC_RCM_MLP) ? mk->ffn
                         : moe && (mods & (CC_RCM_MOE | CC_RCM_SHARED_EXPERTS)) ? mk->shared_ffn
                                                                                : 0.0;
        if (mlp_ffn > 0) { /* a dense MLP or the shared expert, split over tp */
            again += cc_gemm_time(T, up * mlp_ffn / tp, h, 1, rate, sms, 1, 0) +
                     cc_gemm_time(T, h, mlp_ffn / tp, 1, rate, sms, 1, 0);
            coll += one;
        }
        if (moe && (mods & CC_RCM_MOE)) {
            /* forward only: two forwards less one */
            again += cc_expert_gemm_time(mk, mb, s_loc, tp, x->ep, rate, sms, 2) -
                     cc_expert_gemm_time(mk, mb, s_loc, tp, x->ep, rate, sms, 1);
            ep_layer[0] += a2a, tp_layer[0][0] += etp_pair; /* one pass's again */
        } else if (moe && (mods & CC_RCM_MOE_ACT)) {
            /* each routed copy: read the first GEMM's output, write the activation */
            bytes += (up + 1.0) * 2.0 * mk->moe_ffn * mk->topk * cc_model_route_skew(mk) * T / tp;
        }
        if (mods & CC_RCM_LAYERNORM) /* read the input, write the output */
            bytes += ((moe ? 1.0 : 0.0) + (mla ? 1.0 : 0.0)) * 4.0 * h * own;
        t_layer[k][0] += again + bytes / hbm;
        tp_layer[k][0] += coll;
    }
    if (pp > 1) {
        /* with sequence parallelism each tp rank holds 1/tp of the activations and sends it;
         * without, each sends them whole, or 1/tp of them with Megatron-LM 2021's
         * scatter/gather */
        int split = sp || (tp > 1 && hb->pp_scatter);
        double S = mb * s_loc * h * 2.0 / (split ? tp : 1);
        long long stride = (long long)tp * cp * x->dp;
        /* the exchanges are synchronous: one hop across nodes sets the pace of them all; a
         * node's GPUs of one stage (all of them, or the stride when stages are narrower than
         * a node) send across it at once */
        int across = !group_in_node(c, pp, stride);
        int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
        pp_mb = 2.0 * v * cc_p2p_time(c, across, stride < gpn ? (int)stride : gpn, S);
        /* scatter/gather: the receiving stage all-gathers the tp slices over its node's links
         * before it can compute (once per receive: forward and backward, per chunk) */
        if (tp > 1 && !sp && hb->pp_scatter)
            pp_mb += 2.0 * v * cc_comm_time(c, CC_ALLGATHER, tp, per_node(c, tp, 1), S * tp);
        /* a standalone MTP stage: its exchange with the next stage carries the MTP layers'
         * hidden states beside the model's, forward and back (charged to the two stages it
         * joins, below); and Megatron-Core exchanges each tensor's shape before it (their
         * sizes vary), blocking (it synchronises the device), which no overlap hides */
        if (x->mtp_r >= 0) {
            int n = stride < gpn ? (int)stride : gpn;
            pp_hop = 2.0 * (cc_p2p_time(c, across, n, S * (1.0 + m->mtp)) -
                            cc_p2p_time(c, across, n, S));
            pp_shapes = 2.0 * v * cc_p2p_time(c, across, n, 3.0 * 8.0);
        }
    }
    /* the slowest stage sets the pace: first (embedding), a middle one (all its layers) or
     * the last (logits); each adds its weight gradients into the buffer once per micro-batch
     * unless the GEMM accumulates in place */
    /* [3]: a mixed model's middle stage with the fewest expert layers, for its time alone
     * (where its dense layers are the slower kind; its weights are taken as [2]'s, more);
     * then a standalone MTP stage (set below) */
    struct { double layers, experts, extra, tp, params, pe, ep, cp, pp; } st[5] = {
        {x->Lf, x->Ef, pp == 1 ? t_logit : 0.0, tp_embed + (pp == 1 ? tp_output : 0.0),
         x->p_first, x->pe_first, 0.0, 0.0},
        {x->Ll, x->El, t_logit, tp_output, x->p_last, x->pe_last, 0.0, 0.0},
        {x->Lm, x->Em, 0.0, 0.0, x->p_mid, x->pe_mid, 0.0, 0.0},
        {x->Lm, x->Em_lo, 0.0, 0.0, x->p_mid, x->pe_mid, 0.0, 0.0},
        {0},
    };
    int nst = stages_evaluated(pp) + (x->mid_lo_r >= 0 ? 1 : 0);
    int rank[5] = {0, pp - 1, x->mid_r, x->mid_lo_r, -1};
    if (x->mtp_r >= 0) { /* a standalone MTP stage: its own layers, the MTP layers below */
        st[nst].layers = x->Lx, st[nst].experts = x->Ex;
        st[nst].params = x->p_mtp, st[nst].pe = x->pe_mtp;
        st[nst].pp = st[1].pp = pp_hop;
        rank[nst++] = x->mtp_r;
    }
    if (m->mtp > 0) {
        /* multi-token prediction on the last stage or a standalone one: per layer a layer of
         * the last layer's kind (recomputed with full recomputation; Megatron-LM's block
         * method leaves it alone), the embedding lookup of the shifted tokens, its 2h -> h
         * projection and their collectives; the output layer again on the last stage */
        int k = cc_model_mtp_experts(m) ? 0 : 1, f = x->rc == CC_RC_FULL;
        int i = pp == 1 ? 0 : x->mtp_r >= 0 ? nst - 1 : 1;
        double nfw = f ? 2 : 1;
        double proj = cc_gemm_time(mb * s_loc, h / tp, 2.0 * h, 1, rate, sms, (int)nfw, 1);
        double eh = 0.0;
        if (tp > 1) {
            /* the projection is column-parallel: with sequence parallelism its 2h input is
             * all-gathered each forward and its gradient reduce-scattered, without it the
             * gradient all-reduced; its h/tp output is all-gathered each forward, and with
             * sequence parallelism split again, whose gradient is all-gathered backward */
            int pn = per_node(c, tp, 1);
            double S = mb * s_loc * h * 2.0;
            double in = sp ? nfw * cc_comm_time(c, CC_ALLGATHER, tp, pn, 2.0 * S) +
                                 cc_comm_time(c, CC_REDUCESCATTER, tp, pn, 2.0 * S)
                           : cc_comm_time(c, CC_ALLREDUCE, tp, pn, 2.0 * S);
            eh = in + (nfw + (sp ? 1.0 : 0.0)) * cc_comm_time(c, CC_ALLGATHER, tp, pn, S);
        }
        st[i].extra += m->mtp * (t_layer[k][f] + proj);
        st[i].tp += m->mtp * (tp_layer[k][f] + tp_embed + eh);
        st[i].ep += k == 0 ? m->mtp * ep_layer[f] : 0.0;
        st[i].cp += m->mtp * cp_layer[f];
        st[pp == 1 ? 0 : 1].extra += m->mtp * t_logit;
        st[pp == 1 ? 0 : 1].tp += m->mtp * tp_output;
    }
    /* of each stage's recomputed layers, those with experts (a mixed model: as its chunks
     * place them; else all or none) */
    double RE[5] = {-1.0, -1.0, -1.0, -1.0, -1.0}, unused;
    if (cc_model_mixed(m))
        for (int i = 0; i < nst; i++)
            stage_experts(x, rank[i], &unused, &RE[i]);
    double comp = 0, tp_mb = 0, cp_mb = 0, ep_mb = 0, pp_row = 0, slowest = -1, p_max = 0, pe_max = 0;
    double passes = 3.0, ep_hide = 0.0;
    /* combined 1F1B (--ep-overlap): the forward of one micro-batch and the backward of
     * another run as pairs, module by module, each one's all-to-alls beside the other's
     * compute (the forward's two per layer behind the backward's compute, the backward's
     * behind the forward's), at best; the warm-up forwards have no partner: all micro-batches
     * but one at pp = 1, else the first stage's 2(pp-1) + (v-1)pp chunks and the one more
     * that Megatron-Core runs with the overlap, of m x v */
    double paired = 0.0;
    if (ep_overlaps(x)) {
        double chunks = mm * v, warm = pp == 1 ? 1.0 : 2.0 * (pp - 1) + (double)(v - 1) * pp + 1;
        paired = fmax(0.0, chunks - warm) / chunks;
    }
    for (int i = 0; i < nst; i++) {
        double L = st[i].layers, R = recomputed_layers(x, rank[i], L), K = L - R;
        double Re = RE[i] >= 0.0 ? fmin(RE[i], fmin(R, st[i].experts))
                    : st[i].experts > 0.0 ? R : 0.0;
        double Ke = st[i].experts - Re; /* expert layers kept, recomputed */
        double ci = mix(K, Ke, t_layer[0][0], t_layer[1][0]) +
                    mix(R, Re, t_layer[0][1], t_layer[1][1]) + st[i].extra +
                    cc_grad_accum_time(hb, st[i].params, hbm);
        double ti = mix(K, Ke, tp_layer[0][0], tp_layer[1][0]) +
                    mix(R, Re, tp_layer[0][1], tp_layer[1][1]) + st[i].tp;
        double ki = K * cp_layer[0] + R * cp_layer[1] + st[i].cp;
        double ei = Ke * ep_layer[0] + Re * ep_layer[1] + st[i].ep;
        double pi = 3.0 + (L > 0 ? R / L : 0.0); /* fwd, bwd (2x), the recomputed share */
        double hi = paired * (fmin(ei / 2.0, ci * (pi - 1.0) / pi) + fmin(ei / 2.0, ci / pi));
        if (ci + ti + ki + ei - hi + st[i].pp > slowest) { /* each stage after what it hides */
            slowest = ci + ti + ki + ei - hi + st[i].pp;
            comp = ci, tp_mb = ti, cp_mb = ki, ep_mb = ei, ep_hide = hi, passes = pi;
            pp_row = st[i].pp;
        }
        if (st[i].params > p_max)
            p_max = st[i].params, pe_max = st[i].pe;
    }
    pp_mb += pp_row; /* the MTP stage's larger exchange, where a stage it joins sets the pace */
    /* activation offloading: each offloaded layer's activations go to host memory behind the
     * forward pass and come back behind the backward pass; what the link cannot move in that
     * time shows */
    double t_off = 0.0;
    if (e->off_bytes > 0 && c->host_Bps > 0) {
        double xfer = e->off_bytes / c->host_Bps;
        t_off = fmax(0.0, xfer - comp / passes) + fmax(0.0, xfer - comp * (passes - 1.0) / passes);
        comp += t_off;
    }
    e->t_offload = mm * t_off;
    double dp_bytes_g = p_max * hb->grad_bytes;
    double dp_bytes_w = p_max * 2.0;
    int pn_dp = per_node(c, shard, tp);
    if (x->zero == 3 && shard > 1) {
        /* gather each unit's weights for the forward and the backward pass and scatter its
         * gradients: a collective per unit (a layer; the embedding and the output layer),
         * each paying its ring latency */
        /* MTP layers: one unit each and the embedding's copy, on the last stage or their own */
        double nm = m->mtp > 0 ? m->mtp : 0.0, un = nm > 0 ? nm + 1.0 : 0.0;
        double units = pp == 1 ? m->layers + nm + (m->tied_embed ? 1.0 : 2.0)
                       : x->mtp_r >= 0
                           ? ceil(fmax(fmax(x->Lf + 1.0, x->Lx + un), fmax(x->Lm, x->Ll + 1.0)))
                           : ceil(fmax(x->Lf + 1.0, fmax(x->Lm, x->Ll + 1.0 + un)));
        e->z3_units = (int)units;
        double z3 = units * (2.0 * cc_comm_time(c, CC_ALLGATHER, shard, pn_dp, dp_bytes_w / units) +
                             cc_comm_time(c, CC_REDUCESCATTER, shard, pn_dp, dp_bytes_g / units));
        z3_mb = fmax(0.0, z3 - comp); /* prefetching hides it behind compute */
    }
    if (v > 1 && hb->pp_overlap) /* the interleaved schedule sends while other chunks run */
        pp_mb = fmax(0.0, pp_mb - comp);
    pp_mb += pp_shapes;
    ep_mb -= ep_hide;
    e->t_ep_hidden = mm * ep_hide;
    double t_mb = comp + tp_mb + cp_mb + ep_mb + pp_mb + z3_mb;

    e->t_compute = mm * comp;
    e->t_tp = mm * tp_mb;
    e->t_cp = mm * cp_mb;
    e->t_ep = mm * ep_mb;
    e->t_pp = mm * pp_mb;
    /* the warm-up and cool-down chunks that make the bubble run without a partner */
    e->t_bubble = cc_bubble_time(pp, v, t_mb + ep_hide);
    e->t_dp = mm * z3_mb;

    /* gradient reduction once per step (ZeRO 0-2), in buckets; ZeRO 2 keeps only its shard
     * of the gradients, so every earlier micro-batch reduce-scatters its own too (DeepSpeed
     * refuses no_sync with stage 2), each behind its backward pass where that overlaps */
    /* the routed experts' gradients go over the ranks that hold the same experts (eshard,
     * ep apart), the rest over the data-parallel ranks; one stream of buckets */
    const struct { int n, pn; double p; } grp[2] = {
        {shard, pn_dp, p_max - pe_max},
        {x->eshard, per_node(c, x->eshard, (int)fmin((double)x->ep * x->etp, 1e9)), pe_max}};
    double nb = 0, ar = 0, rs = 0, ag = 0;
    double bucket = (double)(hb->bucket_bytes ? hb->bucket_bytes : 1);
    for (int g = 0; g < 2 && x->zero < 3; g++) {
        if (grp[g].n < 2 || grp[g].p <= 0)
            continue;
        double bytes_g = grp[g].p * hb->grad_bytes, bytes_w = grp[g].p * 2.0;
        double k = ceil(bytes_g / bucket);
        nb += k;
        if (x->zero == 0) {
            ar += k * cc_comm_time(c, CC_ALLREDUCE, grp[g].n, grp[g].pn, bytes_g / k);
        } else { /* ZeRO 1-2: reduce-scatter the gradients, all-gather the new weights */
            rs += k * cc_comm_time(c, CC_REDUCESCATTER, grp[g].n, grp[g].pn, bytes_g / k);
            ag += k * cc_comm_time(c, CC_ALLGATHER, grp[g].n, grp[g].pn, bytes_w / k);
        }
    }
    if (nb > 0) {
        /* the reduction hides behind the last backward pass (with its recomputed forward);
         * ZeRO 1-2's all-gather of the updated weights waits for the optimizer step, and at
         * best hides behind the next step's first forward pass (--overlap-param-gather) */
        int overlap = cc_habits_dp_overlaps(hb, pp);
        double win_b = overlap ? (passes - 1.0) / passes * comp : 0.0;
        double win_f = overlap ? comp / passes : 0.0;
        if (x->zero == 0)
            e->t_dp += fmax(ar / nb, ar - win_b);
        else
            e->t_dp += fmax(rs / nb, rs - win_b) + fmax(ag / nb, ag - win_f);
        if (x->zero == 2 && mm > 1)
            e->t_dp += (mm - 1.0) * fmax(rs / nb, rs - win_b);
    }
    e->t_dp += cc_embed_sync_time(mr, c, hb, tp, pp, (long long)tp * cp * x->dp, x->mtp_r >= 0);
    if (x->w_sync > 0) /* the whole-held parameters' gradient sums over tp */
        e->t_dp += cc_comm_time(c, CC_ALLREDUCE, tp, per_node(c, tp, 1), x->w_sync * hb->grad_bytes);
    double p_opt = (p_max - pe_max) / (x->zero >= 1 ? shard : 1) +
                   pe_max / (x->zero >= 1 ? x->eshard : 1);
    /* the optimizer reads the gradient; with an fp32 copy of 16-bit reduced gradients it
     * first casts them into it (read 16-bit, write fp32), then reads the copy */
    double g_bytes = hb->main_grad_bytes > 0 ? hb->grad_bytes + 2.0 * hb->main_grad_bytes
                                              : hb->grad_bytes;
    e->t_opt = p_opt * ((m->optim == CC_OPTIM_ADAM ? ADAM_STEP_BYTES : SGD_STEP_BYTES) +
                        g_bytes) / hbm;
    e->t_step = e->t_compute + e->t_tp + e->t_cp + e->t_ep + e->t_pp + e->t_bubble + e->t_dp +
                e->t_opt;
    e->tokens_per_s = (double)m->global_batch * m->seq_len / e->t_step;
    e->mfu = cc_model_step_flops(m) / ((double)x->N * x->peak * e->t_step);
    /* the padded vocabulary rows and the K/V heads replicated over tp are executed too */
    const struct cc_model mv = x->mr;
    double hw = cc_model_step_hw_flops(&mv, x->rc);
    if (x->rc == CC_RC_BLOCK) { /* a full recompute of the decoder layers recomputed (not
                                  * of the MTP layers: Megatron-LM's block method skips them) */
        double R = 0.0;
        if (planned(x)) /* every stage by its own chunks */
            for (int r = 0; r < pp; r++)
                R += recomputed_layers(x, r, 0.0);
        else
            R = recomputed_layers(x, 0, x->Lf) + (pp > 1 ? recomputed_layers(x, pp - 1, x->Ll) : 0.0) +
                (pp > 2 ? (pp - 2) * recomputed_layers(x, -1, x->Lm) : 0.0);
        struct cc_model dec = mv;
        dec.mtp = 0;
        double layer_fwd = cc_model_step_hw_flops(&dec, CC_RC_FULL) -
                           cc_model_step_hw_flops(&dec, CC_RC_NONE);
        hw = cc_model_step_hw_flops(&mv, CC_RC_NONE) + R / m->layers * layer_fwd;
    }
    e->hw_tflops = hw / ((double)x->N * e->t_step) / 1e12;
    e->megatron_tflops = cc_model_megatron_log_flops(m, (long long)hb->vocab_pad * tp) /
                         ((double)x->N * e->t_step) / 1e12;
    return !isfinite(e->t_step) || e->t_step > 1e9;
}

void cc_layout_eval(const struct cc_model *m, const struct cc_cluster *c,
                    const struct cc_habits *hb, const struct cc_layout *l, struct cc_eval *e)
{
    struct ctx x = {.m = m, .c = c, .hb = hb, .tp = l->tp, .pp = l->pp, .dp = l->dp,
                    .cp = l->cp, .mb = l->mb, .v = l->vpp > 0 ? l->vpp : 1,
                    .sp = l->sp && l->tp > 1, .zero = l->zero,
                    .rc = l->rc == CC_RC_AUTO ? CC_RC_FULL : l->rc,
                    .rcl = l->rc == CC_RC_BLOCK ? l->rcl : 0, .off = l->off,
                    .split = l->split, .lfirst = l->lfirst > 0 && !l->split ? l->lfirst : 0,
                    .llast = l->lfirst > 0 && !l->split ? l->llast : 0, .mtp_r = -1};
    memset(e, 0, sizeof *e);
    e->feasible = 1;
    e->mtp_rank = -1;
    x.mr = *m;
    if (x.mr.kv_heads < x.tp)
        x.mr.kv_heads = x.tp; /* one replicated K/V head per rank */
    if (x.tp >= 1) /* the padded rows are held, computed and reduced like the others */
        x.mr.vocab = cc_model_padded_vocab(m, (long long)hb->vocab_pad * x.tp);
    e->vocab = x.mr.vocab;
    if (x.tp < 1 || x.pp < 1 || x.dp < 1 || x.cp < 1 || x.mb < 1) {
        why(e, "tp, pp, dp, cp and mb must all be at least 1");
        return;
    }
    double n = (double)x.tp * x.pp * x.dp * x.cp;
    if (n > c->gpus || x.v > m->layers + 2) { /* no numbers: the products would not fit */
        if (n > c->gpus)
            why(e, "tp*pp*dp*cp is %.15g but the cluster has %d GPUs", n, c->gpus);
        else
            why(e, "v %d is more than the %d layers", x.v, m->layers);
        return;
    }
    x.N = (long long)n;
    x.shard = l->dp * l->cp;
    x.ep = cc_layout_ep(l);
    x.etp = cc_layout_etp(l);
    x.mr.expert_tp = x.etp;
    /* a skewed router loads one expert-parallel rank more than the rest; at ep 1 every GPU
     * holds every expert and its own tokens' copies, whatever their spread. A rank gets at
     * most min(k, E/ep) copies of a token, ep x min(k, E/ep) / k times its balanced share
     * of k/ep: a factor beyond that is costed at that. */
    double load = 1.0; /* the busiest rank's routed tokens over its balanced share */
    e->skew_max = 0.0;
    if (cc_model_moe(m) && x.ep > 1 && hb->moe_imbalance > 1.0 && m->experts % x.ep == 0) {
        int held = m->experts / x.ep;
        e->skew_max = (double)x.ep * (m->topk < held ? m->topk : held) / m->topk;
        load = fmin(hb->moe_imbalance, e->skew_max);
    }
    /* a capacity factor drops what an expert gets beyond it (a rank's experts each at most
     * that share), or, padded, makes every expert compute exactly that share */
    e->capacity = cc_model_moe(m) ? hb->moe_capacity : 0.0;
    e->capacity_pad = e->capacity > 0 && hb->moe_pad;
    if (e->capacity > 0)
        load = e->capacity_pad ? e->capacity : fmin(load, e->capacity);
    x.mr.route_skew = load != 1.0 ? load : 0.0;
    e->skew = x.mr.route_skew;
    x.eshard = (int)fmax(1.0, floor((double)x.tp * x.cp * x.dp / ((double)x.ep * x.etp)));
    e->edp = cc_model_moe(m) ? x.eshard : 0;
    x.mm = (double)m->global_batch / ((double)x.dp * x.mb);     /* micro-batches */
    struct cc_pplan fillbuf; /* fill=1: the layout made for it (its first n stages written) */
    char fill_why[160] = "";
    x.plan = hb->plan && x.pp > 1 ? hb->plan : NULL;
    x.fill = l->fill, x.fill_why = fill_why;
    if (l->fill && !x.plan && !x.split && x.lfirst <= 0 &&
        cc_pplan_fill(&fillbuf, m->layers, m->mtp, x.pp, x.v, fill_why, sizeof fill_why) == CC_OK)
        x.plan = &fillbuf;
    int planned = x.plan && x.plan->n % x.pp == 0 && x.lfirst <= 0 && !x.split;
    /* a standalone MTP stage: the layout's MTP layers on a middle rank, costed as a stage of
     * its own; the middle stage costed is another where one remains (pp > 3) */
    int xr = planned && x.plan->n == x.pp * x.v && m->mtp > 0 ? cc_pplan_mtp_rank(x.plan, x.pp) : -1;
    xr = xr > 0 && xr < x.pp - 1 ? xr : -1;
    int skip = x.pp > 3 ? xr : -1;
    if (planned) { /* as the layout places them; the middle stage with the most */
        e->plan = x.plan == &fillbuf ? NULL : x.plan; /* cc_layout_plan makes it again */
        e->filled = x.plan == &fillbuf;
        x.Lf = cc_pplan_rank_layers(x.plan, x.pp, 0);
        x.Ll = cc_pplan_rank_layers(x.plan, x.pp, x.pp - 1);
        x.Lm = x.Lf;
        for (int r = 1, seen = 0; r < x.pp - 1; r++) {
            double Lr = cc_pplan_rank_layers(x.plan, x.pp, r);
            if (r != skip && (!seen++ || Lr > x.Lm))
                x.Lm = Lr;
        }
    } else if (x.lfirst > 0 && !x.split) { /* uneven: as given; the middle stages share the rest */
        x.Lf = x.lfirst, x.Ll = x.llast;
        x.Lm = x.pp > 2 ? fmax(0.0, ((double)m->layers - x.lfirst - x.llast) / (x.pp - 2)) : x.Lf;
    } else if (x.split && x.pp > 2) { /* layers + 2 slots: the first and last stage give one to
                                  the embedding and the loss */
        double S = (double)(m->layers + 2) / x.pp;
        x.Lf = x.Ll = fmax(S - 1.0, 0.0);
        x.Lm = S;
    } else { /* uniform; with pp = 2 the split is the same thing */
        x.Lf = x.Lm = x.Ll = (double)m->layers / x.pp;              /* layers per stage */
        if (x.pp == 2)
            x.split = 0;
    }
    e->layers_first = x.Lf, e->layers_mid = x.Lm, e->layers_last = x.Ll;
    cc_model_dense_layer(&x.mr, &x.md);
    x.mid_r = x.pp > 2 ? 1 : 0;
    x.mid_lo_r = -1;
    x.mem_mid_r = x.mid_r;
    if (!cc_model_mixed(m)) { /* every layer alike */
        int moe = cc_model_moe(m);
        x.Ef = moe ? x.Lf : 0.0, x.Em = moe ? x.Lm : 0.0, x.El = moe ? x.Ll : 0.0;
    } else {
        double unused;
        stage_experts(&x, 0, &x.Ef, &unused);
        stage_experts(&x, x.pp - 1, &x.El, &unused);
        x.Em = x.Ef;
        for (int r = 1; r < x.pp - 1; r++) { /* the middle stages with the most and fewest */
            double E;
            stage_experts(&x, r, &E, &unused);
            if (r == 1 || E > x.Em)
                x.Em = E, x.mid_r = r;
            if (r == 1 || E < x.Em_lo)
                x.Em_lo = E, x.mid_lo_r = r;
        }
        if (x.pp < 4 || x.Em_lo >= x.Em)
            x.mid_lo_r = -1;
    }
    if (planned && x.pp > 2) {
        /* an explicit layout: the middle stages with the most layers; of them the one with
         * the most expert layers, and a mixed model's with the fewest */
        int hi = -1, lo = -1;
        double Ehi = 0.0, Elo = 0.0, unused;
        for (int r = 1; r < x.pp - 1; r++) {
            if (r == skip || cc_pplan_rank_layers(x.plan, x.pp, r) != (int)x.Lm)
                continue;
            double E = !cc_model_moe(m) ? 0.0 : x.Lm;
            if (cc_model_mixed(m))
                stage_experts(&x, r, &E, &unused);
            if (hi < 0 || E > Ehi)
                hi = r, Ehi = E;
            if (lo < 0 || E < Elo)
                lo = r, Elo = E;
        }
        x.mid_r = hi, x.Em = Ehi, x.Em_lo = Elo;
        x.mid_lo_r = cc_model_mixed(m) && Elo < Ehi ? lo : -1;
        /* memory: the middle stage's layer mix and weights, with the most layers in flight
         * any middle stage holds (an earlier one holds more micro-batches) */
        double most = -1.0;
        for (int r = 1; r < x.pp - 1; r++) {
            double held = r == skip ? -1.0 : stage_inflight(&x, r, 0.0, -1);
            if (held > most)
                most = held, x.mem_mid_r = r;
        }
    }
    /* a standalone MTP stage: its rank's own layers */
    x.mtp_r = -1, x.Lx = x.Ex = 0.0;
    if (xr >= 0) {
        double unused;
        x.mtp_r = xr, x.Lx = cc_pplan_rank_layers(x.plan, x.pp, xr);
        x.Ex = cc_model_moe(m) ? x.Lx : 0.0;
        if (cc_model_mixed(m))
            stage_experts(&x, xr, &x.Ex, &unused);
    }
    e->mtp_rank = x.mtp_r;
    /* at most the stage's layers where the layers do not divide evenly (infeasible anyway) */
    x.Ef = fmax(0.0, fmin(x.Ef, x.Lf)), x.Em = fmax(0.0, fmin(x.Em, x.Lm));
    x.El = fmax(0.0, fmin(x.El, x.Ll)), x.Em_lo = fmax(0.0, fmin(x.Em_lo, x.Lm));
    e->experts_first = x.Ef, e->experts_mid = x.Em, e->experts_last = x.El;
    e->mid_stage = x.mid_r;
    e->mid_inflight_stage = x.mem_mid_r;
    x.s_loc = (double)m->seq_len / x.cp;                        /* tokens per GPU */
    x.peak = c->peak_flops[m->prec];
    e->m = (long long)x.mm;
    check_structure(&x, e);
    int structure_ok = e->feasible;
    eval_memory(&x, e);
    int mem_fail = structure_ok && !e->feasible;
    int long_step = eval_time(&x, e);
    if (long_step && structure_ok) {
        e->feasible = 1; /* no memory would make it run: the step time is the reason */
        why(e, "a step would last %s: %.3g parameters trained on a batch of %lld sequences "
            "x %d tokens is too much for these GPUs (or a rate given is 0)",
            isfinite(e->t_step) ? "over 30 years" : "for ever", cc_model_params(m),
            m->global_batch, m->seq_len);
    }
    e->mem_only = mem_fail && !long_step;
    e->too_long = structure_ok && long_step;
}

/* ---- search ----------------------------------------------------------------------------- */

/* The layers per stage of the filled layout (fill=1) the search tries at pp x v, or 0 where it
 * tries none: uneven pipelines searched, no explicit layout given, v > 1 (at v = 1 the uneven
 * first and last stages cover it), the embedding/loss split (pp > 2) not running at this pp x v
 * (as the uneven first and last stages are searched only where no even split runs at pp), and
 * cc_pplan_fill making one (which it does not where pp x v divides the layers). */
static int fill_each(const struct cc_model *m, int pp, int v, const struct cc_habits *hb,
                     struct cc_pplan *buf)
{
    char unused[160];
    if (!hb->uneven_pp || hb->plan || v < 2 || (pp > 2 && (m->layers + 2) % ((long long)pp * v) == 0))
        return 0;
    return cc_pplan_fill(buf, m->layers, m->mtp, pp, v, unused, sizeof unused) == CC_OK
               ? buf->layers[0]
               : 0;
}

/* How far over its memory an evaluation is: GPU, or host memory for offloaded activations. */
static double mem_ratio(const struct cc_eval *e)
{
    return fmax(e->mem_total / e->mem_limit, e->off_bytes / e->host_limit);
}

static int cmp_ranked(const void *a, const void *b)
{
    const struct cc_ranked *x = a, *y = b;
    if (x->eval.t_step < y->eval.t_step) return -1;
    if (x->eval.t_step > y->eval.t_step) return 1;
    const int kx[] = {x->layout.tp, x->layout.pp, x->layout.cp};
    const int ky[] = {y->layout.tp, y->layout.pp, y->layout.cp};
    for (int i = 0; i < 3; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* Whether candidate a beats b, the setting kept so far for the same tp, pp, cp, dp: faster,
 * or as fast (to 1e-9) with a smaller ZeRO stage, then fewer model chunks, then a larger
 * micro-batch; otherwise the first enumerated stays. */
static int better_setting(const struct cc_ranked *a, const struct cc_ranked *b)
{
    double ta = a->eval.t_step, tb = b->eval.t_step;
    if (ta != tb && fabs(ta - tb) > 1e-9 * tb)
        return ta < tb;
    if (a->layout.zero != b->layout.zero)
        return a->layout.zero < b->layout.zero;
    if (a->layout.vpp != b->layout.vpp)
        return a->layout.vpp < b->layout.vpp;
    return a->layout.mb > b->layout.mb;
}

void cc_search_free(struct cc_search *s)
{
    free(s->best);
    s->best = NULL;
    s->nbest = 0;
}

int cc_search_rank(const struct cc_search *s, int tp, int pp, int dp, int cp)
{
    for (int i = 0; i < s->nbest; i++)
        if (s->best[i].layout.tp == tp && s->best[i].layout.pp == pp &&
            s->best[i].layout.dp == dp && s->best[i].layout.cp == cp)
            return i;
    return -1;
}

cc_status cc_layout_search(const struct cc_model *m, const struct cc_cluster *c,
                           const struct cc_habits *hb, struct cc_search *s)
{
    int cap = 64;
    int tp_max = hb->tp_max > 0 ? hb->tp_max : c->gpus_per_node;
    double closest_ratio = INFINITY;
    int offload = cc_habits_offload_searched(hb, c);
    char first_why[320] = "", long_why[320] = "";
    struct cc_pplan fillbuf;   /* the filled layout of the pp x v at hand (fill_each) */
    struct cc_layout pcie_off; /* a layout that offloading over PCIe would fit (not searched) */
    int pcie_off_found = 0;
    enum cc_recompute rcs[4];
    int nrc = 0;

    memset(s, 0, sizeof *s);
    double t0 = mono_s();
    int noted = 0;
    if (hb->recompute == CC_RC_AUTO)
        rcs[0] = CC_RC_NONE, rcs[1] = CC_RC_SELECTIVE, rcs[2] = CC_RC_FULL,
        rcs[3] = CC_RC_BLOCK, nrc = 4;
    else
        rcs[nrc++] = hb->recompute;
    if (hb->grad_accum > 0 && m->global_batch % hb->grad_accum) {
        snprintf(s->why_none, sizeof s->why_none, "no valid layout: the global batch %lld is "
                 "not a multiple of --grad-accum %d", m->global_batch, hb->grad_accum);
        return CC_EINFEASIBLE;
    }
    s->best = malloc((size_t)cap * sizeof *s->best);
    if (!s->best)
        return CC_ENOMEM;
    int tp_top = 0;                       /* the largest tp enumerated */
    long long dp_min = 0, whole = 0;      /* the smallest dp met; layouts whose dp divides
                                             the batch */
    for (int tp = 1; tp <= tp_max && tp <= c->gpus; tp++) {
        if (m->heads % tp || (m->kv_heads % tp && tp % m->kv_heads) || c->gpus % tp ||
            (tp < c->gpus_per_node && c->gpus_per_node % tp))
            continue;
        tp_top = tp;
        for (int cp = 1; cp <= hb->cp_max && (long long)tp * cp <= c->gpus; cp *= 2) {
            if ((cp > 1 && m->seq_len % (2 * cp)) || c->gpus % (tp * cp))
                continue;
            for (int pp = 1; pp <= m->layers && (long long)tp * cp * pp <= c->gpus; pp++) {
                int uniform = m->layers % pp == 0;
                int uneven = hb->uneven_pp && pp > 2 && (m->layers + 2) % pp == 0; /* pp = 2: same as uniform */
                /* where neither divides: Megatron-LM's uneven first and last stage, the middle
                 * ones at ceil(layers / pp) each and the first and last sharing the rest, every
                 * split of it that leaves each at least 1 and at most a middle stage's */
                int flf[64], nfl = 0;
                int flmid, flrest = first_last_rest(m->layers, pp, &flmid);
                if (!uniform && !uneven && hb->uneven_pp && pp >= 2)
                    for (int f = flmid; f >= 1 && nfl < 64; f--)
                        if (flrest - f >= 1 && flrest - f <= flmid)
                            flf[nfl++] = f;
                /* an explicit pipeline layout: pp dividing its stages, v = stages / pp, and
                 * nothing else with a pipeline */
                int planned = hb->plan && pp > 1;
                if (planned) {
                    if (hb->plan->n % pp)
                        continue;
                    uniform = 1, uneven = 0, nfl = 0;
                }
                int vmax = planned ? hb->plan->n / pp : hb->vpp_max;
                int plan_max = planned ? plan_chunk_max(hb->plan, pp, -1) : 0;
                if (!(uniform || uneven || nfl) || c->gpus % (tp * cp * pp))
                    continue;
                int dp = c->gpus / (tp * cp * pp);
                struct cc_ranked best = {{0}, {0}};
                int have = 0;
                if (!dp_min || dp < dp_min)
                    dp_min = dp;
                if (m->global_batch % dp) {
                    if (!first_why[0])
                        snprintf(first_why, sizeof first_why, "global batch %lld is not a "
                                 "multiple of dp %d (tp=%d, pp=%d)", m->global_batch, dp, tp, pp);
                    continue;
                }
                whole++;
                long long per_dp = m->global_batch / dp;
                /* expert parallelism: every ep that divides the experts and the stage's
                 * tp*cp*dp ranks (1 alone without experts) */
                int eps[64], etps[64], neps = 0;
                for (int ep = 1; neps < 63 && (ep == 1 || (cc_model_moe(m) && ep <= m->experts));
                     ep++)
                    if (ep == 1 || (m->experts % ep == 0 && ((long long)tp * cp * dp) % ep == 0)) {
                        eps[neps] = ep, etps[neps++] = 1;
                        /* and each expert split over the tp ranks (expert tensor parallelism
                         * = tp, Megatron-Core's default) where that divides */
                        if (cc_model_moe(m) && tp > 1 && m->moe_ffn % tp == 0 &&
                            m->mlp == CC_MLP_SWIGLU &&
                            ((long long)tp * cp * dp) % ((long long)ep * tp) == 0)
                            eps[neps] = ep, etps[neps++] = tp;
                    }
                for (int mb = 1; mb <= hb->mb_max && mb <= per_dp; mb++) {
                    if (per_dp % mb)
                        continue;
                    for (int r = 0; r < nrc; r++)
                        for (int sp = (tp > 1 && hb->sp != 0); sp >= (tp > 1 && hb->sp == 1 ? 1 : 0);
                             sp--)
                            for (int z = hb->zero_min; z <= hb->zero_max; z++) {
                                if ((z >= 2 && pp > 1) || (sp && (m->seq_len / cp) % tp))
                                    continue;
                                if (cc_model_moe(m) && ((tp > 1 && !sp) || z == 3))
                                    continue; /* check_structure's rules for experts */
                                /* modes: 0 uniform, 1 the split, 2.. uneven first/last, the
                                 * last the filled layout (v > 1) */
                                int nmodes = 3 + nfl, fillm = 2 + nfl;
                                for (int sv = 0; sv < nmodes * vmax * neps; sv++) {
                                    int ep = eps[sv / (nmodes * vmax)], etp = etps[sv / (nmodes * vmax)];
                                    int mode = sv % nmodes, v = sv % (nmodes * vmax) / nmodes + 1;
                                    int split = mode == 1, fill = mode == fillm;
                                    int fl = mode >= 2 && !fill;
                                    int lf = fl ? flf[mode - 2] : 0;
                                    int ll = fl ? flrest - lf : 0;
                                    int per_stage = (m->layers + 2 * split) / pp;
                                    if (mode == 1 ? !uneven : mode == 0 ? !uniform : 0)
                                        continue;
                                    int each = fill ? fill_each(m, pp, v, hb, &fillbuf) : 0;
                                    if (fill && !each)
                                        continue;
                                    if ((planned || fill) &&
                                        ((v > 1 && (per_dp / mb) % pp) ||
                                         (fill && pp < (hb->pp_overlap ? 2 : 3))))
                                        continue; /* its chunks set the rest */
                                    if (planned && v != vmax)
                                        continue; /* the layout's v */
                                    if (fl) /* a middle stage holds the most */
                                        per_stage = pp > 2 ? flmid : (lf > ll ? lf : ll);
                                    if (v > 1 && !planned && !fill &&
                                        (pp < (hb->pp_overlap ? 2 : 3) ||
                                         per_stage % v || (per_dp / mb) % pp ||
                                         (fl && (lf % v || ll % v || flmid % v))))
                                        continue;
                                    if (rcs[r] == CC_RC_BLOCK &&
                                        (planned ? plan_max < 2 : fill ? each < 2 : per_stage / v < 2))
                                        continue; /* chunks of one layer: block is full */
                                    struct cc_ranked cand = {
                                        {tp, pp, dp, cp, mb, v, sp, z, rcs[r], split, 0, 0, ep, lf, ll, etp,
                                         fill},
                                        {0}};
                                    cc_layout_eval(m, c, hb, &cand.layout, &cand.eval);
                                    cand.layout.rcl = cand.eval.rcl; /* the fewest that fit */
                                    if (!cand.eval.feasible && cand.eval.mem_only &&
                                        rcs[r] == CC_RC_NONE && pp == 1 &&
                                        (offload || (hb->offload == 2 && !pcie_off_found))) {
                                        /* too large without recomputation: offload the
                                         * fewest layers' activations that fit (where
                                         * --offload auto leaves PCIe out, only to say what
                                         * --offload on would find if nothing else fits) */
                                        struct cc_ranked off = cand;
                                        off.layout.off = -1;
                                        cc_layout_eval(m, c, hb, &off.layout, &off.eval);
                                        off.layout.off = off.eval.off;
                                        s->evaluated++;
                                        if (!offload)
                                            pcie_off = off.layout, pcie_off_found = off.eval.feasible;
                                        else if (off.eval.feasible ||
                                                 mem_ratio(&off.eval) < mem_ratio(&cand.eval))
                                            cand = off;
                                    }
                                    if (!(++s->evaluated & 0xffff) && !noted &&
                                        mono_s() - t0 > SEARCH_NOTE_S) {
                                        cc_info("layout: %lld settings searched in %.0f s, "
                                                "at tp=%d of up to %d; a narrower --mb-max, "
                                                "--interleave or --cp-max makes it faster",
                                                (long long)s->evaluated, mono_s() - t0, tp,
                                                tp_max < c->gpus ? tp_max : c->gpus);
                                        noted = 1;
                                    }
                                    if (!cand.eval.feasible) {
                                        double ratio = mem_ratio(&cand.eval);
                                        if (cand.eval.mem_only && ratio < closest_ratio) {
                                            closest_ratio = ratio;
                                            s->closest = cand;
                                        }
                                        if (!first_why[0])
                                            snprintf(first_why, sizeof first_why, "%s",
                                                     cand.eval.why);
                                        if (cand.eval.too_long && !long_why[0])
                                            snprintf(long_why, sizeof long_why, "%s",
                                                     cand.eval.why);
                                        continue;
                                    }
                                    s->feasible++;
                                    if (!have || better_setting(&cand, &best)) {
                                        best = cand;
                                        have = 1;
                                    }
                                }
                            }
                }
                if (!have)
                    continue;
                if (s->nbest == cap) {
                    struct cc_ranked *nb = realloc(s->best, (size_t)(cap *= 2) * sizeof *nb);
                    if (!nb) {
                        cc_search_free(s);
                        return CC_ENOMEM;
                    }
                    s->best = nb;
                }
                s->best[s->nbest++] = best;
            }
        }
    }
    qsort(s->best, (size_t)s->nbest, sizeof *s->best, cmp_ranked);
    if (s->nbest)
        return CC_OK;
    /* tensor parallelism held at 1 by the heads is worth saying whatever else failed */
    char tp_note[128] = "";
    if (tp_top == 1 && tp_max > 1 && c->gpus > 1)
        snprintf(tp_note, sizeof tp_note, "; tp could only be 1: no tp from 2 to %d divides "
                 "the %d heads (%d KV heads) and the node", tp_max < c->gpus ? tp_max : c->gpus,
                 m->heads, m->kv_heads);
    if (isfinite(closest_ratio)) {
        char lb[128], lb2[128], host[256] = "";
        if (s->closest.eval.off_bytes > s->closest.eval.host_limit) /* what it lacks */
            snprintf(host, sizeof host, ", and it offloads %.1f GB per GPU to host memory, "
                     "limit %.1f GB (--host-mem-gb less the margin)",
                     s->closest.eval.off_bytes / 1e9, s->closest.eval.host_limit / 1e9);
        else if (pcie_off_found)
            snprintf(host, sizeof host, "; --offload on would fit %s, offloading %d layers' "
                     "activations to host memory over PCIe", cc_layout_format(&pcie_off, lb2,
                     sizeof lb2), pcie_off.off);
        snprintf(s->why_none, sizeof s->why_none,
                 "no layout fits in memory: the smallest footprint is %.1f GB per GPU (%s), "
                 "limit %.1f GB%s%s", s->closest.eval.mem_total / 1e9,
                 cc_layout_format(&s->closest.layout, lb, sizeof lb),
                 s->closest.eval.mem_limit / 1e9, host, tp_note);
    } else if (dp_min > m->global_batch && !whole) /* more GPUs than sequences to share */
        snprintf(s->why_none, sizeof s->why_none, "no valid layout: the cluster has more GPUs "
                 "than the layouts can use: the smallest dp = GPUs/(tp*pp*cp) is %lld, more "
                 "than the global batch of %lld sequences%s", dp_min, m->global_batch, tp_note);
    else if (dp_min && !whole)
        snprintf(s->why_none, sizeof s->why_none, "no valid layout: no dp = GPUs/(tp*pp*cp) "
                 "divides the global batch %lld (the smallest dp is %lld; see --global-batch)%s",
                 m->global_batch, dp_min, tp_note);
    else /* what stopped the layouts that were whole and would fit, else the first reason */
        snprintf(s->why_none, sizeof s->why_none, "no valid layout: %.150s%s",
                 long_why[0] ? long_why : first_why[0] ? first_why : "nothing to enumerate",
                 tp_note);
    return CC_EINFEASIBLE;
}
