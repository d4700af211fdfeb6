/* tensor_mean, naive: the einsum baseline's shape: a D^3 temporary per triplet, then A += T. */
#include <string.h>

#include "tensor_mean_kernels.h"

size_t tm_naive_workspace(long N, long D)
{
    (void)N;
    return (size_t)(D * D * D + 3 * D);   /* the outer-product temporary + f(x,y,z) */
}

int tm_naive(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws,
             int threads)
{
    (void)threads; /* one thread */
    if (N < 1 || D < 1 || !ws)
        return -1;
    const long D3 = D * D * D;
    float *T = ws, *a = ws + D3, *b = a + D, *c = b + D;
    memset(A, 0, (size_t)D3 * sizeof *A);
    for (long n = 0; n < N; n++) {
        tm_tanh(X + n * D, D, a);
        tm_tanh(Y + n * D, D, b);
        tm_tanh(Z + n * D, D, c);
        for (long i = 0; i < D; i++)
            for (long j = 0; j < D; j++)
                for (long k = 0; k < D; k++)
                    T[(i * D + j) * D + k] = a[i] * b[j] * c[k];
        for (long e = 0; e < D3; e++)
            A[e] += T[e];
    }
    const float inv = 1.0f / (float)N;
    for (long e = 0; e < D3; e++)
        A[e] *= inv;
    return 0;
}
