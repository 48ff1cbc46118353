/* sysfs.h - readers of the Linux sysfs files the probe needs, relative to a root directory
 * so tests can feed a fake tree (tests/topo/sysfs/). Internal to src/topo.
 *
 * root: a directory prefix such as "/" (the real system) or "tests/topo/sysfs"; the files
 * read are <root>/sys/class/infiniband/..., <root>/sys/class/net/..., <root>/sys/bus/pci/...
 * NULL: no sysfs (probing an hwloc XML export of another machine): every file is absent. */
#ifndef CC_TOPO_SYSFS_H
#define CC_TOPO_SYSFS_H

#include <stddef.h>
#include <jansson.h>

/* Read <root>/<rel> (first line, newline stripped) into buf. Returns 0, or -1 if absent. */
int cc_sysfs_read(const char *root, const char *rel, char *buf, size_t len);

/* Text read from sysfs is made valid UTF-8 (cc_topo_text) before it goes into JSON. */

/* Ports of RDMA device `dev`: array of {port, state, rate_gbps, width, link_layer, gids:
 * [{index, gid, type}]} (all-zero GIDs left out), ordered by port number. Empty if absent,
 * NULL when out of memory. */
json_t *cc_sysfs_ib_ports(const char *root, const char *dev);

/* Node GUID of RDMA device `dev` as "0x0c42a1030065abcd" into buf; -1 if unknown. */
int cc_sysfs_ib_guid(const char *root, const char *dev, char *buf, size_t len);

/* Network interface `name`: {name, speed_mbps (-1 unknown), mtu, state, mac}; NULL if absent
 * (or out of memory). */
json_t *cc_sysfs_netdev(const char *root, const char *name);

/* Every interface under <root>/sys/class/net, sorted by name (cc_sysfs_netdev objects);
 * NULL when out of memory. */
json_t *cc_sysfs_netdevs(const char *root);

/* Name of the network interface of RDMA device `dev` (the entries of <dev>/device/net), into buf; -1 if none. */
int cc_sysfs_ib_netdev(const char *root, const char *dev, char *buf, size_t len);

/* PCIe generation and width of the device with bus id `busid` ("0000:07:00.0"): the current
 * link (max = 0; idle GPUs often train down to Gen1) or the most the device supports
 * (max = 1, what NCCL reads). -1 when unknown. */
void cc_sysfs_pcie_link(const char *root, const char *busid, int max, int *gen, int *width);
/* Whether PCI function busid is an SR-IOV virtual function (it has a physfn): 1 or 0. */
int cc_sysfs_pci_is_vf(const char *root, const char *busid);
/* The bus id of a VF's physical function (the physfn link's target) into pf; 0, or -1 when
 * busid has no physfn link. */
int cc_sysfs_pci_physfn(const char *root, const char *busid, char *pf, size_t len);
/* NUMA node of PCI function busid ("0000:07:00.0") from its sysfs numa_node, as NCCL reads it;
 * -1 when unknown (no file, or -1 in it). */
int cc_sysfs_pci_numa(const char *root, const char *busid);

#endif
