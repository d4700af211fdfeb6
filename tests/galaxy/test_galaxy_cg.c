/* tests/galaxy/test_galaxy_cg.c: the SciPy-style CG on functions with known minima. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "optim/cg.h"

/* SciPy's own test problem (test_optimize.py, CheckOptimize: maximum-entropy, F and K below); SciPy
 * asserts 9 function and 7 gradient calls, 2 of the function calls being the test's own after the
 * optimiser returns: so fmin_cg itself makes 7 and 7. The third evaluated point is [0, -0.5, 0.5]. */
static const double F[5][3] = {{1, 1, 1}, {1, 1, 0}, {1, 0, 1}, {1, 0, 0}, {1, 0, 0}};
static const double K[3] = {1., 0.3, 0.5};
static double trace[64][3];
static int ntrace;

static double maxent_f(const double *x, void *ctx)
{
    (void)ctx;
    double z = 0, kx = 0;
    for (int i = 0; i < 5; i++) z += exp(F[i][0] * x[0] + F[i][1] * x[1] + F[i][2] * x[2]);
    for (int j = 0; j < 3; j++) kx += K[j] * x[j];
    if (ntrace < 64) { for (int j = 0; j < 3; j++) trace[ntrace][j] = x[j]; ntrace++; }
    return log(z) - kx;
}
static void maxent_g(const double *x, double *g, void *ctx)
{
    (void)ctx;
    double e[5], z = 0;
    for (int i = 0; i < 5; i++) { e[i] = exp(F[i][0] * x[0] + F[i][1] * x[1] + F[i][2] * x[2]); z += e[i]; }
    for (int j = 0; j < 3; j++) { g[j] = -K[j]; for (int i = 0; i < 5; i++) g[j] += F[i][j] * e[i] / z; }
}

static void test_scipy_maxent_counts(void **state)
{
    (void)state;
    double x[3] = {0, 0, 0}, work[30];
    cg_options o; cg_default_options(&o); o.maxiter = 1000;
    ntrace = 0;
    cg_result r = cg_minimize(maxent_f, maxent_g, NULL, x, 3, &o, work);
    assert_int_equal(r.status, CG_SUCCESS);
    assert_int_equal(r.nfev, 7);
    assert_int_equal(r.ngev, 7);
    const double sol[3] = {0., -0.524869316, 0.487525860};
    assert_true(fabs(maxent_f(x, NULL) - maxent_f(sol, NULL)) < 1e-6);
    assert_true(fabs(trace[2][1] + 0.5) < 1e-7 && fabs(trace[2][2] - 0.5) < 1e-7);
    assert_true(fabs(trace[3][1] + 5.05700028e-01) < 1e-7 * 0.51 + 1e-14);
    assert_true(fabs(trace[3][2] - 4.95985862e-01) < 1e-7 * 0.5 + 1e-14);
}

/* Rosenbrock in 5 dimensions from SciPy's usual start; minimum 0 at (1, ..., 1). */
static long rf, rg;
static double rosen(const double *x, void *c) { (void)c; rf++; double s = 0; for (int i = 0; i < 4; i++) s += 100 * pow(x[i + 1] - x[i] * x[i], 2) + pow(1 - x[i], 2); return s; }
static void rosen_der(const double *x, double *g, void *c)
{
    (void)c; rg++;
    for (int i = 0; i < 5; i++) g[i] = 0;
    for (int i = 0; i < 4; i++) {
        g[i] += -400 * x[i] * (x[i + 1] - x[i] * x[i]) - 2 * (1 - x[i]);
        g[i + 1] += 200 * (x[i + 1] - x[i] * x[i]);
    }
}
static void test_rosenbrock(void **state)
{
    (void)state;
    double x[5] = {1.3, 0.7, 0.8, 1.9, 1.2}, work[50];
    cg_options o; cg_default_options(&o);
    rf = rg = 0;
    cg_result r = cg_minimize(rosen, rosen_der, NULL, x, 5, &o, work);
    assert_int_equal(r.status, CG_SUCCESS);
    for (int i = 0; i < 5; i++) assert_true(fabs(x[i] - 1) < 1e-4);
    assert_true(r.f < 1e-9);
    /* counts are the optimiser's own, and each iteration costs at least one of each */
    assert_int_equal(r.nfev, rf);
    assert_int_equal(r.ngev, rg);
    assert_true(r.nfev >= r.iterations + 1 && r.ngev >= r.iterations + 1);
}

