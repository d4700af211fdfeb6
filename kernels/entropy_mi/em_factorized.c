/* entropy_mi, factorized: sum_ij (p_i q_j)^2 = (sum_i p_i^2)(sum_j q_j^2). An algorithmic change
 * (O(D) instead of O(D^2) per row), reported as its own variant, with its own work (the study records
 * B (16 D + 2) flops for it). Single thread. With only sum p_i^2 needed, the softmax is never stored: with e_i = exp(x_i - max)
 * and S1 = sum e_i, S2 = sum e_i^2, sum p_i^2 = S2 / S1^2, so a row costs a max pass and an exp pass
 * over data in L1; x's and y's rows go through together, so one row's dependent chain (max, then the
 * sums) overlaps the other's (em_sum_p2_pair, em_simd_row.h, shared with em_factorized_omp). On a Zen 5
 * VM, B = 16384: 3.6 ms (store p, normalise, read back) -> 3.2 ms (one exp pass) -> 2.2 ms (rows paired)
 * with AVX-512; 4.1 -> 3.8 -> 3.1 ms with AVX2. */
#include "em_simd_row.h"

int em_factorized(const float *X, const float *Y, long B, long D, double *H, double *MI, int threads)
{
    (void)threads; /* one thread */
    if (B < 1 || D < 1 || D > EM_MAX_D)
        return -1;
    double h = 0.0, mi = 0.0;
    for (long b = 0; b < B; b++) {
        float hp, hq;
        em_sum_p2_pair(X + b * D, Y + b * D, D, &hp, &hq);
        h += hp;
        mi += (double)hp * hq;
    }
    *H = -h / (double)B;
    *MI = mi / (double)B;
    return 0;
}
