/* test_topo.c - the probe on hwloc XML fixtures and a fake /sys tree, checked against golden
 * JSON and XML written by hand (tests/topo/golden); sysfs readers; the topology loader on
 * good and bad files; cluster merge and the majority check. No GPU, NIC or MPI needed. */
#include "topo/topo.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "core/text.h"
#include "topo/gpulib.h"
#include "topo/sysfs.h"

static char srcdir[512], sysroot[600];

static void path_of(char *buf, size_t len, const char *rel)
{
    snprintf(buf, len, "%s/%s", srcdir, rel);
}

/* ---- golden comparison: objects are a subset, arrays match in length and order --------- */

static int subset(const json_t *want, const json_t *got, char *where, size_t len)
{
    size_t n = strlen(where);
    if (json_is_object(want)) {
        const char *k;
        json_t *v;
        if (!json_is_object(got))
            return 0;
        json_object_foreach((json_t *)want, k, v) {
            snprintf(where + n, len - n, ".%s", k);
            if (!subset(v, json_object_get(got, k), where, len))
                return 0;
        }
    } else if (json_is_array(want)) {
        if (!json_is_array(got) || json_array_size(got) != json_array_size(want))
            return 0;
        for (size_t i = 0; i < json_array_size(want); i++) {
            snprintf(where + n, len - n, "[%zu]", i);
            if (!subset(json_array_get(want, i), json_array_get(got, i), where, len))
                return 0;
        }
    } else if (json_is_number(want)) {
        return json_is_number(got) && fabs(json_number_value(want) - json_number_value(got)) < 1e-9;
    } else if (!json_equal((json_t *)want, (json_t *)got)) {
        return 0;
    }
    where[n] = 0;
    return 1;
}

static json_t *probe_fixture(const char *name, json_t **nodeout)
{
    char xml[600], err[512] = "";
    snprintf(xml, sizeof xml, "%s/tests/topo/%s.xml", srcdir, name);
    struct cc_probe_opts o = {xml, sysroot, NULL, 1};
    struct cc_probe *p = NULL;
    json_t *node = NULL;
    cc_status st = cc_probe_open(&p, &o, err, sizeof err);
    if (st == CC_OK)
        st = cc_probe_node(p, &node, err, sizeof err);
    ok(st == CC_OK, "%s: probe of the hwloc XML fixture", name);
    if (st != CC_OK)
        diag("%s", err);
    cc_probe_close(p);
    *nodeout = node;
    return node;
}

static void check_golden(const char *name)
{
    char g[600];
    json_error_t je;
    json_t *node;
    snprintf(g, sizeof g, "%s/tests/topo/golden/%s.json", srcdir, name);
    json_t *want = json_load_file(g, 0, &je);
    ok(want != NULL, "%s: golden file loads", name);
    if (!probe_fixture(name, &node) || !want) {
        json_decref(want);
        return;
    }
    const char *k;
    json_t *v;
    json_object_foreach(want, k, v) {
        char where[256];
        snprintf(where, sizeof where, "%s", k);
        int same = subset(v, json_object_get(node, k), where, sizeof where);
        ok(same, "%s: %s as in the golden file", name, k);
        if (!same) {
            char *s = json_dumps(json_object_get(node, k), JSON_COMPACT);
            diag("first difference at %s; probe says %s", where, s ? s : "(nothing)");
            free(s);
        }
    }
    char err[512];
    json_t *one = cc_topo_merge(&node, 1, name);
    ok(cc_topo_validate(one, name, err, sizeof err) == CC_OK, "%s: probed node passes the schema", name);
    json_decref(one);
    json_decref(node);
    json_decref(want);
}

