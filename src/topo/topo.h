/* topo.h - the machine as ccbench sees it: probing a node (hwloc, sysfs, optional NVML and
 * CUDA runtime), the cluster topology JSON (schema "ccbench.topology.v1", docs/topology.md),
 * loading and validating a saved or described topology, and NCCL's topology XML.
 *
 * Units in the JSON: sizes in bytes, rates in GB/s (1e9 B/s) unless the field name says
 * Gbps (1e9 bit/s) or Mbps. Path classes are NCCL's: "X" (self), "NVL", "PIX", "PXB",
 * "PHB", "SYS".
 *
 * Nothing here needs MPI: the probe command (src/cmd/probe.c) gathers the node objects.
 */
#ifndef CC_TOPO_H
#define CC_TOPO_H

#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "core/status.h"

#define CC_TOPO_SCHEMA "ccbench.topology.v1"

/* ---- loading a topology file ------------------------------------------------------------ */

/* Read and validate a cluster topology file. On success *out holds a new reference. On
 * failure err holds one line naming the file and the place: "cannot read topology 'f.json':
 * line 3 column 5: ..." for malformed JSON, "topology 'f.json': nodes[1].gpus: ..." for a
 * schema violation. Returns CC_EIO (unreadable), CC_EPARSE (malformed or invalid). */
cc_status cc_topo_load(const char *path, json_t **out, char *err, size_t errlen);

/* Check a topology object against the schema; `what` names it in messages (a file name).
 * Error text: "topology 'what': <json path>: <problem>". */
cc_status cc_topo_validate(const json_t *topo, const char *what, char *err, size_t errlen);

/* ---- accessors on a validated topology (no error paths: bad indexes give 0 / -1 / NULL) -- */

/* Node types in "nodes" (a probed cluster has one per host). */
int cc_topo_node_types(const json_t *topo);
/* Node object i, borrowed reference, or NULL. */
const json_t *cc_topo_node(const json_t *topo, int i);
/* Nodes a probe could not describe (the file's "missing": hostname and reason); 0 when the
 * file describes every node. Readers warn: the cluster is larger than what is described. */
int cc_topo_missing(const json_t *topo);
/* Number of machines: the sum of "count" over node types. */
int cc_topo_node_count(const json_t *topo);
/* GPUs of node type i. */
int cc_topo_gpus_per_node(const json_t *topo, int i);
/* Smallest GPU memory of node type i in bytes; 0 if it has no GPU or none is known. */
long long cc_topo_gpu_memory(const json_t *topo, int i);
/* NICs of node type i. */
int cc_topo_nics_per_node(const json_t *topo, int i);
/* nodes[i].expected.<key> (e.g. "nic_GBps", "nvlink_GBps_per_gpu"); -1 when absent. */
double cc_topo_expected(const json_t *topo, int i, const char *key);
/* fabric.<key> as a number (e.g. "rate_gbps_per_nic", "inter_allreduce_busbw_GBps"); -1 when absent. */
double cc_topo_fabric(const json_t *topo, const char *key);
/* Path class between GPU a and GPU b ("gpu_gpu") or GPU a and NIC b ("gpu_nic") of node
 * type i; NULL when unknown. */
const char *cc_topo_path(const json_t *topo, int i, const char *matrix, int a, int b);

/* Rank of a path class from closest to farthest: X 0, NVL 1, PIX 2, PXB 3, PHB 4, SYS 5;
 * -1 for anything else. */
int cc_topo_class_rank(const char *cls);
/* The NIC closest to GPU `gpu` of node type i (best path class in "gpu_nic"; on ties one
 * with a port up before one without, RDMA before Ethernet, then the first), or -1 if the
 * node has no NIC or no paths. */
int cc_topo_nearest_nic(const json_t *topo, int i, int gpu);

/* ---- text from the machine -------------------------------------------------------------- */

/* src (hwloc, sysfs, NVML, a host name, a path: any bytes; NULL is "") as valid UTF-8 in dst:
 * a byte that starts no valid character becomes '?', and a character that does not fit whole
 * is left out with all after it (text is never cut inside a character). */
void cc_topo_text(char *dst, size_t len, const char *src);
/* The same as a new JSON string, never cut; NULL only when out of memory. */
json_t *cc_topo_jtext(const char *src);

/* ---- probing one node ------------------------------------------------------------------- */

struct cc_probe_opts {
    const char *hwloc_xml;   /* load this hwloc XML instead of the running machine (tests) */
    const char *sysfs_root;  /* prefix of /sys paths; NULL or "": the real /sys ("/"), but
                                none with hwloc_xml (what sysfs says is then unknown) */
    const char *hostname;    /* NULL: gethostname(), or the XML's HostName */
    int no_gpu_libs;         /* 1: do not dlopen NVML / the CUDA runtime */
};

struct cc_probe; /* an opened hwloc topology plus options */

/* Load the topology (hwloc with PCI and OS devices kept). */
cc_status cc_probe_open(struct cc_probe **p, const struct cc_probe_opts *o, char *err, size_t errlen);
/* Describe the node: a new JSON object in the "nodes[]" format of the schema. */
cc_status cc_probe_node(struct cc_probe *p, json_t **node, char *err, size_t errlen);
/* Write NCCL's topology XML (the NCCL_TOPO_FILE format) for the probed node. `node` is the
 * object cc_probe_node returned (GPU numbers, NVLinks, NIC rates and GUIDs come from it). */
cc_status cc_probe_nccl_xml(struct cc_probe *p, const json_t *node, FILE *out, char *err, size_t errlen);
void cc_probe_close(struct cc_probe *p);

/* Whether a NIC object (a node's "nics" entry) has a port that is up: state "ACTIVE" (RDMA)
 * or "up" (Ethernet). A NIC without ports or states (an older file) counts as up. A NIC whose
 * ports are all down (an unplugged storage port) is no part of the fabric or its rates. */
int cc_topo_nic_up(const json_t *nic);
/* A NIC port object's state: 1 up ("ACTIVE" or "up"), 0 another state, -1 none given. */
int cc_topo_port_up(const json_t *port);

/* ---- clusters --------------------------------------------------------------------------- */

/* Merge per-node objects (borrowed) into a cluster topology (new reference): schema, name,
 * created (UTC ISO 8601), nodes in the given order, fabric inferred from the NICs, and
 * "differences": per aspect (cpu, memory, gpus, nics, paths) the hosts that differ from the
 * majority. */
json_t *cc_topo_merge(json_t *const *nodes, int n, const char *name);

/* Compact human summary of a cluster topology: the nodes that could not be probed, per node
 * CPUs, GPUs, NICs with rates, the affinity matrix (nvidia-smi topo -m style); then the hosts
 * that differ from the majority. */
void cc_topo_print_summary(FILE *out, const json_t *topo);

#endif
