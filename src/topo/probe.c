/* probe.c - describe one node: hwloc gives CPUs, NUMA nodes and the PCI tree with its GPUs
 * and NICs; sysfs adds port states and rates; NVML and the CUDA runtime (when present) add
 * GPU models, memory, CUDA numbers and NVLinks. The result is one "nodes[]" object of the
 * topology schema (docs/topology.md). */
#include "topo/topo.h"

#include <ifaddrs.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "topo/gpulib.h"
#include "topo/hw.h"
#include "topo/sysfs.h"

/* ---- open / close ----------------------------------------------------------------------- */

cc_status cc_probe_open(struct cc_probe **out, const struct cc_probe_opts *o, char *err, size_t errlen)
{
    struct cc_probe *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p)
        return CC_ENOMEM;
    /* an XML export describes another machine: this one's /sys is only read when asked */
    snprintf(p->root, sizeof p->root, "%s", o->sysfs_root && *o->sysfs_root ? o->sysfs_root
                                            : o->hwloc_xml                   ? ""
                                                                             : "/");
    p->no_gpu_libs = o->no_gpu_libs;
    p->real = !o->hwloc_xml;
    if (hwloc_topology_init(&p->t) != 0) {
        free(p);
        cc_errbuf(err, errlen, "cannot initialize hwloc");
        return CC_ESYS;
    }
    /* Keep every PCI device and bridge and the OS devices (GPUs, NICs, network interfaces). */
    hwloc_topology_set_io_types_filter(p->t, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* The whole machine, not the cores and NUMA nodes a cgroup or Slurm cpuset lets this
     * process use (an XML export's allowed sets likewise): else cores, memory, the NUMA node
     * of devices and the path classes between them shrink with the job's allocation. */
    hwloc_topology_set_flags(p->t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    struct stat sb;
    int sr = o->hwloc_xml ? stat(o->hwloc_xml, &sb) : 0;
    if (o->hwloc_xml && (sr != 0 || S_ISDIR(sb.st_mode))) {
        cc_errbuf(err, errlen, "cannot read hwloc XML '%s': %s", o->hwloc_xml,
                  sr != 0 ? strerror(errno) : "is a directory");
        cc_probe_close(p);
        return CC_EINVAL;
    }
    if (o->hwloc_xml && hwloc_topology_set_xml(p->t, o->hwloc_xml) != 0) {
        cc_errbuf(err, errlen, "cannot read hwloc XML '%s': not an hwloc XML export",
                  o->hwloc_xml);
        cc_probe_close(p);
        return CC_EINVAL; /* a bad file given by the user */
    }
    if (hwloc_topology_load(p->t) != 0) {
        cc_errbuf(err, errlen, "cannot load topology%s%s%s", o->hwloc_xml ? " '" : "",
                  o->hwloc_xml ? o->hwloc_xml : "", o->hwloc_xml ? "'" : "");
        cc_probe_close(p);
        return o->hwloc_xml ? CC_EPARSE : CC_ESYS;
    }
    const char *xml_host = hwloc_obj_get_info_by_name(hwloc_get_root_obj(p->t), "HostName");
    char host[256];
    if (o->hostname)
        snprintf(host, sizeof host, "%s", o->hostname);
    else if (!p->real && xml_host)
        snprintf(host, sizeof host, "%s", xml_host);
    else if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = 0;
    cc_topo_text(p->host, sizeof p->host, host); /* valid UTF-8, never cut inside a character */
    *out = p;
    return CC_OK;
}

void cc_probe_close(struct cc_probe *p)
{
    if (!p)
        return;
    if (p->t)
        hwloc_topology_destroy(p->t);
    free(p);
}

/* ---- building the JSON ------------------------------------------------------------------ */

/* Every value of the node goes through these: a NULL value (jansson could not build it: out
 * of memory, since all text is made valid UTF-8 first) or a failed add marks the node failed
 * at `what`, so that it is reported, never silently left short. */
static void add(struct cc_probe *p, json_t *array, json_t *v, const char *what)
{
    if (json_array_append_new(array, v) != 0 && !p->fail)
        p->fail = what;
}

static void set(struct cc_probe *p, json_t *obj, const char *key, json_t *v)
{
    if (json_object_set_new(obj, key, v) != 0 && !p->fail)
        p->fail = key;
}

/* ---- CPU and memory --------------------------------------------------------------------- */

static const char *info(hwloc_obj_t o, const char *name)
{
    const char *v = o ? hwloc_obj_get_info_by_name(o, name) : NULL;
    return v ? v : "";
}

/* Size of one cache of the type (-1 when hwloc shows none: unknown), and how many there are. */
static long long cache_size(struct cc_probe *p, hwloc_obj_type_t type, int *count)
{
    hwloc_obj_t c = hwloc_get_obj_by_type(p->t, type, 0);
    *count = hwloc_get_nbobjs_by_type(p->t, type);
    return c && c->attr->cache.size ? (long long)c->attr->cache.size : -1;
}

/* A number hwloc keeps as text (CPUFamilyNumber); -1 when absent or not a number. */
static int info_int(hwloc_obj_t o, const char *name)
{
    const char *v = info(o, name);
    char *end;
    long n = strtol(v, &end, 10);
    return end != v && *end == 0 && n >= 0 && n <= INT_MAX ? (int)n : -1;
}

static json_t *probe_cpu(struct cc_probe *p)
{
    hwloc_obj_t pkg = hwloc_get_obj_by_type(p->t, HWLOC_OBJ_PACKAGE, 0);
    hwloc_obj_t root = hwloc_get_root_obj(p->t);
    int sockets = hwloc_get_nbobjs_by_type(p->t, HWLOC_OBJ_PACKAGE);
    int nl2, nl3;
    long long l2 = cache_size(p, HWLOC_OBJ_L2CACHE, &nl2), l3 = cache_size(p, HWLOC_OBJ_L3CACHE, &nl3);
    json_t *cpu = json_pack("{s:o, s:o, s:o, s:i, s:i, s:i, s:i, s:i}",
                     "model", cc_topo_jtext(info(pkg, "CPUModel")),
                     "vendor", cc_topo_jtext(info(pkg, "CPUVendor")),
                     "arch", cc_topo_jtext(info(root, "Architecture")),
                     "family", info_int(pkg, "CPUFamilyNumber"),
                     "model_number", info_int(pkg, "CPUModelNumber"),
                     "sockets", sockets > 0 ? sockets : 1,
                     "cores", hwloc_get_nbobjs_by_type(p->t, HWLOC_OBJ_CORE),
                     "pus", hwloc_get_nbobjs_by_type(p->t, HWLOC_OBJ_PU));
    /* one cache's size and how many there are */
    set(p, cpu, "l2", json_pack("{s:I, s:i}", "bytes", (json_int_t)l2, "count", nl2));
    set(p, cpu, "l3", json_pack("{s:I, s:i}", "bytes", (json_int_t)l3, "count", nl3));
    return cpu;
}

/* Block devices (hwloc reports their size in kB). */
static json_t *probe_disks(struct cc_probe *p)
{
    json_t *a = json_array();
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_osdev(p->t, o))) {
        if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_BLOCK)
            continue;
        hwloc_obj_t pci = o->parent;
        while (pci && !cc_hw_pci(pci))
            pci = pci->parent;
        char bus[16] = "";
        if (pci)
            cc_hw_busid(pci, bus, sizeof bus);
        const char *size = hwloc_obj_get_info_by_name(o, "Size");
        const char *model = hwloc_obj_get_info_by_name(o, "Model");
        add(p, a, json_pack("{s:o, s:o, s:s, s:i, s:I}", "name", cc_topo_jtext(o->name ? o->name : "?"),
                            "model", cc_topo_jtext(model), "pci_bus_id", bus,
                            "numa", cc_hw_numa(o), "size_bytes",
                            (json_int_t)(size ? strtoll(size, NULL, 10) * 1024 : -1)), "disks");
    }
    return a;
}

