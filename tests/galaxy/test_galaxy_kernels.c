/* tests/galaxy/test_galaxy_kernels.c: every kernel of the build lists (galaxy_variant_kernels.h, generated
 * from kernels/galaxy/meson.build's two lists) is a test case of its own, named galaxy_NAME, so a new
 * variant is tested here without a line in this file. Each case, for a threaded kernel at 1, 2, 3 and 4
 * threads:
 *   - cost and gradient agree with default's to 1e-10 relative (the gradient in the max norm), on the
 *     real shape (1024-8-3, m not a multiple of the block) and odd ones (37 inputs, 5 hidden units: every
 *     vector and group tail; 16 hidden units in two groups of 8 with a short last input chunk);
 *   - canon.h's promise: the same bits as default, on the real set's size and odd shapes, unless the
 *     table `facts` says why not (blas);
 *   - X with padded rows gives the bits packed rows give (nothing reads the pad);
 *   - all-zero weights give the known cost K log 2.
 * default itself is the reference: its gradient agrees with central finite differences. That both
 * comparisons can fail is checked too. omp's one-pass cost and gradient (the valgrad row) and the fused
 * workspace's placement: test_galaxy_fused.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "galaxy/fused.h"

/* ---- the build lists' kernels ----------------------------------------------------------------------- */
typedef struct listed_kernel {
    const char *name;
    double (*cost)(const galaxy_problem *p, const double *theta, double *ws); /* galaxy_variant_kernels */
    void (*grad)(const galaxy_problem *p, const double *theta, double *grad, double *ws);
    double (*cost_t)(const galaxy_problem *p, const double *theta, double *ws, int threads); /* threaded */
    void (*grad_t)(const galaxy_problem *p, const double *theta, double *grad, double *ws, int threads);
} listed_kernel;

#define GALAXY_KERNEL(name) \
    static listed_kernel kernel_##name = {#name, galaxy_cost_##name, galaxy_grad_##name, NULL, NULL};
#define GALAXY_THREADED_KERNEL(name) \
    static listed_kernel kernel_##name = {#name, NULL, NULL, galaxy_cost_##name, galaxy_grad_##name};
#include "galaxy_variant_kernels.h"
#undef GALAXY_KERNEL
#undef GALAXY_THREADED_KERNEL

/* What the lists cannot say about a kernel (galaxy_kernels.h, fused.h, canon.h): which workspace it takes,
 * why it may not follow canon.h's order (the same bits as default), and whether the lists hold it only in
 * some builds. A listed kernel not named here gets room for either workspace and must give default's
 * bits; a row here whose kernel is not listed fails test_facts_listed. */
enum { WS_EITHER, WS_PLAIN, WS_FUSED }; /* galaxy_ws_doubles(), galaxy_fused_ws_doubles(), the larger */
typedef struct fact {
    const char *name;
    int ws;
    const char *not_canonical;
    int optional;
} fact;

static const fact facts[] = {
    {"default", WS_PLAIN, NULL, 0},
    {"layout", WS_PLAIN, NULL, 0},
    {"simd", WS_FUSED, NULL, 0},
    {"omp", WS_FUSED, NULL, 0},
    {"blas", WS_FUSED, "OpenBLAS sums in its own order (canon.h)", 1}, /* built and listed with BLAS only */
};

static const fact *fact_of(const char *name)
{
    static const fact none = {NULL, WS_EITHER, NULL, 0};
    for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
        if (strcmp(facts[i].name, name) == 0)
            return &facts[i];
    return &none;
}

/* A threaded kernel runs at 1 to 4 threads: shares of canon.h's 8 segments that are even and not. */
static int max_threads(const listed_kernel *k) { return k->cost_t ? 4 : 1; }

/* A workspace of exactly the doubles k asks for at `threads`, so that ASan sees a write past it (room for
 * either where `facts` does not say which). */
