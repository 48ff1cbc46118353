/* hw.h - the opened hwloc topology behind struct cc_probe and the PCI helpers shared by the
 * probe (probe.c) and the NCCL XML writer (ncclxml.c). Internal to src/topo. */
#ifndef CC_TOPO_HW_H
#define CC_TOPO_HW_H

#include <hwloc.h>
#include "topo/topo.h"

struct cc_probe {
    hwloc_topology_t t;
    char root[512];  /* sysfs root; "" none (an XML export without --sysfs-root) */
    char host[72]; /* CC_HOST_MAX: a 64-character nodename whole */
    int no_gpu_libs;
    int real;        /* probing the running machine (not an XML file) */
    const char *fail; /* cc_probe_node: the first part of the node JSON that could not be built */
};

/* The sysfs root to read (sysfs.h), NULL when there is none. */
static inline const char *cc_hw_sysfs(const struct cc_probe *p)
{
    return p->root[0] ? p->root : NULL;
}

/* PCI attributes of a PCI device or of a bridge's upstream side; NULL for anything else. */
const struct hwloc_pcidev_attr_s *cc_hw_pci(hwloc_obj_t o);
/* "0000:07:00.0" */
void cc_hw_busid(hwloc_obj_t o, char *buf, size_t len);
/* qsort comparator of hwloc_obj_t (PCI devices or bridges): by domain, bus, device,
 * function, as nvidia-smi and CUDA_DEVICE_ORDER=PCI_BUS_ID number GPUs. */
int cc_hw_pci_cmp(const void *a, const void *b);
/* The PCI device with this bus id, or NULL. */
hwloc_obj_t cc_hw_find_pci(hwloc_topology_t t, const char *busid);
/* NCCL's view of the PCI tree: the parent of a device or switch is the PCI-PCI bridge two
 * levels up (a switch's upstream port; the downstream port in between is skipped); NULL when
 * that would be a host bridge or beyond, i.e. the device hangs off the CPU. */
hwloc_obj_t cc_hw_pci_parent(hwloc_obj_t o);
/* OS index of the NUMA node a device is local to; -1 if unknown (attached to several). */
int cc_hw_numa(hwloc_obj_t o);
/* A PCI device's NUMA node as the kernel (and NCCL) has it, sysfs numa_node, else hwloc's
 * answer (cc_hw_numa; where a memory-only NUMA node, HBM, CXL or GPU memory, shares the
 * device's package, the one node of ordinary memory there); -1 unknown. */
int cc_hw_pci_numa(const struct cc_probe *p, hwloc_obj_t o);
/* NCCL path class over PCI between two devices: "X" (same), "PIX" (one switch), "PXB"
 * (several switches), "PHB" (through the CPU, same NUMA node), "SYS" (across NUMA nodes),
 * the NUMA nodes being those of cc_hw_pci_numa for the two PCI trees (hwloc's localities
 * where one is unknown). NVLink ("NVL") is decided by the caller, which knows the links. */
const char *cc_hw_path_class(const struct cc_probe *p, hwloc_obj_t a, hwloc_obj_t b);

#endif
