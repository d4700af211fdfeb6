/*
 * tests/cnn/test_cnn_kernels.c: each CPU variant's four per-layer functions (every name of the build's
 * cnn_variant_kernels, at 1, 2 and 3 threads) against plain double-precision loops written here.
 *   conv forward:  y = relu(conv(x, w) + b);
 *   conv backward: from a given y (about a third of it <= 0, some exactly 0) and dy: dy overwritten with
 *                  dz = dy * (y > 0) (compared exactly), dw, db, and dx (or dx NULL, as for conv1);
 *   dense forward: y = act(x w + b), with and without ReLU;
 *   dense backward: the same outputs as the conv's, dx NULL or not.
 * Every output starts as NaN (an element never written fails) and the scratch is filled with NaN (a
 * variant that reads scratch it did not write shows NaN downstream) and followed by a guard zone that
 * must stay untouched.
 * Tolerance, per element: |v - ref| <= TOL * m, where m is the sum of the magnitudes of the terms of that
 * element (|b| + sum |x w| for a forward output, sum |dz x| for a weight gradient, and so on), computed
 * with the reference. A float32 sum of n terms in any order is within about n * 2^-24 * m of the exact
 * sum, and the blocked and lane-split sums of the fast variants keep each sequential chain short (the
 * longest in the fast ones: a conv1 weight-gradient lane over 37 images x 46 vectors, ~1700 terms; naive
 * sums 25 000 in a row), and errors grow like sqrt(n) in practice: the worst seen was 2.9e-7 m (naive's
 * conv2 forward; the fast variants' below that), against TOL = 1e-5, while an indexing or tail bug gives
 * errors of order m (checked by breaking a row tail's mask: 8e-2).
 * Shapes: the study's (conv1 1->8 on 28 x 28, conv2 8->16 on 13 x 13, dense 400->128 and 128->10) at
 * B = 37, 5, 1 and 2 CNN_BLAS_SLICE + 5 (blas's slices, two for a thread at 1 and 2 threads, a short
 * last one), and odd ones that run the tails: cin 1, 3 and 8 (one AVX2 vector, where the channels of
 * the input can be the lanes), k 1, 2 and 3, planes 7..13 wide and tall,
 * output channels 1, 5, 8, 16, 17, 19 (below, at and above the 16 of a channel-lanes tile, none a
 * multiple of 3 or 8 where that is the tile), B 1..5 (omp slices of 0, 1 and 2 images, the weight
 * gradient's 4-image chunks with a tail); dense widths 13->9, 37->19, 5->3, 300->141.
 * simd's and omp's convolutions fused with their pooling (at 1, 2, 3 threads) against the same variant's
 * convolution and the shared pooling, on the same shapes and on 8->16 at 8 x 7 (outputs 6 x 5: the last
 * tile of conv2's channel-lanes forward has 2 positions, and both are pooled): pooled outputs and
 * winners exactly, the gradients within 1e-6 of the largest, dp left as it was.
 * Also: cnn_scratch_floats is at least what each variant uses for images of 10 x 10 up to 40 x 40.
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

#include "cnn/cnn_fast.h"
#include "cnn/cnn_kernels.h"
#include "isa.h"
#include "sl_config.h"

#define TOL 1e-5
#define GUARD 64 /* floats after the scratch that must stay as written */

typedef struct variant {
    const char *name;
    cnn_conv_forward_fn cf;
    cnn_conv_backward_fn cb;
    cnn_dense_forward_fn df;
    cnn_dense_backward_fn db;
    int threads;
} variant;

#define VARIANT(n, t) {#n #t, cnn_conv_forward_##n, cnn_conv_backward_##n, cnn_dense_forward_##n, \
                       cnn_dense_backward_##n, t}
/* Every variant the build lists (kernels/cnn/meson.build), each at 1, 2 and 3 threads: a new variant is
 * tested here without an edit, and one-thread variants must ignore `threads`. */
static const variant variants[] = {
#define CNN_KERNEL(n) VARIANT(n, 1), VARIANT(n, 2), VARIANT(n, 3),
#include "cnn_variant_kernels.h"
#undef CNN_KERNEL
};
#define NVAR (sizeof variants / sizeof variants[0])

