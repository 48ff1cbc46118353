/* cluster.c - GPU table, topology reader and the communication model (the fits to measured
 * results are in fits.c). */
#include "layout/cluster.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "core/text.h"
#include "topo/topo.h"

/* Dense peaks from vendor data sheets (A100, H100, H200, B200, L40S, V100 NVIDIA; MI250X,
 * MI300X AMD; an MI250X is listed per GCD, the device a rank sees). Bus bandwidths: NVLink/NVSwitch all-reduce busbw as nccl-tests reports it on
 * one node (ring, no NVLS), and across nodes with 8 NICs per node of the era (8x HDR 200 Gb/s
 * for A100, 8x NDR 400 Gb/s for H100/H200/B200/MI300X); last column: SMs (AMD: compute units),
 * for the GEMM wave model (layout/gemm.h); see docs/layout.md. Memory in GiB: an "80 GB" A100
 * holds 80 GiB (nvidia-smi: 81920 MiB), an H100 79.6 (81559 MiB, rounded to 80 here); the
 * L40S's 48 GB of GDDR6 show as 46068 MiB, 45 GiB. */
/* Where the default 16-bit efficiency stands on each GPU (see results/layout-heldout.md). */
#define EFF16_HOPPER "fitted on A100 SXM; LLM Foundry's PyTorch FSDP runs on H100 SXM fit " \
                     "--efficiency 0.58 --attn-efficiency 0.32 (Megatron-Core's H100 " \
                     "scaling runs agree within 11%)"
#define EFF16_OTHER "fitted on A100 SXM at its data-sheet peak, not checked here"
const char cc_eff16_unchecked[] = EFF16_OTHER;
const char cc_eff16_hopper[] = EFF16_HOPPER;

const struct cc_gpu_spec cc_gpu_table[] = {
    {"gh200", "gh200", NULL, "NVIDIA GH200", {989, 989, 1979}, 96, 4000, 370, 45, 132, cc_eff16_hopper, 0, 0, 450, 480},
    {"h200-nvl", "h200", "nvl", "NVIDIA H200 NVL", {835, 835, 1670}, 141, 4800, 50, 185, 132, cc_eff16_hopper, 0, 0, 50, 128},
    {"h200", "h200", NULL, "NVIDIA H200 SXM", {989, 989, 1979}, 141, 4800, 370, 370, 132, cc_eff16_hopper, 0, 8, 50, 256},
    {"h100-nvl", "h100", "nvl", "NVIDIA H100 NVL", {835, 835, 1670}, 93.5, 3938, 50, 185, 132, cc_eff16_hopper, 0, 0, 50, 128},
    {"h100-pcie", "h100", "pcie", "NVIDIA H100 PCIe", {756, 756, 1513}, 80, 2000, 50, 185, 114, cc_eff16_hopper, 0, 0, 50, 128},
    {"h100-sxm", "h100", NULL, "NVIDIA H100 SXM", {989, 989, 1979}, 80, 3350, 370, 370, 132, cc_eff16_hopper, 0, 8, 50, 256},
    {"a100-pcie-40g", "a100", "pcie 40g", "NVIDIA A100 PCIe 40GB", {312, 312, 0}, 40, 1555, 20, 185, 108, EFF16_OTHER, 0, 0, 25, 128},
    {"a100-pcie", "a100", "pcie", "NVIDIA A100 PCIe 80GB", {312, 312, 0}, 80, 1935, 20, 185, 108, EFF16_OTHER, 0, 0, 25, 128},
    {"a100-40g", "a100", "40g", "NVIDIA A100 SXM 40GB", {312, 312, 0}, 40, 1555, 230, 185, 108, NULL, 0, 8, 25, 128},
    {"a100-80g", "a100", NULL, "NVIDIA A100 SXM 80GB", {312, 312, 0}, 80, 2039, 230, 185, 108, NULL, 0, 8, 25, 128},
    /* Blackwell Ultra (NVIDIA's Blackwell Ultra architecture blog and GB300 NVL72 / DGX B300
     * data sheets, per GPU: 288 GB of HBM3e at 8 TB/s, 160 SMs; GB300 2.5/5 PFLOP/s dense
     * 16-bit/fp8 as GB200, B300 2.25/4.5 as B200; a ConnectX-8 800 Gb/s NIC per GPU, twice
     * NDR's rate; the rates within a node are B200's, none of it measured here) */
    {"gb300", "gb300", NULL, "NVIDIA GB300", {2500, 2500, 5000}, 288, 8000, 700, 740, 160, EFF16_OTHER, 1, 8, 225, 240},
    {"b300", "b300", NULL, "NVIDIA B300", {2250, 2250, 4500}, 288, 8000, 700, 740, 160, EFF16_OTHER, 1, 8, 50, 256},
    /* the GPU of a GB200 superchip (NVL72 data sheet, per GPU: 2.5/5 PFLOP/s dense, 186 GB,
     * 8 TB/s; a 400 Gb/s NIC per GPU, as in the B200 row) */
    {"gb200", "gb200", NULL, "NVIDIA GB200", {2500, 2500, 5000}, 186, 8000, 700, 370, 148, EFF16_OTHER, 1, 8, 225, 240},
    {"b200", "b200", NULL, "NVIDIA B200", {2250, 2250, 4500}, 180, 8000, 700, 370, 148, EFF16_OTHER, 1, 8, 50, 256},
    {"l40s", "l40s", NULL, "NVIDIA L40S", {362, 362, 733}, 45, 864, 20, 25, 142, EFF16_OTHER, 0, 0, 25, 128},
    {"v100-16g", "v100", "16g", "NVIDIA V100 SXM2 16GB", {0, 125, 0}, 16, 900, 130, 45, 80, EFF16_OTHER, 0, 0, 12, 128},
    {"v100", "v100", NULL, "NVIDIA V100 SXM2 32GB", {0, 125, 0}, 32, 900, 130, 45, 80, EFF16_OTHER, 0, 0, 12, 128},
    {"mi300x", "mi300x", NULL, "AMD Instinct MI300X", {1307, 1307, 2615}, 192, 5300, 300, 370, 304, EFF16_OTHER, 0, 8, 50, 128},
    {"mi250x", "mi250", NULL, "AMD Instinct MI250X (one GCD)", {191.5, 191.5, 0}, 64, 1600, 150, 90, 110, EFF16_OTHER, 0, 0, 25, 128},
    {NULL, NULL, NULL, NULL, {0, 0, 0}, 0, 0, 0, 0, 0, NULL, 0, 0, 0, 0},
};

