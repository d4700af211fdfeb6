/*
 * kernels/galaxy/omp.c: the simd variant's blocks shared among OpenMP threads by canon.h's segments:
 * each thread takes whole segments (schedule static: contiguous ones, so the next block it prefetches
 * is its own), sums each into the segment's own gradient in the workspace, and the segments are added
 * in segment order at the end, that sum shared among the threads by index range. The result is
 * simd's, bit for bit, for any thread count; at most GALAXY_SEGMENTS threads have work.
 * One pass gives the cost and, when asked, the gradient (galaxy_cost_grad_omp): the cost's terms come
 * out of the forward pass the gradient needs anyway, summed in the same order as a cost-only pass, so
 * the cost is the same bits either way.
 * Without OpenMP the pragmas are ignored and the code runs on one thread with the same result.
 */
#include "fused.h"

#include <string.h>

#include "kern_omp.h"

double galaxy_cost_grad_omp(const galaxy_problem *p, const double *theta, double *grad, double *ws, int threads)
{
    const size_t nt = galaxy_n_theta(p);
    double Jseg[GALAXY_SEGMENTS], *Gs[GALAXY_SEGMENTS];
    for (int s = 0; s < GALAXY_SEGMENTS; s++) Gs[s] = galaxy_fused_seg(p, ws, s);
    if (threads < 1) threads = 1;
    #pragma omp parallel num_threads(threads)
    {
        double *Z = galaxy_fused_slice(p, ws, kern_tid());
        const double *T1p = galaxy_fused_pack(p, theta, Z);   /* each thread its own copy, in its L2 */
        #pragma omp for schedule(static)
        for (int s = 0; s < GALAXY_SEGMENTS; s++) {
            double *G = grad ? Gs[s] : NULL;  /* segment s's own sum */
            if (G) memset(G, 0, nt * sizeof *G);
            Jseg[s] = galaxy_fused_segment(p, theta, T1p, s, Z, G);
        }
        /* (the for's barrier: every segment is complete) each thread adds one range of all the
         * segments, in segment order, so the sum is spread over the threads */
        if (grad) {
            #pragma omp for schedule(static)
            for (size_t i = 0; i < nt; i++) {
                double v = 0.0;
                for (int s = 0; s < GALAXY_SEGMENTS; s++) v += Gs[s][i];
                grad[i] = v;
            }
        }
    }
    if (grad) galaxy_grad_finish(p, theta, grad);
    double J = 0.0;
    for (int s = 0; s < GALAXY_SEGMENTS; s++) J += Jseg[s];   /* in segment order, as simd */
    return J / (double)p->m + galaxy_cost_reg(p, theta);
}

double galaxy_cost_omp(const galaxy_problem *p, const double *theta, double *ws, int threads)
{
    return galaxy_cost_grad_omp(p, theta, NULL, ws, threads);
}

void galaxy_grad_omp(const galaxy_problem *p, const double *theta, double *grad, double *ws, int threads)
{
    galaxy_cost_grad_omp(p, theta, grad, ws, threads);
}
