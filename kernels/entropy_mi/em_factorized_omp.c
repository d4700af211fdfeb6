/* entropy_mi, factorized_omp: em_factorized's rows split across `threads` OpenMP threads (static
 * schedule: every row costs the same), as em_omp splits em_simd's. The factorised form reads each row once
 * and does O(D) work on it, so it is bound by memory bandwidth, not by the FMA units: a second thread
 * helps as far as one core cannot draw the machine's bandwidth alone. The row sums are added in double,
 * per thread then across threads, so H and MI can differ from em_factorized's in the last bits. Without
 * OpenMP the pragma is ignored and this is em_factorized. */
#include "em_simd_row.h"

int em_factorized_omp(const float *X, const float *Y, long B, long D, double *H, double *MI, int threads)
{
    if (B < 1 || D < 1 || D > EM_MAX_D)
        return -1;
    double h = 0.0, mi = 0.0;
    if (threads < 1)
        threads = 1;
#pragma omp parallel for schedule(static) reduction(+ : h, mi) num_threads(threads)
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
