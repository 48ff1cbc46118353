/* hw.c - PCI helpers over hwloc objects and NCCL's path classes (see hw.h). */
#include "topo/hw.h"

#include <stdio.h>

#include "topo/sysfs.h"

const struct hwloc_pcidev_attr_s *cc_hw_pci(hwloc_obj_t o)
{
    if (o->type == HWLOC_OBJ_PCI_DEVICE)
        return &o->attr->pcidev;
    if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
        return &o->attr->bridge.upstream.pci;
    return NULL;
}

void cc_hw_busid(hwloc_obj_t o, char *buf, size_t len)
{
    const struct hwloc_pcidev_attr_s *p = cc_hw_pci(o);
    if (!p) {
        snprintf(buf, len, "?");
        return;
    }
    snprintf(buf, len, "%04x:%02x:%02x.%x", p->domain, p->bus, p->dev, p->func);
}

int cc_hw_pci_cmp(const void *a, const void *b)
{
    const struct hwloc_pcidev_attr_s *x = cc_hw_pci(*(const hwloc_obj_t *)a);
    const struct hwloc_pcidev_attr_s *y = cc_hw_pci(*(const hwloc_obj_t *)b);
    if (!x || !y)
        return !x - !y;
    unsigned long long kx = (unsigned long long)x->domain << 24 | (unsigned)x->bus << 16 |
                            (unsigned)x->dev << 8 | x->func;
    unsigned long long ky = (unsigned long long)y->domain << 24 | (unsigned)y->bus << 16 |
                            (unsigned)y->dev << 8 | y->func;
    return kx < ky ? -1 : kx > ky;
}

hwloc_obj_t cc_hw_find_pci(hwloc_topology_t t, const char *busid)
{
    unsigned d, b, s, f;
    if (sscanf(busid, "%x:%x:%x.%x", &d, &b, &s, &f) != 4)
        return NULL;
    return hwloc_get_pcidev_by_busid(t, d, b, s, f);
}

static int is_pci_bridge(hwloc_obj_t o)
{
    return o && o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

hwloc_obj_t cc_hw_pci_parent(hwloc_obj_t o)
{
    hwloc_obj_t p = o->parent;
    if (!is_pci_bridge(p))
        return NULL; /* on a host bridge: the CPU */
    hwloc_obj_t gp = p->parent;
    return is_pci_bridge(gp) ? gp : NULL;
}

int cc_hw_numa(hwloc_obj_t o)
{
    hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(NULL, o);
    if (!a || !a->nodeset || hwloc_bitmap_weight(a->nodeset) != 1)
        return -1;
    return hwloc_bitmap_first(a->nodeset);
}

int cc_hw_pci_numa(const struct cc_probe *p, hwloc_obj_t o)
{
    char bus[16];
    cc_hw_busid(o, bus, sizeof bus);
    int n = cc_sysfs_pci_numa(cc_hw_sysfs(p), bus);
    if (n >= 0 || (n = cc_hw_numa(o)) >= 0)
        return n;
    /* several NUMA nodes where the device attaches (a package with HBM, CXL or GPU memory
     * beside its DRAM): the one of ordinary memory, which hwloc gives no subtype */
    hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(p->t, o), m = NULL;
    int found = -1;
    if (!a || !a->nodeset)
        return -1;
    while ((m = hwloc_get_next_obj_by_type(p->t, HWLOC_OBJ_NUMANODE, m)))
        if (hwloc_bitmap_isset(a->nodeset, m->os_index) && (!m->subtype || !*m->subtype)) {
            if (found >= 0)
                return -1; /* two of them: no answer */
            found = (int)m->os_index;
        }
    return found;
}

/* The NUMA node a device's PCI tree hangs from: that of its top-level switch, or its own. */
static int tree_numa(const struct cc_probe *p, hwloc_obj_t o)
{
    for (hwloc_obj_t up = cc_hw_pci_parent(o); up; up = cc_hw_pci_parent(up))
        o = up;
    return cc_hw_pci_numa(p, o);
}

/* A Broadcom PEX switch that NCCL flattens (ncclTopoFlattenBcmSwitches): a Gen4 PEX88xxx
 * in base mode (device 0xc010, subsystem 0x1000:0xaXXX) or a Gen5 PEX89xxx (0xc030,
 * subsystem 0x1000:0x0XXX at the top level, 0x1XXX below). Returns 4 or 5 for a switch of
 * that level (0 top, 1 below), else 0. */
static int bcm_gen(hwloc_obj_t o, int level)
{
    const struct hwloc_pcidev_attr_s *a = o ? cc_hw_pci(o) : NULL;
    if (!a || a->vendor_id != 0x1000 || a->subvendor_id != 0x1000)
        return 0;
    if (a->device_id == 0xc010 && (a->subdevice_id & 0xf000) == 0xa000)
        return 4;
    if (a->device_id == 0xc030 && (a->subdevice_id & 0xf000) == (unsigned)level << 12)
        return 5;
    return 0;
}

/* The switch above o in the tree NCCL searches: cc_hw_pci_parent, where a second-level
 * Broadcom switch is merged into the first (it sustains full bandwidth across its ports). */
static hwloc_obj_t nccl_parent(hwloc_obj_t o)
{
    hwloc_obj_t p = cc_hw_pci_parent(o), pp = p ? cc_hw_pci_parent(p) : NULL;
    int g = bcm_gen(p, 1);
    return g && bcm_gen(pp, 0) == g ? pp : p;
}

/* NCCL path class over PCI between two devices: count the switches on the path in NCCL's
 * view of the tree (nccl_parent); none shared means the path goes through the CPU. */
const char *cc_hw_path_class(const struct cc_probe *p, hwloc_obj_t a, hwloc_obj_t b)
{
    if (a == b)
        return "X";
    int ia = 0;
    for (hwloc_obj_t x = nccl_parent(a); x; x = nccl_parent(x)) {
        ia++;
        int ib = 0;
        for (hwloc_obj_t y = nccl_parent(b); y; y = nccl_parent(y)) {
            ib++;
            if (x == y)
                return ia + ib - 1 <= 1 ? "PIX" : "PXB";
        }
    }
    /* through the CPU: the NUMA nodes NCCL places the two trees under (sysfs numa_node, as
     * the "numa" fields and the NCCL XML have them), else hwloc's localities */
    int na = tree_numa(p, a), nb = tree_numa(p, b);
    if (na >= 0 && nb >= 0)
        return na == nb ? "PHB" : "SYS";
    hwloc_obj_t ca = hwloc_get_non_io_ancestor_obj(NULL, a);
    hwloc_obj_t cb = hwloc_get_non_io_ancestor_obj(NULL, b);
    if (ca && cb && ca->nodeset && cb->nodeset && hwloc_bitmap_intersects(ca->nodeset, cb->nodeset))
        return "PHB";
    return "SYS";
}