static uint32_t lcg(uint32_t *s) { return (*s = *s * 1103515245u + 12345u) >> 8; }
static float unif(uint32_t *s) { return (float)(lcg(s) % 100000u) / 50000.0f - 1.0f; } /* [-1, 1) */

static float *fnew(size_t n)
{
    float *p = malloc((n ? n : 1) * sizeof(float));
    assert_non_null(p);
    return p;
}
static double *dnew(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof(double));
    assert_non_null(p);
    return p;
}
static void fill(float *p, size_t n, uint32_t *s)
{
    for (size_t i = 0; i < n; i++)
        p[i] = unif(s);
}
static void fill_nan(float *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = NAN;
}

/* Every element within TOL of its reference's magnitude (a NaN fails the comparison). */
static void check(const char *what, const char *var, const char *shape, const float *v, const double *ref,
                  const double *mag, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)v[i] - ref[i]);
        if (!(e <= TOL * mag[i])) {
            print_error("%s %s %s: element %zu is %.9g, reference %.9g (magnitude %.3g)\n", var, shape, what, i,
                        (double)v[i], ref[i], mag[i]);
            fail();
        }
    }
}

/* Scratch of n floats, NaN-filled, then GUARD floats of a pattern that check_guard tests. */
static float *scratch_new(size_t n)
{
    float *s = aligned_alloc(64, ((n + GUARD) * sizeof(float) + 63) / 64 * 64);
    assert_non_null(s);
    fill_nan(s, n);
    for (int i = 0; i < GUARD; i++)
        s[n + (size_t)i] = (float)i;
    return s;
}
static void check_guard(const float *s, size_t n, const char *var, const char *shape)
{
    for (int i = 0; i < GUARD; i++)
        if (s[n + (size_t)i] != (float)i) {
            print_error("%s %s: wrote %d floats past its scratch\n", var, shape, i + 1);
            fail();
        }
}

/* What a variant may use of the scratch for this layer at batch B: per thread, the fast variants' work
 * area or blas's slice of im2col matrix, product and partial gradients (cnn_fast.h). */
static size_t conv_scratch(const cnn_conv *c, int B, int threads)
{
    size_t a = cnn_simd_area_floats(c), b = cnn_blas_area_floats(c, B);
    return (size_t)threads * (a > b ? a : b);
}

/* ---- convolution -------------------------------------------------------------------------------- */

#define X4(p, C, H, W, n, c, i, j) (p)[(((size_t)(n) * (C) + (c)) * (H) + (i)) * (W) + (j)]

/* The reference forward: y, and m = |b| + sum |x w| per output. */
static void ref_conv_forward(const cnn_conv *c, int B, const float *x, const float *w, const float *b,
                             double *y, double *m)
{
    int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    for (int n = 0; n < B; n++)
        for (int o = 0; o < c->cout; o++)
            for (int i = 0; i < ho; i++)
                for (int j = 0; j < wo; j++) {
                    double s = b[o], a = fabs(b[o]);
                    for (int ci = 0; ci < c->cin; ci++)
                        for (int u = 0; u < k; u++)
                            for (int v = 0; v < k; v++) {
                                double t = (double)X4(x, c->cin, c->h, c->w, n, ci, i + u, j + v) *
                                           X4(w, c->cin, k, k, o, ci, u, v);
                                s += t, a += fabs(t);
                            }
                    X4(y, c->cout, ho, wo, n, o, i, j) = s > 0 ? s : 0;
                    X4(m, c->cout, ho, wo, n, o, i, j) = a;
                }
}

/* The reference backward from dz: dw, db, dx and their magnitudes. */
typedef struct conv_grads {
    double *dw, *mdw, *db, *mdb, *dx, *mdx;
} conv_grads;