static double *kernel_ws(const listed_kernel *k, const galaxy_problem *p, int threads)
{
    const int ws = fact_of(k->name)->ws;
    size_t plain = galaxy_ws_doubles(p), fused = galaxy_fused_ws_doubles(p, threads);
    size_t n = ws == WS_PLAIN ? plain : ws == WS_FUSED ? fused : plain > fused ? plain : fused;
    double *buf = malloc(n * sizeof(double));
    assert_non_null(buf);
    return buf;
}

/* k's cost, and its gradient into g, at `threads` (a one-thread kernel has no such parameter). */
static double run(const listed_kernel *k, const galaxy_problem *p, const double *th, double *g, int threads)
{
    double *ws = kernel_ws(k, p, threads), c;
    if (k->cost_t) {
        c = k->cost_t(p, th, ws, threads);
        k->grad_t(p, th, g, ws, threads);
    } else {
        c = k->cost(p, th, ws);
        k->grad(p, th, g, ws);
    }
    free(ws);
    return c;
}

/* ---- a problem, with default's cost and gradient ----------------------------------------------------- */
static uint64_t s;
static double urand(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (double)(s >> 11) / 9007199254740992.0; }

typedef struct fx { galaxy_problem p; double *X, *th, *ws, *g0, *g, c0; unsigned char *y; size_t nt; } fx;

/* Random pixels, labels and weights (the same for a shape, whatever ran before), default's c0 and g0. */
static fx make(long m, int n, int h)
{
    fx f;
    s = 88172645463325252ull;
    f.X = malloc((size_t)m * n * sizeof(double)); f.y = malloc((size_t)m);
    for (long i = 0; i < m * n; i++) f.X[i] = floor(urand() * 256) / 255.0;
    for (long i = 0; i < m; i++) f.y[i] = (unsigned char)(urand() * 3);
    f.p = (galaxy_problem){.X = f.X, .y = f.y, .m = m, .n_in = n, .n_hid = h, .n_out = 3, .lambda = 1.0};
    f.nt = galaxy_n_theta(&f.p);
    f.th = malloc(f.nt * sizeof(double));
    for (size_t i = 0; i < f.nt; i++) f.th[i] = urand() * 0.4 - 0.2;
    f.ws = malloc(galaxy_ws_doubles(&f.p) * sizeof(double));
    f.g0 = malloc(f.nt * sizeof(double)); f.g = malloc(f.nt * sizeof(double));
    f.c0 = galaxy_cost_default(&f.p, f.th, f.ws);
    galaxy_grad_default(&f.p, f.th, f.g0, f.ws);
    return f;
}
static void drop(fx *f) { free(f->X); free(f->y); free(f->th); free(f->ws); free(f->g0); free(f->g); }

/* max |a - b| and max |a| over the gradient */
static double max_diff(const fx *f, const double *a, const double *b)
{
    double d = 0;
    for (size_t i = 0; i < f->nt; i++) d = fmax(d, fabs(a[i] - b[i]));
    return d;
}
static double max_abs(const fx *f, const double *a)
{
    double d = 0;
    for (size_t i = 0; i < f->nt; i++) d = fmax(d, fabs(a[i]));
    return d;
}

/* ---- one listed kernel --------------------------------------------------------------------------------- */
typedef struct shape { long m; int n, h; } shape;
/* the real shape with m not a multiple of the 32-row block (300, 301), odd ones with every tail, and the
 * packed fast path with two groups of 8 hidden units and a last input chunk shorter than the rest */
static const shape agree_shapes[] = {{300, 1024, 8}, {301, 1024, 8}, {70, 37, 5}, {33, 19, 11}, {70, 1000, 16}};
/* the real set's size; odd shapes; fewer blocks than segments (empty segments) */
static const shape bits_shapes[] = {{2700, 1024, 8}, {70, 37, 5}, {70, 1000, 16}, {5, 64, 8}};
static const shape padded_shapes[] = {{301, 1024, 8}, {70, 37, 5}};

