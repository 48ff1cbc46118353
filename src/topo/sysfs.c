/* sysfs.c - see sysfs.h. Every reader tolerates missing files: sysfs differs between kernels
 * and drivers, and a missing attribute means "unknown", never an error. */
#include "topo/sysfs.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/text.h"
#include "topo/topo.h"

/* <root>/<rel> into out; -1 when root is NULL (no sysfs to read). */
static int join(char *out, size_t len, const char *root, const char *rel)
{
    if (!root)
        return -1;
    if (!*root)
        root = "/";
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    while (*rel == '/')
        rel++;
    if (n == 1 && root[0] == '/')
        snprintf(out, len, "/%s", rel);
    else
        snprintf(out, len, "%.*s/%s", (int)n, root, rel);
    return 0;
}

/* ---- text ------------------------------------------------------------------------------- */

void cc_topo_text(char *dst, size_t len, const char *src)
{
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    size_t k = 0;
    if (len == 0)
        return;
    while (*s) {
        size_t n = cc_utf8_len(s);
        if (k + (n ? n : 1) >= len)
            break;
        if (n)
            memmove(dst + k, s, n); /* dst may be src: k never passes the read position */
        else
            dst[k] = '?';
        k += n ? n : 1;
        s += n ? n : 1;
    }
    dst[k] = 0;
}

json_t *cc_topo_jtext(const char *src)
{
    size_t len = strlen(src ? src : "") + 1;
    char *buf = malloc(len);
    if (!buf)
        return NULL;
    cc_topo_text(buf, len, src);
    json_t *j = json_string(buf);
    free(buf);
    return j;
}

/* ---- files ------------------------------------------------------------------------------ */

int cc_sysfs_read(const char *root, const char *rel, char *buf, size_t len)
{
    char path[1024];
    if (join(path, sizeof path, root, rel) != 0)
        return -1;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(buf, (int)len, f)) {
        fclose(f);
        return -1;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in <root>/<rel> (no dot entries); *n gets the count. Free with free_names. */
static char **list_dir(const char *root, const char *rel, int *n)
{
    char path[1024];
    *n = 0;
    if (join(path, sizeof path, root, rel) != 0)
        return NULL;
    DIR *d = opendir(path);
    if (!d)
        return NULL;
    char **v = NULL;
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nv = realloc(v, (size_t)cap * sizeof *v);
            if (!nv)
                break;
            v = nv;
        }
        if ((v[*n] = strdup(e->d_name)))
            (*n)++;
    }
    closedir(d);
    if (v)
        qsort(v, (size_t)*n, sizeof *v, cmp_str);
    return v;
}

