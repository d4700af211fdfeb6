/*
 * kernels/cnn/cnn_dense_simd.h: simd's and omp's dense layers, mlp's register-blocked products
 * (kernels/mlp/mlp_simd.h) at the full vector width: same shapes (a dense layer is B x nin times
 * nin x nout, column bias, fused ReLU). Internal to kernels/cnn; static inline.
 */
#ifndef SL_KERNELS_CNN_DENSE_SIMD_H
#define SL_KERNELS_CNN_DENSE_SIMD_H

#include "cnn_kernels.h"
#include "mlp/mlp_simd.h"

#include <stddef.h>

/* Rows r0..r1-1 of y = act(x w + b). */
static inline void cnns_dense_forward_rows(const cnn_dense *l, const float *x, const float *w, const float *b,
                                           float *y, int relu, int r0, int r1)
{
    mlps_op o = {.A = x, .ars = (size_t)l->nin, .aps = 1, .B = w, .bps = (size_t)l->nout, .bcs = 1, .C = y,
                 .ldc = (size_t)l->nout, .n = l->nout, .k = l->nin, .bias = b, .relu = relu};
    mlps_gemm(&o, r0, r1);
}

/* Rows r0..r1-1: dy = dy * (y > 0) when relu, then dx = dz w^T (no mask: the layer below applies its own). */
static inline void cnns_dense_delta_rows(const cnn_dense *l, const float *w, const float *y, float *dy,
                                         int relu, float *dx, int r0, int r1)
{
    if (relu)
        for (size_t i = (size_t)r0 * l->nout; i < (size_t)r1 * l->nout; i++)
            dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    if (!dx)
        return;
    mlps_op o = {.A = dy, .ars = (size_t)l->nout, .aps = 1, .B = w, .bps = 1, .bcs = (size_t)l->nout, .C = dx,
                 .ldc = (size_t)l->nin, .n = l->nin, .k = l->nout};
    mlps_gemm(&o, r0, r1);
}

#endif