/* ---- a tiny XML reader: the document as a list of "<name a=v ...>" and "</name>" -------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Returns the event count; events[i] are malloc'd strings, attributes sorted by name. */
static int xml_events(const char *s, char **ev, int max)
{
    int n = 0;
    while ((s = strchr(s, '<')) && n < max - 1) {
        if (s[1] == '?' || s[1] == '!') {
            s = strchr(s, '>');
            if (!s)
                return -1;
            continue;
        }
        if (s[1] == '/') {
            const char *e = strchr(s, '>');
            if (!e)
                return -1;
            ev[n] = strndup(s, (size_t)(e - s + 1));
            n++;
            s = e;
            continue;
        }
        const char *p = s + 1;
        size_t nl = strcspn(p, " \t\n/>");
        char *attrs[32];
        int na = 0;
        p += nl;
        for (;;) {
            p += strspn(p, " \t\n");
            if (*p == '>' || (*p == '/' && p[1] == '>') || !*p)
                break;
            const char *q = strchr(p, '"');
            const char *q2 = q ? strchr(q + 1, '"') : NULL;
            if (!q2 || na == 32)
                return -1;
            attrs[na++] = strndup(p, (size_t)(q2 - p + 1));
            p = q2 + 1;
        }
        if (!*p)
            return -1;
        qsort(attrs, (size_t)na, sizeof *attrs, cmp_str);
        char buf[2048];
        size_t k = (size_t)snprintf(buf, sizeof buf, "<%.*s", (int)nl, s + 1);
        for (int i = 0; i < na; i++) {
            k += (size_t)snprintf(buf + k, sizeof buf - k, " %s", attrs[i]);
            free(attrs[i]);
        }
        snprintf(buf + k, sizeof buf - k, ">");
        ev[n++] = strdup(buf);
        if (*p == '/') {
            snprintf(buf, sizeof buf, "</%.*s>", (int)nl, s + 1);
            ev[n++] = strdup(buf);
        }
        s = p;
    }
    return n;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    (void)n;
    fclose(f);
    return buf;
}

static int count_prefix(char **ev, int n, const char *prefix)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += strncmp(ev[i], prefix, strlen(prefix)) == 0;
    return c;
}

/* NCCL topology XML written for the hwloc fixture tests/topo/NAME (malloc'd, or NULL on
 * failure with the status in *st). */
static char *nccl_xml_of(const char *name, cc_status *st)
{
    char xml[600], err[512] = "";
    snprintf(xml, sizeof xml, "%s/tests/topo/%s", srcdir, name);
    struct cc_probe_opts o = {xml, sysroot, NULL, 1};
    struct cc_probe *p = NULL;
    json_t *node = NULL;
    char *out = NULL;
    size_t outlen = 0;
    FILE *mem = open_memstream(&out, &outlen);
    *st = cc_probe_open(&p, &o, err, sizeof err);
    if (*st == CC_OK)
        *st = cc_probe_node(p, &node, err, sizeof err);
    if (*st == CC_OK)
        *st = cc_probe_nccl_xml(p, node, mem, err, sizeof err);
    fclose(mem);
    cc_probe_close(p);
    json_decref(node);
    if (*st != CC_OK) {
        diag("%s: %s", name, err);
        free(out);
        return NULL;
    }
    return out;
}

static void check_nccl_xml(void)
{
    char gold[600];
    cc_status st;
    char *out = nccl_xml_of("dgx-like.xml", &st);
    ok(st == CC_OK, "nccl xml: written for the DGX-like fixture");

    path_of(gold, sizeof gold, "tests/topo/golden/dgx-like.nccl.xml");
    char *want = slurp(gold);
    static char *got_ev[512], *want_ev[512];
    int ng = out ? xml_events(out, got_ev, 512) : -1;
    int nw = want ? xml_events(want, want_ev, 512) : -1;
    ok(ng > 0 && nw > 0, "nccl xml: output and expected file parse (%d and %d events)", ng, nw);
    int i;
    for (i = 0; i < ng && i < nw; i++)
        if (strcmp(got_ev[i], want_ev[i]) != 0)
            break;
    ok(ng == nw && i == ng, "nccl xml: every element and attribute as expected");
    if (i < ng || i < nw)
        diag("element %d: got %s, want %s", i, i < ng ? got_ev[i] : "(end)", i < nw ? want_ev[i] : "(end)");
    is_int(count_prefix(got_ev, ng, "<system version=\"1\""), 1, "nccl xml: one <system version=1>");
    is_int(count_prefix(got_ev, ng, "<cpu "), 2, "nccl xml: a <cpu> per NUMA node");
    is_int(count_prefix(got_ev, ng, "<gpu "), 4, "nccl xml: 4 <gpu>");
    is_int(count_prefix(got_ev, ng, "<net "), 3, "nccl xml: 3 <net>");
    is_int(count_prefix(got_ev, ng, "<nvlink "), 2, "nccl xml: 2 <nvlink> (GPU0<->GPU1)");
    for (i = 0; i < ng; i++)
        free(got_ev[i]);
    for (i = 0; i < nw; i++)
        free(want_ev[i]);
    free(out);
    free(want);
}

