/* eval.c - one layout's evaluation: the rules it must meet, its pipeline stages, and
 * cc_layout_eval, which runs memory.c and steptime.c on them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "layout/eval.h"

void cc_eval_why(struct cc_eval *e, const char *fmt, ...)
{
    if (!e->feasible)
        return; /* keep the first reason */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->why, sizeof e->why, fmt, ap);
    va_end(ap);
    e->feasible = 0;
}

int cc_ctx_ep_overlaps(const struct ctx *x)
{
    struct cc_layout l = {.ep = x->ep, .rc = x->rc, .pp = x->pp, .vpp = x->v};
    return cc_layout_ep_overlaps(x->m, x->hb, &l);
}

int cc_first_last_rest(int layers, int pp, int *mid)
{
    *mid = (layers + pp - 1) / pp;
    return layers - (pp - 2) * *mid;
}

const char *cc_uneven_hint(const struct ctx *x, char *buf, size_t len)
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
    int mid, rest = cc_first_last_rest(m->layers, pp, &mid);
    if (cc_pplan_fill(&f, m->layers, m->mtp, pp, v, fw, sizeof fw) == CC_OK)
        snprintf(fill, sizeof fill, "fill=1 places them as %s", f.text);
    else if (v == 1 && rest >= 2 && rest <= 2 * mid)
        snprintf(fill, sizeof fill, "first=F,last=L sets the first and last stage's layers");
    if (split[0] || fill[0])
        snprintf(buf, len, " (%s%s%s)", split, split[0] && fill[0] ? "; " : "", fill);
    return buf;
}