static void normalise(const char *in, char *out, size_t len)
{
    size_t j = 0;
    for (; *in && j + 1 < len; in++)
        if (isalnum((unsigned char)*in))
            out[j++] = (char)tolower((unsigned char)*in);
    out[j] = 0;
}

/* Whether every space-separated word of `words` (NULL: none) is a substring of n. */
static int all_words(const char *n, const char *words)
{
    char w[32];
    while (words && *words) {
        size_t len = strcspn(words, " ");
        if (len && len < sizeof w) {
            memcpy(w, words, len);
            w[len] = 0;
            if (!strstr(n, w))
                return 0;
        }
        words += len + (words[len] == ' ');
    }
    return 1;
}

const struct cc_gpu_spec *cc_gpu_lookup(const char *text)
{
    char n[128], id[32];
    if (!text)
        return NULL;
    normalise(text, n, sizeof n);
    for (int i = 0; cc_gpu_table[i].id; i++) {
        normalise(cc_gpu_table[i].id, id, sizeof id);
        if (strcmp(n, id) == 0)
            return &cc_gpu_table[i];
    }
    for (int i = 0; cc_gpu_table[i].id; i++) {
        const struct cc_gpu_spec *g = &cc_gpu_table[i];
        char grace[40];
        /* a Grace superchip's GPU ("GB200" beside the "b200" row) has its own clocks and
         * memory: not the row of the board GPU it shares a name with */
        snprintf(grace, sizeof grace, "g%s", g->must);
        if (strstr(n, g->must) && all_words(n, g->also) && (g->must[0] == 'g' || !strstr(n, grace)))
            return g;
    }
    return NULL;
}

static void set_gpu(struct cc_cluster *c, const struct cc_gpu_spec *g)
{
    snprintf(c->gpu_name, sizeof c->gpu_name, "%s", g->name);
    for (int p = 0; p < CC_PREC_COUNT; p++)
        c->peak_flops[p] = g->tflops[p] * 1e12;
    c->mem_bytes = g->mem_gib * 1073741824.0;
    c->hbm_Bps = g->hbm_GBps * 1e9;
    c->sms = g->sms;
    c->intra_busbw_Bps = g->intra_GBps * 1e9;
    c->inter_node_Bps = g->inter_GBps * 1e9;
    c->eff16_note = g->eff16;
    c->blackwell = g->blackwell;
    c->host_Bps = g->host_GBps * 1e9;
    c->host_mem_bytes = g->host_gb * 1e9;
}

