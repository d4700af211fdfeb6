/* entropy_mi, omp: em_simd's row kernel, rows split across `threads` threads (static
 * schedule: every row costs the same). Without OpenMP the pragma is ignored and this is em_simd. */
#include "em_simd_row.h"
#include "kern_omp.h"

int em_omp(const float *X, const float *Y, long B, long D, double *H, double *MI, int threads)
{
    if (B < 1 || D < 1 || D > EM_MAX_D)
        return -1;
    double h = 0.0, mi = 0.0;
    if (threads < 1)
        threads = 1;
    /* the loop's own barrier dropped (nowait) so that the share ends with the thread's last row; the
     * parallel region's end still waits for every thread before the sums are combined */
#pragma omp parallel reduction(+ : h, mi) num_threads(threads)
    KERN_SHARE {
#pragma omp for schedule(static) nowait
        for (long b = 0; b < B; b++) {
            float hr, mr;
            em_row_simd(X + b * D, Y + b * D, D, &hr, &mr);
            h += hr;
            mi += mr;
        }
    }
    *H = -h / (double)B;
    *MI = mi / (double)B;
    return 0;
}
