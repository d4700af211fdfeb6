/* tests/galaxy/test_galaxy_kernels.c: variants agree with default; the gradient agrees with central
 * finite differences on a small network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "galaxy/fused.h"

static uint64_t s = 88172645463325252ull;
static double urand(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (double)(s >> 11) / 9007199254740992.0; }

typedef struct fx { galaxy_problem p; double *X, *th, *ws, *fws; unsigned char *y; size_t nt; } fx;

static fx make(long m, int n, int h)
{
    fx f;
    f.X = malloc((size_t)m * n * sizeof(double)); f.y = malloc((size_t)m);
    for (long i = 0; i < m * n; i++) f.X[i] = floor(urand() * 256) / 255.0;
    for (long i = 0; i < m; i++) f.y[i] = (unsigned char)(urand() * 3);
    f.p = (galaxy_problem){.X = f.X, .y = f.y, .m = m, .n_in = n, .n_hid = h, .n_out = 3, .lambda = 1.0};
    f.nt = galaxy_n_theta(&f.p);
    f.th = malloc(f.nt * sizeof(double));
    for (size_t i = 0; i < f.nt; i++) f.th[i] = urand() * 0.4 - 0.2;
    f.ws = malloc(galaxy_ws_doubles(&f.p) * sizeof(double));
    f.fws = malloc(galaxy_fused_ws_doubles(&f.p, 1) * sizeof(double));  /* simd's own workspace */
    return f;
}
static void drop(fx *f) { free(f->X); free(f->y); free(f->th); free(f->ws); free(f->fws); }

static void test_layout_matches_default(void **state)
{
    (void)state;
    fx f = make(300, 1024, 8);
    double *g0 = malloc(f.nt * sizeof(double)), *g1 = malloc(f.nt * sizeof(double));
    double c0 = galaxy_cost_default(&f.p, f.th, f.ws), c1 = galaxy_cost_layout(&f.p, f.th, f.ws);
    assert_true(fabs(c0 - c1) <= 1e-10 * fabs(c0));
    galaxy_grad_default(&f.p, f.th, g0, f.ws);
    galaxy_grad_layout(&f.p, f.th, g1, f.ws);
    double gmax = 0, dmax = 0;
    for (size_t i = 0; i < f.nt; i++) { gmax = fmax(gmax, fabs(g0[i])); dmax = fmax(dmax, fabs(g0[i] - g1[i])); }
    assert_true(dmax <= 1e-10 * gmax);
    double c2 = galaxy_cost_simd(&f.p, f.th, f.fws);
    assert_true(fabs(c0 - c2) <= 1e-10 * fabs(c0));
    galaxy_grad_simd(&f.p, f.th, g1, f.fws);
    dmax = 0;
    for (size_t i = 0; i < f.nt; i++) dmax = fmax(dmax, fabs(g0[i] - g1[i]));
    assert_true(dmax <= 1e-10 * gmax);
    free(g0); free(g1); drop(&f);
}

static void test_gradient_finite_differences(void **state)
{
    (void)state;
    fx f = make(20, 6, 4);
    double *g = malloc(f.nt * sizeof(double));
    galaxy_grad_default(&f.p, f.th, g, f.ws);
    for (size_t i = 0; i < f.nt; i++) {
        double keep = f.th[i], h = 1e-5;
        f.th[i] = keep + h; double cp = galaxy_cost_default(&f.p, f.th, f.ws);
        f.th[i] = keep - h; double cm = galaxy_cost_default(&f.p, f.th, f.ws);
        f.th[i] = keep;
        double fd = (cp - cm) / (2 * h);
        assert_true(fabs(fd - g[i]) <= 1e-8 + 1e-6 * fabs(g[i]));
    }
    free(g); drop(&f);
}

/* A known value: all weights zero gives a3 = 1/2 everywhere, so J = K log 2 exactly. */
static void test_cost_zero_weights(void **state)
{
    (void)state;
    fx f = make(10, 16, 3);
    for (size_t i = 0; i < f.nt; i++) f.th[i] = 0;
    assert_true(fabs(galaxy_cost_default(&f.p, f.th, f.ws) - 3 * log(2.0)) < 1e-14);
    assert_true(fabs(galaxy_cost_layout(&f.p, f.th, f.ws) - 3 * log(2.0)) < 1e-14);
    assert_true(fabs(galaxy_cost_simd(&f.p, f.th, f.fws) - 3 * log(2.0)) < 1e-14);
    drop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_matches_default), cmocka_unit_test(test_gradient_finite_differences),
        cmocka_unit_test(test_cost_zero_weights),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
