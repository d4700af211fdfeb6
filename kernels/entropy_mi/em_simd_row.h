/* Private to the vector entropy_mi variants (em_simd.c, em_omp.c, em_factorized.c): the vector softmax
 * and one row of the D x D sum, in kernels/simd.h's vectors (VF32_LANES floats: 16 with AVX-512, 8 with
 * AVX2, 4 with SSE). */
#ifndef KERNELS_ENTROPY_MI_SIMD_ROW_H
#define KERNELS_ENTROPY_MI_SIMD_ROW_H

#include "entropy_mi_kernels.h"
#include "simd.h"

#define EM_W VF32_LANES
/* Rows of i per pass over q: eight independent accumulators cover the FMA latency of two pipes at
 * every width, and 8 + q + the products' temporaries fit in 16 registers (AVX2) as in 32. */
#define EM_IB 8

/* e = exp(x - m) of the last D - Dv values of a row (Dv = D rounded down to EM_W): the arguments padded
 * with a stand-in for -inf, then the padding lanes zeroed, so they add nothing to any sum. */
static inline vf32 em_tail_exp(const float *x, long D, long Dv, float m)
{
    float tail[EM_W];
    for (int k = 0; k < EM_W; k++)
        tail[k] = Dv + k < D ? x[Dv + k] - m : -100.0f;
    vf32 e = vf32_exp_neg(vf32_load(tail));
    for (long k = D - Dv; k < EM_W; k++)
        e[k] = 0.0f;
    return e;
}

/* The largest of x[0..D), two vector chains (a row's passes are short: their latency counts). */
static inline float em_row_max(const float *x, long D, long Dv)
{
    vf32 m0 = vf32_splat(x[0]), m1 = m0;
    long i = 0;
    for (; i + 2 * EM_W <= Dv; i += 2 * EM_W) {
        m0 = vf32_max(m0, vf32_load(x + i));
        m1 = vf32_max(m1, vf32_load(x + i + EM_W));
    }
    if (i < Dv)
        m0 = vf32_max(m0, vf32_load(x + i));
    float m = vf32_hmax(vf32_max(m0, m1));
    for (i = Dv; i < D; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

/* Stable softmax of one row into p, zero-padded to a multiple of EM_W (p holds at least that many). */
static inline void em_softmax_vec(const float *x, long D, float *p)
{
    const long Dv = D / EM_W * EM_W;
    const float m = em_row_max(x, D, Dv);
    vf32 vs = {0};
    for (long i = 0; i < Dv; i += EM_W) {
        vf32 e = vf32_exp_neg(vf32_load(x + i) - m);
        vf32_store(p + i, e);
        vs += e;
    }
    if (Dv < D) {
        const vf32 e = em_tail_exp(x, D, Dv, m);
        vf32_store(p + Dv, e);
        vs += e;
    }
    const float inv = 1.0f / vf32_hsum(vs);
    const long Dp = (D + EM_W - 1) / EM_W * EM_W;
    for (long i = 0; i < Dp; i += EM_W)
        vf32_store(p + i, vf32_load(p + i) * inv);
}

static inline void em_row_simd(const float *x, const float *y, long D, float *hr, float *mr)
{
    _Alignas(64) float p[EM_MAX_D + EM_W], q[EM_MAX_D + EM_W];
    em_softmax_vec(x, D, p);
    em_softmax_vec(y, D, q);
    const long Dp = (D + EM_W - 1) / EM_W * EM_W;
    vf32 vh = {0};
    for (long i = 0; i < Dp; i += EM_W) {
        vf32 v = vf32_load(p + i);
        vh += v * v;
    }
    vf32 acc[EM_IB] = {{0}};
    long i = 0;
    for (; i + EM_IB <= D; i += EM_IB) {
        for (long j = 0; j < Dp; j += EM_W) {
            const vf32 qv = vf32_load(q + j);
            for (int k = 0; k < EM_IB; k++) {
                const vf32 t = p[i + k] * qv;
                acc[k] += t * t;
            }
        }
    }
    for (; i < D; i++) { /* the last D mod EM_IB rows of i, one at a time */
        for (long j = 0; j < Dp; j += EM_W) {
            const vf32 t = p[i] * vf32_load(q + j);
            acc[0] += t * t;
        }
    }
    vf32 s = acc[0];
    for (int k = 1; k < EM_IB; k++)
        s += acc[k];
    *hr = vf32_hsum(vh);
    *mr = vf32_hsum(s);
}

#endif
