/* reports/stats.c: order statistics, mean and standard deviation, and the Mann-Whitney U test that
 * `speedlab compare` uses (modelled on Google Benchmark's compare.py, which calls scipy's). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void rep_sort(double *x, int n)
{
    if (n > 1)
        qsort(x, (size_t)n, sizeof *x, cmp_double);
}

double rep_quantile(const double *sorted, int n, double q)
{
    if (n <= 0)
        return NAN;
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    if (lo >= n - 1)
        return sorted[n - 1];
    double frac = pos - lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double rep_mean(const double *x, int n)
{
    if (n <= 0)
        return NAN;
    double s = 0;
    for (int i = 0; i < n; i++)
        s += x[i];
    return s / n;
}

double rep_std(const double *x, int n)
{
    if (n < 2)
        return NAN;
    double m = rep_mean(x, n), s = 0;
    for (int i = 0; i < n; i++)
        s += (x[i] - m) * (x[i] - m);
    return sqrt(s / (n - 1));
}

/* Number of arrangements of m "a" and n "b" values whose U (count of a-b pairs with a > b) equals u,
 * for every u in [0, m*n], by the recurrence f(m,n,u) = f(m-1,n,u-n) + f(m,n-1,u). Doubles: C(40,20)
 * is about 1.4e11, well inside exact integer range. */
static double *u_distribution(int m, int n)
{
    int umax = m * n;
    /* f[j][u] for the current i (number of a values), j = 0..n */
    double *prev = calloc((size_t)(n + 1) * (umax + 1), sizeof *prev);
    double *cur = calloc((size_t)(n + 1) * (umax + 1), sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return NULL;
    }
#define F(a, j, u) (a)[(size_t)(j) * (umax + 1) + (u)]
    for (int j = 0; j <= n; j++)
        F(prev, j, 0) = 1; /* i = 0: one arrangement, U = 0 */
    for (int i = 1; i <= m; i++) {
        memset(cur, 0, sizeof *cur * (size_t)(n + 1) * (umax + 1));
        F(cur, 0, 0) = 1;
        for (int j = 1; j <= n; j++)
            for (int u = 0; u <= i * j; u++) {
                /* the largest value is an a (beats all j b's) or a b */
                double v = F(cur, j - 1, u);
                if (u - j >= 0)
                    v += F(prev, j, u - j);
                F(cur, j, u) = v;
            }
        double *t = prev;
        prev = cur;
        cur = t;
    }
    double *dist = malloc(sizeof *dist * (umax + 1));
    if (dist)
        for (int u = 0; u <= umax; u++)
            dist[u] = F(prev, n, u);
#undef F
    free(prev);
    free(cur);
    return dist;
}

typedef struct ranked {
    double v;
    int from_a;
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
    return cmp_double(&((const ranked *)x)->v, &((const ranked *)y)->v);
}

double rep_mann_whitney(const double *a, int na, const double *b, int nb, double *u_out, int *exact)
{
    if (na <= 0 || nb <= 0)
        return NAN;
    int n = na + nb;
    ranked *r = malloc(sizeof *r * (size_t)n);
    if (!r)
        return NAN;
    for (int i = 0; i < na; i++)
        r[i] = (ranked){a[i], 1};
    for (int i = 0; i < nb; i++)
        r[na + i] = (ranked){b[i], 0};
    qsort(r, (size_t)n, sizeof *r, cmp_ranked);

    /* Midranks for ties; tie term sum(t^3 - t) for the variance correction. */
    double rank_sum_a = 0, tie_term = 0;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && r[j + 1].v == r[i].v)
            j++;
        double rank = (i + j) / 2.0 + 1.0;
        double t = j - i + 1;
        tie_term += t * t * t - t;
        for (int k = i; k <= j; k++)
            if (r[k].from_a)
                rank_sum_a += rank;
        i = j + 1;
    }
    free(r);
    double u = rank_sum_a - (double)na * (na + 1) / 2.0; /* in double: na * (na + 1) overflows an int from 46,341 */
    if (u_out)
        *u_out = u;
    double mu = na * (double)nb / 2.0;

    if (tie_term == 0 && na <= 20 && nb <= 20) {
        double *dist = u_distribution(na, nb);
        if (dist) {
            int umax = na * nb, ui = (int)lround(u);
            double total = 0, le = 0, ge = 0;
            for (int k = 0; k <= umax; k++) {
                total += dist[k];
                if (k <= ui)
                    le += dist[k];
                if (k >= ui)
                    ge += dist[k];
            }
            free(dist);
            if (exact)
                *exact = 1;
            double p = 2.0 * fmin(le, ge) / total;
            return p > 1.0 ? 1.0 : p;
        }
    }
    if (exact)
        *exact = 0;
    double var = na * (double)nb / 12.0 * ((n + 1) - tie_term / ((double)n * (n - 1)));
    if (var <= 0)
        return 1.0; /* every value equal: no evidence of a difference */
    double z = (fabs(u - mu) - 0.5) / sqrt(var);
    if (z < 0)
        z = 0;
    double p = erfc(z / sqrt(2.0));
    return p > 1.0 ? 1.0 : p;
}