static json_t *probe_numa(struct cc_probe *p, long long *total)
{
    json_t *a = json_array();
    *total = 0;
    hwloc_obj_t n = NULL;
    while ((n = hwloc_get_next_obj_by_type(p->t, HWLOC_OBJ_NUMANODE, n))) {
        char *cpus = NULL;
        hwloc_bitmap_asprintf(&cpus, n->cpuset);
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(p->t, HWLOC_OBJ_PACKAGE, n);
        add(p, a, json_pack("{s:i, s:s, s:i, s:I}", "os_index", (int)n->os_index,
                            "cpuset", cpus ? cpus : "", "package",
                            pkg ? (int)pkg->logical_index : 0, "memory_bytes",
                            (json_int_t)n->attr->numanode.local_memory), "numa");
        *total += (long long)n->attr->numanode.local_memory;
        free(cpus);
    }
    return a;
}

/* ---- GPUs ------------------------------------------------------------------------------- */

/* A few data-center GPUs by PCI device id, for when no NVIDIA library is there to ask. */
static const struct { unsigned id; const char *model; int sm; long long mem; } gpu_ids[] = {
    {0x20b0, "NVIDIA A100-SXM4-40GB", 80, 40LL << 30},
    {0x20b2, "NVIDIA A100-SXM4-80GB", 80, 80LL << 30},
    {0x2330, "NVIDIA H100 80GB HBM3", 90, 80LL << 30},
    {0x2335, "NVIDIA H200", 90, 141LL * 1000000000},
};

