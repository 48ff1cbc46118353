#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Two-sided 95% t quantiles, df 1..30; beyond, an asymptotic expansion. */
static const double t95_table[31] = {
    0,      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201,  2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080,  2.074,  2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
};

double cc_t95(size_t df)
{
    if (df == 0)
        return INFINITY;
    if (df <= 30)
        return t95_table[df];
    /* Cornish-Fisher expansion around z = 1.959964 */
    double z = 1.959964, d = (double)df;
    double g1 = (z * z * z + z) / 4;
    double g2 = (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / 96;
    return z + g1 / d + g2 / (d * d);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cc_percentile_sorted(const double *s, size_t n, double q)
{
    if (n == 0)
        return 0;
    if (n == 1)
        return s[0];
    double pos = q / 100.0 * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i >= n - 1)
        return s[n - 1];
    double f = pos - (double)i;
    return s[i] + f * (s[i + 1] - s[i]);
}

int cc_stats_compute(const double *x, size_t n, struct cc_stats *o)
{
    memset(o, 0, sizeof *o);
    o->n = n;
    if (n == 0)
        return 0;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    struct cc_running r = {0};
    for (size_t i = 0; i < n; i++)
        cc_running_add(&r, s[i]);
    o->mean = r.mean;
    o->stddev = n > 1 ? sqrt(r.m2 / (double)(n - 1)) : 0;
    o->min = s[0];
    o->max = s[n - 1];
    o->p50 = cc_percentile_sorted(s, n, 50);
    o->p99 = cc_percentile_sorted(s, n, 99);
    o->ci95 = n > 1 ? cc_t95(n - 1) * o->stddev / sqrt((double)n) : 0;
    free(s);
    return 0;
}

void cc_running_add(struct cc_running *r, double x)
{
    r->n++;
    double d = x - r->mean;
    r->mean += d / (double)r->n;
    r->m2 += d * (x - r->mean);
}

double cc_running_relci(const struct cc_running *r)
{
    if (r->n < 2 || r->mean <= 0)
        return INFINITY;
    double sd = sqrt(r->m2 / (double)(r->n - 1));
    return cc_t95(r->n - 1) * sd / sqrt((double)r->n) / r->mean;
}

double cc_median(const double *x, size_t n)
{
    struct cc_stats s;
    cc_stats_compute(x, n, &s);
    return s.p50;
}
