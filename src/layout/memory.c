/* memory.c - memory per GPU of one layout: weights, gradients, optimizer state and
 * activations of its fullest pipeline stage. */
#include <stdio.h>

#include "layout/eval.h"

void cc_eval_memory(struct ctx *x, struct cc_eval *e)
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
        wf = pos + cc_mix(L[0], E[0], Pw, Pw_d) + norm;
        x->p_mid = x->p_last = x->p_first, wm = wl = wf;
    } else {
        x->p_first = cc_mix(L[0], E[0], Ps, Ps_d) + embed - pos, wf = cc_mix(L[0], E[0], Pw, Pw_d) + pos;
        x->p_mid = cc_mix(L[2], E[2], Ps, Ps_d), wm = cc_mix(L[2], E[2], Pw, Pw_d);
        x->p_last = cc_mix(L[1], E[1], Ps, Ps_d) + outp,
        wl = cc_mix(L[1], E[1], Pw, Pw_d) + norm; /* tied: the last stage keeps its own copy */
    }
    x->p_first = x->p_first / tp + wf, x->p_mid = x->p_mid / tp + wm;
    x->p_last = x->p_last / tp + wl;
    x->p_mtp = 0.0, x->pe_mtp = 0.0;
    if (x->mtp_r >= 0)
        wx = cc_mix(L[3], E[3], Pw, Pw_d), x->p_mtp = cc_mix(L[3], E[3], Ps, Ps_d) / tp + wx;
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
        a[i] = cc_mix1(L[i], E[i], act[0], act[1]);
        kp[i] = cc_mix1(L[i], E[i], kept[0], kept[1]);
        sv[i] = cc_mix1(L[i], E[i], saved[0], saved[1]);
        /* full recomputation: one layer whole at a time, the largest kind the stage has */
        work[i] = x->rc != CC_RC_FULL ? 0.0
                  : E[i] <= 0.0       ? kept[1]
                  : E[i] >= L[i]      ? kept[0]
                                      : fmax(kept[0], kept[1]);
    }
    /* w: model chunks in flight (forward steps not yet backward) */
    int xr = x->mtp_r >= 0 ? x->mtp_r : 0;
    struct { double p, pe, act, w; } st[4] = {
        {x->p_first, x->pe_first, a[0] * cc_stage_inflight(x, 0, x->lfirst > 0 ? x->Lf : x->Lm, x->split ? 0 : -1) +
                         work[0] + (pp == 1 ? x->logits : 0.0),
         cc_inflight_layers(0, pp, v, v, -1, x->mm)},
        {x->p_last, x->pe_last, a[1] * cc_stage_inflight(x, pp - 1, x->lfirst > 0 ? x->Ll : x->Lm, x->split ? v - 1 : -1) +
                                    work[1] + x->logits,
         cc_inflight_layers(pp - 1, pp, v, v, -1, x->mm)},
        {x->p_mid, x->pe_mid, a[2] * cc_stage_inflight(x, -1, x->Lm, -1) + work[2],
         cc_inflight_layers(1, pp, v, v, -1, x->mm)},
        {x->p_mtp, x->pe_mtp, x->mtp_r >= 0 ? a[3] * cc_stage_inflight(x, xr, x->Lx, -1) + work[3] : 0.0,
         cc_inflight_layers(xr, pp, v, v, -1, x->mm)},
    };
    double cache[4] = {cc_mix(L[0], E[0], cache_e, cache_d), cc_mix(L[1], E[1], cache_e, cache_d),
                       cc_mix(L[2], E[2], cache_e, cache_d), cc_mix(L[3], E[3], cache_e, cache_d)};
    if (nm > 0) { /* the MTP layers' activations and fp8 copies, on the last stage or their
                   * own (each micro-batch its last chunk holds in flight), the second
                   * logits on the last */
        int i = pp == 1 ? 0 : x->mtp_r >= 0 ? 3 : 1;
        double held = x->mtp_r >= 0 ? cc_chunk_steps(cc_warm_chunks(xr, pp, v, x->mm), pp, v, v - 1) : 1.0;
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
    int nst = cc_stages_evaluated(pp) + (x->mtp_r >= 0 ? 1 : 0); /* the MTP stage is [3] */
    /* the expert all-to-all overlap (combined 1F1B) runs one more warm-up chunk on every stage
     * of an interleaved pipeline (Megatron-Core's schedule) */
    if (pp > 1 && cc_ctx_ep_overlaps(x))
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
        int cs[4] = {0, 0, 0, 0}, chunk = 0, plan = cc_planned(x);
        const int rk[4] = {0, pp - 1, x->mem_mid_r, xr};
        for (int i = 0; i < nst; i++) {
            cs[i] = plan ? cc_plan_chunk_max(x->plan, pp, rk[i])
                         : (int)floor((x->lfirst > 0 ? L[i] : x->Lm) / v + 1e-9);
            chunk = cs[i] > chunk ? cs[i] : chunk;
        }
        if (plan) /* one count for every chunk of every stage */
            chunk = cc_plan_chunk_max(x->plan, pp, -1);
        if (chunk < 2)
            cc_eval_why(e, "rc=block recomputes some of a model chunk's layers, and a chunk here has "
                "%d (rc=full recomputes it whole)", chunk);
        else if (x->rcl >= chunk)
            cc_eval_why(e, "rcl %d: the largest model chunk here has %d layers, and block recomputation "
                "keeps at least one (rc=full recomputes them all)", x->rcl, chunk);
        if (x->rcl <= 0 && plan) { /* chunks of several sizes: the fewest that fit, by trial */
            for (x->rcl = 1; x->rcl < chunk - 1; x->rcl++) {
                int fits = 1;
                for (int i = 0; i < nst; i++)
                    fits &= state[i] + cc_plan_block_act(x, rk[i], x->rcl, st[i].act, sv[i], kp[i]) <=
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
            st[i].act = cc_plan_block_act(x, rk[i], x->rcl, st[i].act, sv[i], kp[i]);
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
        double bytes = cc_mix(k, ke, act[0], act[1]);
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
    else if (e->mem_stage == 2 && cc_planned(x) && x->mid_r != 1) /* as --explain names it */
        snprintf(where, sizeof where, "stage %d", x->mid_r);
    else
        snprintf(where, sizeof where, "the %s stage", cc_stage_name(e->mem_stage));
    if (e->mem_total > e->mem_limit)
        cc_eval_why(e, "needs %.1f GB per GPU on %s, more than %.1f GB (%.0f GB less the "
            "%.0f%% margin)", e->mem_total / 1e9, where,
            e->mem_limit / 1e9, x->c->mem_bytes / 1e9, x->hb->mem_margin * 100);
    e->host_limit = x->c->host_mem_bytes * (1.0 - x->hb->mem_margin);
    if (e->off_bytes > e->host_limit)
        cc_eval_why(e, "offloads %.1f GB of activations per GPU to host memory, more than %.1f GB "
            "(%.0f GB per GPU less the %.0f%% margin; --host-mem-gb)", e->off_bytes / 1e9,
            e->host_limit / 1e9, x->c->host_mem_bytes / 1e9, x->hb->mem_margin * 100);
}
