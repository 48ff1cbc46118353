/* ncclxml.c - NCCL's topology XML (the file NCCL_TOPO_FILE names) for a probed node.
 *
 *   <system version="1">
 *     <cpu numaid [arch vendor familyid modelid]>      one per NUMA node with devices
 *       <pci busid class vendor device subsystem_vendor subsystem_device link_speed link_width>
 *         ... nested <pci> for each PCIe switch (its upstream port) ...
 *           <gpu [sm]> <nvlink target count tclass/> </gpu>
 *           <nic> <net name/> </nic>                   one per RDMA device (no VFs)
 *
 * Only GPUs, NICs and the switches above them are written: that is all NCCL reads. The PCI
 * tree is NCCL's view (cc_hw_pci_parent): a switch appears once, as its upstream port.
 *
 * An attribute present in the file wins over what NCCL would detect, so only what ccbench
 * knows exactly as NCCL would state it is written; NCCL fills in the rest for the devices it
 * uses (NCCL 2.18-2.28: xml.cc ncclTopoGetXmlFrom*, topo.cc ncclTopoFill*): the GPU's dev
 * (NVML's index), rank and gdr, the net's dev, speed, port, guid, latency, maxconn and gdr,
 * the CPU's affinity (the NUMA node's cpumap, not the probe's cgroup) and any CPU identity
 * hwloc did not give. A net without dev is one NCCL does not use: it is skipped. */
#include "topo/topo.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "topo/hw.h"
#include "topo/sysfs.h"

/* s as an XML attribute value (valid UTF-8, & < > " ' escaped), into buf; "" for NULL. A
 * character that does not fit whole is left out with all after it. */
static const char *xattr(const char *s, char *buf, size_t len)
{
    char text[256];
    size_t k = 0;
    cc_topo_text(text, sizeof text, s);
    for (const char *c = text; *c; c++) {
        const char *e = *c == '&' ? "&amp;" : *c == '<' ? "&lt;" : *c == '>' ? "&gt;"
                        : *c == '"' ? "&quot;" : *c == '\'' ? "&apos;" : NULL;
        size_t n = e ? strlen(e) : 1;
        if (!e && (*c & 0xc0) == 0xc0) /* a character's first byte: take all of it */
            while ((c[n] & 0xc0) == 0x80)
                n++;
        if (k + n >= len)
            break;
        memcpy(buf + k, e ? e : c, n);
        k += n;
        c += e ? 0 : n - 1;
    }
    buf[k] = 0;
    return buf;
}

struct xml_dev {
    hwloc_obj_t obj;
    const json_t *gpu; /* gpus[] entry, or NULL */
    const json_t *nic; /* nics[] entry, or NULL */
};

struct xml_w {
    struct cc_probe *p;
    FILE *out;
    struct xml_dev *d;
    int n, cap;
};

/* NCCL's parser limits: 2.21 on refuse a file of more than 256 elements, counting those its
 * own detection adds to the file's (nets the file leaves out, C2C links, PCI chains), so the
 * file keeps 56 free; 2.18 holds at most 32 children per element and overflows past them. */
#define XML_MAX_NODES 200
#define XML_MAX_SUBS 32

static int add_dev(struct xml_w *w, hwloc_obj_t o, const json_t *gpu, const json_t *nic)
{
    for (int i = 0; i < w->n; i++)
        if (w->d[i].obj == o) {
            if (gpu)
                w->d[i].gpu = gpu;
            return 0;
        }
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 16;
        struct xml_dev *nd = realloc(w->d, (size_t)w->cap * sizeof *nd);
        if (!nd)
            return -1;
        w->d = nd;
    }
    w->d[w->n++] = (struct xml_dev){o, gpu, nic};
    return 0;
}

/* Link speed as NCCL writes it ("16.0 GT/s PCIe") and width: the most the link supports, from
 * sysfs as NCCL reads it (the current link of an idle GPU is often trained down): the smaller
 * of the device's and the port above it (a Gen5 card in a Gen4 slot runs at Gen4); then the
 * current link, else derived from hwloc's link rate (GB/s over all lanes) at 16 lanes. */
