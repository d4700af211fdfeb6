/*
 * kernels/cnn/simd.c: explicit vectors on one thread (16 floats with AVX-512, 8 with AVX2). The
 * convolutions are cnn_simd.h's direct ones over wide positions (forward; backward data on the padded
 * dz, or at AVX2 a scatter of dz by tap) and cnn_simd_bwd.h's weight gradient; at AVX2 conv1's shape has its own kernels
 * (cnn_conv1_simd.h: the output channels as the lanes forward, pooling windows as the lanes for the
 * weight gradient), and so has conv2's forward (cnn_conv2_simd.h: the output channels as the lanes);
 * the dense layers are mlp's register-blocked products. What is fused: bias and
 * ReLU into the convolution's and the dense product's registers; each convolution with the 2x2 max pool
 * after it (cnn_conv_pool_forward_simd, cnn_pool_conv_backward_simd: the convolution's output is pooled
 * from the work area, and dz built from the pooled gradient); in the unfused backward the ReLU mask, the
 * bias gradient (and for conv2 the transpose of dz) into one pass per image. `scratch` holds one work area
 * (cnn_fast.h); `threads` is ignored.
 */
#include "cnn_fast.h"
#include "cnn_kernels.h"
#include "cnn_simd_bwd.h"

size_t cnn_simd_area_floats(const cnn_conv *c) { return cnns_area_floats(c); }

void cnn_conv_forward_simd(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                           float *scratch, int threads)
{
    (void)threads;
    cnns_conv_forward_range(c, B, x, w, b, y, 0, B, scratch);
}

void cnn_conv_backward_simd(const cnn_conv *c, int B, const float *x, const float *w, const float *y,
                            float *dy, float *dw, float *db, float *dx, float *scratch, int threads)
{
    (void)threads;
    size_t n = (size_t)c->cout * c->cin * c->k * c->k + (size_t)c->cout;
    cnns_conv_backward_range(c, B, x, w, y, dy, dx, 0, B, scratch);
    cnns_reduce(c, scratch, 0, 1, dw, db, 0, n); /* one partial: dW^T back to OIHW */
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
    cnns_conv_pool_forward_range(c, pl, B, x, w, b, p, arg, 0, B, scratch);
}

void cnn_pool_conv_backward_simd(const cnn_conv *c, const cnn_pool *pl, int B, const float *x, const float *w,
                                 const float *p, const uint8_t *arg, const float *dp, float *dw, float *db,
                                 float *dx, float *scratch, int threads)
{
    (void)pl, (void)threads;
    size_t n = (size_t)c->cout * c->cin * c->k * c->k + (size_t)c->cout;
    cnns_pool_conv_backward_range(c, B, x, w, p, arg, dp, dx, 0, B, scratch);
    cnns_reduce(c, scratch, 0, 1, dw, db, 0, n);
}
