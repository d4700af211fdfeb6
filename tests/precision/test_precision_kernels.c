/*
 * tests/precision/test_precision_kernels.c: the reduced-precision kernels (kernels/precision).
 *   - conversions against known values: round to nearest even, ties, overflow to infinity, NaN,
 *     fp16 subnormals; the kernels' conversions (F16C where the build has it) against the software
 *     ones on every half and on many floats;
 *   - every row of the build list (precision_variant_kernels.h, generated from
 *     kernels/precision/meson.build) is a test case of its own, named prec_NAME: its loss and gradient
 *     against a double reference that rounds what the row stores (the weights, the input, a1 and a2) the
 *     same way, where what remains is float32 accumulation, so the tolerance is tight and a kernel that
 *     reads a wrong element or mis-converts fails it; and against the plain double reference, within
 *     the row's bound. What the list cannot say (the type a row stores, that bound, an instruction set
 *     it needs) is in the table `facts`; a listed row missing from it fails its case;
 *   - the rows against each other: fp32's error far below fp16's, fp16's below bf16's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "isa.h"
#include "sl_config.h"
#include "precision/prec_convert.h"
#include "precision/precision_kernels.h"

/* ---- conversions -------------------------------------------------------------------------------- */
static void test_bf16_known(void **state)
{
    (void)state;
    assert_int_equal(prec_to_bf16(1.0f), 0x3f80);
    assert_int_equal(prec_to_bf16(-2.0f), 0xc000);
    assert_int_equal(prec_to_bf16(1.0f + 0x1p-8f), 0x3f80);       /* a tie: to the even 1.0 */
    assert_int_equal(prec_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);   /* a tie: up to the even one */
    assert_int_equal(prec_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81); /* above the tie: up */
    assert_int_equal(prec_to_bf16(INFINITY), 0x7f80);
    assert_int_equal(prec_to_bf16(-INFINITY), 0xff80);
    assert_int_equal(prec_to_bf16(3.4e38f), 0x7f80);              /* rounds past the largest: inf */
    uint16_t n = prec_to_bf16(NAN);
    assert_true((n & 0x7f80) == 0x7f80 && (n & 0x7f) != 0);       /* still a NaN */
    assert_true(isnan(prec_from_bf16(n)));
    assert_true(prec_from_bf16(0x3f80) == 1.0f);
    assert_true(prec_from_bf16(0x0001) == 0x1p-133f);             /* bf16 subnormal, exact in float */
    assert_int_equal(prec_f32_to_bf16(0.1f), prec_to_bf16(0.1f)); /* header and kernels agree */
}

static void test_f16_known(void **state)
{
    (void)state;
    struct { float x; uint16_t h; } k[] = {
        {1.0f, 0x3c00}, {-2.0f, 0xc000}, {0.1f, 0x2e66}, {65504.0f, 0x7bff}, {65519.0f, 0x7bff},
        {65520.0f, 0x7c00} /* ties to even: up, to inf */, {1e6f, 0x7c00}, {INFINITY, 0x7c00},
        {-INFINITY, 0xfc00}, {0x1p-14f, 0x0400} /* least normal */, {0x1p-24f, 0x0001} /* least subnormal */,
        {0x1p-25f, 0x0000} /* a tie: to the even 0 */, {0x1.8p-25f, 0x0001}, {0x3p-24f, 0x0003},
        {0x1.ffcp-15f, 0x0400} /* the largest subnormal's tie with the least normal: up */, {-0.0f, 0x8000},
        {1.0f + 0x1p-11f, 0x3c00} /* a tie: to even */, {1.0f + 3 * 0x1p-11f, 0x3c02},
    };
    for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
        if (prec_f32_to_f16_sw(k[i].x) != k[i].h || prec_to_f16(k[i].x) != k[i].h)
            fail_msg("fp16(%a): software 0x%04x, kernels 0x%04x, want 0x%04x", (double)k[i].x,
                     prec_f32_to_f16_sw(k[i].x), prec_to_f16(k[i].x), k[i].h);
    }
    assert_true(isnan(prec_f16_to_f32_sw(prec_f32_to_f16_sw(NAN))));
    assert_true(isnan(prec_from_f16(prec_to_f16(NAN))));
    assert_true(prec_f16_to_f32_sw(0x0001) == 0x1p-24f);
    assert_true(prec_f16_to_f32_sw(0x7bff) == 65504.0f);
    assert_true(isinf(prec_f16_to_f32_sw(0xfc00)) && prec_f16_to_f32_sw(0xfc00) < 0);
}

