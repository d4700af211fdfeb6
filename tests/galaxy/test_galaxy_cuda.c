/* tests/galaxy/test_galaxy_cuda.c: the cuda variant agrees with the per-example default to 1e-10
 * relative in cost and gradient (real shape and an odd one). Exits 77 (skip) without a device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "galaxy/galaxy_cuda.h"

static uint64_t s = 0x9E3779B97F4A7C15ull;
static double urand(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (double)(s >> 11) / 9007199254740992.0; }

static void run_shape(long m, int n, int h)
{
    double *X = malloc((size_t)m * n * sizeof(double));
    unsigned char *y = malloc((size_t)m);
    for (long i = 0; i < m * n; i++) X[i] = floor(urand() * 256) / 255.0;
    for (long i = 0; i < m; i++) y[i] = (unsigned char)(urand() * 3);
    galaxy_problem p = {.X = X, .y = y, .m = m, .n_in = n, .n_hid = h, .n_out = 3, .lambda = 1.0};
    size_t nt = galaxy_n_theta(&p);
    double *th = malloc(nt * sizeof(double)), *g0 = malloc(nt * sizeof(double)), *g1 = malloc(nt * sizeof(double));
    double *ws = malloc(galaxy_ws_doubles(&p) * sizeof(double));
    for (size_t i = 0; i < nt; i++) th[i] = urand() * 0.4 - 0.2;
    char err[256];
    galaxy_cuda *c = galaxy_cuda_create(&p, err, sizeof err);
    if (!c) fprintf(stderr, "# %s\n", err);
    assert_non_null(c);
    double c0 = galaxy_cost_default(&p, th, ws), c1 = 0;
    galaxy_grad_default(&p, th, g0, ws);
    assert_int_equal(galaxy_cost_cuda(c, th, &c1), 0);
    assert_int_equal(galaxy_grad_cuda(c, th, g1), 0);
    double gmax = 0, dmax = 0;
    for (size_t i = 0; i < nt; i++) { gmax = fmax(gmax, fabs(g0[i])); dmax = fmax(dmax, fabs(g0[i] - g1[i])); }
    assert_true(fabs(c1 - c0) <= 1e-10 * fabs(c0));
    assert_true(dmax <= 1e-10 * gmax);
    /* the two calls' phases have device time (events), the last call's is part of it, and
     * reading the sums zeroes them; the allocations are counted */
    double ms[3] = {-1, -1, -1};
    assert_int_equal(galaxy_cuda_phase_ms(c, ms), 0);
    assert_true(ms[0] > 0 && ms[1] > 0 && ms[2] > 0);
    assert_true(galaxy_cuda_last_ms(c) > 0 && galaxy_cuda_last_ms(c) <= ms[0] + ms[1] + ms[2]);
    assert_int_equal(galaxy_cuda_phase_ms(c, ms), 0);
    assert_true(ms[0] == 0 && ms[1] == 0 && ms[2] == 0);
    assert_true(galaxy_cuda_bytes(c) >= (size_t)m * n * sizeof(double));
    galaxy_cuda_destroy(c);
    free(X); free(y); free(th); free(g0); free(g1); free(ws);
}

static void test_real_shape(void **state) { (void)state; run_shape(2700, 1024, 8); }
static void test_odd_shape(void **state) { (void)state; run_shape(131, 37, 5); }

int main(void)
{
    if (galaxy_cuda_device_count() == 0) {
        fprintf(stderr, "no CUDA device: skipping\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_shape),
        cmocka_unit_test(test_odd_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