static int is_gpu(hwloc_obj_t o)
{
    return o->type == HWLOC_OBJ_PCI_DEVICE && o->attr->pcidev.vendor_id == 0x10de &&
           (o->attr->pcidev.class_id == 0x0300 || o->attr->pcidev.class_id == 0x0302);
}

/* What hwloc's own CUDA/NVML backends recorded on the GPU's OS devices, if they ran. */
static void gpu_from_hwloc(hwloc_obj_t g, struct cc_gpu_info *gi)
{
    for (hwloc_obj_t c = g->io_first_child; c; c = c->next_sibling) {
        if (c->type != HWLOC_OBJ_OS_DEVICE)
            continue;
        const char *m = hwloc_obj_get_info_by_name(c, "GPUModel");
        if (m && !gi->model[0])
            cc_topo_text(gi->model, sizeof gi->model, m);
        int idx;
        if (c->name && sscanf(c->name, "cuda%d", &idx) == 1)
            gi->cuda_index = idx;
        const char *kb = hwloc_obj_get_info_by_name(c, "CUDAGlobalMemorySize");
        if (kb)
            gi->memory_bytes = strtoll(kb, NULL, 10) * 1024;
    }
}

/* GB/s per NVLink and direction for a GPU of compute capability sm (x10): NVLink 5
 * (Blackwell, sm 100 on) 50, NVLink 2-4 (Volta to Hopper) 25, NVLink 1 (P100) 20; unknown 25. */
static double nvlink_link_GBps(int sm)
{
    return sm >= 100 ? 50.0 : sm >= 70 ? 25.0 : sm == 60 ? 20.0 : 25.0;
}

/* Is a peer in hwloc's NVLink matrix an NVSwitch: a PCI bridge device of class 0x0680 (NVIDIA
 * switches), or a Misc object hwloc names NVSwitch? Other peers (a POWER9 CPU's NVLink) are not. */
static int nvswitch_obj(hwloc_obj_t o)
{
    for (; o; o = o->parent) {
        if (o->type == HWLOC_OBJ_PCI_DEVICE)
            return o->attr->pcidev.class_id == 0x0680 && o->attr->pcidev.vendor_id == 0x10de;
        if (o->type == HWLOC_OBJ_MISC)
            return (o->subtype && strstr(o->subtype, "NVSwitch")) ||
                   (o->name && strstr(o->name, "NVSwitch"));
    }
    return 0;
}

/* MB/s that hwloc wrote per NVLink into a GPU's row of its matrix (whose values add up to
 * `total`). hwloc 2.9.0 (the `hwlocVersion` of the topology, live or from an XML export)
 * wrote 50,000 for NVLink 3 and 4 (A100, H100), every other version 25,000 up to NVLink 4 and
 * 50,000 for NVLink 5. No GPU has more than 18 links, so a row past 18 x 25,000 was counted at
 * 50,000 too: a Blackwell GPU that the device table does not know (sm -1), or hwloc 2.9.0.
 * Otherwise the generation's rate (nvlink_link_GBps). */
static double hwloc_link_MBps(const char *maker, int sm, double total)
{
    if (sm != 60 && ((maker && strcmp(maker, "2.9.0") == 0) || total > 18 * 25000.0))
        return 50000;
    return nvlink_link_GBps(sm) * 1000.0;
}

