/* tensor_mean kernels against a double reference at odd sizes (D not a multiple of the vector width
 * (16 lanes with AVX-512, 8 with AVX2) or of the j block; N not a multiple of the 64-triplet chunk;
 * fewer rows than threads). Every kernel of the build list (tm_variant_kernels.h, generated from
 * kernels/tensor_mean/meson.build) is a test of its own, named tm_NAME: a new variant is tested here
 * without a line in this file. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sl_config.h"
#include "tensor_mean/tensor_mean_kernels.h"

typedef tm_kernel_fn *tm_fn;

static uint64_t rng_state;
static float rnd_normal(void)
{
    double u[2];
    for (int k = 0; k < 2; k++) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        u[k] = ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
    }
    return (float)(sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]));
}

static void reference(const float *X, const float *Y, const float *Z, long N, long D, double *R)
{
    double *t = malloc((size_t)(3 * D) * sizeof *t); /* one triplet's tanh, in double */
    assert_non_null(t);
    for (long e = 0; e < D * D * D; e++)
        R[e] = 0.0;
    for (long n = 0; n < N; n++) {
        for (long d = 0; d < D; d++) {
            t[d] = tanh((double)X[n * D + d]);
            t[D + d] = tanh((double)Y[n * D + d]);
            t[2 * D + d] = tanh((double)Z[n * D + d]);
        }
        for (long i = 0; i < D; i++)
            for (long j = 0; j < D; j++)
                for (long k = 0; k < D; k++)
                    R[(i * D + j) * D + k] += t[i] * t[D + j] * t[2 * D + k];
    }
    for (long e = 0; e < D * D * D; e++)
        R[e] /= (double)N;
    free(t);
}

static void check_variant(tm_fn f, tm_workspace_fn *workspace)
{
    static const long Ns[] = {1, 5, 63, 130}, Ds[] = {1, 3, 17, 32, 45, 70};
    for (size_t ni = 0; ni < 4; ni++)
        for (size_t di = 0; di < sizeof Ds / sizeof *Ds; di++) {
            const long N = Ns[ni], D = Ds[di], D3 = D * D * D;
            float *X = malloc((size_t)(3 * N * D) * sizeof *X), *Y = X + N * D, *Z = Y + N * D;
            float *A = malloc((size_t)D3 * sizeof *A);
            float *ws = malloc(workspace(N, D) * sizeof *ws);
            double *R = malloc((size_t)D3 * sizeof *R);
            rng_state = 0xabcdefull + (uint64_t)(N * 100 + D);
            for (long e = 0; e < 3 * N * D; e++)
                X[e] = rnd_normal();
            reference(X, Y, Z, N, D, R);
            assert_int_equal(f(X, Y, Z, N, D, A, ws, 2), 0); /* two threads: one-thread variants ignore it */
            double d = 0.0, r = 0.0;
            for (long e = 0; e < D3; e++) {
                d += (A[e] - R[e]) * (A[e] - R[e]);
                r += R[e] * R[e];
            }
            if (!(sqrt(d) <= 1e-5 * sqrt(r)))
                fail_msg("N=%ld D=%ld: relative error %.3g", N, D, sqrt(d / r));
            free(X);
            free(A);
            free(ws);
            free(R);
        }
}

/* The build list's kernels, each with its name. */
typedef struct listed_kernel {
    const char *name;
    tm_fn run;
    tm_workspace_fn *workspace;
} listed_kernel;

#define TM_KERNEL(name) static listed_kernel kernel_##name = {#name, tm_##name, tm_##name##_workspace};
#include "tm_variant_kernels.h"
#undef TM_KERNEL

static listed_kernel *const listed[] = {
#define TM_KERNEL(name) &kernel_##name,
#include "tm_variant_kernels.h"
#undef TM_KERNEL
};

/* One listed kernel (the test's state) against the reference; blas built without BLAS refuses
 * (documented) instead. */
static void test_listed_kernel(void **st)
{
    const listed_kernel *k = *st;
    float x[4] = {0}, A[1], ws[64];
    if (!SL_HAVE_BLAS && strcmp(k->name, "blas") == 0)
        assert_int_equal(k->run(x, x, x, 2, 1, A, ws, 1), -1);
    else
        check_variant(k->run, k->workspace);
}

/* The vector tanh against libm's double tanh, over the whole useful range and every tail length. */
static void test_tanh_fast(void **st)
{
    (void)st;
    float in[1000], out[1000];
    for (int i = 0; i < 1000; i++)
        in[i] = -12.0f + 24.0f * (float)i / 999.0f;
    in[500] = 0.0f;
    in[501] = -1e-6f;
    for (long n = 1; n <= 1000; n += (n < 40 ? 1 : 97)) {
        tm_tanh_fast(in, n, out);
        for (long i = 0; i < n; i++)
            if (fabs(out[i] - tanh((double)in[i])) > 3e-7)
                fail_msg("tanh(%g): %.9g, libm %.9g (n = %ld)", in[i], out[i], tanh((double)in[i]), n);
    }
}

/* Large arguments of either sign saturate to +-1 (the vector tanh works on |x| and puts the sign back:
 * exp(-2x) of a large negative x would overflow), and -0 keeps its sign. */
static void test_tanh_fast_extremes(void **st)
{
    (void)st;
    const float in[] = {-1000.0f, -90.0f, -50.0f, -45.0f, 45.0f, 50.0f, 90.0f, 1000.0f, -0.0f};
    enum { N = sizeof in / sizeof in[0] };
    float out[N];
    tm_tanh_fast(in, N, out);
    for (int i = 0; i < N - 1; i++)
        if (!(fabs(out[i] - tanh((double)in[i])) <= 3e-7))
            fail_msg("tanh(%g): %.9g, libm %.9g", in[i], out[i], tanh((double)in[i]));
    assert_true(out[N - 1] == 0.0f && signbit(out[N - 1]));
}

static void test_bad_arguments(void **st)
{
    (void)st;
    float x[8] = {0}, A[8], ws[64];
    for (size_t k = 0; k < sizeof listed / sizeof *listed; k++) {
        tm_fn run = listed[k]->run;
        assert_int_equal(run(x, x, x, 0, 2, A, ws, 1), -1);
        assert_int_equal(run(x, x, x, 2, 0, A, ws, 1), -1);
        assert_int_equal(run(x, x, x, 2, 2, A, NULL, 1), -1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define TM_KERNEL(name) {"tm_" #name, test_listed_kernel, NULL, NULL, &kernel_##name},
#include "tm_variant_kernels.h"
#undef TM_KERNEL
        cmocka_unit_test(test_tanh_fast),
        cmocka_unit_test(test_tanh_fast_extremes),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("tensor_mean kernels", tests, NULL, NULL);
}