/* Every half: widening agrees (kernels vs software), and narrowing it back gives it again (NaNs
 * quiet: the quiet bit may be added). */
static void test_f16_all_halves(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x10000; h++) {
        float a = prec_f16_to_f32_sw((uint16_t)h), b = prec_from_f16((uint16_t)h);
        if (isnan(a)) {
            assert_true(isnan(b));
            assert_int_equal(prec_f32_to_f16_sw(a) | 0x0200, h | 0x0200);
            continue;
        }
        if (memcmp(&a, &b, sizeof a) != 0 || prec_f32_to_f16_sw(a) != h || prec_to_f16(a) != h)
            fail_msg("half 0x%04x: software %a, kernels %a", h, (double)a, (double)b);
    }
}

/* Many floats: the kernels' narrowing (F16C where built) equals the software one's bits. */
static void test_f16_random_floats(void **state)
{
    (void)state;
    uint32_t s = 12345;
    for (int i = 0; i < 1000000; i++) {
        s = s * 1664525u + 1013904223u;
        float x = prec_float((s & 0x8fffffffu) | 0x30000000u); /* exponents around fp16's range */
        if (prec_to_f16(x) != prec_f32_to_f16_sw(x))
            fail_msg("fp16(%a): kernels 0x%04x, software 0x%04x", (double)x, prec_to_f16(x), prec_f32_to_f16_sw(x));
    }
}

/* ---- the rows against double references ----------------------------------------------------------- */
typedef struct row {
    const char *name;
    prec_convert_fn convert;
    prec_forward_fn forward;
    prec_backward_fn backward;
} row;

/* The build list's rows, one variable each (a test's state points at one). */
#define PREC_KERNEL(name) \
    static row row_##name = {#name, prec_convert_##name, prec_forward_##name, prec_backward_##name};
#include "precision_variant_kernels.h"
#undef PREC_KERNEL

static const row *const listed[] = {
#define PREC_KERNEL(name) &row_##name,
#include "precision_variant_kernels.h"
#undef PREC_KERNEL
};

/* What the list cannot say about a row: the type it stores (PT_*: the rounded reference rounds to it), its
 * gradient's error bound against the exact reference on the study's shape (fp16's is implied by the
 * ordering test's fp16 < bf16), and whether its code holds AVX512_BF16 instructions where the kernels can
 * (KERN_CAN_AVX512BF16, kernels/isa.h), which a CPU may lack. fp16's F16C is no such case: prec_convert.h
 * uses it only where the level compiled has it, and the level that runs is one the CPU has. */
typedef struct fact {
    const char *name;
    int type;
    double exact_tol;
    int avx512bf16;
    int follows_path; /* its arithmetic is prec_path(type)'s (bf16, fp16), which the rounded reference follows */
} fact;

static const fact facts[] = {
    {"fp32", PT_F32, 1e-5, 0, 0},
    {"bf16", PT_BF16, 1e-1, 0, 1},
    {"fp16", PT_F16, 1e-1, 0, 1},
    {"bf16dp", PT_BF16, 1e-1, 1, 0},
#if SL_HAVE_ONEDNN /* built and listed with oneDNN only */
    {"onednn_fp32", PT_F32, 1e-5, 0, 0},
    {"onednn_bf16", PT_BF16, 1e-1, 0, 0},
#endif
};

/* The path row f takes here (PREC_PATH_CONVERT for a row that has one way only). */
static int path_of(const fact *f) { return f->follows_path ? prec_path(f->type) : PREC_PATH_CONVERT; }

static const fact *fact_of(const char *name)
{
    for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
        if (strcmp(facts[i].name, name) == 0)
            return &facts[i];
    return NULL;
}

static const row *listed_row(const char *name)
{
    for (size_t i = 0; i < sizeof listed / sizeof *listed; i++)
        if (strcmp(listed[i]->name, name) == 0)
            return listed[i];
    return NULL;
}