/* 4 GPUs NVLinked to one peer: on an NVSwitch (nvswitch.xml) each <gpu> has one <nvlink> to
 * the switch, with NVSwitch's class; NVLinked to something that is no NVSwitch (nvlink-cpu.xml:
 * the peer is a co-processor-class device, as a POWER9 CPU's NVLink is no switch) no switch is
 * made up, so no <nvlink> at all (an unknown peer gets none). */
static void check_nvlink_xml(const char *fixture, const char *what, int on_switch)
{
    cc_status st;
    char *out = nccl_xml_of(fixture, &st);
    static char *ev[256];
    int n = out ? xml_events(out, ev, 256) : -1;
    ok(n > 0, "%s: written and parsed (%d events)", what, n);
    is_int(count_prefix(ev, n, "<gpu "), 4, "%s: 4 <gpu>", what);
    if (on_switch) {
        is_int(count_prefix(ev, n, "<nvlink count=\"18\" target=\"0000:80:00.0\" tclass=\"0x068000\">"), 4,
               "%s: each GPU has 18 links to the NVSwitch, class 0x068000", what);
        is_int(count_prefix(ev, n, "<pci busid=\"0000:80:00.0\""), 0, "%s: the switch is no <pci> of its own", what);
    } else {
        is_int(count_prefix(ev, n, "<nvlink "), 0, "%s: no <nvlink> (no NVSwitch made up)", what);
    }
    for (int i = 0; i < n; i++)
        free(ev[i]);
    free(out);
}

/* ---- sysfs readers ---------------------------------------------------------------------- */

static void check_sysfs(void)
{
    json_t *ports = cc_sysfs_ib_ports(sysroot, "mlx5_0");
    json_t *p1 = json_array_get(ports, 0);
    is_int(json_array_size(ports), 1, "sysfs: mlx5_0 has 1 port");
    is_str(json_string_value(json_object_get(p1, "state")), "ACTIVE", "sysfs: port state without its number");
    is_near(json_number_value(json_object_get(p1, "rate_gbps")), 400, 0, "sysfs: NDR rate 400 Gb/s");
    is_str(json_string_value(json_object_get(p1, "width")), "4X", "sysfs: width from the rate");
    is_int(json_array_size(json_object_get(p1, "gids")), 1, "sysfs: unused (zero) GIDs left out");
    json_decref(ports);

    ports = cc_sysfs_ib_ports(sysroot, "mlx5_2");
    json_t *gids = json_object_get(json_array_get(ports, 0), "gids");
    is_int(json_array_size(gids), 2, "sysfs: RoCE port has 2 GIDs");
    is_int(json_integer_value(json_object_get(json_array_get(gids, 1), "index")), 3, "sysfs: GID index kept");
    is_str(json_string_value(json_object_get(json_array_get(gids, 1), "type")), "RoCE v2", "sysfs: GID type");
    json_decref(ports);

    ports = cc_sysfs_ib_ports(sysroot, "mlx5_9");
    is_int(json_array_size(ports), 0, "sysfs: absent device has no ports");
    json_decref(ports);

    char buf[64] = "";
    ok(cc_sysfs_ib_guid(sysroot, "mlx5_0", buf, sizeof buf) == 0 && !strcmp(buf, "0x0c42a10300653c5a"),
       "sysfs: node GUID as NCCL writes it (got %s)", buf);
    ok(cc_sysfs_ib_netdev(sysroot, "mlx5_0", buf, sizeof buf) == 0 && !strcmp(buf, "ib0"),
       "sysfs: netdev of an RDMA device (got %s)", buf);
    ok(cc_sysfs_ib_netdev(sysroot, "mlx5_1", buf, sizeof buf) != 0, "sysfs: RDMA device without netdev entry");

    json_t *nd = cc_sysfs_netdev(sysroot, "eth2");
    is_int(json_integer_value(json_object_get(nd, "mtu")), 9000, "sysfs: netdev MTU");
    is_int(json_integer_value(json_object_get(nd, "speed_mbps")), 200000, "sysfs: netdev speed");
    is_str(json_string_value(json_object_get(nd, "state")), "up", "sysfs: netdev state");
    json_decref(nd);
    nd = cc_sysfs_netdev(sysroot, "ens1f0");
    is_int(json_integer_value(json_object_get(nd, "speed_mbps")), -1, "sysfs: no speed file is -1");
    json_decref(nd);
    ok(cc_sysfs_netdev(sysroot, "nosuch0") == NULL, "sysfs: absent netdev");
    nd = cc_sysfs_netdevs(sysroot);
    is_int(json_array_size(nd), 7, "sysfs: every interface listed");
    is_str(json_string_value(json_object_get(json_array_get(nd, 0), "name")), "eno1", "sysfs: sorted by name");
    json_decref(nd);

    int gen, width;
    cc_sysfs_pcie_link(sysroot, "0000:03:00.0", 0, &gen, &width);
    ok(gen == 5 && width == 16, "sysfs: PCIe 32 GT/s x16 is Gen5 x16 (got %d x%d)", gen, width);
    cc_sysfs_pcie_link(sysroot, "0000:07:00.0", 0, &gen, &width);
    ok(gen == 1 && width == 8, "sysfs: current link 2.5 GT/s x8 is Gen1 x8 (got %d x%d)", gen, width);
    cc_sysfs_pcie_link(sysroot, "0000:07:00.0", 1, &gen, &width);
    ok(gen == 4 && width == 16, "sysfs: max link 16 GT/s x16 is Gen4 x16 (got %d x%d)", gen, width);
    cc_sysfs_pcie_link(sysroot, "0000:ff:00.0", 0, &gen, &width);
    ok(gen == -1 && width == -1, "sysfs: unknown PCIe link");
}

