/* The CUDA variants of entropy_mi (cuda, cuda_pinned, cuda_factorized) and tensor_mean against the CPU
 * naive kernels (themselves tested against double references). Exits 77 (skip) when there is no CUDA device; built only with CUDA. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "entropy_mi/entropy_mi_kernels.h"
#include "tensor_mean/tensor_mean_kernels.h"

static float rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (float)((*s >> 8) & 0xffff) / 65536.0f * 6.0f - 3.0f;
}

static void test_entropy_mi_cuda(void **st)
{
    (void)st;
    static const long Bs[] = {1, 37, 1000}, Ds[] = {1, 33, 256, 300};
    for (int bi = 0; bi < 3; bi++)
        for (int di = 0; di < 4; di++) {
            const long B = Bs[bi], D = Ds[di];
            float *X = malloc((size_t)(2 * B * D) * sizeof *X), *Y = X + B * D;
            unsigned s = (unsigned)(B * 7 + D);
            for (long e = 0; e < 2 * B * D; e++)
                X[e] = rnd(&s);
            double h, mi, rh, rmi;
            assert_int_equal(em_naive(X, Y, B, D, &rh, &rmi, 1), 0);
            /* the three rows: cuda; cuda_pinned (copy_in must read the pinned copies: the arguments it is
             * given are zeros; H and MI summed on the device); cuda_factorized (as pinned, the O(D) kernel).
             * Each context starts with NaN in its device buffers and device sums (em_cuda_alloc,
             * em_cuda_sums_on_device), so nothing left by the previous mode can pass. */
            for (int mode = 0; mode < 3; mode++) {
                em_cuda_ctx *c = em_cuda_alloc(B, D);
                assert_non_null(c);
                float *garbage = NULL;
                if (mode > 0) {
                    assert_int_equal(em_cuda_pin_inputs(c, X, Y), 0);
                    assert_int_equal(em_cuda_pin_inputs(c, X, Y), -1); /* once only */
                    assert_int_equal(em_cuda_sums_on_device(c), 0);
                    assert_int_equal(em_cuda_sums_on_device(c), -1); /* once only */
                    garbage = calloc((size_t)(2 * B * D), sizeof *garbage);
                }
                assert_int_equal(em_cuda_copy_in(c, garbage ? garbage : X, garbage ? garbage + B * D : Y), 0);
                int (*compute)(em_cuda_ctx *) = mode == 2 ? em_cuda_compute_factorized : em_cuda_compute;
                assert_int_equal(compute(c), 0);
                assert_int_equal(compute(c), 0); /* repeatable on one copy of the inputs */
                assert_int_equal(em_cuda_copy_out(c, &h, &mi), 0);
                em_cuda_free(c);
                free(garbage);
                if (fabs(h - rh) > 1e-4 * fabs(rh) || fabs(mi - rmi) > 1e-4 * fabs(rmi))
                    fail_msg("mode %d B=%ld D=%ld: H %.9g (cpu %.9g), MI %.9g (cpu %.9g)", mode, B, D, h, rh, mi,
                             rmi);
            }
            free(X);
        }
}

static void test_tensor_mean_cuda(void **st)
{
    (void)st;
    static const long Ns[] = {1, 63, 300}, Ds[] = {1, 17, 32};
    for (int ni = 0; ni < 3; ni++)
        for (int di = 0; di < 3; di++) {
            const long N = Ns[ni], D = Ds[di], D3 = D * D * D;
            float *X = malloc((size_t)(3 * N * D) * sizeof *X), *Y = X + N * D, *Z = Y + N * D;
            float *A = malloc((size_t)D3 * sizeof *A), *R = malloc((size_t)D3 * sizeof *R);
            float *ws = malloc(tm_naive_workspace(N, D) * sizeof *ws);
            unsigned s = (unsigned)(N * 7 + D);
            for (long e = 0; e < 3 * N * D; e++)
                X[e] = rnd(&s);
            assert_int_equal(tm_naive(X, Y, Z, N, D, R, ws, 1), 0);
            tm_cuda_ctx *c = tm_cuda_alloc(N, D);
            assert_non_null(c);
            assert_int_equal(tm_cuda_copy_in(c, X, Y, Z), 0);
            assert_int_equal(tm_cuda_compute(c), 0);
            assert_int_equal(tm_cuda_compute(c), 0); /* repeatable on one copy of the inputs */
            assert_int_equal(tm_cuda_copy_out(c, A), 0);
            tm_cuda_free(c);
            double d = 0.0, r = 0.0;
            for (long e = 0; e < D3; e++) {
                d += (double)(A[e] - R[e]) * (A[e] - R[e]);
                r += (double)R[e] * R[e];
            }
            if (!(sqrt(d) <= 1e-4 * sqrt(r)))
                fail_msg("N=%ld D=%ld: relative difference %.3g", N, D, sqrt(d / r));
            free(X);
            free(A);
            free(R);
            free(ws);
        }
}

int main(void)
{
    if (em_cuda_device_count() < 1) {
        fprintf(stderr, "no CUDA device: skipping\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entropy_mi_cuda),
        cmocka_unit_test(test_tensor_mean_cuda),
    };
    return cmocka_run_group_tests_name("CUDA kernels", tests, NULL, NULL);
}
