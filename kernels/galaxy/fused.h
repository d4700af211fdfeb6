/*
 * kernels/galaxy/fused.h: the fused variants of the galaxy network (simd, omp, blas). Same problem,
 * same theta layout as galaxy_kernels.h's default, but one pass over blocks of rows of X: the forward pass of
 * a block, its output layer and errors, and the Theta1 gradient update of the block all run while the
 * block (GALAXY_FUSED_BLOCK rows, 256 KiB of pixels) is still in L2, so X streams from memory once per gradient
 * call and once per cost call. simd and omp follow canon.h's order and return default's bits exactly;
 * blas agrees to rounding (OpenBLAS sums in its own order).
 *
 * Workspace: galaxy_fused_ws_doubles(p, threads) doubles, preallocated by the caller; `threads` must
 * not exceed the value the workspace was sized for. It holds GALAXY_SEGMENTS segment gradients
 * (galaxy_fused_seg: n_theta each, placed away from X's page offsets), then one slice per thread
 * (galaxy_fused_slice: Z, GALAXY_FUSED_BLOCK x H, and Theta1's weights packed for the forward); simd and
 * blas use slice 0.
 */
#ifndef SL_KERNELS_GALAXY_FUSED_H
#define SL_KERNELS_GALAXY_FUSED_H

#include "canon.h"
#include "galaxy_kernels.h"

size_t galaxy_fused_ws_doubles(const galaxy_problem *p, int threads);
size_t galaxy_fused_slice_doubles(const galaxy_problem *p);
double *galaxy_fused_slice(const galaxy_problem *p, double *ws, int thread);
/* Segment s's gradient sum (n_theta doubles) in the workspace. */
double *galaxy_fused_seg(const galaxy_problem *p, double *ws, int s);

/* The variants' cost and gradient (galaxy_cost_NAME, galaxy_grad_NAME) are declared in galaxy_kernels.h
 * from kernels/galaxy/meson.build's lists. simd: one thread, explicit vectors (kernels/simd.h: as wide
 * as the target). omp: the segments shared among `threads` OpenMP threads (whole segments each, so at
 * most GALAXY_SEGMENTS threads work), their sums added in segment order: the same bits as simd for any
 * thread count (serial when built without OpenMP). blas: the block's two matrix products by cblas_dgemm
 * (only built when BLAS is found), on `threads` OpenBLAS threads. */

/* omp's pass (omp.c), also used whole by the valgrad row: the cost at theta and, when grad is not NULL,
 * the gradient into grad, from one read of X; the cost is the same bits as galaxy_cost_omp's. */
double galaxy_cost_grad_omp(const galaxy_problem *p, const double *theta, double *grad, double *ws,
                            int threads);

/* Building blocks shared by the three files. Rows [t0, t0 + nb) of X; Z is nb x H. */
/* Theta1's weights (no bias) copied into the slice in the order the forward reads them (per 8 hidden
 * units and chunk of inputs, 8 rows contiguous and 64-byte aligned): once per call, not per block.
 * Returns the packed copy, or NULL for a shape without the fast path (H or N not a multiple of 8). */
const double *galaxy_fused_pack(const galaxy_problem *p, const double *theta, double *slice);
/* Z = [1 X_block] Theta1' from the packed copy T1p (NULL: reads theta, the slower general path). */
void galaxy_fused_forward(const galaxy_problem *p, const double *theta, const double *T1p, long t0,
                          int nb, double *Z);
/* From Z: *J -= the block's cost terms (row by row, unscaled) and, when G2 is not NULL,
 * G2 += delta3 [1 a2] and D (nb x H) = delta2 (D may be Z). */
void galaxy_fused_output(const galaxy_problem *p, const double *theta, long t0, int nb, const double *Z,
                         double *D, double *G2, double *J);
/* G1 += D' [1 X_block] for the block (and the next block's rows prefetched into L2). */
void galaxy_fused_backward(const galaxy_problem *p, long t0, int nb, const double *D, double *G1);
/* canon.h's segment s, block by block: forward, output and, when G is not NULL, its unscaled
 * gradient added into G (Theta1's part then Theta2's, theta's layout). Returns the segment's cost sum. */
double galaxy_fused_segment(const galaxy_problem *p, const double *theta, const double *T1p, int s,
                            double *Z, double *G);

#endif
