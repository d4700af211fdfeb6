/*
 * entropy_mi, simd: one thread, vector exp pass, and the D x D sum vectorised over j with eight rows of i
 * in flight (eight independent accumulators hide the FMA latency; each vector of f loaded once serves
 * eight multiply + FMA pairs). The sum runs on the softmax numerators e and f and is scaled once per
 * row (em_simd_row.h). f is zero-padded to the vector width, so a D that is not a multiple of the lane
 * count needs no separate tail loop: the padding lanes add (e_i * 0)^2 = 0.
 */
#include "em_simd_row.h"

int em_simd(const float *X, const float *Y, long B, long D, double *H, double *MI, int threads)
{
    (void)threads; /* one thread */
    if (B < 1 || D < 1 || D > EM_MAX_D)
        return -1;
    double h = 0.0, mi = 0.0;
    for (long b = 0; b < B; b++) {
        float hr, mr;
        em_row_simd(X + b * D, Y + b * D, D, &hr, &mr);
        h += hr;
        mi += mr;
    }
    *H = -h / (double)B;
    *MI = mi / (double)B;
    return 0;
}