static conv_grads ref_conv_backward(const cnn_conv *c, int B, const float *x, const float *w, const float *dz)
{
    int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    size_t nw = (size_t)c->cout * c->cin * k * k, nx = (size_t)B * c->cin * c->h * c->w;
    conv_grads g = {dnew(nw), dnew(nw), dnew((size_t)c->cout), dnew((size_t)c->cout), dnew(nx), dnew(nx)};
    for (int n = 0; n < B; n++)
        for (int o = 0; o < c->cout; o++)
            for (int i = 0; i < ho; i++)
                for (int j = 0; j < wo; j++) {
                    double d = X4(dz, c->cout, ho, wo, n, o, i, j);
                    g.db[o] += d, g.mdb[o] += fabs(d);
                    for (int ci = 0; ci < c->cin; ci++)
                        for (int u = 0; u < k; u++)
                            for (int v = 0; v < k; v++) {
                                double xv = X4(x, c->cin, c->h, c->w, n, ci, i + u, j + v);
                                double wv = X4(w, c->cin, k, k, o, ci, u, v);
                                X4(g.dw, c->cin, k, k, o, ci, u, v) += d * xv;
                                X4(g.mdw, c->cin, k, k, o, ci, u, v) += fabs(d * xv);
                                X4(g.dx, c->cin, c->h, c->w, n, ci, i + u, j + v) += d * wv;
                                X4(g.mdx, c->cin, c->h, c->w, n, ci, i + u, j + v) += fabs(d * wv);
                            }
                }
    return g;
}

static void free_grads(conv_grads *g)
{
    free(g->dw), free(g->mdw), free(g->db), free(g->mdb), free(g->dx), free(g->mdx);
}

static void conv_case(const cnn_conv *c, int B, uint32_t seed)
{
    const size_t nx = (size_t)B * c->cin * c->h * c->w, ny = (size_t)B * cnn_conv_out(c);
    const size_t nw = (size_t)c->cout * c->cin * c->k * c->k;
    char shape[96];
    snprintf(shape, sizeof shape, "conv %d->%d k%d %dx%d B=%d", c->cin, c->cout, c->k, c->h, c->w, B);
    uint32_t s = seed;
    float *x = fnew(nx), *w = fnew(nw), *b = fnew((size_t)c->cout), *yin = fnew(ny), *dy0 = fnew(ny);
    fill(x, nx, &s), fill(w, nw, &s), fill(b, (size_t)c->cout, &s), fill(dy0, ny, &s);
    for (size_t i = 0; i < ny; i++) /* the backward's y: a third not positive, some exactly 0 */
        yin[i] = i % 7 == 0 ? 0.0f : unif(&s) + 0.3f;
    double *yref = dnew(ny), *ymag = dnew(ny), *dzref = dnew(ny), *zero = dnew(ny);
    ref_conv_forward(c, B, x, w, b, yref, ymag);
    float *dz = fnew(ny);
    for (size_t i = 0; i < ny; i++)
        dz[i] = yin[i] > 0.0f ? dy0[i] : 0.0f, dzref[i] = dz[i];
    conv_grads g = ref_conv_backward(c, B, x, w, dz);
    float *y = fnew(ny), *dy = fnew(ny), *dw = fnew(nw), *db = fnew((size_t)c->cout), *dx = fnew(nx);
    for (size_t v = 0; v < NVAR; v++) {
        const variant *V = &variants[v];
        size_t ns = conv_scratch(c, B, V->threads);
        float *scr = scratch_new(ns);
        fill_nan(y, ny);
        V->cf(c, B, x, w, b, y, scr, V->threads);
        check("y", V->name, shape, y, yref, ymag, ny);
        for (int with_dx = 0; with_dx < 2; with_dx++) {
            memcpy(dy, dy0, ny * sizeof(float));
            fill_nan(dw, nw), fill_nan(db, (size_t)c->cout), fill_nan(dx, nx);
            V->cb(c, B, x, w, yin, dy, dw, db, with_dx ? dx : NULL, scr, V->threads);
            check("dz (in dy)", V->name, shape, dy, dzref, zero, ny); /* exact: a copy or 0 */
            check("dw", V->name, shape, dw, g.dw, g.mdw, nw);
            check("db", V->name, shape, db, g.db, g.mdb, (size_t)c->cout);
            if (with_dx)
                check("dx", V->name, shape, dx, g.dx, g.mdx, nx);
        }
        check_guard(scr, ns, V->name, shape);
        free(scr);
    }
    free_grads(&g);
    free(x), free(w), free(b), free(yin), free(dy0), free(yref), free(ymag), free(dzref), free(zero);
    free(dz), free(y), free(dy), free(dw), free(db), free(dx);
}

static void test_conv_study_shapes(void **state)
{
    (void)state;
    const cnn_conv conv1 = {1, 28, 28, 8, 3}, conv2 = {8, 13, 13, 16, 3};
    const int Bs[] = {37, 5, 1, 2 * CNN_BLAS_SLICE + 5}; /* the last: blas's slices, a thread taking two */
    for (int i = 0; i < 4; i++) {
        conv_case(&conv1, Bs[i], 1u + (uint32_t)i);
        conv_case(&conv2, Bs[i], 11u + (uint32_t)i);
    }
}