static void free_names(char **v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int cmp_num(const void *a, const void *b)
{
    return atoi(*(char *const *)a) - atoi(*(char *const *)b);
}

/* o[key] = v; a NULL v (out of memory) or a failed set counts in *bad */
static void put(json_t *o, const char *key, json_t *v, int *bad)
{
    if (json_object_set_new(o, key, v) != 0)
        (*bad)++;
}

/* One port, or NULL when out of memory. */
static json_t *ib_port(const char *root, const char *dev, const char *port)
{
    char rel[512], buf[256];
    int bad = 0;
    json_t *p = json_object();
    put(p, "port", json_integer(atoi(port)), &bad);
    snprintf(rel, sizeof rel, "sys/class/infiniband/%s/ports/%s/state", dev, port);
    if (cc_sysfs_read(root, rel, buf, sizeof buf) == 0) {
        /* "4: ACTIVE" */
        const char *s = strchr(buf, ':');
        s = s ? s + 1 : buf;
        while (*s == ' ')
            s++;
        put(p, "state", cc_topo_jtext(s), &bad);
    }
    snprintf(rel, sizeof rel, "sys/class/infiniband/%s/ports/%s/rate", dev, port);
    if (cc_sysfs_read(root, rel, buf, sizeof buf) == 0) {
        /* "400 Gb/sec (4X NDR)" */
        put(p, "rate_gbps", json_real(strtod(buf, NULL)), &bad);
        const char *lp = strchr(buf, '(');
        if (lp) {
            char w[32] = "";
            if (sscanf(lp + 1, "%31[0-9Xx]", w) == 1)
                put(p, "width", json_string(w), &bad);
        }
    }
    snprintf(rel, sizeof rel, "sys/class/infiniband/%s/ports/%s/link_layer", dev, port);
    if (cc_sysfs_read(root, rel, buf, sizeof buf) == 0)
        put(p, "link_layer", cc_topo_jtext(buf), &bad);

    json_t *gids = json_array();
    int ng;
    snprintf(rel, sizeof rel, "sys/class/infiniband/%s/ports/%s/gids", dev, port);
    char **names = list_dir(root, rel, &ng);
    if (names)
        qsort(names, (size_t)ng, sizeof *names, cmp_num);
    for (int i = 0; i < ng; i++) {
        snprintf(rel, sizeof rel, "sys/class/infiniband/%s/ports/%s/gids/%s", dev, port, names[i]);
        if (cc_sysfs_read(root, rel, buf, sizeof buf) != 0)
            continue;
        if (strspn(buf, "0:") == strlen(buf))
            continue; /* unused entry */
        json_t *g = json_object();
        put(g, "index", json_integer(atoi(names[i])), &bad);
        put(g, "gid", cc_topo_jtext(buf), &bad);
        char t[128];
        snprintf(rel, sizeof rel, "sys/class/infiniband/%s/ports/%s/gid_attrs/types/%s", dev,
                 port, names[i]);
        if (cc_sysfs_read(root, rel, t, sizeof t) == 0)
            put(g, "type", cc_topo_jtext(t), &bad);
        if (json_array_append_new(gids, g) != 0)
            bad++;
    }
    free_names(names, ng);
    put(p, "gids", gids, &bad);
    if (bad) {
        json_decref(p);
        return NULL;
    }
    return p;
}

json_t *cc_sysfs_ib_ports(const char *root, const char *dev)
{
    char rel[512];
    int n, bad = 0;
    json_t *a = json_array();
    snprintf(rel, sizeof rel, "sys/class/infiniband/%s/ports", dev);
    char **names = list_dir(root, rel, &n);
    if (names)
        qsort(names, (size_t)n, sizeof *names, cmp_num);
    for (int i = 0; i < n; i++)
        if (json_array_append_new(a, ib_port(root, dev, names[i])) != 0)
            bad++;
    free_names(names, n);
    if (bad) {
        json_decref(a);
        return NULL;
    }
    return a;
}

int cc_sysfs_ib_guid(const char *root, const char *dev, char *buf, size_t len)
{
    char rel[512], raw[128], hex[32];
    size_t k = 0;
    snprintf(rel, sizeof rel, "sys/class/infiniband/%s/node_guid", dev);
    if (cc_sysfs_read(root, rel, raw, sizeof raw) != 0)
        return -1;
    /* "0c42:a103:0065:abcd" -> "0x0c42a1030065abcd" */
    for (const char *s = raw; *s && k < sizeof hex - 1; s++)
        if (*s != ':')
            hex[k++] = *s;
    hex[k] = 0;
    if (k == 0)
        return -1;
    snprintf(buf, len, "0x%s", hex);
    return 0;
}

/* Interface `name`; NULL with *absent set when it has no operstate, NULL alone when out of
 * memory. */
static json_t *netdev(const char *root, const char *name, int *absent)
{
    char rel[512], buf[256];
    int bad = 0;
    *absent = 0;
    snprintf(rel, sizeof rel, "sys/class/net/%s/operstate", name);
    if (cc_sysfs_read(root, rel, buf, sizeof buf) != 0) {
        *absent = 1;
        return NULL;
    }
    json_t *o = json_object();
    put(o, "name", cc_topo_jtext(name), &bad);
    put(o, "state", cc_topo_jtext(buf), &bad);
    snprintf(rel, sizeof rel, "sys/class/net/%s/speed", name);
    long long speed = -1; /* reading speed fails (EINVAL) on links that are down or virtual */
    if (cc_sysfs_read(root, rel, buf, sizeof buf) == 0)
        speed = strtoll(buf, NULL, 10);
    put(o, "speed_mbps", json_integer(speed < 0 ? -1 : speed), &bad);
    snprintf(rel, sizeof rel, "sys/class/net/%s/mtu", name);
    if (cc_sysfs_read(root, rel, buf, sizeof buf) == 0)
        put(o, "mtu", json_integer(strtoll(buf, NULL, 10)), &bad);
    snprintf(rel, sizeof rel, "sys/class/net/%s/address", name);
    if (cc_sysfs_read(root, rel, buf, sizeof buf) == 0)
        put(o, "mac", cc_topo_jtext(buf), &bad);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *cc_sysfs_netdev(const char *root, const char *name)
{
    int absent;
    return netdev(root, name, &absent);
}

json_t *cc_sysfs_netdevs(const char *root)
{
    int n, bad = 0;
    char **names = list_dir(root, "sys/class/net", &n);
    json_t *a = json_array();
    for (int i = 0; i < n; i++) {
        int absent;
        json_t *o = netdev(root, names[i], &absent);
        if (!absent && json_array_append_new(a, o) != 0)
            bad++;
    }
    free_names(names, n);
    if (bad) {
        json_decref(a);
        return NULL;
    }
    return a;
}

int cc_sysfs_ib_netdev(const char *root, const char *dev, char *buf, size_t len)
{
    char rel[512];
    int n;
    snprintf(rel, sizeof rel, "sys/class/infiniband/%s/device/net", dev);
    char **names = list_dir(root, rel, &n);
    int rc = -1;
    if (n > 0) {
        snprintf(buf, len, "%s", names[0]);
        rc = 0;
    }
    free_names(names, n);
    return rc;
}

void cc_sysfs_pcie_link(const char *root, const char *busid, int max, int *gen, int *width)
{
    char rel[512], buf[128];
    const char *which = max ? "max" : "current";
    *gen = -1;
    *width = -1;
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/%s_link_speed", busid, which);
    if (cc_sysfs_read(root, rel, buf, sizeof buf) == 0) {
        /* "16.0 GT/s PCIe" (older kernels: "16 GT/s") -> generation */
        static const struct { double gts; int gen; } g[] = {
            {2.5, 1}, {5, 2}, {8, 3}, {16, 4}, {32, 5}, {64, 6}, {128, 7}};
        double v = strtod(buf, NULL);
        for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
            if (v > g[i].gts * 0.9 && v < g[i].gts * 1.1)
                *gen = g[i].gen;
    }
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/%s_link_width", busid, which);
    if (cc_sysfs_read(root, rel, buf, sizeof buf) == 0) {
        int w = atoi(buf);
        *width = w > 0 ? w : -1;
    }
}

int cc_sysfs_pci_is_vf(const char *root, const char *busid)
{
    char rel[96], buf[16];
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/physfn/class", busid);
    return cc_sysfs_read(root, rel, buf, sizeof buf) == 0;
}

int cc_sysfs_pci_physfn(const char *root, const char *busid, char *pf, size_t len)
{
    char rel[96], path[4096], target[4096];
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/physfn", busid);
    if (join(path, sizeof path, root, rel) != 0)
        return -1;
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0)
        return -1;
    target[n] = 0;
    const char *base = strrchr(target, '/');
    snprintf(pf, len, "%s", base ? base + 1 : target);
    return pf[0] ? 0 : -1;
}

int cc_sysfs_pci_numa(const char *root, const char *busid)
{
    char rel[96], buf[32];
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/numa_node", busid);
    if (cc_sysfs_read(root, rel, buf, sizeof buf) != 0)
        return -1;
    char *end;
    long v = strtol(buf, &end, 10);
    return end != buf && v >= 0 && v < 1 << 20 ? (int)v : -1;
}
