/*
 * kernels/galaxy/fused.h: the fused variants of the galaxy network (simd, omp, blas). Same problem,
 * same theta layout and same results as galaxy.h's default, but one pass over blocks of rows of X:
 * the forward pass of a block, its output layer and errors, and the Theta1 gradient update of the
 * block all run while the block (GALAXY_FUSED_BLOCK rows, 256 KiB) is still in L2, so X streams from
 * memory once per gradient call and once per cost call.
 *
 * Workspace: galaxy_fused_ws_doubles(p, threads) doubles, preallocated by the caller; `threads` must
 * not exceed the value the workspace was sized for (the omp variant keeps one gradient per thread).
 */
#ifndef SL_KERNELS_GALAXY_FUSED_H
#define SL_KERNELS_GALAXY_FUSED_H

#include "galaxy.h"

#define GALAXY_FUSED_BLOCK 32

size_t galaxy_fused_ws_doubles(const galaxy_problem *p, int threads);

/* simd: one thread, explicit 8-wide vectors (GCC/Clang vector extensions). */
double galaxy_cost_simd(const galaxy_problem *p, const double *theta, double *ws);
void galaxy_grad_simd(const galaxy_problem *p, const double *theta, double *grad, double *ws);

/* omp: the simd blocks shared among `threads` OpenMP threads, one private gradient each, summed at
 * the end (serial when built without OpenMP). */
double galaxy_cost_omp(const galaxy_problem *p, const double *theta, double *ws, int threads);
void galaxy_grad_omp(const galaxy_problem *p, const double *theta, double *grad, double *ws, int threads);

/* blas: the block's two matrix products by cblas_dgemm (only built when BLAS is found). */
double galaxy_cost_blas(const galaxy_problem *p, const double *theta, double *ws);
void galaxy_grad_blas(const galaxy_problem *p, const double *theta, double *grad, double *ws);

/* Building blocks shared by the three files. Rows [t0, t0 + nb) of X; Z is nb x H. */
void galaxy_fused_forward(const galaxy_problem *p, const double *theta, long t0, int nb, double *Z);
/* From Z: the block's cost sum (unscaled) and, when G2 is not NULL, G2 += delta3 [1 a2] and
 * D (nb x H) = delta2 (Z may be D: it is overwritten row by row after use). */
double galaxy_fused_output(const galaxy_problem *p, const double *theta, long t0, int nb,
                           const double *Z, double *D, double *G2);
/* G1 += D' [1 X_block] for the block. */
void galaxy_fused_backward(const galaxy_problem *p, long t0, int nb, const double *D, double *G1);
/* grad = grad / m + regularisation, cost = J / m + regularisation (shared ends of every call). */
void galaxy_fused_finish(const galaxy_problem *p, const double *theta, double *grad);
double galaxy_fused_reg(const galaxy_problem *p, const double *theta);

#endif