/* ---- loader ----------------------------------------------------------------------------- */

static void check_bad(const char *file, cc_status want, const char *msg)
{
    char path[600], err[1024] = "", expect[1200];
    json_t *t = (json_t *)1;
    snprintf(path, sizeof path, "%s/tests/topo/bad/%s", srcdir, file);
    cc_status st = cc_topo_load(path, &t, err, sizeof err);
    snprintf(expect, sizeof expect, msg, path);
    ok(st == want && t == NULL, "load %s fails with %s", file, cc_status_name(want));
    is_str(err, expect, "load %s: error names the file and the place", file);
}


/* cc_topo_print_summary's text for t (malloc'd; NULL if it could not be captured). */
static char *summary_text(const json_t *t)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return NULL;
    cc_topo_print_summary(mem, t);
    fclose(mem);
    return text;
}
static void check_loader(void)
{
    check_bad("malformed.json", CC_EPARSE,
              "cannot read topology '%s': line 4 column 36: string or '}' expected near '}'");
    check_bad("bad-class.json", CC_EPARSE,
              "topology '%s': nodes[0].paths.gpu_gpu[1][0]: 'NVLINK' is not a path class (X, NVL, PIX, PXB, PHB, SYS)");
    check_bad("bad-count.json", CC_EPARSE, "topology '%s': nodes[0]: 'count' must be from 1 to 1000000, not 0");
    check_bad("bad-schema.json", CC_EPARSE,
              "topology '%s': schema: 'ccbench.topology.v0' is not 'ccbench.topology.v1'");
    check_bad("bad-shape.json", CC_EPARSE, "topology '%s': nodes[0].paths.gpu_nic: has 1 rows for 2 GPUs");
    check_bad("bad-type.json", CC_EPARSE, "topology '%s': nodes[0].gpus[0]: 'memory_bytes' must be an integer");
    check_bad("nonexistent.json", CC_EIO, "cannot read topology '%s': No such file or directory");
    check_bad("", CC_EIO, "cannot read topology '%s': is a directory");

    char path[600], err[1024] = "";
    json_t *t = NULL;
    path_of(path, sizeof path, "topologies/dgx-a100-64.json");
    cc_status st = cc_topo_load(path, &t, err, sizeof err);
    ok(st == CC_OK, "load topologies/dgx-a100-64.json");
    if (st != CC_OK)
        diag("%s", err);
    is_int(cc_topo_node_count(t), 64, "dgx-a100-64: 64 nodes");
    is_int(cc_topo_gpus_per_node(t, 0), 8, "dgx-a100-64: 8 GPUs per node");
    is_int(cc_topo_nics_per_node(t, 0), 8, "dgx-a100-64: 8 NICs per node");
    is_int(cc_topo_gpu_memory(t, 0), 85899345920LL, "dgx-a100-64: 80 GiB per GPU");
    is_near(cc_topo_expected(t, 0, "nvlink_GBps_per_gpu"), 300, 0, "dgx-a100-64: NVLink3 300 GB/s per GPU");
    is_near(cc_topo_expected(t, 0, "nic_GBps"), 25, 0, "dgx-a100-64: HDR 25 GB/s per NIC");
    is_near(cc_topo_fabric(t, "rate_gbps_per_nic"), 200, 0, "dgx-a100-64: fabric HDR 200 Gb/s");
    is_str(cc_topo_path(t, 0, "gpu_gpu", 0, 7), "NVL", "dgx-a100-64: GPU0-GPU7 over NVLink");
    is_str(cc_topo_path(t, 0, "gpu_nic", 0, 0), "PXB", "dgx-a100-64: GPU0-mlx5_0 behind switches");
    ok(cc_topo_nearest_nic(t, 0, 0) == 0 && cc_topo_nearest_nic(t, 0, 5) == 4,
       "dgx-a100-64: nearest NIC of GPU0 is mlx5_0, of GPU5 mlx5_4 (first on ties)");
    ok(cc_topo_expected(t, 0, "nosuch") == -1 && cc_topo_path(t, 0, "gpu_gpu", 0, 8) == NULL &&
       cc_topo_node(t, 5) == NULL, "accessors: absent things are -1 / NULL");
    is_int(cc_topo_missing(t), 0, "dgx-a100-64: no node missing");

    /* a probe that failed on a node names it in "missing" */
    json_object_set_new(t, "missing", json_pack("[{s:s, s:s}]", "hostname", "dgx-9", "reason", "no hwloc"));
    ok(cc_topo_validate(t, "m", err, sizeof err) == CC_OK && cc_topo_missing(t) == 1,
       "missing: a host and its reason pass the schema and are counted");
    char *text = summary_text(t);
    ok(text && strstr(text, "\n# not probed: dgx-9: no hwloc\n"), "missing: shown in the summary");
    free(text);
    /* an L3 whose size is unknown (-1) is said so, not printed as "-0 MiB" */
    json_t *cpu = json_object_get(json_array_get(json_object_get(t, "nodes"), 0), "cpu");
    json_object_set_new(cpu, "l3", json_pack("{s:i, s:i}", "bytes", -1, "count", 2));
    text = summary_text(t);
    ok(text && strstr(text, ", 2 x L3 of unknown size,") && !strstr(text, "-0 MiB"),
       "summary: an L3 of unknown size");
    free(text);
    json_object_set_new(t, "missing", json_pack("[{s:i}]", "hostname", 9));
    cc_topo_validate(t, "m", err, sizeof err);
    is_str(err, "topology 'm': missing[0]: 'hostname' must be a string", "missing: entries are checked");
    json_decref(t);
}