/* At a level with 8-float FMA vectors (AVX2 and AVX-512), the study's convolutions take the kernels that
 * fill every lane (cnn_fast.h: cnn_simd_conv_forms), whatever the level's widest vector: conv1's forward
 * and weight gradient, conv2's forward and input gradient. */
static void test_conv_study_forms(void **state)
{
    (void)state;
    const char *isa = kern_isa();
    if (strcmp(isa, "avx2") != 0 && strcmp(isa, "avx512") != 0) {
        print_message("# %s: no 8-float FMA kernels at this level, nothing to check\n", isa);
        return;
    }
    const cnn_conv conv1 = {1, 28, 28, 8, 3}, conv2 = {8, 13, 13, 16, 3};
    const int f1 = cnn_simd_conv_forms(&conv1), f2 = cnn_simd_conv_forms(&conv2);
    if (!(f1 & CNN_SIMD_FWD_CHANNELS) || !(f1 & CNN_SIMD_WGRAD_WINDOWS) || !(f2 & CNN_SIMD_FWD_CHANNELS) ||
        !(f2 & CNN_SIMD_DX_SCATTER))
        fail_msg("at %s the study's convolutions take position-lanes kernels (conv1 forms %d, conv2 %d; want "
                 "the channel-lanes forwards, conv1's window-lanes weight gradient, conv2's scattered input "
                 "gradient): see kernels/cnn/cnn_simd.h", isa, f1, f2);
}

static void test_conv_odd_shapes(void **state)
{
    (void)state;
    /* 8: one AVX2 vector; 13: channel tiles with tails of every size (8 + 4 + 1, 4 + 4 + 4 + 1) */
    const int cins[] = {1, 3, 8, 13}, ks[] = {3, 1, 2}, couts[] = {1, 5, 8, 16, 17, 19};
    uint32_t seed = 100;
    for (int a = 0; a < 4; a++)
        for (int kk = 0; kk < 3; kk++)
            for (int o = 0; o < 6; o++)
                for (int h = 7; h <= 13; h += 3) {
                    int w = 7 + (h + o + kk) % 7, B = 1 + (a + o + h) % 5; /* widths 7..13, B 1..5 */
                    cnn_conv c = {cins[a], h, w, couts[o], ks[kk]};
                    conv_case(&c, B, seed++);
                }
}

/* ---- convolution fused with its pooling (simd, omp) -------------------------------------------------- */

typedef struct fused {
    const char *name;
    cnn_conv_forward_fn cf;
    cnn_conv_backward_fn cb;
    cnn_conv_pool_forward_fn pf;
    cnn_pool_conv_backward_fn pb;
    int threads;
} fused;
static const fused fused_variants[] = {
    {"simd", cnn_conv_forward_simd, cnn_conv_backward_simd, cnn_conv_pool_forward_simd, cnn_pool_conv_backward_simd, 1},
    {"omp1", cnn_conv_forward_omp, cnn_conv_backward_omp, cnn_conv_pool_forward_omp, cnn_pool_conv_backward_omp, 1},
    {"omp2", cnn_conv_forward_omp, cnn_conv_backward_omp, cnn_conv_pool_forward_omp, cnn_pool_conv_backward_omp, 2},
    {"omp3", cnn_conv_forward_omp, cnn_conv_backward_omp, cnn_conv_pool_forward_omp, cnn_pool_conv_backward_omp, 3},
};

/* |v - ref| <= 1e-6 max |ref| (the same products summed in another order at most) */
static void close_to(const char *what, const char *var, const char *shape, const float *v, const float *ref,
                     size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)ref[i]));
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)v[i] - ref[i]) <= 1e-6 * m)) {
            print_error("%s %s %s: element %zu is %.9g, unfused %.9g\n", var, shape, what, i, (double)v[i],
                        (double)ref[i]);
            fail();
        }
}

/* The fused forward against the same variant's convolution then cnn_pool_forward (p and arg exactly: the
 * same sums, in the same order, compute the outputs), and the fused backward against cnn_pool_backward
 * then the variant's conv backward, within 1e-6 of the largest element (db, and conv1's weight gradient
 * with channels as lanes, sum the same products in another order). */
