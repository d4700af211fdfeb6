/*
 * kernels/cnn/simd.c: explicit vectors on one thread. The convolutions (cnn_simd_conv.c: cnn_simd.h's
 * and cnn_simd_bwd.h's, with 8-float vectors at AVX2 and AVX-512) are direct ones: forward with the
 * output channels as the lanes for the study's conv1 and conv2 shapes (cnn_conv1_simd.h,
 * cnn_conv2_simd.h) and over wide positions otherwise; backward data by a scatter of dz by tap (or, at
 * other widths, the full correlation on the padded dz), the weight gradient with pooling windows as the
 * lanes for conv1's shape and channels or positions as the lanes otherwise. The dense layers are mlp's
 * register-blocked products at the full width (cnn_dense_simd.h). What is fused: bias and ReLU into the
 * convolution's and the dense product's registers; each convolution with the 2x2 max pool after it
 * (cnn_conv_pool_forward_simd, cnn_pool_conv_backward_simd: the convolution's output is pooled from the
 * work area, and dz built from the pooled gradient); in the unfused backward the ReLU mask, the bias
 * gradient (and for conv2 the transpose of dz) into one pass per image. `scratch` holds one work area
 * (cnn_fast.h); `threads` is ignored.
 */
#include "cnn_dense_simd.h"
#include "cnn_fast.h"
#include "cnn_kernels.h"

#include <string.h>

void cnn_conv_forward_simd(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                           float *scratch, int threads)
{
    (void)threads;
    cnn_simd_conv_forward_range(c, B, x, w, b, y, 0, B, scratch);
}

void cnn_conv_backward_simd(const cnn_conv *c, int B, const float *x, const float *w, const float *y,
                            float *dy, float *dw, float *db, float *dx, float *scratch, int threads)
{
    (void)threads;
    size_t n = (size_t)c->cout * c->cin * c->k * c->k + (size_t)c->cout;
    cnn_simd_conv_backward_range(c, B, x, w, y, dy, dx, 0, B, scratch);
    cnn_simd_reduce(c, scratch, 0, 1, dw, db, 0, n); /* one partial: dW^T back to OIHW */
}

void cnn_dense_forward_simd(const cnn_dense *l, int B, const float *x, const float *w, const float *b, float *y,
                            int relu, float *scratch, int threads)
{
    (void)scratch, (void)threads;
    cnns_dense_forward_rows(l, x, w, b, y, relu, 0, B);
}

void cnn_dense_backward_simd(const cnn_dense *l, int B, const float *x, const float *w, const float *y,
                             float *dy, int relu, float *dw, float *db, float *dx, float *scratch, int threads)
{
    (void)scratch, (void)threads;
    cnns_dense_delta_rows(l, w, y, dy, relu, dx, 0, B);
    if (B <= 0) /* an empty sum: the product below would not write dw */
        memset(dw, 0, (size_t)l->nin * l->nout * sizeof(float));
    else
        mlps_wgrad_rows(x, dy, dw, B, l->nin, l->nout, 0, l->nin);
    mlps_colsum(dy, db, B, l->nout, 0, l->nout);
}

void cnn_conv_pool_forward_simd(const cnn_conv *c, const cnn_pool *pl, int B, const float *x, const float *w,
                                const float *b, float *p, uint8_t *arg, float *scratch, int threads)
{
    (void)threads;
    cnn_simd_conv_pool_forward_range(c, pl, B, x, w, b, p, arg, 0, B, scratch);
}

void cnn_pool_conv_backward_simd(const cnn_conv *c, const cnn_pool *pl, int B, const float *x, const float *w,
                                 const float *p, const uint8_t *arg, const float *dp, float *dw, float *db,
                                 float *dx, float *scratch, int threads)
{
    (void)pl, (void)threads;
    size_t n = (size_t)c->cout * c->cin * c->k * c->k + (size_t)c->cout;
    cnn_simd_pool_conv_backward_range(c, B, x, w, p, arg, dp, dx, 0, B, scratch);
    cnn_simd_reduce(c, scratch, 0, 1, dw, db, 0, n);
}
