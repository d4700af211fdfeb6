/* stats.c: statistics of repetition times (median, mean, sample std, min, max, cv). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sl_stats_compute(const double *x, int n, sl_stats *st)
{
    memset(st, 0, sizeof *st);
    if (n <= 0)
        return;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return;
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    st->min = s[0];
    st->max = s[n - 1];
    /* Even counts: the mean of the two middle values, as NumPy and R do. */
    st->median = (n % 2) ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);

    /* Welford: stable for many nearly equal times. */
    double mean = 0, m2 = 0;
    for (int i = 0; i < n; i++) {
        double d = x[i] - mean;
        mean += d / (i + 1);
        m2 += d * (x[i] - mean);
    }
    st->mean = mean;
    st->std = n > 1 ? sqrt(m2 / (n - 1)) : 0.0;
    st->cv = mean != 0 ? st->std / mean : 0.0;
}
