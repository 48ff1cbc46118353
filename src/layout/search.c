/* search.c - the search over every layout: enumerate, evaluate, rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "layout/eval.h"

/* A search still running after this many seconds says so once, on stderr (a wide search,
 * --mb-max 4096 with --interleave 64 on a model of many layers, takes tens of seconds). */
#define SEARCH_NOTE_S 3.0

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
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
    int noted = hb->quiet;
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
            /* at most a stage per layer, or per stage of an explicit layout (which may hold
             * empty ones) */
            int pp_most = hb->plan && hb->plan->n > m->layers ? hb->plan->n : m->layers;
            for (int pp = 1; pp <= pp_most && (long long)tp * cp * pp <= c->gpus; pp++) {
                int uniform = m->layers % pp == 0;
                int uneven = hb->uneven_pp && pp > 2 && (m->layers + 2) % pp == 0; /* pp = 2: same as uniform */
                /* where neither divides: Megatron-LM's uneven first and last stage, the middle
                 * ones at ceil(layers / pp) each and the first and last sharing the rest, every
                 * split of it that leaves each at least 1 and at most a middle stage's */
                int flf[64], nfl = 0;
                int flmid, flrest = cc_first_last_rest(m->layers, pp, &flmid);
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
                int plan_max = planned ? cc_plan_chunk_max(hb->plan, pp, -1) : 0;
                if (!(uniform || uneven || nfl) || c->gpus % (tp * cp * pp))
                    continue;
                int dp = c->gpus / (tp * cp * pp);
                struct cc_ranked best = {{0}, {0}};
                int have = 0;
                if (!dp_min || dp < dp_min)
                    dp_min = dp;
                if (m->global_batch % dp) {
                    /* what a batch keeping every one of them would be a multiple of */
                    long long a = s->batch_skipped++ ? s->batch_lcm : 1, b = dp, g = a;
                    for (long long r = b; r; ) { long long t = g % r; g = r; r = t; }
                    s->batch_lcm = a && a / g <= 1000000000000LL / b ? a / g * b : 0;
                    if (!first_why[0])
                        snprintf(first_why, sizeof first_why, "global batch %lld is not a "
                                 "multiple of dp %d (tp=%d, pp=%d)", m->global_batch, dp, tp, pp);
                    continue;
                }
                whole++;
                s->batch_whole++;
                long long per_dp = m->global_batch / dp;
                /* expert parallelism: every ep that divides the experts and the stage's
                 * tp*cp*dp ranks (1 alone without experts), each with etp 1 and the etp
                 * below: at most 128 divisors of the experts (<= 100,000) times 5 etp */
                int eps[4096], etps[4096];
                int neps = 0;
                for (int ep = 1; neps < 4096 && (ep == 1 || (cc_model_moe(m) && ep <= m->experts));
                     ep++)
                    if (ep == 1 || (m->experts % ep == 0 && ((long long)tp * cp * dp) % ep == 0)) {
                        eps[neps] = ep, etps[neps++] = 1;
                        /* and each expert split over etp ranks of the tp group: etp = tp
                         * (Megatron-Core's default) and 2, 4 and 8 where they divide tp (a
                         * tp of 72 has eleven divisors above 1, and trying them all made wide
                         * searches 3-7x slower; others with -x), where that divides */
                        for (int etp = 2; etp <= tp && neps < 4096; etp++)
                            if (cc_model_moe(m) && tp % etp == 0 &&
                                (etp == tp || etp == 2 || etp == 4 || etp == 8) &&
                                m->moe_ffn % etp == 0 &&
                                m->mlp == CC_MLP_SWIGLU &&
                                ((long long)tp * cp * dp) % ((long long)ep * etp) == 0)
                                eps[neps] = ep, etps[neps++] = etp;
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
        s->none_for_memory = 1;
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