static void fused_case(const cnn_conv *c, int B, uint32_t seed)
{
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c);
    if (ho < 2 || wo < 2)
        return;
    const cnn_pool pl = {c->cout, ho, wo};
    const size_t nx = (size_t)B * c->cin * c->h * c->w, ny = (size_t)B * cnn_conv_out(c);
    const size_t np = (size_t)B * c->cout * (size_t)(ho / 2) * (size_t)(wo / 2);
    const size_t nw = (size_t)c->cout * c->cin * c->k * c->k;
    char shape[96];
    snprintf(shape, sizeof shape, "conv+pool %d->%d k%d %dx%d B=%d", c->cin, c->cout, c->k, c->h, c->w, B);
    uint32_t s = seed;
    float *x = fnew(nx), *w = fnew(nw), *b = fnew((size_t)c->cout), *dp = fnew(np);
    fill(x, nx, &s), fill(w, nw, &s), fill(b, (size_t)c->cout, &s), fill(dp, np, &s);
    float *y = fnew(ny), *dy = fnew(ny), *p0 = fnew(np), *p1 = fnew(np), *dp1 = fnew(np);
    float *dw0 = fnew(nw), *db0 = fnew((size_t)c->cout), *dx0 = fnew(nx);
    float *dw1 = fnew(nw), *db1 = fnew((size_t)c->cout), *dx1 = fnew(nx);
    uint8_t *a0 = malloc(np ? np : 1), *a1 = malloc(np ? np : 1);
    assert_non_null(a0), assert_non_null(a1);
    for (size_t v = 0; v < sizeof fused_variants / sizeof fused_variants[0]; v++) {
        const fused *V = &fused_variants[v];
        size_t ns = conv_scratch(c, B, V->threads);
        float *scr = scratch_new(ns);
        V->cf(c, B, x, w, b, y, scr, V->threads);
        cnn_pool_forward(&pl, B, y, p0, a0, 1);
        fill_nan(p1, np), memset(a1, 0xff, np);
        V->pf(c, &pl, B, x, w, b, p1, a1, scr, V->threads);
        assert_memory_equal(p0, p1, np * sizeof(float));
        assert_memory_equal(a0, a1, np);
        for (int with_dx = 0; with_dx < 2; with_dx++) {
            cnn_pool_backward(&pl, B, dp, a0, dy, 1);
            fill_nan(dw0, nw), fill_nan(db0, (size_t)c->cout), fill_nan(dx0, nx);
            V->cb(c, B, x, w, y, dy, dw0, db0, with_dx ? dx0 : NULL, scr, V->threads);
            memcpy(dp1, dp, np * sizeof(float));
            fill_nan(dw1, nw), fill_nan(db1, (size_t)c->cout), fill_nan(dx1, nx);
            V->pb(c, &pl, B, x, w, p1, a1, dp1, dw1, db1, with_dx ? dx1 : NULL, scr, V->threads);
            assert_memory_equal(dp1, dp, np * sizeof(float)); /* read only */
            close_to("dw", V->name, shape, dw1, dw0, nw);
            close_to("db", V->name, shape, db1, db0, (size_t)c->cout);
            if (with_dx)
                close_to("dx", V->name, shape, dx1, dx0, nx);
        }
        check_guard(scr, ns, V->name, shape);
        free(scr);
    }
    free(x), free(w), free(b), free(dp), free(y), free(dy), free(p0), free(p1), free(dp1);
    free(dw0), free(db0), free(dx0), free(dw1), free(db1), free(dx1), free(a0), free(a1);
}

static void test_conv_pool_fused(void **state)
{
    (void)state;
    const cnn_conv conv1 = {1, 28, 28, 8, 3}, conv2 = {8, 13, 13, 16, 3};
    const int Bs[] = {37, 5, 1};
    const cnn_conv tail2 = {8, 8, 7, 16, 3}; /* 30 outputs: 7 tiles of 4, then 2 that the pool reads */
    for (int i = 0; i < 3; i++) {
        fused_case(&conv1, Bs[i], 21u + (uint32_t)i);
        fused_case(&conv2, Bs[i], 31u + (uint32_t)i);
        fused_case(&tail2, Bs[i], 41u + (uint32_t)i);
    }
    const int cins[] = {1, 3, 8}, ks[] = {3, 1, 2}, couts[] = {1, 5, 8, 16, 17, 19};
    uint32_t seed = 300;
    for (int a = 0; a < 3; a++)
        for (int kk = 0; kk < 3; kk++)
            for (int o = 0; o < 6; o++)
                for (int h = 7; h <= 13; h += 3) {
                    int w = 7 + (h + o + kk) % 7, B = 1 + (a + o + h) % 5;
                    cnn_conv c = {cins[a], h, w, couts[o], ks[kk]};
                    fused_case(&c, B, seed++);
                }
}