void cc_eval_check(struct ctx *x, struct cc_eval *e)
{
    const struct cc_model *m = x->m;
    int gpn = x->c->gpus_per_node;
    int tp_max = x->hb->tp_max > 0 ? x->hb->tp_max : gpn;
    int tp = x->tp, pp = x->pp, v = x->v;
    char hint[448];

    /* what the model and the node allow first: a dp floored to fill the cluster (--explain
     * without dp) would otherwise hide it behind the product */
    if (m->heads % tp)
        cc_eval_why(e, "tp %d does not divide the %d attention heads", tp, m->heads);
    if (m->kv_heads % tp && tp % m->kv_heads)
        cc_eval_why(e, "tp %d neither divides the %d KV heads nor is a multiple of them", tp,
            m->kv_heads);
    if (tp < gpn && gpn % tp)
        cc_eval_why(e, "tp %d does not divide the %d GPUs of a node", tp, gpn);
    if (tp > tp_max)
        cc_eval_why(e, "tp %d is larger than %d (a node has %d GPUs; see --tp-max)", tp, tp_max, gpn);
    int slots = m->layers + (x->split ? 2 : 0);
    int fl = x->lfirst > 0;
    if (x->split && pp < 2)
        cc_eval_why(e, "split=1 (embedding and loss counted as layers) needs pp >= 2");
    if (x->fill && x->hb->plan && pp > 1)
        cc_eval_why(e, "fill=1 and an explicit pipeline layout (--pipeline-layout) do not go together: "
            "the layout places every layer");
    else if (x->fill && (fl || x->split))
        cc_eval_why(e, "fill=1 and %s are two ways to split the pipeline unevenly; give one",
            fl ? "first/last" : "split=1");
    else if (x->fill && !x->plan)
        cc_eval_why(e, "%s", x->fill_why);
    else if (fl && x->plan)
        cc_eval_why(e, "first/last and an explicit pipeline layout (--pipeline-layout) do not go "
            "together: the layout places every layer");
    else if (fl) { /* Megatron-LM's uneven first and last stage */
        long long mid = (long long)m->layers - x->lfirst - x->llast;
        if (pp < 2)
            cc_eval_why(e, "first/last (uneven pipeline stages) need pp >= 2");
        else if (pp == 2 && mid != 0)
            cc_eval_why(e, "first %d + last %d must be the %d layers with pp 2", x->lfirst, x->llast,
                m->layers);
        else if (pp > 2 && mid < pp - 2)
            cc_eval_why(e, "first %d + last %d leave %lld of the %d layers for the %d middle stages (at "
                "least one each)", x->lfirst, x->llast, mid < 0 ? 0 : mid, m->layers, pp - 2);
        else if (pp > 2 && mid % (pp - 2))
            cc_eval_why(e, "the %lld layers between first %d and last %d do not divide evenly into the "
                "%d middle stages", mid, x->lfirst, x->llast, pp - 2);
        else if (v > 1 && (x->lfirst % v || x->llast % v || (pp > 2 && (mid / (pp - 2)) % v)))
            cc_eval_why(e, "v %d does not divide the layers of every stage (first %d, middle %lld, last "
                "%d)", v, x->lfirst, pp > 2 ? mid / (pp - 2) : 0, x->llast);
    } else if (x->plan) {
        char pw[160];
        if (x->split)
            cc_eval_why(e, "split=1 and an explicit pipeline layout (--pipeline-layout) do not go "
                "together: the layout places the embedding and the loss");
        else if (cc_pplan_check(x->plan, m->layers, m->mtp, pp, pw, sizeof pw))
            cc_eval_why(e, "%s", pw);
        else if (v != x->plan->n / pp)
            cc_eval_why(e, "v %d: the pipeline layout's %d stages on pp %d make v %d", v, x->plan->n, pp,
                x->plan->n / pp);
    } else if (slots % pp)
        cc_eval_why(e, x->split ? "pp %d does not divide the %d slots (layers + embedding + loss)%s"
                        : "pp %d does not divide the %d layers%s", pp, slots,
            cc_uneven_hint(x, hint, sizeof hint));
    if (x->cp > 1 && !m->flash_attn) /* the local s x s attention has no context-parallel form */
        cc_eval_why(e, "cp %d needs flash or fused attention (Megatron-LM's context parallelism runs "
            "inside Transformer Engine's attention); the model sets flash_attention false", x->cp);
    else if (x->cp > 1 && m->seq_len % (2 * x->cp)) /* Megatron: load-balanced, 2*cp chunks */
        cc_eval_why(e, "cp %d needs the sequence length %d to be a multiple of 2*cp = %d (Megatron-LM's "
            "load-balanced context parallelism)", x->cp, m->seq_len, 2 * x->cp);
    else if (x->sp && (m->seq_len / x->cp) % tp) /* the sequence dimension is split by tp */
        cc_eval_why(e, "sequence parallelism needs tp %d to divide the %d tokens per context-parallel "
            "rank", tp, m->seq_len / x->cp);
    if (cc_model_mla(m) && tp > 1 && !x->sp) /* its down projections run on 1/tp of the tokens */
        cc_eval_why(e, "latent attention with tp %d is costed with sequence parallelism only (sp=1)", tp);
    if (x->N != x->c->gpus)
        cc_eval_why(e, "tp*pp*dp*cp is %lld but the cluster has %d GPUs", x->N, x->c->gpus);
    if (m->global_batch % ((long long)x->dp * x->mb))
        cc_eval_why(e, "global batch %lld is not a multiple of dp*mb = %lld", m->global_batch,
            (long long)x->dp * x->mb);
    if (v > 1 && pp < 2)
        cc_eval_why(e, "an interleaved schedule (v=%d) needs a pipeline (pp > 1)", v);
    else if (v > 1 && pp < 3 && !x->hb->pp_overlap) /* blocking exchanges: no two sends
                                                      between the same two ranks at once */
        cc_eval_why(e, "an interleaved schedule (v=%d) with blocking pipeline sends (--pp-overlap 0) "
            "needs pp > 2 (Megatron-LM)", v);
    if (v > 1 && !fl && !x->plan && slots % ((long long)pp * v))
        cc_eval_why(e, x->split ? "v %d does not divide the %d slots per stage (layers + embedding + loss)%s"
                        : "v %d does not divide the %d layers per stage%s", v, slots / pp,
            cc_uneven_hint(x, hint, sizeof hint));
    if (v > 1 && e->m % pp)
        cc_eval_why(e, "an interleaved schedule needs the micro-batch count (%lld) to be a multiple of "
            "pp %d", e->m, pp);
    if (x->hb->grad_accum > 0 && e->m != x->hb->grad_accum)
        cc_eval_why(e, "%lld micro-batches per step, but --grad-accum is %d", e->m, x->hb->grad_accum);
    if (cc_model_moe(m)) {
        if (m->experts % x->ep)
            cc_eval_why(e, "ep %d does not divide the %d experts", x->ep, m->experts);
        else if (((long long)tp * x->cp * x->dp) % ((long long)x->ep * x->etp))
            cc_eval_why(e, "ep %d x etp %d does not divide tp*cp*dp = %lld, the ranks of a pipeline "
                "stage that share the experts", x->ep, x->etp, (long long)tp * x->cp * x->dp);
        else if (m->moe_ffn % x->etp)
            cc_eval_why(e, "etp %d does not divide the experts' size %d", x->etp, m->moe_ffn);
        if (x->etp > 1 && m->mlp != CC_MLP_SWIGLU)
            cc_eval_why(e, "etp %d: Megatron-Core's experts take biases (a gelu model's) only with etp 1",
                x->etp);
        if (tp > 1 && !x->sp)
            cc_eval_why(e, "experts with tp %d need sequence parallelism (Megatron-Core)", tp);
        if (x->zero == 3)
            cc_eval_why(e, "ZeRO stage 3 with experts is not modelled");
    } else if (x->ep > 1 || x->etp > 1) {
        cc_eval_why(e, "%s %d: model '%s' has no experts", x->ep > 1 ? "ep" : "etp",
            x->ep > 1 ? x->ep : x->etp, m->name);
    }
    if (x->zero >= 2 && pp > 1)
        cc_eval_why(e, "ZeRO stage %d with pipeline parallelism is not supported (DeepSpeed, "
            "Megatron-LM)", x->zero);
    if (x->off != 0 && (x->pp > 1 || x->rc != CC_RC_NONE))
        cc_eval_why(e, "off=%d: activation offloading runs without a pipeline and without "
            "recomputation (Megatron-Core)", x->off);
    else if (x->off >= m->layers)
        cc_eval_why(e, "off=%d: offloading needs fewer layers than the model's %d", x->off, m->layers);
    if (x->peak <= 0) {
        cc_eval_why(e, "%s has no %s peak (choose another --precision or give --peak-tflops)",
            x->c->gpu_name, cc_prec_names[m->prec]);
        x->peak = 1e12; /* keep the numbers finite */
    }
}

