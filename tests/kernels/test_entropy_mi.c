/* entropy_mi kernels against a double reference that computes the D x D sum directly, at odd sizes
 * (tails that are not multiples of the vector width (up to 16 lanes), fewer rows than the 8-row i block),
 * and with large logits. Every kernel of the build list (em_variant_kernels.h, generated from
 * kernels/entropy_mi/meson.build) is a test of its own, named em_NAME: a new variant is tested here
 * without a line in this file. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "entropy_mi/entropy_mi_kernels.h"

typedef em_kernel_fn *em_fn;

static uint64_t rng_state;
static float rnd_normal(void)
{
    /* xorshift64 + Box-Muller: the test's own generator, independent of the study glue's */
    double u[2];
    for (int k = 0; k < 2; k++) {
        rng_state ^= rng_state << 13;
        rng_state ^= rng_state >> 7;
        rng_state ^= rng_state << 17;
        u[k] = ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
    }
    return (float)(sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]));
}

static void fill(float *v, long n, float scale)
{
    for (long i = 0; i < n; i++)
        v[i] = scale * rnd_normal();
}

static void softmax_d(const float *x, long D, double *p)
{
    double m = x[0], s = 0.0;
    for (long i = 1; i < D; i++)
        m = x[i] > m ? x[i] : m;
    for (long i = 0; i < D; i++)
        s += (p[i] = exp(x[i] - m));
    for (long i = 0; i < D; i++)
        p[i] /= s;
}

/* The definition, in double, with the D x D sum computed pair by pair. */
static void reference(const float *X, const float *Y, long B, long D, double *H, double *MI)
{
    double *p = malloc((size_t)D * sizeof *p), *q = malloc((size_t)D * sizeof *q);
    double h = 0.0, mi = 0.0;
    for (long b = 0; b < B; b++) {
        softmax_d(X + b * D, D, p);
        softmax_d(Y + b * D, D, q);
        for (long i = 0; i < D; i++) {
            h += p[i] * p[i];
            for (long j = 0; j < D; j++)
                mi += (p[i] * q[j]) * (p[i] * q[j]);
        }
    }
    *H = -h / (double)B;
    *MI = mi / (double)B;
    free(p);
    free(q);
}

static void check_variant(em_fn f, float scale)
{
    static const long Bs[] = {1, 3, 37, 255}, Ds[] = {1, 7, 33, 256};
    for (size_t bi = 0; bi < 4; bi++)
        for (size_t di = 0; di < 4; di++) {
            const long B = Bs[bi], D = Ds[di];
            float *X = malloc((size_t)(B * D) * sizeof *X), *Y = malloc((size_t)(B * D) * sizeof *Y);
            rng_state = 0x1234567ull + (uint64_t)(B * 1000 + D);
            fill(X, B * D, scale);
            fill(Y, B * D, scale);
            double h, mi, rh, rmi;
            reference(X, Y, B, D, &rh, &rmi);
            assert_int_equal(f(X, Y, B, D, &h, &mi, 2), 0);
            if (fabs(h - rh) > 1e-5 * fabs(rh) || fabs(mi - rmi) > 1e-5 * fabs(rmi))
                fail_msg("B=%ld D=%ld: H %.9g (ref %.9g), MI %.9g (ref %.9g)", B, D, h, rh, mi, rmi);
            free(X);
            free(Y);
        }
}

/* The build list's kernels, one variable each (a test's state points at one). */
#define EM_KERNEL(name) static em_fn kernel_##name = em_##name;
#include "em_variant_kernels.h"
#undef EM_KERNEL

static em_fn *const listed[] = {
#define EM_KERNEL(name) &kernel_##name,
#include "em_variant_kernels.h"
#undef EM_KERNEL
};

/* One listed kernel at scale 1, then with large logits: the softmax must subtract the row max
 * (exp(80) overflows float). */
static void test_listed_kernel(void **st)
{
    em_fn run = *(em_fn *)*st;
    check_variant(run, 1.0f);
    check_variant(run, 40.0f);
}

/* The identity behind `factorized`, in double, on the reference's own numbers. */
static void test_identity(void **st)
{
    (void)st;
    const long D = 33;
    float x[33], y[33];
    double p[33], q[33];
    rng_state = 99;
    fill(x, D, 1.0f);
    fill(y, D, 1.0f);
    softmax_d(x, D, p);
    softmax_d(y, D, q);
    double pair = 0.0, sp = 0.0, sq = 0.0;
    for (long i = 0; i < D; i++) {
        sp += p[i] * p[i];
        sq += q[i] * q[i];
        for (long j = 0; j < D; j++)
            pair += p[i] * q[j] * p[i] * q[j];
    }
    assert_true(fabs(pair - sp * sq) <= 1e-14 * pair);
    /* ... and the float kernels agree with each other on a full-size batch */
    const long B = 64, D2 = 256;
    float *X = malloc(B * D2 * sizeof *X), *Y = malloc(B * D2 * sizeof *Y);
    fill(X, B * D2, 1.0f);
    fill(Y, B * D2, 1.0f);
    double h1, m1, h2, m2;
    assert_int_equal(em_simd(X, Y, B, D2, &h1, &m1, 1), 0);
    assert_int_equal(em_factorized(X, Y, B, D2, &h2, &m2, 1), 0);
    assert_true(fabs(m1 - m2) <= 1e-5 * m2);
    assert_true(fabs(h1 - h2) <= 1e-6 * fabs(h2));
    free(X);
    free(Y);
}

static void test_bad_arguments(void **st)
{
    (void)st;
    float x[4] = {0};
    double h, mi;
    for (size_t k = 0; k < sizeof listed / sizeof *listed; k++) {
        assert_int_equal((*listed[k])(x, x, 0, 4, &h, &mi, 1), -1);
        assert_int_equal((*listed[k])(x, x, 1, 0, &h, &mi, 1), -1);
        assert_int_equal((*listed[k])(x, x, 1, EM_MAX_D + 1, &h, &mi, 1), -1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define EM_KERNEL(name) {"em_" #name, test_listed_kernel, NULL, NULL, &kernel_##name},
#include "em_variant_kernels.h"
#undef EM_KERNEL
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests_name("entropy_mi kernels", tests, NULL, NULL);
}
