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
    if (b > (size_t)1 << 53) { /* beyond a double's integers: whole units, else bytes */
        for (int u = 3; u >= 0; u--)
            if (b % ((size_t)1 << (10 * (u + 1))) == 0) {
                snprintf(buf, len, "%zu%c", b >> (10 * (u + 1)), units[u]);
                return buf;
            }
        snprintf(buf, len, "%zu", b);
        return buf;
    }
    int u = -1;
    double v = (double)b;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    if (v == (double)(size_t)v) {
        snprintf(buf, len, "%zu%c", (size_t)v, units[u]);
        return buf;
    }
    /* up to three decimals when they give the size exactly ("1.5M"); else the bytes */
    double unit = (double)b / v;
    for (int d = 1; d <= 3; d++) {
        char t[48];
        snprintf(t, sizeof t, "%.*f", d, v);
        if (strtod(t, NULL) * unit == (double)b) {
            snprintf(buf, len, "%s%c", t, units[u]);
            return buf;
        }
    }
    for (; u >= 0; u--) { /* a whole number of a smaller unit ("1025K") */
        size_t un = (size_t)1 << (10 * (u + 1));
        if (b % un == 0) {
            snprintf(buf, len, "%zu%c", b / un, units[u]);
            return buf;
        }
    }
    snprintf(buf, len, "%zu", b);
    return buf;
}

/* The size after `cur` in a sweep: cur times the factor, or cur plus the step, but at least
 * the next multiple of the granule. A factor barely above 1 (or a step below the granule)
 * would otherwise produce the same rounded size again and again, one rounding step per pass. */
static double next_size(const struct cc_sweep *sw, double cur, size_t granule)
{
    double next = sw->factor > 1 ? cur * sw->factor : cur + (double)sw->step;
    double floor_next = (double)((size_t)cur / granule * granule) + (double)granule;
    return next < floor_next ? floor_next : next;
}

/* Walk the sweep from lo to hi (multiples of granule), storing the sizes in out (if not
 * NULL). Returns how many there are, or max + 1 as soon as there would be more than max.
 * The sizes themselves are integers that grow by at least one granule per pass: above 2^53 a
 * double can no longer tell cur from cur + granule. */
static size_t sweep_walk(const struct cc_sweep *sw, size_t lo, size_t hi, size_t granule,
                         size_t *out, size_t max)
{
    size_t n = 0, s = lo, ucur = lo; /* ucur: a step's unrounded size (nccl-tests' size) */
    double cur = (double)lo; /* unrounded: a factor of 1.5 keeps its fractions */
    for (;;) {
        if (n == max)
            return max + 1;
        if (out)
            out[n] = s;
        n++;
        if (s >= hi)
            break;
        double nx = next_size(sw, cur, granule);
        size_t ns = nx >= 0x1p64 ? SIZE_MAX / granule * granule : (size_t)nx / granule * granule;
        if (sw->factor <= 1) { /* a step is exact in integers */
            ucur = ucur > SIZE_MAX - sw->step ? SIZE_MAX : ucur + sw->step;
            ns = ucur / granule * granule;
        }
        if (ns <= s) { /* no progress in double precision: one granule more */
            if (s > SIZE_MAX - granule)
                break;
            ns = s + granule;
            nx = (double)ns;
        }
        if (ns > hi)
            break;
        s = ns;
        cur = nx;
    }
    if (s != hi) { /* max is always included */
        if (n == max)
            return max + 1;
        if (out)
            out[n] = hi;
        n++;
    }
    return n;
}

cc_status cc_sweep_check(const struct cc_sweep *sw, char *why, size_t whylen)
{
    if (sw->minbytes > sw->maxbytes) {
        cc_errbuf(why, whylen, "minimum size %zu is larger than maximum size %zu", sw->minbytes,
                  sw->maxbytes);
        return CC_EUSAGE;
    }
    if (!(sw->factor >= 1)) {
        cc_errbuf(why, whylen, "step factor %.16g is less than 1 (-f multiplies the size each "
                  "step)", sw->factor);
        return CC_EUSAGE;
    }
    if (sw->factor > 1 && sw->step > 0) {
        cc_errbuf(why, whylen, "step bytes %zu apply only with step factor 1, not %.16g (-f 1 -i "
                  "for linear steps)", sw->step, sw->factor);
        return CC_EUSAGE;
    }
    if (sw->factor == 1 && sw->step == 0 && sw->minbytes != sw->maxbytes) {
        cc_errbuf(why, whylen, "step factor must be > 1 or step bytes > 0");
        return CC_EUSAGE;
    }
    return CC_OK;
}

cc_status cc_sweep_expand(const struct cc_sweep *sw, size_t granule, size_t **sizes,
                          size_t *nsizes, char *why, size_t whylen)
{
    size_t lo, hi, n;
    char a[32], b[32];

    *sizes = NULL;
    *nsizes = 0;
    if (granule == 0)
        granule = 1;
    cc_status st = cc_sweep_check(sw, why, whylen);
    if (st != CC_OK)
        return st;
    lo = (sw->minbytes + granule - 1) / granule * granule;
    hi = sw->maxbytes / granule * granule;
    if (lo == 0)
        lo = granule;
    if (lo > hi || lo < sw->minbytes) {
        cc_errbuf(why, whylen, "no size from %zu to %zu bytes is a multiple of %zu bytes",
                  sw->minbytes, sw->maxbytes, granule);
        return CC_EINFEASIBLE;
    }
    /* count first, so that a sweep of millions of sizes is refused before anything is
     * allocated (and the walk stops at the cap) */
    n = sweep_walk(sw, lo, hi, granule, NULL, CC_SWEEP_MAX_SIZES);
    if (n > CC_SWEEP_MAX_SIZES) {
        cc_size_format(sw->minbytes, a, sizeof a);
        cc_size_format(sw->maxbytes, b, sizeof b);
        if (sw->factor > 1)
            cc_errbuf(why, whylen, "step factor %.16g gives more than %d sizes from %s to %s "
                      "(use a larger -f or a narrower -b/-e)", sw->factor, CC_SWEEP_MAX_SIZES, a, b);
        else
            cc_errbuf(why, whylen, "step of %zu bytes gives more than %d sizes from %s to %s "
                      "(use a larger -i or a narrower -b/-e)", sw->step, CC_SWEEP_MAX_SIZES, a, b);
        return CC_EUSAGE;
    }
    *sizes = malloc(n * sizeof **sizes);
    if (!*sizes) {
        cc_errbuf(why, whylen, "cannot allocate the list of %zu sizes", n);
        return CC_ENOMEM;
    }
    *nsizes = sweep_walk(sw, lo, hi, granule, *sizes, n);
    return CC_OK;
}
