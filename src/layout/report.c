/* report.c - text, JSON and Markdown output of `ccbench layout` (the launch snippets:
 * snippets.c). */
#include "layout/report.h"
#include "topo/topo.h"

#include <math.h>
#include <string.h>

#define GB 1e9

static const char *short_layout(const struct cc_layout *l, char *buf, size_t len)
{
    if (l->cp > 1)
        snprintf(buf, len, "tp=%d,pp=%d,dp=%d,cp=%d", l->tp, l->pp, l->dp, l->cp);
    else
        snprintf(buf, len, "tp=%d,pp=%d,dp=%d", l->tp, l->pp, l->dp);
    return buf;
}

const char *cc_layout_caution(const struct cc_model *m, const struct cc_cluster *c,
                              const struct cc_habits *hb, char *buf, size_t len)
{
    if (m->prec == CC_PREC_FP8) { /* fitted on H100; Hopper's peak table is the same */
        if (c->eff16_note == cc_eff16_hopper || hb->efficiency_fp8 != CC_LAYOUT_FP8_EFFICIENCY)
            return NULL;
        snprintf(buf, len, "the fp8 efficiency %.2f (the default) was fitted on NeMo's fp8 runs "
                 "on H100 SXM, not checked on this GPU (NVIDIA's published mixture-of-experts "
                 "runs on B200 and GB200 come out optimistic: results/layout-moe.md): set "
                 "--fp8-efficiency for your software (docs/layout.md)", hb->efficiency_fp8);
        return buf;
    }
    if (!c->eff16_note || hb->efficiency != CC_LAYOUT_EFFICIENCY)
        return NULL;
    snprintf(buf, len, "the 16-bit efficiency %.2f (the default) was %s: set --efficiency and "
             "--attn-efficiency for your software (docs/layout.md)", hb->efficiency, c->eff16_note);
    return buf;
}

const char *cc_layout_hint(const struct cc_model *m, const struct cc_cluster *c,
                           const struct cc_habits *hb, char *buf, size_t len)
{
    /* long sequences: their attention and activations grow with s, and context parallelism,
     * off by default, is what splits them */
    if (m->seq_len < 32768 || hb->cp_max > 1 || c->gpus < 2)
        return NULL;
    int cp = 2;
    while (cp * 2 <= 16 && cp * 2 <= c->gpus && m->seq_len % (4 * cp) == 0)
        cp *= 2;
    snprintf(buf, len, "sequences of %d tokens with context parallelism off (--cp-max 1): "
             "--cp-max %d lets the search split them over GPUs", m->seq_len, cp);
    return buf;
}

/* A collective the estimates use in a scope without a measurement of its own, when something
 * was measured: what stands in (cc_comm_source: a sibling, or -1 for the cluster's rate;
 * node: send/recv across nodes takes the node's rate, measured by `from` over whole nodes). */
struct stand_in { enum cc_coll_id coll; int scope, from, node; };

static int stand_ins(const struct cc_cluster *c, struct stand_in si[8])
{
    static const enum cc_coll_id used[] = {CC_ALLREDUCE, CC_ALLGATHER, CC_REDUCESCATTER,
                                           CC_SENDRECV};
    int nfit = 0, n = 0;
    for (int k = 0; k < CC_COLL_COUNT; k++)
        nfit += c->nfits[k][0] + c->nfits[k][1];
    for (int sc = 0; nfit && sc < (c->nodes > 1 ? 2 : 1); sc++)
        for (size_t k = 0; k < sizeof used / sizeof used[0]; k++) {
            int from = cc_comm_source(c, used[k], sc), node = 0;
            if (from < 0 && sc == CC_SCOPE_INTER && used[k] == CC_SENDRECV)
                cc_node_inter_Bps(c, &from), node = 1;
            if (from != (int)used[k])
                si[n++] = (struct stand_in){used[k], sc, from, node};
        }
    return n;
}

