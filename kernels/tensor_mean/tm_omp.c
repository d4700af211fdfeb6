/* tensor_mean, omp: tm_simd with the i rows of A split evenly across `threads` threads
 * (each thread owns its rows of A: no reduction, no false sharing beyond one row boundary). Without
 * OpenMP the pragmas are ignored and this is tm_simd. */
#include "tensor_mean_kernels.h"
#include "tm_private.h"

#include "kern_omp.h"

size_t tm_omp_workspace(long N, long D)
{
    return tm_simd_workspace(N, D); /* simd's: tanh of all inputs */
}

int tm_omp(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws,
           int threads)
{
    if (N < 1 || D < 1 || !ws)
        return -1;
    float *a = ws, *b = a + N * D, *c = b + N * D;
    if (threads < 1)
        threads = 1;
#pragma omp parallel num_threads(threads)
    {
        const int t = kern_tid(), T = kern_nthreads();
        const long e0 = N * D * t / T, e1 = N * D * (t + 1) / T;
        KERN_SHARE {
            tm_tanh_fast(X + e0, e1 - e0, a + e0);
            tm_tanh_fast(Y + e0, e1 - e0, b + e0);
            tm_tanh_fast(Z + e0, e1 - e0, c + e0);
        }
#pragma omp barrier
        KERN_SHARE tm_simd_rows(a, b, c, N, D, D * t / T, D * (t + 1) / T, A);
    }
    return 0;
}
