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

/* The variant kernels, declared by the build line that builds them: for each NAME of the two lists of
 * kernels/galaxy/meson.build, NAME.c defines galaxy_cost_NAME and galaxy_grad_NAME, and the generated
 * galaxy_variant_kernels.h has the line GALAXY_KERNEL(NAME) (galaxy_variant_kernels: one thread) or
 * GALAXY_THREADED_KERNEL(NAME) (galaxy_threaded_variant_kernels: `threads` last). What each does: its
 * file's first comment; default and layout use galaxy_ws_doubles() doubles of workspace, the fused
 * variants (simd, omp, blas: fused.h) galaxy_fused_ws_doubles(). blas is built, and listed, only with
 * BLAS. */
#define GALAXY_KERNEL(name)                                                                              \
    double galaxy_cost_##name(const galaxy_problem *p, const double *theta, double *ws);                 \
    void galaxy_grad_##name(const galaxy_problem *p, const double *theta, double *grad, double *ws);
#define GALAXY_THREADED_KERNEL(name)                                                                     \
    double galaxy_cost_##name(const galaxy_problem *p, const double *theta, double *ws, int threads);    \
    void galaxy_grad_##name(const galaxy_problem *p, const double *theta, double *grad, double *ws,       \
                            int threads);
#include "galaxy_variant_kernels.h" /* generated: build tree kernels/ */
#undef GALAXY_KERNEL
#undef GALAXY_THREADED_KERNEL

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

/* simd, omp and blas (fused passes over blocks of rows, their own workspace): fused.h. */

/* Predicted labels (argmax of the output layer) for all m rows. */
void galaxy_predict(const galaxy_problem *p, const double *theta, unsigned char *pred, double *ws);

#endif