void cc_layout_print_context(FILE *out, const struct cc_model *m, const struct cc_cluster *c,
                             const struct cc_habits *hb)
{
    char moe[192] = "", shared[32] = "", hd[64] = "", dense[64] = "";
    if (m->head_dim > 0)
        snprintf(hd, sizeof hd, " hd=%d", m->head_dim);
    if (cc_model_mla(m)) /* latent attention: ranks and head widths */
        snprintf(hd, sizeof hd, " mla(%s%.0d%skv %d, qk %d+%d, v %d)", m->q_lora ? "q " : "",
                 m->q_lora, m->q_lora ? ", " : "", m->kv_lora, m->qk_nope, m->qk_rope, m->v_dim);
    if (m->qk_norm)
        snprintf(hd + strlen(hd), sizeof hd - strlen(hd), " qk-norm");
    if (cc_model_moe(m)) {
        if (m->shared_ffn > 0)
            snprintf(shared, sizeof shared, ", shared %d", m->shared_ffn);
        if (cc_model_mixed(m)) /* ffn= below is then the dense layers' MLP */
            snprintf(dense, sizeof dense, " in %lld of the layers (the others dense)",
                     cc_model_expert_layers(m));
        snprintf(moe, sizeof moe, " (%.1fB active), %d experts of ffn %d%s, top %d%s",
                 cc_model_active_params(m) / 1e9, m->experts, m->moe_ffn, shared, m->topk, dense);
    }
    char mtp[24] = "";
    if (m->mtp > 0) /* multi-token-prediction layers on top */
        snprintf(mtp, sizeof mtp, "+%d mtp", m->mtp);
    fprintf(out, "# model   %s: %.1fB parameters%s, l=%d%s h=%d a=%d kv=%d%s ffn=%d V=%d s=%d, "
                 "batch %lld, %s, %s\n", m->name, cc_model_params(m) / 1e9, moe, m->layers, mtp,
            m->hidden, m->heads, m->kv_heads, hd, m->ffn, m->vocab, m->seq_len, m->global_batch,
            cc_prec_names[m->prec], cc_optim_names[m->optim]);
    if (m->source[0])
        fprintf(out, "#         source: %s\n", m->source);
    fprintf(out, "# cluster %s, %.0f GB and %.0f TFLOP/s (%s) per GPU\n", c->name,
            c->mem_bytes / GB, c->peak_flops[m->prec] / 1e12, cc_prec_names[m->prec]);
    char per_gpu[48] = "", gb[32]; /* a node's rate across nodes is shared by its GPUs */
    if (c->gpus_per_node > 1 && c->nodes > 1)
        snprintf(per_gpu, sizeof per_gpu, " (%s per GPU)",
                 cc_gbps_text(c->inter_node_Bps / c->gpus_per_node, gb, sizeof gb));
    fprintf(out, "#         rates: %s; within a node %.0f GB/s, across nodes %.0f GB/s per "
                 "node%s\n", c->bw_source, c->intra_busbw_Bps / GB, c->inter_node_Bps / GB,
            per_gpu);
    for (int k = 0; k < CC_COLL_COUNT; k++)
        for (int sc = 0; sc < 2; sc++)
            for (int i = 0; i < c->nfits[k][sc]; i++) {
                const struct cc_fit *f = &c->fits[k][sc][i];
                char pn[64] = "";
                if (sc == CC_SCOPE_INTER && f->nodes > 0 &&
                    (long long)f->per_node * f->nodes != f->nranks)
                    snprintf(pn, sizeof pn, ", %d nodes, %d in the emptiest", f->nodes,
                             f->per_node);
                else if (sc == CC_SCOPE_INTER)
                    snprintf(pn, sizeof pn, ", %d per node", f->per_node);
                char bw[32], lat[64];
                if (isnan(f->alpha_s))
                    snprintf(lat, sizeof lat, "latency not measured (sizes within 64x: the table's)");
                else
                    snprintf(lat, sizeof lat, "%.1f us", f->alpha_s * 1e6);
                fprintf(out, "#         fit %s, %d ranks %s%s: %s + bus bytes / %s GB/s "
                             "(%d sizes, '%s')\n", cc_coll_get((enum cc_coll_id)k)->name,
                        f->nranks, sc == CC_SCOPE_INTRA ? "within a node" : "across nodes", pn,
                        lat, cc_gbps_text(f->busbw_Bps, bw, sizeof bw), f->sizes, f->from);
            }
    /* with measurements, say where each rate the estimates use comes from */
    struct stand_in si[8];
    for (int i = 0, n = stand_ins(c, si); i < n; i++) {
        fprintf(out, "#         %s %s: not measured, ", cc_coll_get(si[i].coll)->name,
                si[i].scope == CC_SCOPE_INTRA ? "within a node" : "across nodes");
        if (si[i].from >= 0 && si[i].node)
            fprintf(out, "the node's rate from the %s fit across whole nodes (%.0f GB/s), "
                    "shared by its GPUs\n", cc_coll_get((enum cc_coll_id)si[i].from)->name,
                    cc_node_inter_Bps(c, NULL) / GB);
        else if (si[i].from >= 0)
            fprintf(out, "the %s fit stands in\n", cc_coll_get((enum cc_coll_id)si[i].from)->name);
        else if (si[i].scope == CC_SCOPE_INTRA)
            fprintf(out, "%.0f GB/s as above\n", (si[i].coll == CC_SENDRECV ? c->p2p_intra_Bps
                                                                        : c->intra_busbw_Bps) / GB);
        else
            fprintf(out, "%.0f GB/s per node as above\n", c->inter_node_Bps / GB);
    }
    char fp8[32] = "";
    if (m->prec == CC_PREC_FP8)
        snprintf(fp8, sizeof fp8, " (fp8 layers %.2f)", hb->efficiency_fp8);
    char attn[32] = "";
    if (hb->efficiency_attn > 0)
        snprintf(attn, sizeof attn, " (attention %.2f)", hb->efficiency_attn);
    char vpad[48];
    snprintf(vpad, sizeof vpad, ", vocabulary padded to %d x tp", hb->vocab_pad);
    char copy[32] = "";
    if (hb->main_grad_bytes > 0)
        snprintf(copy, sizeof copy, " (+ %d-byte fp32 copy)", hb->main_grad_bytes);
    char skew[128] = "";
    if (cc_model_moe(m)) {
        char cap[64] = "";
        if (hb->moe_capacity > 0)
            snprintf(cap, sizeof cap, ", expert capacity %.2f%s", hb->moe_capacity,
                     hb->moe_pad ? " (padded)" : "");
        if (hb->moe_imbalance > 1.0)
            snprintf(skew, sizeof skew, ", expert routing skewed %.2fx%s", hb->moe_imbalance,
                     cap);
        else
            snprintf(skew, sizeof skew, ", expert routing balanced%s", cap);
    }
    fprintf(out, "# habits  efficiency %.2f%s%s, memory margin %.0f%%, bucket %.0f MB, gradients "
                 "reduced in %d bytes%s, ZeRO %d-%d, recompute %s%s, overlap %s%s%s%s%s%s%s%s%s%s\n",
            hb->efficiency, fp8, attn, hb->mem_margin * 100, hb->bucket_bytes / 1048576.0,
            hb->grad_bytes, copy,
            hb->zero_min, hb->zero_max, cc_recompute_names[hb->recompute],
            (hb->recompute == CC_RC_AUTO || hb->recompute == CC_RC_NONE) &&
                    cc_habits_offload_searched(hb, c)
                ? ", activation offload" : "",
            hb->dp_overlap == 2 ? "only without pipeline" : hb->dp_overlap ? "on" : "off",
            hb->pp_overlap ? "" : ", blocking pipeline sends",
            hb->pp_scatter ? ", pipeline scatter/gather" : "",
            vpad,
            hb->tp_overlap ? ", tensor-parallel overlap" : "",
            hb->ep_overlap && cc_model_moe(m) ? ", expert all-to-all overlap" : "",
            hb->dispatcher == CC_DISPATCH_DEEPEP && cc_model_moe(m)     ? ", DeepEP dispatcher"
            : hb->dispatcher == CC_DISPATCH_HYBRIDEP && cc_model_moe(m) ? ", HybridEP dispatcher"
                                                                       : "",
            hb->fp8_cache && m->prec == CC_PREC_FP8 ? ", fp8 weight cache" : "",
            hb->gemm_waves ? (c->sms > 0 ? ", GEMM waves" : ", GEMM waves (SMs unknown: off)")
                           : ", GEMM waves off",
            skew);
    char cb[384];
    const char *caution = cc_layout_caution(m, c, hb, cb, sizeof cb);
    if (caution)
        fprintf(out, "# caution %s\n", caution);
    const char *hint = cc_layout_hint(m, c, hb, cb, sizeof cb);
    if (hint)
        fprintf(out, "# hint    %s\n", hint);
}

struct part { const char *name; double t; };

#define NPARTS 8
#define PART_EP 3 /* shown only for a model with experts */

static void parts(const struct cc_eval *e, struct part p[NPARTS])
{
    p[0] = (struct part){"compute", e->t_compute};
    p[1] = (struct part){"tensor-parallel communication", e->t_tp};
    p[2] = (struct part){"context-parallel communication", e->t_cp};
    p[PART_EP] = (struct part){"expert-parallel all-to-all", e->t_ep};
    p[4] = (struct part){"pipeline sends", e->t_pp};
    p[5] = (struct part){"pipeline bubble", e->t_bubble};
    p[6] = (struct part){"data-parallel gradient reduction", e->t_dp};
    p[7] = (struct part){"optimizer step", e->t_opt};
}

const char *cc_layout_behind_why(const struct cc_eval *b, const struct cc_eval *o, char *buf,
                                 size_t len)
{
    struct part pb[NPARTS], po[NPARTS];
    double d[NPARTS], gap = o->t_step - b->t_step, sum = 0.0, top = 0.0;
    int pick[NPARTS] = {0}, npick = 0;
    size_t n = 0;
    parts(b, pb);
    parts(o, po);
    for (int j = 0; j < NPARTS; j++) {
        d[j] = po[j].t - pb[j].t; /* > 0: the better one spends less on it */
        top = fmax(top, fabs(d[j]));
    }
    /* the components that differ most, as many (up to four) as it takes for what they add
     * up to to come within a fifth of the whole difference: a reason that leaves out what
     * decides the ranking would mislead */
    while (npick < 4 && (npick == 0 || fabs(sum - gap) > 0.2 * fabs(gap))) {
        int x = -1;
        for (int j = 0; j < NPARTS; j++)
            if (!pick[j] && fabs(d[j]) >= 0.01 * top && (x < 0 || fabs(d[j]) > fabs(d[x])))
                x = j;
        if (x < 0)
            break;
        pick[x] = 1, npick++, sum += d[x];
    }
    buf[0] = 0;
    for (int pass = 0; pass < 2; pass++) /* what it spends less on first, largest first */
        for (int k = 0; k < npick; k++) {
            int x = -1;
            for (int j = 0; j < NPARTS; j++)
                if (pick[j] == 1 && (d[j] >= 0) == (pass == 0) &&
                    (x < 0 || fabs(d[j]) > fabs(d[x])))
                    x = j;
            if (x < 0 || n >= len)
                break;
            pick[x] = 2;
            int w = snprintf(buf + n, len - n, "%s%.3f s %s %s", n ? ", " : "", fabs(d[x]),
                             d[x] >= 0 ? "less" : "more", pb[x].name);
            n += w > 0 ? (size_t)w : 0;
        }
    if (n < len && o->mem_total < b->mem_total)
        snprintf(buf + n, len - n, " (though that one needs less memory)");
    return buf;
}

