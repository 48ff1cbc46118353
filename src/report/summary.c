#include "bench/result.h"
#include "report/report.h"
#include "core/size.h"

#include <errno.h>
#include <stdio.h>

void cc_summary_add(struct cc_summary *s, const struct cc_row *row)
{
    const struct cc_measure *m = row->m[CC_OOP].valid ? &row->m[CC_OOP] : &row->m[CC_INPLACE];
    if (!m->valid)
        return;
    /* running means: busbw_weighted over the rows' bytes (busbw_mean below, per placement) */
    double w = (double)row->bytes;
    s->busbw_weighted = (s->busbw_weighted * s->weight_bytes + m->busbw * w) / (s->weight_bytes + w);
    s->weight_bytes += w;
    s->coll = row->coll;
    s->dtype = row->dtype;
    s->op = row->op;
    s->rows++;
    if (row->bytes >= s->largest_bytes) {
        s->largest_bytes = row->bytes;
        s->busbw_largest = m->busbw;
        s->algbw_largest = m->algbw;
    }
    s->nranks = row->nranks;
    for (int p = 0; p < 2; p++) {
        const struct cc_measure *q = &row->m[p];
        if (!q->valid)
            continue;
        s->wall_s += q->wall_s;
        s->busbw_mean = (s->busbw_mean * s->bw_samples + q->busbw) / (s->bw_samples + 1);
        s->bw_samples++;
        if (q->wrong >= 0)
            s->wrong = (s->wrong < 0 ? 0 : s->wrong) + q->wrong;
    }
}

size_t cc_summary_line(char *buf, size_t len, const struct cc_summary *s)
{
    if (len)
        buf[0] = 0;
    if (!s->coll || !s->rows || !len)
        return 0;
    char sz[32], label[64], wrong[32], one[64] = "";
    cc_size_format(s->largest_bytes, sz, sizeof sz);
    if (s->wrong < 0)
        snprintf(wrong, sizeof wrong, "N/A");
    else
        snprintf(wrong, sizeof wrong, "%lld", s->wrong);
    snprintf(label, sizeof label, "%s %s%s%s", s->coll->name, cc_dtype_name(s->dtype),
             (s->coll->flags & CC_COLL_HAS_OP) ? " " : "",
             (s->coll->flags & CC_COLL_HAS_OP) ? cc_op_name(s->op) : "");
    if (s->nranks == 1)
        snprintf(one, sizeof one, ", one rank: algbw %.3f GB/s at %s", s->algbw_largest, sz);
    int w = snprintf(buf, len,
                     "# %-27s busbw %8.3f GB/s at %s, size-weighted mean %8.3f GB/s, "
                     "plain mean %8.3f GB/s, %d sizes, wrong %s%s%s\n",
                     label, s->busbw_largest, sz, s->busbw_weighted, s->busbw_mean, s->rows,
                     wrong, one, s->wrong > 0 ? "  <-- CORRUPTION" : "");
    if (w < 0 || (size_t)w >= len) { /* never half a line */
        buf[0] = 0;
        return 0;
    }
    return (size_t)w;
}

int cc_summary_print(FILE *out, const struct cc_summary *sums, int nsums)
{
    char line[512];
    for (int i = 0; i < nsums; i++)
        if (cc_summary_line(line, sizeof line, &sums[i]))
            fputs(line, out);
    return cc_report_flush(out);
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
