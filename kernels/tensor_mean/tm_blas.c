/* tensor_mean, blas: A (D^2 x D, row-major = D x D x D) = (1/N) KR^T F_z with KR[n][i*D + j] =
 * tanh(x_ni) tanh(y_nj), the N x D^2 Khatri-Rao product, built here (timed) and one cblas_sgemm. */
#include "sl_config.h"
#include "kern_blas.h"
#include "tensor_mean_kernels.h"

#if SL_HAVE_BLAS
#include <cblas.h>
#endif

size_t tm_blas_workspace(long N, long D)
{
    return (size_t)(N * D * D + 3 * N * D); /* Khatri-Rao product + tanh of all inputs */
}

int tm_blas(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws,
            int threads)
{
#if SL_HAVE_BLAS
    kern_blas_threads(threads);
    if (N < 1 || D < 1 || !ws)
        return -1;
    float *kr = ws, *a = kr + N * D * D, *b = a + N * D, *c = b + N * D;
    tm_tanh_fast(X, N * D, a);
    tm_tanh_fast(Y, N * D, b);
    tm_tanh_fast(Z, N * D, c);
    for (long n = 0; n < N; n++)
        for (long i = 0; i < D; i++) {
            const float ai = a[n * D + i];
            float *row = kr + n * D * D + i * D;
            for (long j = 0; j < D; j++)
                row[j] = ai * b[n * D + j];
        }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(D * D), (int)D, (int)N, 1.0f / (float)N,
                kr, (int)(D * D), c, (int)D, 0.0f, A, (int)D);
    return 0;
#else
    (void)X, (void)Y, (void)Z, (void)N, (void)D, (void)A, (void)ws, (void)threads;
    return -1;
#endif
}
