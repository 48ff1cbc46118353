/* cluster.h - the machine `ccbench layout` plans for: GPUs (count, memory, peak FLOP/s from a
 * built-in table), nodes, and a communication model time = alpha + bytes*factor(n)/busbw per
 * collective and scope (within a node, across nodes), either fitted from ccbench bench JSON
 * Lines or taken from a topology's expected rates.
 *
 * Units: bytes, seconds, FLOP/s, bytes/s (the JSON inputs use GB/s = 1e9 B/s and Gbps).
 */
#ifndef CC_LAYOUT_CLUSTER_H
#define CC_LAYOUT_CLUSTER_H

#include <stddef.h>
#include "coll/coll.h"
#include "core/status.h"
#include "layout/model.h"

/* One row of the built-in GPU table (dense peaks, no sparsity; vendor data sheets). */
struct cc_gpu_spec {
    const char *id;       /* short name for --gpu-model: "a100-80g" */
    const char *must;     /* substring of a normalised model name that selects this row */
    const char *also;     /* further required substrings, space-separated, or NULL (rows
                             are tried in order: the more specific first) */
    const char *name;     /* marketing name */
    double tflops[CC_PREC_COUNT]; /* bf16, fp16, fp8 dense TFLOP/s; 0: not supported */
    double mem_gib;       /* GPU memory, GiB (2^30 bytes): what the vendors' "80 GB" means */
    double hbm_GBps;      /* memory bandwidth */
    double intra_GBps;    /* expected all-reduce busbw across the GPUs of a node */
    double inter_GBps;    /* expected all-reduce busbw across nodes (typical NICs of the era) */
    int sms;              /* streaming multiprocessors (AMD: compute units): GEMM waves */
    const char *eff16;    /* what is known of the default 16-bit --efficiency on this GPU;
                             NULL where it was fitted (A100) */
    int blackwell;        /* 1: NVIDIA Blackwell or later (no one-connection rule for tensor
                             parallelism in Megatron-LM) */
    int nic_gpus;         /* inter_GBps is for nodes of this many GPUs with a NIC each, and
                             scales with the GPUs of a node; 0: a rate of its own (kept) */
    double host_GBps;     /* GPU to host memory, one direction, per GPU: PCIe 4.0 x16 25,
                             5.0 x16 50 (achievable, not the line rate); a Grace superchip's
                             NVLink-C2C (900 GB/s both ways) 450, shared by GB200's two GPUs */
    double host_gb;       /* host memory per GPU, GB (1e9 bytes): a Grace's 480 (GB200: for
                             two GPUs, 240); a DGX H100/H200/B200's 2 TB for 8, 256; else 128
                             (a DGX A100's 1 TB for 8) */
};

/* The eff16 text of a GPU the 16-bit efficiency was not checked on (or whose peak was
 * overridden). */
extern const char cc_eff16_unchecked[];
/* the Hopper GPUs' eff16: also where the fp8 efficiency was fitted (NeMo on H100) */
extern const char cc_eff16_hopper[];

/* Find a row by id or by a model string such as "NVIDIA A100-SXM4-80GB" (case and
 * punctuation ignored). NULL if none matches. */
const struct cc_gpu_spec *cc_gpu_lookup(const char *text);
/* The table, for listing: rows until id == NULL. */
extern const struct cc_gpu_spec cc_gpu_table[];

enum cc_scope { CC_SCOPE_INTRA, CC_SCOPE_INTER };

/* A fitted latency-bandwidth model of one collective in one scope at one group size. */
struct cc_fit {
    int nranks;        /* group size measured */
    int per_node;      /* ranks per node in the measurement (its emptiest node's) */
    int nodes;         /* nodes it spanned (1: within a node; 0: from per_node) */
    int points;        /* measurements used */
    int sizes;         /* distinct message sizes among them */
    double alpha_s;    /* latency */
    double busbw_Bps;  /* bus bandwidth (nccl-tests convention) */
    char from[96];     /* the results file it came from (its last 95 characters) */
};

