/* tests/reports/test_stats.c: the report's statistics against values worked out by hand (and checked
 * with R's wilcox.test / scipy.stats.mannwhitneyu, which use the same definitions). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "rep.h"

static void quantiles_mean_std(void **state)
{
    (void)state;
    double x[] = {4, 1, 3, 2, 5};
    rep_sort(x, 5);
    assert_true(x[0] == 1 && x[4] == 5);
    assert_float_equal(rep_quantile(x, 5, 0.5), 3.0, 1e-12);
    assert_float_equal(rep_quantile(x, 5, 0.25), 2.0, 1e-12);
    assert_float_equal(rep_quantile(x, 5, 0.75), 4.0, 1e-12);
    double y[] = {1, 2, 3, 4};
    assert_float_equal(rep_quantile(y, 4, 0.5), 2.5, 1e-12);   /* even n: midpoint */
    assert_float_equal(rep_quantile(y, 4, 0.25), 1.75, 1e-12); /* linear interpolation */
    assert_float_equal(rep_mean(x, 5), 3.0, 1e-12);
    assert_float_equal(rep_std(x, 5), sqrt(2.5), 1e-12);       /* sample std, n - 1 */
    assert_true(isnan(rep_std(x, 1)));
}

/* Complete separation, 5 vs 5: U = 0, exact two-sided p = 2 / C(10,5) = 2/252. */
static void mw_exact_separated(void **state)
{
    (void)state;
    double a[] = {1, 2, 3, 4, 5}, b[] = {6, 7, 8, 9, 10}, u;
    int exact = 0;
    double p = rep_mann_whitney(a, 5, b, 5, &u, &exact);
    assert_int_equal(exact, 1);
    assert_float_equal(u, 0.0, 1e-12);
    assert_float_equal(p, 2.0 / 252.0, 1e-12);
    /* symmetric: swapping the samples gives U = 25 and the same p */
    p = rep_mann_whitney(b, 5, a, 5, &u, &exact);
    assert_float_equal(u, 25.0, 1e-12);
    assert_float_equal(p, 2.0 / 252.0, 1e-12);
}

/* a = {1,3,5}, b = {2,4,6}: U(a) = 3. The null distribution of U for 3 vs 3 has counts
 * 1,1,2,3,3,3,3,2,1,1 over u = 0..9 (20 arrangements): P(U <= 3) = 7/20, so p = 0.7. */
static void mw_exact_interleaved(void **state)
{
    (void)state;
    double a[] = {1, 3, 5}, b[] = {2, 4, 6}, u;
    int exact = 0;
    double p = rep_mann_whitney(a, 3, b, 3, &u, &exact);
    assert_int_equal(exact, 1);
    assert_float_equal(u, 3.0, 1e-12);
    assert_float_equal(p, 0.7, 1e-12);
}

/* With ties: normal approximation, tie-corrected variance, continuity correction.
 * a = {1,2,2,3,3}, b = {3,4,4,5,5}: midranks 1, 2.5, 2.5, 5, 5 for a (3s share ranks 4-6 -> 5),
 * R_a = 16, U = 16 - 15 = 1; mu = 12.5; ties: {2,2} t=2, {3,3,3} t=3, {4,4} t=2, {5,5} t=2:
 * sum(t^3 - t) = 6 + 24 + 6 + 6 = 42; var = 25/12 * (11 - 42/90) = 21.9444...;
 * z = (11.5 - 0.5) / sqrt(var) = 2.34816...; p = erfc(z / sqrt 2) = 0.018866... */
static void mw_normal_ties(void **state)
{
    (void)state;
    double a[] = {1, 2, 2, 3, 3}, b[] = {3, 4, 4, 5, 5}, u;
    int exact = 1;
    double p = rep_mann_whitney(a, 5, b, 5, &u, &exact);
    assert_int_equal(exact, 0);
    assert_float_equal(u, 1.0, 1e-12);
    double var = 25.0 / 12.0 * (11.0 - 42.0 / 90.0);
    double z = 11.0 / sqrt(var);
    assert_float_equal(p, erfc(z / sqrt(2.0)), 1e-12);
    assert_float_equal(p, 0.018866, 1e-5);
}

/* Large samples without ties (21 vs 21, beyond the exact limit): the normal approximation. Identical
 * distributions shifted by half the spacing give U near n^2/2 and p near 1. */
static void mw_large_no_difference(void **state)
{
    (void)state;
    double a[21], b[21], u;
    for (int i = 0; i < 21; i++) {
        a[i] = i;
        b[i] = i + 0.5;
    }
    int exact = 1;
    double p = rep_mann_whitney(a, 21, b, 21, &u, &exact);
    assert_int_equal(exact, 0);
    assert_float_equal(u, 210.0, 1e-12); /* sum over a_i of #{b_j < a_i} = 0 + 1 + ... + 20 */
    assert_true(p > 0.8);
    assert_true(isnan(rep_mann_whitney(a, 0, b, 21, &u, &exact)));
}

/* Exact and normal agree in the middle of their ranges: 20 vs 20, exact (no ties). */
static void mw_exact_vs_normal(void **state)
{
    (void)state;
    double a[20], b[20], u;
    for (int i = 0; i < 20; i++) {
        a[i] = 2 * i;
        b[i] = 2 * i + 7; /* b shifted up by 3.5 positions */
    }
    int exact = 0;
    double p = rep_mann_whitney(a, 20, b, 20, &u, &exact);
    assert_int_equal(exact, 1);
    double mu = 200, var = 400.0 * 41 / 12.0, z = (fabs(u - mu) - 0.5) / sqrt(var);
    double pn = erfc(z / sqrt(2.0));
    assert_true(fabs(p - pn) < 0.1 * pn);
}

/* Any count the runner can record: 100,000 repetitions (a 3-second --min-time of a fast kernel gives
 * 66,000). A sample against itself is no difference: U = n^2/2, p = 1; a sample against the same one
 * shifted up is "a faster", U near 0. na * (na + 1) in int overflowed from 46,341 and said "B faster". */
static void mw_hundred_thousand(void **state)
{
    (void)state;
    enum { N = 100000 };
    double *a = malloc(sizeof *a * N), *b = malloc(sizeof *b * N), u;
    assert_non_null(a);
    assert_non_null(b);
    for (int i = 0; i < N; i++)
        a[i] = b[i] = 1e-3 + 1e-9 * ((i * 7919) % N); /* distinct, unordered */
    int exact = 1;
    double p = rep_mann_whitney(a, N, b, N, &u, &exact);
    assert_int_equal(exact, 0);
    assert_float_equal(u, (double)N * N / 2, 1e-3 * N);
    assert_float_equal(p, 1.0, 1e-9);
    for (int i = 0; i < N; i++)
        b[i] = a[i] + 1e-3; /* every b slower than every a */
    p = rep_mann_whitney(a, N, b, N, &u, &exact);
    assert_float_equal(u, 0.0, 1e-9);
    assert_true(p < 1e-9);
    free(a), free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantiles_mean_std),   cmocka_unit_test(mw_exact_separated),
        cmocka_unit_test(mw_exact_interleaved), cmocka_unit_test(mw_normal_ties),
        cmocka_unit_test(mw_large_no_difference), cmocka_unit_test(mw_exact_vs_normal),
        cmocka_unit_test(mw_hundred_thousand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