static void check_agrees(const listed_kernel *k, shape sh)
{
    fx f = make(sh.m, sh.n, sh.h);
    for (int t = 1; t <= max_threads(k); t++) {
        double c = run(k, &f.p, f.th, f.g, t), gmax = max_abs(&f, f.g0), dmax = max_diff(&f, f.g, f.g0);
        if (!(fabs(c - f.c0) <= 1e-10 * fabs(f.c0) && dmax <= 1e-10 * gmax))
            fail_msg("%s (threads %d), %ld x %d-%d-3: cost %.17g (default %.17g), gradient off by %.3g of %.3g",
                     k->name, t, sh.m, sh.n, sh.h, c, f.c0, dmax, gmax);
    }
    drop(&f);
}

static void check_same_bits(const listed_kernel *k, shape sh)
{
    fx f = make(sh.m, sh.n, sh.h);
    for (int t = 1; t <= max_threads(k); t++) {
        double c = run(k, &f.p, f.th, f.g, t);
        size_t differ = 0;
        for (size_t i = 0; i < f.nt; i++) differ += memcmp(&f.g[i], &f.g0[i], sizeof *f.g) != 0;
        if (memcmp(&c, &f.c0, sizeof c) != 0 || differ)
            fail_msg("%s (threads %d), %ld x %d-%d-3: not default's bits (canon.h): cost %a (default %a), "
                     "%zu of %zu gradient entries differ", k->name, t, sh.m, sh.n, sh.h, c, f.c0, differ, f.nt);
    }
    drop(&f);
}

/* X with padded rows (galaxy_padded_ldx, as the study lays it out; the pad filled with NaN, so a kernel
 * that read it would say so) against the same rows packed. */
static void check_padded(const listed_kernel *k, shape sh)
{
    fx f = make(sh.m, sh.n, sh.h);
    const long ldx = galaxy_padded_ldx(sh.n);
    assert_true(ldx > sh.n);
    double *Xp = malloc((size_t)sh.m * (size_t)ldx * sizeof(double)), *gp = malloc(f.nt * sizeof(double));
    for (long t = 0; t < sh.m; t++)
        for (long i = 0; i < ldx; i++) Xp[t * ldx + i] = i < sh.n ? f.X[t * sh.n + i] : NAN;
    galaxy_problem pp = f.p;
    pp.X = Xp;
    pp.ldx = ldx;
    for (int t = 1; t <= max_threads(k); t++) {
        double c = run(k, &f.p, f.th, f.g, t), cp = run(k, &pp, f.th, gp, t);
        if (memcmp(&c, &cp, sizeof c) != 0 || memcmp(f.g, gp, f.nt * sizeof *gp) != 0)
            fail_msg("%s (threads %d), %ld x %d-%d-3: padded rows change the bits", k->name, t, sh.m, sh.n, sh.h);
    }
    free(Xp); free(gp); drop(&f);
}

/* A known value: all weights zero gives a3 = 1/2 everywhere, so J = K log 2 exactly. */
static void check_zero_weights(const listed_kernel *k)
{
    fx f = make(10, 16, 3);
    memset(f.th, 0, f.nt * sizeof *f.th);
    for (int t = 1; t <= max_threads(k); t++) {
        double c = run(k, &f.p, f.th, f.g, t);
        if (!(fabs(c - 3 * log(2.0)) < 1e-14))
            fail_msg("%s (threads %d): zero weights cost %.17g, not 3 log 2", k->name, t, c);
    }
    drop(&f);
}

