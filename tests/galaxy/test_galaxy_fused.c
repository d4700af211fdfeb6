/* tests/galaxy/test_galaxy_fused.c: the fused variants (simd, omp, blas) agree with the per-example
 * default to 1e-10 relative, in cost and gradient, on random weights: the real shape (1024-8-3, m not a
 * multiple of the block) and odd ones (37 inputs, 5 hidden units: every vector and group tail). And
 * canon.h's promise: default, layout, simd and omp at 1, 2, 3 and 4 threads, and omp's one pass giving
 * both (galaxy_cost_grad_omp, the valgrad row), return the same bits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "galaxy/fused.h"
#include "sl_config.h"

static uint64_t s = 0x2545F4914F6CDD1Dull;
static double urand(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (double)(s >> 11) / 9007199254740992.0; }

typedef struct fx { galaxy_problem p; double *X, *th, *ws, *fws, *g0, *g1, c0, c1; unsigned char *y; size_t nt; } fx;

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
    f.fws = malloc(galaxy_fused_ws_doubles(&f.p, 4) * sizeof(double));
    f.g0 = malloc(f.nt * sizeof(double)); f.g1 = malloc(f.nt * sizeof(double));
    return f;
}
static void drop(fx *f) { free(f->X); free(f->y); free(f->th); free(f->ws); free(f->fws); free(f->g0); free(f->g1); }

enum { SIMD, OMP1, OMP4, BLAS, LAYOUT, OMP2, OMP3, VALGRAD1, VALGRAD2 };

/* Relative difference of variant v to default in cost and in the gradient's max norm. */
static double diff(fx *f, int v)
{
    double c0 = galaxy_cost_default(&f->p, f->th, f->ws), c1 = 0;
    galaxy_grad_default(&f->p, f->th, f->g0, f->ws);
    switch (v) {
    case SIMD: c1 = galaxy_cost_simd(&f->p, f->th, f->fws); galaxy_grad_simd(&f->p, f->th, f->g1, f->fws); break;
    case OMP1: c1 = galaxy_cost_omp(&f->p, f->th, f->fws, 1); galaxy_grad_omp(&f->p, f->th, f->g1, f->fws, 1); break;
    case OMP4: c1 = galaxy_cost_omp(&f->p, f->th, f->fws, 4); galaxy_grad_omp(&f->p, f->th, f->g1, f->fws, 4); break;
    case OMP2: c1 = galaxy_cost_omp(&f->p, f->th, f->fws, 2); galaxy_grad_omp(&f->p, f->th, f->g1, f->fws, 2); break;
    case OMP3: c1 = galaxy_cost_omp(&f->p, f->th, f->fws, 3); galaxy_grad_omp(&f->p, f->th, f->g1, f->fws, 3); break;
    /* the valgrad row's one pass: cost and gradient together */
    case VALGRAD1: c1 = galaxy_cost_grad_omp(&f->p, f->th, f->g1, f->fws, 1); break;
    case VALGRAD2: c1 = galaxy_cost_grad_omp(&f->p, f->th, f->g1, f->fws, 2); break;
    case LAYOUT: c1 = galaxy_cost_layout(&f->p, f->th, f->ws); galaxy_grad_layout(&f->p, f->th, f->g1, f->ws); break;
#if SL_HAVE_BLAS
    case BLAS: c1 = galaxy_cost_blas(&f->p, f->th, f->fws, 1); galaxy_grad_blas(&f->p, f->th, f->g1, f->fws, 1); break;
#endif
    default: return INFINITY;
    }
    f->c0 = c0;
    f->c1 = c1;
    double gmax = 0, dmax = 0;
    for (size_t i = 0; i < f->nt; i++) { gmax = fmax(gmax, fabs(f->g0[i])); dmax = fmax(dmax, fabs(f->g0[i] - f->g1[i])); }
    return fmax(fabs(c1 - c0) / fabs(c0), dmax / gmax);
}

/* The same bits as default: cost and every gradient entry. */
static void assert_same_bits(fx *f, int v)
{
    diff(f, v);
    assert_memory_equal(&f->c0, &f->c1, sizeof f->c0);
    assert_memory_equal(f->g0, f->g1, f->nt * sizeof *f->g0);
}

static void same_bits_shape(long m, int n, int h)
{
    fx f = make(m, n, h);
    const int vs[] = {LAYOUT, SIMD, OMP1, OMP2, OMP3, OMP4, VALGRAD1, VALGRAD2};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++)
        assert_same_bits(&f, vs[i]);
    /* and the comparison can fail: a 1e-9 relative change of one weight changes some gradient bits */
    galaxy_grad_default(&f.p, f.th, f.g0, f.ws);
    f.th[5] *= 1 + 1e-9;
    galaxy_grad_simd(&f.p, f.th, f.g1, f.fws);
    assert_memory_not_equal(f.g0, f.g1, f.nt * sizeof *f.g0);
    drop(&f);
}
static void test_same_bits_real_shape(void **state) { (void)state; same_bits_shape(2700, 1024, 8); }
static void test_same_bits_odd_shapes(void **state)
{
    (void)state;
    same_bits_shape(70, 37, 5);
    same_bits_shape(70, 1000, 16);
    same_bits_shape(5, 64, 8);          /* fewer blocks than segments: empty segments */
}