int cc_search_batch_note(const struct cc_model *m, const struct cc_search *s, long long *keep)
{
    long long l = s->batch_lcm, b = m->global_batch;
    *keep = l > 0 && (b + l - 1) / l <= 1000000000000LL / l ? (b + l - 1) / l * l : 0;
    return s->batch_skipped > 0 && s->batch_skipped > s->batch_whole;
}

void cc_layout_print_table(FILE *out, const struct cc_model *m, const struct cc_cluster *c,
                           const struct cc_search *s, int k)
{
    char lb[128];
    fprintf(out, "# searched %lld settings, %lld fit; %d layouts (tp,pp,dp) ranked, best "
                 "setting of each shown\n", s->evaluated, s->feasible, s->nbest);
    long long keep;
    if (cc_search_batch_note(m, s, &keep)) {
        char kb[96] = "";
        if (keep > 0)
            snprintf(kb, sizeof kb, "; --global-batch %lld keeps them all", keep);
        fprintf(out, "# note    dp = GPUs/(tp*pp*cp) must divide the global batch %lld: %lld of "
                     "%lld tp x pp x cp left out%s\n", m->global_batch, s->batch_skipped,
                s->batch_skipped + s->batch_whole, kb);
    }
    fputc('\n', out);
    int w = 52; /* the layout column fits the longest row shown */
    for (int i = 0; i < s->nbest && i < k; i++) {
        int n = (int)strlen(cc_layout_format(&s->best[i].layout, lb, sizeof lb));
        if (n > w)
            w = n;
    }
    int moe = cc_model_moe(m);
    fprintf(out, "%3s  %-*s %8s %9s %10s %9s %6s  %s\n", "#", w, "layout", "mem/GPU", "step(s)",
            "tokens/s", "tok/s/GPU", "MFU",
            moe ? "compute/tp/cp/ep/pp/bubble/dp/opt (% of step)"
                : "compute/tp/cp/pp/bubble/dp/opt (% of step)");
    for (int i = 0; i < s->nbest && i < k; i++) {
        const struct cc_eval *e = &s->best[i].eval;
        struct part p[NPARTS];
        parts(e, p);
        fprintf(out, "%3d  %-*s %5.1f GB %9.3f %10.0f %9.1f %5.1f%%  ", i + 1, w,
                cc_layout_format(&s->best[i].layout, lb, sizeof lb), e->mem_total / GB,
                e->t_step, e->tokens_per_s, e->tokens_per_s / c->gpus, e->mfu * 100);
        for (int j = 0; j < NPARTS; j++)
            if (j != PART_EP || moe)
                fprintf(out, "%s%.1f", j ? "/" : "", p[j].t / e->t_step * 100);
        fputc('\n', out);
    }
    /* the layout keys the rows use that are not plain degrees, said once */
    int has[6] = {0};
    for (int i = 0; i < s->nbest && i < k; i++) {
        const struct cc_layout *l = &s->best[i].layout;
        has[0] |= l->split, has[1] |= l->lfirst > 0, has[2] |= l->fill;
        has[3] |= l->rc == CC_RC_BLOCK, has[4] |= l->off > 0, has[5] |= l->etp > 1;
    }
    static const char *const key[6] = {
        "split=1: the embedding and the loss count as a layer each in the pipeline split",
        "first/last: the first and last stage's layers",
        "fill=1: virtual stages of ceil(layers / (pp v)) layers, the last the rest",
        "rcl: layers of each model chunk recomputed (rc=block)",
        "off: layers whose activations go to host memory",
        "etp: GPUs each expert is split over"};
    int nk = 0;
    for (int j = 0; j < 6; j++)
        if (has[j])
            fprintf(out, "%s%s", nk++ ? "; " : "  (", key[j]);
    if (nk)
        fprintf(out, ")\n");
    if (!s->nbest)
        return;
    const struct cc_eval *b = &s->best[0].eval;
    double comm = b->t_tp + b->t_cp + b->t_ep + b->t_pp + b->t_dp;
    char ep_share[32] = "";
    if (moe)
        snprintf(ep_share, sizeof ep_share, ", ep %.1f", b->t_ep / b->t_step * 100);
    fprintf(out, "\nbest: %s, %.3f s per step, %.0f tokens/s (%.1f per GPU), MFU %.1f%%%s, %.1f "
                 "GB of %.1f GB usable per GPU\n", short_layout(&s->best[0].layout, lb, sizeof lb),
            b->t_step, b->tokens_per_s, b->tokens_per_s / c->gpus, b->mfu * 100,
            m->prec == CC_PREC_FP8 ? " of the fp8 peak" : "", b->mem_total / GB, b->mem_limit / GB);
    fprintf(out, "  GPUs wait %.1f%% of the step: communication %.1f%% (tp %.1f, cp %.1f%s, pp "
                 "%.1f, dp %.1f), bubble %.1f%%\n",
            (comm + b->t_bubble) / b->t_step * 100, comm / b->t_step * 100,
            b->t_tp / b->t_step * 100, b->t_cp / b->t_step * 100, ep_share,
            b->t_pp / b->t_step * 100,
            b->t_dp / b->t_step * 100, b->t_bubble / b->t_step * 100);
    /* layouts the estimates cannot tell apart from the best */
    int near = 0;
    for (int i = 1; i < s->nbest && s->best[i].eval.t_step <= b->t_step * (1 + CC_LAYOUT_NEAR); i++)
        near++;
    if (near) {
        fprintf(out, "  %d more within %.0f%% of it (", near, CC_LAYOUT_NEAR * 100);
        for (int i = 1; i <= near && i <= 3; i++)
            fprintf(out, "%s%s +%.1f%%", i > 1 ? ", " : "",
                    short_layout(&s->best[i].layout, lb, sizeof lb),
                    (s->best[i].eval.t_step / b->t_step - 1) * 100);
        fprintf(out, "%s): ccbench's estimates of published runs err by up to ~6%%, so measure "
                     "these before choosing\n", near > 3 ? ", ..." : "");
    }
    for (int i = 1; i < s->nbest && i < 4; i++) {
        char other[64], why[256];
        fprintf(out, "  beats %s by %.1f%%: %s\n",
                short_layout(&s->best[i].layout, other, sizeof other),
                (s->best[i].eval.t_step / b->t_step - 1) * 100,
                cc_layout_behind_why(b, &s->best[i].eval, why, sizeof why));
    }
    (void)m;
}