/* ---- merge and majority ----------------------------------------------------------------- */

static void check_merge(void)
{
    json_t *a, *b, *c;
    probe_fixture("dgx-like", &a);
    probe_fixture("dgx-like", &b);
    probe_fixture("dgx-like", &c);
    if (!a || !b || !c)
        return;
    json_object_set_new(b, "hostname", json_string("dgx-2"));
    /* another host of the same kind has its own GUIDs and MACs */
    json_object_set_new(json_array_get(json_object_get(b, "nics"), 0), "guid", json_string("0x0c42a10300650000"));
    json_object_set_new(json_array_get(json_object_get(b, "netdevs"), 0), "mac", json_string("02:00:00:00:00:02"));
    json_object_set_new(c, "hostname", json_string("dgx-3"));
    /* dgx-3 lost a NIC port's rate: trained down to 100 Gb/s */
    json_t *nic = json_array_get(json_object_get(c, "nics"), 0);
    json_object_set_new(nic, "rate_gbps", json_real(100));
    json_t *nodes[3] = {a, b, c};
    json_t *t = cc_topo_merge(nodes, 3, "three");
    char err[512];
    ok(cc_topo_validate(t, "merged", err, sizeof err) == CC_OK, "merge: result passes the schema");
    is_int(cc_topo_node_count(t), 3, "merge: 3 nodes");
    int near[4];
    for (int g = 0; g < 4; g++)
        near[g] = cc_topo_nearest_nic(t, 0, g);
    ok(near[0] == 0 && near[1] == 0 && near[2] == 1 && near[3] == 1,
       "nearest NIC per GPU from the probed paths (got %d %d %d %d, want 0 0 1 1)", near[0], near[1],
       near[2], near[3]);
    {
        /* GPU3 is PHB to mlx5_1 and mlx5_2: with mlx5_1's port down, mlx5_2 is its nearest;
         * GPU2 keeps mlx5_1 (PIX beats PHB whatever the port) */
        json_t *x = json_deep_copy(t);
        json_t *n1 = json_array_get(json_object_get(cc_topo_node(x, 0), "nics"), 1);
        json_object_set_new(n1, "ports", json_pack("[{s:i, s:s}]", "port", 1, "state", "DOWN"));
        ok(cc_topo_nearest_nic(x, 0, 3) == 2 && cc_topo_nearest_nic(x, 0, 2) == 1,
           "nearest NIC: on a tie, one with a port up (got %d %d, want 2 1)",
           cc_topo_nearest_nic(x, 0, 3), cc_topo_nearest_nic(x, 0, 2));
        json_decref(x);
    }
    is_int(cc_topo_class_rank("PIX"), 2, "class rank: PIX after X and NVL");
    is_int(cc_topo_class_rank("NODE"), -1, "class rank: not a class");
    json_t *d = json_object_get(t, "differences");
    is_int(json_array_size(d), 1, "merge: one difference from the majority");
    is_str(json_string_value(json_object_get(json_array_get(d, 0), "hostname")), "dgx-3", "merge: the odd node is named");
    is_str(json_string_value(json_object_get(json_array_get(d, 0), "aspect")), "nics", "merge: the odd aspect is its NICs");
    is_str(json_string_value(json_object_get(json_object_get(t, "fabric"), "kind")), "infiniband", "merge: fabric kind");
    is_int(json_integer_value(json_object_get(json_object_get(t, "fabric"), "nics_per_node")), 2, "merge: 2 IB NICs per node");
    /* a third IB NIC on every node whose only port is down (an unplugged storage port at
     * SDR): no part of the fabric's count or rate */
    {
        json_t *ns[3] = {a, b, c}, *m;
        for (int k = 0; k < 3; k++)
            json_array_append_new(json_object_get(ns[k], "nics"),
                                  json_pack("{s:s, s:s, s:f, s:[{s:i, s:s, s:f}]}", "name", "mlx5_9",
                                            "kind", "ib", "rate_gbps", 2.5, "ports", "port", 1,
                                            "state", "DOWN", "rate_gbps", 2.5));
        m = cc_topo_merge(ns, 3, "down");
        json_t *f = json_object_get(m, "fabric");
        ok(json_integer_value(json_object_get(f, "nics_per_node")) == 2 &&
               json_number_value(json_object_get(f, "rate_gbps_per_nic")) == 100,
           "merge: a NIC whose ports are all down is left out of the fabric (2 NICs, 100 Gb/s)");
        json_decref(m);
        json_t *bare = json_pack("{s:s}", "name", "x");
        ok(cc_topo_nic_up(bare) == 1, "nic_up: no ports known: counted");
        json_decref(bare);
        for (int k = 0; k < 3; k++) { /* as before for what follows */
            json_t *nics = json_object_get(ns[k], "nics");
            json_array_remove(nics, json_array_size(nics) - 1);
        }
    }

    /* what a fault changes is a difference: a GPU trained at x8, on the other NUMA node, of
     * another compute capability, with fewer NVLinks; a NIC whose port is down, or on the
     * other NUMA node (each was taken for the majority's) */
    {
        static const struct {
            const char *array, *object, *key; /* array[0].object.key, or array[0].key */
            json_int_t value;
            const char *aspect;
        } odd[] = {
            {"gpus", "pcie", "width", 8, "gpus"}, {"gpus", NULL, "numa", 1, "gpus"},
            {"gpus", NULL, "sm", 80, "gpus"},     {"gpus", "nvlink", "links", 18, "gpus"},
            {"nics", NULL, "numa", 1, "nics"},    {"nics", NULL, "ports", 0, "nics"},
        };
        for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) {
            json_t *x = json_deep_copy(a);
            json_object_set_new(x, "hostname", json_string("odd"));
            json_t *dev = json_array_get(json_object_get(x, odd[k].array), 0);
            if (strcmp(odd[k].key, "ports") == 0) /* its one port down */
                json_object_set_new(dev, "ports", json_pack("[{s:i, s:s}]", "port", 1, "state", "DOWN"));
            else
                json_object_set_new(odd[k].object ? json_object_get(dev, odd[k].object) : dev,
                                    odd[k].key, json_integer(odd[k].value));
            json_t *ns[3] = {a, b, x};
            json_t *m = cc_topo_merge(ns, 3, "odd");
            json_t *dd = json_object_get(m, "differences");
            const char *h = json_string_value(json_object_get(json_array_get(dd, 0), "hostname"));
            const char *as = json_string_value(json_object_get(json_array_get(dd, 0), "aspect"));
            ok(json_array_size(dd) == 1 && h && strcmp(h, "odd") == 0 && as && strcmp(as, odd[k].aspect) == 0,
               "merge: %s[0].%s%s%s differing is named (%zu differences)", odd[k].array,
               odd[k].object ? odd[k].object : "", odd[k].object ? "." : "", odd[k].key,
               json_array_size(dd));
            json_decref(m);
            json_decref(x);
        }
    }

    char *text = summary_text(t);
    ok(text && strstr(text, "same as this node: dgx-2") && strstr(text, "differs from the majority: dgx-3 nics"),
       "summary: identical hosts grouped, the odd one reported");
    ok(text && strstr(text, "GPU1         NVL       X     SYS     SYS     PXB"), "summary: affinity matrix row");
    free(text);
    json_decref(t);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