static void init_common(struct cc_cluster *c)
{
    memset(c, 0, sizeof *c);
    c->lat_intra_s = 10e-6; /* NCCL small-message all-reduce within a node, order of */
    c->lat_inter_s = 30e-6; /* ... and across nodes */
    c->hbm_Bps = 2e12;
    c->host_Bps = 25e9; /* a PCIe 4.0 x16 link, one direction */
    c->host_mem_bytes = 128e9; /* a DGX A100's 1 TB shared by 8 GPUs */
    c->eff16_note = cc_eff16_unchecked; /* a GPU the table does not know, until set_gpu */
}

int cc_cluster_per_host(const struct cc_cluster *c)
{
    return c->gpus_per_host > 0 && c->gpus_per_host < c->gpus_per_node ? c->gpus_per_host
                                                                       : c->gpus_per_node;
}

int cc_cluster_hosts(const struct cc_cluster *c)
{
    int ph = cc_cluster_per_host(c);
    return ph > 0 ? (c->gpus + ph - 1) / ph : c->nodes;
}

cc_status cc_cluster_quick(struct cc_cluster *c, int gpus, int gpus_per_node,
                           const struct cc_gpu_spec *gpu, char *err, size_t errlen)
{
    init_common(c);
    if (gpus < 1 || gpus_per_node < 1) {
        cc_errbuf(err, errlen, "--gpus '%d' and --gpus-per-node '%d' must be positive", gpus,
                  gpus_per_node);
        return CC_EINVAL;
    }
    if (gpus > gpus_per_node && gpus % gpus_per_node) {
        cc_errbuf(err, errlen, "--gpus '%d' is not a multiple of --gpus-per-node %d", gpus,
                  gpus_per_node);
        return CC_EINVAL;
    }
    if (gpus < gpus_per_node)
        gpus_per_node = gpus;
    set_gpu(c, gpu);
    /* a row whose rate across nodes is for nodes of 8 GPUs with a NIC each: as many NICs as
     * GPUs in nodes of another size (4-GPU hosts, a 72-GPU NVLink domain) */
    if (gpus > gpus_per_node && gpu->nic_gpus > 0)
        c->inter_node_Bps *= (double)gpus_per_node / gpu->nic_gpus;
    c->gpus = gpus;
    c->gpus_per_node = gpus_per_node;
    c->nodes = gpus / gpus_per_node;
    c->p2p_intra_Bps = c->intra_busbw_Bps;
    snprintf(c->name, sizeof c->name, "%d x %s (%d node%s of %d)", gpus, gpu->id, c->nodes,
             c->nodes == 1 ? "" : "s", gpus_per_node);
    snprintf(c->bw_source, sizeof c->bw_source, "built-in table for %s", gpu->id);
    return CC_OK;
}

/* ---- topology ------------------------------------------------------------------------------ */

/* A GPU model name from a file, as one printable line for a message (buf: at least 64). */
static const char *shown(char *buf, size_t len, const char *s)
{
    cc_text_copy(buf, len, s ? s : "(none)");
    return buf;
}

static double num(json_t *o, const char *key)
{
    json_t *x = json_object_get(o, key);
    return json_is_number(x) ? json_number_value(x) : 0.0;
}

/* A rate from a topology file: absent (0) or a plausible figure in GB/s (as on the command
 * line: at least 0.01). */
static int bad_rate(double v)
{
    return v < 0 || (v > 0 && v < 0.01) || v > 1e6;
}

