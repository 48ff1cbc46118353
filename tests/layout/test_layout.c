/* Unit tests of the layout engine: every formula against values computed by hand (the
 * arithmetic is in the comments), the topology and results readers on fixtures, search
 * determinism, infeasible inputs, and the Megatron-LM Table 1 acceptance criterion. */
#include "layout/layout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "layout/gemm.h"
#include "layout/megatron.h"
#include "layout/nccltests.h"
#include "layout/report.h"
#include "../tap.h"

#define REL(got, want, tol, ...) is_near((got) / (want), 1.0, tol, __VA_ARGS__)

/* A TAP "TODO" check: a known gap, reported as an expected failure (XFAIL); if it starts to
 * pass the driver reports XPASS and the test fails, so the list must be updated. */
static void todo_ok(int cond, const char *name, const char *why)
{
    tap_n++;
    printf("%sok %d - %s # TODO %s\n", cond ? "" : "not ", tap_n, name, why);
}

static void preset(const char *name, struct cc_model *m)
{
    if (cc_model_preset(name, m) != CC_OK) {
        printf("Bail out! preset %s missing\n", name);
        exit(1);
    }
}

static void test_params(void)
{
    struct cc_model m;
    /* GPT-3: 12h^2 + 13h per layer, h = 12288: 12*150994944 + 159744 */
    preset("gpt3-175b", &m);
    is_near(cc_model_layer_params(&m), 1812099072.0, 0, "gpt3 layer parameters 12h^2+13h");
    /* + (V+s)*h embeddings + 2h final LayerNorm: 96*1812099072 + 53248*12288 + 24576 */
    is_near(cc_model_params(&m), 174615846912.0, 0, "gpt3 total parameters 174.6B");
    /* Narayanan et al.: 12*l*h^2*(1 + 13/(12h) + (V+s)/(12*l*h)), our count adds the 2h norm */
    double l = m.layers, h = m.hidden, V = m.vocab, s = m.seq_len;
    REL(cc_model_params(&m) - 2 * h,
        12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h)), 1e-12,
        "gpt3 parameters match the paper's formula");
    /* Llama-2 7B: 4h^2 + 3*h*ffn + 2h = 67108864 + 135266304 + 8192; untied: 2*V*h + h */
    preset("llama2-7b", &m);
    is_near(cc_model_layer_params(&m), 202383360.0, 0, "llama2-7b layer parameters");
    is_near(cc_model_params(&m), 6738415616.0, 0, "llama2-7b total 6.74B");
    /* Llama-3 70B with 8 KV heads of 128: 2h^2 + 2*h*1024 + 3*h*28672 + 2h */
    preset("llama3-70b", &m);
    is_near(cc_model_layer_params(&m), 855654400.0, 0, "llama3-70b layer parameters (GQA)");
    is_near(cc_model_params(&m), 70553706496.0, 0, "llama3-70b total 70.55B");
}

static void test_flops(void)
{
    struct cc_model m;
    preset("gpt3-175b", &m);
    double B = m.global_batch, s = m.seq_len, l = m.layers, h = m.hidden, V = m.vocab;
    /* Korthikanti et al.: 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)) */
    REL(cc_model_step_flops(&m), 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h)),
        1e-12, "model FLOPs = 72Bslh^2(1+s/6h+V/12lh)");
    /* Narayanan et al.: 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) with full recomputation */
    REL(cc_model_step_hw_flops(&m, CC_RC_FULL),
        96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)), 1e-12,
        "executed FLOPs with full recompute = 96Bslh^2(1+s/6h+V/16lh)");
    /* selective adds the attention products once more: 4*B*s^2*h per layer */
    REL(cc_model_step_hw_flops(&m, CC_RC_SELECTIVE) - cc_model_step_flops(&m),
        4 * B * s * s * h * l, 1e-12, "selective recompute adds 4Bs^2hl");
    is_near(cc_model_step_hw_flops(&m, CC_RC_NONE), cc_model_step_flops(&m), 0,
            "no recompute executes the model FLOPs");
    /* megatron-1.7b: 96*512*2048*24*2304^2*(1 + 2048/13824 + 51200/884736) */
    preset("megatron-1.7b", &m);
    REL(cc_model_megatron_flops(&m), 1.5466830067924994e16, 1e-12, "1.7B FLOPs per step");
    /* Megatron-LM's logged count, Llama-3 8B: 6*B*s*(l*P + h*Vp) + 6*B*s^2*h*l with
     * P = 2h^2 + 2h*1024 + 3h*14336 = 218103808 and Vp = 128256 padded to a multiple of
     * 128*tp: 128256 at tp 1 (1002 x 128), 129024 at tp 8 (126 x 1024) */
    preset("llama3-8b", &m);
    REL(cc_model_megatron_log_flops(&m, 128), 215882511044050944.0, 1e-12,
        "Megatron-LM's logged FLOPs, Llama-3 8B, tp 1 (no vocabulary padding)");
    REL(cc_model_megatron_log_flops(&m, 1024), 215961675881250816.0, 1e-12,
        "Megatron-LM's logged FLOPs, Llama-3 8B, tp 8 (vocabulary padded to 129024)");
    ok(cc_model_megatron_log_flops(&m, 128) < cc_model_step_flops(&m),
       "Megatron-LM's count (causal attention) is below the MFU numerator (whole attention)");
}

static void test_activations(void)
{
    struct cc_model m;
    preset("gpt3-175b", &m);
    m.flash_attn = 0;
    double sbh = 2048.0 * 12288; /* s=2048, b=1, h=12288, a=96, t=8: 5as/(ht) = 10 */
    REL(cc_model_layer_act_bytes(&m, 1, 2048, 8, 0, CC_RC_NONE), 23 * sbh, 1e-12,
        "no recompute, no sp: sbh(10 + 24/t + 5as/ht) = 23 sbh");
    REL(cc_model_layer_act_bytes(&m, 1, 2048, 8, 1, CC_RC_NONE), (34 + 80) / 8.0 * sbh, 1e-12,
        "sp: sbh(34 + 5as/h)/t = 14.25 sbh");
    REL(cc_model_layer_act_bytes(&m, 1, 2048, 8, 0, CC_RC_SELECTIVE), 13 * sbh, 1e-12,
        "selective: sbh(10 + 24/t) = 13 sbh");
    REL(cc_model_layer_act_bytes(&m, 1, 2048, 8, 1, CC_RC_SELECTIVE), 34 / 8.0 * sbh, 1e-12,
        "selective + sp: 34 sbh / t");
    /* fp8 copies of the four linear inputs: 8h outside, 24h - h - 4h = 19h inside */
    enum cc_prec prec = m.prec;
    m.prec = CC_PREC_FP8;
    REL(cc_model_layer_act_bytes(&m, 1, 2048, 8, 0, CC_RC_NONE), (8 + 19.0 / 8 + 10) * sbh,
        1e-12, "fp8: the QKV, projection, MLP-in and MLP-out inputs at 1 byte");
    REL(cc_model_layer_act_bytes(&m, 1, 2048, 8, 0, CC_RC_FULL), 2 * sbh, 1e-12,
        "fp8 with full recomputation: the 16-bit layer input only");
    m.prec = prec;
    REL(cc_model_layer_act_bytes(&m, 1, 2048, 8, 0, CC_RC_FULL), 2 * sbh, 1e-12,
        "full: 2 sbh (layer input)");
    REL(cc_model_layer_act_bytes(&m, 2, 2048, 8, 1, CC_RC_FULL), 2 * 2 * sbh / 8, 1e-12,
        "full + sp, b=2: 2 sbh / t");
    m.flash_attn = 1;
    REL(cc_model_layer_act_bytes(&m, 1, 2048, 8, 0, CC_RC_NONE), 13 * sbh, 1e-12,
        "flash attention stores no scores: 13 sbh");
}

static void test_pieces(void)
{
    struct cc_model m;
    struct cc_habits hb;
    double w, g, o;
    preset("llama2-7b", &m);
    cc_habits_default(&hb); /* adam, gradients reduced in fp32 */
    cc_state_bytes(&m, &hb, 1e9, 1e7, 0, 8, &w, &g, &o);
    ok(w == 2e9 && g == 4e9 && o == 12e9, "ZeRO 0: 2 + 4 + 12 bytes per parameter");
    cc_state_bytes(&m, &hb, 1e9, 1e7, 1, 8, &w, &g, &o);
    ok(w == 2e9 && g == 4e9 && o == 1.5e9, "ZeRO 1: optimizer sharded 8 ways");
    cc_state_bytes(&m, &hb, 1e9, 1e7, 2, 8, &w, &g, &o);
    ok(w == 2e9 && g == 0.5e9 && o == 1.5e9, "ZeRO 2: gradients sharded too");
    /* ZeRO 3 with 1e7-parameter units: shards 2e9/8 and 4e9/8, plus two gathered units of
     * 16-bit weights (4e7 bytes) and one unit's fp32 gradients (4e7) */
    cc_state_bytes(&m, &hb, 1e9, 1e7, 3, 8, &w, &g, &o);
    ok(w == 0.25e9 + 4e7 && g == 0.5e9 + 4e7 && o == 1.5e9,
       "ZeRO 3: weights sharded too, plus 2 gathered units of weights and 1 of gradients");
    cc_state_bytes(&m, &hb, 1e9, 1e7, 3, 1, &w, &g, &o);
    ok(w == 2e9 && g == 4e9 && o == 12e9, "ZeRO 3 over one rank: nothing gathered");
    /* a unit larger than half the stage: the weights gathered never exceed the stage */
    cc_state_bytes(&m, &hb, 1e9, 0.8e9, 3, 8, &w, &g, &o);
    ok(w == 0.25e9 + 2e9 && g == 0.5e9 + 3.2e9, "ZeRO 3: at most the whole stage gathered");
    /* 16-bit gradients with the optimizer's fp32 copy, Megatron-LM's table
     * (docs/user-guide/features/dist_optimizer.md): 20 bytes per parameter without the
     * distributed optimizer, 4 + 16/d with it (the copy sharded with the optimizer state) */
    hb.grad_bytes = 2, hb.main_grad_bytes = 4;
    cc_state_bytes(&m, &hb, 1e9, 1e7, 0, 8, &w, &g, &o);
    ok(w + g + o == 20e9, "16-bit gradients + fp32 copy, ZeRO 0: 20 bytes per parameter");
    cc_state_bytes(&m, &hb, 1e9, 1e7, 1, 8, &w, &g, &o);
    ok(g == 2e9 + 0.5e9 && w + g + o == (4 + 16 / 8.0) * 1e9,
       "distributed optimizer over 8: 4 + 16/8 bytes per parameter, the copy sharded");
    cc_state_bytes(&m, &hb, 1e9, 1e7, 2, 8, &w, &g, &o);
    ok(g == (2 + 4) / 8.0 * 1e9, "ZeRO 2: the 16-bit gradients and the copy sharded");
    hb.grad_bytes = 4, hb.main_grad_bytes = 0;
    m.optim = CC_OPTIM_SGD;
    cc_state_bytes(&m, &hb, 1e9, 1e7, 0, 1, &w, &g, &o);
    ok(o == 8e9, "SGD with momentum: 8 bytes of optimizer state");

    is_near(cc_bubble_time(8, 1, 2.0), 14.0, 1e-12, "bubble (p-1) t_mb");
    is_near(cc_bubble_time(8, 4, 2.0), 3.5, 1e-12, "interleaved bubble (p-1)/v t_mb");
    is_near(cc_bubble_time(1, 1, 2.0), 0.0, 0, "no pipeline, no bubble");
}

static void test_comm(void)
{
    struct cc_cluster c;
    char err[256];
    ok(cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err) == CC_OK,
       "quick cluster 16 x a100-80g");
    /* NCCL's ring latency (Simple protocol): 8.4 us + 3.4 us per step on NVLink + 14 us per
     * step across nodes; PAT with one GPU per node: 8 us + floor(log2 n) x 4 us + n x 2.8 us */
    is_near(cc_ring_latency(&c, 8, 8), 8.4e-6 + 7 * 3.4e-6, 1e-15, "ring of 8 in a node: 32.2 us");
    is_near(cc_ring_latency(&c, 2048, 2), 8.4e-6 + 1024 * 3.4e-6 + 1023 * 14e-6, 1e-12,
            "ring of 2048 on 1024 nodes: 17.8 ms");
    is_near(cc_ring_latency(&c, 128, 1), 8.4e-6 + 127 * 14e-6, 1e-12,
            "ring of 128 on 128 nodes: 1.79 ms");
    is_near(cc_pat_latency(128, 1), 8e-6 + 7 * 4e-6 + 128 * 2.8e-6, 1e-12, "PAT on 128: 394 us");
    is_near(cc_pat_latency(6, 1), 8e-6 + 2 * 4e-6 + 6 * 2.8e-6, 1e-15,
            "PAT on 6 nodes: log2 rounded down (2), 32.8 us");
    ok(isinf(cc_pat_latency(4, 2)) && isinf(cc_pat_latency(1, 1)),
       "no PAT with two GPUs per node or one rank");
    is_near(cc_ring_latency(&c, 1, 1), 0, 0, "a group of one: none");
    {
        /* NCCL takes the algorithm of least time: 128 ranks, one per node (185/8 GB/s each);
         * 1 MB: PAT (394 us + 1 MB x 127/128 / (0.75 x 23.1 GB/s)) beats the ring (1.79 ms +
         * ...); 1 GB: the ring's full bandwidth wins */
        struct cc_cluster big;
        cc_cluster_quick(&big, 1024, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
        double bw = 185e9 / 8, f = 127.0 / 128;
        is_near(cc_comm_time(&big, CC_ALLGATHER, 128, 1, 1e6),
                fmin(1786.4e-6 + 1e6 * f / bw, 394.4e-6 + 1e6 * f / (0.75 * bw)), 1e-12,
                "1 MB over 128 nodes: PAT");
        is_near(cc_comm_time(&big, CC_REDUCESCATTER, 128, 1, 1e9), 1786.4e-6 + 1e9 * f / bw,
                1e-12, "1 GB over 128 nodes: the ring");
    }
    {
        struct cc_cluster p;
        cc_cluster_quick(&p, 4, 4, cc_gpu_lookup("l40s"), err, sizeof err);
        is_near(cc_ring_latency(&p, 4, 4), 8.4e-6 + 3 * 5.7e-6, 1e-15,
                "PCIe GPUs (20 GB/s in a node): 5.7 us per step");
    }
    /* 10 us + 1 GB * 2*7/8 / 230 GB/s */
    is_near(cc_comm_time(&c, CC_ALLREDUCE, 8, 8, 1e9), 0.007618695652173913, 1e-12,
            "all-reduce of 1 GB on the 8 GPUs of a node");
    /* 30 us + 1 GB * 2*15/16 / 185 GB/s (8 members per node: the node's whole bandwidth) */
    is_near(cc_comm_time(&c, CC_ALLREDUCE, 16, 8, 1e9), 0.010165135135135136, 1e-12,
            "all-reduce of 1 GB over 2 nodes, 8 per node");
    /* one member per node: 1/8 of the node's 185 GB/s */
    is_near(cc_comm_time(&c, CC_ALLREDUCE, 2, 1, 1e9), 0.04327324324324325, 1e-12,
            "all-reduce over 2 nodes, 1 per node: an eighth of the node bandwidth");
    /* NCCL's tree: 8.4 us + 2 x ((n/k - 1) x 4 us + floor(log2 k) x 14 us) */
    is_near(cc_tree_latency(&c, 8, 8), 8.4e-6 + 2 * 7 * 4e-6, 1e-15, "tree in one node: 64.4 us");
    is_near(cc_tree_latency(&c, 128, 1), 8.4e-6 + 2 * 7 * 14e-6, 1e-15,
            "tree over 128 nodes, 1 per node: 204.4 us");
    is_near(cc_tree_latency(&c, 48, 8), 8.4e-6 + 2 * (7 * 4e-6 + 2 * 14e-6), 1e-15,
            "tree over 6 nodes of 8: log2 rounded down (2)");
    {
        /* across 128 nodes the all-reduce pays what the tree adds beyond two nodes: 30 us +
         * (204.4 - 36.4) us, then 1 MB x 2 x 127/128 at 185/8 GB/s */
        struct cc_cluster big;
        cc_cluster_quick(&big, 1024, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
        is_near(cc_comm_time(&big, CC_ALLREDUCE, 128, 1, 1e6),
                30e-6 + 168e-6 + 1e6 * 2 * 127.0 / 128 / (185e9 / 8), 1e-12,
                "all-reduce of 1 MB over 128 nodes: the tree's latency");
        is_near(cc_comm_time(&big, CC_ALLREDUCE, 16, 8, 1e9), 0.010165135135135136, 1e-12,
                "over 2 nodes of 8: the table's latency alone");
    }
    is_near(cc_comm_time(&c, CC_SENDRECV, 2, 2, 1e9), 10e-6 + 1e9 / 230e9, 1e-12,
            "send within a node");
    is_near(cc_comm_time(&c, CC_ALLREDUCE, 1, 1, 1e9), 0, 0, "a group of one costs nothing");
    ok(cc_gpu_lookup("NVIDIA A100-SXM4-80GB") == cc_gpu_lookup("a100-80g"), "A100 by model name");
    ok(strcmp(cc_gpu_lookup("NVIDIA H100 80GB HBM3")->id, "h100-sxm") == 0, "H100 SXM by name");
    ok(strcmp(cc_gpu_lookup("NVIDIA GH200 480GB")->id, "gh200") == 0, "GH200 not taken as H200");
    ok(strcmp(cc_gpu_lookup("NVIDIA H100 PCIe")->id, "h100-pcie") == 0, "H100 PCIe");
    /* nvidia-smi's names of the variants that differ in memory or peak */
    struct { const char *name, *id; } v[] = {
        {"NVIDIA A100-PCIE-40GB", "a100-pcie-40g"}, {"NVIDIA A100 40GB PCIe", "a100-pcie-40g"},
        {"NVIDIA A100 80GB PCIe", "a100-pcie"},     {"NVIDIA A100-SXM4-40GB", "a100-40g"},
        {"Tesla V100-SXM2-16GB", "v100-16g"},       {"Tesla V100-SXM2-32GB", "v100"},
        {"NVIDIA H100 NVL", "h100-nvl"},            {"NVIDIA H200 NVL", "h200-nvl"},
        {"NVIDIA H200", "h200"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        const struct cc_gpu_spec *g = cc_gpu_lookup(v[i].name);
        ok(g && strcmp(g->id, v[i].id) == 0, "'%s' is %s (%s)", v[i].name, v[i].id,
           g ? g->id : "none");
    }
    ok(cc_gpu_lookup("Voodoo 5") == NULL, "unknown GPU");
    is_int(cc_cluster_quick(&c, 12, 8, cc_gpu_lookup("h100"), err, sizeof err), CC_EINVAL,
           "12 GPUs are not whole nodes of 8");
}

static void path(char *buf, size_t len, const char *name)
{
    const char *src = getenv("CC_SRCDIR");
    snprintf(buf, len, "%s/tests/layout/%s", src ? src : ".", name);
}

/* A bench results file of allreduce over `nranks` ranks on `nnodes` nodes at sizes from
 * 8 bytes to 128 MiB (doubling), each time given by t_us(bytes, i) (i: the size's index);
 * the path is written into tmp (a mkstemp template). 0 on success. */
static int sweep_file(char *tmp, int nranks, int nnodes, double (*t_us)(double, int))
{
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return -1;
    fprintf(f, "{\"type\": \"header\", \"nranks\": %d, \"nnodes\": %d, \"backend\": "
               "\"nccl\"}\n", nranks, nnodes);
    int i = 0;
    for (double b = 8; b <= 128 << 20; b *= 2, i++)
        fprintf(f, "{\"type\": \"result\", \"collective\": \"allreduce\", \"nranks\": %d, "
                   "\"bytes\": %.0f, \"time_us\": %.6f}\n", nranks, b, t_us(b, i));
    return fclose(f);
}

/* An all-reduce sweep of n ranks on nnodes nodes, 1 KiB to 1 GiB in steps of 4, timed
 * alpha_us + bus bytes / busbw (no backend named in the header); mkstemp's name in tmp. */
static int ar_fit_file(char *tmp, int n, int nnodes, double alpha_us, double busbw)
{
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return -1;
    fprintf(f, "{\"type\": \"header\", \"nranks\": %d, \"nnodes\": %d}\n", n, nnodes);
    for (double b = 1024; b <= 1 << 30; b *= 4)
        fprintf(f, "{\"type\": \"result\", \"collective\": \"allreduce\", \"nranks\": %d, "
                   "\"bytes\": %.0f, \"time_us\": %.6f}\n",
                n, b, alpha_us + b * 2.0 * (n - 1) / n / busbw * 1e6);
    return fclose(f);
}

/* 16 ranks, 8 per node: 20 us + x / 50 GB/s, x = bytes * 30/16 */
static double ar_clean(double b, int i)
{
    (void)i;
    return 20 + b * 30 / 16 / 50e9 * 1e6;
}
/* the same with one 1 MiB run timed at 2 us (a glitch: nothing moves 1 MiB that fast) */
static double ar_glitch(double b, int i)
{
    return b == 1 << 20 ? 2 : ar_clean(b, i);
}
/* NCCL-like protocol regimes: up to 2 MiB a low-latency protocol at 8 us + x / 35 GB/s,
 * from 4 MiB the bulk one at 20 us + x / 50 GB/s */
static double ar_protocols(double b, int i)
{
    return b <= 2 << 20 ? 8 + b * 30 / 16 / 35e9 * 1e6 : ar_clean(b, i);
}
/* latency only: every size, up to 128 MiB, at 30 us (with 10 ns of jitter) */
static double ar_flat(double b, int i)
{
    (void)b;
    return 30 + (i % 2 ? 0.01 : 0);
}

static void test_group_per_node(void)
{
    struct cc_cluster c;
    char err[256];
    cc_cluster_quick(&c, 96, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    struct { int n, stride, want; const char *what; } g[] = {
        {4, 1, 4, "4 contiguous ranks: one node"},
        {8, 8, 1, "stride 8: one per node"},
        {32, 2, 4, "32 ranks at stride 2: spans whole nodes, 4 in each"},
        {12, 1, 4, "12 contiguous ranks on 8-GPU nodes: 8 and 4 (or 4 and 8)"},
        {6, 2, 2, "6 ranks at stride 2 (span 12): 4 and 2 in a node"},
        {3, 3, 1, "stride 3 does not divide the node: 1"},
        {24, 16, 1, "stride beyond the node: 1"},
    };
    for (size_t i = 0; i < sizeof g / sizeof *g; i++)
        is_int(cc_group_per_node(&c, g[i].n, g[i].stride), g[i].want, "%s", g[i].what);
}

/* A linear sweep (nccl-tests -i 8M) of 128M to 256M, 17 sizes, each time off by up to 2%
 * (a fixed pseudo-random pattern): 12 us + bus bytes / 200 GB/s, of collective `coll` over
 * nranks ranks on nnodes nodes */
static int linear_file(char *tmp, const char *coll, int nranks, int nnodes)
{
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return -1;
    fprintf(f, "{\"type\": \"header\", \"nranks\": %d, \"nnodes\": %d, \"backend\": \"nccl\"}\n",
            nranks, nnodes);
    unsigned s = 12345;
    for (double b = 128 << 20; b <= 256 << 20; b += 8 << 20) {
        s = s * 1103515245u + 12345u;
        double noise = ((double)(s >> 16 & 0x7fff) / 0x7fff * 2 - 1) * 0.02;
        fprintf(f, "{\"type\": \"result\", \"collective\": \"%s\", \"nranks\": %d, "
                   "\"bytes\": %.0f, \"time_us\": %.6f}\n",
                coll, nranks, b, (12 + b * 30 / 16 / 200e9 * 1e6) * (1 + noise));
    }
    return fclose(f);
}

static void test_fit_robust(void)
{
    struct cc_cluster c;
    char err[512], tmp[] = "/tmp/ccbench-fit-XXXXXX";
    struct { const char *what; double (*t)(double, int); } ok_cases[] = {
        {"a clean sweep", ar_clean},
        {"one glitched point", ar_glitch},
        {"protocol regimes of the middle sizes", ar_protocols},
    };
    for (size_t k = 0; k < sizeof ok_cases / sizeof *ok_cases; k++) {
        cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
        strcpy(tmp, "/tmp/ccbench-fit-XXXXXX");
        if (sweep_file(tmp, 16, 2, ok_cases[k].t) != 0)
            {
                ok(0, "cannot write a results file in /tmp");
                return;
            }
        is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_OK, "%s: read",
               ok_cases[k].what);
        const struct cc_fit *f = &c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0];
        REL(f->busbw_Bps, 50e9, 1e-4, "%s: busbw 50 GB/s (%.2f)", ok_cases[k].what,
            f->busbw_Bps / 1e9);
        is_near(f->alpha_s, ok_cases[k].t == ar_protocols ? 8e-6 : 20e-6, 0.05e-6,
                "%s: latency from the small sizes (%.2f us)", ok_cases[k].what, f->alpha_s * 1e6);
        is_int(f->sizes, 25, "%s: 25 sizes", ok_cases[k].what);
        unlink(tmp);
    }

    /* a linear sweep of close sizes: the bandwidth from pairs far apart, not from the noise
     * between neighbours; the latency, which sizes within 2x cannot tell, the table's */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    strcpy(tmp, "/tmp/ccbench-fit-XXXXXX");
    if (linear_file(tmp, "allreduce", 16, 2) != 0) {
        ok(0, "cannot write a results file in /tmp");
        return;
    }
    is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_OK, "linear sweep: read");
    {
        const struct cc_fit *f = &c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0];
        REL(f->busbw_Bps, 200e9, 0.05, "linear sweep with 2%% noise: busbw within 5%% of 200 GB/s (%.1f)",
            f->busbw_Bps / 1e9);
        ok(isnan(f->alpha_s), "linear sweep within 2x: latency not measured (%g)", f->alpha_s);
        struct cc_cluster t;
        cc_cluster_quick(&t, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
        REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 8, 1e3) - 1e3 * 30 / 16 / f->busbw_Bps,
            cc_comm_time(&t, CC_ALLREDUCE, 16, 8, 1e3) - 1e3 * 30 / 16 / t.inter_node_Bps, 1e-9,
            "... so a small message pays the table's latency");
    }
    unlink(tmp);
    /* the same for send/recv measured over 4 nodes: the table's flat latency across nodes
     * (all-reduce's tree, which grows with the nodes, is not send/recv's) */
    cc_cluster_quick(&c, 32, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    strcpy(tmp, "/tmp/ccbench-fit-XXXXXX");
    if (linear_file(tmp, "sendrecv", 32, 4) != 0) {
        ok(0, "cannot write a results file in /tmp");
        return;
    }
    is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_OK, "linear send/recv sweep: read");
    {
        const struct cc_fit *f = &c.fits[CC_SENDRECV][CC_SCOPE_INTER][0];
        ok(c.nfits[CC_SENDRECV][CC_SCOPE_INTER] == 1 && isnan(f->alpha_s),
           "linear send/recv sweep: latency not measured");
        /* (the flow's rate is the node's eighth at most: its GPUs send across at once) */
        double flow = fmin(f->busbw_Bps, c.inter_node_Bps / 8);
        is_near(cc_comm_time(&c, CC_SENDRECV, 2, 1, 1e3) - 1e3 / flow, c.lat_inter_s,
                1e-12, "... a small send/recv pays the table's flat latency across nodes (%g s)",
                c.lat_inter_s);
    }
    unlink(tmp);

    /* a sweep that never leaves the latency regime gives no bandwidth: not fitted */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    strcpy(tmp, "/tmp/ccbench-fit-XXXXXX");
    if (sweep_file(tmp, 16, 2, ar_flat) != 0)
        {
            ok(0, "cannot write a results file in /tmp");
            unlink(tmp);
            return;
        }
    is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_EINVAL, "latency only: refused");
    ok(strstr(err, "no measurement could be fitted") != NULL, "message: %s", err);
    is_int(c.nfits[CC_ALLREDUCE][CC_SCOPE_INTER], 0, "nothing kept");
    unlink(tmp);

    /* a second file with the same group: the first is kept */
    strcpy(tmp, "/tmp/ccbench-fit-XXXXXX");
    char tmp2[] = "/tmp/ccbench-fit-XXXXXX";
    if (sweep_file(tmp, 16, 2, ar_clean) != 0 || sweep_file(tmp2, 16, 2, ar_protocols) != 0)
        {
            ok(0, "cannot write a results file in /tmp");
            unlink(tmp);
            return;
        }
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_OK, "first file");
    is_int(cc_cluster_load_results(&c, tmp2, err, sizeof err), CC_OK, "a second file, same group");
    is_int(c.nfits[CC_ALLREDUCE][CC_SCOPE_INTER], 1, "one fit kept");
    is_near(c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0].alpha_s, 20e-6, 0.05e-6, "the first file's");
    ok(strstr(c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0].from, tmp + 5) != NULL,
       "it names its file (%s)", c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0].from);
    unlink(tmp2);

    /* measured one per node, asked with more: the node's other NICs join, up to its rate */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err); /* 185 GB/s */
    unlink(tmp);
    strcpy(tmp, "/tmp/ccbench-fit-XXXXXX");
    if (sweep_file(tmp, 16, 16, ar_clean) != 0) /* 16 nodes, one rank each: 50 GB/s */
        {
            ok(0, "cannot write a results file in /tmp");
            unlink(tmp);
            return;
        }
    is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_OK, "one-per-node sweep");
    /* the measured 20 us is for a tree over 16 nodes (8.4 + 2 x 4 x 14 = 120.4 us in NCCL's
     * model); 8 nodes of 2 take 100.4 us there and 2 nodes of 8 92.4 us: a smaller tree,
     * the measured latency scaled down in proportion */
    is_near(cc_tree_latency(&c, 16, 1), 120.4e-6, 1e-12, "tree of 16 nodes: 120.4 us");
    REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 2, 1e9),
        20e-6 * 100.4 / 120.4 + 1e9 * 30 / 16 / 100e9, 1e-9,
        "two per node: twice the measured rate; the latency of 8 nodes' tree");
    REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 8, 1e9), 20e-6 * 92.4 / 120.4 + 1e9 * 30 / 16 / 185e9,
        1e-9, "eight per node: capped at the node's 185 GB/s");
    /* with the node's links measured at 120 GB/s (all-reduce over its 8 GPUs), the rate
     * across nodes is scaled up no further than that, not the table's 230 */
    c.fits[CC_ALLREDUCE][CC_SCOPE_INTRA][0] =
        (struct cc_fit){.nranks = 8, .per_node = 8, .alpha_s = 5e-6, .busbw_Bps = 120e9};
    c.nfits[CC_ALLREDUCE][CC_SCOPE_INTRA] = 1;
    REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 8, 1e9), 20e-6 * 92.4 / 120.4 + 1e9 * 30 / 16 / 120e9,
        1e-9, "eight per node: no faster than the node's measured links");
    unlink(tmp);

    /* 10 ranks on 4 nodes ran 3, 3, 2 and 2 in a node: its rate is that of the nodes with 2
     * (each node's NICs carry the ring), so it stands for 2 per node */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    strcpy(tmp, "/tmp/ccbench-fit-XXXXXX");
    if (sweep_file(tmp, 10, 4, ar_clean) != 0) {
        ok(0, "cannot write a results file in /tmp");
        unlink(tmp);
        return;
    }
    is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_OK, "uneven nodes: read");
    const struct cc_fit *fu = &c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0];
    ok(fu->per_node == 2 && fu->nodes == 4,
       "10 ranks on 4 nodes: 2 per node, its emptiest nodes', on 4 nodes (%d, %d)",
       fu->per_node, fu->nodes);
    /* 16 ranks, 2 per node (8 nodes): the fit's rate unscaled, its latency moved by NCCL's
     * tree from 4 nodes of 2.5 (8.4 + 2 x (1.5 x 4 + 2 x 14) = 76.4 us) to 8 of 2 (100.4) */
    REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 2, 1e9),
        fu->alpha_s + 24e-6 + 1e9 * 30 / 16 / fu->busbw_Bps, 1e-9,
        "... a query of 8 nodes of 2: 24 us more than the 4 nodes measured");
    unlink(tmp);

    /* NVLink domains of 72 GPUs in 4-GPU hosts: 80 ranks on 20 hosts fill one domain of 18
     * hosts (72 ranks) and put 8 in the next: 8 per node, the emptiest domain's */
    cc_cluster_quick(&c, 144, 72, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    c.gpus_per_host = 4;
    strcpy(tmp, "/tmp/ccbench-fit-XXXXXX");
    if (sweep_file(tmp, 80, 20, ar_clean) != 0) {
        ok(0, "cannot write a results file in /tmp");
        unlink(tmp);
        return;
    }
    is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_OK, "80 ranks on 20 hosts: read");
    fu = &c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0];
    ok(c.nfits[CC_ALLREDUCE][CC_SCOPE_INTER] == 1 && fu->per_node == 8 && fu->nodes == 2,
       "... 2 domains, 8 ranks in the emptiest (%d, %d)", fu->per_node, fu->nodes);
    unlink(tmp);

    /* the node's rate across nodes from a sibling: all-reduce measured one per node only,
     * reduce-scatter over whole nodes */
    cc_cluster_quick(&c, 32, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0] =
        (struct cc_fit){.nranks = 4, .per_node = 1, .nodes = 4, .alpha_s = 20e-6, .busbw_Bps = 20e9};
    c.fits[CC_REDUCESCATTER][CC_SCOPE_INTER][0] =
        (struct cc_fit){.nranks = 16, .per_node = 8, .nodes = 2, .alpha_s = 20e-6, .busbw_Bps = 90e9};
    c.nfits[CC_ALLREDUCE][CC_SCOPE_INTER] = c.nfits[CC_REDUCESCATTER][CC_SCOPE_INTER] = 1;
    int from = -2;
    is_near(cc_node_inter_Bps(&c, &from), 90e9, 0, "node rate from the reduce-scatter over whole "
            "nodes, not the table's 185 GB/s");
    is_int(from, CC_REDUCESCATTER, "... and it says so");
    REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 4, 1e9) - 1e9 * 30 / 16 / 80e9,
        cc_comm_time(&c, CC_ALLREDUCE, 16, 4, 1e3) - 1e3 * 30 / 16 / 80e9, 1e-6,
        "4 per node: the one-per-node all-reduce scaled x4 to 80 GB/s, under the measured 90");
    REL(cc_comm_time(&c, CC_ALLREDUCE, 32, 8, 1e9) - 1e9 * 62 / 32 / 90e9,
        cc_comm_time(&c, CC_ALLREDUCE, 32, 8, 1e3) - 1e3 * 62 / 32 / 90e9, 1e-6,
        "8 per node: scaled x8 no further than the node's measured 90 GB/s");
}