/* A rows x cols matrix of path class c ("X" on the diagonal of a square one). */
static json_t *matrix(int rows, int cols, const char *c)
{
    json_t *m = json_array();
    for (int r = 0; r < rows; r++) {
        json_t *row = json_array();
        for (int k = 0; k < cols; k++)
            json_array_append_new(row, json_string(rows == cols && r == k ? "X" : c));
        json_array_append_new(m, row);
    }
    return m;
}

/* 16 GPUs and 16 NICs: the paths of a node are kilobytes of JSON. Nodes that differ only in
 * the last GPU's last NIC are told apart (a 2,048-byte signature cut that off). */
static void check_merge_big(void)
{
    json_t *base;
    if (!probe_fixture("dgx-like", &base))
        return;
    json_t *gpus = json_array(), *nics = json_array();
    for (int i = 0; i < 16; i++) {
        json_array_append_new(gpus, json_deep_copy(json_array_get(json_object_get(base, "gpus"), 0)));
        json_array_append_new(nics, json_deep_copy(json_array_get(json_object_get(base, "nics"), 0)));
    }
    json_object_set_new(base, "gpus", gpus);
    json_object_set_new(base, "nics", nics);
    json_object_set_new(base, "paths", json_pack("{s:o, s:o}", "gpu_gpu", matrix(16, 16, "NVL"),
                                                 "gpu_nic", matrix(16, 16, "SYS")));
    json_t *n[3] = {base, json_deep_copy(base), json_deep_copy(base)};
    json_object_set_new(n[1], "hostname", json_string("big-2"));
    json_object_set_new(n[2], "hostname", json_string("big-3"));
    json_t *row = json_array_get(json_object_get(json_object_get(n[2], "paths"), "gpu_nic"), 15);
    json_array_set_new(row, 15, json_string("PIX"));
    char *dump = json_dumps(json_object_get(n[2], "paths"), JSON_COMPACT | JSON_SORT_KEYS);
    ok(dump && strlen(dump) > 2048 && strstr(dump, "PIX") - dump > 2048,
       "merge 16x16: paths of %zu bytes, the difference past byte 2048", dump ? strlen(dump) : 0);
    free(dump);
    json_t *t = cc_topo_merge(n, 3, "big");
    char err[512];
    ok(cc_topo_validate(t, "big", err, sizeof err) == CC_OK, "merge 16x16: passes the schema");
    json_t *d = json_object_get(t, "differences");
    ok(json_array_size(d) == 1 &&
       !strcmp(json_string_value(json_object_get(json_array_get(d, 0), "hostname")), "big-3") &&
       !strcmp(json_string_value(json_object_get(json_array_get(d, 0), "aspect")), "paths"),
       "merge 16x16: big-3's paths differ from the majority (%zu differences)", json_array_size(d));
    char *text = summary_text(t);
    ok(text && strstr(text, "same as this node: big-2\n") && strstr(text, "\nnode big-3\n"),
       "merge 16x16: big-3 described on its own in the summary");
    free(text);
    json_decref(t);
    for (int i = 0; i < 3; i++)
        json_decref(n[i]);
}