#define CC_FIT_MAX 32

struct cc_cluster {
    char name[128];
    char gpu_name[96];
    int nodes, gpus_per_node, gpus;
    int gpus_per_host;                 /* hosts a node's GPUs sit in, when its NVLink domain
                                          spans several (an NVL72 rack: 4); 0: one host */
    double mem_bytes;                  /* per GPU */
    double peak_flops[CC_PREC_COUNT];  /* per GPU; 0: precision not supported */
    double hbm_Bps;
    double host_Bps;                   /* GPU to host memory, one direction (activation
                                          offloading) */
    double host_mem_bytes;             /* host memory per GPU (offloaded activations) */
    int sms;                           /* SMs per GPU (0: unknown, no wave quantization) */
    double intra_busbw_Bps;            /* all-reduce busbw, all GPUs of one node */
    double inter_node_Bps;             /* all-reduce busbw across nodes, whole node: the
                                          node's inter-node bandwidth, shared by its GPUs */
    double p2p_intra_Bps;              /* send/recv between two GPUs of a node */
    double lat_intra_s, lat_inter_s;   /* per-collective latency when nothing is fitted */
    char bw_source[1024];              /* where the rates come from (for the report) */
    const char *eff16_note;            /* the GPU's eff16 (static text); NULL: fitted here */
    int blackwell;                     /* the GPU's cc_gpu_spec.blackwell */
    struct cc_fit fits[CC_COLL_COUNT][2][CC_FIT_MAX];
    int nfits[CC_COLL_COUNT][2];
};

/* Hosts (each runs one torchrun) and GPUs per host: the nodes, unless gpus_per_host splits
 * them. */
int cc_cluster_per_host(const struct cc_cluster *c);
int cc_cluster_hosts(const struct cc_cluster *c);

/* A cluster of `gpus` GPUs, `gpus_per_node` per node, of the table row `gpu`; rates from the
 * table, the rate across nodes scaled by gpus_per_node / gpu->nic_gpus where the row gives
 * its rate per NIC-per-GPU node (nic_gpus > 0). CC_EINVAL with a message if gpus is not a multiple of gpus_per_node (when
 * larger). */
cc_status cc_cluster_quick(struct cc_cluster *c, int gpus, int gpus_per_node,
                           const struct cc_gpu_spec *gpu, char *err, size_t errlen);

/* Read the fields layout needs from a ccbench topology JSON (docs/topology.md: nodes[].count,
 * nodes[].gpus[], nodes[].expected, fabric). Unknown GPU models are an error unless
 * allow_unknown (the caller then sets peak_flops itself). */
cc_status cc_cluster_load_topology(struct cc_cluster *c, const char *path, int allow_unknown,
                                   char *err, size_t errlen);

/* GB/s as text: one decimal from 1 GB/s up ("185.3"), else three digits ("0.0123"). */
const char *cc_gbps_text(double Bps, char *buf, size_t len);

/* Fit alpha + x/busbw (x = bytes * busbw factor) per collective, scope and group size to
 * the measurements in `path`: ccbench bench JSON Lines ("type":"result" lines; scope from the
 * header's nnodes, 1: within a node) or an nccl-tests log (layout/nccltests.h; scope from
 * the hosts of its Rank lines), told apart by content. Adds to c->fits; a group already
 * fitted from an earlier file is kept and the new one named in a warning, as is a group
 * whose sizes never leave the latency regime (not fitted) and a fit far from the rate the
 * cluster expects (used as measured). Call after the cluster's rates are set. */
cc_status cc_cluster_load_results(struct cc_cluster *c, const char *path, char *err,
                                  size_t errlen);

/* Whose fits give collective coll its rate in scope (CC_SCOPE_INTRA/INTER): coll itself if
 * it was measured there; else for all-reduce, all-gather and reduce-scatter a measured
 * sibling (all-reduce: reduce-scatter, then all-gather; all-gather: reduce-scatter, then
 * all-reduce; reduce-scatter: all-gather, then all-reduce), which runs over the same rings
 * at about the same bus bandwidth; -1: none, the cluster's own rates. */
