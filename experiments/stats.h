/* stats.h: statistics of repetition times (stats.c). */
#ifndef SL_STATS_H
#define SL_STATS_H

typedef struct sl_stats {
    double median, mean, std, min, max, cv;
} sl_stats;

/* Statistics of x[0..n-1] (n >= 1): sample std (n - 1; 0 for one value), cv = std / mean. */
void sl_stats_compute(const double *x, int n, sl_stats *st);

#endif