static void check_bad_xml(void)
{
    char err[512] = "", path[600];
    struct cc_probe *p = NULL;
    path_of(path, sizeof path, "tests/topo/bad/malformed.json");
    struct cc_probe_opts o = {path, sysroot, NULL, 1};
    cc_status st = cc_probe_open(&p, &o, err, sizeof err);
    ok(st == CC_EINVAL && p == NULL && strstr(err, path), "probe: a non-hwloc XML file is refused by name (%s)", err);
}

/* Text from the machine becomes valid UTF-8: never cut inside a character, '?' for a byte
 * that starts none (stray, overlong, surrogate, cut short). */
static void check_text(void)
{
    char buf[8];
    cc_topo_text(buf, sizeof buf, "abcdef" "\xc3\xa9"); /* 6 + 2 bytes: the last 2 do not fit */
    is_str(buf, "abcdef", "text: a character that does not fit whole is left out");
    cc_topo_text(buf, sizeof buf, "ab\xc3\xa9");
    is_str(buf, "ab\xc3\xa9", "text: a whole character is kept");
    cc_topo_text(buf, sizeof buf, "a\xae" "b\xc3");
    is_str(buf, "a?b?", "text: Latin-1 byte and a character cut short become '?'");
    cc_topo_text(buf, sizeof buf, "\xc0\xaf\xed\xa0\x80");
    is_str(buf, "?????", "text: overlong form and surrogate become '?' per byte");
    json_t *j = cc_topo_jtext("x\xff");
    is_str(json_string_value(j), "x?", "text: as a JSON string");
    json_decref(j);
    /* one printable line, in place: controls (C0, DEL, C1) become one '?' each, a character
     * cut by the end is dropped, other bad bytes become '?' */
    char line[] = "a\nb\tc\x1b[31m\x7f" "\xc2\x85" "\xc3\xa9" "\xff" "\xe2\x82";
    cc_text_line(line);
    is_str(line, "a?b?c?[31m??\xc3\xa9?", "text line: controls to '?', a cut character dropped");
    char bidi[] = "a\xe2\x80\xa8" "b\xe2\x80\xae" "c\xe2\x81\xa6" "d\xe2\x80\x94"; /* LS RLO LRI, em dash */
    cc_text_line(bidi);
    is_str(bidi, "a?b?c?d\xe2\x80\x94", "text line: line separator and bidi controls to '?'");
    char nbsp[] = "\xc2\xa0x"; /* U+00A0 is no control */
    cc_text_line(nbsp);
    is_str(nbsp, "\xc2\xa0x", "text line: U+00A0 kept");
}

