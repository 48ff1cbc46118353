/* Statistics and confidence intervals against hand-computed values. */
#include <math.h>

#include "../tap.h"
#include "core/stats.h"

int main(void)
{
    struct cc_stats s;
    double x[] = {4, 2, 8, 6};
    cc_stats_compute(x, 4, &s);
    is_near(s.mean, 5, 1e-12, "mean");
    is_near(s.stddev, sqrt(20.0 / 3), 1e-12, "sample stddev");
    is_near(s.min, 2, 0, "min");
    is_near(s.max, 8, 0, "max");
    is_near(s.p50, 5, 1e-12, "median interpolates");
    is_near(s.p99, 7.94, 1e-9, "p99 = 6 + 0.97*2");
    /* ci95 = t(3) * sd / sqrt(4) = 3.182 * 2.58199 / 2 */
    is_near(s.ci95, 3.182 * sqrt(20.0 / 3) / 2, 1e-9, "95%% CI half-width with t(3)");
    is_near(cc_t95(1), 12.706, 1e-9, "t95 df=1");
    is_near(cc_t95(30), 2.042, 1e-9, "t95 df=30");
    is_near(cc_t95(60), 2.000, 0.002, "t95 df=60 ~ 2.000");
    is_near(cc_t95(1000000), 1.96, 0.001, "t95 tends to 1.96");
    ok(cc_t95(31) < cc_t95(30) && cc_t95(31) > cc_t95(40), "t95 monotone across the table edge");

    struct cc_running r = {0};
    for (int i = 0; i < 4; i++)
        cc_running_add(&r, x[i]);
    is_near(r.mean, 5, 1e-12, "running mean");
    is_near(cc_running_relci(&r), s.ci95 / 5, 1e-9, "running relative CI equals batch CI");
    struct cc_running one = {0};
    cc_running_add(&one, 3);
    ok(isinf(cc_running_relci(&one)), "relative CI undefined for one sample");

    double y[100];
    for (int i = 0; i < 100; i++)
        y[i] = i + 1;
    cc_stats_compute(y, 100, &s);
    is_near(s.p50, 50.5, 1e-9, "median of 1..100");
    is_near(s.p99, 99.01, 1e-9, "p99 of 1..100");
    is_near(cc_median(x, 4), 5, 1e-12, "cc_median");
    cc_stats_compute(NULL, 0, &s);
    is_int(s.n, 0, "empty input");
    is_near(s.mean, 0, 0, "empty mean 0");
    return tap_done();
}