/* NVLinks from hwloc's "NVLinkBandwidth" matrix (MB/s between GPU OS devices, filled by
 * hwloc's NVML backend; also present in saved XML), counted at the rate per link the hwloc
 * that made the matrix used (hwloc_link_MBps). */
static void gpu_links_from_hwloc(struct cc_probe *p, hwloc_obj_t *gpus, int ngpu,
                                 struct cc_gpu_info *gi)
{
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (hwloc_distances_get_by_name(p->t, "NVLinkBandwidth", &nr, &d, 0) != 0 || nr < 1)
        return;
    const char *maker = hwloc_obj_get_info_by_name(hwloc_get_root_obj(p->t), "hwlocVersion");
    int *owner = calloc(d->nbobjs, sizeof *owner);
    for (unsigned i = 0; owner && i < d->nbobjs; i++) {
        owner[i] = -1;
        for (hwloc_obj_t up = d->objs[i]; up; up = up->parent)
            for (int g = 0; g < ngpu; g++)
                if (up == gpus[g])
                    owner[i] = g;
    }
    for (unsigned i = 0; owner && i < d->nbobjs; i++) {
        int g = owner[i];
        if (g < 0 || gi[g].nvlinks >= 0)
            continue; /* not a GPU, or NVML already told */
        gi[g].nvlinks = gi[g].nvlinks_up = 0;
        double total = 0;
        for (unsigned j = 0; j < d->nbobjs; j++)
            total += i == j ? 0 : (double)d->values[i * d->nbobjs + j];
        double per = hwloc_link_MBps(maker, gi[g].sm, total);
        gi[g].link_GBps = per / 1000.0;
        for (unsigned j = 0; j < d->nbobjs; j++) {
            hwloc_uint64_t bw = d->values[i * d->nbobjs + j];
            if (i == j || bw == 0 || gi[g].npeers >= CC_GPU_MAX_LINKS)
                continue;
            struct cc_gpu_link *l = &gi[g].peers[gi[g].npeers++];
            int count = (int)lround((double)bw / per);
            l->count = count > 0 ? count : 1;
            /* 1 an NVSwitch, 0 a GPU, 2 something else (unknown: no NVLink class from it) */
            l->is_switch = owner[j] >= 0 ? 0 : nvswitch_obj(d->objs[j]) ? 1 : 2;
            hwloc_obj_t peer = NULL; /* the GPU, or the PCI device of a switch */
            for (hwloc_obj_t up = d->objs[j]; up && !peer; up = up->parent)
                if (cc_hw_pci(up))
                    peer = up;
            if (peer)
                cc_hw_busid(peer, l->busid, sizeof l->busid);
            else
                snprintf(l->busid, sizeof l->busid, "nvswitch");
            gi[g].nvlinks += l->count;
            gi[g].nvlinks_up += l->count;
        }
    }
    free(owner);
    hwloc_distances_release(p->t, d);
}

static json_t *gpu_json(struct cc_probe *p, int idx, hwloc_obj_t g, const struct cc_gpu_info *gi)
{
    char bus[16];
    cc_hw_busid(g, bus, sizeof bus);
    json_t *links = json_array();
    for (int k = 0; k < gi->npeers; k++)
        add(p, links, json_pack("{s:s, s:i, s:s}", "target", gi->peers[k].busid,
                                               "count", gi->peers[k].count, "kind",
                                               gi->peers[k].is_switch == 1   ? "nvswitch"
                                               : gi->peers[k].is_switch == 0 ? "gpu"
                                                                             : "unknown"), "gpus");
    char devid[8];
    snprintf(devid, sizeof devid, "0x%04x", g->attr->pcidev.device_id);
    return json_pack("{s:i, s:i, s:s, s:s, s:s, s:i, s:I, s:i, s:{s:i, s:i, s:i, s:i}, s:{s:i, s:i, s:o}}",
                     "index", idx, "cuda_index", gi->cuda_index, "model", gi->model,
                     "pci_bus_id", bus, "pci_device_id", devid, "numa", cc_hw_pci_numa(p, g),
                     "memory_bytes", (json_int_t)gi->memory_bytes, "sm", gi->sm,
                     "pcie", "gen", gi->pcie_gen, "width", gi->pcie_width, "max_gen",
                     gi->pcie_max_gen, "max_width", gi->pcie_max_width,
                     "nvlink", "links", gi->nvlinks < 0 ? -1 : gi->nvlinks, "up",
                     gi->nvlinks_up < 0 ? -1 : gi->nvlinks_up, "peers", links);
}