static void link_attrs(struct xml_w *w, hwloc_obj_t o, char *speed, size_t len, int *width)
{
    static const double gts[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};
    char bus[16], up[32];
    int gen = -1, ugen = -1, uwidth = -1;
    cc_hw_busid(o, bus, sizeof bus);
    cc_sysfs_pcie_link(cc_hw_sysfs(w->p), bus, 1, &gen, width);
    snprintf(up, sizeof up, "%s/..", bus); /* sysfs: the directory above is the port */
    cc_sysfs_pcie_link(cc_hw_sysfs(w->p), up, 1, &ugen, &uwidth);
    if (gen > 0 && ugen > 0 && ugen < gen)
        gen = ugen;
    if (*width > 0 && uwidth > 0 && uwidth < *width)
        *width = uwidth;
    if (gen < 0)
        cc_sysfs_pcie_link(cc_hw_sysfs(w->p), bus, 0, &gen, width);
    if (gen < 0) {
        float gbs = cc_hw_pci(o)->linkspeed; /* GB/s */
        int wd = *width > 0 ? *width : 16;
        double lane_gts = gbs * 8.0 / wd * 130.0 / 128.0;
        for (int g = 1; g <= 7; g++)
            if (lane_gts > gts[g] * 0.7 && lane_gts < gts[g] * 1.3)
                gen = g;
        if (gen < 0)
            gen = 4; /* unknown: say Gen4, which NCCL treats like any other PCIe link */
    }
    if (*width <= 0)
        *width = 16;
    snprintf(speed, len, "%.1f GT/s PCIe", gts[gen]);
}

static void indent(FILE *f, int depth)
{
    for (int i = 0; i < depth; i++)
        fputs("  ", f);
}

/* NVLink peer class as NCCL reads it: a GPU, an NVSwitch; NULL for anything else. */
static const char *nvlink_tclass(const json_t *l)
{
    const char *kind = json_string_value(json_object_get(l, "kind"));
    return !kind ? NULL : !strcmp(kind, "gpu") ? "0x030200" : !strcmp(kind, "nvswitch") ? "0x068000"
                                                                                        : NULL;
}

/* The GPU's NVLinks, when every one is of a known kind: NCCL detects NVLinks itself only for
 * a GPU that has none in the file, so one unknown link means writing none. */
static json_t *known_nvlinks(const json_t *g)
{
    json_t *peers = json_object_get(json_object_get(g, "nvlink"), "peers");
    size_t i;
    json_t *l;
    json_array_foreach(peers, i, l)
        if (!nvlink_tclass(l))
            return NULL;
    return json_array_size(peers) ? peers : NULL;
}

static void write_gpu(struct xml_w *w, const json_t *g, int depth)
{
    int sm = (int)json_integer_value(json_object_get(g, "sm"));
    json_t *peers = known_nvlinks(g);
    char sma[32] = "";
    if (sm > 0) /* else NCCL asks CUDA (an sm of 0 would also turn its NVLinks off) */
        snprintf(sma, sizeof sma, " sm=\"%d\"", sm);
    indent(w->out, depth);
    fprintf(w->out, "<gpu%s%s\n", sma, peers ? ">" : "/>");
    if (!peers)
        return;
    size_t i;
    json_t *l;
    json_array_foreach(peers, i, l) {
        indent(w->out, depth + 1);
        char tg[256];
        fprintf(w->out, "<nvlink target=\"%s\" count=\"%d\" tclass=\"%s\"/>\n",
                xattr(json_string_value(json_object_get(l, "target")), tg, sizeof tg),
                (int)json_integer_value(json_object_get(l, "count")), nvlink_tclass(l));
    }
    indent(w->out, depth);
    fputs("</gpu>\n", w->out);
}

/* NCCL finds a net by its name alone (the RDMA device's): one per device, the rest of its
 * attributes from NCCL's own query of it. */
static void write_nic(struct xml_w *w, const json_t *nic, int depth)
{
    char nm[256];
    indent(w->out, depth);
    fputs("<nic>\n", w->out);
    indent(w->out, depth + 1);
    fprintf(w->out, "<net name=\"%s\"/>\n",
            xattr(json_string_value(json_object_get(nic, "name")), nm, sizeof nm));
    indent(w->out, depth);
    fputs("</nic>\n", w->out);
}

static int cmp_dev(const void *a, const void *b)
{
    const struct hwloc_pcidev_attr_s *x = cc_hw_pci(((const struct xml_dev *)a)->obj);
    const struct hwloc_pcidev_attr_s *y = cc_hw_pci(((const struct xml_dev *)b)->obj);
    unsigned long kx = (unsigned long)x->domain << 16 | (unsigned)x->bus << 8 | x->dev << 3 | x->func;
    unsigned long ky = (unsigned long)y->domain << 16 | (unsigned)y->bus << 8 | y->dev << 3 | y->func;
    return kx < ky ? -1 : kx > ky;
}