/* ---- dense ---------------------------------------------------------------------------------------- */

static void dense_case(const cnn_dense *l, int B, int relu, uint32_t seed)
{
    const size_t nx = (size_t)B * l->nin, ny = (size_t)B * l->nout, nw = (size_t)l->nin * l->nout;
    char shape[64];
    snprintf(shape, sizeof shape, "dense %d->%d%s B=%d", l->nin, l->nout, relu ? " relu" : "", B);
    uint32_t s = seed;
    float *x = fnew(nx), *w = fnew(nw), *b = fnew((size_t)l->nout), *yin = fnew(ny), *dy0 = fnew(ny);
    fill(x, nx, &s), fill(w, nw, &s), fill(b, (size_t)l->nout, &s), fill(dy0, ny, &s);
    for (size_t i = 0; i < ny; i++)
        yin[i] = i % 5 == 0 ? 0.0f : unif(&s) + 0.3f;
    double *yref = dnew(ny), *ymag = dnew(ny), *dzref = dnew(ny), *zero = dnew(ny);
    double *dw = dnew(nw), *mdw = dnew(nw), *db = dnew((size_t)l->nout), *mdb = dnew((size_t)l->nout);
    double *dx = dnew(nx), *mdx = dnew(nx);
    for (int n = 0; n < B; n++)
        for (int j = 0; j < l->nout; j++) {
            size_t o = (size_t)n * l->nout + j;
            double z = b[j], m = fabs(b[j]);
            for (int i = 0; i < l->nin; i++) {
                double t = (double)x[(size_t)n * l->nin + i] * w[(size_t)i * l->nout + j];
                z += t, m += fabs(t);
            }
            yref[o] = relu && z < 0 ? 0 : z, ymag[o] = m;
            double d = !relu || yin[o] > 0.0f ? dy0[o] : 0.0f;
            dzref[o] = d, db[j] += d, mdb[j] += fabs(d);
            for (int i = 0; i < l->nin; i++) {
                double xv = x[(size_t)n * l->nin + i], wv = w[(size_t)i * l->nout + j];
                dw[(size_t)i * l->nout + j] += xv * d, mdw[(size_t)i * l->nout + j] += fabs(xv * d);
                dx[(size_t)n * l->nin + i] += d * wv, mdx[(size_t)n * l->nin + i] += fabs(d * wv);
            }
        }
    float *y = fnew(ny), *dy = fnew(ny), *gw = fnew(nw), *gb = fnew((size_t)l->nout), *gx = fnew(nx);
    for (size_t v = 0; v < NVAR; v++) {
        const variant *V = &variants[v];
        fill_nan(y, ny);
        V->df(l, B, x, w, b, y, relu, NULL, V->threads); /* dense layers use no scratch */
        check("y", V->name, shape, y, yref, ymag, ny);
        for (int with_dx = 0; with_dx < 2; with_dx++) {
            memcpy(dy, dy0, ny * sizeof(float));
            fill_nan(gw, nw), fill_nan(gb, (size_t)l->nout), fill_nan(gx, nx);
            V->db(l, B, x, w, yin, dy, relu, gw, gb, with_dx ? gx : NULL, NULL, V->threads);
            check("dz (in dy)", V->name, shape, dy, dzref, zero, ny);
            check("dw", V->name, shape, gw, dw, mdw, nw);
            check("db", V->name, shape, gb, db, mdb, (size_t)l->nout);
            if (with_dx)
                check("dx", V->name, shape, gx, dx, mdx, nx);
        }
    }
    free(x), free(w), free(b), free(yin), free(dy0), free(yref), free(ymag), free(dzref), free(zero);
    free(dw), free(mdw), free(db), free(mdb), free(dx), free(mdx);
    free(y), free(dy), free(gw), free(gb), free(gx);
}