/* x rounded to type t and back (double in, double out). */
static double rnd(int t, double x)
{
    if (t == PT_BF16)
        return prec_from_bf16(prec_to_bf16((float)x));
    if (t == PT_F16)
        return prec_from_f16(prec_to_f16((float)x));
    return (float)x;
}

/* Out (B x m) = act(In W + b) in double, rounded to t when q (a stored activation). */
static void ref_layer(const double *In, const double *W, const double *b, double *Out, int B, int n, int m,
                      int relu, int t, int q)
{
    for (int r = 0; r < B; r++)
        for (int j = 0; j < m; j++) {
            double z = b[j];
            for (int k = 0; k < n; k++)
                z += In[(size_t)r * n + k] * W[(size_t)k * m + j];
            z = relu && z < 0 ? 0 : z;
            Out[(size_t)r * m + j] = q ? rnd(t, z) : z;
        }
}

/* dW = A^T D, db = colsum D, and Dprev = (D W^T) * (A > 0) when Dprev; D rounded to type td for the
 * products (not for db) where td is a 16-bit type (the bf16 dot-product path's deltas). */
static void ref_back(const double *A, const double *D, const double *W, double *dW, double *db, double *Dprev,
                     int B, int n, int m, int td)
{
    double *Dq = malloc((size_t)B * m * sizeof *Dq);
    for (size_t i = 0; i < (size_t)B * m; i++)
        Dq[i] = td != PT_F32 ? rnd(td, D[i]) : D[i];
    for (int k = 0; k < n; k++)
        for (int j = 0; j < m; j++) {
            double g = 0;
            for (int r = 0; r < B; r++)
                g += A[(size_t)r * n + k] * Dq[(size_t)r * m + j];
            dW[(size_t)k * m + j] = g;
        }
    for (int j = 0; j < m; j++) {
        db[j] = 0;
        for (int r = 0; r < B; r++)
            db[j] += D[(size_t)r * m + j];
    }
    for (int r = 0; Dprev && r < B; r++)
        for (int k = 0; k < n; k++) {
            double s = 0;
            for (int j = 0; j < m; j++)
                s += Dq[(size_t)r * m + j] * W[(size_t)k * m + j];
            Dprev[(size_t)r * n + k] = A[(size_t)r * n + k] > 0 ? s : 0;
        }
    free(Dq);
}

/* Loss and gradient G of the network whose weights, input and hidden activations are rounded to t when
 * q (the row's own arithmetic, in double), or nothing rounded (q = 0: the exact reference). With q, the
 * deltas are rounded too for the products where the row's path stores them in t (prec_path: bf16's dot
 * products). */
static double ref_loss_grad(const mlp_dims *d, const float *Pf, const float *Xf, const uint8_t *y, int B, int t,
                            int q, int path, double *G)
{
    mlp_layout L = mlp_layout_of(d);
    double *P = malloc(L.n * sizeof *P), *X = malloc((size_t)B * d->n0 * sizeof *X);
    double *a1 = malloc((size_t)B * d->n1 * sizeof *a1), *a2 = malloc((size_t)B * d->n2 * sizeof *a2);
    double *z3 = malloc((size_t)B * d->n3 * sizeof *z3), *d2 = malloc((size_t)B * d->n2 * sizeof *d2);
    double *d1 = malloc((size_t)B * d->n1 * sizeof *d1);
    for (size_t i = 0; i < L.n; i++) { /* the biases stay float32 in every row */
        int bias = (i >= L.b1 && i < L.W2) || (i >= L.b2 && i < L.W3) || i >= L.b3;
        P[i] = q && !bias ? rnd(t, Pf[i]) : Pf[i];
    }
    for (size_t i = 0; i < (size_t)B * d->n0; i++)
        X[i] = q ? rnd(t, Xf[i]) : Xf[i];
    ref_layer(X, P + L.W1, P + L.b1, a1, B, d->n0, d->n1, 1, t, q);
    ref_layer(a1, P + L.W2, P + L.b2, a2, B, d->n1, d->n2, 1, t, q);
    ref_layer(a2, P + L.W3, P + L.b3, z3, B, d->n2, d->n3, 0, t, 0);
    double loss = 0;
    for (int r = 0; r < B; r++) { /* softmax cross-entropy; z3 := (p - onehot) / B */
        double *z = z3 + (size_t)r * d->n3, mx = z[0], sum = 0;
        for (int j = 1; j < d->n3; j++)
            mx = z[j] > mx ? z[j] : mx;
        for (int j = 0; j < d->n3; j++)
            sum += exp(z[j] - mx);
        loss += log(sum) - (z[y[r]] - mx);
        for (int j = 0; j < d->n3; j++)
            z[j] = (exp(z[j] - mx) / sum - (j == y[r])) / B;
    }
    int td = q && path == PREC_PATH_BF16DP ? t : PT_F32;
    ref_back(a2, z3, P + L.W3, G + L.W3, G + L.b3, d2, B, d->n2, d->n3, td);
    ref_back(a1, d2, P + L.W2, G + L.W2, G + L.b2, d1, B, d->n1, d->n2, td);
    ref_back(X, d1, P + L.W1, G + L.W1, G + L.b1, NULL, B, d->n0, d->n1, td);
    free(P), free(X), free(a1), free(a2), free(z3), free(d2), free(d1);
    return loss / B;
}

