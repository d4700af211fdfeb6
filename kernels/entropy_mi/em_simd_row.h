/* Private to the vector entropy_mi variants (em_simd.c, em_omp.c, em_factorized.c,
 * em_factorized_omp.c): the exp pass of a row pair and the D x D sum of one row, in kernels/simd.h's
 * vectors (VF32_LANES floats: 16 with AVX-512, 8 with AVX2, 4 with SSE). The D x D sum runs on the
 * softmax's numerators e = exp(x - max) and is scaled by the normalisation once per row (em_row_simd):
 * the same terms (p_i q_j)^2 up to float rounding, one pass per row fewer; x's and y's exp passes run
 * interleaved. On a Zen 4 VM (three interleaved rounds each, `speedlab run entropy_mi
 * --sizes 16384 --variants naive,simd` at SPEEDLAB_ISA=v3 and v4) simd went 40.9 -> 40.4 ms
 * (numerators) -> 39.9-40.2 ms (interleaved) with AVX2, and 40.4 -> 39.9 -> 39.7-39.8 ms with AVX-512:
 * about 92 % of the 36.7 ms that a multiply and an FMA per term allow there (docs/isa-levels.md). */
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

/* The exp pass of a row pair: e = exp(x - max x) and f = exp(y - max y), stored zero-padded to a multiple
 * of EM_W (e and f hold at least that many) unless e is NULL, and their sums: s[0] = sum e_i, s[1] = sum
 * e_i^2, s[2] = sum f_j, s[3] = sum f_j^2. The softmax p = e / s[0] is never formed: sum p_i^2 = s[1] /
 * s[0]^2, and a sum over (p_i q_j)^2 is the same over (e_i f_j)^2 scaled once by 1 / (s[0]^2 s[2]^2),
 * which saves a normalising pass over each row. The two rows go through together, so one row's
 * dependent chain (max, then the sums) overlaps the other's (factorized: 3.2 -> 2.2 ms on a Zen 5 VM).
 * Always inlined, so a NULL e drops the stores and an unused sum its adds. */
static inline __attribute__((always_inline)) void em_exp_pair(const float *x, const float *y, long D,
                                                              float *e, float *f, float s[4])
{
    const long Dv = D / EM_W * EM_W;
    const float mx = em_row_max(x, D, Dv), my = em_row_max(y, D, Dv);
    vf32 a1 = {0}, a2 = {0}, b1 = {0}, b2 = {0};
    for (long i = 0; i < Dv; i += EM_W) {
        const vf32 u = vf32_exp_neg(vf32_load(x + i) - mx);
        const vf32 v = vf32_exp_neg(vf32_load(y + i) - my);
        if (e) {
            vf32_store(e + i, u);
            vf32_store(f + i, v);
        }
        a1 += u;
        a2 += u * u;
        b1 += v;
        b2 += v * v;
    }
    if (Dv < D) { /* the padded tail vector: the same steps */
        const vf32 u = em_tail_exp(x, D, Dv, mx), v = em_tail_exp(y, D, Dv, my);
        if (e) {
            vf32_store(e + Dv, u);
            vf32_store(f + Dv, v);
        }
        a1 += u;
        a2 += u * u;
        b1 += v;
        b2 += v * v;
    }
    s[0] = vf32_hsum(a1);
    s[1] = vf32_hsum(a2);
    s[2] = vf32_hsum(b1);
    s[3] = vf32_hsum(b2);
}

/* sum_i sum_j (e_i f_j)^2 over a row, vectorised over j with EM_IB rows of i in flight. */
static inline float em_pair_sum(const float *e, const float *f, long D)
{
    const long Dp = (D + EM_W - 1) / EM_W * EM_W;
    vf32 acc[EM_IB] = {{0}};
    long i = 0;
    for (; i + EM_IB <= D; i += EM_IB) {
        for (long j = 0; j < Dp; j += EM_W) {
            const vf32 fv = vf32_load(f + j);
            for (int k = 0; k < EM_IB; k++) {
                const vf32 t = e[i + k] * fv;
                acc[k] += t * t;
            }
        }
    }
    for (; i < D; i++) { /* the last D mod EM_IB rows of i, one at a time */
        for (long j = 0; j < Dp; j += EM_W) {
            const vf32 t = e[i] * vf32_load(f + j);
            acc[0] += t * t;
        }
    }
    vf32 s = acc[0];
    for (int k = 1; k < EM_IB; k++)
        s += acc[k];
    return vf32_hsum(s);
}

static inline void em_row_simd(const float *x, const float *y, long D, float *hr, float *mr)
{
    _Alignas(64) float e[EM_MAX_D + EM_W], f[EM_MAX_D + EM_W];
    float s[4];
    em_exp_pair(x, y, D, e, f, s);
    const float is = 1.0f / s[0], it = 1.0f / s[2];
    *hr = s[1] * is * is;
    *mr = em_pair_sum(e, f, D) * (is * is) * (it * it);
}

/* sum_i p_i^2 and sum_j q_j^2 of the softmaxes of x and y (factorized's row), nothing stored. */
static inline void em_sum_p2_pair(const float *x, const float *y, long D, float *hp, float *hq)
{
    float s[4];
    em_exp_pair(x, y, D, NULL, NULL, s);
    *hp = s[1] / (s[0] * s[0]);
    *hq = s[3] / (s[2] * s[2]);
}

#endif
