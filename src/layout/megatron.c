/* megatron.c - Table 1 of the Megatron-LM SC'21 paper and the check against it. */
#include "layout/megatron.h"

#include <math.h>
#include <string.h>

/* preset, params (B), t, p, GPUs, achieved TFLOP/s per GPU, % of peak (Table 1); micro-batch
 * and interleaving as NVIDIA's reproduction script examples/sc21/run_table_1.sh sets them
 * (MBS; v = NLS / (PP * num-layers-per-virtual-pipeline-stage)). The shapes (heads, hidden,
 * layers) and batch sizes are in the presets (model.c). */
const struct cc_megatron_row cc_megatron_rows[] = {
    {"megatron-1.7b", 1.7, 1, 1, 32, 137, 44, 16, 1},
    {"megatron-3.6b", 3.6, 2, 1, 64, 138, 44, 16, 1},
    {"megatron-7.5b", 7.5, 4, 1, 128, 142, 46, 16, 1},
    {"megatron-18.4b", 18.4, 8, 1, 256, 135, 43, 8, 1},
    {"megatron-39.1b", 39.1, 8, 2, 512, 138, 44, 4, 1},
    {"megatron-76.1b", 76.1, 8, 4, 1024, 140, 45, 2, 3},
    {"megatron-145.6b", 145.6, 8, 8, 1536, 148, 47, 2, 2},
    {"megatron-310.1b", 310.1, 8, 16, 1920, 155, 50, 1, 2},
    {"megatron-529.6b", 529.6, 8, 35, 2520, 163, 52, 1, 3},
    {"megatron-1t", 1008.0, 8, 64, 3072, 163, 52, 1, 1},
};
const int cc_megatron_nrows = (int)(sizeof cc_megatron_rows / sizeof cc_megatron_rows[0]);

void cc_megatron_habits(struct cc_habits *hb, double efficiency)
{
    cc_habits_default(hb);
    hb->efficiency = efficiency;
    hb->grad_bytes = 2;
    hb->main_grad_bytes = 4;
    hb->zero_min = hb->zero_max = 0;
    hb->sp = 0;
    hb->dp_overlap = 2; /* PyTorch DDP (overlapped) at pp = 1, local DDP otherwise */
    hb->accum_fusion = 0; /* gradient accumulation fusion came in 2022 */
    hb->uneven_pp = 0;    /* uneven pipeline splits came with Megatron-Core */
    hb->pp_overlap = 0;   /* every pipeline exchange blocked (and synchronised the device) */
    hb->pp_scatter = 1;   /* pipeline sends split over the tp ranks, then all-gathered */
    hb->tp_overlap = 0;
    hb->recompute = CC_RC_FULL;
    hb->offload = 0; /* not in 2021's Megatron-LM */
}

cc_status cc_megatron_validate(const struct cc_habits *hb, struct cc_megatron_check *out)
{
    cc_status all = CC_OK;
    for (int i = 0; i < cc_megatron_nrows; i++) {
        const struct cc_megatron_row *r = &cc_megatron_rows[i];
        struct cc_megatron_check *k = &out[i];
        struct cc_model m;
        struct cc_cluster c;
        struct cc_search s;
        char err[256];

        memset(k, 0, sizeof *k);
        k->row = r;
        k->rank = -1;
        if (cc_model_preset(r->preset, &m) != CC_OK ||
            cc_cluster_quick(&c, r->gpus, 8, cc_gpu_lookup("a100-80g"), err, sizeof err) != CC_OK) {
            all = CC_EFAIL;
            continue;
        }
        int dp = r->gpus / (r->tp * r->pp);
        if (cc_layout_search(&m, &c, hb, &s) == CC_OK) {
            k->top = s.best[0];
            k->rank = cc_search_rank(&s, r->tp, r->pp, dp, 1);
            if (k->rank >= 0)
                k->published = s.best[k->rank];
        }
        cc_search_free(&s);
        if (k->rank >= 0) {
            k->pred_tflops = cc_model_megatron_flops(&m) /
                             ((double)r->gpus * k->published.eval.t_step) / 1e12;
            k->err_pct = (k->pred_tflops - r->tflops) / r->tflops * 100.0;
        }
        struct cc_layout run = {r->tp, r->pp, dp, 1, r->mb, r->vpp, 0, 0, CC_RC_FULL};
        cc_layout_eval(&m, &c, hb, &run, &k->as_run);
        k->run_tflops = cc_model_megatron_flops(&m) /
                        ((double)r->gpus * k->as_run.t_step) / 1e12;
        k->run_err_pct = (k->run_tflops - r->tflops) / r->tflops * 100.0;
        k->pass = k->rank >= 0 && k->rank < 3 && fabs(k->err_pct) <= 15.0 &&
                  k->as_run.feasible && fabs(k->run_err_pct) <= 15.0;
        if (!k->pass)
            all = CC_EFAIL;
    }
    return all;
}