cc_status cc_cluster_load_topology(struct cc_cluster *c, const char *path, int allow_unknown,
                                   char *err, size_t errlen)
{
    json_t *root = NULL;
    cc_status st;
    const char *model = NULL;
    double mem = 0, intra = 0, host = 0; /* host: host memory per GPU, the least of any node */
    int gpn = 0, hetero = 0, typed = 0; /* typed: model is the first GPU node type's */
    long long gpus_total = 0;

    init_common(c);
    /* the same reader and checks as every other use of a topology file (docs/topology.md) */
    if ((st = cc_topo_load(path, &root, err, errlen)) != CC_OK)
        return st;
    if (cc_topo_missing(root) > 0) /* a probe that failed on some nodes saved the others */
        cc_warn("topology '%s': %d node(s) could not be probed and are not described (see "
                "\"missing\"); planning with the nodes it describes", path, cc_topo_missing(root));
    st = CC_EINVAL;
    json_t *nodes = json_object_get(root, "nodes");
    size_t i;
    json_t *nd;
    json_array_foreach(nodes, i, nd) {
        json_t *gpus = json_object_get(nd, "gpus");
        json_t *cnt = json_object_get(nd, "count");
        long long count = cnt ? json_integer_value(cnt) : 1;
        long long ng = (long long)json_array_size(gpus);
        if (count > 1000000 || ng > 1024) {
            cc_errbuf(err, errlen, "topology '%s': nodes[%zu] has %lld nodes of %lld GPUs; "
                      "ccbench plans up to a million nodes of up to 1024 GPUs", path, i, count,
                      ng);
            goto done;
        }
        if (ng == 0)
            continue; /* a node type without GPUs (login, storage) */
        double nm = num(nd, "memory_bytes"); /* the host's memory (probe: hwloc's total) */
        if (nm > 0 && (host == 0 || nm / ng < host))
            host = nm / ng;
        json_t *g0 = json_array_get(gpus, 0), *gk;
        const char *m = json_string_value(json_object_get(g0, "model"));
        double gm = 0;
        size_t gi;
        json_array_foreach(gpus, gi, gk) { /* every GPU: one model, the smallest memory */
            const char *mk = json_string_value(json_object_get(gk, "model"));
            if ((m && mk && strcmp(m, mk) != 0) || (!m != !mk)) {
                char a[64], b[64];
                cc_errbuf(err, errlen, "topology '%s': GPUs of two models in nodes[%zu] ('%s' and "
                          "'%s'): layout plans one GPU model", path, i, shown(a, sizeof a, m),
                          shown(b, sizeof b, mk));
                goto done;
            }
            if (num(gk, "memory_bytes") > 0 && (gm == 0 || num(gk, "memory_bytes") < gm))
                gm = num(gk, "memory_bytes");
        }
        json_t *exp = json_object_get(nd, "expected");
        const char *rk[] = {"intra_allreduce_busbw_GBps", "nvlink_GBps_per_gpu"};
        for (int k = 0; k < 2; k++)
            if (bad_rate(num(exp, rk[k])) ||
                (json_object_get(exp, rk[k]) && !json_is_number(json_object_get(exp, rk[k])))) {
                cc_errbuf(err, errlen, "topology '%s': nodes[%zu].expected.%s must be a rate "
                          "in GB/s (0.01 to 1e6, or 0: none)", path, i, rk[k]);
                goto done;
            }
        if (typed && model && m && strcmp(m, model) != 0) {
            char a[64], b[64];
            cc_errbuf(err, errlen, "topology '%s': GPUs of two models ('%s' and '%s'): layout "
                      "plans one GPU model; give a topology of the nodes that train together",
                      path, shown(a, sizeof a, model), shown(b, sizeof b, m));
            goto done;
        }
        if (typed && !model != !m) {
            char a[64];
            if (m)
                cc_errbuf(err, errlen, "topology '%s': the GPUs of nodes[%zu] are '%s' but an "
                          "earlier node type's name no model: layout plans one GPU model", path,
                          i, shown(a, sizeof a, m));
            else
                cc_errbuf(err, errlen, "topology '%s': the GPUs of nodes[%zu] name no model but "
                          "an earlier node type's are '%s': layout plans one GPU model", path, i,
                          shown(a, sizeof a, model));
            goto done;
        }
        if (gpn && ng != gpn)
            hetero = 1;
        if (!gpn || ng < gpn)
            gpn = ng;
        if (!typed)
            model = m, typed = 1;
        if (gm > 0 && (mem == 0 || gm < mem))
            mem = gm;
        if (num(exp, "intra_allreduce_busbw_GBps") > 0 &&
            (intra == 0 || num(exp, "intra_allreduce_busbw_GBps") < intra))
            intra = num(exp, "intra_allreduce_busbw_GBps");
        gpus_total += count * ng;
        if (gpus_total > 16777216) {
            cc_errbuf(err, errlen, "topology '%s': more than 16,777,216 GPUs", path);
            goto done;
        }
        c->nodes += (int)count;
        c->gpus = (int)gpus_total;
    }
    if (!c->gpus) {
        cc_errbuf(err, errlen, "topology '%s': no GPUs described (nodes[].gpus is empty)", path);
        st = CC_EINVAL;
        goto done;
    }
    const struct cc_gpu_spec *g = cc_gpu_lookup(model);
    if (g)
        set_gpu(c, g);
    else if (!allow_unknown) {
        char a[96];
        cc_errbuf(err, errlen, "topology '%s': unknown GPU model '%s' (give --peak-tflops, "
                  "or see --list-gpus)", path, shown(a, sizeof a, model));
        st = CC_EINVAL;
        goto done;
    } else {
        cc_text_copy(c->gpu_name, sizeof c->gpu_name, model ? model : "unknown");
    }
    if (hetero)
        cc_warn("topology '%s': node types differ; planning with %d GPUs per node", path, gpn);
    c->gpus_per_node = gpn;
    c->gpus = c->nodes * gpn;
    if (mem > 0)
        c->mem_bytes = mem;
    if (host > 0)
        c->host_mem_bytes = host; /* offloaded activations */
    if (intra > 0)
        c->intra_busbw_Bps = intra * 1e9;
    /* a send within a node gets what one GPU's links carry in a ring (the all-reduce busbw),
     * not their line rate (nvlink_GBps_per_gpu): the same as the quick form */
    c->p2p_intra_Bps = c->intra_busbw_Bps;
    json_t *fab = json_object_get(root, "fabric");
    double inter = num(fab, "inter_allreduce_busbw_GBps");
    int from_nics = inter <= 0 && num(fab, "nics_per_node") > 0;
    if (from_nics)
        inter = num(fab, "nics_per_node") * num(fab, "rate_gbps_per_nic") / 8.0;
    if (bad_rate(inter)) {
        cc_errbuf(err, errlen, "topology '%s': %s gives %.15g GB/s across nodes, not a rate "
                  "(0.01 to 1e6)", path,
                  from_nics ? "fabric.nics_per_node x fabric.rate_gbps_per_nic / 8"
                            : "fabric.inter_allreduce_busbw_GBps",
                  inter);
        goto done;
    }
    const char *kind = json_string_value(json_object_get(fab, "kind"));
    json_t *nics = json_object_get(fab, "nics_per_node");
    /* no NICs: kind none or a count of 0 (-1 is the schema's unknown: the rate is then looked
     * for elsewhere) */
    if (c->nodes > 1 && inter <= 0 &&
        ((kind && strcmp(kind, "none") == 0) || (nics && num(fab, "nics_per_node") == 0))) {
        cc_errbuf(err, errlen, "topology '%s': %d nodes but its fabric has no NICs (%s): the "
                  "nodes cannot train together", path, c->nodes,
                  kind && strcmp(kind, "none") == 0 ? "kind none" : "nics_per_node 0");
        goto done;
    }
    int inter_from_table = inter <= 0 && c->nodes > 1 && c->inter_node_Bps > 0;
    if (inter > 0)
        c->inter_node_Bps = inter * 1e9;
    else if (inter_from_table && g && g->nic_gpus > 0 && gpn != g->nic_gpus)
        /* the table's rate is for nodes of nic_gpus GPUs with a NIC each: as the quick form,
         * as many NICs as this file's nodes have GPUs */
        c->inter_node_Bps *= (double)gpn / g->nic_gpus;
    if (c->nodes > 1 && c->inter_node_Bps <= 0) {
        cc_errbuf(err, errlen, "topology '%s': %d nodes but no inter-node rate (fabric."
                  "inter_allreduce_busbw_GBps or nics_per_node and rate_gbps_per_nic)", path,
                  c->nodes);
        st = CC_EINVAL;
        goto done;
    }
    const char *nm = json_string_value(json_object_get(root, "name"));
    snprintf(c->name, sizeof c->name, "%s: %d x %s (%d node%s of %d)", nm ? nm : path, c->gpus,
             g ? g->id : c->gpu_name, c->nodes, c->nodes == 1 ? "" : "s", gpn);
    cc_text_line(c->name);
    char from_table[160] = ""; /* the rates the file does not give */
    if (g && (intra <= 0 || inter_from_table))
        snprintf(from_table, sizeof from_table, " (%s: the built-in table for %s)",
                 intra <= 0 && inter_from_table ? "within and across nodes"
                 : intra <= 0                   ? "within a node"
                                                : "across nodes",
                 g->id);
    snprintf(c->bw_source, sizeof c->bw_source, "expected rates of topology '%s'%s", path,
             from_table);
    cc_text_line(c->bw_source);
    st = CC_OK;
done:
    json_decref(root);
    return st;
}