void cc_layout_print_explain(FILE *out, const struct cc_model *m, const struct cc_cluster *c,
                             const struct cc_layout *l, const struct cc_eval *e)
{
    char lb[128], hb_buf[32];
    struct part p[NPARTS];
    struct cc_pplan pbuf; /* fill=1: the layout it makes */
    const struct cc_pplan *plan = cc_eval_plan(m, l, e, &pbuf);
    const char *plan_name = e->filled ? "the filled pipeline layout" : "the explicit pipeline layout";
    fprintf(out, "layout   %s\n", cc_layout_format(l, lb, sizeof lb));
    if (e->feasible)
        fprintf(out, "feasible yes\n");
    else
        fprintf(out, "feasible no: %s\n", e->why);
    char mtp[160] = "";
    if (m->mtp > 0 && e->mtp_rank >= 0) /* a standalone MTP stage */
        snprintf(mtp, sizeof mtp, "; stage %d also holds %d multi-token-prediction layer%s (a "
                 "standalone MTP stage; the logits on the last)", e->mtp_rank, m->mtp,
                 m->mtp == 1 ? "" : "s");
    else if (m->mtp > 0) /* outside the decoder's layers, on the last stage */
        snprintf(mtp, sizeof mtp, "; %s %d multi-token-prediction layer%s",
                 l->pp > 1 ? "the last stage also holds" : "plus", m->mtp,
                 m->mtp == 1 ? "" : "s");
    if (e->layers_first == e->layers_mid && e->layers_mid == e->layers_last)
        fprintf(out, "micro-batches per step %lld (gradient accumulation), layers per stage %g%s\n",
                e->m, e->layers_mid, mtp);
    else if (l->pp == 2)
        fprintf(out, "micro-batches per step %lld (gradient accumulation), layers per stage: "
                     "first %g, last %g (%s)%s\n",
                e->m, e->layers_first, e->layers_last,
                plan ? plan_name : "uneven first and last stage", mtp);
    else
        fprintf(out, "micro-batches per step %lld (gradient accumulation), layers per stage: "
                     "first %g, middle %g, last %g%s%s%s%s\n",
                e->m, e->layers_first, e->layers_mid, e->layers_last,
                l->lfirst > 0 ? " (uneven first and last stage)"
                : plan        ? " (" : " (embedding and loss count as one layer)",
                l->lfirst <= 0 && plan ? plan_name : "",
                l->lfirst <= 0 && plan ? "; middle: the most)" : "", mtp);
    if (plan && l->vpp > 1 && plan->n == l->pp * l->vpp) { /* chunk by chunk, as it places them */
        fprintf(out, "pipeline layout %s: chunks (layers) per stage:", plan->text);
        for (int r = 0; r < l->pp && r < 64; r++) {
            fprintf(out, "%s%d ", r ? "; " : " ", r);
            for (int k = 0; k < l->vpp; k++)
                fprintf(out, "%s%d", k ? "," : "", cc_pplan_chunk(plan, l->pp, r, k));
        }
        fprintf(out, "%s\n", l->pp > 64 ? "; ..." : "");
    }
    if (cc_model_mixed(m) && l->pp == 1)
        fprintf(out, "layers with experts %g of %g; dense (MLP of ffn %d): the first %d%s\n",
                e->experts_first, e->layers_first, m->ffn, m->first_dense,
                m->moe_step > 1 ? " and those between every moe_layer_step-th" : "");
    else if (cc_model_mixed(m)) {
        char mid[64] = "";
        if (l->pp > 2)
            snprintf(mid, sizeof mid, ", stage %d %g of %g", e->mid_stage, e->experts_mid,
                     e->layers_mid);
        fprintf(out, "layers with experts per stage: first %g of %g%s, last %g of %g; the "
                     "others dense (MLP of ffn %d)\n", e->experts_first, e->layers_first, mid,
                e->experts_last, e->layers_last, m->ffn);
    }
    if (plan && l->pp > 2 && (e->mid_stage != 1 || e->mid_inflight_stage != 1))
        fprintf(out, "middle stage costed: stage %d of %d (0-based), the middle one with the "
                     "most layers%s, with %s layers in flight (the most of any middle stage)\n",
                e->mid_stage, l->pp, cc_model_mixed(m) ? " (of them the most expert layers)" : "",
                e->mid_inflight_stage == e->mid_stage ? "its own"
                : e->mid_inflight_stage == 1          ? "the second stage's"
                                                      : "an earlier middle stage's");
    else if (cc_model_mixed(m) && l->pp > 2 && e->mid_stage != 1)
        fprintf(out, "middle stage costed: stage %d of %d (0-based), the middle one with the "
                     "most expert layers, with the second's micro-batches in flight\n",
                e->mid_stage, l->pp);
    if (e->vocab > m->vocab)
        fprintf(out, "vocabulary %d padded to %d (%d rows per tp rank)\n", m->vocab, e->vocab,
                e->vocab / l->tp);
    double chunk = e->layers_mid / (l->vpp > 0 ? l->vpp : 1);
    if (l->off > 0 && e->off_bytes > 0)
        fprintf(out, "activation offload: the first %d of %d layers' activations to host memory, "
                     "%.2f GB per micro-batch each way at %s GB/s (%.0f GB of host memory per "
                     "GPU); %.3f s of the step not hidden behind compute\n", l->off,
                m->layers, e->off_bytes / GB, cc_gbps_text(c->host_Bps, hb_buf, sizeof hb_buf),
                c->host_mem_bytes / GB, e->t_offload);
    if (l->rc == CC_RC_SELECTIVE) {
        char mods[128];
        fprintf(out, "recomputation: selective, modules %s (--recompute-modules)\n",
                cc_rc_modules_format(m->rc_modules, ", ", mods, sizeof mods));
    }
    if (l->rc == CC_RC_BLOCK && e->rcl > 0 && plan)
        fprintf(out, "recomputation: the first %d layers of each model chunk recomputed whole, the "
                     "others kept (%s: a chunk of %d layer%s or fewer is recomputed whole)\n",
                e->rcl, plan_name, e->rcl, e->rcl == 1 ? "" : "s");
    else if (l->rc == CC_RC_BLOCK && e->rcl > 0 && l->lfirst <= 0 && e->rcl < chunk)
        fprintf(out, "recomputation: the first %d of the %g layers of each of the %d model "
                     "chunk(s) per stage recomputed whole, the others kept\n", e->rcl, chunk,
                l->vpp > 0 ? l->vpp : 1);
    else if (l->rc == CC_RC_BLOCK && e->rcl > 0 && l->lfirst > 0) {
        /* uneven stages: the chunks of rcl layers or fewer are recomputed whole */
        int v = l->vpp > 0 ? l->vpp : 1;
        const struct { const char *name; double c; } st[3] = {
            {"first", e->layers_first / v}, {"middle", e->layers_mid / v},
            {"last", e->layers_last / v}};
        fprintf(out, "recomputation: the first %d layers of each of the %d model chunk(s) per "
                     "stage recomputed whole, the others kept; chunks of",
                e->rcl, v);
        for (int i = 0, n = 0; i < 3; i++)
            if (i != 1 || l->pp > 2)
                fprintf(out, "%s %g layer%s (%s stage%s)%s", n++ ? "," : "", st[i].c,
                        st[i].c == 1 ? "" : "s", st[i].name, i == 1 ? "s" : "",
                        st[i].c <= e->rcl ? ": all" : "");
        fputc('\n', out);
    }
    /* an explicit layout's middle stage costed may be another than the second */
    char mid[32] = "second", xs[32] = "";
    if (plan && e->mid_stage != 1)
        snprintf(mid, sizeof mid, "stage %d", e->mid_stage);
    if (e->mtp_rank >= 0) /* a standalone MTP stage */
        snprintf(xs, sizeof xs, "stage %d (MTP)", e->mtp_rank);
    fprintf(out, "memory per GPU (%s%s): weights %.2f GB, gradients %.2f GB, optimizer "
                 "%.2f GB, activations %.2f GB = %.2f GB of %.2f GB usable (%.0f GB)\n",
            e->mem_stage == 2 ? mid : e->mem_stage == 3 ? xs : cc_stage_name(e->mem_stage),
            (e->mem_stage == 2 && plan && e->mid_stage != 1) || e->mem_stage == 3 ? "" : " stage",
            e->mem_weights / GB, e->mem_grads / GB,
            e->mem_optim / GB, e->mem_act / GB, e->mem_total / GB, e->mem_limit / GB,
            c->mem_bytes / GB);
    if (e->mem_stages[1] > 0) { /* pp > 1: the stages side by side */
        fprintf(out, "memory per GPU by stage: first %.2f GB", e->mem_stages[0] / GB);
        if (e->mem_stages[2] > 0)
            fprintf(out, ", %s %.2f GB", mid, e->mem_stages[2] / GB);
        if (e->mem_stages[3] > 0)
            fprintf(out, ", %s %.2f GB", xs, e->mem_stages[3] / GB);
        fprintf(out, ", last %.2f GB\n", e->mem_stages[1] / GB);
    }
    if (e->z3_units > 0)
        fprintf(out, "ZeRO 3: per micro-batch %d units (a layer each; the embedding, the output "
                     "layer) gathered twice and their gradients scattered once\n", e->z3_units);
    if (cc_model_moe(m))
    {
        char rt[224] = "routing assumed balanced";
        if (e->capacity_pad)
            snprintf(rt, sizeof rt, "every expert's input padded to the capacity factor %.2f, "
                     "tokens beyond it dropped", e->capacity);
        else if (e->capacity > 0 && e->skew > 0 && e->skew >= e->capacity)
            snprintf(rt, sizeof rt, "the busiest GPU's experts get %.2fx their balanced share, "
                     "capped by the capacity factor (tokens beyond it dropped)", e->skew);
        else if (e->skew > 1.0 && e->skew >= e->skew_max)
            snprintf(rt, sizeof rt, "the busiest GPU's experts get %.2fx their balanced share, "
                     "all the copies of tokens they can take (--moe-imbalance at its most here, %.2f)",
                     e->skew, e->skew_max);
        else if (e->skew > 1.0)
            snprintf(rt, sizeof rt, "the busiest GPU's experts get %.2fx their balanced share "
                     "(--moe-imbalance)", e->skew);
        else if (cc_layout_ep(l) == 1)
            snprintf(rt, sizeof rt, "the routing's balance irrelevant at ep 1");
        else if (m->topk >= m->experts) /* every token to every expert */
            snprintf(rt, sizeof rt, "every token to every expert: the routing's balance "
                     "irrelevant");
        int ep = cc_layout_ep(l);
        char held[48], red[48];
        if (m->experts % ep == 0)
            snprintf(held, sizeof held, "%d", m->experts / ep);
        else /* an infeasible layout explained */
            snprintf(held, sizeof held, "%d/%d (not a whole number)", m->experts, ep);
        if (e->edp > 1)
            snprintf(red, sizeof red, "reduced over %d GPUs", e->edp);
        else
            snprintf(red, sizeof red, "not reduced (one copy)");
        char split[64] = "";
        if (cc_layout_etp(l) > 1)
            snprintf(split, sizeof split, ", each split over %d GPUs (etp %d)", cc_layout_etp(l),
                     cc_layout_etp(l));
        fprintf(out, "experts: %s of the %d experts of every layer per GPU (ep %d)%s, their "
                     "gradients %s; each token to %d of them, %s\n",
                held, m->experts, ep, split, red, m->topk, rt);
        if (e->t_ep_hidden > 0)
            fprintf(out, "experts: %.4f s of all-to-all hidden behind other micro-batches' "
                         "compute (--ep-overlap 1: combined 1F1B, at best), %.4f s left\n",
                    e->t_ep_hidden, e->t_ep);
    }
    parts(e, p);
    fprintf(out, "time per step %.4f s:\n", e->t_step);
    for (int j = 0; j < NPARTS; j++)
        if (j != PART_EP || cc_model_moe(m))
            fprintf(out, "  %-34s %10.4f s %6.1f%%\n", p[j].name, p[j].t,
                e->t_step > 0 ? p[j].t / e->t_step * 100 : 0);
    double used = (double)l->tp * l->pp * l->dp * l->cp; /* the layout's GPUs */
    fprintf(out, "tokens/s %.0f (%.1f per GPU), MFU %.1f%%%s, executed %.1f TFLOP/s per GPU%s\n",
            e->tokens_per_s, e->tokens_per_s / used, e->mfu * 100,
            m->prec == CC_PREC_FP8 ? " of the fp8 peak" : "", e->hw_tflops,
            l->rc == CC_RC_NONE ? "" : " (with recomputation)");
    fprintf(out, "Megatron-LM's log would show %.1f TFLOP/s/GPU (its count since March 2025: the "
                 "attention products halved for the causal mask, the vocabulary padded to a "
                 "multiple of --vocab-pad x tp, no recomputation; before, MFU x peak)\n",
            e->megatron_tflops);
}

