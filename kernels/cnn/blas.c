/*
 * kernels/cnn/blas.c: the GEMM-shaped parts by cblas_sgemm (OpenBLAS), the rest in plain loops around
 * them. A convolution is im2col + one product per image, the textbook lowering: col (cin k k x ho wo)
 * holds each output position's input patch as a column, so that
 *   forward          y_n  = W col_n            (cout x K) (K x P), bias written first and added with
 *                                               beta = 1, ReLU after;
 *   weight gradient  dW  += dz_n col_n^T        (cout x P) (P x K), beta = 1 after the first image;
 *   data gradient    dcol = W^T dz_n            (K x cout) (cout x P), then col2im adds each column
 *                                               back onto the input positions it came from;
 * with K = cin k k, P = ho wo (72 x 121 for conv2). One image per call keeps y and dx in the network's
 * NCHW layout with no permutation pass; the price is small products (16 x 121 x 72 for conv2), which
 * OpenBLAS runs on one thread whatever its count. The dense layers are one product each, as mlp's blas.
 * `threads` becomes OpenBLAS's thread count (kern_blas.h). Scratch: col and dcol of one image and a
 * vector of P ones, 2 K P + P floats (each rounded up to 16; cnn_scratch_floats holds B K P of the
 * larger layer plus a per-thread part larger than K P + P: test_cnn_kernels checks it).
 */
#include "cnn_kernels.h"
#include "kern_blas.h"

#include <cblas.h>
#include <string.h>

/* col (K x P) of one image x (cin x h x w): row t = (ci, ky, kx), column p = (oy, ox). */
static void im2col(const cnn_conv *c, const float *x, float *col)
{
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    for (int ci = 0; ci < c->cin; ci++)
        for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++)
                for (int oy = 0; oy < ho; oy++, col += wo)
                    memcpy(col, x + ((size_t)ci * c->h + oy + ky) * c->w + kx, (size_t)wo * sizeof(float));
}

/* dx (cin x h x w) = the sum of dcol's entries over the positions each came from. */
static void col2im(const cnn_conv *c, const float *dcol, float *dx)
{
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    memset(dx, 0, (size_t)c->cin * c->h * c->w * sizeof(float));
    for (int ci = 0; ci < c->cin; ci++)
        for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++)
                for (int oy = 0; oy < ho; oy++, dcol += wo) {
                    float *d = dx + ((size_t)ci * c->h + oy + ky) * c->w + kx;
                    for (int ox = 0; ox < wo; ox++)
                        d[ox] += dcol[ox];
                }
}

void cnn_conv_forward_blas(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                           float *scratch, int threads)
{
    kern_blas_threads(threads);
    const int K = c->cin * c->k * c->k, P = cnn_conv_ho(c) * cnn_conv_wo(c);
    const size_t in = (size_t)c->cin * c->h * c->w, out = (size_t)c->cout * P;
    for (int n = 0; n < B; n++) {
        float *yn = y + (size_t)n * out;
        im2col(c, x + (size_t)n * in, scratch);
        for (int co = 0; co < c->cout; co++)
            for (int p = 0; p < P; p++)
                yn[(size_t)co * P + p] = b[co];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->cout, P, K, 1.0f, w, K, scratch, P, 1.0f, yn,
                    P);
        for (size_t i = 0; i < out; i++)
            yn[i] = yn[i] > 0.0f ? yn[i] : 0.0f;
    }
}

void cnn_conv_backward_blas(const cnn_conv *c, int B, const float *x, const float *w, const float *y,
                            float *dy, float *dw, float *db, float *dx, float *scratch, int threads)
{
    kern_blas_threads(threads);
    const int K = c->cin * c->k * c->k, P = cnn_conv_ho(c) * cnn_conv_wo(c);
    const size_t in = (size_t)c->cin * c->h * c->w, out = (size_t)c->cout * P;
    const size_t kp = ((size_t)K * P + 15) / 16 * 16;
    float *col = scratch, *dcol = scratch + kp, *ones = dcol + kp;
    for (int p = 0; p < P; p++)
        ones[p] = 1.0f;
    memset(dw, 0, (size_t)c->cout * K * sizeof(float)); /* an empty batch: every sum is 0 */
    memset(db, 0, (size_t)c->cout * sizeof(float));
    for (int n = 0; n < B; n++) {
        float *dz = dy + (size_t)n * out;
        const float *yn = y + (size_t)n * out;
        for (size_t i = 0; i < out; i++) /* through the ReLU */
            dz[i] = yn[i] > 0.0f ? dz[i] : 0.0f;
        /* db += dz 1: a loop adding into db[co] is one dependent chain of 5408 adds per conv1 image
         * (about 3.5 ms per batch), which GCC may not reorder */
        cblas_sgemv(CblasRowMajor, CblasNoTrans, c->cout, P, 1.0f, dz, P, ones, 1, 1.0f, db, 1);
        im2col(c, x + (size_t)n * in, col);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, c->cout, K, P, 1.0f, dz, P, col, P, 1.0f, dw, K);
        if (dx) {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, P, c->cout, 1.0f, w, K, dz, P, 0.0f, dcol,
                        P);
            col2im(c, dcol, dx + (size_t)n * in);
        }
    }
}

void cnn_dense_forward_blas(const cnn_dense *l, int B, const float *x, const float *w, const float *b, float *y,
                            int relu, float *scratch, int threads)
{
    (void)scratch;
    kern_blas_threads(threads);
    if (B <= 0)
        return;
    for (int n = 0; n < B; n++)
        memcpy(y + (size_t)n * l->nout, b, (size_t)l->nout * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, l->nout, l->nin, 1.0f, x, l->nin, w, l->nout, 1.0f,
                y, l->nout);
    if (relu)
        for (size_t i = 0; i < (size_t)B * l->nout; i++)
            y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

void cnn_dense_backward_blas(const cnn_dense *l, int B, const float *x, const float *w, const float *y,
                             float *dy, int relu, float *dw, float *db, float *dx, float *scratch, int threads)
{
    (void)scratch;
    kern_blas_threads(threads);
    const size_t nout = (size_t)B * l->nout;
    if (relu)
        for (size_t i = 0; i < nout; i++)
            dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    memset(db, 0, (size_t)l->nout * sizeof(float));
    for (int n = 0; n < B; n++)
        for (int j = 0; j < l->nout; j++)
            db[j] += dy[(size_t)n * l->nout + j];
    if (B <= 0) { /* no rows: the products below would not write */
        memset(dw, 0, (size_t)l->nin * l->nout * sizeof(float));
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l->nin, l->nout, B, 1.0f, x, l->nin, dy, l->nout, 0.0f,
                dw, l->nout);
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, l->nin, l->nout, 1.0f, dy, l->nout, w, l->nout,
                    0.0f, dx, l->nin);
}