/* ---- NICs ------------------------------------------------------------------------------- */

/* Is the physical function of VF `bus` a NIC of this node itself (an RDMA or network device
 * hwloc sees)? Then the VF is a slice of it and no NIC of its own. A PF the node does not
 * list as a NIC (a container given only VFs) leaves the VFs as the node's NICs; a physfn
 * whose target cannot be read counts as listed. */
static int pf_listed(struct cc_probe *p, const char *bus)
{
    char pf[32];
    if (cc_sysfs_pci_physfn(cc_hw_sysfs(p), bus, pf, sizeof pf) != 0)
        return 1;
    hwloc_obj_t o = hwloc_get_pcidev_by_busidstring(p->t, pf);
    for (hwloc_obj_t c = o ? o->io_first_child : NULL; c; c = c->next_sibling)
        if (c->type == HWLOC_OBJ_OS_DEVICE && (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ||
                                               c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK))
            return 1;
    return 0;
}

static double first_rate(json_t *ports)
{
    size_t i;
    json_t *pt;
    double any = 0;
    json_array_foreach(ports, i, pt) {
        double r = json_number_value(json_object_get(pt, "rate_gbps"));
        if (cc_topo_port_up(pt) == 1)
            return r;
        if (any == 0)
            any = r;
    }
    return any;
}

static json_t *nic_json(struct cc_probe *p, hwloc_obj_t pci, hwloc_obj_t ib, hwloc_obj_t net)
{
    char bus[16], guid[40] = "";
    cc_hw_busid(pci, bus, sizeof bus);
    json_t *ports;
    const char *kind = "eth";
    char netname[64] = "";
    if (net && net->name)
        cc_topo_text(netname, sizeof netname, net->name);
    if (ib && !ib->name) {
        ports = json_array(); /* an RDMA device hwloc did not name: nothing to look up */
        kind = "ib";
    } else if (ib) {
        ports = cc_sysfs_ib_ports(cc_hw_sysfs(p), ib->name);
        kind = "ib";
        size_t i;
        json_t *pt;
        json_array_foreach(ports, i, pt) {
            const char *ll = json_string_value(json_object_get(pt, "link_layer"));
            if (ll && !strcmp(ll, "Ethernet"))
                kind = "roce";
        }
        if (cc_sysfs_ib_guid(cc_hw_sysfs(p), ib->name, guid, sizeof guid) != 0) {
            /* hwloc keeps it as "0c42:a103:..." */
            const char *h = hwloc_obj_get_info_by_name(ib, "NodeGUID");
            size_t k = 2;
            if (h) {
                snprintf(guid, sizeof guid, "0x");
                for (; *h && k < sizeof guid - 1; h++)
                    if (*h != ':')
                        guid[k++] = *h;
                guid[k] = 0;
            }
        }
        if (!netname[0] && cc_sysfs_ib_netdev(cc_hw_sysfs(p), ib->name, netname, sizeof netname) == 0)
            cc_topo_text(netname, sizeof netname, netname);
    } else {
        ports = json_array();
        json_t *nd = cc_sysfs_netdev(cc_hw_sysfs(p), netname);
        if (nd) {
            long long mbps = json_integer_value(json_object_get(nd, "speed_mbps"));
            add(p, ports, json_pack("{s:i, s:O, s:f, s:s}", "port", 1, "state",
                                    json_object_get(nd, "state"),
                                    "rate_gbps", mbps > 0 ? mbps / 1000.0 : 0.0,
                                    "link_layer", "Ethernet"), "nics");
            json_decref(nd);
        }
    }
    /* an RDMA device without a name is kept (it is there) as "?" */
    const char *name = !ib ? netname : ib->name ? ib->name : "?";
    double rate = first_rate(ports);
    json_t *o = json_pack("{s:o, s:s, s:s, s:i, s:f, s:o}", "name", cc_topo_jtext(name),
                          "kind", kind, "pci_bus_id", bus, "numa", cc_hw_pci_numa(p, pci),
                          "rate_gbps", rate, "ports", ports);
    if (!o && !p->fail)
        p->fail = "nics";
    set(p, o, "netdev", netname[0] ? json_string(netname) : json_null());
    if (guid[0])
        set(p, o, "guid", cc_topo_jtext(guid));
    return o;
}

