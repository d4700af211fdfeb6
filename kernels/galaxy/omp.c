/*
 * kernels/galaxy/omp.c: the simd variant's blocks shared among OpenMP threads by canon.h's segments:
 * each thread takes whole segments (schedule static: contiguous ones, so the next block it prefetches
 * is its own), sums each into the segment's own gradient in the workspace, and the segments are added
 * in segment order at the end, that sum shared among the threads by index range. The result is
 * simd's, bit for bit, for any thread count; at most GALAXY_SEGMENTS threads have work.
 * Without OpenMP the pragmas are ignored and the code runs on one thread with the same result.
 */
#include "fused.h"

#include <string.h>

#include "kern_omp.h"

double galaxy_cost_omp(const galaxy_problem *p, const double *theta, double *ws, int threads)
{
    double Jseg[GALAXY_SEGMENTS];
    if (threads < 1) threads = 1;
    #pragma omp parallel num_threads(threads)
    {
        double *Z = galaxy_fused_slice(p, ws, kern_tid());
        const double *T1p = galaxy_fused_pack(p, theta, Z);   /* each thread its own copy, in its L2 */
        #pragma omp for schedule(static)
        for (int s = 0; s < GALAXY_SEGMENTS; s++)
            Jseg[s] = galaxy_fused_segment(p, theta, T1p, s, Z, NULL);
    }
    double J = 0.0;
    for (int s = 0; s < GALAXY_SEGMENTS; s++) J += Jseg[s];   /* in segment order, as simd */
    return J / (double)p->m + galaxy_cost_reg(p, theta);
}

void galaxy_grad_omp(const galaxy_problem *p, const double *theta, double *grad, double *ws, int threads)
{
    const size_t nt = galaxy_n_theta(p);
    if (threads < 1) threads = 1;
    #pragma omp parallel num_threads(threads)
    {
        double *Z = galaxy_fused_slice(p, ws, kern_tid());
        const double *T1p = galaxy_fused_pack(p, theta, Z);
        #pragma omp for schedule(static)
        for (int s = 0; s < GALAXY_SEGMENTS; s++) {
            double *G = ws + (size_t)s * nt;                /* segment s's own sum */
            memset(G, 0, nt * sizeof *G);
            galaxy_fused_segment(p, theta, T1p, s, Z, G);
        }
        /* (the for's barrier: every segment is complete) each thread adds one range of all the
         * segments, in segment order, so the sum is spread over the threads */
        #pragma omp for schedule(static)
        for (size_t i = 0; i < nt; i++) {
            double v = 0.0;
            for (int s = 0; s < GALAXY_SEGMENTS; s++) v += ws[(size_t)s * nt + i];
            grad[i] = v;
        }
    }
    galaxy_grad_finish(p, theta, grad);
}
