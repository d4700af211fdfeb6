/*
 * kernels/galaxy/galaxy_kernels.h: cost and gradient of Philip Mocz's galaxy network (1024-H-3, sigmoid
 * on both layers, bias units, regularised logistic cost), double precision, one function pair per variant.
 *
 * theta = [Theta1 (H x (N+1)) row-major, Theta2 (K x (H+1)) row-major], column 0 of each is the bias.
 * X is m x N row-major (pixels / 255), y holds labels 0..K-1; H <= 64 and K <= 16 (the sizes of the
 * kernels' per-row scratch arrays; the study refuses larger). Kernels do no I/O and no allocation:
 * the caller preallocates galaxy_ws_doubles() doubles (fused.h's variants: galaxy_fused_ws_doubles()).
 */
#ifndef SL_KERNELS_GALAXY_KERNELS_H
#define SL_KERNELS_GALAXY_KERNELS_H

#include <stddef.h>

typedef struct galaxy_problem {
    const double *X;        /* m x n_in */
    const unsigned char *y; /* m labels */
    long m;
    int n_in, n_hid, n_out;
    double lambda;
} galaxy_problem;

/* Number of parameters: H*(N+1) + K*(H+1). */
size_t galaxy_n_theta(const galaxy_problem *p);
/* Scratch doubles of default, layout and galaxy_predict (fused.h's variants size their own). */
size_t galaxy_ws_doubles(const galaxy_problem *p);

/* default: per example, as Mocz's loop (copies x into a bias-extended scratch vector a1). */
double galaxy_cost_default(const galaxy_problem *p, const double *theta, double *ws);
void galaxy_grad_default(const galaxy_problem *p, const double *theta, double *grad, double *ws);
/* The default gradient's statement groups for one example t, in order (the glue may time each):
 * forward (a1 copy, z2, a2, a3), error3 (one-hot, delta3, Delta2 += delta3 a2'), error2 (delta2),
 * accumulate (Delta1 += delta2 a1'; at a segment's last example the segment's sums go into grad).
 * The sums go into a segment sum in ws (canon.h); begin zeroes it and grad; canon.h's
 * galaxy_grad_finish then scales and regularises. */
void galaxy_default_begin(const galaxy_problem *p, double *grad, double *ws);
void galaxy_default_forward(const galaxy_problem *p, const double *theta, long t, double *ws);
void galaxy_default_error3(const galaxy_problem *p, long t, double *ws);
void galaxy_default_error2(const galaxy_problem *p, const double *theta, double *ws);
void galaxy_default_accumulate(const galaxy_problem *p, long t, double *grad, double *ws);

/* layout: matrix form over all examples (Z2 = X Theta1', one-hot by indexing), no per-example copies. */
double galaxy_cost_layout(const galaxy_problem *p, const double *theta, double *ws);
void galaxy_grad_layout(const galaxy_problem *p, const double *theta, double *grad, double *ws);

/* simd, omp and blas (fused passes over blocks of rows, their own workspace) are in fused.h. */

/* Predicted labels (argmax of the output layer) for all m rows. */
void galaxy_predict(const galaxy_problem *p, const double *theta, unsigned char *pred, double *ws);

#endif