/* ---- communication model -------------------------------------------------------------------- */

/* NCCL's own latency model of a ring (src/graph/tuning.cc, Simple protocol, the one large
 * messages use): a base, then one hop's latency per step before the pipeline fills: an
 * all-gather or reduce-scatter over n ranks on k nodes takes n - 1 steps, k - 1 of them across
 * nodes. Seconds. */
#define RING_BASE_S 8.4e-6
#define RING_HOP_NVLINK_S 3.4e-6
#define RING_HOP_PCIE_S 5.7e-6   /* GPUs whose links within a node carry under 100 GB/s */
#define RING_HOP_NET_S 14e-6

/* A ring of n ranks on `nodes` nodes. */
static double ring_lat(const struct cc_cluster *c, double n, double nodes)
{
    if (n < 2)
        return 0.0;
    double hop = c->intra_busbw_Bps >= 100e9 ? RING_HOP_NVLINK_S : RING_HOP_PCIE_S;
    return RING_BASE_S + (n - nodes) * hop + (nodes - 1.0) * RING_HOP_NET_S;
}

/* Nodes of a group of n, per_node in each. */
static double group_nodes(int n, int per_node)
{
    return per_node >= n || per_node < 1 ? 1.0 : ceil((double)n / per_node);
}

double cc_ring_latency(const struct cc_cluster *c, int n, int per_node)
{
    return ring_lat(c, n, group_nodes(n, per_node));
}