static void test_inputs(void)
{
    struct cc_cluster c;
    struct cc_model m;
    char err[512], p[1024];

    path(p, sizeof p, "dgx-a100x4.json");
    is_int(cc_cluster_load_topology(&c, p, 0, err, sizeof err), CC_OK, "read dgx-a100x4.json");
    is_int(c.gpus, 32, "32 GPUs (login node without GPUs ignored)");
    is_int(c.gpus_per_node, 8, "8 per node");
    is_near(c.mem_bytes, 85899345920.0, 0, "memory from memory_bytes");
    is_near(c.peak_flops[CC_PREC_BF16], 312e12, 0, "A100 bf16 peak from the table");
    is_near(c.intra_busbw_Bps, 220e9, 0, "intra rate from nodes[].expected");
    is_near(c.inter_node_Bps, 180e9, 0, "inter rate from fabric.inter_allreduce_busbw_GBps");
    is_near(c.p2p_intra_Bps, 220e9, 0, "send rate within a node: the all-reduce busbw, not "
            "the NVLink line rate");
    is_near(c.host_mem_bytes, 128e9, 0, "no host memory in the file: the table's 128 GB per GPU");
    path(p, sizeof p, "../../topologies/dgx-h100-4.json");
    is_int(cc_cluster_load_topology(&c, p, 0, err, sizeof err), CC_OK, "read dgx-h100-4.json");
    is_near(c.host_mem_bytes, 2199023255552.0 / 8, 0, "host memory per GPU from nodes[].memory_bytes: "
            "2 TiB for 8 GPUs");
    path(p, sizeof p, "h100x2-nics.json");
    is_int(cc_cluster_load_topology(&c, p, 0, err, sizeof err), CC_OK, "read h100x2-nics.json");
    is_near(c.inter_node_Bps, 4 * 400 / 8.0 * 1e9, 0, "inter rate from nics_per_node * rate / 8");
    is_near(c.intra_busbw_Bps, 370e9, 0, "intra rate from the table when not in the file");
    path(p, sizeof p, "bad-nogpu.json");
    is_int(cc_cluster_load_topology(&c, p, 0, err, sizeof err), CC_EINVAL, "no GPUs: error");
    ok(strstr(err, "no GPUs") != NULL, "message says no GPUs: %s", err);
    is_int(cc_cluster_load_topology(&c, "/nonexistent.json", 0, err, sizeof err), CC_EIO,
           "missing topology file");
    ok(strstr(err, "No such file") != NULL, "and the system's reason: %s", err);
    ok(strncmp(err, "cannot read topology '/nonexistent.json'", 40) == 0, "message: %s", err);

    /* bench results: allreduce on 8 GPUs of one node, made as 5 us + x / 100 GB/s */
    cc_cluster_quick(&c, 8, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    path(p, sizeof p, "bench-intra.jsonl");
    is_int(cc_cluster_load_results(&c, p, err, sizeof err), CC_OK, "read bench-intra.jsonl");
    is_int(c.nfits[CC_ALLREDUCE][CC_SCOPE_INTRA], 1, "one fit: allreduce, intra, 8 ranks");
    REL(c.fits[CC_ALLREDUCE][CC_SCOPE_INTRA][0].busbw_Bps, 100e9, 1e-4, "fitted busbw 100 GB/s");
    is_near(c.fits[CC_ALLREDUCE][CC_SCOPE_INTRA][0].alpha_s, 5e-6, 1e-8, "fitted latency 5 us");
    REL(cc_comm_time(&c, CC_ALLREDUCE, 8, 8, 1e9), 5e-6 + 1.75e9 / 100e9, 1e-4,
        "the fit replaces the table rate");

    /* across 2 nodes, 8 per node: allreduce 20 us + x / 50 GB/s, allgather 15 us + x / 40 */
    path(p, sizeof p, "bench-inter.jsonl");
    is_int(cc_cluster_load_results(&c, p, err, sizeof err), CC_OK, "read bench-inter.jsonl");
    is_int(c.nfits[CC_ALLGATHER][CC_SCOPE_INTER], 1, "allgather fitted across nodes");
    REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 8, 1e9), 20e-6 + 1e9 * 30 / 16 / 50e9, 1e-4,
        "inter-node all-reduce from the fit");
    /* plus what NCCL's tree adds from 2 to 4 nodes: 2 x 14 us */
    REL(cc_comm_time(&c, CC_ALLREDUCE, 32, 8, 1e9), 48e-6 + 1e9 * 62 / 32 / 50e9, 1e-4,
        "nearest measured group size used for 32 ranks");
    REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 1, 1e9), 20e-6 + 1e9 * 30 / 16 / (50e9 / 8), 1e-4,
        "one member per node gets an eighth of the measured rate");
    REL(cc_comm_time(&c, CC_ALLGATHER, 16, 8, 1e9), 15e-6 + 1e9 * 15 / 16 / 40e9, 1e-4,
        "allgather from its own fit");
    /* 32 ranks, 8 per node: the fit's latency plus what the longer ring adds, (8.4 + 28 x 3.4
     * + 3 x 14) - (8.4 + 14 x 3.4 + 1 x 14) = 75.6 us */
    REL(cc_comm_time(&c, CC_ALLGATHER, 32, 8, 1e9), 15e-6 + 75.6e-6 + 1e9 * 31 / 32 / 40e9,
        1e-9, "allgather over twice the ranks measured: the ring's extra steps added");
    REL(cc_comm_time(&c, CC_ALLREDUCE, 8, 8, 1e9), 5e-6 + 1.75e9 / 100e9, 1e-4,
        "intra-node fit unchanged by the inter-node file");
    is_int(cc_cluster_load_results(&c, "/nonexistent.jsonl", err, sizeof err), CC_EINVAL,
           "missing results file");
    {
        /* the same 16 ranks measured one per node (50 us + x / 10 GB/s): a query with one
         * member per node takes that fit, one with 8 per node keeps the 8-per-node fit,
         * whatever the order of the files */
        char tmp[] = "/tmp/ccbench-test-XXXXXX";
        ok(ar_fit_file(tmp, 16, 16, 50, 10e9) == 0, "one-per-node file written");
        is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_OK, "one-per-node file");
        REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 1, 1e9), 50e-6 + 1e9 * 30 / 16 / 10e9, 1e-4,
            "one member per node: the one-per-node fit, unscaled");
        REL(cc_comm_time(&c, CC_ALLREDUCE, 16, 8, 1e9), 20e-6 + 1e9 * 30 / 16 / 50e9, 1e-4,
            "eight per node: still the eight-per-node fit");
        unlink(tmp);
        /* and 32 ranks, 8 per node, at 30 GB/s: a query of 32 ranks one per node takes the
         * fit measured one per node (16 ranks: the tree's extra level, 2 x 14 us, added), not
         * the 32-rank one scaled down to an eighth */
        strcpy(tmp, "/tmp/ccbench-test-XXXXXX");
        ok(ar_fit_file(tmp, 32, 4, 48, 30e9) == 0, "4 x 8 file written");
        is_int(cc_cluster_load_results(&c, tmp, err, sizeof err), CC_OK, "4 x 8 file");
        REL(cc_comm_time(&c, CC_ALLREDUCE, 32, 1, 1e9), 78e-6 + 1e9 * 62 / 32 / 10e9, 1e-4,
            "across nodes the members per node choose the fit before the group size");
        REL(cc_comm_time(&c, CC_ALLREDUCE, 32, 8, 1e9), 48e-6 + 1e9 * 62 / 32 / 30e9, 1e-4,
            "... and among equals the group size");
        unlink(tmp);
    }

    /* nccl-tests logs: the test named in the log or, in older logs, by the file's name */
    enum cc_coll_id id = CC_COLL_COUNT;
    ok(cc_nccltests_name("all_reduce_perf", 1, &id) == 0 && id == CC_ALLREDUCE, "all_reduce_perf");
    ok(cc_nccltests_name("reduce_scatter_perf_mpi", 1, &id) == 0 && id == CC_REDUCESCATTER,
       "reduce_scatter_perf_mpi is reduce-scatter, not reduce");
    ok(cc_nccltests_name("results/AllGather-16.txt", 0, &id) == 0 && id == CC_ALLGATHER, "AllGather");
    ok(cc_nccltests_name("reduce_perf", 1, &id) == 0 && id == CC_REDUCE, "reduce_perf");
    ok(cc_nccltests_name("alltoall_perf", 1, &id) == 0 && id == CC_ALLTOALL, "alltoall_perf");
    ok(cc_nccltests_name("sendrecv_perf", 1, &id) == 0 && id == CC_SENDRECV, "sendrecv_perf");
    ok(cc_nccltests_name("broadcast_perf", 1, &id) == 0 && id == CC_BROADCAST, "broadcast_perf");
    is_int(cc_nccltests_name("alltoallv_perf", 1, &id), 1, "alltoallv: no ccbench collective");
    is_int(cc_nccltests_name("gather_perf", 1, &id), 1, "gather: no ccbench collective");
    is_int(cc_nccltests_name("hypercube_perf", 1, &id), 1, "hypercube: no ccbench collective");
    is_int(cc_nccltests_name("run-42.txt", 0, &id), -1, "a name that names no test");
    is_int(cc_nccltests_name("nccl_perf_run1.txt", 0, &id), -1,
           "'perf' in a file name names no test");
    is_int(cc_nccltests_name("foo_perf", 1, &id), 1, "another *_perf program in the log");

    /* 16 GPUs on 2 hosts: all_reduce_perf made as 20 us + x / 50 GB/s with one row's
     * out-of-place run reporting 3 wrong elements, all_gather_perf 15 us + x / 40 GB/s, and a
     * gather_perf section; times printed to 0.01 us as nccl-tests does */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    path(p, sizeof p, "nccl-tests-inter.txt");
    is_int(cc_cluster_load_results(&c, p, err, sizeof err), CC_OK, "read nccl-tests-inter.txt");
    is_int(c.nfits[CC_ALLREDUCE][CC_SCOPE_INTER], 1, "one all-reduce fit across nodes");
    const struct cc_fit *ft = &c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0];
    ok(ft->nranks == 16 && ft->per_node == 8, "16 ranks, 8 per host (from the Rank lines)");
    is_int(ft->points, 21, "11 sizes x out-of-place and in-place, less the wrong run");
    REL(ft->busbw_Bps, 50e9, 1e-3, "nccl-tests all-reduce busbw 50 GB/s");
    is_near(ft->alpha_s, 20e-6, 0.05e-6, "nccl-tests all-reduce latency 20 us");
    is_int(c.nfits[CC_ALLGATHER][CC_SCOPE_INTER], 1, "second test in the same log");
    REL(c.fits[CC_ALLGATHER][CC_SCOPE_INTER][0].busbw_Bps, 40e9, 1e-3, "all-gather 40 GB/s");
    is_int(c.nfits[CC_ALLREDUCE][CC_SCOPE_INTRA] + c.nfits[CC_ALLGATHER][CC_SCOPE_INTRA], 0,
           "nothing taken for one node");
    ok(strstr(c.bw_source, "(nccl-tests)") != NULL, "source says nccl-tests: %s", c.bw_source);
    /* sendrecv_perf, 8 us + x / 20 GB/s: a ring shift crosses each host boundary with one
     * flow, so it measured one flow's rate; a pipeline stage's 8 GPUs send across at once and
     * share the node's rate, which the all-reduce over whole nodes measured at 50 GB/s: each
     * flow gets 6.25 GB/s, not the 20 one flow alone got */
    is_int(c.nfits[CC_SENDRECV][CC_SCOPE_INTER], 1, "sendrecv fitted across nodes");
    REL(cc_comm_time(&c, CC_SENDRECV, 2, 1, 1e9), 8e-6 + 1e9 / (50e9 / 8), 1e-3,
        "a pipeline send between two hosts: the node's measured rate shared by its 8 GPUs");
    {
        /* on nodes whose all-reduce across them runs at 185 GB/s (the table's, nothing
         * measured there), 8 flows of 20 GB/s fit: the measured flow rate stands */
        struct cc_cluster s;
        cc_cluster_quick(&s, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
        s.fits[CC_SENDRECV][CC_SCOPE_INTER][0] = c.fits[CC_SENDRECV][CC_SCOPE_INTER][0];
        s.nfits[CC_SENDRECV][CC_SCOPE_INTER] = 1;
        REL(cc_comm_time(&s, CC_SENDRECV, 2, 1, 1e9), 8e-6 + 1e9 / 20e9, 1e-3,
            "... where the node has the rate for 8 such flows, the measured flow's rate");
        /* a node of one 25 GB/s NIC: 8 flows share it */
        s.inter_node_Bps = 25e9;
        REL(cc_comm_time(&s, CC_SENDRECV, 2, 1, 1e9), 8e-6 + 1e9 / (25e9 / 8), 1e-3,
            "... a node of one 25 GB/s NIC: 3.1 GB/s a flow, not the 20 measured alone");
        REL(cc_p2p_time(&s, 1, 2, 1e9), 8e-6 + 1e9 / (25e9 / 2), 1e-3,
            "... of which 2 flows at once (a stage of 2 GPUs) get 12.5 GB/s each");
        REL(cc_p2p_time(&s, 1, 1, 1e9), 8e-6 + 1e9 / 20e9, 1e-3,
            "... and one flow alone its measured 20");
        REL(cc_p2p_time(&s, 1, 8, 1e9), cc_comm_time(&s, CC_SENDRECV, 2, 1, 1e9), 1e-15,
            "all 8 at once: cc_comm_time's send/recv");
        /* a pipeline whose stages are 4 GPUs wide (tp=2, dp=2) on nodes of 8: 4 flows cross
         * a node boundary at once */
        struct cc_model mp;
        struct cc_habits hp;
        struct cc_eval ep;
        preset("llama2-7b", &mp);
        cc_habits_default(&hp);
        struct cc_layout lp = {2, 4, 2, 1, 1, 1, 1, 1, CC_RC_NONE};
        cc_layout_eval(&mp, &s, &hp, &lp, &ep);
        double Sp = 1.0 * mp.seq_len * mp.hidden * 2 / 2; /* sbh/t, 16-bit */
        REL(ep.t_pp, (double)ep.m * 2 * cc_p2p_time(&s, 1, 4, Sp), 1e-12,
            "pipeline of 4-GPU stages: each hop across nodes shared by 4 flows (%.3f s)", ep.t_pp);
    }

    /* a log from before nccl-tests 2.13 (Rank lines without Group, no root column, the
     * largest deviation where #wrong is now), named all_reduce_perf-2021.txt: 16 GPUs on 2
     * hosts, 12 us + x / 40 GB/s; a second run in the same file reports out-of-bounds values
     * in its footer and is left out whole */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    path(p, sizeof p, "all_reduce_perf-2021.txt");
    is_int(cc_cluster_load_results(&c, p, err, sizeof err), CC_OK, "read a pre-2.13 log");
    is_int(c.nfits[CC_ALLREDUCE][CC_SCOPE_INTER], 1, "one all-reduce fit across nodes");
    ft = &c.fits[CC_ALLREDUCE][CC_SCOPE_INTER][0];
    ok(ft->nranks == 16 && ft->per_node == 8 && ft->points == 22,
       "16 ranks, 8 per host, 22 points: the failed run left out (%d, %d, %d)", ft->nranks,
       ft->per_node, ft->points);
    REL(ft->busbw_Bps, 40e9, 2e-3, "pre-2.13 all-reduce busbw 40 GB/s");
    is_near(ft->alpha_s, 12e-6, 0.05e-6, "pre-2.13 all-reduce latency 12 us");

    /* NCCL_TESTS_SPLIT run tagged by srun -l ("0: "), per-iteration columns: two groups of 8,
     * one per host; the rows are group 0's, all on node-a: 7 us + x / 150 GB/s within a node */
    path(p, sizeof p, "nccl-tests-split.txt");
    is_int(cc_cluster_load_results(&c, p, err, sizeof err), CC_OK, "read a split, tagged log");
    is_int(c.nfits[CC_ALLREDUCE][CC_SCOPE_INTRA], 1, "split groups: a fit within a node");
    ft = &c.fits[CC_ALLREDUCE][CC_SCOPE_INTRA][0];
    ok(ft->nranks == 8 && ft->points == 22, "8 ranks of group 0, in-place from column 13 (%d, %d)",
       ft->nranks, ft->points);
    REL(ft->busbw_Bps, 150e9, 2e-3, "split all-reduce busbw 150 GB/s");

    /* an older log (no test name, validation off: #wrong N/A) named all_gather_perf-8gpu.txt:
     * 8 GPUs on one host, 6 us + x / 120 GB/s */
    cc_cluster_quick(&c, 8, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    path(p, sizeof p, "all_gather_perf-8gpu.txt");
    is_int(cc_cluster_load_results(&c, p, err, sizeof err), CC_OK, "read all_gather_perf-8gpu.txt");
    is_int(c.nfits[CC_ALLGATHER][CC_SCOPE_INTRA], 1, "collective from the file name");
    REL(c.fits[CC_ALLGATHER][CC_SCOPE_INTRA][0].busbw_Bps, 120e9, 1e-3, "all-gather 120 GB/s");
    is_near(c.fits[CC_ALLGATHER][CC_SCOPE_INTRA][0].alpha_s, 6e-6, 0.05e-6, "latency 6 us");

    path(p, sizeof p, "model-small.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "read model-small.json");
    ok(m.layers == 12 && m.hidden == 768 && m.ffn == 3072 && m.kv_heads == 12 &&
       m.recompute == CC_RC_NONE && !m.flash_attn && m.tied_embed, "spec fields and defaults");
    path(p, sizeof p, "model-badheads.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_EINVAL, "heads not dividing hidden");
    ok(strstr(err, "heads '12' do not divide hidden size 1000") != NULL, "message: %s", err);

    /* Hugging Face config.json: Meta-Llama-3-8B's is the llama3-8b preset's shape */
    struct cc_model ref;
    preset("llama3-8b", &ref);
    path(p, sizeof p, "hf-llama3-8b.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "read a Hugging Face config.json");
    ok(m.layers == 32 && m.hidden == 4096 && m.heads == 32 && m.kv_heads == 8 &&
       m.ffn == 14336 && m.vocab == 128256 && m.mlp == CC_MLP_SWIGLU && !m.tied_embed &&
       m.seq_len == 8192 && m.global_batch == 512 && m.prec == CC_PREC_BF16,
       "Llama-3 8B config: shape, gated MLP, untied, 8192 x 512 (4M tokens)");
    is_near(cc_model_params(&m), cc_model_params(&ref), 0, "same parameters as the preset");
    ok(strcmp(m.name, "llama") == 0 && strstr(m.source, "Hugging Face config") != NULL,
       "named by model_type, source says what was assumed: %s", m.source);
    path(p, sizeof p, "hf-gpt2.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "read GPT-2's config (n_layer, n_embd)");
    ok(m.layers == 12 && m.hidden == 768 && m.heads == 12 && m.kv_heads == 12 &&
       m.ffn == 3072 && m.mlp == CC_MLP_GELU && m.tied_embed && m.seq_len == 1024 &&
       m.global_batch == 4096, "GPT-2: 4h plain MLP, tied, 1024 x 4096");
    preset("llama2-7b", &ref);
    path(p, sizeof p, "hf-llama2-7b.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "read Llama-2 7B's config");
    ok(m.prec == CC_PREC_BF16 && m.seq_len == 4096 && m.global_batch == 1024 &&
       m.batch_tokens == 4194304, "stored as float16, trained bf16: the dtype is not the "
       "training precision; 4096 x 1024 = 4M tokens");
    is_near(cc_model_params(&m), cc_model_params(&ref), 0, "same parameters as llama2-7b");
    path(p, sizeof p, "hf-llava.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "read a multimodal config");
    ok(m.layers == 32 && m.vocab == 32064 && m.mlp == CC_MLP_SWIGLU,
       "its text_config is the language model");
    path(p, sizeof p, "hf-falcon-40b.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "read Falcon-40B's config");
    ok(m.layers == 60 && m.heads == 128 && m.kv_heads == 8 && m.ffn == 32768 &&
       m.mlp == CC_MLP_GELU && m.seq_len == 2048,
       "Falcon: num_kv_heads 8 (not multi_query's 1), plain 4h MLP, no window: 2048");
    path(p, sizeof p, "hf-mpt-7b.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "read MPT-7B's config");
    ok(m.layers == 32 && m.hidden == 4096 && m.heads == 32 && m.ffn == 16384 &&
       m.seq_len == 2048, "MPT: n_layers, d_model, n_heads, expansion_ratio, max_seq_len");
    path(p, sizeof p, "hf-badtype.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_EINVAL, "a size given as a string refused");
    ok(strstr(err, "\"num_hidden_layers\" must be a whole number") != NULL, "message: %s", err);
    path(p, sizeof p, "hf-moe.json");
    err[0] = 0;
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "Mixtral's config read %s", err);
    ok(m.experts == 8 && m.topk == 2 && m.moe_ffn == 14336 && m.shared_ffn == 0,
       "... 8 experts, top 2, expert ffn 14336 (intermediate_size), no shared expert");
    /* Gemma 7B: 16 heads of 256, queries 4096 wide in a 3072 model. Per layer: Q and O
     * 2*3072*4096, K and V 2*3072*4096, gated MLP 3*3072*24576, 2 RMSNorms: 276,830,208;
     * x28 + the tied 256000 x 3072 embedding + final norm = 8,537,680,896 (Google: 8.54B) */
    path(p, sizeof p, "hf-headdim.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "head_dim x heads != hidden read %s", err);
    ok(m.head_dim == 256 && cc_model_q_dim(&m) == 4096 && !m.qk_norm,
       "... head_dim 256, queries 4096 wide, no QK norm");
    is_near(cc_model_params(&m), 8537680896.0, 0, "Gemma 7B: 8,537,680,896 parameters");
    is_near(cc_model_layer_fwd_flops(&m, 1),
            2.0 * 8192 * (2.0 * 3072 * 4096 * 2 + 3.0 * 3072 * 24576) + 4.0 * 8192.0 * 8192 * 4096,
            1e-12, "... attention products over the 4096-wide queries");
    /* Qwen3-30B-A3B: 128 experts of 768, top 8, QK norm. Per layer: attention 2*2048*4096 +
     * 2*2048*512 = 18,874,368; experts 128*3*2048*768 = 603,979,776; router 262,144; norms
     * 2*2048 + 2*128: 623,120,640; x48 + 2 x 151936 x 2048 + 2048 = 30,532,122,624 (Qwen:
     * 30.5B); 120 of 128 experts idle: 3,353,032,704 active (Qwen: 3.3B) */
    path(p, sizeof p, "hf-qwen3-moe.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "Qwen3-30B-A3B's config read %s", err);
    ok(m.experts == 128 && m.topk == 8 && m.moe_ffn == 768 && m.head_dim == 128 && m.qk_norm &&
       !m.tied_embed && m.mlp == CC_MLP_SWIGLU, "... 128 experts, top 8, head_dim 128, QK norm");
    is_near(cc_model_params(&m), 30532122624.0, 0, "Qwen3-30B-A3B: 30,532,122,624 parameters");
    is_near(cc_model_active_params(&m), 3353032704.0, 0, "... 3,353,032,704 active");

    /* a spec that starts from a preset keeps the preset's name unless it gives one */
    char tmp[] = "/tmp/cc-layout-spec-XXXXXX";
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f) {
        fputs("{\"preset\": \"llama3-8b\", \"global_batch\": 64}\n", f);
        fclose(f);
    }
    is_int(cc_model_load(tmp, &m, err, sizeof err), CC_OK, "preset-based spec");
    ok(strcmp(m.name, "llama3-8b") == 0 && m.global_batch == 64,
       "preset name kept, batch overridden ('%s', %lld)", m.name, m.global_batch);
    unlink(tmp);
}

static void test_gemm(void)
{
    /* A100, 108 SMs, 256x128 tiles either way round. 2048 x 9216: 8 x 72 = 576 tiles (16 x 36
     * the other way), 5.33 waves -> 6: 576 / 648 = 8/9 of the SM time does useful work */
    is_near(cc_gemm_wave_eff(2048, 9216, 6144, 1, 108), 8.0 / 9.0, 1e-12,
            "2048x9216 on 108 SMs: 576 tiles in 6 waves = 8/9");
    /* 2304 x 1536 = 9 x 12 tiles of 256x128: exactly one wave, no padding */
    is_near(cc_gemm_wave_eff(2304, 1536, 4096, 1, 108), 1.0, 1e-12, "108 tiles: one full wave");
    /* batched: 2048 x 2048 x 27 heads = 8 x 16 x 27 = 3456 tiles = 32 full waves */
    is_near(cc_gemm_wave_eff(2048, 2048, 128, 27, 108), 1.0, 1e-12,
            "batch counts tiles: 3456 tiles, 32 waves");
    /* 100 x 100 with k = 4096: one padded tile; split-K into min(108, 4096/256 = 16) slices,
     * one wave: 100*100*16 / (108 * 256*128) */
    is_near(cc_gemm_wave_eff(100, 100, 4096, 1, 108), 160000.0 / (108.0 * 32768.0), 1e-12,
            "tiny GEMM: one padded tile split 16 ways over k");
    is_near(cc_gemm_wave_eff(2048, 9216, 6144, 1, 0), 1.0, 0, "SMs unknown: no quantization");
    /* forward 2048x9216 (8/9), dA 2048x6144 (384 tiles, 4 waves: 8/9), dB 6144x9216 (1728
     * tiles, 16 full waves: 1): 2*M*N*K/rate * (9/8 + 9/8 + 1) */
    double one = 2.0 * 2048 * 9216 * 6144 / 1e14;
    is_near(cc_gemm_time(2048, 9216, 6144, 1, 1e14, 108, 1, 1), one * 3.25, 1e-15,
            "forward + both backward products with their own waves");
    is_near(cc_gemm_time(2048, 9216, 6144, 1, 1e14, 108, 2, 0), one * 2.25, 1e-15,
            "two forward passes (full recomputation), no backward");

    /* Without quantization a layer's GEMMs are exactly the layer FLOPs: (nfwd + 2) forwards */
    struct cc_model m;
    preset("megatron-18.4b", &m);
    double f = cc_model_layer_fwd_flops(&m, 2) / 4;
    REL(cc_layer_gemm_time(&m, 2, 2048, 4, 1e14, 1e14, 0, 2, 0), 4 * f / 1e14, 1e-12,
        "flat layer GEMMs = 4 x forward FLOPs / t / rate (full recompute)");
    /* selective recomputation: one more forward of the attention products, 4 b s^2 h / t */
    REL(cc_layer_gemm_time(&m, 2, 2048, 4, 1e14, 1e14, 0, 1, 1),
        (3 * f + 4.0 * 2 * 2048 * 2048 * m.hidden / 4) / 1e14, 1e-12,
        "selective: + the attention products once more");
    preset("llama3-70b", &m); /* GQA and SwiGLU shapes add up too */
    REL(cc_layer_gemm_time(&m, 1, 8192, 8, 1e14, 1e14, 0, 1, 0),
        3 * cc_model_layer_fwd_flops(&m, 1) / 8 / 1e14, 1e-12, "GQA + SwiGLU layer GEMMs");
    /* context parallel: s/cp queries against all s keys = the layer FLOPs / (t * cp) */
    REL(cc_layer_gemm_time(&m, 1, 4096, 8, 1e14, 1e14, 0, 1, 0),
        3 * cc_model_layer_fwd_flops(&m, 1) / 16 / 1e14, 1e-12, "cp = 2 halves the layer");
    /* fp8: the linear layers at the fp8 rate, the attention products (4 b s^2 h / t per
     * forward) at the 16-bit rate */
    double fa = 4.0 * 8192 * 8192 * m.hidden / 8, fl = cc_model_layer_fwd_flops(&m, 1) / 8 - fa;
    REL(cc_layer_gemm_time(&m, 1, 8192, 8, 2e14, 1e14, 0, 1, 0), 3 * fl / 2e14 + 3 * fa / 1e14,
        1e-12, "fp8: linear layers at the fp8 rate, attention products at the 16-bit rate");
    REL(cc_logit_gemm_time(&m, 1, 8192, 8, 1e14, 0),
        3 * cc_model_logit_fwd_flops(&m, 1) / 8 / 1e14, 1e-12, "logits: forward + backward");
    /* 145.6B at t=8 on 108 SMs: with 2048 tokens the four weight GEMMs' forward outputs
     * (2048 x 4608, x 12288, x 6144, x 12288) are 288, 768, 384, 768 tiles, all 8/9 of their
     * waves; with 4096 tokens the projection and MLP-out outputs fill 1536 of 1620 tile
     * slots. So a micro-batch of 1 costs more per sequence than one of 2 */
    preset("megatron-145.6b", &m);
    ok(cc_layer_gemm_time(&m, 1, 2048, 8, 1e14, 1e14, 108, 2, 0) >
           0.5 * cc_layer_gemm_time(&m, 2, 2048, 8, 1e14, 1e14, 108, 2, 0) * 1.01,
       "mb=1 pays more per sequence than mb=2 (partly empty waves)");
}

static void test_eval(void)
{
    /* megatron-1.7b, t=1 p=1 d=32 mb=1, paper habits, efficiency 0.64 (hand computation):
     * P = 24*(12h^2+13h) + (V+s)h + 2h = 1652230656 parameters, 20 bytes each (2 weights,
     * 2 fp16 gradients, 4 fp32 copy, 12 Adam) = 33044613120; activations 2sbh*24 + one
     * layer without recompute sbh(34 + 5as/h) + logits 6sV = 1519386624 */
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e;
    char err[256];
    preset("megatron-1.7b", &m);
    cc_cluster_quick(&c, 32, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    cc_megatron_habits(&hb, 0.64);
    hb.gemm_waves = 0; /* every GEMM at 0.64 of peak: the hand arithmetic below */
    struct cc_layout l = {1, 1, 32, 1, 1, 1, 0, 0, CC_RC_FULL};
    cc_layout_eval(&m, &c, &hb, &l, &e);
    ok(e.feasible, "1.7B on 32 GPUs, pure data parallel, fits");
    REL(e.mem_weights + e.mem_grads + e.mem_optim, 33044613120.0, 1e-12, "model state 33.04 GB");
    REL(e.mem_act, 1519386624.0, 1e-12, "activations 1.52 GB");
    is_int(e.m, 16, "512 / (32 * 1) = 16 micro-batches");
    {
        /* tp = 2: every weight split in two but what each tp rank holds whole: the learned
         * positions (s x h), and per layer the two LayerNorms (4h) and the biases of the
         * output projection and the MLP out (2h), and the final LayerNorm (2h) */
        struct cc_eval e2;
        struct cc_layout l2 = {2, 1, 16, 1, 1, 1, 0, 0, CC_RC_FULL};
        double P = cc_model_params(&m), whole = 2048.0 * 2304 + 24 * 6.0 * 2304 + 2.0 * 2304;
        cc_layout_eval(&m, &c, &hb, &l2, &e2);
        REL(e2.mem_weights, 2 * ((P - whole) / 2 + whole), 1e-12,
            "tp=2 weights: 16-bit, positions, norms and row-parallel biases whole, the rest "
            "halved");
    }
    /* 16 x (24 layers x (4 x 2s(12h^2) + 4s^2h FLOPs / (312e12 * 0.64) + 2*4*sbh(34+5as/h)
     * / 2039 GB/s) + logits 6shV / rate + 2*3*6sV / HBM) = 3.4502039945653 s, plus
     * (no accumulation fusion in 2021) 16 x P x (2 + 2 + 2) bytes / 2039 GB/s */
    REL(e.t_compute, 3.4502039945653 + 16 * 1652230656.0 * 6 / 2039e9, 1e-9,
        "compute 3.450 s + gradient accumulation 0.078 s");
    {
        /* --attn-efficiency at half of 0.64: the attention products (4 passes x 4s^2h per
         * layer and micro-batch) take twice as long, the rest does not change */
        struct cc_eval ea;
        struct cc_habits ha = hb;
        ha.efficiency_attn = 0.32;
        cc_layout_eval(&m, &c, &ha, &l, &ea);
        double s = m.seq_len, h = m.hidden;
        REL(ea.t_compute - e.t_compute, 16 * 24 * 16 * s * s * h / (312e12 * 0.64), 1e-9,
            "attention at 0.32: +16 x 24 x 16s^2h / (312 TFLOP/s x 0.64) = 0.297 s");
        ha.efficiency_attn = 0.64;
        cc_layout_eval(&m, &c, &ha, &l, &ea);
        REL(ea.t_compute, e.t_compute, 1e-15, "attention efficiency equal to --efficiency: same");
        /* a GPU with an fp16 peak but no bf16 one: the attention products of an fp16 run
         * use the fp16 peak too */
        struct cc_cluster cv;
        struct cc_eval ev0, ev1;
        cc_cluster_quick(&cv, 32, 8, cc_gpu_lookup("v100"), err, sizeof err);
        ha.efficiency_attn = 0;
        cc_layout_eval(&m, &cv, &ha, &l, &ev0);
        ha.efficiency_attn = ha.efficiency;
        cc_layout_eval(&m, &cv, &ha, &l, &ev1);
        REL(ev1.t_compute, ev0.t_compute, 1e-15,
            "V100 fp16: attention efficiency equal to --efficiency changes nothing");
    }
    is_near(cc_grad_accum_time(&hb, 1e9, 2e12), 1e9 * 6 / 2e12, 1e-15,
            "accumulation: 16-bit gradient read, 16-bit buffer read and written");
    hb.grad_bytes = 4;
    is_near(cc_grad_accum_time(&hb, 1e9, 2e12), 1e9 * 10 / 2e12, 1e-15,
            "accumulation into an fp32 buffer: 2 + 4 + 4 bytes");
    hb.accum_fusion = 1;
    is_near(cc_grad_accum_time(&hb, 1e9, 2e12), 0, 0, "fused into the GEMM: no extra pass");
    hb.accum_fusion = 0, hb.grad_bytes = 2;
    /* p = 1: PyTorch DDP overlaps the all-reduce with the last backward pass and its
     * recomputed forward (3/4 of the 0.216 s micro-batch), so only the last of 127 buckets shows:
     * (127 * (30 + 28) us + 2P bytes * 2*31/32 / 185 GB/s) / 127 (4 nodes: NCCL's tree adds
     * 2 x 14 us to the two-node latency) */
    double ar = 0.03841753401081081 + 127 * 28e-6;
    REL(e.t_dp, ar / 127, 1e-9, "gradient all-reduce hidden but one bucket");
    {
        struct cc_eval e0;
        hb.dp_overlap = 0;
        cc_layout_eval(&m, &c, &hb, &l, &e0);
        /* 127 buckets of 25 MiB: 127 * 58 us + 2P bytes * 2*31/32 / 185 GB/s, not overlapped */
        REL(e0.t_dp, ar, 1e-9, "without overlap: gradient all-reduce 42.0 ms");
        hb.dp_overlap = 2;
    }
    /* Adam's 26 bytes, the 16-bit gradient read and cast into the fp32 copy (2 + 4), the
     * copy read (4) */
    REL(e.t_opt, 1652230656.0 * 36 / 2039e9, 1e-12, "optimizer step: 36 bytes/param at HBM speed");
    ok(e.t_tp == 0 && e.t_pp == 0 && e.t_bubble == 0, "no model parallel costs");
    REL(e.t_step, e.t_compute + e.t_dp + e.t_opt, 1e-12, "step = sum of the parts");
    REL(e.mfu, cc_model_step_flops(&m) / (32 * 312e12 * e.t_step), 1e-12, "MFU definition");

    /* pipeline: bubble = (p-1)/v of a micro-batch slot, and the parts add up */
    struct cc_layout l2 = {8, 4, 1, 1, 1, 3, 1, 1, CC_RC_SELECTIVE};
    cc_cluster_quick(&c, 32, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    preset("megatron-7.5b", &m);
    cc_habits_default(&hb);
    hb.pp_overlap = 0; /* blocking pipeline sends (Megatron-LM 2021) */
    cc_layout_eval(&m, &c, &hb, &l2, &e);
    /* no ZeRO-3 here: t_dp is only the once-per-step tied-embedding all-reduce and, with
     * sequence parallelism, the sum over tp of the last stage's whole-held parameters'
     * gradients: 9 layers' biases and LayerNorms (6h each) and the final LayerNorm (2h) */
    double t_emb = cc_embed_sync_time(&m, &c, &hb, 8, 4, 8, 0);
    double t_w = cc_comm_time(&c, CC_ALLREDUCE, 8, 8, (9.0 * 6 + 2) * m.hidden * hb.grad_bytes);
    REL(e.t_dp, t_emb + t_w, 1e-12, "gradient reduction: dp = 1, the embedding sync and the "
        "whole-held parameters' sum over tp");
    double t_mb = (e.t_compute + e.t_tp + e.t_cp + e.t_pp) / e.m;
    is_near(e.t_bubble, 3.0 / 3.0 * t_mb, 1e-9 * t_mb, "bubble (p-1)/v micro-batch slots");
    ok(e.t_tp > 0 && e.t_pp > 0, "tensor and pipeline traffic counted");
    /* pipeline traffic, 512 micro-batches x 2 directions x v=3 chunks x a send of sbh/t
     * 16-bit = 2 MiB to the next node at 185/8 GB/s + 30 us; sequence parallel, so the
     * activations stay split by tp and need no all-gather */
    REL(e.t_pp, 512 * 6 * (30e-6 + 2097152 / (185e9 / 8)), 1e-12,
        "pipeline sends of the sequence-parallel shards 0.371 s");
    {
        /* without sequence parallelism: the scatter/gather all-gather of the 16 MiB tensor
         * over the 8 GPUs of the node at 230 GB/s after every receive, with a ring's latency:
         * 8.4 us + 7 steps of 3.4 us */
        struct cc_eval e0;
        l2.sp = 0;
        hb.pp_scatter = 1;
        cc_layout_eval(&m, &c, &hb, &l2, &e0);
        REL(e0.t_pp,
            512 * 6 * ((30e-6 + 2097152 / (185e9 / 8)) + (32.2e-6 + 16777216 * 7.0 / 8 / 230e9)),
            1e-12, "pipeline sends + scatter/gather all-gathers 0.598 s");
        /* Megatron-Core (no scatter/gather): every tp rank sends the whole 16 MiB tensor */
        hb.pp_scatter = 0;
        cc_layout_eval(&m, &c, &hb, &l2, &e0);
        REL(e0.t_pp, 512 * 6 * (30e-6 + 16777216 / (185e9 / 8)), 1e-12,
            "without sequence parallelism or scatter/gather: whole activations sent, 2.32 s");
        l2.sp = 1;
    }
    {
        /* a pipeline whose ranks are 4 apart on nodes of 8: stages 0-1 share a node, stage 2
         * is on the next; the exchanges are synchronous, so the hop across nodes paces them
         * all (tp=2, pp=4, dp=2 on 16 GPUs); the same pipeline on one node of 8 stays inside */
        struct cc_cluster c16, c8;
        struct cc_layout l16 = {2, 4, 2, 1, 1, 1, 1, 1, CC_RC_SELECTIVE};
        struct cc_layout l8 = {2, 4, 1, 1, 1, 1, 1, 1, CC_RC_SELECTIVE};
        struct cc_eval e16, e8;
        cc_cluster_quick(&c16, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
        cc_cluster_quick(&c8, 8, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
        cc_layout_eval(&m, &c16, &hb, &l16, &e16);
        cc_layout_eval(&m, &c8, &hb, &l8, &e8);
        double S = 2048.0 * 4096 * 2 / 2; /* sbh/t, 16-bit */
        REL(e16.t_pp, 256 * 2 * cc_comm_time(&c16, CC_SENDRECV, 2, 1, S), 1e-12,
            "a pipeline that spans two nodes is paced by the hop across them (%.3f s)", e16.t_pp);
        REL(e8.t_pp, 512 * 2 * cc_comm_time(&c8, CC_SENDRECV, 2, 2, S), 1e-12,
            "the same pipeline inside one node sends over its links (%.3f s)", e8.t_pp);
    }
    {
        struct cc_eval e1;
        /* Megatron-Core's interleaved schedule sends while other chunks compute: the sends
         * (1.2 ms per micro-batch) are far shorter than a micro-batch's compute, so none shows
         * and the bubble shrinks with the micro-batch slot */
        hb.pp_overlap = 1;
        cc_layout_eval(&m, &c, &hb, &l2, &e1);
        ok(e1.t_pp == 0, "overlapped pipeline sends: none exposed (%g s)", e1.t_pp);
        REL(e1.t_bubble, (e1.t_compute + e1.t_tp) / e1.m, 1e-12, "bubble from the shorter slot");
        REL(e1.t_compute, e.t_compute, 1e-12, "compute unchanged");
        /* tensor-parallel overlap (sequence parallel here): only what outlasts the linear
         * layers' GEMMs shows, never less than one chunk in tp; 512 micro-batches x 9 layers
         * per stage of GEMMs, one forward (selective recomputation) */
        double lin = 512 * 9 * cc_layer_gemm_time(&m, 1, 2048, 8, 312e12 * 0.71, INFINITY, 108,
                                                  1, 0);
        hb.tp_overlap = 1;
        cc_layout_eval(&m, &c, &hb, &l2, &e1);
        ok(lin > e.t_tp * 7 / 8, "the GEMMs outlast the transfers (%.3f s against %.3f s)", lin,
           e.t_tp);
        /* the output layer's all-gather and reduce-scatter and the cross entropy's three
         * all-reduces (last stage, 8 KiB each) are not overlapped */
        double outside = 512 * (2 * (32.2e-6 + 16777216 * 0.875 / 230e9) +
                                3 * (10e-6 + 8192 * 1.75 / 230e9));
        REL(e1.t_tp, (e.t_tp - outside) / 8 + outside, 1e-12,
            "tp overlap: one chunk in eight of the layers' transfers exposed");
        hb.tp_overlap = 0;
        l2.sp = 0;
        cc_layout_eval(&m, &c, &hb, &l2, &e1);
        hb.tp_overlap = 1;
        struct cc_eval e2;
        cc_layout_eval(&m, &c, &hb, &l2, &e2);
        REL(e2.t_tp, e1.t_tp, 1e-12, "no tp overlap without sequence parallelism");
        hb.tp_overlap = 0;
        l2.sp = 1;
        hb.pp_overlap = 0;
    }

    {
        /* fp8 on H100 (no wave model): only the linear layers change rate, from bf16 peak x
         * 0.71 to fp8 peak x --fp8-efficiency; attention, logits and element-wise work stay */
        struct cc_model m8;
        struct cc_eval eb, ef;
        struct cc_layout l8 = {1, 1, 8, 1, 1, 1, 0, 1, CC_RC_NONE};
        preset("llama3-8b", &m8);
        cc_cluster_quick(&c, 8, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
        cc_habits_default(&hb);
        hb.gemm_waves = 0, hb.efficiency_fp8 = 1.0;
        cc_layout_eval(&m8, &c, &hb, &l8, &eb);
        m8.prec = CC_PREC_FP8;
        cc_layout_eval(&m8, &c, &hb, &l8, &ef);
        double r16 = 989e12 * 0.71, r8 = 1979e12 * 1.0;
        double lin = 64 * 32 * cc_layer_gemm_time(&m8, 1, 8192, 1, r16, INFINITY, 0, 1, 0);
        REL(ef.t_compute, eb.t_compute - lin * (1 - r16 / r8), 1e-12,
            "fp8: only the linear layers speed up (%.3f s of %.3f s)", lin, eb.t_compute);
        hb.efficiency_fp8 = CC_LAYOUT_FP8_EFFICIENCY;
    }

    /* infeasible layouts still get numbers and a reason */
    preset("llama2-7b", &m);
    struct cc_layout l3 = {3, 1, 0, 1, 1, 1, 0, 0, CC_RC_FULL};
    cc_cluster_quick(&c, 24, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    l3.dp = 8;
    cc_layout_eval(&m, &c, &hb, &l3, &e);
    ok(!e.feasible && strstr(e.why, "tp 3 does not divide the 32 attention heads"),
       "tp 3 with 32 heads: %s", e.why);
    ok(e.t_step > 0 && isfinite(e.t_step), "infeasible layout still has a step time");
    /* Megatron-LM refuses interleaving with two stages without overlapped P2P */
    preset("megatron-7.5b", &m);
    cc_cluster_quick(&c, 32, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    struct cc_layout l4 = {8, 2, 2, 1, 1, 2, 0, 0, CC_RC_FULL};
    hb.pp_overlap = 0;
    cc_layout_eval(&m, &c, &hb, &l4, &e);
    ok(!e.feasible && strstr(e.why, "needs pp > 2"), "pp=2 with v=2, blocking sends: %s", e.why);
    hb.pp_overlap = 1;
    cc_layout_eval(&m, &c, &hb, &l4, &e);
    ok(e.feasible, "pp=2 with v=2, overlapped sends (Megatron-Core): allowed %s", e.why);
    l4.pp = 4, l4.dp = 1, l4.vpp = 3;
    cc_layout_eval(&m, &c, &hb, &l4, &e);
    ok(e.feasible, "pp=4 with v=3 is allowed: %s", e.why);
}

static void test_embed_sync(void)
{
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    char err[256];
    preset("megatron-7.5b", &m); /* tied embeddings, V = 51200, h = 4096 */
    cc_cluster_quick(&c, 32, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    cc_habits_default(&hb); /* gradients reduced in fp32 */
    /* tp=8, pp=4: stages a node apart, first and last in different nodes: all-reduce of
     * V*h/8 fp32 gradients over 2 GPUs, one per node: 30 us + 104857600 B / (185/8 GB/s) */
    is_near(cc_embed_sync_time(&m, &c, &hb, 8, 4, 8, 0), 30e-6 + 104857600.0 / (185e9 / 8), 1e-15,
            "tied-embedding all-reduce across nodes 4.56 ms");
    /* tp=2, pp=4, dp=1: the whole pipeline in one node: 10 us + 419430400 B / 230 GB/s */
    is_near(cc_embed_sync_time(&m, &c, &hb, 2, 4, 2, 0), 10e-6 + 419430400.0 / 230e9, 1e-15,
            "tied-embedding all-reduce within a node 1.83 ms");
    is_near(cc_embed_sync_time(&m, &c, &hb, 8, 1, 8, 0), 0, 0, "no pipeline: nothing to sync");
    /* a standalone MTP stage keeps a third copy: tied, the first, the MTP stage and the last
     * all-reduce over 3 GPUs; untied, the first and the MTP stage over 2 */
    m.mtp = 1;
    double two = cc_embed_sync_time(&m, &c, &hb, 8, 4, 8, 0);
    double three = cc_embed_sync_time(&m, &c, &hb, 8, 4, 8, 1);
    is_near(three, cc_comm_time(&c, CC_ALLREDUCE, 3, 1, 104857600.0), 1e-15,
            "tied, MTP stage apart: an all-reduce over 3 GPUs (%.2f ms against %.2f ms)",
            three * 1e3, two * 1e3);
    ok(three > two, "... longer than over 2");
    m.tied_embed = 0;
    is_near(cc_embed_sync_time(&m, &c, &hb, 8, 4, 8, 1), two, 1e-15,
            "untied, MTP stage apart: the first and the MTP stage, over 2");
    m.mtp = 0;
    is_near(cc_embed_sync_time(&m, &c, &hb, 8, 4, 8, 0), 0, 0, "untied: nothing to sync");
}

/* The vocabulary padded as Megatron-LM pads it: to a multiple of 128 x tp. */
static void test_vocab_pad(void)
{
    struct cc_model m, mp;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e, e1;
    char err[256], args[2048];
    preset("llama2-7b", &m); /* V = 32000, h = 4096, untied */
    mp = m;
    mp.vocab = 50257; /* GPT-2's tokenizer */
    is_near(cc_model_padded_vocab(&mp, 128), 50304, 0, "50257 padded to 128: 50304");
    is_near(cc_model_padded_vocab(&mp, 1024), 51200, 0, "50257 padded to 128 x 8: 51200");
    is_near(cc_model_padded_vocab(&mp, 1), 50257, 0, "unit 1: not padded");
    is_near(cc_model_padded_vocab(&m, 128), 32000, 0, "32000 is a multiple of 128");
    cc_cluster_quick(&c, 8, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_layout l = {8, 1, 1, 1, 1, 1, 0, 0, CC_RC_SELECTIVE};
    cc_layout_eval(&m, &c, &hb, &l, &e);
    is_near(e.vocab, 32768, 0, "tp=8: 32000 padded to 32768 (128 x 8 x 32)");
    mp = m;
    mp.vocab = 32768;
    /* ZeRO 0, pp=1: every rank holds 1/8 of all the weights, padded rows included, but the
     * RMSNorms (2h per layer, h at the end), which it holds whole */
    double whole = 32 * 2.0 * 4096 + 4096;
    REL(e.mem_weights, 2 * ((cc_model_params(&mp) - whole) / 8 + whole), 1e-12,
        "weights with the 768 padded rows of the embedding and the output layer");
    hb.vocab_pad = 1;
    cc_layout_eval(&m, &c, &hb, &l, &e1);
    is_near(e1.vocab, 32000, 0, "--vocab-pad 1: not padded");
    REL(e1.mem_weights, 2 * ((cc_model_params(&m) - whole) / 8 + whole), 1e-12,
        "weights of the model's own V");
    {
        /* pp = 2, tp = 2: a stage holds half its 16 layers' matrices and half the embedding
         * (first) or the output layer (last), and whole their RMSNorms (2h a layer) and, on
         * the last, the final norm (h) */
        struct cc_layout l2 = {2, 2, 2, 1, 1, 1, 0, 0, CC_RC_FULL};
        struct cc_eval e2;
        cc_layout_eval(&m, &c, &hb, &l2, &e2);
        double h = 4096, Pl = cc_model_layer_params(&m), Vh = 32000 * h;
        double first = 16 * (Pl - 2 * h) / 2 + Vh / 2 + 16 * 2 * h;
        double last = first + h;
        ok(e2.mem_stage == 0 || e2.mem_stage == 1, "pp=2: the fullest stage is the first or "
           "the last (%d)", e2.mem_stage);
        REL(e2.mem_weights, 2 * (e2.mem_stage == 1 ? last : first), 1e-12,
            "pp=2, tp=2 weights of the %s stage: norms whole, the rest halved",
            cc_stage_name(e2.mem_stage));
    }
    ok(e.t_compute > e1.t_compute, "the padded logits take longer (%.4f s against %.4f s)",
       e.t_compute, e1.t_compute);
    REL(e.mfu * e.t_step, e1.mfu * e1.t_step, 1e-12, "MFU counts the model's own V");
    /* executed FLOPs count the padded rows; Megatron-LM's logged count pads as told */
    REL(e.hw_tflops * 8 * e.t_step * 1e12, cc_model_step_hw_flops(&mp, CC_RC_SELECTIVE), 1e-12,
        "executed FLOPs with the padded logits");
    REL(e.megatron_tflops * 8 * e.t_step * 1e12, cc_model_megatron_log_flops(&m, 1024), 1e-12,
        "Megatron-LM's log: V padded to 128 x 8");
    REL(e1.megatron_tflops * 8 * e1.t_step * 1e12, cc_model_megatron_log_flops(&m, 8), 1e-12,
        "Megatron-LM's log with --make-vocab-size-divisible-by 1: V padded to 8 only");
    ok(cc_model_megatron_log_flops(&m, 8) < cc_model_megatron_log_flops(&m, 1024),
       "the two counts differ");
    cc_layout_megatron_args(&m, &hb, &l, args, sizeof args);
    size_t al = strlen(args), tl = strlen(" --make-vocab-size-divisible-by 1");
    ok(al >= tl && strstr(args, " --make-vocab-size-divisible-by 1") == args + al - tl,
       "Megatron-LM told not to pad: %s", args);
    hb.vocab_pad = 128;
    cc_layout_megatron_args(&m, &hb, &l, args, sizeof args);
    ok(strstr(args, "make-vocab-size") == NULL, "its default 128 not repeated");
}

static void test_search(void)
{
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_search a, b;
    char err[256];
    preset("llama3-70b", &m);
    cc_cluster_quick(&c, 512, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    hb.cp_max = 4;
    is_int(cc_layout_search(&m, &c, &hb, &a), CC_OK, "search llama3-70b on 512 H100");
    is_int(cc_layout_search(&m, &c, &hb, &b), CC_OK, "search again");
    int same = a.nbest == b.nbest && a.evaluated == b.evaluated;
    for (int i = 0; same && i < a.nbest; i++)
        same = memcmp(&a.best[i].layout, &b.best[i].layout, sizeof a.best[i].layout) == 0 &&
               a.best[i].eval.t_step == b.best[i].eval.t_step;
    ok(same, "same answer twice (%d layouts, %lld settings)", a.nbest, a.evaluated);
    int sorted = 1, valid = 1;
    for (int i = 0; i < a.nbest; i++) {
        const struct cc_layout *x = &a.best[i].layout;
        if (i && a.best[i].eval.t_step < a.best[i - 1].eval.t_step)
            sorted = 0;
        if (x->tp * x->pp * x->dp * x->cp != 512 || m.heads % x->tp ||
            (m.layers + 2 * x->split) % x->pp ||
            x->tp > 8 || !a.best[i].eval.feasible)
            valid = 0;
    }
    ok(sorted, "ranked by step time");
    ok(valid, "every ranked layout is whole, divides heads and layers, tp within a node, fits");
    cc_search_free(&a);
    cc_search_free(&b);

    preset("llama3-405b", &m);
    cc_cluster_quick(&c, 8, 8, cc_gpu_lookup("a100-40g"), err, sizeof err);
    is_int(cc_layout_search(&m, &c, &hb, &a), CC_EINFEASIBLE, "405B on 8 x 40 GB: nothing fits");
    ok(strstr(a.why_none, "no layout fits in memory") != NULL, "reason: %s", a.why_none);
    cc_search_free(&a);

    /* a batch of 1e12 sequences: every step lasts over 30 years; some layouts would not fit
     * either, but the batch is what rules them all out, and the summary says so */
    preset("llama2-7b", &m);
    m.global_batch = 1000000000000LL;
    cc_cluster_quick(&c, 8, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    struct cc_eval e;
    struct cc_layout l1 = {1, 1, 8, 1, 1, 1, 0, 0, CC_RC_NONE};
    cc_layout_eval(&m, &c, &hb, &l1, &e);
    ok(!e.feasible && e.too_long && !e.mem_only &&
       strstr(e.why, "a batch of 1000000000000 sequences x 4096 tokens is too much"),
       "too large and too long: the step time is the reason (%s)", e.why);
    is_int(cc_layout_search(&m, &c, &hb, &a), CC_EINFEASIBLE, "batch of 1e12: nothing runs");
    ok(strstr(a.why_none, "no valid layout: a step would last over 30 years: 6.74e+09 "
                          "parameters trained on a batch of 1000000000000 sequences") &&
           !strstr(a.why_none, "memory"),
       "reason names the batch, not memory: %s", a.why_none);
    cc_search_free(&a);
}

/* Block recomputation (Megatron-LM --recompute-method block): the first rcl layers of every
 * model chunk recomputed whole, the rest kept. */
static void test_block_recompute(void)
{
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval en, ef, eb, eb1;
    char err[256];
    preset("llama3-70b", &m);
    cc_cluster_quick(&c, 64, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    double L = m.layers;
    struct cc_layout ln = {2, 1, 32, 1, 1, 1, 1, 3, CC_RC_NONE};
    struct cc_layout lf = ln, lb = ln;
    lf.rc = CC_RC_FULL;
    lb.rc = CC_RC_BLOCK, lb.rcl = 20;
    cc_layout_eval(&m, &c, &hb, &ln, &en);
    cc_layout_eval(&m, &c, &hb, &lf, &ef);
    cc_layout_eval(&m, &c, &hb, &lb, &eb);
    /* pp = 1: one chunk of 80 layers in flight; none keeps every layer's activations a_n,
     * full keeps their inputs a_f and holds one layer's a_n while it is recomputed; block
     * keeps a_n for 60 layers and a_f for 20, and recomputes those 20 only after the 60 have
     * let theirs go: nothing held beyond */
    double an = cc_model_layer_act_bytes(&m, 1, m.seq_len, 2, 1, CC_RC_NONE);
    double af = cc_model_layer_act_bytes(&m, 1, m.seq_len, 2, 1, CC_RC_FULL);
    REL(eb.mem_act - ef.mem_act, (an - af) * (L - 20) - an, 1e-12,
        "block, 20 of 80 recomputed: (a_n - a_f) x 60 more activations than full, less "
        "full's working layer");
    REL(en.mem_act - eb.mem_act, (an - af) * 20, 1e-12,
        "... and (a_n - a_f) x 20 less than none");
    is_int(eb.rcl, 20, "the layout's rcl kept");
    /* time: every per-layer cost is a quarter of the way from none to full */
    REL(eb.t_compute, en.t_compute + 20 / L * (ef.t_compute - en.t_compute), 1e-12,
        "compute: none + 20/80 of what full recomputation adds");
    REL(eb.t_tp, en.t_tp + 20 / L * (ef.t_tp - en.t_tp), 1e-12,
        "tensor-parallel time: none + 20/80 of the recomputed forward's collectives");
    ok(eb.hw_tflops * eb.t_step > en.hw_tflops * en.t_step &&
       eb.hw_tflops * eb.t_step < ef.hw_tflops * ef.t_step,
       "executed FLOPs between none's and full's");
    REL(eb.hw_tflops * eb.t_step - en.hw_tflops * en.t_step,
        20 / L * (ef.hw_tflops * ef.t_step - en.hw_tflops * en.t_step), 1e-9,
        "... a quarter of the way");

    /* rcl not given: the fewest layers with which it fits */
    lb.rcl = 0;
    cc_layout_eval(&m, &c, &hb, &lb, &eb);
    ok(!en.feasible && ef.feasible && eb.feasible && eb.rcl > 1 && eb.rcl < 80,
       "none does not fit, full does, block fits with %d layers recomputed", eb.rcl);
    ok(eb.mem_total <= eb.mem_limit, "... within the limit (%.2f of %.2f GB)", eb.mem_total / 1e9,
       eb.mem_limit / 1e9);
    lb.rcl = eb.rcl - 1;
    cc_layout_eval(&m, &c, &hb, &lb, &eb1);
    ok(!eb1.feasible && eb1.mem_only, "one layer fewer does not fit (%.2f GB): %s",
       eb1.mem_total / 1e9, eb1.why);
    ok(eb.t_step < ef.t_step, "and it is faster than full recomputation (%.3f s against %.3f s)",
       eb.t_step, ef.t_step);

    /* interleaved: rcl of each of the v chunks; every chunk in flight saves rcl layers */
    struct cc_layout li = {4, 4, 4, 1, 1, 2, 1, 1, CC_RC_NONE}, lib = li;
    struct cc_eval ein, eib;
    lib.rc = CC_RC_BLOCK, lib.rcl = 3;
    cc_layout_eval(&m, &c, &hb, &li, &ein);
    cc_layout_eval(&m, &c, &hb, &lib, &eib);
    double an4 = cc_model_layer_act_bytes(&m, 1, m.seq_len, 4, 1, CC_RC_NONE);
    double af4 = cc_model_layer_act_bytes(&m, 1, m.seq_len, 4, 1, CC_RC_FULL);
    double w = cc_inflight_layers(0, 4, 2, 2, -1, (double)ein.m); /* chunks in flight */
    REL(ein.mem_act - eib.mem_act, (an4 - af4) * 3 * w, 1e-12,
        "v=2: %g chunks in flight on the first stage, 3 recomputed layers each", w);
    struct cc_layout lif = li;
    struct cc_eval eif;
    lif.rc = CC_RC_FULL;
    cc_layout_eval(&m, &c, &hb, &lif, &eif);
    REL(eib.t_compute, ein.t_compute + 6.0 / 20 * (eif.t_compute - ein.t_compute), 1e-12,
        "v=2: 3 layers of each chunk, 6 of the stage's 20, recomputed");

    /* the split: the first and the last stage have a chunk of one layer fewer; at rcl =
     * chunk - 1 that chunk is recomputed whole, and its working layer is held as with full */
    {
        struct cc_model m2;
        struct cc_cluster c2;
        struct cc_eval es1, es2, esn;
        preset("llama3-405b", &m2); /* 126 layers + 2 slots over pp = 4: 31, 32, 32, 31 */
        cc_cluster_quick(&c2, 2048, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
        struct cc_layout ls = {8, 4, 64, 1, 1, 1, 1, 1, CC_RC_BLOCK, 1, 30}, ln2 = ls;
        cc_layout_eval(&m2, &c2, &hb, &ls, &es1);
        ls.rcl = 31;
        cc_layout_eval(&m2, &c2, &hb, &ls, &es2);
        ln2.rc = CC_RC_NONE, ln2.rcl = 0;
        cc_layout_eval(&m2, &c2, &hb, &ln2, &esn);
        double a8n = cc_model_layer_act_bytes(&m2, 1, m2.seq_len, 8, 1, CC_RC_NONE);
        double a8f = cc_model_layer_act_bytes(&m2, 1, m2.seq_len, 8, 1, CC_RC_FULL);
        /* the first stage: 31 layers, 4 micro-batches in flight; the second: 32, 3 */
        REL(esn.mem_stages[0] - es1.mem_stages[0], (a8n - a8f) * 30 * 4, 1e-12,
            "first stage, rcl=30: 4 micro-batches in flight save 30 layers each");
        REL(es1.mem_stages[0] - es2.mem_stages[0], (a8n - a8f) * 4 - a8n, 1e-12,
            "first stage, rcl=31: one layer more each, and its chunk of 31, recomputed "
            "whole, holds a working layer");
        REL(es1.mem_stages[2] - es2.mem_stages[2], (a8n - a8f) * 3, 1e-12,
            "second stage, rcl=31: one layer more for each of 3, one of its 32 still kept");
    }

    /* what block cannot be */
    struct cc_layout lx = ln;
    lx.rc = CC_RC_BLOCK, lx.rcl = 80;
    cc_layout_eval(&m, &c, &hb, &lx, &eb1);
    ok(!eb1.feasible && strstr(eb1.why, "rcl 80: the largest model chunk here has 80 layers"),
       "rcl = the chunk's layers: that is full (%s)", eb1.why);
    struct cc_layout lone = {2, 80, 1, 1, 1, 1, 1, 1, CC_RC_BLOCK};
    cc_cluster_quick(&c, 160, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_layout_eval(&m, &c, &hb, &lone, &eb1);
    ok(!eb1.feasible && strstr(eb1.why, "a chunk here has 1 (rc=full"),
       "a chunk of one layer: no block (%s)", eb1.why);

    /* parsing and formatting */
    struct cc_layout lp = {0};
    int dpg;
    char buf[160];
    ok(cc_layout_parse("tp=2,rc=block,rcl=7", &lp, &dpg, err, sizeof err) == CC_OK &&
       lp.rc == CC_RC_BLOCK && lp.rcl == 7, "rc=block,rcl=7 parsed");
    ok(strstr(cc_layout_format(&lp, buf, sizeof buf), ",rc=block,rcl=7") != NULL,
       "formatted back: %s", buf);
    lp.rc = CC_RC_NONE;
    ok(cc_layout_parse("rcl=5", &lp, &dpg, err, sizeof err) == CC_OK && lp.rc == CC_RC_BLOCK &&
       lp.rcl == 5, "rcl alone means rc=block");
    ok(cc_layout_parse("rc=block", &lp, &dpg, err, sizeof err) == CC_OK && lp.rcl == 0,
       "rc=block alone: the fewest that fit (rcl 0)");
    ok(cc_layout_parse("rc=full,rcl=5", &lp, &dpg, err, sizeof err) == CC_EUSAGE &&
       strstr(err, "rcl (layers recomputed per model chunk) is for rc=block, not rc=full"),
       "rcl with rc=full refused: %s", err);
    ok(cc_layout_parse("rcl=0", &lp, &dpg, err, sizeof err) == CC_EUSAGE,
       "rcl=0 refused: %s", err);

    /* the search: with --recompute block every layout it ranks recomputes a block, the
     * fewest layers that fit */
    struct cc_search s;
    cc_cluster_quick(&c, 64, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    hb.recompute = CC_RC_BLOCK;
    is_int(cc_layout_search(&m, &c, &hb, &s), CC_OK, "search with --recompute block");
    int all = s.nbest > 0, fewest = 1;
    for (int i = 0; i < s.nbest; i++) {
        struct cc_layout x = s.best[i].layout;
        struct cc_eval ex;
        struct cc_eval again;
        cc_layout_eval(&m, &c, &hb, &x, &again); /* the layout as ranked, its rcl given */
        all = all && x.rc == CC_RC_BLOCK && x.rcl >= 1 && again.feasible &&
              again.t_step == s.best[i].eval.t_step && again.mem_total == s.best[i].eval.mem_total;
        if (x.rcl > 1) {
            x.rcl--;
            cc_layout_eval(&m, &c, &hb, &x, &ex);
            fewest = fewest && !ex.feasible;
        }
    }
    ok(all, "every ranked layout is rc=block, and evaluated with its rcl given it costs the "
       "same (%d layouts)", s.nbest);
    ok(fewest, "and none would fit with one layer fewer recomputed");
    cc_search_free(&s);
    hb.recompute = CC_RC_AUTO;
    is_int(cc_layout_search(&m, &c, &hb, &s), CC_OK, "search with --recompute auto");
    int blocks = 0;
    for (int i = 0; i < s.nbest; i++)
        blocks += s.best[i].layout.rc == CC_RC_BLOCK;
    ok(blocks > 0, "auto ranks block recomputation where it is the fastest that fits (%d of %d "
       "layouts)", blocks, s.nbest);
    cc_search_free(&s);
}

/* Activation offloading (Megatron-Core --cpu-offloading-num-layers): the first `off` layers'
 * activations go to host memory behind the forward pass and come back behind the backward. */
/* Mixture of experts: counts, the experts' GEMMs and all-to-all, memory sharded by ep. */
static void test_moe(void)
{
    struct cc_model m, d;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e;
    char p[512], err[256];
    path(p, sizeof p, "hf-moe.json");
    if (cc_model_load(p, &m, err, sizeof err) != CC_OK) {
        printf("Bail out! %s\n", err);
        exit(1);
    }
    /* Mixtral 8x7B, per layer: attention 2*4096^2 + 2*4096*1024 = 41,943,040; one expert
     * 3*4096*14336 = 176,160,768, eight 1,409,286,144; router 4096*8 = 32,768; 2 RMSNorms
     * 8,192: 1,451,270,144; x32 = 46,440,644,608 + embedding and output 2*32000*4096 =
     * 262,144,000 + final norm 4,096 = 46,702,792,704 (Mistral: 46.7B) */
    is_near(cc_model_layer_expert_params(&m), 1409286144.0, 0, "8 experts' matrices per layer");
    is_near(cc_model_params(&m), 46702792704.0, 0, "Mixtral 8x7B: 46,702,792,704 parameters");
    /* a token meets 2 of 8: 32 x 6 x 176,160,768 = 33,822,867,456 fewer: 12,879,925,248
     * (Mistral: 12.9B active) */
    is_near(cc_model_active_params(&m), 12879925248.0, 0, "... 12,879,925,248 active");
    /* matmul parameters a token meets: 41,943,040 + 2 x 176,160,768 + 32,768 = 394,297,344 */
    is_near(cc_model_layer_matmul_params(&m), 394297344.0, 0, "matmul parameters per token "
            "and layer: attention, two experts, router");
    /* saved activations per token of a layer (no dropout, flash attention, no recompute):
     * 8h outside the tensor-parallel region; inside Q and the projection input 4h, K/V
     * 4*1024, two experts' inner activations 6*2*14336, their permuted inputs 2*2*4096, the
     * router's fp32 probabilities 4*8: 241,696 bytes, x4096 tokens */
    is_near(cc_model_layer_act_bytes(&m, 1, 4096, 1, 0, CC_RC_NONE), 241696.0 * 4096, 0,
            "Mixtral layer activations: 241,696 bytes a token");
    /* fp8: the QKV input, the projection input, the experts' permuted inputs and their second
     * GEMM's inputs as 1-byte copies; the router keeps the 16-bit MLP input: 196,640 */
    d = m;
    d.prec = CC_PREC_FP8;
    is_near(cc_model_layer_act_bytes(&d, 1, 4096, 1, 0, CC_RC_NONE), 196640.0 * 4096, 0,
            "... in fp8: 196,640 bytes a token");
    /* with QK norm (Qwen3's): the queries and keys before their per-head RMSNorm, 2 bytes
     * each, 2*(4096 + 1024), and its fp32 reciprocal RMS per head, 4*(32 + 8): 10,400 more,
     * in fp8 too (no linear layer keeps them); full recomputation keeps only the input */
    d = m;
    d.qk_norm = 1;
    is_near(cc_model_layer_act_bytes(&d, 1, 4096, 1, 0, CC_RC_NONE), 252096.0 * 4096, 0,
            "... with QK norm: 252,096 bytes a token");
    is_near(cc_model_layer_act_bytes(&d, 1, 4096, 2, 1, CC_RC_NONE), 252096.0 * 4096 / 2, 0,
            "... at tp=2 with sequence parallelism: half");
    is_near(cc_model_layer_act_bytes(&d, 1, 4096, 2, 0, CC_RC_NONE) -
                cc_model_layer_act_bytes(&m, 1, 4096, 2, 0, CC_RC_NONE), 5200.0 * 4096, 0,
            "... at tp=2 without it: the 10,400 bytes split too (the heads are)");
    d.prec = CC_PREC_FP8;
    is_near(cc_model_layer_act_bytes(&d, 1, 4096, 1, 0, CC_RC_NONE), 207040.0 * 4096, 0,
            "... in fp8: 207,040 bytes a token");
    is_near(cc_model_layer_act_bytes(&d, 1, 4096, 1, 0, CC_RC_FULL),
            cc_model_layer_act_bytes(&m, 1, 4096, 1, 0, CC_RC_FULL), 0,
            "... fully recomputed: only the layer's input, as without it");
    /* the MoE presets: Qwen3-235B-A22B per layer: attention 2*4096*8192 + 2*4096*512 =
     * 71,303,168; experts 128*3*4096*1536 = 2,415,919,104; router 524,288; norms 2*4096 +
     * 2*128: 2,487,755,008; x94 + 2 x 151936 x 4096 + 4096 = 235,093,634,560, of which
     * 22,190,763,520 active (Qwen: 235B, 22B). Mixtral 8x22B: 2,504,060,928 a layer, x56 +
     * 2 x 32768 x 6144 + 6144 = 140,630,071,296, 39,161,468,928 active (Mistral: 141B, 39B) */
    struct cc_model pr;
    ok(cc_model_preset("qwen3-235b-a22b", &pr) == CC_OK && pr.head_dim == 128 && pr.qk_norm,
       "preset qwen3-235b-a22b");
    is_near(cc_model_params(&pr), 235093634560.0, 0, "... 235,093,634,560 parameters");
    is_near(cc_model_active_params(&pr), 22190763520.0, 0, "... 22,190,763,520 active");
    ok(cc_model_preset("mixtral-8x22b", &pr) == CC_OK, "preset mixtral-8x22b");
    is_near(cc_model_params(&pr), 140630071296.0, 0, "... 140,630,071,296 parameters");
    is_near(cc_model_active_params(&pr), 39161468928.0, 0, "... 39,161,468,928 active");
    /* Megatron-LM's log count leaves the router out: 6 x 512 x 8192 x (32 x 394,264,576 +
     * 4096 x 32000) + 6 x 512 x 8192^2 x 4096 x 32 */
    REL(cc_model_megatron_log_flops(&m, 128),
        6.0 * 512 * 8192 * (32.0 * 394264576 + 4096.0 * 32000) +
            6.0 * 512 * 8192.0 * 8192 * 4096 * 32, 1e-12,
        "Megatron-LM's FLOPs of a Mixtral step: routed and attention matrices, no router");
    /* the experts' GEMMs, no wave losses: 4096 tokens (mb 1, tp 1), 8192 copies over 8 GPUs
     * of one expert each: 8192 rows per expert; 2*8192*(28672*4096 + 4096*14336) + router
     * 2*4096*8*4096, forward once and the two backward products: x3 */
    double want = 3.0 * 2.0 * (8192.0 * 28672 * 4096 + 8192.0 * 4096 * 14336 +
                               4096.0 * 8 * 4096) / 1e15;
    REL(cc_expert_gemm_time(&m, 1, 4096, 1, 8, 1e15, 0, 1), want, 1e-12,
        "expert GEMMs at ep=8: %.4f ms", want * 1e3);
    REL(cc_expert_gemm_time(&m, 1, 4096, 1, 1, 1e15, 0, 1), want, 1e-12,
        "... the same work at ep=1 (8 experts of 1024 rows)");
    /* 256 tokens: 64 rows per expert at ep=1 fill a quarter or half of a tile, 512 at ep=8
     * whole tiles */
    ok(cc_expert_gemm_time(&m, 1, 256, 1, 1, 1e15, 132, 1) >
           1.2 * cc_expert_gemm_time(&m, 1, 256, 1, 8, 1e15, 132, 1),
       "with wave losses, few rows per expert cost more");
    REL(cc_expert_gemm_time(&m, 1, 4096, 2, 8, 1e15, 0, 2), want / 2 * 4 / 3, 1e-12,
        "tp=2 (sequence parallel): half the tokens; recomputed: one more forward");
    /* all-to-all bytes: mb 2 x 4096 tokens / tp 2 x top 2 x 4096 x 2 bytes = 67,108,864 */
    is_near(cc_expert_a2a_bytes(&m, 2, 4096, 2), 67108864.0, 0, "all-to-all bytes per GPU");
    d = m;
    d.experts = 0;
    is_near(cc_expert_gemm_time(&d, 1, 4096, 1, 1, 1e15, 0, 1) + cc_expert_a2a_bytes(&d, 1, 4096, 1),
            0, 0, "a dense model: no expert GEMMs, no all-to-all");

    /* all-to-all across two nodes of 8: each GPU sends 8/16 of its bytes over its NIC (the
     * node's rate / 8); within a node 7/8 of them at the node's bus bandwidth */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    double B = 1e9;
    REL(cc_comm_time(&c, CC_ALLTOALL, 16, 8, 2 * B) - cc_comm_time(&c, CC_ALLTOALL, 16, 8, B),
        B * 0.5 / (c.inter_node_Bps / 8), 1e-9, "all-to-all over 2 nodes: half the bytes at a "
        "NIC's rate");
    REL(cc_comm_time(&c, CC_ALLTOALL, 8, 8, 2 * B) - cc_comm_time(&c, CC_ALLTOALL, 8, 8, B),
        B * 7.0 / 8.0 / c.intra_busbw_Bps, 1e-9, "all-to-all in a node: 7/8 of the bytes at its "
        "bus bandwidth");

    /* a measured all-to-all across 2 nodes of 8 (40 us + bytes x 15/16 at 20 GB/s bus
     * bandwidth): the same group is costed as measured; 4 nodes of 8 send 24/32 of their
     * bytes off the node over the share of the NIC the measurement implies, 20 GB/s x 8/15 */
    {
        char tmp[] = "/tmp/ccbench-test-XXXXXX";
        int fd = mkstemp(tmp);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f) {
            fprintf(f, "{\"type\": \"header\", \"nranks\": 16, \"nnodes\": 2}\n");
            for (double b = 1024; b <= 1 << 30; b *= 4)
                fprintf(f, "{\"type\": \"result\", \"collective\": \"alltoall\", "
                           "\"nranks\": 16, \"bytes\": %.0f, \"time_us\": %.6f}\n",
                        b, 40 + b * 15.0 / 16 / 20e9 * 1e6);
            fclose(f);
        }
        struct cc_cluster ca;
        cc_cluster_quick(&ca, 32, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
        is_int(cc_cluster_load_results(&ca, tmp, err, sizeof err), CC_OK, "all-to-all fit %s",
               err);
        REL(cc_comm_time(&ca, CC_ALLTOALL, 16, 8, B), 40e-6 + B * 15.0 / 16 / 20e9, 1e-4,
            "all-to-all fit: the group measured, as measured");
        REL(cc_comm_time(&ca, CC_ALLTOALL, 32, 8, B), 40e-6 + B * 24.0 / 32 / (20e9 * 8 / 15),
            1e-4, "... 32 ranks on 4 nodes: 3/4 of the bytes over the NIC share measured");
        unlink(tmp);
    }

    /* one layout on 64 H100: tp 1, dp 64, ep 8; 4 nodes' worth of expert-parallel groups */
    cc_cluster_quick(&c, 64, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    m.seq_len = 4096, m.global_batch = 256;
    struct cc_layout l = {1, 1, 64, 1, 1, 1, 0, 1, CC_RC_FULL};
    l.ep = 8;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    ok(e.feasible, "tp=1,dp=64,ep=8,zero=1 fits: %s", e.why);
    is_int(e.edp, 8, "the experts' gradients go over 64/8 = 8 GPUs");
    /* weights: 2 bytes x (46,702,792,704 - 32 x 1,409,286,144 + 32 x 1,409,286,144 / 8) */
    double own = 46702792704.0 - 32.0 * 1409286144.0 * 7.0 / 8.0;
    REL(e.mem_weights, 2.0 * own, 1e-12, "weights: each GPU holds one of the 8 experts "
        "(%.1f GB)", e.mem_weights / 1e9);
    {
        /* tp 2, ep 8: the routed experts split by ep alone; the rest halved but what every
         * tp rank holds whole: per layer the router (4096 x 8) and two RMSNorms (2 x 4096),
         * and the final RMSNorm (4096) */
        struct cc_layout l2 = {2, 1, 32, 1, 1, 1, 1, 1, CC_RC_FULL};
        struct cc_eval e2;
        l2.ep = 8;
        cc_layout_eval(&m, &c, &hb, &l2, &e2);
        double xp = 32.0 * 1409286144.0, whole = 32.0 * (4096 * 8 + 2 * 4096) + 4096;
        REL(e2.mem_weights, 2.0 * ((46702792704.0 - xp - whole) / 2 + whole + xp / 8), 1e-12,
            "tp=2,ep=8 weights: the router and the norms whole on every tp rank");
    }
    /* ZeRO 1: the fp32 state of the non-expert part over 64, the experts' over 8 */
    double rest = 46702792704.0 - 32.0 * 1409286144.0, ex = 32.0 * 1409286144.0 / 8.0;
    REL(e.mem_optim, 12.0 * (rest / 64 + ex / 8), 1e-12, "optimizer state sharded: the rest "
        "over 64, the experts over 8");
    /* 4 all-to-alls per layer (dispatch, combine; forward, backward) + 2 recomputed, of
     * 4096 x 2 x 4096 x 2 bytes, in one node */
    double a2a = cc_comm_time(&c, CC_ALLTOALL, 8, 8, cc_expert_a2a_bytes(&m, 1, 4096, 1));
    REL(e.t_ep, 6.0 * 32 * a2a * e.m, 1e-12, "expert all-to-all: 6 per layer and "
        "micro-batch, %lld micro-batches", e.m);
    {
        /* --ep-overlap 1 (combined 1F1B) at pp = 1 without recomputation: all micro-batches
         * but one pair their forward with another's backward; per pair the forward's two
         * all-to-alls per layer hide behind the backward's compute (2/3 of it), the
         * backward's behind the forward's (1/3) */
        struct cc_layout ln = l;
        struct cc_habits ho = hb;
        struct cc_eval e0, e1;
        ln.rc = CC_RC_NONE;
        ho.ep_overlap = 1;
        cc_layout_eval(&m, &c, &hb, &ln, &e0);
        cc_layout_eval(&m, &c, &ho, &ln, &e1);
        double mm = (double)e0.m, comp = e0.t_compute / mm, a = e0.t_ep / mm;
        double hid = (mm - 1) * (fmin(a / 2, comp * 2 / 3) + fmin(a / 2, comp / 3));
        ok(hid > 0, "--ep-overlap: something to hide (%g s)", hid);
        REL(e1.t_ep_hidden, hid, 1e-9, "--ep-overlap 1: the pairs' all-to-alls hidden");
        REL(e1.t_ep + e1.t_ep_hidden, e0.t_ep, 1e-9, "... and taken from the all-to-all time");
        ok(e1.t_step < e0.t_step, "... so the step is shorter");
        is_near(e0.t_ep_hidden, 0, 0, "--ep-overlap 0: nothing hidden");
        /* Megatron-Core runs it without full recomputation only, and with a pipeline only
         * when it is interleaved */
        struct cc_layout lf = ln, lp = ln;
        lf.rc = CC_RC_FULL;
        lp.pp = 2, lp.dp = 32;
        cc_layout_eval(&m, &c, &ho, &lf, &e1);
        is_near(e1.t_ep_hidden, 0, 0, "--ep-overlap 1 with full recomputation: not applied");
        cc_layout_eval(&m, &c, &ho, &lp, &e1);
        is_near(e1.t_ep_hidden, 0, 0, "--ep-overlap 1 at pp=2, v=1: not applied");
        lp.vpp = 2;
        cc_layout_eval(&m, &c, &hb, &lp, &e0);
        cc_layout_eval(&m, &c, &ho, &lp, &e1);
        /* at pp=2, v=2 the first stage's warm-up is 2(pp-1) + (v-1)pp + 1 = 5 of the m x v
         * chunks (one more with the overlap); the bubble, of chunks without a partner, stays */
        mm = (double)e0.m, comp = e0.t_compute / mm, a = e0.t_ep / mm;
        double paired = (mm * 2 - 5) / (mm * 2);
        hid = mm * paired * (fmin(a / 2, comp * 2 / 3) + fmin(a / 2, comp / 3));
        ok(hid > 0, "pp=2, v=2: something to hide (%g s)", hid);
        REL(e1.t_ep_hidden, hid, 1e-9, "--ep-overlap 1 at pp=2, v=2: the pairs' all-to-alls "
            "hidden, less the warm-up");
        REL(e1.t_bubble, e0.t_bubble, 1e-12, "... the bubble as without the overlap");
        /* the extra warm-up chunk holds one more chunk's activations: 16/2 layers */
        double act = cc_model_layer_act_bytes(&m, 1, 4096, 1, 0, CC_RC_NONE);
        REL(e1.mem_act - e0.mem_act, 8 * act, 1e-9, "... and one more chunk's activations "
            "in flight (%.2f GB)", 8 * act / 1e9);
    }
    /* a router skewed 1.5x: the busiest rank's all-to-all bytes, expert rows and expert
     * activations grow by half; every rank waits for it */
    {
        struct cc_habits hs = hb;
        struct cc_eval es;
        hs.moe_imbalance = 1.5;
        cc_layout_eval(&m, &c, &hs, &l, &es);
        double a2s = cc_comm_time(&c, CC_ALLTOALL, 8, 8, 1.5 * cc_expert_a2a_bytes(&m, 1, 4096, 1));
        REL(es.t_ep, 6.0 * 32 * a2s * es.m, 1e-12, "--moe-imbalance 1.5: all-to-alls of 1.5x "
            "the bytes");
        ok(es.t_compute > e.t_compute * 1.2 && es.mem_act > e.mem_act, "... more expert GEMM "
           "time (%.2f s against %.2f) and activations (%.1f GB against %.1f)", es.t_compute,
           e.t_compute, es.mem_act / 1e9, e.mem_act / 1e9);
        ok(es.skew == 1.5 && e.skew == 0, "... the skew costed is reported");
        /* a capacity factor: the busiest rank at most that share (tokens beyond dropped); the
         * share exactly when every expert's input is padded to it */
        struct cc_habits hc = hs;
        struct cc_eval ec;
        const struct { double cap; int pad; double imb, want; const char *what; } cs[] = {
            {1.25, 0, 1.5, 1.25, "capacity 1.25 under a 1.5x router: capped at 1.25"},
            {2.0, 0, 1.5, 1.5, "capacity 2 above a 1.5x router: the router's 1.5"},
            {0.5, 0, 1.0, 0.5, "capacity 0.5, balanced: half the routed tokens dropped"},
            {1.25, 1, 1.0, 1.25, "padded to capacity 1.25, balanced: 1.25x the rows"},
            {1.25, 1, 3.0, 1.25, "padded to capacity 1.25 under a 3x router: 1.25x"}};
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            hc.moe_capacity = cs[i].cap, hc.moe_pad = cs[i].pad, hc.moe_imbalance = cs[i].imb;
            cc_layout_eval(&m, &c, &hc, &l, &ec);
            double a2c = cc_comm_time(&c, CC_ALLTOALL, 8, 8,
                                      cs[i].want * cc_expert_a2a_bytes(&m, 1, 4096, 1));
            ok(ec.skew == cs[i].want, "%s (costed %.2f)", cs[i].what, ec.skew);
            REL(ec.t_ep, 6.0 * 32 * a2c * ec.m, 1e-12, "... all-to-alls of %.2fx the bytes",
                cs[i].want);
        }
        struct cc_layout l1 = l;
        struct cc_eval e11, e12;
        l1.ep = 1;
        cc_layout_eval(&m, &c, &hb, &l1, &e11);
        cc_layout_eval(&m, &c, &hs, &l1, &e12);
        ok(e11.t_step == e12.t_step && e11.mem_total == e12.mem_total,
           "... and nothing at ep=1, where every GPU holds every expert");
    }
    l.ep = 1;
    struct cc_eval e1;
    cc_layout_eval(&m, &c, &hb, &l, &e1);
    is_near(e1.t_ep, 0, 0, "ep=1: no all-to-all");
    ok(e1.mem_weights > e.mem_weights * 3, "ep=1: every GPU holds all 8 experts (%.0f GB of "
       "weights)", e1.mem_weights / 1e9);

    /* the rules */
    l = (struct cc_layout){1, 1, 64, 1, 1, 1, 0, 1, CC_RC_FULL};
    l.ep = 16;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    ok(!e.feasible && strstr(e.why, "ep 16 does not divide the 8 experts"), "%s", e.why);
    l = (struct cc_layout){2, 1, 32, 1, 1, 1, 0, 1, CC_RC_FULL};
    l.ep = 8;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    ok(!e.feasible && strstr(e.why, "need sequence parallelism"), "%s", e.why);
    l.sp = 1;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    ok(e.feasible, "... and fit with it: %s", e.why);
    /* with expert tensor parallelism 1 only the attention's all-gather and reduce-scatter
     * run per pass (3 passes with full recomputation); outside the layers the embedding's
     * pair, the output layer's pair and the loss's three fp32 all-reduces */
    {
        double S = 4096.0 * 4096 * 2, one = cc_comm_time(&c, CC_ALLGATHER, 2, 2, S) +
                                             cc_comm_time(&c, CC_REDUCESCATTER, 2, 2, S);
        double outside = 2.0 * one + 3.0 * cc_comm_time(&c, CC_ALLREDUCE, 2, 2, 4096.0 * 4);
        REL(e.t_tp, e.m * (32 * 3.0 * one + outside), 1e-12,
            "tp=2 with experts: one pair per layer and pass, none around the experts");
        struct cc_model sh = m;
        struct cc_eval es;
        sh.shared_ffn = 4096;
        cc_layout_eval(&sh, &c, &hb, &l, &es);
        REL(es.t_tp, es.m * (32 * 6.0 * one + outside), 1e-12,
            "... a shared expert, split over tp, adds its pair");
    }
    l = (struct cc_layout){1, 1, 64, 1, 1, 1, 0, 3, CC_RC_FULL};
    l.ep = 8;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    ok(!e.feasible && strstr(e.why, "ZeRO stage 3 with experts"), "%s", e.why);
    preset("llama3-8b", &d);
    l = (struct cc_layout){1, 1, 64, 1, 1, 1, 0, 1, CC_RC_FULL};
    l.ep = 2;
    cc_layout_eval(&d, &c, &hb, &l, &e);
    ok(!e.feasible && strstr(e.why, "has no experts"), "%s", e.why);

    /* the search: every ep that divides the experts and tp*cp*dp, deterministic */
    struct cc_search s1, s2;
    ok(cc_layout_search(&m, &c, &hb, &s1) == CC_OK && cc_layout_search(&m, &c, &hb, &s2) == CC_OK,
       "Mixtral on 64 H100: a layout found");
    ok(s1.nbest == s2.nbest && s1.nbest > 0 &&
           memcmp(&s1.best[0].layout, &s2.best[0].layout, sizeof s1.best[0].layout) == 0,
       "... the same on a second run");
    ok(s1.nbest > 0 && s1.best[0].layout.ep > 1, "... with experts spread (ep %d)",
       s1.nbest ? s1.best[0].layout.ep : 0);
    cc_search_free(&s1);
    cc_search_free(&s2);
}

static void test_offload(void)
{
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval en, eo, eo1;
    char err[256];
    preset("llama3-70b", &m);
    m.prec = CC_PREC_FP8, m.global_batch = 256;
    cc_cluster_quick(&c, 64, 8, cc_gpu_lookup("gb200"), err, sizeof err);
    cc_habits_default(&hb);
    hb.grad_bytes = 2, hb.main_grad_bytes = 4, hb.tp_overlap = 1;
    struct cc_layout ln = {1, 1, 64, 1, 2, 1, 0, 3, CC_RC_NONE}, lo = ln;
    lo.off = 40;
    cc_layout_eval(&m, &c, &hb, &ln, &en);
    cc_layout_eval(&m, &c, &hb, &lo, &eo);
    double a = cc_model_layer_act_bytes(&m, 2, m.seq_len, 1, 0, CC_RC_NONE);
    /* the layer in transit is gone before the logits (12.6 GB, more than a layer's 3.6) are
     * formed and back after they are: it adds nothing to the peak */
    double logits = 2.0 * m.seq_len * 128256 * 6;
    ok(logits > a, "logits %.1f GB, a layer %.1f GB", logits / 1e9, a / 1e9);
    REL(en.mem_act - eo.mem_act, a * 40, 1e-12,
        "off=40: 40 layers' activations leave the GPU; the one in transit never meets the "
        "logits");
    REL(eo.off_bytes, a * 40, 1e-12, "... %.1f GB each way per micro-batch", eo.off_bytes / 1e9);
    ok(!en.feasible && en.mem_only, "Llama-3 70B fp8, FSDP on 64 GB200, micro-batch 2: no fit "
       "without offloading (%.1f GB)", en.mem_total / 1e9);
    is_near(eo.t_offload, 0, 0, "over NVLink-C2C (225 GB/s) the transfers hide behind compute");
    REL(eo.t_compute, en.t_compute, 1e-12, "... and the compute is that of no offloading");
    /* the fewest layers that fit */
    lo.off = -1;
    cc_layout_eval(&m, &c, &hb, &lo, &eo);
    lo.off = eo.off - 1;
    cc_layout_eval(&m, &c, &hb, &lo, &eo1);
    ok(eo.feasible && eo.off >= 40 && eo.off <= 45 && !eo1.feasible,
       "off=-1: the fewest that fit, %d (NVIDIA's recipe offloads 40); %d do not fit", eo.off,
       eo.off - 1);
    /* a slow link: what the transfers take beyond a forward (a third of the compute) and a
     * backward pass (two thirds) shows */
    struct cc_cluster slow = c;
    slow.host_Bps = 20e9;
    lo.off = 40;
    cc_layout_eval(&m, &slow, &hb, &lo, &eo);
    cc_layout_eval(&m, &slow, &hb, &ln, &en);
    double per_mb = en.t_compute / en.m, x = a * 40 / 20e9;
    REL(eo.t_offload, en.m * (fmax(0, x - per_mb / 3) + fmax(0, x - per_mb * 2 / 3)), 1e-9,
        "20 GB/s: %.2f s a micro-batch each way, %.3f s of the step shows", x, eo.t_offload);
    REL(eo.t_compute - en.t_compute, eo.t_offload, 1e-9, "... counted in the compute time");
    /* host memory */
    struct cc_cluster small = c;
    small.host_mem_bytes = 100e9;
    lo.off = 45; /* fits the GPU */
    cc_layout_eval(&m, &small, &hb, &lo, &eo);
    ok(!eo.feasible && eo.mem_only &&
       strstr(eo.why, "of activations per GPU to host memory, more than 90.0 GB (100 GB per GPU"),
       "100 GB of host memory per GPU: 45 layers' %.1f GB do not fit there (%s)",
       eo.off_bytes / 1e9, eo.why);
    /* where Megatron-Core cannot */
    struct cc_layout lp = {8, 4, 2, 1, 1, 1, 1, 1, CC_RC_NONE, 0, 0, 10};
    cc_layout_eval(&m, &c, &hb, &lp, &eo);
    ok(!eo.feasible && strstr(eo.why, "off=10: activation offloading runs without a pipeline"),
       "not with a pipeline: %s", eo.why);
    struct cc_layout lr = ln;
    lr.rc = CC_RC_FULL, lr.off = 10;
    cc_layout_eval(&m, &c, &hb, &lr, &eo);
    ok(!eo.feasible && strstr(eo.why, "and without recomputation"), "not with recomputation: %s",
       eo.why);
    lr.rc = CC_RC_NONE, lr.off = 80;
    cc_layout_eval(&m, &c, &hb, &lr, &eo);
    ok(!eo.feasible && strstr(eo.why, "off=80: offloading needs fewer layers than the model's 80"),
       "fewer than the layers: %s", eo.why);
    /* parse and format */
    struct cc_layout lq = {0};
    int dpg;
    char buf[160];
    ok(cc_layout_parse("tp=1,off=40", &lq, &dpg, err, sizeof err) == CC_OK && lq.off == 40 &&
       strstr(cc_layout_format(&lq, buf, sizeof buf), ",rc=none,off=40") != NULL,
       "off=40 parsed and formatted: %s", buf);
    /* the search: on GB200 (NVLink-C2C) --offload auto finds NVIDIA's recipe first: FSDP over
     * all 64, tp=1, micro-batch 2, some 40 layers offloaded; over H100's PCIe auto does not
     * offload, --offload on does */
    struct cc_search sr;
    hb.zero_min = 0;
    is_int(cc_layout_search(&m, &c, &hb, &sr), CC_OK, "search 70B fp8 on 64 GB200");
    const struct cc_layout *f = &sr.best[0].layout;
    ok(f->tp == 1 && f->pp == 1 && f->dp == 64 && f->mb == 2 && f->zero == 3 && f->off >= 40 &&
       f->off <= 45, "... first: tp=%d,pp=%d,dp=%d,mb=%d,zero=%d,off=%d", f->tp, f->pp, f->dp,
       f->mb, f->zero, f->off);
    cc_search_free(&sr);
    struct cc_cluster h = c;
    cc_cluster_quick(&h, 64, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    int offs[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        hb.offload = k ? 1 : 2;
        if (cc_layout_search(&m, &h, &hb, &sr) == CC_OK)
            for (int i = 0; i < sr.nbest; i++)
                offs[k] += sr.best[i].layout.off > 0;
        cc_search_free(&sr);
    }
    ok(offs[0] == 0 && offs[1] > 0, "H100 (PCIe to the host): auto offloads in none of the "
       "layouts ranked, on in %d", offs[1]);
}

static void test_uneven(void)
{
    struct cc_model m;
    struct cc_cluster c, c24, c12;
    struct cc_habits hb;
    struct cc_eval e, e24, e12;
    struct cc_layout l;
    char err[256], buf[128];
    int dp_given;

    /* parse and format */
    memset(&l, 0, sizeof l);
    ok(cc_layout_parse("tp=8,pp=16,split=1", &l, &dp_given, err, sizeof err) == CC_OK &&
           l.split == 1 && l.pp == 16, "parse split=1");
    l.dp = 128, l.cp = 1, l.mb = 1, l.vpp = 8, l.rc = CC_RC_FULL;
    is_str(cc_layout_format(&l, buf, sizeof buf),
           "tp=8,pp=16,dp=128,cp=1,mb=1,v=8,sp=0,zero=0,rc=full,split=1", "format appends split=1");

    /* structure: Llama-3 405B has 126 layers; 16 stages need the embedding and loss slots */
    preset("llama3-405b", &m);
    cc_cluster_quick(&c, 16384, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_layout u = {8, 16, 128, 1, 1, 1, 1, 1, CC_RC_FULL, 0};
    cc_layout_eval(&m, &c, &hb, &u, &e);
    ok(!e.feasible && strstr(e.why, "does not divide the 126 layers"), "pp=16 uniform: %s", e.why);
    u.split = 1, u.vpp = 8;
    cc_layout_eval(&m, &c, &hb, &u, &e);
    ok(e.feasible, "pp=16 with embedding and loss slots, v=8: 128 slots = 16 x 8 (%s)", e.why);
    ok(e.layers_first == 7 && e.layers_mid == 8 && e.layers_last == 7,
       "layers per stage 7, 8, ..., 8, 7 (got %g %g %g)", e.layers_first, e.layers_mid,
       e.layers_last);
    u.vpp = 3;
    cc_layout_eval(&m, &c, &hb, &u, &e);
    ok(!e.feasible && strstr(e.why, "v 3 does not divide the 8 slots per stage"), "v=3: %s", e.why);
    u.pp = 1, u.dp = 2048, u.vpp = 1;
    cc_layout_eval(&m, &c, &hb, &u, &e);
    ok(!e.feasible && strstr(e.why, "needs pp >= 2"), "split with pp=1: %s", e.why);

    /* memory by hand: megatron-1.7b (24 layers, h=2304, V=51200, s=2048) on 13 single-GPU
     * nodes, pp=13 over 26 slots: first 1 layer + embedding, middle 2, last 1 + output layer.
     * Params: Pl = 12h^2+13h = 63730944, embedding (V+s)h = 122683392, output Vh = 117964800,
     * final norm 2h = 4608; 20 bytes each (paper habits). Activations (full recomputation,
     * mb=1): 2sbh = 9437184 per layer in flight, working layer sbh(34+5as/h) = 663748608,
     * logits 6sV = 629145600. In flight: first 13 micro-batches x 1 layer, second 12 x 2,
     * last 1 x 1. Totals: first 3728286720 + 786432000, second 2549237760 + 890241024, last
     * 3634007040 + 1302331392 = 4936338432: the last stage is the fullest. */
    preset("megatron-1.7b", &m);
    cc_cluster_quick(&c, 13, 1, cc_gpu_lookup("a100-80g"), err, sizeof err);
    cc_megatron_habits(&hb, 0.7);
    hb.gemm_waves = 0, hb.accum_fusion = 1;
    struct cc_layout s13 = {1, 13, 1, 1, 1, 1, 0, 0, CC_RC_FULL, 1};
    cc_layout_eval(&m, &c, &hb, &s13, &e);
    ok(e.feasible, "1.7B, pp=13 with embedding and loss slots (%s)", e.why);
    is_int(e.mem_stage, 1, "fullest stage: the last (output layer and logits)");
    REL(e.mem_total, 4936338432.0, 1e-12, "last stage 4.94 GB");
    /* time: the last stage (1 layer + logits) sets the pace, as in a uniform 24-stage pipeline
     * whose stages hold one layer each; a 12-stage pipeline's last stage holds 2 + logits */
    cc_cluster_quick(&c24, 24, 1, cc_gpu_lookup("a100-80g"), err, sizeof err);
    cc_cluster_quick(&c12, 12, 1, cc_gpu_lookup("a100-80g"), err, sizeof err);
    struct cc_layout u24 = {1, 24, 1, 1, 1, 1, 0, 0, CC_RC_FULL, 0};
    struct cc_layout u12 = {1, 12, 1, 1, 1, 1, 0, 0, CC_RC_FULL, 0};
    cc_layout_eval(&m, &c24, &hb, &u24, &e24);
    cc_layout_eval(&m, &c12, &hb, &u12, &e12);
    /* from the uniform pipelines: t_layer = (e12 - e24)/m, t_logit = e24/m - t_layer (their
     * last stages hold 2 and 1 layers + logits); the split's pace is the slower of its last
     * stage (1 layer + logits) and a middle one (2 layers) */
    double tl = (e12.t_compute - e24.t_compute) / 512, tg = e24.t_compute / 512 - tl;
    REL(e.t_compute, 512 * fmax(tl + tg, 2 * tl), 1e-9,
        "split pace: max(last = 1 layer + logits, middle = 2 layers)");

    /* interleaved in-flight chunks per stage r: 2(pp-r-1) + (v-1)pp + 1 (Megatron-LM's
     * warm-up). 1.7B, pp=4 uniform (6 layers, 3 per chunk), v=2: first 11 chunks = 33 layers,
     * last 5 chunks = 15 layers. First: (6Pl + embedding) x 20 = 10101381120 + 33 x 9437184 +
     * 663748608 = 11076556800; last: (6Pl + Vh + 2h) x 20 = 10007101440 + 15 x 9437184 +
     * 663748608 + 629145600 = 11441553408, the fullest */
    {
        struct cc_cluster c4;
        struct cc_eval e4;
        cc_cluster_quick(&c4, 4, 1, cc_gpu_lookup("a100-80g"), err, sizeof err);
        struct cc_layout i4 = {1, 4, 1, 1, 1, 2, 0, 0, CC_RC_FULL, 0};
        cc_layout_eval(&m, &c4, &hb, &i4, &e4);
        ok(e4.feasible && e4.mem_stage == 1, "interleaved: the last stage is the fullest (%s)",
           cc_stage_name(e4.mem_stage));
        REL(e4.mem_total, 11441553408.0, 1e-12,
            "interleaved last stage holds (v-1)pp + 1 = 5 chunks in flight");
    }

    /* in-flight layers by hand: 16 stages of 8 slots, v=8 (one slot per chunk), 32
     * micro-batches. First stage: 2*15 + 7*16 + 1 = 143 chunks, 31 of them chunk 0 (the
     * embedding alone) -> 112 layers; last: 7*16 + 1 = 113 chunks, one of them chunk 7 (the
     * loss alone) -> 112; second: 2*14 + 112 + 1 = 141. With 16 micro-batches (= pp) the whole
     * step is warm-up: 128 chunks, 16 of them chunk 0 -> 112 */
    is_near(cc_inflight_layers(0, 16, 8, 8, 0, 32), 112, 1e-12, "first stage, split, v=8: 112 layers");
    is_near(cc_inflight_layers(15, 16, 8, 8, 7, 32), 112, 1e-12, "last stage, split, v=8: 112 layers");
    is_near(cc_inflight_layers(1, 16, 8, 8, -1, 32), 141, 1e-12, "second stage, v=8: 141 layers");
    is_near(cc_inflight_layers(0, 16, 8, 8, 0, 16), 112, 1e-12, "m = pp: all 128 chunks, 112 layers");
    /* Megatron-LM's warm-up count bounds the last stage even when m = pp: (v-1)*pp + 1 = 113
     * of its 128 chunk steps */
    is_near(cc_inflight_layers(15, 16, 8, 8, -1, 16), 113, 1e-12, "m = pp, last stage: 113 chunks");
    is_near(cc_inflight_layers(0, 4, 1, 6, -1, 512), 24, 1e-12, "1F1B first stage: pp micro-batches");
    is_near(cc_inflight_layers(3, 4, 1, 6, -1, 512), 6, 1e-12, "1F1B last stage: one");
    is_near(cc_inflight_layers(0, 13, 1, 2, 0, 512), 13, 1e-12, "1F1B split: 13 x (2 - 1)");
    is_near(cc_inflight_layers(0, 4, 1, 6, -1, 2), 12, 1e-12, "never more than the step's 2");

    /* the search finds 16-stage pipelines for 405B only with the uneven split */
    preset("llama3-405b", &m);
    cc_cluster_quick(&c, 16384, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_search a, b;
    cc_layout_search(&m, &c, &hb, &a);
    hb.uneven_pp = 0;
    cc_layout_search(&m, &c, &hb, &b);
    int found16 = 0, slots_ok = 1, none_split = 1;
    for (int i = 0; i < a.nbest; i++) {
        const struct cc_layout *x = &a.best[i].layout;
        found16 |= x->pp == 16 && x->split;
        if ((m.layers + 2 * x->split) % x->pp || (x->split && x->pp < 2))
            slots_ok = 0;
    }
    for (int i = 0; i < b.nbest; i++)
        none_split &= !b.best[i].layout.split && m.layers % b.best[i].layout.pp == 0;
    ok(found16, "405B on 16,384 H100: pp=16 with embedding and loss slots is ranked");
    ok(slots_ok, "every ranked pipeline divides the layers or layers + 2");
    ok(none_split && b.nbest < a.nbest, "--uneven-pp 0: only divisors of 126 (%d vs %d layouts)",
       b.nbest, a.nbest);
    cc_search_free(&a);
    cc_search_free(&b);
}

static void test_megatron(void)
{
    struct cc_habits hb;
    struct cc_megatron_check k[32];
    /* Rows where ccbench's time model ranks a lower tensor-parallel degree with a short
     * (interleaved) pipeline ahead of the published t=8/t=4 choice; see
     * results/layout-megatron.md. Listed so the gap stays visible (XFAIL), not hidden. */
    static const char *const known_rank_gap[] = {"megatron-18.4b", "megatron-39.1b", NULL};
    cc_megatron_habits(&hb, CC_LAYOUT_EFFICIENCY);
    cc_megatron_validate(&hb, k);
    for (int i = 0; i < cc_megatron_nrows; i++) {
        char name[128];
        ok(k[i].rank >= 0 && fabs(k[i].err_pct) <= 15.0,
           "%s: predicted %.1f TFLOP/s/GPU vs published %.0f (%+.1f%%, within 15%%)",
           k[i].row->preset, k[i].pred_tflops, k[i].row->tflops, k[i].err_pct);
        ok(k[i].as_run.feasible && fabs(k[i].run_err_pct) <= 15.0,
           "%s as run (mb=%d, v=%d): predicted %.1f TFLOP/s/GPU (%+.1f%%, within 15%%)",
           k[i].row->preset, k[i].row->mb, k[i].row->vpp, k[i].run_tflops, k[i].run_err_pct);
        snprintf(name, sizeof name, "%s: published t=%d,p=%d in the top 3 (rank %d)",
                 k[i].row->preset, k[i].row->tp, k[i].row->pp, k[i].rank + 1);
        int known = 0;
        for (int j = 0; known_rank_gap[j]; j++)
            known |= strcmp(known_rank_gap[j], k[i].row->preset) == 0;
        if (known)
            todo_ok(k[i].rank >= 0 && k[i].rank < 3, name,
                    "time model prefers less tensor parallelism here");
        else
            ok(k[i].rank >= 0 && k[i].rank < 3, "%s", name);
    }
}

/* Meta's Llama-3 405B pre-training layouts (SC'24 slide; results/layout-megatron.md): in the
 * search's top 3 at the default habits, on 8,192 and 16,384 H100 at 8,192 tokens (context
 * parallelism off, the default), and at 131,072 tokens with --cp-max 16. None of them took part
 * in any calibration. */
static void test_llama3_meta(void)
{
    static const struct { int gpus, seq, batch, dp, cp; } rows[] = {
        {8192, 8192, 2048, 64, 1}, {16384, 8192, 2048, 128, 1}, {16384, 131072, 128, 8, 16}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct cc_model m;
        struct cc_cluster c;
        struct cc_habits hb;
        struct cc_search s;
        char err[256];
        preset("llama3-405b", &m);
        m.seq_len = rows[i].seq, m.global_batch = rows[i].batch, m.batch_tokens = 0;
        cc_cluster_quick(&c, rows[i].gpus, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
        cc_habits_default(&hb);
        hb.cp_max = rows[i].cp;
        int rank = -1;
        if (cc_layout_search(&m, &c, &hb, &s) == CC_OK)
            rank = cc_search_rank(&s, 8, 16, rows[i].dp, rows[i].cp);
        ok(rank >= 0 && rank < 3, "Meta's llama3-405b tp=8,pp=16,dp=%d,cp=%d on %d GPUs: "
           "ranked %d (top 3)", rows[i].dp, rows[i].cp, rows[i].gpus, rank + 1);
        cc_search_free(&s);
    }
}

/* NVIDIA's published NeMo 24.07 fp8 pre-training runs on DGX-H100 (NeMo's performance
 * summary; layouts and settings as its launcher configs give them: distributed optimizer,
 * sequence parallelism, tensor-parallel overlap, overlapped pipeline sends, no recomputation,
 * 16-bit gradient reduction). Tokens/s per GPU, the mean of the two published revisions. The
 * fp8 efficiency was calibrated on these rows (results/layout-megatron.md), so this guards
 * the calibration and the model terms behind it against drifting. */
static void test_nemo_fp8(void)
{
    static const struct {
        const char *preset;
        int gpus, batch, seq;
        struct cc_layout l;
        double tok_s_gpu;
    } rows[] = {
        {"gpt3-175b", 128, 256, 2048, {4, 8, 4, 1, 1, 6, 1, 1, CC_RC_NONE}, 721},
        {"llama2-7b", 8, 128, 4096, {1, 1, 8, 1, 1, 1, 0, 1, CC_RC_NONE}, 16890},
        {"llama2-13b", 16, 128, 4096, {1, 4, 4, 1, 1, 10, 0, 1, CC_RC_NONE}, 8680},
        {"llama2-70b", 64, 128, 4096, {4, 4, 4, 1, 1, 20, 1, 1, CC_RC_NONE}, 1717},
        {"llama3-8b", 8, 128, 8192, {1, 1, 4, 2, 1, 1, 0, 1, CC_RC_NONE}, 12150},
        {"llama3-70b", 64, 128, 8192, {4, 4, 2, 2, 1, 5, 1, 1, CC_RC_NONE}, 1528},
    };
    struct cc_habits hb;
    cc_habits_default(&hb);
    hb.tp_overlap = 1;
    hb.grad_bytes = 2, hb.main_grad_bytes = 4; /* --grad-reduce bf16: the fp32 copy too */
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct cc_model m;
        struct cc_cluster c;
        struct cc_eval e;
        char err[256];
        preset(rows[i].preset, &m);
        m.prec = CC_PREC_FP8, m.global_batch = rows[i].batch, m.seq_len = rows[i].seq;
        cc_cluster_quick(&c, rows[i].gpus, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
        cc_layout_eval(&m, &c, &hb, &rows[i].l, &e);
        double got = e.tokens_per_s / rows[i].gpus;
        double pct = (got - rows[i].tok_s_gpu) / rows[i].tok_s_gpu * 100;
        ok(e.feasible && fabs(pct) <= 15.0, "NeMo fp8 %s on %d H100: %.0f tokens/s/GPU against "
           "%.0f (%+.1f%%, within 15%%) %s", rows[i].preset, rows[i].gpus, got,
           rows[i].tok_s_gpu, pct, e.why);
        /* and the search, free in every other respect (micro-batch, interleaving up to 20,
         * sequence parallelism, recomputation), ranks NVIDIA's layout in its top 3; the
         * calibration fixed the layouts, so this part it did not see */
        struct cc_habits hs = hb;
        struct cc_search sr;
        hs.zero_min = hs.zero_max = 1, hs.cp_max = 2, hs.vpp_max = 20;
        int rank = -1;
        if (cc_layout_search(&m, &c, &hs, &sr) == CC_OK)
            rank = cc_search_rank(&sr, rows[i].l.tp, rows[i].l.pp, rows[i].l.dp, rows[i].l.cp);
        char name[160];
        snprintf(name, sizeof name, "NeMo fp8 %s: tp=%d,pp=%d,dp=%d,cp=%d ranked %d by the search",
                 rows[i].preset, rows[i].l.tp, rows[i].l.pp, rows[i].l.dp, rows[i].l.cp,
                 rank + 1);
        if (strcmp(rows[i].preset, "llama3-70b") == 0) /* 5th, 3.1% behind the first */
            todo_ok(rank >= 0 && rank < 3, name, "five layouts within 3.1%, NeMo's the fifth");
        else
            ok(rank >= 0 && rank < 3, "%s", name);
        cc_search_free(&sr);
    }
}

/* Held-out Blackwell runs (results/layout-megatron.md; Megatron-Bridge 25.09-26.02.01, fp8
 * with current scaling): GPUs the constants never saw, from the table's data-sheet rows, each
 * within 15% of the mean of its published range (all five are within 3%); the search, with
 * the run's ZeRO stage, ranks its layout in the top 3. */
static void test_blackwell_heldout(void)
{
    static const struct {
        const char *preset, *gpu;
        int gpus, batch;
        struct cc_layout l;
        double tok_s_gpu;
    } rows[] = {
        {"llama3-8b", "b200", 8, 128, {1, 1, 8, 1, 2, 1, 0, 1, CC_RC_NONE}, 30300},
        {"llama3-405b", "b200", 128, 64, {4, 8, 2, 2, 1, 8, 1, 1, CC_RC_NONE, 1}, 662},
        {"llama3-8b", "gb200", 8, 128, {1, 1, 8, 1, 2, 1, 0, 1, CC_RC_NONE}, 31433},
        {"llama3-405b", "gb200", 256, 1536, {4, 16, 4, 1, 1, 4, 1, 1, CC_RC_NONE, 1}, 808},
        /* Megatron-FSDP, 40 of 80 layers' activations offloaded to the Grace's memory */
        {"llama3-70b", "gb200", 64, 256, {1, 1, 64, 1, 2, 1, 0, 3, CC_RC_NONE, 0, 0, 40}, 4236},
    };
    struct cc_habits hb;
    cc_habits_default(&hb);
    hb.tp_overlap = 1;
    hb.grad_bytes = 2, hb.main_grad_bytes = 4; /* --grad-reduce bf16 */
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct cc_model m;
        struct cc_cluster c;
        struct cc_eval e;
        char err[256];
        preset(rows[i].preset, &m);
        m.prec = CC_PREC_FP8, m.global_batch = rows[i].batch, m.seq_len = 8192;
        cc_cluster_quick(&c, rows[i].gpus, 8, cc_gpu_lookup(rows[i].gpu), err, sizeof err);
        cc_layout_eval(&m, &c, &hb, &rows[i].l, &e);
        double got = e.tokens_per_s / rows[i].gpus;
        double pct = (got - rows[i].tok_s_gpu) / rows[i].tok_s_gpu * 100;
        ok(e.t_step > 0 && fabs(pct) <= 15.0, "Megatron-Bridge fp8 %s on %d %s: %.0f tokens/s/GPU "
           "against %.0f (%+.1f%%, within 15%%)", rows[i].preset, rows[i].gpus, rows[i].gpu, got,
           rows[i].tok_s_gpu, pct);
        /* the search with NVIDIA's habits, free in micro-batch, interleaving (up to 20),
         * context parallelism (up to 2), sequence parallelism and recomputation */
        struct cc_habits hs = hb;
        struct cc_search sr;
        hs.zero_min = hs.zero_max = rows[i].l.zero, hs.cp_max = 2, hs.vpp_max = 20;
        int rank = -1;
        if (cc_layout_search(&m, &c, &hs, &sr) == CC_OK)
            rank = cc_search_rank(&sr, rows[i].l.tp, rows[i].l.pp, rows[i].l.dp, rows[i].l.cp);
        char name[160];
        snprintf(name, sizeof name, "Megatron-Bridge %s on %s: tp=%d,pp=%d,dp=%d,cp=%d ranked %d "
                 "by the search", rows[i].preset, rows[i].gpu, rows[i].l.tp, rows[i].l.pp,
                 rows[i].l.dp, rows[i].l.cp, rank + 1);
        if (i == 1) /* 405B on 128 B200: 4th, 3.6% behind the first */
            todo_ok(rank >= 0 && rank < 3, name, "fourth, 3.6% behind the first");
        else
            ok(rank >= 0 && rank < 3, "%s", name);
        cc_search_free(&sr);
    }
    ok(cc_gpu_lookup("NVIDIA GB200") == cc_gpu_lookup("gb200") &&
       cc_gpu_lookup("NVIDIA B200") == cc_gpu_lookup("b200") &&
       cc_gpu_lookup("gb200") != cc_gpu_lookup("b200"), "GB200 and B200 are told apart");
    const struct cc_gpu_spec *g3 = cc_gpu_lookup("NVIDIA GB300"), *b3 = cc_gpu_lookup("NVIDIA B300 SXM6 AC");
    ok(g3 && b3 && strcmp(g3->id, "gb300") == 0 && strcmp(b3->id, "b300") == 0 &&
           g3->tflops[CC_PREC_FP8] == 5000 && b3->tflops[CC_PREC_BF16] == 2250 &&
           g3->mem_gib == 288 && g3->inter_GBps == 2 * cc_gpu_lookup("gb200")->inter_GBps,
       "GB300 and B300 (Blackwell Ultra): told apart, data-sheet peaks, 288 GB, 800 Gb/s NICs");
}

/* ZeRO 3 holds the layers it computes in full: a 49152-wide GPT layer is 12h^2 + 13h =
 * 28,991,668,224 parameters, 58 GB in bf16, so no sharding makes 80 GB GPUs hold it. */
static void test_zero3(void)
{
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e;
    char err[256];
    preset("gpt3-175b", &m);
    m.hidden = 49152, m.heads = m.kv_heads = 384, m.ffn = 4 * 49152, m.layers = 32;
    m.global_batch = 4096;
    cc_cluster_quick(&c, 4096, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb); /* gradients reduced in fp32 */
    struct cc_layout l = {1, 1, 4096, 1, 1, 1, 0, 3, CC_RC_FULL};
    cc_layout_eval(&m, &c, &hb, &l, &e);
    double P = cc_model_params(&m), Pl = 28991668224.0;
    is_near(cc_model_layer_params(&m), Pl, 0, "one layer: 12h^2 + 13h parameters");
    /* shards 2P/4096 and 4P/4096, plus two gathered layers in 16-bit (4 Pl bytes) and one
     * layer's fp32 gradients (4 Pl bytes) */
    REL(e.mem_weights, 2 * P / 4096 + 4 * Pl, 1e-12, "weights: shard + 2 gathered layers");
    REL(e.mem_grads, 4 * P / 4096 + 4 * Pl, 1e-12, "gradients: shard + 1 unsharded layer");
    ok(!e.feasible && strstr(e.why, "GB per GPU") != NULL,
       "a layer of 58 GB does not fit at ZeRO 3: %s", e.why);
}

/* Each communication part of a step against hand-computed values. A100 quick clusters: within
 * a node 10 us + bus bytes / 230 GB/s, across nodes 30 us + bus bytes / 185 GB/s per node.
 * megatron-7.5b: l = 36, h = 4096, a = 32, s = 2048, batch 512. */
static void test_comm_parts(void)
{
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e;
    char err[256];
    preset("megatron-7.5b", &m);
    cc_cluster_quick(&c, 8, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    cc_habits_default(&hb);
    /* tp=8 in one node, mb=1: per layer, with selective recomputation, 2 forward and 2
     * backward all-reduces of s*b*h 16-bit = 16 MiB, 2*7/8 of it on the bus; 512
     * micro-batches x 36 layers; outside the layers one more for the embedding's lookups and
     * one for the output layer's input gradient, and the cross entropy's three all-reduces of
     * 2048 fp32 values (8 KiB) */
    struct cc_layout l = {8, 1, 1, 1, 1, 1, 0, 1, CC_RC_SELECTIVE};
    double ar16m = 10e-6 + 16777216 * 1.75 / 230e9, ce = 3 * (10e-6 + 8192 * 1.75 / 230e9);
    cc_layout_eval(&m, &c, &hb, &l, &e);
    REL(e.t_tp, 512.0 * ((36 * 4 + 2) * ar16m + ce), 1e-12,
        "tp=8: 4 all-reduces of 16 MiB per layer, 2 outside, the cross entropy's 3: 10.3 s");
    /* sequence parallel: an all-gather and a reduce-scatter of the same 16 MiB, 7/8 each,
     * each a ring over 8 GPUs: 8.4 us + 7 x 3.4 us of latency (the output layer's too); GPT's
     * learned positions keep the embedding's all-reduce, its gradient all-gathered after the
     * sequence is split (Megatron-Core reduce-scatters only without them); the cross
     * entropy's all-reduces stay */
    l.sp = 1;
    double rs16m = 32.2e-6 + 16777216 * 0.875 / 230e9;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    REL(e.t_tp, 512.0 * ((36 * 4 + 1) * 2 * rs16m + ar16m + rs16m + ce), 1e-12,
        "tp=8, sp: an all-gather and a reduce-scatter in place of each all-reduce");
    {
        /* without learned positions (a swiglu model) the embedding reduce-scatters */
        struct cc_model ms = m;
        struct cc_eval es;
        ms.mlp = CC_MLP_SWIGLU;
        cc_layout_eval(&ms, &c, &hb, &l, &es);
        REL(es.t_tp, 512.0 * ((36 * 4 + 2) * 2 * rs16m + ce), 1e-12,
            "tp=8, sp, no learned positions: the embedding's reduce-scatter and all-gather");
    }
    /* full recomputation repeats the 2 forward ones of each layer, not the embedding's */
    l.sp = 0, l.rc = CC_RC_FULL;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    REL(e.t_tp, 512.0 * ((36 * 6 + 2) * ar16m + ce), 1e-12,
        "tp=8, full recomputation: 6 all-reduces per layer, 2 outside");
    {
        /* pp=2 (tp=8, 16 GPUs): the first stage pays the embedding's all-reduce, the last the
         * output layer's and the cross entropy's, and the slower of the two sets the pace;
         * both hold 18 layers, so the last */
        struct cc_cluster c16;
        struct cc_layout lp = {8, 2, 1, 1, 1, 1, 0, 1, CC_RC_FULL};
        struct cc_eval ep;
        cc_cluster_quick(&c16, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
        cc_layout_eval(&m, &c16, &hb, &lp, &ep);
        REL(ep.t_tp, 512.0 * ((18 * 6 + 1) * ar16m + ce), 1e-12,
            "tp=8, pp=2: the last stage's 18 x 6 + 1 all-reduces and the cross entropy's");
    }

    /* cp=2 (tp=1, dp=4, 128 micro-batches): each rank holds 1024 tokens; per layer an
     * all-gather of K and V forward and again backward (1024 x 2 x 4096 x 2 bytes = 16 MiB
     * per rank, 32 MiB gathered, 1/2 on the bus) and one reduce-scatter of their gradients
     * of the same size, rings of 2: 8.4 us + 3.4 us */
    struct cc_layout lc = {1, 1, 4, 2, 1, 1, 0, 1, CC_RC_SELECTIVE};
    cc_layout_eval(&m, &c, &hb, &lc, &e);
    REL(e.t_cp, 128.0 * 36 * 3 * (11.8e-6 + 33554432 * 0.5 / 230e9), 1e-12,
        "cp=2: K/V all-gathered forward and backward, reduce-scattered once, per layer: 1.02 s");
    /* full recomputation gathers them once more */
    lc.rc = CC_RC_FULL;
    cc_layout_eval(&m, &c, &hb, &lc, &e);
    REL(e.t_cp, 128.0 * 36 * 4 * (11.8e-6 + 33554432 * 0.5 / 230e9), 1e-12,
        "cp=2, full recomputation: three all-gathers and a reduce-scatter per layer");

    /* gradient reduction across 2 nodes (tp=1, dp=16, pp=1), 16-bit gradients, not
     * overlapped: 2P bytes in ceil(2P / 25 MiB) buckets; ZeRO 0 all-reduces each bucket
     * (2*15/16 on the bus, 30 us), ZeRO 1 and 2 reduce-scatter it and all-gather as many
     * 16-bit weights (15/16 each; rings of 16 over 2 nodes: 8.4 us + 14 x 3.4 us + 1 x 14 us
     * = 70 us each): the same bytes, more latency; ZeRO 2 keeps only a shard of the gradients,
     * so each of the other B/16 - 1 micro-batches reduce-scatters its own as well */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("a100-80g"), err, sizeof err);
    hb.grad_bytes = 2, hb.dp_overlap = 0;
    double P = cc_model_params(&m), nb = ceil(2 * P / 26214400.0);
    struct cc_layout lz = {1, 1, 16, 1, 1, 1, 0, 0, CC_RC_SELECTIVE};
    double rs = nb * 70e-6 + 2 * P * 0.9375 / 185e9;
    double want[3] = {nb * 30e-6 + 2 * P * 1.875 / 185e9, 2 * nb * 70e-6 + 2 * P * 1.875 / 185e9,
                      2 * nb * 70e-6 + 2 * P * 1.875 / 185e9 +
                          (m.global_batch / 16.0 - 1) * rs};
    for (int z = 0; z < 3; z++) {
        lz.zero = z;
        cc_layout_eval(&m, &c, &hb, &lz, &e);
        REL(e.t_dp, want[z], 1e-12, "ZeRO %d: gradient reduction %.4f s (%.0f buckets)", z,
            want[z], nb);
    }
    /* overlapped with the last backward pass: what outlasts 2/3 of the compute (selective
     * recomputation: forward + 2 backward passes), never less than one bucket */
    hb.dp_overlap = 1;
    lz.zero = 0;
    cc_layout_eval(&m, &c, &hb, &lz, &e);
    REL(e.t_dp, fmax(want[0] / nb, want[0] - 2.0 / 3 * e.t_compute / 32), 1e-12,
        "ZeRO 0 overlapped with the last backward pass");
    /* ZeRO 1: the reduce-scatter behind the last backward pass (2/3 of a micro-batch), the
     * weights' all-gather after the optimizer step, behind the next forward pass (1/3) */
    lz.zero = 1;
    cc_layout_eval(&m, &c, &hb, &lz, &e);
    {
        double r1 = nb * 70e-6 + 2 * P * 0.9375 / 185e9, mbt = e.t_compute / 32;
        REL(e.t_dp, fmax(r1 / nb, r1 - 2.0 / 3 * mbt) + fmax(r1 / nb, r1 - 1.0 / 3 * mbt), 1e-12,
            "ZeRO 1 overlapped: reduce-scatter behind the backward, all-gather behind the next "
            "forward (%.4f s)", e.t_dp);
        ok(e.t_dp > 0, "... which leaves some of the all-gather exposed here");
    }
    /* ZeRO 3 per micro-batch: all-gather each unit's 16-bit weights for the forward and the
     * backward pass, reduce-scatter its gradients (37 units: 36 layers and the tied
     * embedding, 3 rings of 70 us each); prefetching hides all of it behind the compute here
     * (3 x 0.076 s against 0.4 s per micro-batch), and none of it at 5 GB/s per node */
    lz.zero = 3;
    cc_layout_eval(&m, &c, &hb, &lz, &e);
    ok(e.t_dp == 0, "ZeRO 3 at 185 GB/s: the gathers hide behind the compute (%g s)", e.t_dp);
    {
        /* the units of the fullest pipeline stage: 36 layers on 4 stages, 9 layers each and
         * the embedding (first) or the output layer (last): 10; with the split (34 layers + 2
         * slots), 8 layers and the embedding, or 9 layers: 9; untied at pp = 1: layers + 2 */
        struct cc_model m2 = m;
        struct cc_eval e2;
        struct cc_layout lp = {1, 4, 4, 1, 1, 1, 0, 3, CC_RC_SELECTIVE};
        cc_layout_eval(&m2, &c, &hb, &lp, &e2);
        is_int(e2.z3_units, 10, "ZeRO 3 units, 36 layers on 4 stages: 9 layers + the embedding");
        m2.layers = 34, lp.split = 1;
        cc_layout_eval(&m2, &c, &hb, &lp, &e2);
        is_int(e2.z3_units, 9, "with the embedding/loss split (34 + 2 slots on 4): 9");
        m2.layers = 36, m2.tied_embed = 0, lp.pp = 1, lp.dp = 16, lp.split = 0;
        cc_layout_eval(&m2, &c, &hb, &lp, &e2);
        is_int(e2.z3_units, 38, "untied at pp = 1: 36 layers, the embedding, the output layer");
    }
    c.inter_node_Bps = 5e9;
    cc_layout_eval(&m, &c, &hb, &lz, &e);
    ok(m.tied_embed, "megatron-7.5b ties its embeddings (one unit for both)");
    is_int(e.z3_units, 37, "ZeRO 3 units: 36 layers and the tied embedding");
    double z3 = 3 * (37 * 70e-6 + 2 * P * 0.9375 / 5e9);
    REL(e.t_dp, 32 * (z3 - e.t_compute / 32), 1e-12,
        "ZeRO 3 at 5 GB/s: 32 micro-batches x (2 gathers + 1 scatter of %.1f s - compute)",
        z3 / 3);
}

/* Grouped-query attention with tp above the KV heads: Megatron-Core replicates the K/V heads,
 * one per rank, so llama2-70b cut to 2 KV heads costs at tp=8 what it costs with 8. */
static void test_gqa_replicated(void)
{
    struct cc_model m, m8;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e, e8;
    struct cc_search s;
    char err[256];
    preset("llama2-70b", &m8);
    m = m8;
    m.kv_heads = 2;
    cc_cluster_quick(&c, 64, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_layout l = {8, 1, 8, 1, 1, 1, 1, 1, CC_RC_FULL};
    cc_layout_eval(&m, &c, &hb, &l, &e);
    cc_layout_eval(&m8, &c, &hb, &l, &e8);
    ok(!strstr(e.why, "KV heads"), "tp=8 over 2 KV heads is a valid layout (%s)",
       e.feasible ? "feasible" : e.why);
    /* per rank: (80 x (2h^2 + 2h x 8 x 128 + 3h x 28672) + 2Vh) / 8 + 80 x 2h + h parameters
     * (the RMSNorms whole), V padded to 32768 = (80 x 855638016 + 536870912) / 8 + 1310720 +
     * 8192 = 8624807936, 2 bytes each */
    is_near(e.mem_weights, 17249615872.0, 0, "weights per rank: one K/V head each (17.25 GB)");
    is_near(e.mem_act, e8.mem_act, 0, "activations as with 8 KV heads");
    is_near(e.t_compute, e8.t_compute, 0, "QKV GEMMs as with 8 KV heads");
    /* 2 KV heads at tp=2: 1 each, fewer K/V weights than 8 heads would have */
    l.tp = 2, l.dp = 32;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    cc_layout_eval(&m8, &c, &hb, &l, &e8);
    ok(e.mem_weights < e8.mem_weights, "tp=2 over 2 KV heads: no replication");
    preset("llama2-7b", &m);
    m.kv_heads = 2;
    cc_cluster_quick(&c, 8, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    is_int(cc_layout_search(&m, &c, &hb, &s), CC_OK, "search llama2-7b with 2 KV heads on 8");
    ok(cc_search_rank(&s, 8, 1, 1, 1) >= 0 && cc_search_rank(&s, 4, 1, 2, 1) >= 0,
       "tp=4 and tp=8 over 2 KV heads are searched");
    cc_search_free(&s);
    m.kv_heads = 4;
    l = (struct cc_layout){6, 1, 1, 1, 1, 1, 0, 1, CC_RC_FULL};
    m.heads = 48, m.hidden = 6144;
    cc_cluster_quick(&c, 6, 6, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_layout_eval(&m, &c, &hb, &l, &e);
    ok(!e.feasible && strstr(e.why, "tp 6 neither divides the 4 KV heads nor is a multiple of them"),
       "tp=6 over 4 KV heads refused: %s", e.why);
}

/* --fp8-weight-cache: Transformer Engine's fp8 weight and transpose, 2 bytes per linear
 * parameter of the stage, fp8 runs with ZeRO 0-2 only */
static void test_fp8_cache(void)
{
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e0, e1;
    char err[256];
    preset("llama2-70b", &m);
    m.prec = CC_PREC_FP8;
    cc_cluster_quick(&c, 64, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_layout l = {8, 1, 8, 1, 1, 1, 1, 1, CC_RC_FULL};
    cc_layout_eval(&m, &c, &hb, &l, &e0);
    hb.fp8_cache = 1;
    cc_layout_eval(&m, &c, &hb, &l, &e1);
    /* 80 layers x (2h^2 + 2h x 8 x 128 + 3h x 28672 = 855638016) / tp 8, 2 bytes each */
    is_near(e1.mem_weights - e0.mem_weights, 2.0 * 80 * 855638016.0 / 8, 1e-3,
            "fp8 weight cache: 2 bytes per linear parameter of the stage (17.1 GB at tp=8)");
    is_near(e1.t_step, e0.t_step, 0, "... and no time");
    l.zero = 3;
    cc_layout_eval(&m, &c, &hb, &l, &e1);
    hb.fp8_cache = 0;
    cc_layout_eval(&m, &c, &hb, &l, &e0);
    is_near(e1.mem_weights, e0.mem_weights, 0, "fp8 weight cache: none with ZeRO 3");
    m.prec = CC_PREC_BF16, l.zero = 1, hb.fp8_cache = 1;
    cc_layout_eval(&m, &c, &hb, &l, &e1);
    hb.fp8_cache = 0;
    cc_layout_eval(&m, &c, &hb, &l, &e0);
    is_near(e1.mem_weights, e0.mem_weights, 0, "fp8 weight cache: none in a bf16 run");
}

/* Exact ties within one tp/pp/cp/dp go to the larger micro-batch (layout.h): on one GPU with
 * every GEMM at --efficiency and no per-micro-batch cost, the step time is the same for every
 * micro-batch dividing the batch. */
static void test_ties(void)
{
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_search s;
    char err[256];
    preset("gpt3-175b", &m);
    m.layers = 4, m.hidden = 1024, m.heads = m.kv_heads = 8, m.ffn = 4096, m.vocab = 1024;
    m.seq_len = 512, m.global_batch = 16;
    cc_cluster_quick(&c, 1, 1, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    hb.gemm_waves = 0, hb.recompute = CC_RC_NONE, hb.mb_max = 8;
    is_int(cc_layout_search(&m, &c, &hb, &s), CC_OK, "search a small model on one GPU");
    ok(s.nbest == 1 && s.best[0].layout.mb == 8 && s.best[0].layout.zero == 0,
       "micro-batches 1-8 tie: the largest (8) kept, at ZeRO 0 (got mb=%d, zero=%d)",
       s.nbest ? s.best[0].layout.mb : 0, s.nbest ? s.best[0].layout.zero : -1);
    cc_search_free(&s);
}

/* A mixture of experts whose first layers (or all but every k-th) have a dense MLP: counts,
 * the Hugging Face keys, Megatron-LM's pattern, and each pipeline stage costed by its own
 * layers. */
static void test_moe_mixed(void)
{
    struct cc_model m, x, d, a;
    struct cc_cluster c;
    struct cc_habits hb;
    char p[512], err[256], pat[128];
    /* shaped as GLM-4.5's config.json (values as recalled, not re-read here): 92 layers, the
     * first 3 dense (MLP 12288), 89 with 160 experts of 1536, top 8, one shared expert;
     * h 5120, 96 heads of 128, 8 KV heads, Q/K/V biases, QK norm, vocabulary 151552 */
    path(p, sizeof p, "hf-glm4-moe.json");
    is_int(cc_model_load(p, &m, err, sizeof err), CC_OK, "GLM-4.5-shaped config read %s", err);
    ok(m.first_dense == 3 && m.moe_step == 0 && m.experts == 160 && m.topk == 8 &&
       m.moe_ffn == 1536 && m.shared_ffn == 1536 && m.ffn == 12288 && m.qk_norm && m.qkv_bias,
       "... 3 dense layers first, 160 experts of 1536 (one shared), QK norm, Q/K/V biases");
    ok(m.mtp == 1 && strstr(m.source, "1 multi-token-prediction layer trained") != NULL,
       "... its multi-token-prediction layer read and said so");
    /* MTP: one more expert layer, 2h^2 of projection and 3 norms of h: 3,935,625,472 +
     * 52,428,800 + 15,360; of which active: the layer less 152 of its 160 experts */
    struct cc_model nomtp = m;
    nomtp.mtp = 0;
    is_near(cc_model_params(&m) - cc_model_params(&nomtp), 3988069632.0, 0,
            "... its MTP layer: 3,988,069,632 parameters");
    is_near(cc_model_active_params(&m) - cc_model_active_params(&nomtp), 401939712.0, 0,
            "... 401,939,712 of them active");
    /* Megatron-LM's count with it: the MTP layer as an expert layer, its norms and projection
     * (3h + 2h^2), the output layer again, and its attention products */
    REL(cc_model_megatron_log_flops(&m, 128),
        6.0 * m.global_batch * 8192 * (3.0 * 325058560 + 90.0 * 348651520 + 3.0 * 5120 +
                                       2.0 * 5120 * 5120 + 2.0 * 5120.0 * 151552) +
            6.0 * m.global_batch * 8192.0 * 8192 * 12288 * 93, 1e-12,
        "Megatron-LM's FLOPs with one MTP layer");
    m.mtp = 0; /* the model itself below */
    ok(cc_model_mixed(&m) && cc_model_expert_layers(&m) == 89, "... 89 layers with experts");
    /* per layer: attention 2*5120*12288 + 2*5120*1024 = 136,314,880; Q/K/V biases 14,336,
     * RMSNorms 10,240, QK norms 256; a dense layer's MLP 3*5120*12288 = 188,743,680:
     * 325,083,392; an expert layer's 160 experts 3,774,873,600, shared 23,592,960, router
     * 819,200: 3,935,625,472. 3 + 89 of them + untied 2*151552*5120 + final norm 5120 =
     * 352,797,814,784; 152 of 160 experts idle in 89 layers: 33,632,251,904 active */
    is_near(cc_model_params(&m), 352797814784.0, 0, "... 352,797,814,784 parameters");
    is_near(cc_model_active_params(&m), 33632251904.0, 0, "... 33,632,251,904 active");
    /* Megatron-LM's count: 3 dense layers' matrices 325,058,560, 89 expert layers' a token
     * meets (no router) 136,314,880 + 8 x 23,592,960 + 23,592,960 = 348,651,520 */
    REL(cc_model_megatron_log_flops(&m, 128),
        6.0 * m.global_batch * 8192 * (3.0 * 325058560 + 89.0 * 348651520 + 5120.0 * 151552) +
            6.0 * m.global_batch * 8192.0 * 8192 * 12288 * 92, 1e-12,
        "Megatron-LM's FLOPs: the dense layers' MLP and the expert layers' routed experts");
    ok(strcmp(cc_model_moe_pattern(&m, pat, sizeof pat), "([0]*3+[1]*89)") == 0,
       "--moe-layer-freq ([0]*3+[1]*89) ('%s')", pat);

    /* the closed form against counting, every range of 12 layers, first 0-5, step 0-4 */
    x = m;
    x.layers = 12;
    int bad = 0;
    for (int f = 0; f <= 5; f++)
        for (int k = 0; k <= 4; k++) {
            x.first_dense = f, x.moe_step = k;
            for (int lo = 0; lo <= 12; lo++)
                for (int hi = lo; hi <= 12; hi++) {
                    long long n = 0;
                    for (int i = lo; i < hi; i++)
                        n += i >= f && (i + 1) % (k > 1 ? k : 1) == 0;
                    bad += cc_model_expert_layers_in(&x, lo, hi) != n;
                }
        }
    is_int(bad, 0, "expert layers in every range: the closed form counts as a loop does");
    x.first_dense = 0, x.moe_step = 2, x.layers = 48;
    ok(strcmp(cc_model_moe_pattern(&x, pat, sizeof pat), "([0]*1+[1])*24") == 0,
       "every 2nd layer: ([0]*1+[1])*24 ('%s')", pat);
    x.layers = 47;
    ok(strcmp(cc_model_moe_pattern(&x, pat, sizeof pat), "([0]*1+([1]+[0]*1)*23)") == 0,
       "... of 47: ([0]*1+([1]+[0]*1)*23) ('%s')", pat);
    x.layers = 48, x.first_dense = 2;
    ok(strcmp(cc_model_moe_pattern(&x, pat, sizeof pat), "([0]*3+([1]+[0]*1)*22+[1])") == 0,
       "... after 2 dense: ([0]*3+([1]+[0]*1)*22+[1]) ('%s')", pat);
    x.first_dense = 1, x.moe_step = 3, x.layers = 10;
    ok(strcmp(cc_model_moe_pattern(&x, pat, sizeof pat), "([0]*2+([1]+[0]*2)*2+[1]+[0]*1)") == 0,
       "first dense, then every 3rd: ([0]*2+([1]+[0]*2)*2+[1]+[0]*1) ('%s')", pat);

    /* the engine: 8 layers of h 1024; an expert layer (8 experts of 2048, top 2) does more
     * than a dense one (MLP 4096) */
    preset("mixtral-8x7b", &x);
    x.layers = 8, x.hidden = 1024, x.heads = 8, x.kv_heads = 8, x.ffn = 4096, x.moe_ffn = 2048;
    x.vocab = 32000, x.seq_len = 1024, x.global_batch = 64, x.batch_tokens = 0;
    d = x, d.experts = d.topk = d.moe_ffn = d.shared_ffn = 0; /* all dense */
    a = x;                                                  /* all with experts */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_eval e, ed, ea;
    /* pp 2 with the first 4 dense: the first stage is the dense model's, the last the
     * expert model's, in memory to the byte */
    struct cc_layout l = {1, 2, 8, 1, 1, 1, 0, 1, CC_RC_NONE, 0, 0, 0, 1};
    x.first_dense = 4;
    cc_layout_eval(&x, &c, &hb, &l, &e);
    cc_layout_eval(&d, &c, &hb, &l, &ed);
    cc_layout_eval(&a, &c, &hb, &l, &ea);
    ok(e.experts_first == 0 && e.experts_last == 4, "pp 2, first 4 dense: 0 and 4 expert layers "
       "per stage (%g, %g)", e.experts_first, e.experts_last);
    REL(e.mem_stages[0], ed.mem_stages[0], 1e-12, "... the first stage holds what the dense "
        "model's does (%.3f GB)", e.mem_stages[0] / 1e9);
    REL(e.mem_stages[1], ea.mem_stages[1], 1e-12, "... the last what the expert model's does "
        "(%.3f GB)", e.mem_stages[1] / 1e9);
    /* pp 1, expert parallel over 8: each dense layer in place of an expert layer takes the
     * same time off the step (compute linear in the count) and one layer's all-to-all */
    struct cc_layout l1 = {1, 1, 16, 1, 1, 1, 0, 1, CC_RC_NONE, 0, 0, 0, 8};
    double tc[3], te[3];
    for (int k = 0; k < 3; k++) {
        x.first_dense = k;
        cc_layout_eval(&x, &c, &hb, &l1, &e);
        tc[k] = e.t_compute, te[k] = e.t_ep;
    }
    cc_layout_eval(&a, &c, &hb, &l1, &ea);
    REL(tc[0], ea.t_compute, 1e-12, "no dense layer: the expert model's compute");
    ok(tc[0] > tc[1] && tc[1] > tc[2], "a dense layer costs less compute than an expert one "
       "here (%.4f, %.4f, %.4f s)", tc[0], tc[1], tc[2]);
    REL(tc[0] - tc[1], tc[1] - tc[2], 1e-9, "... the same amount for each");
    REL(te[1], te[0] * 7 / 8, 1e-12, "... and the all-to-all of 7 expert layers of 8");
    REL(te[2], te[0] * 6 / 8, 1e-12, "... of 6");
    /* block recomputation of the first 2 layers of the one chunk: with the first 2 dense they
     * are the dense ones, and recomputing them costs what it costs the dense model */
    struct cc_layout lb = l1;
    lb.rc = CC_RC_BLOCK, lb.rcl = 2;
    x.first_dense = 2;
    struct cc_eval eb, edb;
    cc_layout_eval(&x, &c, &hb, &l1, &e);
    cc_layout_eval(&x, &c, &hb, &lb, &eb);
    lb.ep = l1.ep = 1;
    cc_layout_eval(&d, &c, &hb, &l1, &ed);
    cc_layout_eval(&d, &c, &hb, &lb, &edb);
    REL(eb.t_compute - e.t_compute, edb.t_compute - ed.t_compute, 1e-9,
        "block recomputation of the 2 dense layers: the dense model's extra compute (%.4f s)",
        eb.t_compute - e.t_compute);
    /* interleaved, pp 2, v 2, first 3 dense: chunks of 2 layers, stage 0 layers 0-1 and 4-5
     * (2 with experts), stage 1 layers 2-3 and 6-7 (3) */
    struct cc_layout lv = {1, 2, 8, 1, 1, 2, 0, 1, CC_RC_NONE, 0, 0, 0, 1};
    x.first_dense = 3;
    cc_layout_eval(&x, &c, &hb, &lv, &e);
    ok(e.experts_first == 2 && e.experts_last == 3, "pp 2, v 2, first 3 dense: 2 and 3 expert "
       "layers (%g, %g)", e.experts_first, e.experts_last);
    /* the embedding/loss split, pp 5 (10 slots of 2): stage 0 layer 0, 1 layers 1-2, 2 layers
     * 3-4, 3 layers 5-6, 4 layer 7; the middle stage costed is the first with 2 */
    cc_cluster_quick(&c, 40, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    struct cc_layout ls = {1, 5, 8, 1, 1, 1, 0, 1, CC_RC_NONE, 1, 0, 0, 1};
    cc_layout_eval(&x, &c, &hb, &ls, &e);
    ok(e.experts_first == 0 && e.mid_stage == 2 && e.experts_mid == 2 && e.experts_last == 1,
       "pp 5 with the split, first 3 dense: stage 0 none, middle stage 2 with 2, last 1 (%g, "
       "stage %d %g, %g)", e.experts_first, e.mid_stage, e.experts_mid, e.experts_last);
}

/* Multi-head latent attention (DeepSeek-V3): parameters, what tp ranks hold whole, FLOPs,
 * activations and GEMMs against hand counts. */
static void test_mla(void)
{
    struct cc_model m, d;
    char err[256];
    preset("deepseek-v3", &m);
    ok(cc_model_mla(&m) && m.mtp == 1 && cc_model_check(&m, err, sizeof err) == CC_OK,
       "preset deepseek-v3: latent attention, one MTP layer %s", err);
    /* its MTP layer: an expert layer 11,507,286,016 + 2 x 7168^2 + 3 x 7168: 682,636,472,320
     * in all (DeepSeek: 671B and a 14B MTP module with its embedding and head) */
    is_near(cc_model_params(&m), 682636472320.0, 0, "DeepSeek-V3 with MTP: 682,636,472,320");
    m.mtp = 0; /* the model itself below */
    /* attention: down projections 7168 x 1536 + 7168 x (512 + 64) = 15,138,816 (whole on
     * every tp rank); up 1536 x 128 x 192 = 37,748,736 and 512 x 128 x 256 = 16,777,216;
     * output 128 x 128 x 7168 = 117,440,512: 187,105,280 */
    is_near(cc_model_attn_params(&m), 187105280.0, 0, "latent attention's matrices 187,105,280");
    is_near(cc_model_attn_whole_params(&m), 15138816.0, 0, "... of which the down projections "
            "15,138,816");
    /* RMSNorms 2 x 7168 + latent norms 1536 + 512 = 16,384; a dense layer + MLP 3 x 7168 x
     * 18432 = 583,483,392; an expert layer + 256 experts 11,274,289,152, shared 44,040,192,
     * router 1,835,008 = 11,507,286,016; 3 dense + 58 expert + untied 2 x 129280 x 7168 +
     * 7168: 671,026,404,352 (DeepSeek: 671B without the MTP module); 248 of 256 experts idle
     * in 58 layers: 37,552,282,624 active (DeepSeek: 37B) */
    is_near(cc_model_params(&m), 671026404352.0, 0, "DeepSeek-V3: 671,026,404,352 parameters");
    is_near(cc_model_active_params(&m), 37552282624.0, 0, "... 37,552,282,624 active");
    /* held whole by a tp rank: 2 RMSNorms, router, down projections, latent norms */
    is_near(cc_model_layer_tp_whole_params(&m), 14336.0 + 1835008 + 15138816 + 2048, 0,
            "tp-whole parameters of an expert layer: norms, router, down projections");
    /* attention products: QK^T over 192 and PV over 128 per head: 4 b s^2 x 128 x 320 / 2 */
    ok(cc_model_attn_width(&m) == 20480.0, "attention width 128 x (128 + 64 + 128) / 2 = 20480");
    /* Megatron-LM's count: per layer the attention 187,105,280 + 2,048 (its latent norm rows)
     * and 396,361,728 of MLP (the dense one, or 8 routed + 1 shared experts of 2048: the same);
     * attention products 6 B s^2 x 20480 per layer */
    REL(cc_model_megatron_log_flops(&m, 128),
        6.0 * 15360 * 4096 * (61.0 * (187107328.0 + 396361728.0) + 7168.0 * 129280) +
            6.0 * 15360 * 4096.0 * 4096 * 20480 * 61, 1e-12,
        "Megatron-LM's FLOPs of a DeepSeek-V3 step");
    /* activations of an expert layer per token (tp 1, no dropout, flash attention): 8h =
     * 57,344 outside; latent 4 x (1536 + 512) + 2 x 64 = 8,320; Q, K 2 x 2 x 128 x 192, V and
     * the projection input 2 x 2 x 128 x 128 = 163,840; shared expert 6 x 2048, router 4 x
     * 256; 8 routed copies x (6 x 2048 + 2 x 7168) = 212,992: 455,808 bytes */
    is_near(cc_model_layer_act_bytes(&m, 1, 4096, 1, 0, CC_RC_NONE), 455808.0 * 4096, 0,
            "latent-attention expert layer activations: 455,808 bytes a token");
    /* GEMMs of a dense layer at tp 2, 4096 tokens, no wave losses, forward + 2 backward: the
     * down projections on 2048 tokens (sequence parallel), up and output split by heads */
    cc_model_dense_layer(&m, &d);
    double T = 4096, h = 7168;
    double lin = 2048.0 * 2112 * h + T * (128.0 * 192 / 2) * 1536 + T * (128.0 * 256 / 2) * 512 +
                 T * h * (128.0 * 128 / 2) + T * (2.0 * 18432 / 2) * h + T * h * (18432.0 / 2);
    double att = 64.0 * (4096.0 * 4096 * 192 + 4096.0 * 128 * 4096);
    REL(cc_layer_gemm_time(&d, 1, 4096, 2, 1e15, 1e15, 0, 1, 0), 3 * 2 * (lin + att) / 1e15,
        1e-12, "latent attention GEMMs at tp 2: down projections on 1/tp of the tokens");
    /* context parallelism gathers heads/tp x (192 + 128) per token of K and V */
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e;
    cc_cluster_quick(&c, 1024, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_layout l = {8, 1, 64, 2, 1, 1, 1, 1, CC_RC_FULL, 0, 0, 0, 64};
    cc_layout_eval(&m, &c, &hb, &l, &e);
    ok(e.t_cp > 0, "cp 2 with latent attention: K and V gathered (%.3f s)", e.t_cp);
    l.sp = 0;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    ok(!e.feasible && strstr(e.why, "costed with sequence parallelism only"),
       "tp 8 without sequence parallelism: %s", e.why);
    /* Transformer Engine's fp8 weight cache at tp 8, ep 64: 2 bytes per linear parameter of
     * the rank; the down projections whole, the router (no TE layer) left out, each rank's 4
     * of the 256 experts. Dense layer: (583,467,008 - 15,138,816) / 8 + 15,138,816; expert
     * layer: the attention and the shared expert (187,105,280 + 44,040,192 - 15,138,816) / 8
     * + 15,138,816, and 4 x 44,040,192 of routed experts */
    struct cc_eval on;
    l.sp = 1, l.cp = 1, l.dp = 128;
    m.prec = CC_PREC_FP8;
    cc_layout_eval(&m, &c, &hb, &l, &e);
    hb.fp8_cache = 1;
    cc_layout_eval(&m, &c, &hb, &l, &on);
    double dense = (583467008.0 - 15138816) / 8 + 15138816;
    double expert = (187105280.0 + 44040192.0 - 15138816) / 8 + 15138816 + 4 * 44040192.0;
    REL(on.mem_weights - e.mem_weights, 2 * (3 * dense + 58 * expert), 1e-12,
        "fp8 weight cache with latent attention: the down projections whole, no router");
}

/* Megatron-LM's uneven first and last pipeline stage (--decoder-first/last-pipeline-num-layers):
 * parsing, the stages' layers (with interleaving, by Megatron-Core's offsets), the rules, and
 * the search using it where neither the uniform split nor the embedding/loss split divides. */
static void test_uneven_first_last(void)
{
    struct cc_layout l = {0};
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e;
    char err[256] = "", buf[160];
    int dpg;
    is_int(cc_layout_parse("tp=4,pp=16,first=4,last=1", &l, &dpg, err, sizeof err), CC_OK,
           "parse first=4,last=1 %s", err);
    ok(l.lfirst == 4 && l.llast == 1 && strstr(cc_layout_format(&l, buf, sizeof buf), ",first=4,last=1"),
       "... and format it back (%s)", buf);
    struct cc_layout l2 = {0};
    is_int(cc_layout_parse("pp=16,first=4", &l2, &dpg, err, sizeof err), CC_EUSAGE,
           "first without last refused: %s", err);
    struct cc_layout l3 = {0};
    is_int(cc_layout_parse("pp=16,first=4,last=1,split=1", &l3, &dpg, err, sizeof err), CC_EUSAGE,
           "first/last with split=1 refused: %s", err);
    /* DeepSeek-V3, 61 layers on 16 stages: 4, then 14 x 4, then 1 (NVIDIA's PP16 recipe); the
     * first stage's layers 0-3 hold one with experts, the last stage's layer 60 one */
    preset("deepseek-v3", &m);
    cc_cluster_quick(&c, 1024, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_layout d = {4, 16, 16, 1, 1, 1, 1, 1, CC_RC_NONE, 0, 0, 0, 8, 4, 1};
    cc_layout_eval(&m, &c, &hb, &d, &e);
    ok(e.feasible && e.layers_first == 4 && e.layers_mid == 4 && e.layers_last == 1,
       "DeepSeek-V3 pp 16, first 4, last 1: 4, 4, 1 layers (%g, %g, %g) %s", e.layers_first,
       e.layers_mid, e.layers_last, e.why);
    ok(e.experts_first == 1 && e.experts_mid == 4 && e.experts_last == 1,
       "... expert layers 1, 4, 1 (%g, %g, %g)", e.experts_first, e.experts_mid, e.experts_last);
    d.llast = 2;
    cc_layout_eval(&m, &c, &hb, &d, &e);
    ok(!e.feasible && strstr(e.why, "do not divide evenly into the 14 middle stages"),
       "first 4, last 2: %s", e.why);
    /* interleaved: 30 layers, pp 4, first 6, last 8, v 2: rounds of 3 + 4 + 4 + 4 layers;
     * with the first 5 dense, stage 0 holds layers 0-2 and 15-17 (3 with experts), stage 1
     * 3-6 and 18-21 (6), stages 2 and 3 all 8 with experts: the middle one costed is 2 */
    struct cc_model x;
    preset("mixtral-8x7b", &x);
    x.layers = 30, x.first_dense = 5;
    cc_cluster_quick(&c, 64, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    struct cc_layout i = {1, 4, 16, 1, 1, 2, 0, 1, CC_RC_NONE, 0, 0, 0, 8, 6, 8};
    cc_layout_eval(&x, &c, &hb, &i, &e);
    ok(e.layers_first == 6 && e.layers_mid == 8 && e.layers_last == 8 && e.experts_first == 3 &&
           e.mid_stage == 2 && e.experts_mid == 8 && e.experts_last == 8,
       "pp 4, v 2, first 6, last 8: layers 6/8/8, experts 3, stage %d %g, %g (%g, %g, %g)",
       e.mid_stage, e.experts_mid, e.experts_last, e.layers_first, e.layers_mid, e.layers_last);
    i.lfirst = 5, i.llast = 9; /* 16 in the middle, but 5 and 9 are not in 2 chunks */
    cc_layout_eval(&x, &c, &hb, &i, &e);
    ok(!e.feasible && strstr(e.why, "v 2 does not divide the layers of every stage"),
       "first 5, last 9 with v 2: %s", e.why);
    /* the search: 61 layers on 1024 GPUs fit only pp 1 without it; with it the first layout
     * has a pipeline, and --uneven-pp 0 leaves pp 1 alone */
    struct cc_search s;
    cc_cluster_quick(&c, 1024, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    if (cc_layout_search(&m, &c, &hb, &s) == CC_OK && s.nbest > 0) {
        ok(s.best[0].layout.pp > 1 && s.best[0].layout.lfirst > 0 &&
               s.best[0].layout.lfirst + s.best[0].layout.llast +
                       (s.best[0].layout.pp - 2) * ((61 + s.best[0].layout.pp - 1) / s.best[0].layout.pp) ==
                   61,
           "DeepSeek-V3 on 1024 GPUs: the search's first has an uneven pipeline (%s)",
           cc_layout_format(&s.best[0].layout, buf, sizeof buf));
        cc_search_free(&s);
    } else
        ok(0, "DeepSeek-V3 search: %s", s.why_none);
    hb.uneven_pp = 0;
    if (cc_layout_search(&m, &c, &hb, &s) == CC_OK && s.nbest > 0) {
        int all1 = 1;
        for (int k = 0; k < s.nbest; k++)
            all1 &= s.best[k].layout.pp == 1 && s.best[k].layout.lfirst == 0;
        ok(all1, "... with --uneven-pp 0 only pp 1 (%d layouts)", s.nbest);
        cc_search_free(&s);
    } else
        ok(0, "DeepSeek-V3 search without uneven stages: %s", s.why_none);
}

/* Multi-token prediction's costs beside its layer: collectives, context-parallel traffic,
 * activations, the last stage's embedding copy, and Megatron-LM's block method leaving the
 * MTP layer unrecomputed. A dense model (llama3-8b) with one MTP layer, 16 H100s. */
static void test_mtp_costs(void)
{
    struct cc_model m, m0;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e1, e0;
    char err[256];
    preset("llama3-8b", &m);
    m.mtp = 1;
    m0 = m, m0.mtp = 0;
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    /* tp 2 with sequence parallelism, pp 1, no recomputation: per micro-batch the MTP layer's
     * two pairs forward and backward (8 collectives of S = s h 2 bytes), the embedding's pair,
     * the projection's 2h input all-gathered and its gradient reduce-scattered, its output
     * all-gathered forward and its split's gradient all-gathered backward, the output
     * layer's pair and the cross entropy's 3 fp32 all-reduces */
    struct cc_layout l = {2, 1, 8, 1, 1, 1, 1, 1, CC_RC_NONE};
    cc_layout_eval(&m, &c, &hb, &l, &e1);
    cc_layout_eval(&m0, &c, &hb, &l, &e0);
    double s = m.seq_len, S = s * m.hidden * 2.0;
    double ag = cc_comm_time(&c, CC_ALLGATHER, 2, 2, S), rs = cc_comm_time(&c, CC_REDUCESCATTER, 2, 2, S);
    double want = 4.0 * (ag + rs) + (ag + rs) +
                  cc_comm_time(&c, CC_ALLGATHER, 2, 2, 2.0 * S) +
                  cc_comm_time(&c, CC_REDUCESCATTER, 2, 2, 2.0 * S) + 2.0 * ag + (ag + rs) +
                  3.0 * cc_comm_time(&c, CC_ALLREDUCE, 2, 2, s * 4.0);
    ok(e1.feasible && e0.feasible, "llama3-8b with and without an MTP layer fit tp 2 (%s)", e1.why);
    REL(e1.t_tp - e0.t_tp, e1.m * want, 1e-12,
        "MTP tp traffic: its layer, embedding, 2h -> h projection and output layer (%.4f s)",
        e1.t_tp - e0.t_tp);
    /* activations: the layer's, the norms' and projection's inputs (8h bytes a token, 1/tp
     * of them), the second logits (16-bit + fp32 softmax over the padded vocabulary / tp) */
    double an = cc_model_layer_act_bytes(&m, 1, s, 2, 1, CC_RC_NONE);
    double V = cc_model_padded_vocab(&m, 128 * 2);
    REL(e1.mem_act - e0.mem_act, an + 8.0 * m.hidden * s / 2 + s * V * 6.0 / 2, 1e-12,
        "MTP activations: layer, norm and projection inputs, logits (%.3f GB)",
        (e1.mem_act - e0.mem_act) / 1e9);
    /* rc=full: the layer's input and the shifted tokens' embedding kept, 2 x 2h bytes */
    struct cc_layout lf = l;
    lf.rc = CC_RC_FULL;
    cc_layout_eval(&m, &c, &hb, &lf, &e1);
    cc_layout_eval(&m0, &c, &hb, &lf, &e0);
    REL(e1.mem_act - e0.mem_act, 2.0 * 2.0 * m.hidden * s / 2 + s * V * 6.0 / 2, 1e-12,
        "... recomputed: its two checkpointed inputs and the logits");
    /* context parallelism 2: the MTP layer's K/V all-gathered forward and backward, their
     * gradients reduce-scattered, like a decoder layer's (8 K/V heads over tp 2: 4 of 128) */
    struct cc_layout lc = l;
    lc.cp = 2, lc.dp = 4;
    cc_layout_eval(&m, &c, &hb, &lc, &e1);
    cc_layout_eval(&m0, &c, &hb, &lc, &e0);
    double kv = (s / 2) * 2.0 * (4.0 * 128) * 2.0;
    REL(e1.t_cp - e0.t_cp,
        e1.m * (2.0 * cc_comm_time(&c, CC_ALLGATHER, 2, 2, kv * 2) +
                cc_comm_time(&c, CC_REDUCESCATTER, 2, 2, kv * 2)), 1e-12,
        "MTP cp traffic: its K/V gathered twice, their gradients scattered once (%.4f s)",
        e1.t_cp - e0.t_cp);
    /* executed FLOPs with rc=block: Megatron-LM's block method does not recompute the MTP
     * layer, so it adds what it adds without recomputation; rc=full recomputes it */
    struct cc_layout lb = {1, 4, 4, 1, 1, 1, 0, 1, CC_RC_BLOCK, 0, 2};
    struct cc_layout ln = lb;
    ln.rc = CC_RC_NONE, ln.rcl = 0;
    double add[3];
    const struct cc_layout *ls[3] = {&lb, &ln, &lf};
    for (int i = 0; i < 3; i++) {
        cc_layout_eval(&m, &c, &hb, ls[i], &e1);
        cc_layout_eval(&m0, &c, &hb, ls[i], &e0);
        add[i] = e1.hw_tflops * e1.t_step - e0.hw_tflops * e0.t_step; /* x 1e12 x 16 GPUs */
    }
    REL(add[0], add[1], 1e-9, "executed FLOPs: rc=block adds the MTP layer's as rc=none does");
    ok(add[2] > add[1] * 1.1, "... rc=full adds its recomputation too (%.4g vs %.4g)", add[2],
       add[1]);
    /* sequence parallelism: what every tp rank holds whole (here the norms: 32 layers' two
     * of h, the final one, the MTP layer's three and its layer's two) has partial gradients,
     * summed over tp after the backward pass; with dp 1 that is all of the reduction */
    struct cc_cluster c2;
    cc_cluster_quick(&c2, 2, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    struct cc_layout l2 = {2, 1, 1, 1, 1, 1, 1, 1, CC_RC_FULL};
    cc_layout_eval(&m, &c2, &hb, &l2, &e1);
    double w = (32.0 * 2 + 1 + 3 + 2) * m.hidden;
    REL(e1.t_dp, cc_comm_time(&c2, CC_ALLREDUCE, 2, 2, w * hb.grad_bytes), 1e-12,
        "tp 2 with sp: the norms' gradients summed over tp, %.0f parameters (%.6f s)", w, e1.t_dp);
    l2.sp = 0;
    cc_layout_eval(&m, &c2, &hb, &l2, &e1);
    is_near(e1.t_dp, 0.0, 0, "... none without sequence parallelism");
    /* ZeRO 3: the MTP layer is a unit of its own beside the 32 layers, embedding and output */
    struct cc_layout lz = {2, 1, 8, 1, 1, 1, 1, 3, CC_RC_FULL};
    cc_layout_eval(&m, &c, &hb, &lz, &e1);
    is_int(e1.z3_units, 35, "ZeRO 3: 32 layers, the MTP layer, embedding and output: 35 units");
    /* pp 2: the last stage builds an embedding for the MTP layer whether or not the output
     * layer is tied to it (Megatron-LM's output layer there keeps its own weight as well) */
    struct cc_layout lp = {2, 2, 4, 1, 1, 1, 1, 1, CC_RC_FULL};
    double d[2];
    for (int tied = 0; tied < 2; tied++) {
        m.tied_embed = m0.tied_embed = tied;
        cc_layout_eval(&m, &c, &hb, &lp, &e1);
        cc_layout_eval(&m0, &c, &hb, &lp, &e0);
        d[tied] = e1.mem_stages[1] - e0.mem_stages[1];
    }
    REL(d[1], d[0], 1e-12, "pp 2, tied or not: the MTP stage holds an embedding copy alike (%.3f GB)",
        d[0] / 1e9);
}

/* Selective recomputation's modules (Megatron-Core --recompute-modules): the bytes each lets
 * go, the FLOPs it runs again, its collectives, by hand. */
static void test_rc_modules(void)
{
    struct cc_model m, x;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e1, e0;
    char err[256], buf[128];
    unsigned mods = 0;
    is_int(cc_rc_modules_parse("moe_act, mla_up_proj", &mods, err, sizeof err), CC_OK,
           "parse 'moe_act, mla_up_proj' %s", err);
    ok(mods == (CC_RCM_MOE_ACT | CC_RCM_MLA_UP_PROJ) &&
           strcmp(cc_rc_modules_format(mods, " ", buf, sizeof buf), "moe_act mla_up_proj") == 0,
       "... two modules, formatted in Megatron-Core's order ('%s')", buf);
    is_int(cc_rc_modules_parse("core_attn,mhc", &mods, err, sizeof err), CC_EUSAGE,
           "an uncosted module refused: %s", err);
    ok(strstr(err, "'mhc'") != NULL, "... by name");
    /* DeepSeek-V3, bf16, one sequence of 4096 on tp 1: per token a layer keeps, among others,
     * Q and K of 128 x 192 and V of 128 x 128 at 2 bytes (131,072 bytes), the router's
     * normalised input and the latent input norm's output (2h each), 8 routed copies' 2048
     * activation outputs at 2 bytes (32,768) */
    preset("deepseek-v3", &m);
    m.prec = CC_PREC_BF16;
    double s = m.seq_len, h = m.hidden;
    x = m;
    double none = cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_NONE);
    REL(cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_SELECTIVE), none, 1e-12,
        "flash attention: selective core_attn keeps what none keeps");
    x.rc_modules = CC_RCM_MLA_UP_PROJ;
    REL(none - cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_SELECTIVE), 131072.0 * s, 1e-12,
        "mla_up_proj lets Q, K and V go: 131,072 bytes a token");
    x.rc_modules = CC_RCM_LAYERNORM;
    REL(none - cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_SELECTIVE), 4.0 * h * s, 1e-12,
        "layernorm: the latent input norm's and the router's input norm's outputs, 2h each");
    /* fp8: the down projections' 1-byte copy (h), the router's 16-bit input (2h) and the
     * shared expert's 1-byte copy (h), which Megatron-Core no longer keeps */
    x.prec = CC_PREC_FP8;
    REL(cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_NONE) -
            cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_SELECTIVE), 4.0 * h * s, 1e-12,
        "layernorm in fp8: h + 2h + h");
    x.prec = CC_PREC_BF16;
    x.rc_modules = CC_RCM_MOE_ACT;
    REL(none - cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_SELECTIVE), 8.0 * 2048 * 2 * s,
        1e-12, "moe_act: 8 routed copies' activation outputs, 32,768 bytes a token");
    /* moe: the router's fp32 probabilities (4 x 256), the shared expert's inner activations
     * (6 x 2048), the routed copies' (8 x (6 x 2048 + 2h)) */
    x.rc_modules = CC_RCM_MOE;
    REL(none - cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_SELECTIVE),
        (4.0 * 256 + 6.0 * 2048 + 8.0 * (6.0 * 2048 + 2.0 * h)) * s, 1e-12,
        "moe: router probabilities, shared and routed experts' activations");
    /* in fp8: the shared expert's and the routed copies' activations at their fp8 sizes (its
     * second GEMM's input and the permuted inputs as 1-byte copies), and the shared expert's
     * 1-byte input copy, which the checkpoint does not keep */
    x.prec = CC_PREC_FP8;
    REL(cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_NONE) -
            cc_model_layer_act_bytes(&x, 1, s, 1, 0, CC_RC_SELECTIVE),
        (4.0 * 256 + 5.0 * 2048 + 8.0 * (5.0 * 2048 + h) + h) * s, 1e-12, "moe in fp8");
    x.prec = CC_PREC_BF16;
    /* forward FLOPs again: the up projections (1536 -> 128 x 192, 512 -> 128 x 256) */
    REL(cc_model_selective_fwd_flops(&x, 1), 2.0 * s * (3.0 * h * (8.0 * 2048 + 2048) + h * 256),
        1e-12, "moe runs the routed and shared experts and the router again");
    x.rc_modules = CC_RCM_MLA_UP_PROJ;
    REL(cc_model_selective_fwd_flops(&x, 1), 2.0 * s * 128 * (1536.0 * 192 + 512.0 * 256), 1e-12,
        "mla_up_proj runs the two up projections again");
    /* a dense model: mlp lets the MLP's input copy (2h) and inner activations (6 x ffn) go */
    preset("llama3-8b", &m);
    s = m.seq_len, h = m.hidden;
    x = m, x.rc_modules = CC_RCM_MLP;
    REL(cc_model_layer_act_bytes(&m, 1, s, 2, 1, CC_RC_NONE) -
            cc_model_layer_act_bytes(&x, 1, s, 2, 1, CC_RC_SELECTIVE),
        (2.0 * h + 6.0 * 14336) * s / 2, 1e-12, "mlp (tp 2, sp): 2h + 6 ffn bytes a token, halved");
    /* and its time: the MLP's tp pair once more per layer and micro-batch (no attention
     * products again: core_attn is not in the set); the executed FLOPs as the model counts */
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_layout l = {2, 1, 8, 1, 1, 1, 1, 1, CC_RC_SELECTIVE};
    cc_layout_eval(&x, &c, &hb, &l, &e1);
    cc_layout_eval(&m, &c, &hb, &l, &e0);
    double S = s * h * 2.0;
    double one = cc_comm_time(&c, CC_ALLGATHER, 2, 2, S) + cc_comm_time(&c, CC_REDUCESCATTER, 2, 2, S);
    REL(e1.t_tp - e0.t_tp, e1.m * 32.0 * one, 1e-12,
        "mlp: one tp pair more per layer and micro-batch (%.4f s)", e1.t_tp - e0.t_tp);
    REL(e1.hw_tflops * 16 * e1.t_step * 1e12, cc_model_step_hw_flops(&x, CC_RC_SELECTIVE), 1e-12,
        "executed FLOPs: the MLPs' forward again");
    REL(cc_model_step_hw_flops(&x, CC_RC_SELECTIVE) - cc_model_step_flops(&x),
        32.0 * 2.0 * m.global_batch * s * 3.0 * h * 14336, 1e-12,
        "... 32 layers x 2 x tokens x 3 h ffn");
}

/* An explicit pipeline layout (Megatron-Core --pipeline-model-parallel-layout): parsed as
 * Megatron-Core does, checked against the model, and evaluated like the equivalent layout
 * where one exists. */
static void test_pipeline_layout(void)
{
    static struct cc_pplan p, u0;
    char err[256] = "", why[160];
    is_int(cc_pplan_parse("Et*4|(t*4|)*14tmL", &p, err, sizeof err), CC_OK, "parse %s", err);
    int fours = 1;
    for (int k = 1; k < 15; k++)
        fours &= p.layers[k] == 4;
    ok(p.n == 16 && p.layers[0] == 4 && fours && p.layers[15] == 1 && p.total == 61 &&
           p.mtp == 1 && p.mtp_stage == 15,
       "Et*4|(t*4|)*14tmL: 16 stages of 4, 4 x 14, 1 (+ MTP) layers (%d stages, %d layers)", p.n,
       p.total);
    is_int(cc_pplan_parse("E,tt|t,t|,L", &p, err, sizeof err), CC_OK, "commas are cosmetic %s", err);
    ok(p.n == 3 && p.layers[0] == 2 && p.layers[1] == 2 && p.layers[2] == 0,
       "... and a stage may hold no layer (the loss alone)");
    const struct { const char *text, *want; } bad[] = {
        {"t*4|L", "it must open with 'E'"},
        {"Et*4", "close with 'L'"},
        {"Et|(t|L", "a '(' without its ')'"},
        {"E((t)*2)*2L", "groups do not nest"},
        {"E(t|)L", "needs '*N' after it"},
        {"Etm|tL", "a transformer layer after an MTP layer"},
        {"Etm|mL", "the MTP layers must all be in one stage"},
        {"tE|L", "'E' (the embedding) comes first"},
        {"EtL|t", "'L' (the loss) comes last"},
        {"Etx|L", "'x' is not E, t, m, L"},
        {"Et*9999999L", "more than 1048576 characters unrolled"},
        {"", "give 1 to"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        ok(cc_pplan_parse(bad[i].text, &p, err, sizeof err) == CC_EUSAGE && strstr(err, bad[i].want),
           "'%s' refused: %s", bad[i].text, err);
    }
    cc_pplan_parse("Et*4|(t*4|)*14tmL", &p, err, sizeof err);
    ok(cc_pplan_check(&p, 61, 1, 16, why, sizeof why) == 0 && cc_pplan_check(&p, 61, 1, 4, why, sizeof why) == 0,
       "DeepSeek-V3 (61 layers, 1 MTP) on pp 16 or pp 4 (v 4)");
    ok(cc_pplan_check(&p, 61, 1, 3, why, sizeof why) && strstr(why, "16 stages are not a multiple of pp 3"),
       "pp 3: %s", why);
    ok(cc_pplan_check(&p, 60, 1, 4, why, sizeof why) && strstr(why, "holds 61 transformer layers, the model 60"),
       "60 layers: %s", why);
    ok(cc_pplan_check(&p, 61, 0, 4, why, sizeof why) && strstr(why, "holds 1 MTP layers, the model trains 0"),
       "no MTP: %s", why);
    /* a standalone MTP stage (Megatron-Core's): the MTP layers in a rank's last chunk before
     * the last rank, no transformer layer after them */
    is_int(cc_pplan_parse("Et*30|t*31|m|L", &p, err, sizeof err), CC_OK, "parse Et*30|t*31|m|L %s", err);
    ok(cc_pplan_check(&p, 61, 1, 4, why, sizeof why) == 0 && cc_pplan_mtp_rank(&p, 4) == 2,
       "MTP alone on rank 2 of 4: taken, its rank 2");
    ok(cc_pplan_check(&p, 61, 1, 2, why, sizeof why) && strstr(why, "MTP layers are on the first pipeline rank"),
       "pp 2 makes it rank 0's last chunk: %s", why);
    ok(cc_pplan_check(&p, 61, 1, 0, why, sizeof why) == 0, "pp 0: what holds at every pp only");
    cc_pplan_parse("Et*61m|L", &u0, err, sizeof err);
    ok(cc_pplan_check(&u0, 61, 1, 0, why, sizeof why) && strstr(why, "in its first stage, on the first pipeline rank at any pp"),
       "pp 0: the MTP layer in the first stage refused (%s)", why);
    is_int(cc_pplan_parse("Et*30|t*31|m|||||L", &p, err, sizeof err), CC_OK, "parse Et*30|t*31|m|||||L %s", err);
    ok(cc_pplan_check(&p, 61, 1, 4, why, sizeof why) && strstr(why, "in chunk 0 of rank 2, not in a rank's last chunk"),
       "MTP in rank 2's first chunk of 2: %s", why);
    cc_pplan_parse("Et*4|(t*4|)*14tmL", &p, err, sizeof err);
    is_int(cc_pplan_mtp_rank(&p, 4), 3, "Et*4|(t*4|)*14tmL: the MTP layer on the last rank");
    /* pp 4, v 4: rank r holds stages r, r + 4, r + 8, r + 12 */
    cc_pplan_parse("Et*4|(t*4|)*14tmL", &p, err, sizeof err);
    ok(cc_pplan_rank_layers(&p, 4, 0) == 16 && cc_pplan_rank_layers(&p, 4, 3) == 13 &&
           cc_pplan_chunk(&p, 4, 3, 3) == 1 && cc_pplan_offset(&p, 4, 1, 2) == 36,
       "pp 4: rank 0 holds 16 layers, rank 3 13 (its last chunk 1); rank 1's third chunk starts "
       "at layer 36");

    /* evaluation: the layout that first=4,last=1 describes gives the same figures, and a
     * uniform interleaved one the same as v alone */
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb, hp;
    struct cc_eval e0, e1;
    preset("deepseek-v3", &m);
    m.prec = CC_PREC_FP8;
    cc_cluster_quick(&c, 256, 8, cc_gpu_lookup("b200"), err, sizeof err);
    cc_habits_default(&hb);
    hp = hb, hp.plan = &p;
    struct cc_layout lu = {1, 16, 16, 1, 1, 1, 0, 1, CC_RC_NONE, 0, 0, 0, 8, 4, 1};
    struct cc_layout lp = lu;
    lp.lfirst = lp.llast = 0;
    cc_layout_eval(&m, &c, &hb, &lu, &e0);
    cc_layout_eval(&m, &c, &hp, &lp, &e1);
    ok(e1.feasible && e1.plan == &p && e1.t_step == e0.t_step && e1.mem_stages[0] == e0.mem_stages[0] &&
           e1.mem_stages[1] == e0.mem_stages[1] && e1.mem_stages[2] == e0.mem_stages[2],
       "DeepSeek-V3 on pp 16: the layout Et*4|(t*4|)*14tmL costs as first=4,last=1 (%.4f s, %.4f s) %s",
       e1.t_step, e0.t_step, e1.why);
    preset("llama3-8b", &m);
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    static struct cc_pplan u;
    cc_pplan_parse("Et*4|(t*4|)*6t*4L", &u, err, sizeof err);
    hp.plan = &u;
    struct cc_layout lv = {1, 4, 4, 1, 1, 2, 0, 1, CC_RC_NONE};
    cc_layout_eval(&m, &c, &hb, &lv, &e0);
    cc_layout_eval(&m, &c, &hp, &lv, &e1);
    ok(e1.feasible && e1.t_step == e0.t_step && e1.mem_total == e0.mem_total,
       "llama3-8b pp 4: Et*4|(t*4|)*6t*4L costs as v 2 (%.4f s, %.4f s)", e1.t_step, e0.t_step);
    /* an uneven one: 8 layers on the first chunk of rank 0, none on its second; the first
     * stage holds the same 8 layers but all in its first chunk, which stays in flight the
     * longest: more activations than the even split's, the same weights */
    is_int(cc_pplan_parse("Et*8|t*4|t*4|t*4||t*4|t*4|t*4L", &u, err, sizeof err), CC_OK,
           "parse a layout with an empty stage %s", err);
    cc_layout_eval(&m, &c, &hp, &lv, &e1);
    /* 128 micro-batches, rank 0 of 4 with v 2: 11 chunk steps in flight, 7 of its first chunk
     * and 4 of its second: 7 x 8 + 4 x 0 = 56 layers against 7 x 4 + 4 x 4 = 44 */
    double an = cc_model_layer_act_bytes(&m, 1, m.seq_len, 1, 0, CC_RC_NONE);
    ok(e1.layers_first == 8 && e1.mem_weights == e0.mem_weights,
       "a first chunk of 8: the first stage's 8 layers, its weights unchanged");
    REL(e1.mem_stages[0] - e0.mem_stages[0], 12.0 * an, 1e-12,
        "... 56 layers' activations in flight, not 44 (%.2f GB > %.2f GB)", e1.mem_stages[0] / 1e9,
        e0.mem_stages[0] / 1e9);
    lv.vpp = 4;
    cc_layout_eval(&m, &c, &hp, &lv, &e1);
    ok(!e1.feasible && strstr(e1.why, "v 4: the pipeline layout's 8 stages on pp 4 make v 2"),
       "v 4 against an 8-stage layout on pp 4: %s", e1.why);
    /* a standalone MTP stage, llama3-8b with one MTP layer on 3 nodes of B200: A puts it on rank 1
     * of 3 after its 16 layers, the last holding the loss alone; B on the last; C is the
     * model without it */
    {
        static struct cc_pplan pa, pb, pc;
        struct cc_habits ha = hb, hb2 = hb, hc = hb;
        struct cc_model mm = m, m0 = m;
        struct cc_cluster c3;
        struct cc_eval ea, eb, ec;
        mm.mtp = 1, m0.mtp = 0;
        cc_cluster_quick(&c3, 24, 8, cc_gpu_lookup("b200"), err, sizeof err);
        is_int(cc_pplan_parse("Et*16|t*16,m|L", &pa, err, sizeof err) |
                   cc_pplan_parse("Et*16|t*16|mL", &pb, err, sizeof err) |
                   cc_pplan_parse("Et*16|t*16|L", &pc, err, sizeof err), CC_OK,
               "parse Et*16|t*16,m|L, Et*16|t*16|mL, Et*16|t*16|L");
        ha.plan = &pa, hb2.plan = &pb, hc.plan = &pc;
        struct cc_layout l3 = {1, 3, 8, 1, 1, 1, 0, 1, CC_RC_NONE};
        cc_layout_eval(&mm, &c3, &ha, &l3, &ea);
        cc_layout_eval(&mm, &c3, &hb2, &l3, &eb);
        cc_layout_eval(&m0, &c3, &hc, &l3, &ec);
        ok(ea.feasible && eb.feasible && ec.feasible && ea.mtp_rank == 1 && eb.mtp_rank == -1 &&
               ec.mtp_rank == -1, "the MTP layer on rank 1 of 3: a standalone MTP stage (%s %s %s)",
           ea.why, eb.why, ec.why);
        ok(ea.mem_stages[0] == ec.mem_stages[0], "... the first stage holds what it holds without MTP");
        double logits = 1.0 * m.seq_len * ea.vocab * 6.0; /* mb 1, tp 1 */
        REL(ea.mem_stages[1] - ec.mem_stages[1], logits, 1e-12,
            "... the last holds the MTP layer's logits beside its own (%.3f GB)", logits / 1e9);
        /* the MTP stage: rank 1's own, the MTP layer's weights and state as the last stage
         * holds them in B, and its activations for each of the 2 micro-batches rank 1 holds
         * in flight (1 on the last stage): the layer's and the inputs of the two norms and
         * the 2h -> h projection, 8h bytes a token */
        double state = eb.mem_stages[1] - ec.mem_stages[1] - logits;
        double act = cc_model_layer_act_bytes(&m, 1, m.seq_len, 1, 0, CC_RC_NONE) +
                     8.0 * m.hidden * m.seq_len;
        REL(ea.mem_stages[3] - ec.mem_stages[2], state + act, 1e-12,
            "... the MTP stage: rank 1's %.2f GB and the MTP layer's %.2f GB with a second "
            "micro-batch's activations %.2f GB", ec.mem_stages[2] / 1e9, state / 1e9, act / 1e9);
        /* pipeline sends (v 1: not overlapped): the shapes exchanged before each of the 2
         * exchanges per micro-batch, and the hop after the MTP stage carries 2 x b s h */
        double S = 1.0 * m.seq_len * m.hidden * 2.0;
        double pp_more = 2.0 * cc_p2p_time(&c3, 1, 8, 24.0) +
                         2.0 * (cc_p2p_time(&c3, 1, 8, 2.0 * S) - cc_p2p_time(&c3, 1, 8, S));
        REL(ea.t_pp - eb.t_pp, (double)ea.m * pp_more, 1e-9,
            "... pipeline sends: %lld micro-batches x %.1f us more", ea.m, pp_more * 1e6);
        /* compute: rank 1 paces A with its MTP layer, which costs less than the MTP layer and
         * its logits on the last stage of pp 2 */
        struct cc_layout l2 = {1, 2, 8, 1, 1, 1, 0, 1, CC_RC_NONE};
        struct cc_eval e2, e20;
        static struct cc_pplan p2, p20;
        cc_pplan_parse("Et*16|t*16,mL", &p2, err, sizeof err);
        cc_pplan_parse("Et*16|t*16,L", &p20, err, sizeof err);
        hb2.plan = &p2, hc.plan = &p20;
        cc_layout_eval(&mm, &c3, &hb2, &l2, &e2);
        cc_layout_eval(&m0, &c3, &hc, &l2, &e20);
        double da = ea.t_compute - ec.t_compute, d2 = e2.t_compute - e20.t_compute;
        ok(da > 0 && da < d2 && ea.t_compute / ea.m > eb.t_compute / eb.m,
           "... compute per micro-batch: the MTP layer on rank 1 (+%.4f s a step) without its "
           "logits (+%.4f s with them on the last of pp 2)", da, d2);
        ha.plan = &pa, l3.rc = CC_RC_FULL, l3.zero = 3;
        cc_layout_eval(&mm, &c3, &ha, &l3, &ea);
        is_int(ea.z3_units, 18, "... ZeRO 3: rank 1's 16 layers, the MTP layer and its embedding copy");
        /* pp 4, v 2: the MTP layer alone in rank 2's second chunk; the overlapped sends hide
         * behind compute, the blocking shape exchanges (2 x v per micro-batch) do not */
        cc_pplan_parse("Et*6|t*5|t*5|t*5|t*6|t*5|m|L", &pa, err, sizeof err);
        cc_pplan_parse("Et*6|t*5|t*5|t*5|t*6|t*5||mL", &pb, err, sizeof err);
        ha.plan = &pa, hb2.plan = &pb;
        struct cc_layout lv2 = {1, 4, 4, 1, 1, 2, 0, 1, CC_RC_NONE};
        struct cc_cluster c2;
        cc_cluster_quick(&c2, 16, 8, cc_gpu_lookup("b200"), err, sizeof err);
        cc_layout_eval(&mm, &c2, &ha, &lv2, &ea);
        cc_layout_eval(&mm, &c2, &hb2, &lv2, &eb);
        ok(ea.feasible && ea.mtp_rank == 2 && eb.feasible && eb.mtp_rank == -1 && eb.t_pp == 0.0,
           "pp 4, v 2: MTP on rank 2's second chunk, standalone; on the last, the sends all "
           "hidden (%s %s)", ea.why, eb.why);
        REL(ea.t_pp, (double)ea.m * 4.0 * cc_p2p_time(&c2, 1, 4, 24.0), 1e-12,
            "... standalone: the shape exchanges alone show (%.4f s)", ea.t_pp);
        /* the fullest stage: rank 1 with 30 layers and the MTP layer; pp 3 lists no middle
         * stage beside it (the same rank) */
        cc_pplan_parse("Et*2|t*30,m|L", &pa, err, sizeof err);
        l3.rc = CC_RC_NONE, l3.zero = 1;
        cc_layout_eval(&mm, &c3, &ha, &l3, &ea);
        ok(ea.mem_stage == 3 && ea.mem_stages[2] == 0.0 && ea.mem_stages[3] == ea.mem_total,
           "Et*2|t*30,m|L: the MTP stage the fullest (%.2f GB), no middle stage listed beside it",
           ea.mem_total / 1e9);
        c3.mem_bytes = 10e9;
        cc_layout_eval(&mm, &c3, &ha, &l3, &ea);
        ok(!ea.feasible && strstr(ea.why, "GB per GPU on stage 1 (the MTP layers'), more than"),
           "... in 10 GB: %s", ea.why);
    }
    /* block recomputation, the first rcl layers of each chunk: rank 0's chunks of 8 and 0
     * layers recompute 2 and 0, so 7 steps of its first chunk in flight keep 2 layers' input
     * alone: 14 layers' worth of the difference less than without recomputation */
    lv.vpp = 2, lv.rc = CC_RC_BLOCK, lv.rcl = 2;
    struct cc_layout ln = lv;
    ln.rc = CC_RC_NONE, ln.rcl = 0;
    struct cc_eval en;
    cc_layout_eval(&m, &c, &hp, &lv, &e1);
    cc_layout_eval(&m, &c, &hp, &ln, &en);
    double ar = cc_model_layer_act_bytes(&m, 1, m.seq_len, 1, 0, CC_RC_FULL);
    ok(e1.feasible && e1.rcl == 2, "rc=block,rcl=2 with it: costed %s", e1.why);
    REL(en.mem_stages[0] - e1.mem_stages[0], 14.0 * (an - ar), 1e-12,
        "... the first stage holds 7 x 2 layers' activations fewer (%.2f GB < %.2f GB)",
        e1.mem_stages[0] / 1e9, en.mem_stages[0] / 1e9);
    /* the even layout given: block costs as the even split does, rcl given or found */
    is_int(cc_pplan_parse("Et*4|(t*4|)*6t*4L", &u, err, sizeof err), CC_OK,
           "parse Et*4|(t*4|)*6t*4L again");
    for (int rcl = 2; rcl >= 0; rcl -= 2) {
        lv.rcl = rcl;
        cc_layout_eval(&m, &c, &hb, &lv, &e0);
        cc_layout_eval(&m, &c, &hp, &lv, &e1);
        ok(e1.feasible && e1.t_step == e0.t_step && e1.mem_total == e0.mem_total &&
               e1.rcl == e0.rcl && e1.hw_tflops == e0.hw_tflops,
           "Et*4|(t*4|)*6t*4L with rc=block%s costs as v 2 (rcl %d, %d; %.4f s, %.4f s)",
           rcl ? ",rcl=2" : " (the fewest that fit)", e1.rcl, e0.rcl, e1.t_step, e0.t_step);
    }
    lv.rc = CC_RC_NONE, lv.rcl = 0;
    /* a middle stage of 2 layers before one of 27: the later one is costed, with the 27
     * layers x 2 micro-batches in flight it holds itself, not the earlier one's 2 x 3 */
    is_int(cc_pplan_parse("Et*2|t*2|t*27|tL", &u, err, sizeof err), CC_OK,
           "parse Et*2|t*2|t*27|tL");
    struct cc_layout l27 = {1, 4, 4, 1, 1, 1, 0, 1, CC_RC_NONE};
    cc_layout_eval(&m, &c, &hp, &l27, &e1);
    REL(e1.mem_act, an * 27.0 * 2.0, 1e-12,
        "Et*2|t*2|t*27|tL: stage %d costed with stage %d's layers in flight, 27 x 2 (%.2f GB)",
        e1.mid_stage, e1.mid_inflight_stage, e1.mem_act / 1e9);
    ok(e1.mid_stage == 2 && e1.mid_inflight_stage == 2, "... both stage 2 (%d, %d)", e1.mid_stage,
       e1.mid_inflight_stage);
    /* the search follows it: every pipeline at v = 8 / pp */
    struct cc_search s;
    cc_pplan_parse("Et*4|(t*4|)*6t*4L", &u, err, sizeof err);
    if (cc_layout_search(&m, &c, &hp, &s) == CC_OK && s.nbest > 0) {
        int okv = 1, piped = 0;
        for (int k = 0; k < s.nbest; k++)
            if (s.best[k].layout.pp > 1) {
                piped++;
                okv &= s.best[k].layout.vpp == 8 / s.best[k].layout.pp && s.best[k].eval.plan == &u;
            }
        ok(okv && piped > 0, "the search: %d pipelines, each at v = 8 / pp under the layout", piped);
        cc_search_free(&s);
    } else
        ok(0, "search with a pipeline layout: %s", s.why_none);
}

/* The filled pipeline layout (fill=1, cc_pplan_fill): the rule behind NVIDIA's recipe maps for
 * 61-layer models, its text parsing back to the same stages, its costing the same as the
 * explicit layout, and the search trying it only where no even split runs. */
static void test_pipeline_fill(void)
{
    static struct cc_pplan f, p;
    char err[256] = "";
    /* Megatron-Bridge's DeepSeek-V3 map: (4,1) 16,16,16,13; (8,1) 8 x 7, 5; (16,1) and (4,4)
     * 4 x 15, 1; the MTP layer and the loss on the last */
    const struct { int pp, v, mtp; const char *text; int each, last; } want[] = {
        {4, 4, 1, "Et*4|(t*4|)*14tmL", 4, 1},
        {16, 1, 1, "Et*4|(t*4|)*14tmL", 4, 1},
        {4, 1, 1, "Et*16|(t*16|)*2t*13mL", 16, 13},
        {8, 1, 0, "Et*8|(t*8|)*6t*5L", 8, 5},
        {3, 1, 2, "Et*21|t*21|t*19m*2L", 21, 19},
        {2, 1, 0, "Et*31|t*30L", 31, 30},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int n = want[i].pp * want[i].v, same = 1;
        err[0] = 0;
        cc_status st = cc_pplan_fill(&f, 61, want[i].mtp, want[i].pp, want[i].v, err, sizeof err);
        for (int k = 0; k < n - 1; k++)
            same &= f.layers[k] == want[i].each;
        ok(st == CC_OK && strcmp(f.text, want[i].text) == 0 && f.n == n && same &&
               f.layers[n - 1] == want[i].last && f.total == 61 && f.mtp == want[i].mtp &&
               f.mtp_stage == (want[i].mtp ? n - 1 : -1),
           "61 layers, pp %d, v %d, %d MTP: %s (%s)", want[i].pp, want[i].v, want[i].mtp, f.text,
           err);
        int back = cc_pplan_parse(f.text, &p, err, sizeof err) == CC_OK && p.n == f.n &&
                   p.total == f.total && p.mtp == f.mtp && p.mtp_stage == f.mtp_stage;
        for (int k = 0; back && k < n; k++)
            back &= p.layers[k] == f.layers[k];
        ok(back, "... its text parses back to the same stages %s", err);
    }
    const struct { int layers, pp, v; const char *want; } bad[] = {
        {61, 1, 4, "needs pp >= 2"},
        {61, 8, 4, "31 stages of 2 layers leave none of the 61 for the last"},
        {64, 4, 4, "pp x v = 16 divides the 64 layers"},
        {4096, 64, 17, "pp x v = 1088 is more than 1024 stages"},
        {61, 64, 16, "pp x v = 1024 stages are more than the 61 layers"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        ok(cc_pplan_fill(&f, bad[i].layers, 0, bad[i].pp, bad[i].v, err, sizeof err) == CC_EUSAGE &&
               strstr(err, bad[i].want),
           "%d layers, pp %d, v %d refused: %s", bad[i].layers, bad[i].pp, bad[i].v, err);
    }

    /* fill=1 costs exactly as the same layout given (--pipeline-layout) */
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb, hp;
    struct cc_eval e0, e1;
    preset("deepseek-v3", &m);
    m.prec = CC_PREC_FP8, m.global_batch = 4096; /* Megatron-Bridge's GB200 recipe */
    cc_cluster_quick(&c, 256, 4, cc_gpu_lookup("gb200"), err, sizeof err);
    cc_habits_default(&hb);
    hb.grad_bytes = 2; /* --grad-reduce bf16 */
    cc_pplan_parse("Et*4|(t*4|)*14tmL", &p, err, sizeof err);
    hp = hb, hp.plan = &p;
    struct cc_layout lg = {1, 4, 64, 1, 1, 4, 0, 1, CC_RC_NONE, 0, 0, 0, 64};
    struct cc_layout lf = lg;
    lf.fill = 1;
    cc_layout_eval(&m, &c, &hp, &lg, &e0);
    cc_layout_eval(&m, &c, &hb, &lf, &e1);
    ok(e0.feasible && e1.feasible && e1.t_step == e0.t_step && e1.mem_total == e0.mem_total &&
           e1.mem_stages[0] == e0.mem_stages[0] && e1.mem_stages[1] == e0.mem_stages[1] &&
           e1.layers_first == 16 && e1.layers_last == 13 && e1.plan == NULL,
       "DeepSeek-V3 pp 4, v 4: fill=1 costs as Et*4|(t*4|)*14tmL given (%.4f s, %.4f s) %s",
       e1.t_step, e0.t_step, e1.why);
    /* a mixed model's middle stages: the one with the most expert layers (stage 2 here) is
     * costed with the second's micro-batches in flight, written either way */
    {
        static struct cc_pplan q;
        struct cc_habits hq = hb;
        struct cc_cluster cb;
        struct cc_eval ea, eb;
        cc_cluster_quick(&cb, 256, 8, cc_gpu_lookup("b200"), err, sizeof err);
        cc_pplan_parse("Et|t*29|t*29|t*2mL", &q, err, sizeof err);
        hq.plan = &q;
        struct cc_layout la = {2, 4, 32, 1, 2, 1, 1, 1, CC_RC_BLOCK, 0, 0, 0, 64, 1, 2};
        struct cc_layout lb = la;
        lb.lfirst = lb.llast = 0;
        for (int k = 0; k < 2; k++) {
            la.rc = lb.rc = k ? CC_RC_NONE : CC_RC_BLOCK;
            cc_layout_eval(&m, &cb, &hb, &la, &ea);
            cc_layout_eval(&m, &cb, &hq, &lb, &eb);
            ok(ea.t_step == eb.t_step && ea.mem_stages[2] == eb.mem_stages[2] && ea.rcl == eb.rcl &&
                   eb.mid_stage == 2 && eb.mid_inflight_stage == 1,
               "DeepSeek-V3 pp 4, first=1,last=2 as Et|t*29|t*29|t*2mL, rc=%s: the same (stage %d "
               "costed with stage %d's in flight; %.2f GB, %.2f GB)", k ? "none" : "block",
               eb.mid_stage, eb.mid_inflight_stage, ea.mem_stages[2] / 1e9, eb.mem_stages[2] / 1e9);
        }
    }
    ok(cc_layout_plan(&m, &hb, &lf, &f) == &f && strcmp(f.text, "Et*4|(t*4|)*14tmL") == 0 &&
           cc_layout_plan(&m, &hp, &lg, &f) == &p && cc_layout_plan(&m, &hb, &lg, &f) == NULL,
       "cc_layout_plan: the filled layout, the given one, or none");
    lf.rc = lg.rc = CC_RC_BLOCK;
    cc_layout_eval(&m, &c, &hb, &lf, &e1);
    cc_layout_eval(&m, &c, &hp, &lg, &e0);
    ok(e1.feasible && e1.t_step == e0.t_step && e1.mem_total == e0.mem_total && e1.rcl == e0.rcl &&
           e1.rcl >= 1 && e1.rcl <= 3,
       "rc=block with fill=1 costs as with the layout given (rcl %d; %.4f s, %.4f s) %s", e1.rcl,
       e1.t_step, e0.t_step, e1.why);
    lf.rc = lg.rc = CC_RC_NONE;
    cc_layout_eval(&m, &c, &hp, &lf, &e1);
    ok(!e1.feasible && strstr(e1.why, "fill=1 and an explicit pipeline layout (--pipeline-layout) do "
                              "not go together"), "fill=1 with --pipeline-layout: %s", e1.why);
    lf.vpp = 8;
    cc_layout_eval(&m, &c, &hb, &lf, &e1);
    ok(!e1.feasible && strstr(e1.why, "fill=1: 31 stages of 2 layers leave none of the 61"),
       "fill=1 at pp 4, v 8: %s", e1.why);

    /* the search: DeepSeek-V3 (61 layers, 61 + 2 = 63 slots) gets filled layouts at v > 1;
     * llama3-8b (32 layers) only where neither 32 nor 34 divides by pp x v */
    struct cc_search s;
    hb.zero_min = hb.zero_max = 1, hb.recompute = CC_RC_NONE, hb.mb_max = 1;
    if (cc_layout_search(&m, &c, &hb, &s) == CC_OK && s.nbest > 0) {
        int filled = 0, good = 1;
        for (int k = 0; k < s.nbest; k++) {
            const struct cc_layout *l = &s.best[k].layout;
            if (!l->fill)
                continue;
            filled++;
            long long S = (long long)l->pp * l->vpp;
            good &= l->vpp > 1 && m.layers % S != 0 && (m.layers + 2) % S != 0 && !l->split &&
                    l->lfirst == 0;
        }
        ok(filled > 0 && good, "DeepSeek-V3 on 256 GB200: %d of %d layouts filled, each at v > 1 "
           "where neither 61 nor 63 divides by pp x v", filled, s.nbest);
        cc_search_free(&s);
    } else
        ok(0, "search: %s", s.why_none);
    preset("llama3-8b", &m);
    cc_cluster_quick(&c, 64, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    if (cc_layout_search(&m, &c, &hb, &s) == CC_OK && s.nbest > 0) {
        int good = 1, filled = 0;
        for (int k = 0; k < s.nbest; k++) {
            const struct cc_layout *l = &s.best[k].layout;
            long long S = (long long)l->pp * l->vpp;
            filled += l->fill;
            good &= !l->fill || (32 % S != 0 && (l->pp < 3 || 34 % S != 0));
        }
        ok(good, "llama3-8b on 64 H100: filled layouts (%d) only where no even split runs", filled);
        cc_search_free(&s);
    } else
        ok(0, "search: %s", s.why_none);
}

/* Expert tensor parallelism (Megatron-Core --expert-tensor-parallel-size): each expert split
 * over etp ranks that gather the tokens routed to them; by hand on Mixtral 8x7B. */
static void test_expert_tp(void)
{
    struct cc_model m;
    struct cc_cluster c;
    struct cc_habits hb;
    struct cc_eval e1, e2;
    char err[256] = "", buf[160];
    int dpg;
    struct cc_layout p = {0};
    is_int(cc_layout_parse("tp=2,ep=4,etp=2", &p, &dpg, err, sizeof err), CC_OK, "parse etp %s", err);
    ok(p.etp == 2 && strstr(cc_layout_format(&p, buf, sizeof buf), ",ep=4,etp=2"),
       "... and format it back (%s)", buf);
    preset("mixtral-8x7b", &m);
    cc_cluster_quick(&c, 16, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_habits_default(&hb);
    struct cc_layout l1 = {2, 1, 8, 1, 1, 1, 1, 1, CC_RC_NONE, 0, 0, 0, 4, 0, 0, 1};
    struct cc_layout l2 = l1;
    l2.etp = 2;
    cc_layout_eval(&m, &c, &hb, &l1, &e1);
    cc_layout_eval(&m, &c, &hb, &l2, &e2);
    double h = m.hidden, s = m.seq_len, Pe = 8.0 * 3 * h * m.moe_ffn;
    /* weights: 32 layers' routed experts over ep 4, then halved again, at 2 bytes */
    REL(e1.mem_weights - e2.mem_weights, 32.0 * Pe / 4 / 2 * 2.0, 1e-9,
        "etp 2 halves the experts' weights on each GPU (%.2f -> %.2f GB)", e1.mem_weights / 1e9,
        e2.mem_weights / 1e9);
    /* activations: each rank keeps the permuted inputs of twice the routed copies (2 x 2h a
     * copy, 2 copies a token, s/tp tokens), the inner activations unchanged */
    REL(e2.mem_act - e1.mem_act, 32.0 * 2 * 2.0 * h * (s / 2), 1e-9,
        "... and keeps twice the permuted inputs");
    is_int(e2.edp, 2, "tp 2 x dp 8 = 16 ranks over ep 4 x etp 2: 2 hold each expert slice, "
           "which reduce its gradients");
    /* communication with ep 1: only the etp pair, all-gather and reduce-scatter of the routed
     * tokens gathered over 2 GPUs, forward and backward, 32 layers, every micro-batch; on the
     * compute stream, so with the tensor-parallel collectives (no all-to-all to overlap) */
    struct cc_layout l3 = l1, l4 = l1;
    l3.ep = 1, l3.etp = 2, l4.ep = 1;
    cc_layout_eval(&m, &c, &hb, &l3, &e2);
    cc_layout_eval(&m, &c, &hb, &l4, &e1);
    double routed = 1.0 * (s / 2) * 2 * h * 2.0 * 2; /* a rank's copies, gathered over 2 */
    double pair = cc_comm_time(&c, CC_ALLGATHER, 2, 2, routed) +
                  cc_comm_time(&c, CC_REDUCESCATTER, 2, 2, routed);
    REL(e2.t_tp - e1.t_tp, e2.m * 32.0 * 2.0 * pair, 1e-12,
        "ep 1, etp 2: the etp pair forward and backward per layer, with tp (%.4f s)",
        e2.t_tp - e1.t_tp);
    is_near(e2.t_ep, 0.0, 0, "... and no expert all-to-all");
    /* experts with biases (a gelu model) split over etp: Megatron-Core refuses */
    struct cc_model g = m;
    g.mlp = CC_MLP_GELU;
    struct cc_layout l5 = l1;
    l5.etp = 2;
    cc_layout_eval(&g, &c, &hb, &l5, &e2);
    ok(!e2.feasible && strstr(e2.why, "only with etp 1"), "etp 2 with gelu experts: %s", e2.why);
    l2.ep = 8, l2.etp = 4;
    cc_layout_eval(&m, &c, &hb, &l2, &e2);
    ok(!e2.feasible && strstr(e2.why, "ep 8 x etp 4 does not divide tp*cp*dp = 16"),
       "ep 8 x etp 4 on 16 ranks: %s", e2.why);
    preset("llama3-8b", &m);
    struct cc_layout ld = {2, 1, 8, 1, 1, 1, 1, 1, CC_RC_NONE, 0, 0, 0, 1, 0, 0, 2};
    cc_layout_eval(&m, &c, &hb, &ld, &e2);
    ok(!e2.feasible && strstr(e2.why, "etp 2: model 'llama3-8b' has no experts"),
       "etp on a dense model: %s", e2.why);
}

/* The chance that k draws from a items miss x of them, by hand: C(a - x, k) / C(a, k). */
static double miss_by_hand(double a, double x, int k)
{
    double p = 1.0;
    for (int i = 0; i < k; i++)
        p *= (a - x - i) / (a - i);
    return p;
}

/* Group-limited routing, the spread of a token over GPUs and nodes, and the flex dispatcher
 * (DeepEP, HybridEP) that sends a token once per GPU and per node. */
static void test_dispatch(void)
{
    struct cc_model m;
    struct cc_cluster c;
    char err[256];
    preset("deepseek-v3", &m); /* 256 experts, top 8, 8 groups, 4 per token */
    ok(m.route_groups == 8 && m.route_group_topk == 4, "deepseek-v3: 8 groups of experts, 4 "
       "chosen per token (its config's n_group, topk_group)");
    /* 8 nodes of one group each: a node is touched when its group is chosen (4 of 8) and one
     * of the token's 8 experts, drawn from the chosen groups' 128, is among its 32 */
    double d8 = 4.0 * (1.0 - miss_by_hand(128, 32, 8));
    REL(cc_model_route_spread(&m, 8), d8, 1e-12, "8 nodes: %.3f of them per token (at most 4)", d8);
    /* 64 GPUs of 4 experts, 8 per group: chosen with the group, then hit by a draw */
    double d64 = 64.0 * 0.5 * (1.0 - miss_by_hand(128, 4, 8));
    REL(cc_model_route_spread(&m, 64), d64, 1e-12, "64 GPUs: %.3f of them per token", d64);
    /* 4 bins of 2 groups: 1 of them chosen (40/70) or 2 (15/70) */
    double d4 = 4.0 * (40.0 / 70 * (1.0 - miss_by_hand(128, 32, 8)) +
                       15.0 / 70 * (1.0 - miss_by_hand(128, 64, 8)));
    REL(cc_model_route_spread(&m, 4), d4, 1e-12, "4 bins of 2 groups: %.3f per token", d4);
    struct cc_model u = m;
    u.route_groups = u.route_group_topk = 0; /* unlimited: 8 of all 256 */
    double u8 = 8.0 * (1.0 - miss_by_hand(256, 32, 8));
    REL(cc_model_route_spread(&u, 8), u8, 1e-12, "unlimited routing, 8 nodes: %.3f per token "
        "(more than the limited %.3f)", u8, d8);
    ok(cc_model_route_spread(&m, 1) == 1.0 && u8 > d8 && d8 <= 4.0 && d64 <= 8.0,
       "one bin: 1; the limit only narrows the spread");
    /* many groups: the hypergeometric terms (C(1024, 512) overflows a double) stay finite */
    struct cc_model w = m;
    w.experts = 2048, w.route_groups = 1024, w.route_group_topk = 512;
    double w8 = cc_model_route_spread(&w, 8), wu;
    w.route_groups = w.route_group_topk = 0;
    wu = cc_model_route_spread(&w, 8);
    ok(isfinite(w8) && w8 > 0.0 && w8 <= 8.0 && fabs(w8 - wu) < 0.05,
       "1,024 groups, 512 chosen, 8 bins: %.4f, finite, near the unlimited %.4f", w8, wu);
    /* the all-to-all dispatcher costs as before; DeepEP within a node sends a token once per
     * GPU its experts are on */
    cc_cluster_quick(&c, 1024, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    double bytes = cc_expert_a2a_bytes(&m, 1, 4096, 1); /* 4096 tokens, 8 copies of h */
    is_near(cc_dispatch_time(&m, &c, CC_DISPATCH_ALLTOALL, 1, 4096, 1, 8, 1),
            2.0 * cc_comm_time(&c, CC_ALLTOALL, 8, 8, bytes), 1e-15,
            "alltoall, ep 8 in a node: two all-to-alls of 8 copies a token");
    double gpu8 = cc_model_route_spread(&m, 8); /* 8 GPUs of 32 experts: the same spread */
    is_near(cc_dispatch_time(&m, &c, CC_DISPATCH_DEEPEP, 1, 4096, 1, 8, 1),
            2.0 * cc_comm_time(&c, CC_ALLTOALL, 8, 8, bytes / 8 * gpu8), 1e-15,
            "deepep, ep 8 in a node: %.2f copies a token, one per GPU", gpu8);
    /* across 8 nodes the NICs set the pace: 3.17 copies a token leave the node (the other
     * nodes of the 3.62 touched) against the all-to-all's 7 of 8 */
    double a = cc_dispatch_time(&m, &c, CC_DISPATCH_ALLTOALL, 1, 4096, 1, 64, 1);
    double f = cc_dispatch_time(&m, &c, CC_DISPATCH_DEEPEP, 1, 4096, 1, 64, 1);
    REL(f / a, d8 * 7.0 / 8.0 / 7.0, 0.01, "deepep, ep 64 over 8 nodes: %.3f of the all-to-all's "
        "time (%.2f ms against %.2f ms), the share of copies that leave the node",
        f / a, f * 1e3, a * 1e3);
    is_near(cc_dispatch_time(&m, &c, CC_DISPATCH_HYBRIDEP, 1, 4096, 1, 64, 1), f, 0,
            "hybridep: costed as deepep");
    is_near(cc_dispatch_time(&m, &c, CC_DISPATCH_DEEPEP, 1, 4096, 1, 1, 1), 0, 0, "ep 1: none");
    /* with expert tensor parallelism the flex dispatcher's group is the ep x etp adjacent
     * ranks and every etp copy of an expert gets the token: Mixtral's 8 experts on ep 4 (2 a
     * GPU), etp 2: 4 (1 - C(6,2)/C(8,2)) = 1.857 GPUs a token of 4, times 2 copies */
    struct cc_model mx;
    preset("mixtral-8x7b", &mx);
    double sx = 4.0 * (1.0 - 15.0 / 28.0);
    REL(cc_model_route_spread(&mx, 4), sx, 1e-12, "Mixtral, ep 4: %.3f GPUs a token", sx);
    double bx = cc_expert_a2a_bytes(&mx, 1, 4096, 2);
    is_near(cc_dispatch_time(&mx, &c, CC_DISPATCH_DEEPEP, 1, 4096, 2, 4, 2),
            2.0 * cc_comm_time(&c, CC_ALLTOALL, 8, 8, bx / 2 * sx * 2), 1e-15,
            "deepep, ep 4 x etp 2: one exchange over the 8 ranks, %.2f copies a token", sx * 2);
    is_near(cc_dispatch_time(&mx, &c, CC_DISPATCH_DEEPEP, 1, 4096, 2, 1, 2),
            2.0 * cc_comm_time(&c, CC_ALLTOALL, 2, 2, bx / 2 * 2), 1e-15,
            "deepep, ep 1 x etp 2: each token to both copies of its experts");
    struct cc_habits ht;
    cc_habits_default(&ht);
    struct cc_layout lx = {2, 1, 8, 1, 1, 1, 1, 1, CC_RC_FULL, 0, 0, 0, 4, 0, 0, 2};
    struct cc_eval xa, xd;
    struct cc_cluster c16;
    cc_cluster_quick(&c16, 16, 8, cc_gpu_lookup("h100-sxm"), err, sizeof err);
    cc_layout_eval(&mx, &c16, &ht, &lx, &xa);
    ht.dispatcher = CC_DISPATCH_DEEPEP;
    cc_layout_eval(&mx, &c16, &ht, &lx, &xd);
    ok(xa.edp > 0 && xd.t_tp < xa.t_tp && xd.t_compute == xa.t_compute,
       "Mixtral tp 2, ep 4, etp 2: no gather over etp after the flex dispatch (tensor-parallel "
       "%.3f s against %.3f s)", xd.t_tp, xa.t_tp);
    /* a layout's step: the same compute, a shorter expert exchange */
    struct cc_habits hb, hd;
    cc_habits_default(&hb);
    hd = hb, hd.dispatcher = CC_DISPATCH_DEEPEP;
    m.prec = CC_PREC_FP8, m.global_batch = 15360;
    struct cc_layout l = {1, 16, 64, 1, 1, 1, 0, 1, CC_RC_FULL, 0, 0, 0, 64, 4, 1};
    struct cc_eval ea, ed;
    cc_layout_eval(&m, &c, &hb, &l, &ea);
    cc_layout_eval(&m, &c, &hd, &l, &ed);
    ok(ea.feasible && ed.feasible && ea.t_compute == ed.t_compute && ed.t_ep < 0.5 * ea.t_ep &&
           ed.t_step < ea.t_step,
       "DeepSeek-V3 on 1024 H100, ep 64: the expert exchange %.1f s with deepep, %.1f s with "
       "the all-to-all; compute alike", ed.t_ep, ea.t_ep);
    /* the model's rules */
    u = m, u.route_groups = 6;
    ok(cc_model_check(&u, err, sizeof err) != CC_OK && strstr(err, "the groups must divide the 256 experts"),
       "6 groups of 256 experts refused: %s", err);
    u = m, u.route_group_topk = 0;
    ok(cc_model_check(&u, err, sizeof err) != CC_OK && strstr(err, "give both"),
       "groups without a count chosen refused: %s", err);
    u = m, u.route_group_topk = 9;
    ok(cc_model_check(&u, err, sizeof err) != CC_OK && strstr(err, "at most router_groups of them be chosen"),
       "9 of 8 groups refused: %s", err);
    u = m, u.route_groups = 128, u.route_group_topk = 3; /* 3 groups of 2 experts: 6 < 8 */
    ok(cc_model_check(&u, err, sizeof err) != CC_OK && strstr(err, "hold at least topk 8"),
       "top 8 from 3 groups of 2 experts refused: %s", err);
    u = m, u.route_group_topk = 3; /* Megatron-Core takes it: top 8 among 3 x 32 */
    ok(cc_model_check(&u, err, sizeof err) == CC_OK, "top 8 over 3 of 8 groups taken");
}

/* why the best beats another: the components that differ most, as many as it takes to come
 * within a fifth of the difference (405B on 16,384 H100: more bubble, but less compute, less
 * data-parallel and less tensor-parallel time) */
static void test_behind_why(void)
{
    struct cc_eval b = {0}, o = {0};
    char why[256];
    b.t_compute = 5.0, b.t_tp = 0.683, b.t_bubble = 2.0, b.t_dp = 0.098;
    o.t_compute = 5.691, o.t_tp = 0.854, o.t_bubble = 0.966, o.t_dp = 0.631;
    b.t_step = b.t_compute + b.t_tp + b.t_bubble + b.t_dp;
    o.t_step = o.t_compute + o.t_tp + o.t_bubble + o.t_dp;
    b.mem_total = o.mem_total = 1e9;
    is_str(cc_layout_behind_why(&b, &o, why, sizeof why),
           "0.691 s less compute, 0.533 s less data-parallel gradient reduction, 0.171 s less "
           "tensor-parallel communication, 1.034 s more pipeline bubble",
           "behind: four components, what the best spends less on first");
    o.t_bubble = 2.0, o.t_dp = b.t_dp, o.t_tp = b.t_tp; /* compute alone */
    o.t_step = o.t_compute + o.t_tp + o.t_bubble + o.t_dp;
    o.mem_total = 0.5e9;
    is_str(cc_layout_behind_why(&b, &o, why, sizeof why),
           "0.691 s less compute (though that one needs less memory)",
           "behind: one component explains it; the memory remark");
}

int main(void)
{
    test_params();
    test_flops();
    test_activations();
    test_pieces();
    test_comm();
    test_inputs();
    test_fit_robust();
    test_group_per_node();
    test_gemm();
    test_eval();
    test_zero3();
    test_comm_parts();
    test_llama3_meta();
    test_gqa_replicated();
    test_fp8_cache();
    test_ties();
    test_embed_sync();
    test_vocab_pad();
    test_search();
    test_block_recompute();
    test_offload();
    test_moe();
    test_moe_mixed();
    test_mla();
    test_uneven_first_last();
    test_mtp_costs();
    test_rc_modules();
    test_pipeline_layout();
    test_pipeline_fill();
    test_expert_tp();
    test_dispatch();
    test_uneven();
    test_megatron();
    test_nemo_fp8();
    test_blackwell_heldout();
    test_behind_why();
    return tap_done();
}
