/*
 * kernels/cnn/cnn_simd_conv.c: the vector convolutions of simd.c and omp.c (cnn_simd.h, cnn_simd_bwd.h) as
 * functions of a range of images in one work area, for cnn_fast.h. A file of their own, so that they are
 * compiled with 8-float vectors at AVX-512 too (cnn_simd.h's first comment says why) while the variants'
 * dense layers, in simd.c and omp.c, keep the full width.
 */
/* GCC: at AVX-512 this file is compiled for AVX2. Its 8-float kernels gain nothing from AVX-512VL's 32
 * registers and EVEX forms, and GCC's allocation of them adds register moves and selects through mask
 * registers: llvm-mca's Sapphire Rapids model put conv1's fused forward loop at 51 cycles per kFLOP
 * against AVX2's 46, the unfused forward's 68 against 66 (tests/kernels/mca_compare.py). So the AVX-512
 * copy runs the AVX2 copy's instructions here. */
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("no-avx512f")
#endif
#include "cnn_simd_bwd.h" /* first: it sets the vector width (simd.h) */

#include "cnn_fast.h"

size_t cnn_simd_area_floats(const cnn_conv *c) { return cnns_area_floats(c); }

void cnn_simd_conv_forward_range(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                                 int b0, int b1, float *area)
{
    cnns_conv_forward_range(c, B, x, w, b, y, b0, b1, area);
}

void cnn_simd_conv_backward_range(const cnn_conv *c, int B, const float *x, const float *w, const float *y,
                                  float *dy, float *dx, int b0, int b1, float *area)
{
    cnns_conv_backward_range(c, B, x, w, y, dy, dx, b0, b1, area);
}

void cnn_simd_conv_pool_forward_range(const cnn_conv *c, const cnn_pool *pl, int B, const float *x, const float *w,
                                      const float *b, float *p, uint8_t *arg, int b0, int b1, float *area)
{
    cnns_conv_pool_forward_range(c, pl, B, x, w, b, p, arg, b0, b1, area);
}

void cnn_simd_pool_conv_backward_range(const cnn_conv *c, int B, const float *x, const float *w, const float *p,
                                       const uint8_t *arg, const float *dp, float *dx, int b0, int b1, float *area)
{
    cnns_pool_conv_backward_range(c, B, x, w, p, arg, dp, dx, b0, b1, area);
}

void cnn_simd_reduce(const cnn_conv *c, const float *areas, size_t stride, int nt, float *dw, float *db, size_t i0,
                     size_t i1)
{
    cnns_reduce(c, areas, stride, nt, dw, db, i0, i1);
}

int cnn_simd_conv_forms(const cnn_conv *c)
{
    return (cnns_conv1_channel_lanes(c) || cnns_conv2_channel_lanes(c) ? CNN_SIMD_FWD_CHANNELS : 0) |
           (cnns_conv1_window_lanes(c) ? CNN_SIMD_WGRAD_WINDOWS : 0) | (CNNS_DX_SCATTER ? CNN_SIMD_DX_SCATTER : 0);
}
