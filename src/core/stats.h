/* stats.h - statistics of timing samples. All times are in microseconds unless a name says
 * otherwise; functions are pure and take the samples as given (unsorted). */
#ifndef CC_STATS_H
#define CC_STATS_H

#include <stddef.h>

struct cc_stats {
    size_t n;
    double mean, stddev;   /* sample standard deviation (n-1) */
    double min, max;
    double p50, p99;       /* linear interpolation between order statistics */
    double ci95;           /* half-width of the 95% confidence interval of the mean */
};

/* Two-sided 95% Student t quantile for `df` degrees of freedom (df >= 1); 1.96 in the limit. */
double cc_t95(size_t df);

/* Summarize n samples (n may be 0: everything zero). Sorts a private copy; -1 (and
 * everything zero) when that copy cannot be allocated, else 0. */
int cc_stats_compute(const double *x, size_t n, struct cc_stats *out);

/* Percentile q in [0,100] of sorted samples by linear interpolation. */
double cc_percentile_sorted(const double *sorted, size_t n, double q);

/* Running sums for cheap incremental confidence intervals. */
struct cc_running {
    size_t n;
    double mean, m2; /* Welford */
};
void cc_running_add(struct cc_running *r, double x);
/* Relative half-width of the 95% CI of the mean (ci95/mean); +inf when n < 2 or mean 0. */
double cc_running_relci(const struct cc_running *r);

/* Median of n values (copy sorted internally). */
double cc_median(const double *x, size_t n);

#endif