/* The PCI devices that pass `keep` (NULL: all) in bus id order (hwloc lists them in tree
 * order, by NUMA node), into a new array; *n gets the count. NULL when out of memory. */
static hwloc_obj_t *pci_sorted(struct cc_probe *p, int (*keep)(hwloc_obj_t), int *n)
{
    hwloc_obj_t o = NULL, *v;
    *n = 0;
    while ((o = hwloc_get_next_pcidev(p->t, o)))
        *n += !keep || keep(o);
    if (!(v = calloc((size_t)*n + 1, sizeof *v)))
        return NULL;
    *n = 0;
    while ((o = hwloc_get_next_pcidev(p->t, o)))
        if (!keep || keep(o))
            v[(*n)++] = o;
    qsort(v, (size_t)*n, sizeof *v, cc_hw_pci_cmp);
    return v;
}

/* The NICs in PCI bus id order: each RDMA device (OpenFabrics OS device) is one NIC; a PCI
 * network interface with no RDMA device is an Ethernet NIC. Virtual interfaces are only
 * netdevs; SR-IOV virtual functions (a physfn in sysfs) are no NICs (they share their
 * physical function's port, and NCCL's nets are the physical devices). */
static int find_nics(struct cc_probe *p, json_t *nics, hwloc_obj_t **objs)
{
    int n = 0, cap = 0, npci;
    *objs = NULL;
    hwloc_obj_t *all = pci_sorted(p, NULL, &npci);
    if (!all) {
        p->fail = p->fail ? p->fail : "nics";
        return 0;
    }
    for (int i = 0; i < npci; i++) {
        hwloc_obj_t pci = all[i], net = NULL, ibs[8];
        int nib = 0;
        char bus[16];
        for (hwloc_obj_t c = pci->io_first_child; c; c = c->next_sibling) {
            if (c->type != HWLOC_OBJ_OS_DEVICE)
                continue;
            if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && nib < 8)
                ibs[nib++] = c;
            else if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && !net)
                net = c;
        }
        cc_hw_busid(pci, bus, sizeof bus);
        if ((nib || net) && cc_sysfs_pci_is_vf(cc_hw_sysfs(p), bus) && pf_listed(p, bus))
            continue;
        for (int k = 0; k < (nib ? nib : net ? 1 : 0); k++) {
            if (n == cap) {
                cap = cap ? 2 * cap : 8;
                hwloc_obj_t *nv = realloc(*objs, (size_t)cap * sizeof *nv);
                if (!nv) {
                    p->fail = p->fail ? p->fail : "nics";
                    free(all);
                    return n;
                }
                *objs = nv;
            }
            (*objs)[n++] = pci;
            add(p, nics, nic_json(p, pci, nib ? ibs[k] : NULL, net), "nics");
        }
    }
    free(all);
    return n;
}

/* ---- paths ------------------------------------------------------------------------------ */

static int nvlinked(const struct cc_gpu_info *a, const struct cc_gpu_info *b, const char *bbus)
{
    int a_sw = 0, b_sw = 0;
    for (int k = 0; k < a->npeers; k++) {
        if (strcmp(a->peers[k].busid, bbus) == 0)
            return 1;
        a_sw |= a->peers[k].is_switch == 1;
    }
    for (int k = 0; k < b->npeers; k++)
        b_sw |= b->peers[k].is_switch == 1;
    return a_sw && b_sw; /* both on the NVSwitch fabric */
}

/* ---- the node --------------------------------------------------------------------------- */

