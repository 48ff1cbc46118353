/* steptime.c - step time of one layout: compute, communication, bubble, gradient reduction
 * and optimizer step on its slowest pipeline stage. */
#include "layout/eval.h"
#include "layout/gemm.h"

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

int cc_eval_time(const struct ctx *x, struct cc_eval *e)
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
    a2a = cc_dispatch_time(mr, c, hb->dispatcher, mb, s_loc, tp, x->ep, x->etp);
    if (x->etp > 1 && hb->dispatcher == CC_DISPATCH_ALLTOALL) { /* on the compute stream, beside
                                              no other micro-batch: costed with tp; the flex
                                              dispatcher sends to every etp copy instead */
        double routed = cc_expert_a2a_bytes(mr, mb, s_loc, tp) * x->etp; /* gathered */
        int pn = cc_per_node(c, x->etp, 1);
        etp_pair = cc_comm_time(c, CC_ALLGATHER, x->etp, pn, routed) +
                   cc_comm_time(c, CC_REDUCESCATTER, x->etp, pn, routed);
    }
    /* forward and backward, and a recomputed forward */
    ep_layer[0] = 2.0 * a2a, ep_layer[1] = 3.0 * a2a;
    double pp_mb = 0, pp_shapes = 0, pp_hop = 0, z3_mb = 0, tp_embed = 0, tp_output = 0;
    double one = 0.0; /* one tensor-parallel pair of collectives around a linear block */
    if (tp > 1) {
        double S = mb * s_loc * h * 2.0; /* 16-bit activations */
        int pn = cc_per_node(c, tp, 1);
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
        int pn = cc_per_node(c, cp, tp);
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
        int across = !cc_group_in_node(c, pp, stride);
        int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
        pp_mb = 2.0 * v * cc_p2p_time(c, across, stride < gpn ? (int)stride : gpn, S);
        /* scatter/gather: the receiving stage all-gathers the tp slices over its node's links
         * before it can compute (once per receive: forward and backward, per chunk) */
        if (tp > 1 && !sp && hb->pp_scatter)
            pp_mb += 2.0 * v * cc_comm_time(c, CC_ALLGATHER, tp, cc_per_node(c, tp, 1), S * tp);
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
    int nst = cc_stages_evaluated(pp) + (x->mid_lo_r >= 0 ? 1 : 0);
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
            int pn = cc_per_node(c, tp, 1);
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
            cc_stage_experts(x, rank[i], &unused, &RE[i]);
    double comp = 0, tp_mb = 0, cp_mb = 0, ep_mb = 0, pp_row = 0, slowest = -1, p_max = 0, pe_max = 0;
    double passes = 3.0, ep_hide = 0.0;
    /* combined 1F1B (--ep-overlap): the forward of one micro-batch and the backward of
     * another run as pairs, module by module, each one's all-to-alls beside the other's
     * compute (the forward's two per layer behind the backward's compute, the backward's
     * behind the forward's), at best; the warm-up forwards have no partner: all micro-batches
     * but one at pp = 1, else the first stage's 2(pp-1) + (v-1)pp chunks and the one more
     * that Megatron-Core runs with the overlap, of m x v */
    double paired = 0.0;
    if (cc_ctx_ep_overlaps(x)) {
        double chunks = mm * v, warm = pp == 1 ? 1.0 : 2.0 * (pp - 1) + (double)(v - 1) * pp + 1;
        paired = fmax(0.0, chunks - warm) / chunks;
    }
    for (int i = 0; i < nst; i++) {
        double L = st[i].layers, R = cc_recomputed_layers(x, rank[i], L), K = L - R;
        double Re = RE[i] >= 0.0 ? fmin(RE[i], fmin(R, st[i].experts))
                    : st[i].experts > 0.0 ? R : 0.0;
        double Ke = st[i].experts - Re; /* expert layers kept, recomputed */
        double ci = cc_mix(K, Ke, t_layer[0][0], t_layer[1][0]) +
                    cc_mix(R, Re, t_layer[0][1], t_layer[1][1]) + st[i].extra +
                    cc_grad_accum_time(hb, st[i].params, hbm);
        double ti = cc_mix(K, Ke, tp_layer[0][0], tp_layer[1][0]) +
                    cc_mix(R, Re, tp_layer[0][1], tp_layer[1][1]) + st[i].tp;
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
    int pn_dp = cc_per_node(c, shard, tp);
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
        {x->eshard, cc_per_node(c, x->eshard, (int)fmin((double)x->ep * x->etp, 1e9)), pe_max}};
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
        e->t_dp += cc_comm_time(c, CC_ALLREDUCE, tp, cc_per_node(c, tp, 1), x->w_sync * hb->grad_bytes);
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
    /* a capacity factor under 1 drops routed tokens: the work they would have needed is not
     * the model's useful work either (MFU would pass 100% as the capacity shrinks) */
    double useful = cc_model_step_flops(m);
    if (e->capacity > 0 && cc_model_route_skew(mr) < 1.0) {
        double layers = (double)cc_model_expert_layers(m) + (cc_model_mtp_experts(m) ? m->mtp : 0);
        double routed = 6.0 * m->global_batch * m->seq_len * layers *
                        cc_model_layer_expert_params(m) * m->topk / m->experts;
        useful -= (1.0 - cc_model_route_skew(mr)) * routed;
    }
    e->mfu = useful / ((double)x->N * x->peak * e->t_step);
    /* the padded vocabulary rows and the K/V heads replicated over tp are executed too */
    const struct cc_model mv = x->mr;
    double hw = cc_model_step_hw_flops(&mv, x->rc);
    if (x->rc == CC_RC_BLOCK) { /* a full recompute of the decoder layers recomputed (not
                                  * of the MTP layers: Megatron-LM's block method skips them) */
        double R = 0.0;
        if (cc_planned(x)) /* every stage by its own chunks */
            for (int r = 0; r < pp; r++)
                R += cc_recomputed_layers(x, r, 0.0);
        else
            R = cc_recomputed_layers(x, 0, x->Lf) + (pp > 1 ? cc_recomputed_layers(x, pp - 1, x->Ll) : 0.0) +
                (pp > 2 ? (pp - 2) * cc_recomputed_layers(x, -1, x->Lm) : 0.0);
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
