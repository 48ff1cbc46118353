/* ib_select.c - RDMA device/port filter and GID choice (see ib_select.h). */
#include "gpu/ib_select.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/log.h"

cc_status cc_hca_parse(const char *spec, struct cc_hca_filter *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    if (!spec || !*spec)
        return CC_OK;
    const char *s = spec;
    if (*s == '^') {
        f->exclude = 1;
        s++;
    }
    if (*s == '=') {
        f->exact = 1;
        s++;
    }
    for (;;) {
        const char *end = s + strcspn(s, ",");
        size_t len = (size_t)(end - s);
        const char *colon = memchr(s, ':', len);
        size_t nlen = colon ? (size_t)(colon - s) : len;
        if (nlen == 0) {
            cc_errbuf(err, errlen, "empty device name in device list '%s'", spec);
            return CC_EUSAGE;
        }
        if (nlen >= CC_HCA_NAME) {
            cc_errbuf(err, errlen, "device name '%.*s' is too long in device list '%s'",
                      (int)nlen, s, spec);
            return CC_EUSAGE;
        }
        if (f->n >= CC_HCA_MAX) {
            cc_errbuf(err, errlen, "more than %d entries in device list '%s'", CC_HCA_MAX, spec);
            return CC_EUSAGE;
        }
        memcpy(f->e[f->n].name, s, nlen);
        f->e[f->n].name[nlen] = 0;
        f->e[f->n].port = -1;
        if (colon) {
            char num[16];
            size_t plen = len - nlen - 1;
            char *pend;
            if (plen == 0 || plen >= sizeof num) {
                cc_errbuf(err, errlen, "bad port in '%.*s' of device list '%s'", (int)len, s,
                          spec);
                return CC_EUSAGE;
            }
            memcpy(num, colon + 1, plen);
            num[plen] = 0;
            long p = strtol(num, &pend, 10);
            if (*pend || p < 1 || p > 255) {
                cc_errbuf(err, errlen, "bad port '%s' in device list '%s' (ports are 1 to 255)",
                          num, spec);
                return CC_EUSAGE;
            }
            f->e[f->n].port = (int)p;
        }
        f->n++;
        if (!*end)
            break;
        s = end + 1;
    }
    return CC_OK;
}

int cc_hca_match(const struct cc_hca_filter *f, const char *dev, int port)
{
    if (f->n == 0)
        return 1;
    int hit = 0;
    for (int i = 0; i < f->n && !hit; i++) {
        const char *name = f->e[i].name;
        int name_ok = f->exact ? strcmp(dev, name) == 0 : strncmp(dev, name, strlen(name)) == 0;
        hit = name_ok && (f->e[i].port < 0 || f->e[i].port == port);
    }
    return f->exclude ? !hit : hit;
}

static int gid_is_zero(const uint8_t *g)
{
    for (int i = 0; i < 16; i++)
        if (g[i])
            return 0;
    return 1;
}

static int gid_is_v4mapped(const uint8_t *g)
{
    static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(g, pre, sizeof pre) == 0;
}

static int gid_is_linklocal(const uint8_t *g) { return g[0] == 0xfe && (g[1] & 0xc0) == 0x80; }

int cc_port_keep(const struct cc_port_cand *c, int n, int *keep)
{
    int ib = 0, k = 0;
    for (int i = 0; i < n; i++)
        ib |= !c[i].ethernet;
    for (int i = 0; i < n; i++)
        if (ib ? !c[i].ethernet : c[i].usable)
            keep[k++] = i;
    return k;
}

int cc_gid_choose(const struct cc_gid_entry *t, size_t n, int is_ethernet, char *why,
                  size_t whylen)
{
    if (!is_ethernet) {
        for (size_t i = 0; i < n; i++)
            if (t[i].index == 0 && !gid_is_zero(t[i].raw))
                return 0;
        cc_errbuf(why, whylen, "InfiniBand port has no GID at index 0");
        return -1;
    }
    int v6 = -1;
    for (size_t i = 0; i < n; i++) {
        if (t[i].type != CC_GID_ROCE_V2 || gid_is_zero(t[i].raw))
            continue;
        if (gid_is_v4mapped(t[i].raw))
            return t[i].index;
        if (v6 < 0 && !gid_is_linklocal(t[i].raw))
            v6 = t[i].index;
    }
    if (v6 >= 0)
        return v6;
    cc_errbuf(why, whylen, "no routable RoCE v2 GID (IPv4 or global IPv6 address) on this port: "
                           "assign an IP address to its netdev or give --gid-index");
    return -1;
}

int cc_gid_parse(const char *text, uint8_t raw[16])
{
    const char *s = text;
    for (int g = 0; g < 8; g++) {
        unsigned v = 0;
        for (int k = 0; k < 4; k++, s++) {
            if (!isxdigit((unsigned char)*s))
                return -1;
            v = v * 16 + (unsigned)(isdigit((unsigned char)*s) ? *s - '0'
                                                               : tolower((unsigned char)*s) - 'a' + 10);
        }
        raw[2 * g] = (uint8_t)(v >> 8);
        raw[2 * g + 1] = (uint8_t)v;
        if (g < 7 && *s++ != ':')
            return -1;
    }
    while (*s == '\n' || *s == ' ')
        s++;
    return *s ? -1 : 0;
}

const char *cc_gid_format(const uint8_t raw[16], char *buf, size_t len)
{
    size_t k = 0;
    for (int g = 0; g < 8 && k < len; g++) {
        int w = snprintf(buf + k, len - k, "%s%02x%02x", g ? ":" : "", raw[2 * g], raw[2 * g + 1]);
        if (w < 0)
            break;
        k += (size_t)w;
    }
    return buf;
}

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *r = fgets(buf, (int)len, f);
    fclose(f);
    if (!r)
        return -1;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

cc_status cc_gid_read_sysfs(const char *root, const char *dev, int port,
                            struct cc_gid_entry **t, size_t *n, char *err, size_t errlen)
{
    char dir[512], path[600], line[128];
    struct stat sb;
    *t = NULL;
    *n = 0;
    snprintf(dir, sizeof dir, "%s/class/infiniband/%s/ports/%d", root, dev, port);
    if (stat(dir, &sb) != 0) {
        cc_errbuf(err, errlen, "cannot read GID table of %s:%d: '%s': %s", dev, port, dir,
                  strerror(errno));
        return CC_ENODEV;
    }
    size_t cap = 0;
    for (int i = 0; i < 4096; i++) {
        snprintf(path, sizeof path, "%s/gids/%d", dir, i);
        if (read_line(path, line, sizeof line) != 0)
            break; /* end of the table */
        struct cc_gid_entry e = {.index = i};
        if (cc_gid_parse(line, e.raw) != 0 || gid_is_zero(e.raw))
            continue;
        snprintf(path, sizeof path, "%s/gid_attrs/types/%d", dir, i);
        if (read_line(path, line, sizeof line) != 0)
            continue; /* the kernel refuses to read the type of an unused slot */
        e.type = strstr(line, "v2") ? CC_GID_ROCE_V2 : CC_GID_IB_ROCE_V1;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            struct cc_gid_entry *nt = realloc(*t, cap * sizeof *nt);
            if (!nt) {
                free(*t);
                *t = NULL;
                *n = 0;
                return CC_ENOMEM;
            }
            *t = nt;
        }
        (*t)[(*n)++] = e;
    }
    return CC_OK;
}
