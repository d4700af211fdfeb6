/*
 * kernels/cnn/blas.c: placeholder, replaced by the cnn-fast branch: each of the four functions calls
 * naive's, so that the variant builds, runs and passes its checks until the fast version is merged.
 */
#include "cnn_kernels.h"

void cnn_conv_forward_blas(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                         float *scratch, int threads)
{
    cnn_conv_forward_naive(c, B, x, w, b, y, scratch, threads);
}

void cnn_conv_backward_blas(const cnn_conv *c, int B, const float *x, const float *w, const float *y, float *dy,
                          float *dw, float *db, float *dx, float *scratch, int threads)
{
    cnn_conv_backward_naive(c, B, x, w, y, dy, dw, db, dx, scratch, threads);
}

void cnn_dense_forward_blas(const cnn_dense *l, int B, const float *x, const float *w, const float *b, float *y,
                          int relu, float *scratch, int threads)
{
    cnn_dense_forward_naive(l, B, x, w, b, y, relu, scratch, threads);
}

void cnn_dense_backward_blas(const cnn_dense *l, int B, const float *x, const float *w, const float *y,
                           float *dy, int relu, float *dw, float *db, float *dx, float *scratch, int threads)
{
    cnn_dense_backward_naive(l, B, x, w, y, dy, relu, dw, db, dx, scratch, threads);
}