static const char *ordinal(int n, char *buf, size_t len)
{
    const char *suf = (n % 100) / 10 == 1 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd"
                                                  : n % 10 == 3 ? "rd" : "th";
    snprintf(buf, len, "%d%s", n, suf);
    return buf;
}

static int same_layout(const struct cc_layout *a, const struct cc_layout *b)
{
    return a->tp == b->tp && a->pp == b->pp && a->dp == b->dp && a->cp == b->cp &&
           a->mb == b->mb && a->vpp == b->vpp && a->sp == b->sp && a->zero == b->zero &&
           a->rc == b->rc && a->split == b->split && (a->rc != CC_RC_BLOCK || a->rcl == b->rcl) &&
           a->off == b->off && a->lfirst == b->lfirst && a->llast == b->llast &&
           a->fill == b->fill;
}

/* Why a layout has no place in the ranking. */
static const char *unranked_why(const struct cc_cluster *c, const struct cc_layout *l)
{
    if ((double)l->tp * l->pp * l->dp * l->cp != c->gpus)
        return "it does not use the cluster's GPUs";
    return "none of its settings fits within the search's limits";
}

void cc_layout_print_versus(FILE *out, const struct cc_cluster *c, const struct cc_search *s,
                            cc_status st, const struct cc_layout *l, const struct cc_eval *e)
{
    char lb[128], sb[64], ob[16];
    if (st != CC_OK || s->nbest < 1) {
        fprintf(out, "search   %lld settings, none to compare with: %s\n", s->evaluated,
                s->why_none);
        return;
    }
    const struct cc_ranked *b = &s->best[0];
    int r = cc_search_rank(s, l->tp, l->pp, l->dp, l->cp);
    fprintf(out, "search   %lld settings, %lld fit, %d layouts ranked; the first: %s, %.4f s\n",
            s->evaluated, s->feasible, s->nbest, cc_layout_format(&b->layout, lb, sizeof lb),
            b->eval.t_step);
    if (e->feasible) {
        double d = e->t_step / b->eval.t_step - 1;
        if (same_layout(l, &b->layout))
            fprintf(out, "         this setting is the first\n");
        else if (d > 1e-9)
            fprintf(out, "         this setting is %.1f%% slower than the first\n", d * 100);
        else if (d < -1e-9)
            fprintf(out, "         this setting is %.1f%% faster than the first: the search's "
                         "limits (%s--mb-max, --interleave, --zero, --recompute, ...) leave it "
                         "out\n", -d * 100, l->off > 0 ? "--offload, " : "");
        else
            fprintf(out, "         this setting ties with the first\n");
    }
    if (r < 0)
        fprintf(out, "         %s is not ranked: %s\n", short_layout(l, sb, sizeof sb),
                unranked_why(c, l));
    else
        fprintf(out, "         %s ranks %s of %d at its best setting, %s (%.4f s)\n",
                short_layout(l, sb, sizeof sb), ordinal(r + 1, ob, sizeof ob), s->nbest,
                cc_layout_format(&s->best[r].layout, lb, sizeof lb), s->best[r].eval.t_step);
}