double cc_pat_latency(int n, int per_node)
{
    if (n < 2 || per_node != 1)
        return INFINITY;
    int lg = 0; /* NCCL's log2i: the floor */
    for (int k = n; k > 1; k >>= 1)
        lg++;
    return 8e-6 + lg * RING_HOP_NET_S / 3.5 + (double)n * 2.8e-6;
}

/* NCCL's tree all-reduce (Simple protocol): a base, then up and down the tree: the members of
 * a node in a chain (4 us a hop, NVLink or PCIe) and floor(log2 k) levels of nodes (14 us
 * each). */
/* A tree of n ranks on `nodes` nodes (n / nodes in each). */
static double tree_lat(double n, double nodes)
{
    if (n < 2)
        return 0.0;
    int lg = 0; /* NCCL's log2i: the floor */
    for (long k = (long)nodes; k > 1; k >>= 1)
        lg++;
    double hop = 4.0e-6; /* NCCL's Tree/Simple hop, on NVLink and on PCIe alike */
    return RING_BASE_S + 2.0 * ((n / nodes - 1.0) * hop + lg * RING_HOP_NET_S);
}

double cc_tree_latency(const struct cc_cluster *c, int n, int per_node)
{
    (void)c;
    return tree_lat(n, group_nodes(n, per_node));
}

/* The fit nearest the group: within a node, of the nearest group size; across nodes, of the
 * nearest members per node (the share of the node's NICs, which sets the rate), then the
 * nearest group size (the ring's extra steps are added to its latency apart); first of
 * equals wins (the order of the files: deterministic). */
static const struct cc_fit *nearest_fit(const struct cc_cluster *c, enum cc_coll_id coll,
                                        int scope, int n, int per_node)
{
    const struct cc_fit *best = NULL;
    double bd = INFINITY, bp = INFINITY;
    for (int i = 0; i < c->nfits[coll][scope]; i++) {
        const struct cc_fit *f = &c->fits[coll][scope][i];
        double d = fabs(log((double)f->nranks / n));
        double dp = fabs(log((double)(f->per_node > 0 ? f->per_node : 1) /
                             (per_node > 0 ? per_node : 1)));
        if (scope == CC_SCOPE_INTER) { /* members per node first */
            double tmp = d;
            d = dp, dp = tmp;
        }
        if (d < bd - 1e-12 || (d < bd + 1e-12 && dp < bp - 1e-12))
            bd = d, bp = dp, best = f;
    }
    return best;
}