int cc_comm_source(const struct cc_cluster *c, enum cc_coll_id coll, int scope);

/* A node's rate across nodes with all its GPUs taking part (an all-reduce ring's busbw is what
 * each node sends out): measured where all-reduce or a sibling (cc_comm_source) was fitted
 * across whole nodes (the largest such group), else inter_node_Bps. *from (if not NULL): the
 * collective whose fit gave it, or -1. */
double cc_node_inter_Bps(const struct cc_cluster *c, int *from);

/* Latency of a ring all-gather or reduce-scatter over n GPUs, per_node of them in a node (NCCL's
 * own model, src/graph/tuning.cc, Simple protocol): 8.4 us + 3.4 us per step within a node
 * (5.7 us where the node's links carry under 100 GB/s: PCIe) + 14 us per step across nodes,
 * n - 1 steps of which nodes - 1 cross. 0 for n < 2. Seconds. */
double cc_ring_latency(const struct cc_cluster *c, int n, int per_node);
/* Latency of NCCL's PAT all-gather or reduce-scatter (one GPU per node only; NCCL 2.23 on):
 * 8 us + floor(log2 n) x 4 us + n x 2.8 us; INFINITY where it does not run (per_node != 1,
 * n < 2). NCCL moves PAT's bytes at 3/4 of the ring's bus bandwidth. Seconds. */
double cc_pat_latency(int n, int per_node);

/* NCCL's tree all-reduce latency (Simple): 8.4 us + 2 x ((n/k - 1) x 4 us + floor(log2 k) x
 * 14 us) over n ranks on k nodes. Seconds. */
double cc_tree_latency(const struct cc_cluster *c, int n, int per_node);

/* Time in seconds of one collective over a group of n GPUs of which per_node share a node
 * (per_node >= n: all in one node), moving `bytes` in nccl-tests size convention. Across nodes, a
 * node's bandwidth is shared evenly by its GPUs: a group with k members per node gets the node's
 * rate (inter_node_Bps, or the measured one below) * k / gpus_per_node; a fit measured with j
 * members per node is scaled by k / j (upwards no further than the node's rate and the rate within
 * a node, each the measured one where an all-reduce or a sibling was fitted over whole nodes, or
 * over one node's GPUs, else the cluster's). CC_SENDRECV is a point-to-point transfer: without a
 * fit, across nodes, one GPU's share of the node's rate (a NIC per GPU); a fit across nodes
 * measured one flow, and all the node's GPUs sending across at once get no more than the node's
 * rate / gpus_per_node each (cc_p2p_time: fewer at once). The fit used is cc_comm_source's, the
 * one nearest the group: within a node by group size; across nodes by members per node, then group
 * size. A group measured on unevenly filled nodes counts its emptiest node's members. Latency:
 * all-gather and reduce-scatter pay cc_ring_latency's; with one GPU per node, PAT (cc_pat_latency,
 * 3/4 of the bandwidth) where its total time is less, as NCCL chooses; all-reduce across nodes
 * pays lat_inter_s plus what cc_tree_latency grows beyond two nodes; within a node it and
 * send/recv keep a flat latency (lat_intra_s, lat_inter_s). With a fit its measured latency is
 * moved from the group measured to this one by the same model: what a larger group adds is added,
 * a smaller group's is scaled down in proportion. */
double cc_comm_time(const struct cc_cluster *c, enum cc_coll_id coll, int n, int per_node,
                    double bytes);

/* A point-to-point transfer of `bytes` between two GPUs, in one node or across nodes (across),
 * while `flows` GPUs of the node send across at once (1 to gpus_per_node; other values: all):
 * a measured send/recv flow gets at most the node's rate / flows. Without a fit, one GPU's
 * share of the node's rate, as in cc_comm_time (the table's rates assume a NIC per GPU, which
 * a flow does not share). Seconds. */
double cc_p2p_time(const struct cc_cluster *c, int across, int flows, double bytes);

#endif