static json_t *netdevs_with_addresses(struct cc_probe *p)
{
    json_t *nd = cc_sysfs_netdevs(cc_hw_sysfs(p));
    size_t i;
    json_t *o;
    json_array_foreach(nd, i, o) set(p, o, "addresses", json_array());
    if (!p->real || !nd || strcmp(p->root, "/") != 0)
        return nd; /* a fake tree or a saved topology: the addresses are not this machine's */
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) != 0)
        return nd;
    for (struct ifaddrs *a = ifa; a; a = a->ifa_next) {
        if (!a->ifa_addr || (a->ifa_addr->sa_family != AF_INET && a->ifa_addr->sa_family != AF_INET6))
            continue;
        char host[NI_MAXHOST];
        socklen_t len = a->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in)
                                                          : sizeof(struct sockaddr_in6);
        if (getnameinfo(a->ifa_addr, len, host, sizeof host, NULL, 0, NI_NUMERICHOST) != 0)
            continue;
        json_array_foreach(nd, i, o) {
            const char *name = json_string_value(json_object_get(o, "name"));
            if (name && strcmp(name, a->ifa_name) == 0)
                add(p, json_object_get(o, "addresses"), json_string(host), "netdevs");
        }
    }
    freeifaddrs(ifa);
    return nd;
}

