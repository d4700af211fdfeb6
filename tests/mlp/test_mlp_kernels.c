/*
 * tests/mlp/test_mlp_kernels.c: the fast CPU variants (simd, omp, blas when built) compute what naive
 * computes. Forward: a1, a2, z3 from the same weights and rows. Backward: every part of G (W1, b1, W2,
 * b2, W3, b3) and the deltas d2, d1, from the same activations and d3 (naive's forward + mlp_loss,
 * copied into each variant's workspace, so every relu' mask is the same). Agreement is
 *     max |variant - naive| <= TOL * max |naive|      per array,
 * TOL = 1e-5: float32 sums of up to 784 terms taken in a different order differ by a few ulps of the
 * largest term (seen: ~1e-6), far below any blocking or tail bug (which gives O(1) errors).
 * Shapes: the study's 784-128-128-10 at B = 64 (and 1, 7), and odd ones (13-9-5-3, 100-37-19-10 at
 * B = 1, 7, 33, 64) whose widths are not multiples of any vector width, so every row and column tail
 * runs. omp with 1, 2 and 3 threads agrees with simd to the same tolerance (it runs the same blocks).
 * The fused steps (mlp_step_simd, mlp_step_omp: forward, loss, backward with the update in the
 * gradient's store, omp gathering the batch itself) against naive's forward, loss, backward and
 * mlp_sgd, at B = 130 too (over one reduction block of 128 rows at AVX-512: the separate calls) and at
 * B = 1026 (over one block at every width: the separate calls at AVX2 too, whose block is 1024 rows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "mlp/mlp_kernels.h"
#include "sl_config.h"

#define TOL 1e-5
/* mlp_simd.h's reduction block at its largest (AVX2's; 128 at other widths). Not taken from the header:
 * this file is compiled for the baseline ISA, and a dispatch build runs it at every level. */
#define MAX_KC 1024

typedef struct variant {
    const char *name;
    mlp_forward_fn fw;
    mlp_backward_fn bw;
    int threads;
} variant;

/* Every variant the build lists (kernels/mlp/meson.build; naive too, against itself) at 2 threads, so a
 * new variant is tested here without an edit; and omp at 1 and 3 threads as well. */
static const variant variants[] = {
#define MLP_KERNEL(name) {#name, mlp_forward_##name, mlp_backward_##name, 2},
#include "mlp_variant_kernels.h"
#undef MLP_KERNEL
    {"omp1", mlp_forward_omp, mlp_backward_omp, 1},
    {"omp3", mlp_forward_omp, mlp_backward_omp, 3},
};
#define NVAR (sizeof variants / sizeof variants[0])

static uint32_t lcg(uint32_t *s) { return (*s = *s * 1103515245u + 12345u) >> 8; }
static float unif(uint32_t *s) { return (float)(lcg(s) % 100000u) / 100000.0f; }

/* max |a - b| / max |b| over n floats (0 when b is all zero and a equals it); infinite when a is not
 * finite anywhere (a NaN left in the NaN-filled outputs is an element never written; fmax would skip it) */
static double rel(const float *a, const float *b, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i]))
            return INFINITY;
        num = fmax(num, fabs((double)a[i] - (double)b[i]));
        den = fmax(den, fabs((double)b[i]));
    }
    return den > 0.0 ? num / den : num;
}

static void check(const char *what, const char *var, const mlp_dims *d, int B, const float *a,
                  const float *b, size_t n)
{
    double r = rel(a, b, n);
    if (!(r <= TOL))
        print_error("%s %d-%d-%d-%d B=%d %s: relative difference %.3g > %.1g\n", var, d->n0, d->n1, d->n2,
                    d->n3, B, what, r, TOL);
    assert_true(r <= TOL);
}

/* Workspace with the ws arrays bound into one 64-byte aligned block. */
typedef struct wsbuf {
    float *block;
    mlp_ws ws;
} wsbuf;

static wsbuf ws_new(const mlp_dims *d, int B)
{
    wsbuf w;
    size_t n = mlp_ws_floats(d, B);
    w.block = aligned_alloc(64, n * sizeof(float)); /* n is a multiple of 16 floats */
    assert_non_null(w.block);
    for (size_t i = 0; i < n; i++)
        w.block[i] = NAN; /* a variant reading what it has not written shows up as NaN */
    mlp_ws_bind(&w.ws, d, B, w.block);
    return w;
}

