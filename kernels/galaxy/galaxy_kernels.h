/*
 * kernels/galaxy/galaxy_kernels.h: cost and gradient of Philip Mocz's galaxy network (1024-H-3, sigmoid
 * on both layers, bias units, regularised logistic cost), double precision, one function pair per variant.
 *
 * theta = [Theta1 (H x (N+1)) row-major, Theta2 (K x (H+1)) row-major], column 0 of each is the bias.
 * X holds m rows of N pixels / 255, row t at X + t * galaxy_ldx(p); y holds labels 0..K-1; H <= 64 and
 * K <= 16 (the sizes of the kernels' per-row scratch arrays; the study refuses larger). Kernels do no
 * I/O and no allocation: the caller preallocates galaxy_ws_doubles() doubles (fused.h's variants:
 * galaxy_fused_ws_doubles()).
 */
#ifndef SL_KERNELS_GALAXY_KERNELS_H
#define SL_KERNELS_GALAXY_KERNELS_H

#include <stddef.h>

typedef struct galaxy_problem {
    const double *X;        /* m rows of n_in, ldx apart */
    const unsigned char *y; /* m labels */
    long m;
    int n_in, n_hid, n_out;
    double lambda;
    long ldx;               /* X's row stride in doubles: n_in (0 says the same) or more, padded */
} galaxy_problem;

/* X's row stride. A caller that can should pad rows to galaxy_padded_ldx(n_in) (the study's loader
 * does: experiments/data/galaxy_csv.h): with 1024 pixels a row is exactly 8 KiB, so the same column of
 * every row falls in the same L1 set (AMD's 8- and 12-way L1s), and the Theta1 gradient, which walks
 * down 32 rows a few columns at a time, misses L1 on every pass over them. One 64-byte line of padding
 * per row moves each row to the next set: on a Zen 4 VM the AVX2 gradient call 13 % faster, the AVX-512
 * one (a single pass over the rows) unchanged (`galaxy_parts 2700 1024` against `... 1032`,
 * docs/study-galaxy.md). The results do not change: nothing reads the pad. */
static inline size_t galaxy_ldx(const galaxy_problem *p)
{
    return p->ldx > p->n_in ? (size_t)p->ldx : (size_t)p->n_in;
}
/* n_in rounded up to whole 64-byte lines, plus one line (rows stay 64-byte aligned when X is). */
static inline long galaxy_padded_ldx(int n_in)
{
    return ((long)n_in + 7) / 8 * 8 + 8;
}

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