/* X with padded rows (galaxy_padded_ldx, as the study lays it out; the pad filled with NaN, so a kernel
 * that read it would say so): every variant returns the bits it returns on packed rows. */
static void padded_rows_shape(long m, int n, int h)
{
    fx f = make(m, n, h);
    const int vs[] = {LAYOUT, SIMD, OMP1, OMP2, VALGRAD2, BLAS};
    enum { NV = sizeof vs / sizeof *vs };
    double c[NV], *g[NV], c0, *g0 = malloc(f.nt * sizeof(double));
    for (int i = 0; i < NV; i++) {
        g[i] = malloc(f.nt * sizeof(double));
        diff(&f, vs[i]);
        c[i] = f.c1;
        memcpy(g[i], f.g1, f.nt * sizeof(double));
    }
    c0 = f.c0; /* default's, computed by diff on the packed rows */
    memcpy(g0, f.g0, f.nt * sizeof(double));
    const long ldx = galaxy_padded_ldx(n);
    assert_true(ldx > n);
    double *Xp = malloc((size_t)m * (size_t)ldx * sizeof(double)), *packed = f.X;
    for (long t = 0; t < m; t++)
        for (long k = 0; k < ldx; k++) Xp[t * ldx + k] = k < n ? packed[t * n + k] : NAN;
    f.p.X = Xp;
    f.p.ldx = ldx;
    for (int i = 0; i < NV; i++) {
        if (diff(&f, vs[i]) == INFINITY) continue;  /* blas without BLAS */
        assert_memory_equal(&c[i], &f.c1, sizeof c[i]);
        assert_memory_equal(g[i], f.g1, f.nt * sizeof(double));
        assert_memory_equal(&c0, &f.c0, sizeof c0); /* and default's, on the padded rows */
        assert_memory_equal(g0, f.g0, f.nt * sizeof(double));
    }
    for (int i = 0; i < NV; i++) free(g[i]);
    free(g0);
    f.p.X = packed;
    free(Xp);
    drop(&f);
}
static void test_padded_rows(void **state)
{
    (void)state;
    padded_rows_shape(301, 1024, 8);
    padded_rows_shape(70, 37, 5);
}

/* The fused workspace may start anywhere a double may (galaxy_fused_seg places the segments from its
 * address): one double past malloc's alignment, the same bits, and nothing written past its size
 * (ASan's redzone is right after it in the sanitizer build). */
static void test_workspace_offset(void **state)
{
    (void)state;
    fx f = make(301, 1024, 8);
    const size_t n = galaxy_fused_ws_doubles(&f.p, 2);
    double *ws = malloc((n + 1) * sizeof(double)), *g = malloc(f.nt * sizeof(double));
    const double c = galaxy_cost_grad_omp(&f.p, f.th, g, f.fws, 2);
    const double c1 = galaxy_cost_grad_omp(&f.p, f.th, f.g1, ws + 1, 2);
    assert_memory_equal(&c, &c1, sizeof c);
    assert_memory_equal(g, f.g1, f.nt * sizeof(double));
    galaxy_grad_simd(&f.p, f.th, f.g1, ws + 1);
    assert_memory_equal(g, f.g1, f.nt * sizeof(double));
    free(ws);
    free(g);
    drop(&f);
}

static void run_shape(long m, int n, int h)
{
    fx f = make(m, n, h);
    assert_true(diff(&f, SIMD) <= 1e-10);
    assert_true(diff(&f, OMP1) <= 1e-10);
    assert_true(diff(&f, OMP4) <= 1e-10);
#if SL_HAVE_BLAS
    assert_true(diff(&f, BLAS) <= 1e-10);
#endif
    /* and a wrong gradient is caught: the check can fail */
    f.th[3] += 1e-3;
    galaxy_grad_simd(&f.p, f.th, f.g1, f.fws);
    f.th[3] -= 1e-3;
    galaxy_grad_default(&f.p, f.th, f.g0, f.ws);
    double dmax = 0;
    for (size_t i = 0; i < f.nt; i++) dmax = fmax(dmax, fabs(f.g0[i] - f.g1[i]));
    assert_true(dmax > 1e-8);
    drop(&f);
}

static void test_real_shape(void **state) { (void)state; run_shape(301, 1024, 8); }
static void test_odd_shape(void **state) { (void)state; run_shape(70, 37, 5); }
static void test_wide_hidden(void **state) { (void)state; run_shape(33, 19, 11); }
/* the packed fast path with two groups of 8 hidden units and a last input chunk shorter than the rest */
static void test_packed_groups(void **state) { (void)state; run_shape(70, 1000, 16); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_shape),
        cmocka_unit_test(test_odd_shape),
        cmocka_unit_test(test_wide_hidden),
        cmocka_unit_test(test_packed_groups),
        cmocka_unit_test(test_same_bits_real_shape),
        cmocka_unit_test(test_same_bits_odd_shapes),
        cmocka_unit_test(test_padded_rows),
        cmocka_unit_test(test_workspace_offset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