int cc_comm_source(const struct cc_cluster *c, enum cc_coll_id coll, int scope)
{
    /* all-reduce, all-gather and reduce-scatter move their bus bytes over the same rings at
     * about the same bus bandwidth (nccl-tests defines busbw so): a measured sibling is
     * nearer the truth than the table */
    static const int order[3][3] = {{CC_ALLREDUCE, CC_REDUCESCATTER, CC_ALLGATHER},
                                    {CC_ALLGATHER, CC_REDUCESCATTER, CC_ALLREDUCE},
                                    {CC_REDUCESCATTER, CC_ALLGATHER, CC_ALLREDUCE}};
    if (c->nfits[coll][scope] > 0)
        return coll;
    for (int i = 0; i < 3; i++)
        if (order[i][0] == (int)coll)
            for (int j = 1; j < 3; j++)
                if (c->nfits[order[i][j]][scope] > 0)
                    return order[i][j];
    return -1;
}

/* The busbw of an all-reduce over all the GPUs of a node: measured (all-reduce or a sibling,
 * the fit nearest gpus_per_node ranks) where it was, else the cluster's. */
static double node_intra_rate(const struct cc_cluster *c)
{
    int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
    int from = cc_comm_source(c, CC_ALLREDUCE, CC_SCOPE_INTRA);
    const struct cc_fit *f =
        from < 0 ? NULL : nearest_fit(c, (enum cc_coll_id)from, CC_SCOPE_INTRA, gpn, gpn);
    return f ? f->busbw_Bps : c->intra_busbw_Bps;
}

double cc_node_inter_Bps(const struct cc_cluster *c, int *from)
{
    static const enum cc_coll_id order[] = {CC_ALLREDUCE, CC_REDUCESCATTER, CC_ALLGATHER};
    int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
    for (int k = 0; k < 3; k++) {
        const struct cc_fit *best = NULL;
        for (int i = 0; i < c->nfits[order[k]][CC_SCOPE_INTER]; i++) {
            const struct cc_fit *f = &c->fits[order[k]][CC_SCOPE_INTER][i];
            if (f->per_node >= gpn && (!best || f->nranks > best->nranks))
                best = f;
        }
        if (best) {
            if (from)
                *from = (int)order[k];
            return best->busbw_Bps;
        }
    }
    if (from)
        *from = -1;
    return c->inter_node_Bps;
}

static double node_inter_rate(const struct cc_cluster *c)
{
    return cc_node_inter_Bps(c, NULL);
}

/* The table's latency of a group of n ranks on `nodes` nodes: a ring's grows with the ranks,
 * all-reduce's tree across nodes with the log of the nodes beyond the table's two; the others
 * are flat. */
static double table_latency(const struct cc_cluster *c, int ring, int tree, int scope, int n,
                            double nodes)
{
    if (ring)
        return ring_lat(c, n, nodes);
    if (scope == CC_SCOPE_INTRA)
        return c->lat_intra_s;
    return c->lat_inter_s +
           (tree ? fmax(0.0, tree_lat(n, nodes) - tree_lat(2.0 * n / nodes, 2.0)) : 0.0);
}

/* A measured latency moved from the group measured to the one asked for, by the model's
 * latencies of the two: what a larger group adds, added; a smaller group's, in proportion
 * (never below zero). */
static double shift_latency(double alpha, double model_want, double model_fit)
{
    if (model_want >= model_fit)
        return alpha + (model_want - model_fit);
    return model_fit > 0 ? alpha * model_want / model_fit : alpha;
}

