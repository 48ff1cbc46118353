/* ncclxml.c - NCCL's topology XML (the file NCCL_TOPO_FILE names) for a probed node.
 *
 *   <system version="1">
 *     <cpu numaid affinity arch vendor familyid modelid>      one per NUMA node
 *       <pci busid class vendor device subsystem_vendor subsystem_device link_speed link_width>
 *         ... nested <pci> for each PCIe switch (its upstream port) ...
 *           <gpu dev sm rank gdr> <nvlink target count tclass/> </gpu>
 *           <nic> <net name dev speed port latency guid maxconn gdr/> </nic>
 *
 * Only GPUs, NICs and the switches above them are written: that is all NCCL reads. The PCI
 * tree is NCCL's view (cc_hw_pci_parent): a switch appears once, as its upstream port. */
#include "topo/topo.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "topo/hw.h"
#include "topo/sysfs.h"

/* s as an XML attribute value (& < > " ' escaped), into buf; "" for NULL. */
static const char *xattr(const char *s, char *buf, size_t len)
{
    size_t k = 0;
    for (; s && *s && k + 7 < len; s++) {
        const char *e = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;"
                        : *s == '"' ? "&quot;" : *s == '\'' ? "&apos;" : NULL;
        if (e) {
            memcpy(buf + k, e, strlen(e));
            k += strlen(e);
        } else {
            buf[k++] = *s;
        }
    }
    buf[k] = 0;
    return buf;
}

struct xml_dev {
    hwloc_obj_t obj;
    const json_t *gpu; /* gpus[] entry, or NULL */
    const json_t *nic; /* nics[] entry, or NULL */
    int net_dev;       /* NCCL net index of the NIC's first port */
};

struct xml_w {
    struct cc_probe *p;
    FILE *out;
    struct xml_dev *d;
    int n, cap;
    int gdr;
};

static int add_dev(struct xml_w *w, hwloc_obj_t o, const json_t *gpu, const json_t *nic, int net_dev)
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
    w->d[w->n++] = (struct xml_dev){o, gpu, nic, net_dev};
    return 0;
}

/* Link speed as NCCL writes it ("16.0 GT/s PCIe") and width: the most the device supports,
 * from sysfs as NCCL reads it (the current link of an idle GPU is often trained down), then
 * the current link, else derived from hwloc's link rate (GB/s over all lanes) at 16 lanes. */