/* |g - want|_2 / |want|_2 */
static double rel2(const float *g, const double *want, size_t n)
{
    double e = 0, w = 0;
    for (size_t i = 0; i < n; i++)
        e += (g[i] - want[i]) * (g[i] - want[i]), w += want[i] * want[i];
    return sqrt(e / w);
}

/* Row r's gradient error on shape d at B rows (seeded inputs) against the rounded reference (q = 1) or
 * the exact one (q = 0); *loss_err gets the loss's relative error. */
static double row_error(const row *r, const fact *f, const mlp_dims *d, int B, int q, double *loss_err)
{
    mlp_layout L = mlp_layout_of(d);
    float *P = malloc(L.n * sizeof *P), *G = malloc(L.n * sizeof *G), *X = malloc((size_t)B * d->n0 * sizeof *X);
    uint16_t *Pq = malloc(prec_qweights_elems(d) * sizeof *Pq);
    void *block = aligned_alloc(64, prec_ws_bytes(d, B));
    double *Gref = malloc(L.n * sizeof *Gref);
    uint8_t *y = malloc((size_t)B);
    prec_ws ws;
    prec_ws_bind(&ws, d, B, block);
    mlp_init_he(d, P, 11);
    for (size_t i = 0; i < L.n; i++) /* non-zero biases, so that they are tested too */
        if ((i >= L.b1 && i < L.W2) || (i >= L.b2 && i < L.W3) || i >= L.b3)
            P[i] = 0.05f * (float)((int)(i % 7) - 3);
    uint32_t s = 7;
    for (size_t i = 0; i < (size_t)B * d->n0; i++)
        X[i] = (float)((s = s * 1664525u + 1013904223u) >> 24) / 255.0f;
    for (int b = 0; b < B; b++)
        y[b] = (uint8_t)(b * 7 % d->n3);
    r->convert(d, P, Pq);
    r->forward(d, P, Pq, X, B, &ws);
    double loss = mlp_loss(d, y, B, &ws.f);
    r->backward(d, P, Pq, X, B, &ws, G);
    double want = ref_loss_grad(d, P, X, y, B, f->type, q, path_of(f), Gref);
    *loss_err = fabs(loss - want) / fabs(want);
    double e = rel2(G, Gref, L.n);
    free(P), free(G), free(X), free(Pq), free(block), free(Gref), free(y);
    return e;
}

/* Shapes: the study's, and odd ones that run every vector and tile tail (and bf16dp's odd fallback). */
static const mlp_dims shapes[] = {{784, 128, 128, 10}, {37, 20, 13, 10}, {64, 70, 33, 17}};
static const int batches[] = {64, 7, 13};

/* Why row f cannot run on this machine, or NULL: AVX512_BF16 code in the kernels that run (a dispatch
 * build's v4 copy has it) on a CPU without the instructions would fault (the study's "avx512bf16"
 * requirement keeps the row from running there). */
static const char *cannot_run(const fact *f)
{
    if (!f->avx512bf16 || !kern_isa_avx512bf16())
        return NULL;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512bf16"))
        return NULL;
#endif
    return "its AVX512_BF16 code needs a CPU with AVX512_BF16";
}