void cc_stage_experts(const struct ctx *x, int r, double *E, double *RE)
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

double cc_recomputed_layers(const struct ctx *x, int r, double L)
{
    if (x->rc == CC_RC_FULL)
        return L;
    if (x->rc != CC_RC_BLOCK)
        return 0.0;
    if (!cc_planned(x))
        return fmin((double)x->rcl * x->v, L);
    int q = r < 0 ? x->mid_r : r, R = 0;
    for (int c = 0; c < x->v; c++) {
        int n = cc_pplan_chunk(x->plan, x->pp, q, c);
        R += n < x->rcl ? n : x->rcl;
    }
    return R;
}

int cc_plan_chunk_max(const struct cc_pplan *p, int pp, int r)
{
    int most = 0;
    for (int k = 0; k < p->n; k++)
        if ((r < 0 || k % pp == r) && p->layers[k] > most)
            most = p->layers[k];
    return most;
}

double cc_plan_block_act(const struct ctx *x, int r, int rcl, double act, double saved,
                             double kept)
{
    int pp = x->pp, v = x->v, whole = 0;
    double w = cc_warm_chunks(r, pp, v, x->mm), n = 0.0;
    for (int c = 0; c < v; c++) {
        int k = cc_pplan_chunk(x->plan, pp, r, c);
        n += cc_chunk_steps(w, pp, v, c) * (k < rcl ? k : rcl);
        whole |= k > 0 && k <= rcl;
    }
    return fmax(act - saved * n, 0.0) + (whole ? kept : 0.0);
}

double cc_stage_inflight(const struct ctx *x, int r, double slots, int short_chunk)
{
    int pp = x->pp, v = x->v;
    if (!cc_planned(x))
        return cc_inflight_layers(r < 0 ? 1 : r, pp, v, slots, short_chunk, x->mm);
    int q = r < 0 ? x->mem_mid_r : r;
    double w = cc_warm_chunks(q, pp, v, x->mm), layers = 0.0;
    for (int c = 0; c < v; c++)
        layers += cc_chunk_steps(w, pp, v, c) * cc_pplan_chunk(x->plan, pp, q, c);
    return layers;
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
        cc_eval_why(e, "tp, pp, dp, cp and mb must all be at least 1");
        return;
    }
    double n = (double)x.tp * x.pp * x.dp * x.cp;
    /* v up to the layers (and the embedding and loss), or an explicit layout's stages, which
     * may be empty */
    int v_most = m->layers + 2;
    if (hb->plan && x.pp > 1 && hb->plan->n > v_most)
        v_most = hb->plan->n;
    if (n > c->gpus || x.v > v_most) { /* no numbers: the products would not fit */
        if (n > c->gpus)
            cc_eval_why(e, "tp*pp*dp*cp is %.15g but the cluster has %d GPUs", n, c->gpus);
        else
            cc_eval_why(e, "v %d is more than the %d layers", x.v, m->layers);
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
    int xr = planned && cc_planned(&x) && m->mtp > 0 ? cc_pplan_mtp_rank(x.plan, x.pp) : -1;
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
        cc_stage_experts(&x, 0, &x.Ef, &unused);
        cc_stage_experts(&x, x.pp - 1, &x.El, &unused);
        x.Em = x.Ef;
        for (int r = 1; r < x.pp - 1; r++) { /* the middle stages with the most and fewest */
            double E;
            cc_stage_experts(&x, r, &E, &unused);
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
                cc_stage_experts(&x, r, &E, &unused);
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
            double held = r == skip ? -1.0 : cc_stage_inflight(&x, r, 0.0, -1);
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
            cc_stage_experts(&x, xr, &x.Ex, &unused);
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
    cc_eval_check(&x, e);
    int structure_ok = e->feasible;
    cc_eval_memory(&x, e);
    int mem_fail = structure_ok && !e->feasible;
    int long_step = cc_eval_time(&x, e);
    if (long_step && structure_ok) {
        e->feasible = 1; /* no memory would make it run: the step time is the reason */
        cc_eval_why(e, "a step would last %s: %.3g parameters trained on a batch of %lld sequences "
            "x %d tokens is too much for these GPUs (or a rate given is 0)",
            isfinite(e->t_step) ? "over 30 years" : "for ever", cc_model_params(m),
            m->global_batch, m->seq_len);
    }
    e->mem_only = mem_fail && !long_step;
    e->too_long = structure_ok && long_step;
}