static void link_attrs(struct xml_w *w, hwloc_obj_t o, char *speed, size_t len, int *width)
{
    static const double gts[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0, 128.0};
    char bus[16];
    int gen = -1;
    cc_hw_busid(o, bus, sizeof bus);
    cc_sysfs_pcie_link(w->p->root, bus, 1, &gen, width);
    if (gen < 0)
        cc_sysfs_pcie_link(w->p->root, bus, 0, &gen, width);
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

static void write_gpu(struct xml_w *w, const json_t *g, int depth)
{
    int cuda = (int)json_integer_value(json_object_get(g, "cuda_index"));
    int dev = cuda >= 0 ? cuda : (int)json_integer_value(json_object_get(g, "index"));
    int sm = (int)json_integer_value(json_object_get(g, "sm"));
    json_t *peers = json_object_get(json_object_get(g, "nvlink"), "peers");
    indent(w->out, depth);
    fprintf(w->out, "<gpu dev=\"%d\" sm=\"%d\" rank=\"%d\" gdr=\"1\"%s\n", dev, sm > 0 ? sm : 0,
            dev, json_array_size(peers) ? ">" : "/>");
    if (!json_array_size(peers))
        return;
    size_t i;
    json_t *l;
    json_array_foreach(peers, i, l) {
        const char *kind = json_string_value(json_object_get(l, "kind"));
        indent(w->out, depth + 1);
        char tg[256];
        fprintf(w->out, "<nvlink target=\"%s\" count=\"%d\" tclass=\"%s\"/>\n",
                xattr(json_string_value(json_object_get(l, "target")), tg, sizeof tg),
                (int)json_integer_value(json_object_get(l, "count")),
                kind && !strcmp(kind, "gpu") ? "0x030200" : "0x068000");
    }
    indent(w->out, depth);
    fputs("</gpu>\n", w->out);
}

static void write_nic(struct xml_w *w, const json_t *nic, int net_dev, int depth)
{
    const char *kind = json_string_value(json_object_get(nic, "kind"));
    const char *guid = json_string_value(json_object_get(nic, "guid"));
    json_t *ports = json_object_get(nic, "ports");
    indent(w->out, depth);
    fputs("<nic>\n", w->out);
    size_t i;
    json_t *pt;
    json_array_foreach(ports, i, pt) {
        double gbps = json_number_value(json_object_get(pt, "rate_gbps"));
        char nm[256], gd[256];
        indent(w->out, depth + 1);
        fprintf(w->out,
                "<net name=\"%s\" dev=\"%d\" speed=\"%.0f\" port=\"%d\" latency=\"0.000000\" "
                "guid=\"%s\" maxconn=\"131072\" gdr=\"%d\"/>\n",
                xattr(json_string_value(json_object_get(nic, "name")), nm, sizeof nm),
                net_dev + (int)i, gbps * 1000.0, (int)json_integer_value(json_object_get(pt, "port")),
                xattr(guid ? guid : "0x0", gd, sizeof gd),
                w->gdr && kind && strcmp(kind, "eth") != 0);
    }
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
        write_nic(w, d->nic, d->net_dev, depth + 1);
    for (int i = 0; i < w->n; i++)
        if (cc_hw_pci_parent(w->d[i].obj) == d->obj)
            write_pci(w, &w->d[i], depth + 1);
    indent(w->out, depth);
    fputs("</pci>\n", w->out);
}

/* Linux cpumap format: 32-bit hex words, most significant first, comma separated. */
static void affinity(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    int last = hwloc_bitmap_last(set);
    int words = last < 0 ? 1 : last / 32 + 1;
    size_t k = 0;
    buf[0] = 0;
    for (int wd = words - 1; wd >= 0 && k < len; wd--) {
        unsigned long v = hwloc_bitmap_to_ith_ulong(set, (unsigned)(wd * 32 / (8 * (int)sizeof(unsigned long))));
        unsigned word = (unsigned)(v >> ((wd * 32) % (8 * sizeof(unsigned long))) & 0xffffffffUL);
        int n = snprintf(buf + k, len - k, "%s%08x", wd == words - 1 ? "" : ",", word);
        if (n < 0)
            break;
        k += (size_t)n;
    }
}

cc_status cc_probe_nccl_xml(struct cc_probe *p, const json_t *node, FILE *out, char *err, size_t errlen)
{
    struct xml_w w = {.p = p, .out = out, .gdr = cc_sysfs_gdr_loaded(p->root)};
    size_t i;
    json_t *x;
    int net_dev = 0;
    cc_status st = CC_ENOMEM;

    /* The devices NCCL cares about, then every switch above them. */
    json_array_foreach(json_object_get(node, "gpus"), i, x) {
        hwloc_obj_t o = cc_hw_find_pci(p->t, json_string_value(json_object_get(x, "pci_bus_id")));
        if (o && add_dev(&w, o, x, NULL, 0) != 0)
            goto done;
    }
    json_array_foreach(json_object_get(node, "nics"), i, x) {
        hwloc_obj_t o = cc_hw_find_pci(p->t, json_string_value(json_object_get(x, "pci_bus_id")));
        const char *kind = json_string_value(json_object_get(x, "kind"));
        if (!o || (kind && !strcmp(kind, "eth")))
            continue; /* NCCL's socket transport finds interfaces itself */
        if (add_dev(&w, o, NULL, x, net_dev) != 0)
            goto done;
        net_dev += (int)json_array_size(json_object_get(x, "ports"));
    }
    for (int k = 0; k < w.n; k++) {
        hwloc_obj_t up = cc_hw_pci_parent(w.d[k].obj);
        if (up && add_dev(&w, up, NULL, NULL, 0) != 0)
            goto done;
    }
    if (w.n)
        qsort(w.d, (size_t)w.n, sizeof *w.d, cmp_dev);

    hwloc_obj_t pkg = hwloc_get_obj_by_type(p->t, HWLOC_OBJ_PACKAGE, 0);
    const char *arch = hwloc_obj_get_info_by_name(hwloc_get_root_obj(p->t), "Architecture");
    const char *vendor = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
    const char *fam = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUFamilyNumber") : NULL;
    const char *mod = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModelNumber") : NULL;
    int nnuma = hwloc_get_nbobjs_by_type(p->t, HWLOC_OBJ_NUMANODE);

    fputs("<system version=\"1\">\n", out);
    hwloc_obj_t numa = NULL;
    while ((numa = hwloc_get_next_obj_by_type(p->t, HWLOC_OBJ_NUMANODE, numa))) {
        char aff[512], ar[128], ve[256], fa[64], mo[64];
        affinity(numa->cpuset, aff, sizeof aff);
        fprintf(out,
                "  <cpu numaid=\"%u\" affinity=\"%s\" arch=\"%s\" vendor=\"%s\" familyid=\"%s\" "
                "modelid=\"%s\">\n",
                numa->os_index, aff, xattr(arch ? arch : "x86_64", ar, sizeof ar),
                xattr(vendor, ve, sizeof ve), xattr(fam ? fam : "0", fa, sizeof fa),
                xattr(mod ? mod : "0", mo, sizeof mo));
        for (int k = 0; k < w.n; k++) {
            if (cc_hw_pci_parent(w.d[k].obj))
                continue;
            int nm = cc_hw_numa(w.d[k].obj);
            /* devices of unknown locality go under the first NUMA node */
            if (nm == (int)numa->os_index || (nm < 0 && numa->logical_index == 0) ||
                (nnuma == 1))
                write_pci(&w, &w.d[k], 2);
        }
        fputs("  </cpu>\n", out);
    }
    fputs("</system>\n", out);
    st = ferror(out) ? CC_EIO : CC_OK;
    if (st != CC_OK)
        cc_errbuf(err, errlen, "cannot write NCCL topology XML");
done:
    if (st == CC_ENOMEM)
        cc_errbuf(err, errlen, "out of memory writing NCCL topology XML");
    free(w.d);
    return st;
}
