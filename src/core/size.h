/* size.h - byte sizes as users write them ("64", "4K", "1M", "2G"; powers of 1024, as in
 * nccl-tests) and the size sweep of a benchmark. */
#ifndef CC_SIZE_H
#define CC_SIZE_H

#include <stddef.h>
#include "core/status.h"

/* Parse a size: digits, optional suffix K/M/G/T (case-insensitive, optional trailing 'B' or
 * "iB"). Rejects empty strings, signs, unknown suffixes and overflow with a message in why. */
cc_status cc_size_parse(const char *text, size_t *out, char *why, size_t whylen);

/* Format a size compactly and exactly: "8", "4K", "1M", "1.5M", "1.125K", else a whole number
 * of a smaller unit ("1025K"), else bytes ("1000500"). */
const char *cc_size_format(size_t bytes, char *buf, size_t len);

/* A sweep as nccl-tests defines it: from min to max, multiplying by `factor` (if > 1) or
 * adding `step` (if factor is 1). max is always included. */
struct cc_sweep {
    size_t minbytes, maxbytes;
    double factor;   /* -f; > 1 for geometric steps, 1 for linear ones; never below 1 */
    size_t step;     /* -i; only with factor 1 (0 otherwise) */
};

/* Most sizes one sweep may have: more is a usage error, found before anything is allocated
 * (-f 1.000000000000001 or -i 4 up to 1T would otherwise run for ever or exhaust memory). */
#define CC_SWEEP_MAX_SIZES 10000

/* Check a sweep's own values, whatever the granule: CC_EUSAGE, with a message in why, if
 * min > max, factor is below 1, a step is given with a factor above 1, or no step is given
 * (factor 1, step 0) for more than one size. */
cc_status cc_sweep_check(const struct cc_sweep *sw, char *why, size_t whylen);

/* Expand a sweep into sizes aligned to `granule` bytes: each size is rounded down to a
 * multiple of granule; sizes that round to 0 or repeat are dropped. min is rounded up. Every
 * step advances by at least one granule, so a factor barely above 1 still ends.
 * Returns, with a message in why: CC_EUSAGE if cc_sweep_check refuses it or there would be
 * more than CC_SWEEP_MAX_SIZES sizes; CC_EINFEASIBLE if no multiple of granule lies between
 * min and max; CC_ENOMEM. *sizes is malloc'd; the caller frees it. */
cc_status cc_sweep_expand(const struct cc_sweep *sw, size_t granule, size_t **sizes,
                          size_t *nsizes, char *why, size_t whylen);

#endif