/* What row f runs instead of its own code where the kernels have none of it, or NULL. */
static const char *runs_instead(const fact *f)
{
    if (f->avx512bf16 && !kern_isa_avx512bf16())
        return "the kernels that run have no AVX512_BF16 code: its forward is bf16's (the study reports the row "
               "unavailable)";
    return NULL;
}

/* Row r against the rounded reference on every shape. The bounds: float32 accumulation against double;
 * a stored activation within rounding of a tie may round the other way, which moves the gradient by about
 * one 16-bit ulp of one term. fp16's native path (AVX512_FP16) also sums PREC_FP16_CHUNK products in fp16
 * before float32, each partial sum off by up to about that many fp16 ulps: 10x looser. */
static void check_rounded(const row *r, const fact *f)
{
    int native16 = path_of(f) == PREC_PATH_FP16;
    double tol = native16 ? 2e-2 : 2e-3, ltol = native16 ? 1e-3 : 1e-4;
    if (f->follows_path)
        print_message("# %s: path %s\n", r->name, prec_path_name(path_of(f)));
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        double le, e = row_error(r, f, &shapes[k], batches[k], 1, &le);
        if (!(e < tol && le < ltol))
            fail_msg("%s on %dx%dx%dx%d B=%d: gradient %g, loss %g against the rounded reference", r->name,
                     shapes[k].n0, shapes[k].n1, shapes[k].n2, shapes[k].n3, batches[k], e, le);
    }
}

/* Row r against the exact reference on the study's shape. */
static void check_exact(const row *r, const fact *f)
{
    double le, e = row_error(r, f, &shapes[0], 64, 0, &le);
    print_message("# %s: gradient relative error %.3g, loss %.3g (exact double reference)\n", r->name, e, le);
    if (!(e < f->exact_tol))
        fail_msg("%s: gradient relative error %g against the exact reference, over %g", r->name, e, f->exact_tol);
}

/* The test's state: one listed row. */
static void test_listed_row(void **state)
{
    const row *r = *state;
    const fact *f = fact_of(r->name);
    if (!f)
        fail_msg("%s: listed in kernels/precision/meson.build but not in this test's `facts` (its stored "
                 "type and error bound)", r->name);
    const char *why = cannot_run(f), *instead = runs_instead(f);
    if (why) { /* Meson's TAP reader counts cmocka's skip() as a failure: say why and pass instead */
        print_message("# SKIP %s: not run: %s\n", r->name, why);
        return;
    }
    if (instead)
        print_message("# %s: %s\n", r->name, instead);
    check_rounded(r, f);
    check_exact(r, f);
}

/* Every row of `facts` is listed: a row dropped from the build list (or a stale fact) is noticed here. */
static void test_facts_listed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof facts / sizeof *facts; i++)
        if (!listed_row(facts[i].name))
            fail_msg("%s: in this test's `facts` but not in kernels/precision/meson.build's list", facts[i].name);
}

/* The rows against each other on the study's shape (exact reference): fp32's error far below fp16's, and
 * fp16 (11 bits) below bf16 (8 bits). */
static double exact_error(const char *name)
{
    const row *r = listed_row(name);
    if (!r)
        fail_msg("%s: not in kernels/precision/meson.build's list", name);
    const fact *f = fact_of(name);
    assert_non_null(f);
    double le;
    return row_error(r, f, &shapes[0], 64, 0, &le);
}

static void test_rows_ordered(void **state)
{
    (void)state;
    double fp32 = exact_error("fp32"), fp16 = exact_error("fp16"), bf16 = exact_error("bf16");
    assert_true(fp32 * 100 < fp16);
    assert_true(fp16 < bf16);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bf16_known),
        cmocka_unit_test(test_f16_known),
        cmocka_unit_test(test_f16_all_halves),
        cmocka_unit_test(test_f16_random_floats),
#define PREC_KERNEL(name) {"prec_" #name, test_listed_row, NULL, NULL, &row_##name},
#include "precision_variant_kernels.h"
#undef PREC_KERNEL
        cmocka_unit_test(test_facts_listed),
        cmocka_unit_test(test_rows_ordered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