cc_status cc_probe_node(struct cc_probe *p, json_t **out, char *err, size_t errlen)
{
    hwloc_obj_t *gobj = NULL, *nobj = NULL;
    int ngpu = 0;
    struct cc_gpu_info *gi = NULL;
    *out = NULL;
    p->fail = NULL;

    /* GPUs numbered in PCI bus id order, as nvidia-smi and CUDA_DEVICE_ORDER=PCI_BUS_ID */
    gobj = pci_sorted(p, is_gpu, &ngpu);
    gi = calloc((size_t)ngpu + 1, sizeof *gi);
    if (!gobj || !gi) {
        free(gobj);
        free(gi);
        return CC_ENOMEM;
    }
    int libs = (p->no_gpu_libs || !p->real) ? 0 : cc_gpulib_open();
    int driver_gpus = libs ? cc_gpulib_count() : -1;
    if (driver_gpus > ngpu) /* restricted /sys/bus/pci, HWLOC_COMPONENTS, a PCI domain hwloc
                             * skipped: the driver's GPUs beyond hwloc's are not described */
        cc_warn("%s: the NVIDIA driver has %d GPU(s), hwloc's PCI tree %d: only those %d are in "
                "the topology (is PCI discovery limited here?)", p->host, driver_gpus, ngpu, ngpu);
    for (int i = 0; i < ngpu; i++) {
        hwloc_obj_t g = gobj[i];
        struct cc_gpu_info *x = &gi[i];
        char bus[16];
        cc_gpu_info_init(x);
        gpu_from_hwloc(g, x);
        cc_hw_busid(g, bus, sizeof bus);
        if (libs) {
            cc_gpulib_query(bus, x);
            cc_topo_text(x->model, sizeof x->model, x->model);
        }
        for (size_t k = 0; k < sizeof gpu_ids / sizeof gpu_ids[0]; k++) {
            if (gpu_ids[k].id != g->attr->pcidev.device_id)
                continue;
            if (!x->model[0])
                snprintf(x->model, sizeof x->model, "%s", gpu_ids[k].model);
            if (x->sm < 0)
                x->sm = gpu_ids[k].sm;
            if (x->memory_bytes < 0)
                x->memory_bytes = gpu_ids[k].mem;
        }
        if (!x->model[0])
            snprintf(x->model, sizeof x->model, "NVIDIA GPU 0x%04x", g->attr->pcidev.device_id);
        if (x->pcie_gen < 0)
            cc_sysfs_pcie_link(cc_hw_sysfs(p), bus, 0, &x->pcie_gen, &x->pcie_width);
        if (x->pcie_max_gen < 0)
            cc_sysfs_pcie_link(cc_hw_sysfs(p), bus, 1, &x->pcie_max_gen, &x->pcie_max_width);
    }
    gpu_links_from_hwloc(p, gobj, ngpu, gi);
    /* A peer that is none of this node's GPUs is an NVSwitch (drivers too old to say). */
    for (int i = 0; i < ngpu; i++)
        for (int k = 0; k < gi[i].npeers; k++) {
            if (gi[i].peers[k].is_switch >= 0)
                continue;
            gi[i].peers[k].is_switch = 1;
            for (int j = 0; j < ngpu; j++) {
                char bus[16];
                cc_hw_busid(gobj[j], bus, sizeof bus);
                if (!strcmp(bus, gi[i].peers[k].busid))
                    gi[i].peers[k].is_switch = 0;
            }
        }

    json_t *node = json_object();
    long long mem = 0;
    set(p, node, "hostname", json_string(p->host));
    set(p, node, "count", json_integer(1));
    set(p, node, "cpu", probe_cpu(p));
    set(p, node, "numa", probe_numa(p, &mem));
    set(p, node, "memory_bytes", json_integer(mem));
    json_t *gpus = json_array();
    for (int i = 0; i < ngpu; i++)
        add(p, gpus, gpu_json(p, i, gobj[i], &gi[i]), "gpus");
    set(p, node, "gpus", json_incref(gpus));
    json_t *nics = json_array();
    int nnic = find_nics(p, nics, &nobj);
    set(p, node, "nics", json_incref(nics));
    set(p, node, "netdevs", netdevs_with_addresses(p));
    set(p, node, "disks", probe_disks(p));

    json_t *gg = json_array(), *gn = json_array();
    for (int i = 0; i < ngpu; i++) {
        json_t *row = json_array(), *nrow = json_array();
        for (int j = 0; j < ngpu; j++) {
            const char *c = cc_hw_path_class(p, gobj[i], gobj[j]);
            char bus[16];
            cc_hw_busid(gobj[j], bus, sizeof bus);
            if (i != j && nvlinked(&gi[i], &gi[j], bus))
                c = "NVL";
            add(p, row, json_string(c), "paths");
        }
        for (int j = 0; j < nnic; j++)
            add(p, nrow, json_string(cc_hw_path_class(p, gobj[i], nobj[j])), "paths");
        add(p, gg, row, "paths");
        add(p, gn, nrow, "paths");
    }
    set(p, node, "paths", json_pack("{s:o, s:o}", "gpu_gpu", gg, "gpu_nic", gn));

    /* What can be expected of the links seen: a NIC moves its port rate, NVLink its
     * generation's rate per link and direction (nvlink_link_GBps). */
    json_t *exp = json_object();
    double nic = 0;
    size_t i;
    json_t *n;
    /* the NICs with a port up; when none of them is (the fabric's ports all down), what
     * they would move. With RDMA NICs (up ones, in the first pass), the Ethernet ports
     * (management, 1 GbE) are not the fabric. */
    for (int want_up = 1; want_up >= 0 && nic == 0; want_up--) {
        int rdma = 0;
        json_array_foreach(nics, i, n) {
            const char *kind = json_string_value(json_object_get(n, "kind"));
            rdma |= kind && strcmp(kind, "eth") != 0 && (!want_up || cc_topo_nic_up(n));
        }
        json_array_foreach(nics, i, n) {
            const char *kind = json_string_value(json_object_get(n, "kind"));
            double r = json_number_value(json_object_get(n, "rate_gbps"));
            if ((rdma && (!kind || strcmp(kind, "eth") == 0)) || (want_up && !cc_topo_nic_up(n)))
                continue; /* management Ethernet beside RDMA, or every port down */
            if (r > 0 && (nic == 0 || r < nic))
                nic = r;
        }
    }
    if (nic > 0)
        set(p, exp, "nic_GBps", json_real(nic / 8.0));
    double minbw = -1; /* the GPU with the least NVLink bandwidth: links up x per-link rate */
    for (int k = 0; k < ngpu; k++) {
        double link = gi[k].link_GBps > 0 ? gi[k].link_GBps : nvlink_link_GBps(gi[k].sm);
        double bw = gi[k].nvlinks_up > 0 ? gi[k].nvlinks_up * link : 0;
        if (minbw < 0 || bw < minbw)
            minbw = bw;
    }
    if (minbw > 0)
        set(p, exp, "nvlink_GBps_per_gpu", json_real(minbw));
    set(p, node, "expected", exp);

    free(gobj);
    free(nobj);
    free(gi);
    json_decref(gpus);
    json_decref(nics);
    if (p->fail) {
        json_decref(node);
        cc_errbuf(err, errlen, "cannot describe node '%s': out of memory building its %s",
                  p->host, p->fail);
        return CC_ENOMEM;
    }
    *out = node;
    return CC_OK;
}
