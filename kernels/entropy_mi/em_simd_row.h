/* Private to em_simd.c and em_omp.c: one row of entropy_mi, vectorised (see em_simd.c). */
#ifndef KERNELS_ENTROPY_MI_SIMD_ROW_H
#define KERNELS_ENTROPY_MI_SIMD_ROW_H

#include "entropy_mi.h"
#include "em_vec.h"

#define EM_IB 8 /* rows of i per pass over q */

static inline void em_row_simd(const float *x, const float *y, long D, float *hr, float *mr)
{
    _Alignas(64) float p[EM_MAX_D + EM_W], q[EM_MAX_D + EM_W];
    em_softmax_vec(x, D, p);
    em_softmax_vec(y, D, q);
    const long Dp = (D + EM_W - 1) / EM_W * EM_W;
    em_v vh = {0};
    for (long i = 0; i < Dp; i += EM_W) {
        em_v v = em_load(p + i);
        vh += v * v;
    }
    em_v acc[EM_IB] = {{0}};
    long i = 0;
    for (; i + EM_IB <= D; i += EM_IB) {
        for (long j = 0; j < Dp; j += EM_W) {
            const em_v qv = em_load(q + j);
            for (int k = 0; k < EM_IB; k++) {
                const em_v t = p[i + k] * qv;
                acc[k] += t * t;
            }
        }
    }
    for (; i < D; i++) { /* the last D mod 8 rows of i, one at a time */
        for (long j = 0; j < Dp; j += EM_W) {
            const em_v t = p[i] * em_load(q + j);
            acc[0] += t * t;
        }
    }
    em_v s = acc[0];
    for (int k = 1; k < EM_IB; k++)
        s += acc[k];
    *hr = em_hsum(vh);
    *mr = em_hsum(s);
}

#endif