/* The test's state: one listed kernel. */
static void test_listed_kernel(void **state)
{
    const listed_kernel *k = *state;
    for (size_t i = 0; i < sizeof agree_shapes / sizeof *agree_shapes; i++)
        check_agrees(k, agree_shapes[i]);
    if (fact_of(k->name)->name == NULL)
        print_message("# %s: not in this test's facts: given room for either workspace\n", k->name);
    const char *why = fact_of(k->name)->not_canonical;
    if (why)
        print_message("# %s: not checked for default's bits: %s\n", k->name, why);
    for (size_t i = 0; !why && i < sizeof bits_shapes / sizeof *bits_shapes; i++)
        check_same_bits(k, bits_shapes[i]);
    for (size_t i = 0; i < sizeof padded_shapes / sizeof *padded_shapes; i++)
        check_padded(k, padded_shapes[i]);
    check_zero_weights(k);
}

/* Every row of `facts` names a listed kernel (blas: where BLAS is built): a kernel dropped from the build
 * lists, or a stale fact, is noticed here. */
static void test_facts_listed(void **state)
{
    (void)state;
    static const char *const names[] = {
#define GALAXY_KERNEL(name) #name,
#define GALAXY_THREADED_KERNEL(name) #name,
#include "galaxy_variant_kernels.h"
#undef GALAXY_KERNEL
#undef GALAXY_THREADED_KERNEL
    };
    for (size_t i = 0; i < sizeof facts / sizeof *facts; i++) {
        int listed = 0;
        for (size_t j = 0; j < sizeof names / sizeof *names; j++)
            listed |= strcmp(names[j], facts[i].name) == 0;
        if (!listed && !facts[i].optional)
            fail_msg("%s: in this test's facts but not in kernels/galaxy/meson.build's lists", facts[i].name);
    }
}

/* ---- the reference, and the checks' power ------------------------------------------------------------- */
static void test_default_finite_differences(void **state)
{
    (void)state;
    fx f = make(20, 6, 4);
    for (size_t i = 0; i < f.nt; i++) {
        double keep = f.th[i], h = 1e-5;
        f.th[i] = keep + h; double cp = galaxy_cost_default(&f.p, f.th, f.ws);
        f.th[i] = keep - h; double cm = galaxy_cost_default(&f.p, f.th, f.ws);
        f.th[i] = keep;
        double fd = (cp - cm) / (2 * h);
        assert_true(fabs(fd - f.g0[i]) <= 1e-8 + 1e-6 * fabs(f.g0[i]));
    }
    drop(&f);
}

/* The comparisons can fail: a 1e-3 change of one weight moves the gradient far past 1e-10 relative, and a
 * 1e-9 relative change of one changes some of its bits (default's own gradient: nothing else differs). */
static void test_agreement_can_fail(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof agree_shapes / sizeof *agree_shapes; i++) {
        fx f = make(agree_shapes[i].m, agree_shapes[i].n, agree_shapes[i].h);
        f.th[3] += 1e-3;
        galaxy_grad_default(&f.p, f.th, f.g, f.ws);
        assert_true(max_diff(&f, f.g, f.g0) > 1e-8);
        drop(&f);
    }
}
static void test_same_bits_can_fail(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bits_shapes / sizeof *bits_shapes; i++) {
        fx f = make(bits_shapes[i].m, bits_shapes[i].n, bits_shapes[i].h);
        f.th[5] *= 1 + 1e-9;
        galaxy_grad_default(&f.p, f.th, f.g, f.ws);
        assert_memory_not_equal(f.g, f.g0, f.nt * sizeof *f.g);
        drop(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define GALAXY_KERNEL(name) {"galaxy_" #name, test_listed_kernel, NULL, NULL, &kernel_##name},
#define GALAXY_THREADED_KERNEL(name) GALAXY_KERNEL(name)
#include "galaxy_variant_kernels.h"
#undef GALAXY_KERNEL
#undef GALAXY_THREADED_KERNEL
        cmocka_unit_test(test_facts_listed),
        cmocka_unit_test(test_default_finite_differences),
        cmocka_unit_test(test_agreement_can_fail),
        cmocka_unit_test(test_same_bits_can_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