json_t *cc_layout_versus_json(const struct cc_model *m, const struct cc_cluster *c,
                              const struct cc_habits *hb, const struct cc_search *s,
                              cc_status st, const struct cc_layout *l, const struct cc_eval *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "evaluated", json_integer(s->evaluated));
    json_object_set_new(o, "feasible", json_integer(s->feasible));
    json_object_set_new(o, "layouts", json_integer(st == CC_OK ? s->nbest : 0));
    if (st != CC_OK || s->nbest < 1) {
        json_object_set_new(o, "error", json_string(s->why_none));
        return o;
    }
    int r = cc_search_rank(s, l->tp, l->pp, l->dp, l->cp);
    json_object_set_new(o, "best", cc_layout_ranked_json(m, c, hb, &s->best[0].layout,
                                                         &s->best[0].eval));
    double d = e->t_step / s->best[0].eval.t_step - 1;
    json_object_set_new(o, "behind_best_pct",
                        e->feasible && isfinite(d) ? json_real(d * 100) : json_null());
    json_object_set_new(o, "is_best", json_boolean(same_layout(l, &s->best[0].layout)));
    json_object_set_new(o, "rank", r < 0 ? json_null() : json_integer(r + 1));
    json_object_set_new(o, "best_setting", r < 0 ? json_null()
                                                 : cc_layout_ranked_json(m, c, hb, &s->best[r].layout,
                                                                         &s->best[r].eval));
    json_object_set_new(o, "unranked_why", r < 0 ? json_string(unranked_why(c, l)) : json_null());
    return o;
}