/* NVML and the CUDA runtime are optional: opening them where they are absent (or where
 * there is no driver) must work, and a bus id that is no GPU stays unknown everywhere. */
static void check_gpulib(void)
{
    struct cc_gpu_info gi;
    int mask = cc_gpulib_open();
    diag("NVIDIA libraries usable here: NVML %s, CUDA runtime %s", mask & 1 ? "yes" : "no",
         mask & 2 ? "yes" : "no");
    cc_gpu_info_init(&gi);
    cc_gpulib_query("0000:ff:1f.7", &gi);
    ok(gi.cuda_index == -1 && gi.memory_bytes == -1 && gi.sm == -1 && gi.model[0] == 0 &&
       gi.nvlinks == -1 && gi.npeers == 0, "gpulib: a bus id that is no GPU stays unknown");
    ok(cc_gpulib_open() == mask, "gpulib: opening twice gives the same answer");
    cc_gpulib_close();
}

int main(void)
{
    const char *s = getenv("CC_SRCDIR");
    snprintf(srcdir, sizeof srcdir, "%s", s && *s ? s : ".");
    snprintf(sysroot, sizeof sysroot, "%s/tests/topo/sysfs", srcdir);
    check_golden("dgx-like");
    check_golden("dual-socket");
    check_golden("nogpu");
    check_golden("nvswitch");
    check_nvlink_xml("nvswitch.xml", "nvswitch xml", 1);
    check_nvlink_xml("nvlink-cpu.xml", "nvlink to a non-switch", 0);
    check_nccl_xml();
    check_sysfs();
    check_loader();
    check_merge();
    check_merge_big();
    check_bad_xml();
    check_text();
    check_gpulib();
    return tap_done();
}