static void test_dense_shapes(void **state)
{
    (void)state;
    const cnn_dense study[] = {{400, 128}, {128, 10}}, odd[] = {{13, 9}, {37, 19}, {5, 3}, {300, 141}};
    for (int i = 0; i < 2; i++) {
        dense_case(&study[i], 37, i == 0, 1u + (uint32_t)i);
        dense_case(&study[i], 1, i == 0, 3u + (uint32_t)i);
    }
    for (int i = 0; i < 4; i++)
        for (int B = 1; B <= 5; B += 2)
            for (int relu = 0; relu < 2; relu++)
                dense_case(&odd[i], i == 3 ? 33 + B : B, relu, 50u + (uint32_t)(8 * i + 2 * B + relu));
}

/* ---- the workspace holds what the variants use ---------------------------------------------------- */

static void test_scratch_is_enough(void **state)
{
    (void)state;
    const int Bs[] = {1, 2, 5, 512};
    for (int h = 10; h <= 40; h += 3)
        for (int w = 10; w <= 40; w += 5) {
            cnn_dims d;
            assert_int_equal(cnn_dims_init(&d, h, w), 0);
            for (int i = 0; i < 4; i++)
                for (int t = 1; t <= 4; t++) {
                    size_t have = cnn_scratch_floats(&d, Bs[i], t);
                    size_t need1 = conv_scratch(&d.conv1, Bs[i], t), need2 = conv_scratch(&d.conv2, Bs[i], t);
                    if (have < need1 || have < need2)
                        fail_msg("%dx%d B=%d threads=%d: cnn_scratch_floats %zu < %zu (conv1) or %zu (conv2)", h,
                                 w, Bs[i], t, have, need1, need2);
                }
        }
}

#if SL_HAVE_ONEDNN
/* onednn's own pooling against the shared one, exactly (p, arg and dx), at 1 and 2 threads: an odd plane
 * (an unused last row and column) and the study's conv1 output at batch 8 (oneDNN picks its JIT code for
 * that one), values drawn from a few levels, so that windows hold ties. */
static void test_pool_onednn(void **state)
{
    (void)state;
    const cnn_pool shapes[] = {{.c = 3, .h = 11, .w = 9}, {.c = 8, .h = 24, .w = 24}};
    const int Bs[] = {5, 8};
    for (int k = 0; k < 2; k++) {
        const cnn_pool *p = &shapes[k];
        int B = Bs[k];
        size_t n = (size_t)B * p->c * p->h * p->w, o = (size_t)B * p->c * (p->h / 2) * (p->w / 2);
        float *x = malloc(n * sizeof *x), *dx0 = malloc(n * sizeof *x), *dx1 = malloc(n * sizeof *x);
        float *y0 = malloc(o * sizeof *x), *y1 = malloc(o * sizeof *x), *dy = malloc(o * sizeof *x);
        uint8_t *a0 = malloc(o), *a1 = malloc(o);
        for (size_t i = 0; i < n; i++)
            x[i] = (float)((i * 37) % 5) - 2.0f;
        for (size_t i = 0; i < o; i++)
            dy[i] = (float)(i % 13) - 6.5f;
        cnn_pool_forward(p, B, x, y0, a0, 1);
        cnn_pool_backward(p, B, dy, a0, dx0, 1);
        for (int t = 1; t <= 2; t++) {
            memset(dx1, 0xff, n * sizeof *dx1); /* NaN: every element must be written */
            cnn_pool_forward_onednn(p, B, x, y1, a1, t);
            cnn_pool_backward_onednn(p, B, dy, a1, dx1, t);
            assert_memory_equal(y0, y1, o * sizeof *y0);
            assert_memory_equal(a0, a1, o);
            assert_memory_equal(dx0, dx1, n * sizeof *dx0);
        }
        free(x), free(dx0), free(dx1), free(y0), free(y1), free(dy), free(a0), free(a1);
    }
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_study_shapes),
        cmocka_unit_test(test_conv_study_forms),
        cmocka_unit_test(test_conv_odd_shapes),
        cmocka_unit_test(test_conv_pool_fused),
        cmocka_unit_test(test_dense_shapes),
        cmocka_unit_test(test_scratch_is_enough),
#if SL_HAVE_ONEDNN
        cmocka_unit_test(test_pool_onednn),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
