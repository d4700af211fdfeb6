/*
 * kernels/galaxy/canon.h: the one order of floating-point operations that the CPU variants of the
 * galaxy network written here (default, layout, simd, omp) all follow, so that they return the same
 * bits for the same weights, whatever their loop structure and thread count.
 *
 * Why: the CG training is chaotic. A last-bit difference in one gradient grows to a 1e-2 difference
 * of the final cost after 300 iterations (docs/study-galaxy.md measures it with --param perturb=1),
 * so variants that round differently cannot reach the same final cost; variants that round the same
 * way reach it exactly. blas (OpenBLAS's summation order) and cuda (the GPU's) cannot follow it.
 *
 * The order (for every shape; simd's vector fast path and galaxy_dot give the same sums):
 * - hidden pre-activation z = bias + dot, dot as galaxy_dot below: eight lane sums (input k into
 *   lane k % 8, one fma each, in increasing k), restarted at every GALAXY_KC inputs and added into the
 *   lane's total; then the eight lane totals added in lane order;
 * - exp and log through galaxy_exp_inplace / galaxy_log_inplace (by libmvec at the build's vector
 *   width, the last partial vector padded: every value takes the same path);
 * - the output layer, delta2 and the Theta2 gradient row by row with the fma helpers below;
 * - every sum over rows (cost, gradient) runs row by row, in increasing row order, within each of
 *   GALAXY_SEGMENTS segments of whole blocks, from zero; the segments' sums are then added in segment
 *   order (so the omp variant can give each thread whole segments and still add in the same order);
 * - galaxy_grad_finish and galaxy_cost_reg for the scaling and the regularisation.
 * The order is the same at every vector width (simd.c holds lane k % 8 in vector k % 8 / VF64_LANES), so
 * only libmvec's exp and log, whose 8-, 4- and 2-lane versions may round differently, and the lack of
 * an FMA instruction at x86-64-v2 can make a build for one level differ in bits from another (with
 * -Dmvec=disabled, v3 and v4 reach the same final cost, docs/isa-levels.md); within
 * one build every variant agrees. The scalar code says galaxy_fma() where it means one (below); simd.c's
 * vector `acc += a * b` becomes one only because the kernels are built with -ffp-contract=fast
 * (meson.build's kernel_base_args): without it the variants still agree to rounding, but not bit for bit (test_galaxy_kernels.c's same-bits checks fail).
 */
#ifndef SL_KERNELS_GALAXY_CANON_H
#define SL_KERNELS_GALAXY_CANON_H

#include <math.h>

#include "galaxy_kernels.h"

/* One fused multiply-add where the target has the instruction (x86-64-v3 and up): the vector code's
 * a * b + c contracts to it there (-ffp-contract=fast). Without it (x86-64-v2) the vector code rounds
 * the product and the sum apart, so the scalar code must too, or the variants would differ in bits. */
#ifdef __FP_FAST_FMA
#define galaxy_fma(a, b, c) fma((a), (b), (c))
#else
#define galaxy_fma(a, b, c) ((a) * (b) + (c))
#endif

#define GALAXY_FUSED_BLOCK 32 /* rows per block of the fused variants; segments are whole blocks */
#define GALAXY_KC 256         /* inputs per chunk of the hidden layer's sums */
#define GALAXY_SEGMENTS 8     /* row segments whose sums are added last, in order */

/* Rows [*r0, *r1) of segment s: blocks s * nblk / S to (s + 1) * nblk / S (empty when m is small). */
static inline void galaxy_segment_rows(long m, int s, long *r0, long *r1)
{
    long nblk = (m + GALAXY_FUSED_BLOCK - 1) / GALAXY_FUSED_BLOCK;
    long b0 = s * nblk / GALAXY_SEGMENTS, b1 = (s + 1) * nblk / GALAXY_SEGMENTS;
    *r0 = b0 * GALAXY_FUSED_BLOCK;
    *r1 = b1 * GALAXY_FUSED_BLOCK < m ? b1 * GALAXY_FUSED_BLOCK : m;
}
/* Whether row t is the last row of its segment (the sums fold there). */
static inline int galaxy_segment_ends(long m, long t)
{
    for (int s = 0; s < GALAXY_SEGMENTS; s++) {
        long r0, r1;
        galaxy_segment_rows(m, s, &r0, &r1);
        if (r1 > r0 && t == r1 - 1)
            return 1;
    }
    return 0;
}

/* T . x over n inputs in the canonical order (the simd forward's: lanes, chunks, then lanes added). */
static inline double galaxy_dot(const double *T, const double *x, int n)
{
    double lane[8] = {0};
    for (int k0 = 0; k0 < n; k0 += GALAXY_KC) {
        int kn = n - k0 < GALAXY_KC ? n - k0 : GALAXY_KC;
        double part[8] = {0};
        for (int k = 0; k < kn; k++)
            part[k % 8] = galaxy_fma(T[k0 + k], x[k0 + k], part[k % 8]);
        for (int l = 0; l < 8; l++)
            lane[l] += part[l];
    }
    double s = 0.0;
    for (int l = 0; l < 8; l++)
        s += lane[l];
    return s;
}

/* Output unit o's pre-activation from a2 (H hidden activations, no bias entry): T2 row o. */
static inline double galaxy_z3(const double *T2, int H, int o, const double *a2)
{
    const double *row = T2 + (size_t)o * (H + 1);
    double s = row[0];
    for (int h = 0; h < H; h++)
        s = galaxy_fma(row[h + 1], a2[h], s);
    return s;
}
/* delta2 of hidden unit h: (Theta2[:, h+1]' delta3) * a2 (1 - a2). */
static inline double galaxy_d2(const double *T2, int H, int K, int h, const double *d3, double a2h)
{
    double s = 0.0;
    for (int o = 0; o < K; o++)
        s = galaxy_fma(T2[(size_t)o * (H + 1) + h + 1], d3[o], s);
    return s * a2h * (1.0 - a2h);
}
/* G2 += delta3 [1 a2]' for one row. */
static inline void galaxy_g2_row(double *G2, int H, int K, const double *d3, const double *a2)
{
    for (int o = 0; o < K; o++) {
        double *g = G2 + (size_t)o * (H + 1);
        g[0] += d3[o];
        for (int h = 0; h < H; h++)
            g[h + 1] = galaxy_fma(d3[o], a2[h], g[h + 1]);
    }
}

/* v[i] = exp(v[i]), v[i] = log(v[i]), v[i] = 1 / (1 + exp(-v[i])) for i < n (canon.c). */
void galaxy_exp_inplace(double *v, int n);
void galaxy_log_inplace(double *v, int n);
void galaxy_sigmoid_inplace(double *v, int n);

/* grad = grad / m + regularisation (the end of every gradient call); the cost's regularisation term
 * (canon.c; shared by every variant, cuda included). */
void galaxy_grad_finish(const galaxy_problem *p, const double *theta, double *grad);
double galaxy_cost_reg(const galaxy_problem *p, const double *theta);

#endif
