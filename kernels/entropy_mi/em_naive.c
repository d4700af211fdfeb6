/* entropy_mi, naive: the direct reading of the maths, scalar loops, the D x D sum in full. */
#include "entropy_mi_kernels.h"

int em_naive(const float *X, const float *Y, long B, long D, double *H, double *MI, int threads)
{
    (void)threads; /* one thread */
    if (B < 1 || D < 1 || D > EM_MAX_D)
        return -1;
    float p[EM_MAX_D], q[EM_MAX_D];
    double h = 0.0, mi = 0.0;
    for (long b = 0; b < B; b++) {
        em_softmax_row(X + b * D, D, p);
        em_softmax_row(Y + b * D, D, q);
        float hr = 0.0f, mr = 0.0f;
        for (long i = 0; i < D; i++)
            hr += p[i] * p[i];
        for (long i = 0; i < D; i++) { /* sum_i (sum_j (p_i q_j)^2), in that order */
            float si = 0.0f;
            for (long j = 0; j < D; j++) {
                const float t = p[i] * q[j];
                si += t * t;
            }
            mr += si;
        }
        h += hr;
        mi += mr;
    }
    *H = -h / (double)B;
    *MI = mi / (double)B;
    return 0;
}
