/* tests/galaxy/test_galaxy_fused.c: what the fused variants have beyond the listed kernels' cost and
 * gradient, which test_galaxy_kernels.c checks for every kernel of the build lists (agreement with
 * default, default's bits, padded rows). Here: omp's one pass giving both (galaxy_cost_grad_omp, the
 * valgrad row) returns default's bits at 1 and 2 threads, on the real set's size and odd shapes, and
 * the same bits on padded rows; and the fused workspace may start anywhere a double may. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "galaxy/fused.h"

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

/* default's cost and gradient (c0, g0), and the valgrad pass's at `threads` (c1, g1). */
static void valgrad(fx *f, int threads)
{
    f->c0 = galaxy_cost_default(&f->p, f->th, f->ws);
    galaxy_grad_default(&f->p, f->th, f->g0, f->ws);
    f->c1 = galaxy_cost_grad_omp(&f->p, f->th, f->g1, f->fws, threads);
}

/* The same bits as default: cost and every gradient entry, at 1 and 2 threads. */
static void same_bits_shape(long m, int n, int h)
{
    fx f = make(m, n, h);
    for (int threads = 1; threads <= 2; threads++) {
        valgrad(&f, threads);
        assert_memory_equal(&f.c0, &f.c1, sizeof f.c0);
        assert_memory_equal(f.g0, f.g1, f.nt * sizeof *f.g0);
    }
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

/* X with padded rows (galaxy_padded_ldx, as the study lays it out; the pad filled with NaN, so a pass
 * that read it would say so): the bits it returns on packed rows, at 2 threads. */
static void padded_rows_shape(long m, int n, int h)
{
    fx f = make(m, n, h);
    valgrad(&f, 2);
    const double c = f.c1;
    double *g = malloc(f.nt * sizeof(double));
    memcpy(g, f.g1, f.nt * sizeof(double));
    const long ldx = galaxy_padded_ldx(n);
    assert_true(ldx > n);
    double *Xp = malloc((size_t)m * (size_t)ldx * sizeof(double)), *packed = f.X;
    for (long t = 0; t < m; t++)
        for (long k = 0; k < ldx; k++) Xp[t * ldx + k] = k < n ? packed[t * n + k] : NAN;
    f.p.X = Xp;
    f.p.ldx = ldx;
    valgrad(&f, 2);
    assert_memory_equal(&c, &f.c1, sizeof c);
    assert_memory_equal(g, f.g1, f.nt * sizeof(double));
    free(g);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bits_real_shape),
        cmocka_unit_test(test_same_bits_odd_shapes),
        cmocka_unit_test(test_padded_rows),
        cmocka_unit_test(test_workspace_offset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
