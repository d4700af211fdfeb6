/*
 * kernels/galaxy/omp.c: the simd variant's blocks shared among OpenMP threads. Each thread sums its
 * blocks' gradient into its own slice of the workspace (no atomics, no false sharing on the 66 KB
 * Theta1 gradient); the slices are added at the end, a cost of threads x n_theta additions, shared
 * among the threads by index range (the same order of additions as a serial sum: slice 0, 1, ...).
 * Without OpenMP the pragmas are ignored and the code runs on one thread with the same result.
 */
#include "fused.h"

#include <string.h>

#include "kern_omp.h"

double galaxy_cost_omp(const galaxy_problem *p, const double *theta, double *ws, int threads)
{
    const long nblk = (p->m + GALAXY_FUSED_BLOCK - 1) / GALAXY_FUSED_BLOCK;
    const size_t sl = galaxy_fused_slice_doubles(p);
    double J = 0.0;
    if (threads < 1) threads = 1;
    #pragma omp parallel num_threads(threads)
    {
        double *Z = ws + (size_t)kern_tid() * sl;
        const double *T1p = galaxy_fused_pack(p, theta, Z);   /* each thread its own copy, in its L2 */
        #pragma omp for schedule(static) reduction(+:J)
        for (long b = 0; b < nblk; b++) {
            long t0 = b * GALAXY_FUSED_BLOCK;
            int nb = p->m - t0 < GALAXY_FUSED_BLOCK ? (int)(p->m - t0) : GALAXY_FUSED_BLOCK;
            galaxy_fused_forward(p, theta, T1p, t0, nb, Z);
            J += galaxy_fused_output(p, theta, t0, nb, Z, NULL, NULL);
        }
    }
    return J / (double)p->m + galaxy_fused_reg(p, theta);
}

void galaxy_grad_omp(const galaxy_problem *p, const double *theta, double *grad, double *ws, int threads)
{
    const long nblk = (p->m + GALAXY_FUSED_BLOCK - 1) / GALAXY_FUSED_BLOCK;
    const size_t sl = galaxy_fused_slice_doubles(p), nt = galaxy_n_theta(p), zn = (size_t)GALAXY_FUSED_BLOCK * p->n_hid;
    const size_t off2 = (size_t)p->n_hid * (p->n_in + 1);
    if (threads < 1) threads = 1;
    int used = 1;
    #pragma omp parallel num_threads(threads)
    {
        double *Z = ws + (size_t)kern_tid() * sl, *g = Z + zn;
        const double *T1p = galaxy_fused_pack(p, theta, Z);
        memset(g, 0, nt * sizeof *g);
        #pragma omp single
        used = kern_nthreads();
        #pragma omp for schedule(static)
        for (long b = 0; b < nblk; b++) {
            long t0 = b * GALAXY_FUSED_BLOCK;
            int nb = p->m - t0 < GALAXY_FUSED_BLOCK ? (int)(p->m - t0) : GALAXY_FUSED_BLOCK;
            galaxy_fused_forward(p, theta, T1p, t0, nb, Z);
            galaxy_fused_output(p, theta, t0, nb, Z, Z, g + off2);
            galaxy_fused_backward(p, t0, nb, Z, g);
        }
        /* (the for's barrier: every slice is complete) each thread adds one range of all slices, so
         * the sum is spread over the threads instead of one thread pulling every other's slice */
        #pragma omp for schedule(static)
        for (size_t i = 0; i < nt; i++) {
            double s = ws[zn + i];
            for (int th = 1; th < used; th++) s += ws[(size_t)th * sl + zn + i];
            grad[i] = s;
        }
    }
    galaxy_fused_finish(p, theta, grad);
}