/* A JSON number, or null where the figure is not finite (no key is ever dropped). */
static json_t *jnum(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *cc_layout_ranked_json(const struct cc_model *m, const struct cc_cluster *c,
                              const struct cc_habits *hb, const struct cc_layout *l,
                              const struct cc_eval *e)
{
    char args[2048], run[2400];
    json_t *o = json_object(), *lay = json_object(), *mem = json_object(), *t = json_object();
    json_object_set_new(lay, "tp", json_integer(l->tp));
    json_object_set_new(lay, "pp", json_integer(l->pp));
    json_object_set_new(lay, "dp", json_integer(l->dp));
    json_object_set_new(lay, "cp", json_integer(l->cp));
    json_object_set_new(lay, "micro_batch", json_integer(l->mb));
    json_object_set_new(lay, "interleave", json_integer(l->vpp));
    json_object_set_new(lay, "sequence_parallel", json_boolean(l->sp));
    json_object_set_new(lay, "zero", json_integer(l->zero));
    json_object_set_new(lay, "recompute", json_string(cc_recompute_names[l->rc]));
    json_object_set_new(lay, "recompute_layers",
                        l->rc == CC_RC_BLOCK ? json_integer(l->rcl) : json_null());
    json_t *mods = l->rc == CC_RC_SELECTIVE ? json_array() : json_null(); /* what it recomputes */
    for (int k = 0; k < CC_RCM_COUNT && l->rc == CC_RC_SELECTIVE; k++)
        if (cc_model_rc_modules(m) & (1u << k))
            json_array_append_new(mods, json_string(cc_rc_module_names[k]));
    json_object_set_new(lay, "recompute_modules", mods);
    json_object_set_new(lay, "offload_layers", json_integer(l->off > 0 ? l->off : 0));
    json_object_set_new(lay, "ep", json_integer(cc_layout_ep(l)));
    json_object_set_new(lay, "etp", json_integer(cc_layout_etp(l)));
    json_object_set_new(lay, "expert_dp", json_integer(e->edp));
    /* the busiest expert-parallel rank's routed tokens over its share, as costed */
    json_object_set_new(lay, "expert_skew", jnum(e->skew > 1.0 ? e->skew : 1.0));
    json_object_set_new(lay, "uneven_split", json_boolean(l->split));
    struct cc_pplan pbuf;
    const struct cc_pplan *plan = cc_eval_plan(m, l, e, &pbuf);
    json_object_set_new(lay, "pipeline_layout", plan ? json_string(plan->text) : json_null());
    json_object_set_new(lay, "filled_pipeline_layout", json_boolean(e->filled));
    /* the pipeline rank of a standalone MTP stage, else null */
    json_object_set_new(lay, "mtp_stage", e->mtp_rank >= 0 ? json_integer(e->mtp_rank) : json_null());
    json_object_set_new(lay, "first_stage_layers", l->lfirst > 0 ? json_integer(l->lfirst) : json_null());
    json_object_set_new(lay, "last_stage_layers", l->lfirst > 0 ? json_integer(l->llast) : json_null());
    /* [first, middle, last]; no middle stage below pp 3 */
    json_object_set_new(lay, "layers_per_stage",
                        json_pack("[fof]", e->layers_first,
                                  l->pp > 2 ? json_real(e->layers_mid) : json_null(),
                                  e->layers_last));
    json_object_set_new(lay, "expert_layers_per_stage",
                        json_pack("[fof]", e->experts_first,
                                  l->pp > 2 ? json_real(e->experts_mid) : json_null(),
                                  e->experts_last));
    json_object_set_new(lay, "middle_stage", l->pp > 2 ? json_integer(e->mid_stage) : json_null());
    json_object_set_new(lay, "grad_accum", json_integer(e->m));
    json_object_set_new(lay, "zero3_units", json_integer(e->z3_units));
    json_object_set_new(lay, "padded_vocab", json_integer(e->vocab));
    json_object_set_new(o, "layout", lay);
    json_object_set_new(o, "feasible", json_boolean(e->feasible));
    if (!e->feasible)
        json_object_set_new(o, "why", json_string(e->why));
    json_object_set_new(mem, "stage", json_string(cc_stage_name(e->mem_stage)));
    json_object_set_new(mem, "weights", jnum(e->mem_weights));
    json_object_set_new(mem, "gradients", jnum(e->mem_grads));
    json_object_set_new(mem, "optimizer", jnum(e->mem_optim));
    json_object_set_new(mem, "activations", jnum(e->mem_act));
    json_object_set_new(mem, "total", jnum(e->mem_total));
    json_object_set_new(mem, "limit", jnum(e->mem_limit));
    json_t *stages = json_object(); /* each stage evaluated: first, last (pp > 1), second, mtp */
    for (int i = 0; i < 4; i++)
        if (e->mem_stages[i] > 0)
            json_object_set_new(stages, cc_stage_name(i), jnum(e->mem_stages[i]));
    json_object_set_new(mem, "stages", stages);
    json_object_set_new(o, "memory_bytes", mem);
    json_object_set_new(t, "compute", jnum(e->t_compute));
    json_object_set_new(t, "offload_exposed", jnum(e->t_offload));
    json_object_set_new(t, "ep_comm_hidden", jnum(e->t_ep_hidden));
    json_object_set_new(t, "tp_comm", jnum(e->t_tp));
    json_object_set_new(t, "cp_comm", jnum(e->t_cp));
    json_object_set_new(t, "ep_comm", jnum(e->t_ep));
    json_object_set_new(t, "pp_send", jnum(e->t_pp));
    json_object_set_new(t, "bubble", jnum(e->t_bubble));
    json_object_set_new(t, "dp_reduce", jnum(e->t_dp));
    json_object_set_new(t, "optimizer", jnum(e->t_opt));
    json_object_set_new(t, "step", jnum(e->t_step));
    json_object_set_new(o, "time_s", t);
    json_object_set_new(o, "tokens_per_s", jnum(e->tokens_per_s));
    json_object_set_new(o, "mfu", jnum(e->mfu));
    json_object_set_new(o, "hw_tflops_per_gpu", jnum(e->hw_tflops));
    json_object_set_new(o, "megatron_log_tflops_per_gpu", jnum(e->megatron_tflops));
    json_object_set_new(o, "megatron_args",
                        json_string(cc_layout_megatron_args(m, hb, l, args, sizeof args)));
    json_object_set_new(o, "torchrun", json_string(cc_layout_torchrun(m, hb, c, l, args,
                                                                      run, sizeof run)));
    json_object_set_new(o, "deepspeed", cc_layout_deepspeed_json(m, hb, l, e));
    struct cc_launch_note note[16];
    int nn = cc_layout_launch_notes(m, hb, c, l, e, note, (int)(sizeof note / sizeof note[0]));
    json_t *mn = json_array(), *dn = json_array();
    for (int i = 0; i < nn; i++)
        json_array_append_new(note[i].deepspeed ? dn : mn, json_string(note[i].text));
    json_object_set_new(o, "megatron_notes", mn);
    json_object_set_new(o, "deepspeed_notes", dn);
    return o;
}

json_t *cc_layout_context_json(const struct cc_model *m, const struct cc_cluster *c,
                               const struct cc_habits *hb)
{
    json_t *mo = json_object(), *co = json_object(), *ho = json_object(), *o = json_object();
    json_object_set_new(mo, "name", json_string(m->name));
    json_object_set_new(mo, "source", json_string(m->source));
    json_object_set_new(mo, "params", jnum(cc_model_params(m)));
    json_object_set_new(mo, "layers", json_integer(m->layers));
    json_object_set_new(mo, "hidden", json_integer(m->hidden));
    json_object_set_new(mo, "heads", json_integer(m->heads));
    json_object_set_new(mo, "kv_heads", json_integer(m->kv_heads));
    json_object_set_new(mo, "ffn", json_integer(m->ffn));
    json_object_set_new(mo, "experts", json_integer(m->experts));
    json_object_set_new(mo, "topk", json_integer(cc_model_moe(m) ? m->topk : 0));
    json_object_set_new(mo, "moe_ffn", json_integer(cc_model_moe(m) ? m->moe_ffn : 0));
    json_object_set_new(mo, "shared_ffn", json_integer(cc_model_moe(m) ? m->shared_ffn : 0));
    json_object_set_new(mo, "q_lora_rank", json_integer(m->q_lora));
    json_object_set_new(mo, "kv_lora_rank", json_integer(m->kv_lora));
    json_object_set_new(mo, "qk_nope_head_dim", json_integer(m->qk_nope));
    json_object_set_new(mo, "qk_rope_head_dim", json_integer(m->qk_rope));
    json_object_set_new(mo, "v_head_dim", json_integer(m->v_dim));
    json_object_set_new(mo, "mtp_layers", json_integer(m->mtp));
    json_object_set_new(mo, "first_dense_layers", json_integer(m->first_dense));
    json_object_set_new(mo, "moe_layer_step", json_integer(m->moe_step > 1 ? m->moe_step : 1));
    json_object_set_new(mo, "router_groups", json_integer(m->route_groups));
    json_object_set_new(mo, "router_group_topk", json_integer(m->route_group_topk));
    json_object_set_new(mo, "expert_layers", json_integer(cc_model_expert_layers(m)));
    json_object_set_new(mo, "vocab", json_integer(m->vocab));
    json_object_set_new(mo, "seq_len", json_integer(m->seq_len));
    json_object_set_new(mo, "global_batch", json_integer(m->global_batch));
    json_object_set_new(mo, "precision", json_string(cc_prec_names[m->prec]));
    json_object_set_new(mo, "optimizer", json_string(cc_optim_names[m->optim]));
    json_object_set_new(mo, "mlp", json_string(cc_mlp_names[m->mlp]));
    json_object_set_new(mo, "flash_attention", json_boolean(m->flash_attn));
    json_object_set_new(mo, "tied_embeddings", json_boolean(m->tied_embed));
    json_object_set_new(mo, "dropout", json_boolean(cc_model_dropout(m)));
    json_object_set_new(mo, "rope_theta", m->mlp == CC_MLP_SWIGLU
                                              ? jnum(m->rope_base > 0 ? m->rope_base : 10000)
                                              : json_null());
    json_object_set_new(mo, "qkv_bias", json_boolean(m->qkv_bias));
    json_object_set_new(mo, "head_dim", cc_model_mla(m) ? json_null() /* its widths below */
                                                        : json_integer((json_int_t)cc_model_head_dim(m)));
    json_object_set_new(mo, "qk_norm", json_boolean(m->qk_norm));
    json_object_set_new(co, "name", json_string(c->name));
    json_object_set_new(co, "gpu", json_string(c->gpu_name));
    json_object_set_new(co, "gpus", json_integer(c->gpus));
    json_object_set_new(co, "nodes", json_integer(c->nodes));
    json_object_set_new(co, "gpus_per_node", json_integer(c->gpus_per_node));
    json_object_set_new(co, "gpus_per_host", json_integer(cc_cluster_per_host(c)));
    json_object_set_new(co, "memory_bytes", jnum(c->mem_bytes));
    json_object_set_new(co, "host_GBps", jnum(c->host_Bps / GB));
    json_object_set_new(co, "host_memory_bytes", jnum(c->host_mem_bytes));
    json_object_set_new(co, "peak_flops", jnum(c->peak_flops[m->prec]));
    json_object_set_new(co, "sms", json_integer(c->sms));
    json_object_set_new(co, "intra_busbw_GBps", jnum(c->intra_busbw_Bps / GB));
    json_object_set_new(co, "inter_node_GBps", jnum(c->inter_node_Bps / GB));
    json_object_set_new(co, "rates_from", json_string(c->bw_source));
    json_t *fits = json_array();
    for (int k = 0; k < CC_COLL_COUNT; k++)
        for (int sc = 0; sc < 2; sc++)
            for (int i = 0; i < c->nfits[k][sc]; i++) {
                const struct cc_fit *f = &c->fits[k][sc][i];
                json_t *fo = json_object();
                json_object_set_new(fo, "collective",
                                    json_string(cc_coll_get((enum cc_coll_id)k)->name));
                json_object_set_new(fo, "scope", json_string(sc == CC_SCOPE_INTRA ? "intra"
                                                                                  : "inter"));
                json_object_set_new(fo, "nranks", json_integer(f->nranks));
                json_object_set_new(fo, "per_node", json_integer(f->per_node));
                json_object_set_new(fo, "nodes", json_integer(f->nodes));
                json_object_set_new(fo, "latency_us", jnum(f->alpha_s * 1e6));
                json_object_set_new(fo, "busbw_GBps", jnum(f->busbw_Bps / GB));
                json_object_set_new(fo, "sizes", json_integer(f->sizes));
                json_object_set_new(fo, "points", json_integer(f->points));
                json_object_set_new(fo, "from", cc_topo_jtext(f->from));
                json_array_append_new(fits, fo);
            }
    json_object_set_new(co, "fits", fits);
    json_t *stand = json_array();
    struct stand_in si[8];
    for (int i = 0, n = stand_ins(c, si); i < n; i++)
        json_array_append_new(stand, json_pack("{s:s,s:s,s:o,s:b}", "collective",
            cc_coll_get(si[i].coll)->name, "scope", si[i].scope == CC_SCOPE_INTRA ? "intra"
                                                                                  : "inter",
            "from", si[i].from < 0 ? json_null()
                                   : json_string(cc_coll_get((enum cc_coll_id)si[i].from)->name),
            "node_rate", si[i].node && si[i].from >= 0));
    json_object_set_new(co, "stand_ins", stand);
    char cb[384];
    const char *caution = cc_layout_caution(m, c, hb, cb, sizeof cb);
    json_object_set_new(ho, "caution", caution ? json_string(caution) : json_null());
    const char *hint = cc_layout_hint(m, c, hb, cb, sizeof cb);
    json_object_set_new(ho, "hint", hint ? json_string(hint) : json_null());
    json_object_set_new(ho, "efficiency", jnum(hb->efficiency));
    json_object_set_new(ho, "efficiency_fp8", jnum(hb->efficiency_fp8));
    json_object_set_new(ho, "moe_imbalance", jnum(hb->moe_imbalance));
    json_object_set_new(ho, "moe_capacity", jnum(hb->moe_capacity));
    json_object_set_new(ho, "moe_pad", json_boolean(hb->moe_pad));
    json_object_set_new(ho, "efficiency_attn",
                        jnum(cc_habits_attn_efficiency(hb)));
    json_object_set_new(ho, "mem_margin", jnum(hb->mem_margin));
    json_object_set_new(ho, "bucket_bytes", json_integer((json_int_t)hb->bucket_bytes));
    json_object_set_new(ho, "grad_reduce_bytes", json_integer(hb->grad_bytes));
    json_object_set_new(ho, "grad_copy_bytes", json_integer(hb->main_grad_bytes));
    json_object_set_new(ho, "zero_min", json_integer(hb->zero_min));
    json_object_set_new(ho, "zero_max", json_integer(hb->zero_max));
    json_object_set_new(ho, "accum_fusion", json_boolean(hb->accum_fusion));
    json_object_set_new(ho, "uneven_pp", json_boolean(hb->uneven_pp));
    json_object_set_new(ho, "gemm_waves", json_boolean(hb->gemm_waves && c->sms > 0));
    json_object_set_new(ho, "dp_overlap", json_integer(hb->dp_overlap)); /* 0, 1, 2: pp=1 only */
    json_object_set_new(ho, "pp_overlap", json_boolean(hb->pp_overlap));
    json_object_set_new(ho, "pp_scatter", json_boolean(hb->pp_scatter));
    json_object_set_new(ho, "vocab_pad", json_integer(hb->vocab_pad));
    json_object_set_new(ho, "tp_overlap", json_boolean(hb->tp_overlap));
    json_object_set_new(ho, "ep_overlap", json_boolean(hb->ep_overlap));
    json_object_set_new(ho, "dispatcher", json_string(cc_dispatcher_names[hb->dispatcher]));
    json_object_set_new(ho, "fp8_weight_cache", json_boolean(hb->fp8_cache));
    json_object_set_new(ho, "recompute", json_string(cc_recompute_names[hb->recompute]));
    json_object_set_new(ho, "offload", json_string(hb->offload == 1 ? "on"
                                                   : hb->offload == 2 ? "auto" : "off"));
    json_object_set_new(o, "model", mo);
    json_object_set_new(o, "cluster", co);
    json_object_set_new(o, "habits", ho);
    return o;
}

void cc_layout_print_megatron(FILE *out, const struct cc_megatron_check *k, int n,
                              const struct cc_habits *hb, const char *command)
{
    int pass = 0;
    double sum = 0, worst = 0, rsum = 0, rworst = 0;
    char lb[64], tb[64];
    fprintf(out, "# ccbench layout against Megatron-LM (Narayanan et al., SC'21, Table 1)\n\n");
    fprintf(out, "Produced by `%s` (deterministic; no hardware needed).\n\n", command);
    fprintf(out, "Published rows transcribed from the paper (arXiv 2104.04473, Table 1): GPT "
                 "models, s=2048, V=51200, A100 80 GB, 8 per node, 8x HDR 200 Gb/s; "
                 "t, p, GPU count, batch and achieved TFLOP/s per GPU as printed there "
                 "(d = GPUs / (t*p)).\n\n");
    fprintf(out, "Both sides use the paper's FLOP count 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) "
                 "(with recomputation) divided by GPUs x step time. ccbench runs with the "
                 "paper's habits: fp16, full recomputation, gradients all-reduced in fp16 with "
                 "an fp32 copy in the optimizer, no distributed optimizer, no sequence "
                 "parallelism, the gradient all-reduce overlapped with the last backward pass "
                 "only without pipeline parallelism (PyTorch DDP for p=1, Megatron's own DDP "
                 "after the pipeline flush for p>1, as NVIDIA's examples/sc21/run_table_1.sh "
                 "sets it); one global efficiency "
                 "%.2f (achieved/peak of a matrix multiply that occupies every SM)%s, no "
                 "per-row factor.\n\n",
            hb->efficiency, hb->gemm_waves ? ", less each GEMM's tile and wave quantization on "
                                             "the A100's 108 SMs" : "");
    fprintf(out, "| model | GPUs | batch | published t,p,d | rank of published in ccbench | "
                 "ccbench first choice | published TFLOP/s/GPU | ccbench TFLOP/s/GPU | error | "
                 "as run: mb, v | ccbench as run | error as run | pass |\n"
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        const struct cc_megatron_row *r = k[i].row;
        snprintf(lb, sizeof lb, "%d,%d,%d", r->tp, r->pp, r->gpus / (r->tp * r->pp));
        snprintf(tb, sizeof tb, "%d,%d,%d (mb=%d, v=%d)", k[i].top.layout.tp,
                 k[i].top.layout.pp, k[i].top.layout.dp, k[i].top.layout.mb,
                 k[i].top.layout.vpp);
        struct cc_model m;
        cc_model_preset(r->preset, &m);
        fprintf(out, "| %s | %d | %lld | %s | %d | %s | %.0f | %.1f | %+.1f%% | %d, %d | "
                "%.1f%s | %+.1f%% | %s |\n", r->preset, r->gpus, m.global_batch, lb,
                k[i].rank + 1, tb, r->tflops, k[i].pred_tflops, k[i].err_pct, r->mb, r->vpp,
                k[i].run_tflops, k[i].as_run.feasible ? "" : " (does not fit)",
                k[i].run_err_pct, k[i].pass ? "yes" : "**no**");
        pass += k[i].pass;
        sum += fabs(k[i].err_pct);
        worst = fmax(worst, fabs(k[i].err_pct));
        rsum += fabs(k[i].run_err_pct);
        rworst = fmax(rworst, fabs(k[i].run_err_pct));
    }
    fprintf(out, "\n\"ccbench TFLOP/s/GPU\" is the published t,p,d at ccbench's best micro-batch "
                 "and interleaving; \"as run\" at the micro-batch and interleaving of NVIDIA's "
                 "reproduction script (examples/sc21/run_table_1.sh in Megatron-LM).\n");
    fprintf(out, "\nCriterion per row: the published t,p,d among ccbench's first 3 layouts "
                 "and |error| <= 15%% (both columns). Rows passing: %d of %d. Mean |error| "
                 "%.1f%%, worst %.1f%% (best setting); as run: mean %.1f%%, worst %.1f%%.\n",
            pass, n, sum / n, worst, rsum / n, rworst);
}