static void write_pci(struct xml_w *w, const struct xml_dev *d, int depth)
{
    const struct hwloc_pcidev_attr_s *a = cc_hw_pci(d->obj);
    char bus[16], speed[32];
    int width = -1;
    cc_hw_busid(d->obj, bus, sizeof bus);
    link_attrs(w, d->obj, speed, sizeof speed, &width);
    indent(w->out, depth);
    fprintf(w->out,
            "<pci busid=\"%s\" class=\"0x%04x00\" vendor=\"0x%04x\" device=\"0x%04x\" "
            "subsystem_vendor=\"0x%04x\" subsystem_device=\"0x%04x\" link_speed=\"%s\" "
            "link_width=\"%d\">\n",
            bus, a->class_id, a->vendor_id, a->device_id, a->subvendor_id, a->subdevice_id, speed,
            width);
    if (d->gpu)
        write_gpu(w, d->gpu, depth + 1);
    if (d->nic)
        write_nic(w, d->nic, depth + 1);
    for (int i = 0; i < w->n; i++)
        if (cc_hw_pci_parent(w->d[i].obj) == d->obj)
            write_pci(w, &w->d[i], depth + 1);
    indent(w->out, depth);
    fputs("</pci>\n", w->out);
}

/* Is the PCI function a virtual one (SR-IOV)? NCCL's nets are the physical devices. (The
 * probe leaves VFs out of its NICs already; a node from elsewhere may still list one.) */
static int is_vf(const struct xml_w *w, hwloc_obj_t o)
{
    char bus[16];
    cc_hw_busid(o, bus, sizeof bus);
    return cc_sysfs_pci_is_vf(cc_hw_sysfs(w->p), bus);
}

/* hwloc's architecture as NCCL names it (topo.cc kvDictCpuArch), NULL if NCCL has no name. */
static const char *nccl_arch(const char *a)
{
    if (!a)
        return NULL;
    if (!strcmp(a, "x86_64"))
        return "x86_64";
    if (!strcmp(a, "aarch64") || !strcmp(a, "arm64"))
        return "arm64";
    if (!strncmp(a, "ppc64", 5))
        return "ppc64";
    return NULL;
}

/* ` name="value"` into buf when value is known, else nothing (NCCL then reads it itself). */
static const char *opt_attr(const char *name, const char *value, char *buf, size_t len)
{
    char v[256];
    buf[0] = 0;
    if (value && *value)
        snprintf(buf, len, " %s=\"%s\"", name, xattr(value, v, sizeof v));
    return buf;
}