static void run_case(const mlp_dims *d, int B, uint32_t seed)
{
    mlp_layout L = mlp_layout_of(d);
    size_t nx = (size_t)B * d->n0, nw = mlp_ws_floats(d, B);
    float *P = malloc(L.n * sizeof(float)), *X = malloc(nx * sizeof(float));
    float *G0 = malloc(L.n * sizeof(float)), *G = malloc(L.n * sizeof(float));
    uint8_t *y = malloc((size_t)B);
    assert_true(P && X && G0 && G && y);
    mlp_init_he(d, P, seed);
    uint32_t s = seed;
    for (size_t i = 0; i < L.n; i++) /* biases too (He sets them 0), so the bias path is tested */
        P[i] += 0.1f * (unif(&s) - 0.5f);
    for (size_t i = 0; i < nx; i++)
        X[i] = unif(&s);
    for (int b = 0; b < B; b++)
        y[b] = (uint8_t)(lcg(&s) % (uint32_t)d->n3);

    wsbuf ref = ws_new(d, B), v = ws_new(d, B), sv = ws_new(d, B);
    mlp_forward_naive(d, P, X, B, &ref.ws, 1);
    float *z3 = malloc((size_t)B * d->n3 * sizeof(float)); /* logits, before mlp_loss overwrites them */
    memcpy(z3, ref.ws.z3, (size_t)B * d->n3 * sizeof(float));
    mlp_loss(d, y, B, &ref.ws);
    mlp_backward_naive(d, P, X, B, &ref.ws, G0, 1);

    for (size_t k = 0; k < NVAR; k++) {
        const variant *V = &variants[k];
        /* forward */
        wsbuf fresh = ws_new(d, B);
        V->fw(d, P, X, B, &fresh.ws, V->threads);
        check("a1", V->name, d, B, fresh.ws.a1, ref.ws.a1, (size_t)B * d->n1);
        check("a2", V->name, d, B, fresh.ws.a2, ref.ws.a2, (size_t)B * d->n2);
        check("z3", V->name, d, B, fresh.ws.z3, z3, (size_t)B * d->n3);
        free(fresh.block);
        /* backward from naive's activations and d3 */
        memcpy(v.block, ref.block, nw * sizeof(float));
        for (size_t i = 0; i < L.n; i++)
            G[i] = NAN; /* every parameter's gradient must be written */
        V->bw(d, P, X, B, &v.ws, G, V->threads);
        check("dW1", V->name, d, B, G + L.W1, G0 + L.W1, L.b1 - L.W1);
        check("db1", V->name, d, B, G + L.b1, G0 + L.b1, L.W2 - L.b1);
        check("dW2", V->name, d, B, G + L.W2, G0 + L.W2, L.b2 - L.W2);
        check("db2", V->name, d, B, G + L.b2, G0 + L.b2, L.W3 - L.b2);
        check("dW3", V->name, d, B, G + L.W3, G0 + L.W3, L.b3 - L.W3);
        check("db3", V->name, d, B, G + L.b3, G0 + L.b3, L.n - L.b3);
        check("d2", V->name, d, B, v.ws.d2, ref.ws.d2, (size_t)B * d->n2);
        check("d1", V->name, d, B, v.ws.d1, ref.ws.d1, (size_t)B * d->n1);
        /* omp (any thread count) against simd: the same blocks cut differently */
        if (strncmp(V->name, "omp", 3) == 0) {
            memcpy(sv.block, ref.block, nw * sizeof(float));
            float *Gs = malloc(L.n * sizeof(float));
            assert_non_null(Gs);
            mlp_backward_simd(d, P, X, B, &sv.ws, Gs, 1);
            check("G vs simd", V->name, d, B, G, Gs, L.n);
            mlp_forward_simd(d, P, X, B, &sv.ws, 1);
            memcpy(v.block, ref.block, nw * sizeof(float));
            V->fw(d, P, X, B, &v.ws, V->threads);
            check("a1 vs simd", V->name, d, B, v.ws.a1, sv.ws.a1, (size_t)B * d->n1);
            check("a2 vs simd", V->name, d, B, v.ws.a2, sv.ws.a2, (size_t)B * d->n2);
            check("z3 vs simd", V->name, d, B, v.ws.z3, sv.ws.z3, (size_t)B * d->n3);
            free(Gs);
        }
    }
    free(ref.block); free(v.block); free(sv.block);
    free(P); free(X); free(G0); free(G); free(y); free(z3);
}

static void test_study_shape(void **state)
{
    (void)state;
    mlp_dims d = {784, 128, 128, 10};
    run_case(&d, 64, 1);
    run_case(&d, 7, 2);
    run_case(&d, 1, 3);
}

static void test_small_odd_shape(void **state)
{
    (void)state;
    mlp_dims d = {13, 9, 5, 3};
    const int Bs[] = {1, 7, 33, 64};
    for (int i = 0; i < 4; i++)
        run_case(&d, Bs[i], 10u + (uint32_t)i);
}

static void test_mid_odd_shape(void **state)
{
    (void)state;
    mlp_dims d = {100, 37, 19, 10};
    const int Bs[] = {1, 7, 33, 64};
    for (int i = 0; i < 4; i++)
        run_case(&d, Bs[i], 20u + (uint32_t)i);
}

/* Wider than one column block, with tails; and longer than one reduction block in every layer at every
 * width (MAX_KC): the forward's carry-over of partial sums through C and the delta's, with tails in
 * both. */
static void test_wide_odd_shape(void **state)
{
    (void)state;
    mlp_dims d = {300, 141, 133, 17}, deep = {MAX_KC + 172, MAX_KC + 13, MAX_KC + 5, 17};
    run_case(&d, 33, 30);
    run_case(&d, 130, 31);
    run_case(&deep, 33, 32);
}