/* cc_comm_time, with send/recv across nodes shared by `flows` GPUs of the node (0: all). */
static double comm_time(const struct cc_cluster *c, enum cc_coll_id coll, int n, int per_node,
                        int flows, double bytes)
{
    if (bytes <= 0 || (n < 2 && coll != CC_SENDRECV))
        return 0.0;
    int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
    int scope = per_node >= n ? CC_SCOPE_INTRA : CC_SCOPE_INTER;
    double share = per_node < gpn ? (double)per_node / gpn : 1.0;
    double qnodes = group_nodes(n, per_node);
    if (flows < 1 || flows > gpn)
        flows = gpn;
    double factor = coll == CC_SENDRECV ? 1.0 : cc_coll_get(coll)->busbw_factor(n);
    double alpha, bw;
    int from = cc_comm_source(c, coll, scope);
    const struct cc_fit *f = from < 0 ? NULL
                                      : nearest_fit(c, (enum cc_coll_id)from, scope, n, per_node);

    /* all-gather and reduce-scatter run as rings whose latency grows with the ranks, or with
     * one GPU per node as PAT where that takes less time in all; all-reduce across nodes runs
     * as a tree, whose latency grows with the log of the nodes beyond those of the measured
     * (or table's two-node) latency; within a node it keeps its flat latency (LL and LL128
     * serve its small messages) */
    int ring = coll == CC_ALLGATHER || coll == CC_REDUCESCATTER;
    int tree = coll == CC_ALLREDUCE && scope == CC_SCOPE_INTER;
    double pat = INFINITY; /* PAT's latency, when it may run */
    if (f) {
        double fnodes = f->nodes > 0 ? f->nodes : group_nodes(f->nranks, f->per_node);
        alpha = f->alpha_s;
        if (isnan(alpha)) /* the sweep could not tell it: the table's, for the group measured */
            alpha = table_latency(c, ring, tree, scope, f->nranks, fnodes);
        if (ring) { /* the ring's (or PAT's) latency against the group measured */
            double lat_f = ring_lat(c, f->nranks, fnodes), pat_q = cc_pat_latency(n, per_node);
            if (isfinite(pat_q))
                pat = shift_latency(alpha, pat_q, lat_f);
            alpha = shift_latency(alpha, ring_lat(c, n, qnodes), lat_f);
        } else if (tree && fnodes > 1) { /* the tree's */
            alpha = shift_latency(alpha, tree_lat(n, qnodes), tree_lat(f->nranks, fnodes));
        }
        bw = f->busbw_Bps;
        /* a collective's rate across nodes is its node's NICs shared by its members there */
        if (scope == CC_SCOPE_INTER && per_node != f->per_node && coll != CC_SENDRECV) {
            double scaled = bw * per_node / f->per_node;
            if (per_node > f->per_node) /* more of the node's NICs, as far as it has them */
                scaled = fmin(scaled, fmax(bw, node_inter_rate(c)));
            bw = scaled;
        }
        /* a send/recv ring crosses each node boundary with one flow, so it measured one
         * flow's rate; `flows` of the node's GPUs send across at the same time, and together
         * they get no more than the node's rate */
        if (scope == CC_SCOPE_INTER && coll == CC_SENDRECV)
            bw = fmin(bw, node_inter_rate(c) / flows);
        double in_node = node_intra_rate(c);
        if (scope == CC_SCOPE_INTER && in_node > 0 && bw > in_node && f->busbw_Bps <= in_node)
            bw = in_node; /* scaled up no further than the links within a node */
    } else if (scope == CC_SCOPE_INTRA) {
        alpha = table_latency(c, ring, tree, scope, n, qnodes);
        bw = coll == CC_SENDRECV ? c->p2p_intra_Bps : c->intra_busbw_Bps;
    } else {
        alpha = table_latency(c, ring, tree, scope, n, qnodes);
        if (ring)
            pat = cc_pat_latency(n, per_node);
        double in_node = node_intra_rate(c);
        bw = fmin(node_inter_rate(c) * share, in_node > 0 ? in_node : INFINITY);
    }
    if (coll == CC_ALLTOALL && scope == CC_SCOPE_INTER) {
        /* every rank sends (n - per_node)/n of its bytes across nodes over its own share of
         * the node's rate (the node's GPUs all exchange at once, an expert-parallel group or
         * several side by side): a fit across nodes gives that share as measured */
        double nic = f && f->nranks > f->per_node
                         ? f->busbw_Bps * (f->nranks - f->per_node) / (f->nranks - 1.0)
                         : node_inter_rate(c) / gpn;
        bw = nic * (n - 1.0) / (n - per_node);
    }
    if (bw <= 0)
        return INFINITY;
    /* NCCL takes the algorithm of least time; PAT moves its bytes at 3/4 of the ring's rate */
    return fmin(alpha + bytes * factor / bw, pat + bytes * factor / (0.75 * bw));
}

double cc_comm_time(const struct cc_cluster *c, enum cc_coll_id coll, int n, int per_node,
                    double bytes)
{
    return comm_time(c, coll, n, per_node, 0, bytes);
}

double cc_p2p_time(const struct cc_cluster *c, int across, int flows, double bytes)
{
    return comm_time(c, CC_SENDRECV, 2, across ? 1 : 2, flows, bytes);
}
