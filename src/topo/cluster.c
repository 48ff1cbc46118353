/* cluster.c - merging probed nodes into a cluster topology, finding the nodes that differ
 * from the majority, and the human summary. */
#include "topo/topo.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const aspects[] = {"cpu", "memory", "gpus", "nics", "paths"};
#define NASPECTS (int)(sizeof aspects / sizeof aspects[0])

/* One comparable line per aspect of a node ("4 GPUs; NVIDIA H100 80GB HBM3 80 GiB sm 90 NUMA 0
 * PCIe Gen5 x16 (x16 now) 18/18 NVLinks up; ..."), malloc'd and never cut (a node of 16 GPUs
 * and 16 NICs has paths of several kB); NULL when out of memory. What an idle node changes
 * by itself (a GPU's current PCIe speed) is left out; what a fault changes (a link trained
 * narrower, a port down, a device on the other socket) is in. */
static char *signature(const json_t *n, int aspect)
{
    char *buf = NULL;
    size_t len = 0, i;
    int bad = 0;
    json_t *x;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    switch (aspect) {
    case 0: {
        json_t *c = json_object_get(n, "cpu");
        const char *model = json_string_value(json_object_get(c, "model"));
        fprintf(f, "%s, %lld sockets, %lld cores, %lld PUs", model ? model : "?",
                (long long)json_integer_value(json_object_get(c, "sockets")),
                (long long)json_integer_value(json_object_get(c, "cores")),
                (long long)json_integer_value(json_object_get(c, "pus")));
        break;
    }
    case 1:
        fprintf(f, "%.0f GiB in %zu NUMA nodes",
                (double)json_integer_value(json_object_get(n, "memory_bytes")) / (1 << 30),
                json_array_size(json_object_get(n, "numa")));
        break;
    case 2:
        fprintf(f, "%zu GPUs", json_array_size(json_object_get(n, "gpus")));
        json_array_foreach(json_object_get(n, "gpus"), i, x) {
            const char *model = json_string_value(json_object_get(x, "model"));
            const json_t *pcie = json_object_get(x, "pcie"), *nv = json_object_get(x, "nvlink");
            fprintf(f, "; %s %.0f GiB sm %lld NUMA %lld PCIe Gen%lld x%lld (x%lld now) %lld/%lld "
                    "NVLinks up", model ? model : "?",
                    (double)json_integer_value(json_object_get(x, "memory_bytes")) / (1 << 30),
                    (long long)json_integer_value(json_object_get(x, "sm")),
                    (long long)json_integer_value(json_object_get(x, "numa")),
                    (long long)json_integer_value(json_object_get(pcie, "max_gen")),
                    (long long)json_integer_value(json_object_get(pcie, "max_width")),
                    (long long)json_integer_value(json_object_get(pcie, "width")),
                    (long long)json_integer_value(json_object_get(nv, "up")),
                    (long long)json_integer_value(json_object_get(nv, "links")));
        }
        break;
    case 3:
        fprintf(f, "%zu NICs", json_array_size(json_object_get(n, "nics")));
        json_array_foreach(json_object_get(n, "nics"), i, x) {
            const char *kind = json_string_value(json_object_get(x, "kind"));
            fprintf(f, "; %s %.0f Gb/s %s NUMA %lld", kind ? kind : "?",
                    json_number_value(json_object_get(x, "rate_gbps")),
                    cc_topo_nic_up(x) ? "up" : "down",
                    (long long)json_integer_value(json_object_get(x, "numa")));
        }
        break;
    default: {
        json_t *paths = json_object_get(n, "paths");
        char *s = paths ? json_dumps(paths, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        bad = paths && !s;
        fputs(s ? s : "", f);
        free(s);
    }
    }
    if (fclose(f) != 0 || bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Strings grouped by sorting (a cluster of thousands of nodes is compared in n log n). */
static char *const *sort_strs;

static int by_str(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b, c = strcmp(sort_strs[x], sort_strs[y]);
    return c ? c : (x > y) - (x < y);
}

/* idx[0..n) = 0..n-1 ordered by str, equal strings by index. Returns idx, or NULL. */
static int *group_order(char *const *str, int n)
{
    int *idx = malloc((size_t)(n ? n : 1) * sizeof *idx);
    if (!idx)
        return NULL;
    for (int i = 0; i < n; i++)
        idx[i] = i;
    sort_strs = str;
    qsort(idx, (size_t)n, sizeof *idx, by_str);
    return idx;
}

static void free_strs(char **s, int n)
{
    for (int i = 0; s && i < n; i++)
        free(s[i]);
    free(s);
}

/* The signatures of `aspect` of every node, or NULL when out of memory. */
static char **signatures(json_t *const *nodes, int n, int aspect)
{
    char **sig = calloc((size_t)(n ? n : 1), sizeof *sig);
    for (int i = 0; sig && i < n; i++)
        if (!(sig[i] = signature(nodes[i], aspect))) {
            free_strs(sig, n);
            return NULL;
        }
    return sig;
}

/* Index of the most common signature (the first node of it on ties); -1 when out of memory. */
static int majority(char *const *sig, int n)
{
    int best = 0, bestc = 0;
    int *idx = group_order(sig, n);
    if (!idx)
        return -1;
    for (int a = 0, b; a < n; a = b) {
        for (b = a; b < n && strcmp(sig[idx[a]], sig[idx[b]]) == 0; b++)
            ;
        if (b - a > bestc || (b - a == bestc && idx[a] < best))
            best = idx[a], bestc = b - a;
    }
    free(idx);
    return best;
}

/* Per aspect, the hosts whose signature is not the majority's; NULL when out of memory. */
static json_t *differences(json_t *const *nodes, int n)
{
    json_t *d = json_array();
    for (int k = 0; d && k < NASPECTS; k++) {
        char **sig = signatures(nodes, n, k);
        int maj = sig ? majority(sig, n) : -1;
        for (int i = 0; maj >= 0 && i < n; i++)
            if (strcmp(sig[i], sig[maj]) != 0 &&
                json_array_append_new(d, json_pack("{s:O, s:s, s:s, s:s}", "hostname",
                                                   json_object_get(nodes[i], "hostname"),
                                                   "aspect", aspects[k], "value", sig[i],
                                                   "majority", sig[maj])) != 0)
                maj = -1;
        free_strs(sig, n);
        if (maj < 0) {
            json_decref(d);
            d = NULL;
        }
    }
    return d;
}

int cc_topo_port_up(const json_t *port)
{
    const char *s = json_string_value(json_object_get(port, "state"));
    return !s ? -1 : !strcmp(s, "ACTIVE") || !strcmp(s, "up");
}

int cc_topo_nic_up(const json_t *nic)
{
    const json_t *ports = json_object_get(nic, "ports");
    size_t i;
    json_t *pt;
    int known = 0;
    json_array_foreach(ports, i, pt) {
        int up = cc_topo_port_up(pt);
        if (up == 1)
            return 1;
        known |= up == 0;
    }
    return !known;
}

static json_t *fabric(json_t *const *nodes, int n)
{
    static const char *const kinds[] = {"ib", "roce", "eth"};
    static const char *const names[] = {"infiniband", "roce", "ethernet"};
    for (int k = 0; k < 3; k++) {
        int per_node = -1;
        double rate = -1;
        for (int i = 0; i < n; i++) {
            int c = 0;
            size_t j;
            json_t *x;
            json_array_foreach(json_object_get(nodes[i], "nics"), j, x) {
                const char *kind = json_string_value(json_object_get(x, "kind"));
                if (!kind || strcmp(kind, kinds[k]) || !cc_topo_nic_up(x))
                    continue;
                double r = json_number_value(json_object_get(x, "rate_gbps"));
                c++;
                if (rate < 0 || r < rate)
                    rate = r;
            }
            if (per_node < 0 || c < per_node)
                per_node = c;
        }
        if (per_node > 0)
            return json_pack("{s:s, s:i, s:f}", "kind", names[k], "nics_per_node", per_node,
                             "rate_gbps_per_nic", rate);
    }
    return json_pack("{s:s, s:i, s:f}", "kind", "none", "nics_per_node", 0, "rate_gbps_per_nic", 0.0);
}

json_t *cc_topo_merge(json_t *const *nodes, int n, const char *name)
{
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append(arr, nodes[i]);
    return json_pack("{s:s, s:s, s:s, s:s, s:[s], s:o, s:o, s:o}", "schema", CC_TOPO_SCHEMA,
                     "name", name ? name : "probed", "description",
                     "probed by ccbench probe, one entry per host", "created", when, "sources",
                     "ccbench probe (hwloc, sysfs, NVML/CUDA when present)", "nodes", arr,
                     "fabric", fabric(nodes, n), "differences", differences(nodes, n));
}

/* ---- summary ---------------------------------------------------------------------------- */

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "?";
}

static long long jint(const json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

/* PCI bus id, or "" in a described topology that does not give one */
static const char *bus_or_empty(const json_t *o)
{
    const char *s = json_string_value(json_object_get(o, "pci_bus_id"));
    return s ? s : "";
}

static const char *numa_str(long long numa)
{
    static char buf[24];
    if (numa < 0)
        return "-";
    snprintf(buf, sizeof buf, "%lld", numa);
    return buf;
}

static void print_matrix(FILE *out, const json_t *n)
{
    json_t *gpus = json_object_get(n, "gpus"), *nics = json_object_get(n, "nics");
    json_t *paths = json_object_get(n, "paths");
    size_t ng = json_array_size(gpus), nn = json_array_size(nics), i, j;
    if (ng == 0)
        return;
    fprintf(out, "  affinity (NCCL path classes):\n  %8s", "");
    for (i = 0; i < ng; i++)
        fprintf(out, " %6s%zu", "GPU", i);
    for (j = 0; j < nn; j++)
        fprintf(out, " %7.7s", jstr(json_array_get(nics, j), "name"));
    fprintf(out, "  NUMA\n");
    for (i = 0; i < ng; i++) {
        fprintf(out, "  GPU%-5zu", i);
        json_t *row = json_array_get(json_object_get(paths, "gpu_gpu"), i);
        json_t *nrow = json_array_get(json_object_get(paths, "gpu_nic"), i);
        for (j = 0; j < ng; j++)
            fprintf(out, " %7s", json_string_value(json_array_get(row, j)) ? json_string_value(json_array_get(row, j)) : "?");
        for (j = 0; j < nn; j++)
            fprintf(out, " %7s", json_string_value(json_array_get(nrow, j)) ? json_string_value(json_array_get(nrow, j)) : "?");
        json_t *g = json_array_get(gpus, i);
        if (jint(g, "numa") >= 0)
            fprintf(out, "  %lld\n", jint(g, "numa"));
        else
            fprintf(out, "  -\n");
    }
}

/* cc_topo_nearest_nic on a single node object */
static int nearest_nic(const json_t *n, int gpu)
{
    json_t *wrap = json_pack("{s:[O]}", "nodes", n);
    int r = cc_topo_nearest_nic(wrap, 0, gpu);
    json_decref(wrap);
    return r;
}

static void print_node(FILE *out, const json_t *n)
{
    json_t *cpu = json_object_get(n, "cpu");
    size_t i;
    json_t *x;
    long long count = json_object_get(n, "count") ? jint(n, "count") : 1;
    fprintf(out, "node %s%s", jstr(n, "hostname"), count > 1 ? "" : "\n");
    if (count > 1)
        fprintf(out, " (x%lld)\n", count);
    fprintf(out, "  CPU: %s, %lld socket(s), %lld cores, %lld PUs", jstr(cpu, "model"),
            jint(cpu, "sockets"), jint(cpu, "cores"), jint(cpu, "pus"));
    json_t *l3 = json_object_get(cpu, "l3");
    if (jint(l3, "count") > 0 && jint(l3, "bytes") > 0)
        fprintf(out, ", %lld x %.0f MiB L3", jint(l3, "count"), (double)jint(l3, "bytes") / (1 << 20));
    else if (jint(l3, "count") > 0)
        fprintf(out, ", %lld x L3 of unknown size", jint(l3, "count"));
    fprintf(out, ", %zu NUMA node(s), %.1f GiB\n", json_array_size(json_object_get(n, "numa")),
            (double)jint(n, "memory_bytes") / (1 << 30));
    fprintf(out, "  GPUs: %zu\n", json_array_size(json_object_get(n, "gpus")));
    json_array_foreach(json_object_get(n, "gpus"), i, x) {
        json_t *nv = json_object_get(x, "nvlink"), *pcie = json_object_get(x, "pcie");
        fprintf(out, "    GPU%zu %s%s%s", i, bus_or_empty(x), *bus_or_empty(x) ? " " : "", jstr(x, "model"));
        if (jint(x, "memory_bytes") > 0)
            fprintf(out, ", %.0f GiB", (double)jint(x, "memory_bytes") / (1 << 30));
        if (jint(x, "numa") >= 0)
            fprintf(out, ", NUMA %lld", jint(x, "numa"));
        if (jint(pcie, "gen") > 0)
            fprintf(out, ", PCIe Gen%lld x%lld", jint(pcie, "gen"), jint(pcie, "width"));
        if (jint(pcie, "max_gen") > 0 &&
            (jint(pcie, "max_gen") != jint(pcie, "gen") || jint(pcie, "max_width") != jint(pcie, "width")))
            fprintf(out, " (max Gen%lld x%lld)", jint(pcie, "max_gen"), jint(pcie, "max_width"));
        if (jint(nv, "links") > 0)
            fprintf(out, ", NVLink %lld/%lld up", jint(nv, "up"), jint(nv, "links"));
        int nic = nearest_nic(n, (int)i);
        if (nic >= 0)
            fprintf(out, ", nearest NIC %s (%s)", jstr(json_array_get(json_object_get(n, "nics"), (size_t)nic), "name"),
                    json_string_value(json_array_get(json_array_get(json_object_get(json_object_get(n, "paths"), "gpu_nic"), i), (size_t)nic)));
        fprintf(out, "\n");
    }
    fprintf(out, "  NICs: %zu\n", json_array_size(json_object_get(n, "nics")));
    json_array_foreach(json_object_get(n, "nics"), i, x) {
        json_t *pt = json_array_get(json_object_get(x, "ports"), 0);
        fprintf(out, "    %-8s %-4s %s%sNUMA %s, %.0f Gb/s %s%s%s\n", jstr(x, "name"),
                jstr(x, "kind"), bus_or_empty(x), *bus_or_empty(x) ? " " : "", numa_str(jint(x, "numa")),
                json_number_value(json_object_get(x, "rate_gbps")), pt ? jstr(pt, "state") : "",
                json_is_string(json_object_get(x, "netdev")) ? " netdev " : "",
                json_is_string(json_object_get(x, "netdev")) ? jstr(x, "netdev") : "");
    }
    json_t *nd = json_object_get(n, "netdevs");
    if (json_array_size(nd)) {
        fprintf(out, "  netdevs:");
        json_array_foreach(nd, i, x) {
            long long sp = jint(x, "speed_mbps");
            fprintf(out, " %s(%s, mtu %lld", jstr(x, "name"), jstr(x, "state"), jint(x, "mtu"));
            if (sp > 0)
                fprintf(out, ", %lld Mb/s", sp);
            fprintf(out, ")");
        }
        fprintf(out, "\n");
    }
    json_t *exp = json_object_get(n, "expected");
    if (json_object_size(exp)) {
        const char *k;
        json_t *v;
        fprintf(out, "  expected:");
        json_object_foreach(exp, k, v) fprintf(out, " %s=%g", k, json_number_value(v));
        fprintf(out, "\n");
    }
    print_matrix(out, n);
}

void cc_topo_print_summary(FILE *out, const json_t *topo)
{
    json_t *nodes = json_object_get(topo, "nodes");
    size_t nn = json_array_size(nodes), i;
    json_t *fab = json_object_get(topo, "fabric");
    fprintf(out, "# topology '%s': %d node(s), %zu described\n", jstr(topo, "name"),
            cc_topo_node_count(topo), nn);
    if (json_is_string(json_object_get(topo, "description")))
        fprintf(out, "# %s\n", jstr(topo, "description"));
    if (fab) {
        fprintf(out, "# fabric: %s, %lld NIC(s) per node at %.0f Gb/s", jstr(fab, "kind"),
                jint(fab, "nics_per_node"), json_number_value(json_object_get(fab, "rate_gbps_per_nic")));
        if (json_is_number(json_object_get(fab, "inter_allreduce_busbw_GBps")))
            fprintf(out, ", expected all-reduce busbw across nodes %.0f GB/s",
                    json_number_value(json_object_get(fab, "inter_allreduce_busbw_GBps")));
        fprintf(out, "\n");
    }
    json_t *m;
    json_array_foreach(json_object_get(topo, "missing"), i, m)
        fprintf(out, "# not probed: %s: %s\n", jstr(m, "hostname"), jstr(m, "reason"));
    /* Describe each kind of node once (same signature in every aspect: GUIDs, MACs and
     * addresses differ by host and do not count); list the hosts of the same kind. */
    int n = nn > INT_MAX ? INT_MAX : (int)nn;
    char **dumped = calloc((size_t)(n ? n : 1), sizeof *dumped);
    int *group = malloc((size_t)(n ? n : 1) * sizeof *group); /* group of node i: its first */
    for (int a = 0; dumped && group && a < n; a++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        int bad = !f;
        for (int k = 0; f && k < NASPECTS; k++) {
            char *sig = signature(json_array_get(nodes, (size_t)a), k);
            bad |= !sig;
            fprintf(f, "%s\n", sig ? sig : "");
            free(sig);
        }
        if ((f && fclose(f) != 0) || bad) {
            free(buf);
            break; /* out of memory: every node is described on its own */
        }
        dumped[a] = buf;
    }
    int ok = dumped && group;
    for (int a = 0; ok && a < n; a++)
        ok = dumped[a] != NULL;
    int *idx = ok ? group_order(dumped, n) : NULL;
    /* group[i]: where node i's group starts in idx (its lowest index first), or -1 when i
     * is not the first of its group */
    for (int a = 0, b; idx && a < n; a = b) {
        for (b = a; b < n && strcmp(dumped[idx[a]], dumped[idx[b]]) == 0; b++)
            group[idx[b]] = -1;
        group[idx[a]] = a;
    }
    for (int a = 0; a < n; a++) {
        if (idx && group[a] < 0)
            continue;
        print_node(out, json_array_get(nodes, (size_t)a));
        int same = 0;
        for (int p = idx ? group[a] + 1 : n; p < n && !strcmp(dumped[idx[p]], dumped[a]); p++)
            fprintf(out, "%s%s", same++ ? " " : "  same as this node: ",
                    jstr(json_array_get(nodes, (size_t)idx[p]), "hostname"));
        if (same)
            fprintf(out, "\n");
    }
    free(idx);
    for (int a = 0; dumped && a < n; a++)
        free(dumped[a]);
    free(dumped);
    free(group);
    json_t *diff = json_object_get(topo, "differences");
    if (!diff)
        return;
    if (json_array_size(diff) == 0) {
        fprintf(out, "# all nodes match the majority\n");
        return;
    }
    json_t *d;
    json_array_foreach(diff, i, d)
        fprintf(out, "# differs from the majority: %s %s: %s (majority: %s)\n", jstr(d, "hostname"),
                jstr(d, "aspect"), jstr(d, "value"), jstr(d, "majority"));
}
