#include "bench/result.h"
#include "report/report.h"

#include <errno.h>
#include <stdio.h>

void cc_summary_add(struct cc_summary *s, const struct cc_row *row)
{
    const struct cc_measure *m = row->m[CC_OOP].valid ? &row->m[CC_OOP] : &row->m[CC_INPLACE];
    if (!m->valid)
        return;
    /* running means: busbw_mean over rows, busbw_weighted over bytes */
    double w = (double)row->bytes;
    s->busbw_weighted = (s->busbw_weighted * s->weight_bytes + m->busbw * w) / (s->weight_bytes + w);
    s->weight_bytes += w;
    s->coll = row->coll;
    s->busbw_mean = (s->busbw_mean * s->rows + m->busbw) / (s->rows + 1);
    s->rows++;
    if (row->bytes >= s->largest_bytes) {
        s->largest_bytes = row->bytes;
        s->busbw_largest = m->busbw;
    }
    for (int p = 0; p < 2; p++) {
        const struct cc_measure *q = &row->m[p];
        if (!q->valid)
            continue;
        s->wall_s += q->wall_s;
        if (q->wrong >= 0)
            s->wrong = (s->wrong < 0 ? 0 : s->wrong) + q->wrong;
    }
}

size_t cc_summary_format(char *buf, size_t len, const struct cc_summary *sums, int nsums)
{
    size_t n = 0;
    if (len)
        buf[0] = 0;
    for (int i = 0; i < nsums && n < len; i++) {
        const struct cc_summary *s = &sums[i];
        if (!s->coll || !s->rows)
            continue;
        char sz[32];
        double l = (double)s->largest_bytes;
        if (s->largest_bytes >= (1u << 20))
            snprintf(sz, sizeof sz, "%.0fM", l / 1048576);
        else if (s->largest_bytes >= 1024)
            snprintf(sz, sizeof sz, "%.0fK", l / 1024);
        else
            snprintf(sz, sizeof sz, "%zu", s->largest_bytes);
        int w = snprintf(buf + n, len - n,
                         "# %-13s busbw %8.3f GB/s at %s, size-weighted mean %8.3f GB/s, "
                         "plain mean %8.3f GB/s, %d sizes, wrong %lld%s\n",
                         s->coll->name, s->busbw_largest, sz, s->busbw_weighted, s->busbw_mean,
                         s->rows, s->wrong < 0 ? 0 : s->wrong, s->wrong > 0 ? "  <-- CORRUPTION" : "");
        if (w < 0)
            break;
        n += (size_t)w;
    }
    if (n >= len)
        n = len ? len - 1 : 0;
    return n;
}

int cc_report_flush(FILE *out)
{
    errno = 0;
    if (fflush(out) == 0 && !ferror(out))
        return 0;
    if (errno == 0)
        errno = EIO;
    return -1;
}
