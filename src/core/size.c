#include "core/size.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"

cc_status cc_size_parse(const char *text, size_t *out, char *why, size_t whylen)
{
    const char *p = text;
    unsigned long long v = 0;
    unsigned shift = 0;

    if (!text || !*text) {
        cc_errbuf(why, whylen, "empty size");
        return CC_EUSAGE;
    }
    if (!isdigit((unsigned char)*p)) {
        cc_errbuf(why, whylen, "invalid size '%s' (expected a number with optional K/M/G/T)",
                  text);
        return CC_EUSAGE;
    }
    while (isdigit((unsigned char)*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            cc_errbuf(why, whylen, "size '%s' is too large", text);
            return CC_EUSAGE;
        }
        v = v * 10 + d;
        p++;
    }
    if (*p) {
        switch (toupper((unsigned char)*p)) {
        case 'K': shift = 10; break;
        case 'M': shift = 20; break;
        case 'G': shift = 30; break;
        case 'T': shift = 40; break;
        case 'B': shift = 0; break;
        default:
            cc_errbuf(why, whylen, "invalid size '%s' (unknown suffix '%s'; use K, M, G or T)",
                      text, p);
            return CC_EUSAGE;
        }
        if (toupper((unsigned char)*p) != 'B') {
            p++;
            if (strcasecmp(p, "iB") == 0 || strcasecmp(p, "B") == 0)
                p += strlen(p);
        } else {
            p++;
        }
        if (*p) {
            cc_errbuf(why, whylen, "invalid size '%s' (trailing '%s')", text, p);
            return CC_EUSAGE;
        }
    }
    if (shift && v > (SIZE_MAX >> shift)) {
        cc_errbuf(why, whylen, "size '%s' is too large", text);
        return CC_EUSAGE;
    }
    if (v > SIZE_MAX) {
        cc_errbuf(why, whylen, "size '%s' is too large", text);
        return CC_EUSAGE;
    }
    *out = (size_t)(v << shift);
    return CC_OK;
}

const char *cc_size_format(size_t b, char *buf, size_t len)
{
    static const char units[] = "KMGT";
    if (b < 1024) {
        snprintf(buf, len, "%zu", b);
        return buf;
    }
    int u = -1;
    double v = (double)b;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    if (v == (double)(size_t)v)
        snprintf(buf, len, "%zu%c", (size_t)v, units[u]);
    else
        snprintf(buf, len, "%.3g%c", v, units[u]);
    return buf;
}

cc_status cc_sweep_expand(const struct cc_sweep *sw, size_t granule, size_t **sizes,
                          size_t *nsizes, char *why, size_t whylen)
{
    size_t cap = 64, n = 0, *v;
    size_t lo, hi;

    *sizes = NULL;
    *nsizes = 0;
    if (granule == 0)
        granule = 1;
    if (sw->minbytes > sw->maxbytes) {
        cc_errbuf(why, whylen, "minimum size %zu is larger than maximum size %zu", sw->minbytes,
                  sw->maxbytes);
        return CC_EUSAGE;
    }
    if (sw->factor <= 1 && sw->step == 0 && sw->minbytes != sw->maxbytes) {
        cc_errbuf(why, whylen, "step factor must be > 1 or step bytes > 0");
        return CC_EUSAGE;
    }
    lo = (sw->minbytes + granule - 1) / granule * granule;
    hi = sw->maxbytes / granule * granule;
    if (lo == 0)
        lo = granule;
    if (lo > hi) {
        cc_errbuf(why, whylen,
                  "no size from %zu to %zu bytes is a multiple of %zu bytes (element size x ranks)",
                  sw->minbytes, sw->maxbytes, granule);
        return CC_EUSAGE;
    }
    v = malloc(cap * sizeof *v);
    if (!v)
        return CC_ENOMEM;
    double cur = (double)lo;
    for (;;) {
        size_t s = (size_t)cur / granule * granule;
        if (s > hi)
            break;
        if (s >= lo && (n == 0 || v[n - 1] != s)) {
            if (n == cap) {
                size_t *nv = realloc(v, 2 * cap * sizeof *v);
                if (!nv) {
                    free(v);
                    return CC_ENOMEM;
                }
                v = nv;
                cap *= 2;
            }
            v[n++] = s;
        }
        if (lo == hi)
            break;
        double next = sw->factor > 1 ? cur * sw->factor : cur + (double)sw->step;
        if (next <= cur)
            break;
        cur = next;
    }
    if (n == 0 || v[n - 1] != hi) {
        if (n == cap) {
            size_t *nv = realloc(v, (cap + 1) * sizeof *v);
            if (!nv) {
                free(v);
                return CC_ENOMEM;
            }
            v = nv;
        }
        v[n++] = hi;
    }
    *sizes = v;
    *nsizes = n;
    return CC_OK;
}