/* The same with cost and gradient from one call (cg_options.fg, SciPy's jac=True): the same iterates,
 * bit for bit, and the same counts; every gradient request answered by the cost request's call, so
 * rosen_der is never called. */
static long rfg;
static double rosen_fg(const double *x, double *g, void *c) { rfg++; rf--; rosen_der(x, g, c); rg--; return rosen(x, c); }
static void test_rosenbrock_fg(void **state)
{
    (void)state;
    double x0[5] = {1.3, 0.7, 0.8, 1.9, 1.2}, x[5], xf[5], work[50];
    cg_options o; cg_default_options(&o);
    memcpy(x, x0, sizeof x), memcpy(xf, x0, sizeof xf);
    cg_result r = cg_minimize(rosen, rosen_der, NULL, x, 5, &o, work);
    o.fg = rosen_fg;
    rf = rg = rfg = 0;
    cg_result q = cg_minimize(rosen, rosen_der, NULL, xf, 5, &o, work);
    assert_memory_equal(x, xf, sizeof x);
    assert_int_equal(q.iterations, r.iterations);
    assert_int_equal(q.nfev, r.nfev);
    assert_int_equal(q.ngev, r.ngev);
    assert_int_equal(r.ngev_from_f, 0);
    assert_int_equal(q.ngev_from_f, q.ngev);
    assert_int_equal(rfg, q.nfev); /* one fg call per cost request, no f or g call */
    assert_int_equal(rf, 0);
    assert_int_equal(rg, 0);
}

/* Convex quadratic sum d_i x_i^2 / 2: exact line minimisation would finish in n steps; with Wolfe steps
 * it must still converge, each iteration making at least one f and one g call. */
static double qf(const double *x, void *c) { (void)c; double s = 0; for (int i = 0; i < 10; i++) s += 0.5 * (i + 1) * x[i] * x[i]; return s; }
static void qg(const double *x, double *g, void *c) { (void)c; for (int i = 0; i < 10; i++) g[i] = (i + 1) * x[i]; }
static void test_quadratic(void **state)
{
    (void)state;
    double x[10], work[100];
    for (int i = 0; i < 10; i++) x[i] = 1.0;
    cg_options o; cg_default_options(&o);
    cg_result r = cg_minimize(qf, qg, NULL, x, 10, &o, work);
    assert_int_equal(r.status, CG_SUCCESS);
    for (int i = 0; i < 10; i++) assert_true(fabs(x[i]) * (i + 1) <= 1e-5);
    assert_true(r.iterations <= 60);
    assert_true(r.nfev >= r.iterations + 1);
}

/* maxiter stops with SciPy's warnflag 1 and exactly maxiter iterations. */
static void test_maxiter(void **state)
{
    (void)state;
    double x[5] = {1.3, 0.7, 0.8, 1.9, 1.2}, work[50];
    cg_options o; cg_default_options(&o); o.maxiter = 3;
    cg_result r = cg_minimize(rosen, rosen_der, NULL, x, 5, &o, work);
    assert_int_equal(r.status, CG_MAXITER);
    assert_int_equal(r.iterations, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scipy_maxent_counts), cmocka_unit_test(test_rosenbrock), cmocka_unit_test(test_rosenbrock_fg),
        cmocka_unit_test(test_quadratic), cmocka_unit_test(test_maxiter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
