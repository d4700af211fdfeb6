/* tensor_mean, loop: accumulate a_i b_j c_k straight into A (no temporary). */
#include <string.h>

#include "tensor_mean_kernels.h"

size_t tm_loop_workspace(long N, long D)
{
    (void)N;
    return (size_t)(3 * D);
}

int tm_loop(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws,
            int threads)
{
    (void)threads; /* one thread */
    if (N < 1 || D < 1 || !ws)
        return -1;
    const long D3 = D * D * D;
    float *a = ws, *b = a + D, *c = b + D;
    memset(A, 0, (size_t)D3 * sizeof *A);
    for (long n = 0; n < N; n++) {
        tm_tanh(X + n * D, D, a);
        tm_tanh(Y + n * D, D, b);
        tm_tanh(Z + n * D, D, c);
        for (long i = 0; i < D; i++)
            for (long j = 0; j < D; j++) {
                const float ab = a[i] * b[j];
                for (long k = 0; k < D; k++)
                    A[(i * D + j) * D + k] += ab * c[k];
            }
    }
    const float inv = 1.0f / (float)N;
    for (long e = 0; e < D3; e++)
        A[e] *= inv;
    return 0;
}