typedef struct stepper {
    const char *name;
    mlp_step_fn step;
    int threads, gathers; /* gathers: given images and idx, rather than X */
} stepper;

static const stepper steppers[] = {
    {"simd step", mlp_step_simd, 1, 0},
    {"omp1 step", mlp_step_omp, 1, 1},
    {"omp2 step", mlp_step_omp, 2, 1},
    {"omp3 step", mlp_step_omp, 3, 1},
    {"omp2 step, X given", mlp_step_omp, 2, 0},
};

/* One step of each stepper from the same weights and batch against naive's; lr 0.5 makes the update
 * large against the weights, so a missing or doubled update is far outside TOL. */
static void run_step_case(const mlp_dims *d, int B, uint32_t seed)
{
    mlp_layout L = mlp_layout_of(d);
    const int rows = 2 * B + 3; /* images to gather from, more than the batch */
    const float lr = 0.5f;
    size_t nx = (size_t)B * d->n0;
    float *P = malloc(L.n * sizeof(float)), *Pref = malloc(L.n * sizeof(float)), *Pv = malloc(L.n * sizeof(float));
    float *G = malloc(L.n * sizeof(float)), *X = malloc(nx * sizeof(float)), *Xv = malloc(nx * sizeof(float));
    uint8_t *img = malloc((size_t)rows * d->n0), *y = malloc((size_t)B);
    int32_t *idx = malloc((size_t)B * sizeof(int32_t));
    assert_true(P && Pref && Pv && G && X && Xv && img && y && idx);
    mlp_init_he(d, P, seed);
    uint32_t s = seed;
    for (size_t i = 0; i < L.n; i++)
        P[i] += 0.1f * (unif(&s) - 0.5f);
    for (size_t i = 0; i < (size_t)rows * d->n0; i++)
        img[i] = (uint8_t)(lcg(&s) & 255u);
    for (int b = 0; b < B; b++) {
        idx[b] = (int32_t)((lcg(&s) % (uint32_t)rows));
        y[b] = (uint8_t)(lcg(&s) % (uint32_t)d->n3);
        for (int k = 0; k < d->n0; k++) /* as train_gather */
            X[(size_t)b * d->n0 + k] = (float)img[(size_t)idx[b] * d->n0 + k] * (1.0f / 255.0f);
    }
    wsbuf ref = ws_new(d, B), v = ws_new(d, B);
    mlp_forward_naive(d, P, X, B, &ref.ws, 1);
    float loss = mlp_loss(d, y, B, &ref.ws);
    mlp_backward_naive(d, P, X, B, &ref.ws, G, 1);
    memcpy(Pref, P, L.n * sizeof(float));
    mlp_sgd(Pref, G, L.n, lr);
    for (size_t k = 0; k < sizeof steppers / sizeof steppers[0]; k++) {
        const stepper *S = &steppers[k];
        memcpy(Pv, P, L.n * sizeof(float));
        for (size_t i = 0; i < nx; i++)
            Xv[i] = S->gathers ? NAN : X[i];
        float lv = S->step(d, Pv, S->gathers ? img : NULL, idx, Xv, y, B, &v.ws, G, lr, S->threads);
        check("X", S->name, d, B, Xv, X, nx);
        check("W1 after", S->name, d, B, Pv + L.W1, Pref + L.W1, L.b1 - L.W1);
        check("b1 after", S->name, d, B, Pv + L.b1, Pref + L.b1, L.W2 - L.b1);
        check("W2 after", S->name, d, B, Pv + L.W2, Pref + L.W2, L.b2 - L.W2);
        check("b2 after", S->name, d, B, Pv + L.b2, Pref + L.b2, L.W3 - L.b2);
        check("W3 after", S->name, d, B, Pv + L.W3, Pref + L.W3, L.b3 - L.W3);
        check("b3 after", S->name, d, B, Pv + L.b3, Pref + L.b3, L.n - L.b3);
        check("loss", S->name, d, B, &lv, &loss, 1);
    }
    free(ref.block); free(v.block);
    free(P); free(Pref); free(Pv); free(G); free(X); free(Xv); free(img); free(y); free(idx);
}

static void test_fused_step(void **state)
{
    (void)state;
    mlp_dims study = {784, 128, 128, 10}, odd = {13, 9, 5, 3}, wide = {300, 141, 133, 17};
    run_step_case(&study, 64, 40);
    run_step_case(&study, 7, 41);
    run_step_case(&odd, 33, 42);
    run_step_case(&wide, 33, 43);
    run_step_case(&wide, 130, 44);         /* over one reduction block of 128 (AVX-512, SSE) */
    run_step_case(&odd, MAX_KC + 2, 45);   /* over one reduction block at any width: the unfused path */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_study_shape),
        cmocka_unit_test(test_small_odd_shape),
        cmocka_unit_test(test_mid_odd_shape),
        cmocka_unit_test(test_wide_odd_shape),
        cmocka_unit_test(test_fused_step),
    };
    return cmocka_run_group_tests_name("mlp_kernels", tests, NULL, NULL);
}