cc_status cc_probe_nccl_xml(struct cc_probe *p, const json_t *node, FILE *out, char *err, size_t errlen)
{
    struct xml_w w = {.p = p, .out = out};
    size_t i;
    json_t *x;
    cc_status st = CC_ENOMEM;

    /* The devices NCCL cares about, then every switch above them. */
    json_array_foreach(json_object_get(node, "gpus"), i, x) {
        hwloc_obj_t o = cc_hw_find_pci(p->t, json_string_value(json_object_get(x, "pci_bus_id")));
        if (o && add_dev(&w, o, x, NULL) != 0)
            goto done;
    }
    json_array_foreach(json_object_get(node, "nics"), i, x) {
        hwloc_obj_t o = cc_hw_find_pci(p->t, json_string_value(json_object_get(x, "pci_bus_id")));
        const char *kind = json_string_value(json_object_get(x, "kind"));
        if (!o || (kind && !strcmp(kind, "eth")) || is_vf(&w, o))
            continue; /* NCCL's socket transport finds interfaces itself; VFs are no nets */
        if (add_dev(&w, o, NULL, x) != 0)
            goto done;
    }
    for (int k = 0; k < w.n; k++) {
        hwloc_obj_t up = cc_hw_pci_parent(w.d[k].obj);
        if (up && add_dev(&w, up, NULL, NULL) != 0)
            goto done;
    }
    if (w.n)
        qsort(w.d, (size_t)w.n, sizeof *w.d, cmp_dev);

    hwloc_obj_t pkg = hwloc_get_obj_by_type(p->t, HWLOC_OBJ_PACKAGE, 0);
    const char *arch = nccl_arch(hwloc_obj_get_info_by_name(hwloc_get_root_obj(p->t), "Architecture"));
    const char *vendor = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
    const char *fam = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUFamilyNumber") : NULL;
    const char *mod = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModelNumber") : NULL;
    int nnuma = hwloc_get_nbobjs_by_type(p->t, HWLOC_OBJ_NUMANODE);
    hwloc_obj_t first = hwloc_get_next_obj_by_type(p->t, HWLOC_OBJ_NUMANODE, NULL);

    /* the NUMA node of each top-level device: NCCL's (sysfs numa_node), else hwloc's, else
     * the first node; and what NCCL's parser can hold */
    int *top = calloc((size_t)w.n + 1, sizeof *top);
    if (!top)
        goto done;
    int elements = 1, widest = 0; /* <system>, then per <cpu>: its top-level children */
    for (int k = 0; k < w.n; k++) {
        const json_t *peers = w.d[k].gpu ? known_nvlinks(w.d[k].gpu) : NULL;
        elements += 1 + (w.d[k].gpu ? 1 + (int)json_array_size(peers) : 0) + (w.d[k].nic ? 2 : 0);
        if ((int)json_array_size(peers) > widest)
            widest = (int)json_array_size(peers);
        if (cc_hw_pci_parent(w.d[k].obj)) {
            top[k] = -2;
            continue;
        }
        int nm = cc_hw_pci_numa(w.p, w.d[k].obj);
        hwloc_obj_t known = NULL; /* a node hwloc does not list gets the first one's place */
        while ((known = hwloc_get_next_obj_by_type(p->t, HWLOC_OBJ_NUMANODE, known)))
            if ((int)known->os_index == nm)
                break;
        top[k] = nnuma <= 1 || !known ? (first ? (int)first->os_index : 0) : nm;
    }
    for (int k = 0; k < w.n; k++) {
        int sub = 0; /* children of a switch */
        for (int j = 0; j < w.n; j++)
            sub += cc_hw_pci_parent(w.d[j].obj) == w.d[k].obj;
        if (sub > widest)
            widest = sub;
    }
    hwloc_obj_t numa = NULL;
    while ((numa = hwloc_get_next_obj_by_type(p->t, HWLOC_OBJ_NUMANODE, numa))) {
        int kids = 0;
        for (int k = 0; k < w.n; k++)
            kids += top[k] == (int)numa->os_index;
        elements += kids > 0;
        if (kids > widest)
            widest = kids;
    }
    if (elements > XML_MAX_NODES || widest > XML_MAX_SUBS) {
        cc_errbuf(err, errlen, "the NCCL topology XML would have %d elements (at most %d, so "
                  "that NCCL's own detection has room within its 256) or %d children under one "
                  "(NCCL 2.18 holds %d)", elements, XML_MAX_NODES, widest, XML_MAX_SUBS);
        free(top);
        st = CC_EINVAL;
        goto done;
    }

    /* NCCL completes a <cpu>'s identity (arch; vendor on x86; family and model on Intel) from
     * the machine only when it walks up from a GPU; a <cpu> holding nets alone must carry it
     * whole, or NCCL stops ("Attribute ... not found"). Without it, such a <cpu> is left out
     * and NCCL finds its nets itself. */
    int whole = arch && (strcmp(arch, "x86_64") != 0 ||
                         (vendor && (strcmp(vendor, "GenuineIntel") != 0 || (fam && mod))));
    fputs("<system version=\"1\">\n", out);
    while ((numa = hwloc_get_next_obj_by_type(p->t, HWLOC_OBJ_NUMANODE, numa))) {
        int kids = 0, gpus = 0;
        for (int k = 0; k < w.n; k++) {
            kids += top[k] == (int)numa->os_index;
            if (w.d[k].gpu) { /* its top-level device's node */
                hwloc_obj_t o = w.d[k].obj, up;
                while ((up = cc_hw_pci_parent(o)))
                    o = up;
                for (int j = 0; j < w.n; j++)
                    gpus += w.d[j].obj == o && top[j] == (int)numa->os_index;
            }
        }
        if (!kids)
            continue; /* NCCL trims a CPU without devices anyway */
        if (!gpus && !whole) {
            cc_info("NCCL topology XML: NUMA node %u has NICs but no GPU, and the CPU's identity "
                    "is incomplete (arch, vendor, family, model): left to NCCL's own detection",
                    numa->os_index);
            continue;
        }
        char ar[300], ve[300], fa[300], mo[300];
        fprintf(out, "  <cpu numaid=\"%u\"%s%s%s%s>\n", numa->os_index,
                opt_attr("arch", arch, ar, sizeof ar), opt_attr("vendor", vendor, ve, sizeof ve),
                opt_attr("familyid", fam, fa, sizeof fa), opt_attr("modelid", mod, mo, sizeof mo));
        for (int k = 0; k < w.n; k++)
            if (top[k] == (int)numa->os_index)
                write_pci(&w, &w.d[k], 2);
        fputs("  </cpu>\n", out);
    }
    fputs("</system>\n", out);
    free(top);
    st = ferror(out) ? CC_EIO : CC_OK;
    if (st != CC_OK)
        cc_errbuf(err, errlen, "cannot write NCCL topology XML");
done:
    if (st == CC_ENOMEM)
        cc_errbuf(err, errlen, "out of memory writing NCCL topology XML");
    free(w.d);
    return st;
}
