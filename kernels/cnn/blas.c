/*
 * kernels/cnn/blas.c: the GEMM-shaped parts by cblas_sgemm (OpenBLAS), the rest in plain loops around
 * them. A convolution is im2col + a few large products over slices of CNN_BLAS_SLICE images (cnn_fast.h),
 * the lowering of Caffe and cuDNN's im2col GEMM: col (K x N, K = cin k k, N = S ho wo for a slice of S
 * images) holds each output position's input patch as a column, so that
 *   forward          Y'   = W col       (cout x K) (K x N), then bias and ReLU while permuting Y'
 *                                        (cout x N, images side by side) into the network's NCHW y;
 *   weight gradient  dW  += dz' col^T   (cout x N) (N x K), summed over the slices by beta = 1;
 *   data gradient    dcol = W^T dz'     (K x cout) (cout x N), then col2im adds each column back onto
 *                                        the input positions it came from;
 * with dz' the ReLU'd delta permuted to cout x N in the same pass that writes dz into dy and sums db.
 * For conv2 at batch 512 that is three products of 16 x 7744 x 72 per slice of 64 images, where one
 * image at a time gave 16 x 121 x 72: too small for OpenBLAS to use a second thread, and dominated by
 * its per-call overhead. The slice (not the whole batch) keeps col, written by im2col and read by the
 * products, in cache. The dense layers are one product each, as mlp's blas. `threads` becomes
 * OpenBLAS's thread count (kern_blas.h). Scratch: cnn_blas_area_floats (cnn_fast.h), col then Y' or dz'
 * (dcol reuses col, which the weight gradient has finished reading).
 */
#include "cnn_fast.h"
#include "cnn_kernels.h"
#include "kern_blas.h"

#include <cblas.h>
#include <string.h>

static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

/* One image x (cin x h x w) into its P columns of col, whose rows are N apart: row t = (ci, ky, kx),
 * column (oy, ox). */
static void im2col_image(const cnn_conv *c, size_t N, const float *x, float *col)
{
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    for (int ci = 0; ci < c->cin; ci++)
        for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++) {
                const float *src = x + ((size_t)ci * c->h + ky) * c->w + kx;
                float *dst = col + ((size_t)(ci * k + ky) * k + kx) * N;
                for (int oy = 0; oy < ho; oy++, src += c->w, dst += wo)
                    for (int ox = 0; ox < wo; ox++)
                        dst[ox] = src[ox];
            }
}

/* dx (cin x h x w) of one image = the sum of its columns of dcol over the positions each came from. */
static void col2im_image(const cnn_conv *c, size_t N, const float *dcol, float *dx)
{
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    memset(dx, 0, (size_t)c->cin * c->h * c->w * sizeof(float));
    for (int ci = 0; ci < c->cin; ci++)
        for (int ky = 0; ky < k; ky++)
            for (int kx = 0; kx < k; kx++) {
                const float *src = dcol + ((size_t)(ci * k + ky) * k + kx) * N;
                float *dst = dx + ((size_t)ci * c->h + ky) * c->w + kx;
                for (int oy = 0; oy < ho; oy++, src += wo, dst += c->w)
                    for (int ox = 0; ox < wo; ox++)
                        dst[ox] += src[ox];
            }
}

/* One image's y (cout x P) = relu(its columns of Y' + b). */
static void bias_relu_image(int cout, int P, size_t N, const float *yt, const float *b, float *y)
{
    for (int co = 0; co < cout; co++, yt += N, y += P)
        for (int p = 0; p < P; p++) {
            float v = yt[p] + b[co];
            y[p] = v > 0.0f ? v : 0.0f;
        }
}

/* One plane of P: dz = dy (y > 0) in place and into dzt; returns its sum. The sum runs in 16 lanes:
 * one chain of P adds (676 for conv1) is bound by the add's latency, and GCC may not reorder it. */
static float relu_grad_plane(const float *y, float *dy, float *dzt, int P)
{
    float lane[16] = {0.0f}, sum = 0.0f;
    int p = 0;
    for (; p + 16 <= P; p += 16)
        for (int l = 0; l < 16; l++) {
            float v = y[p + l] > 0.0f ? dy[p + l] : 0.0f;
            dy[p + l] = v, dzt[p + l] = v, lane[l] += v;
        }
    for (; p < P; p++) {
        float v = y[p] > 0.0f ? dy[p] : 0.0f;
        dy[p] = v, dzt[p] = v, sum += v;
    }
    for (int l = 0; l < 16; l++)
        sum += lane[l];
    return sum;
}

/* The passes around the products, over the slice's S images. They run on the calling thread: OpenMP
 * threads here spin-wait after each pass (libgomp's default) on the core that OpenBLAS's thread needs
 * for the next product; in a trial (2 threads, the 2-vCPU VM shared) conv2's forward took 148 ms
 * instead of 3 with them, and the same as without them under OMP_WAIT_POLICY=passive. */
static void im2col(const cnn_conv *c, int S, const float *x, float *col)
{
    const size_t P = (size_t)cnn_conv_ho(c) * cnn_conv_wo(c), in = (size_t)c->cin * c->h * c->w;
    for (int s = 0; s < S; s++)
        im2col_image(c, S * P, x + s * in, col + s * P);
}

static void col2im(const cnn_conv *c, int S, const float *dcol, float *dx)
{
    const size_t P = (size_t)cnn_conv_ho(c) * cnn_conv_wo(c), in = (size_t)c->cin * c->h * c->w;
    for (int s = 0; s < S; s++)
        col2im_image(c, S * P, dcol + s * P, dx + s * in);
}

/* y (S x cout x P, NCHW) = relu(Y' + b), Y' cout x S P with image s's plane at column s P. */
static void bias_relu_nchw(int cout, int P, int S, const float *yt, const float *b, float *y)
{
    for (int s = 0; s < S; s++)
        bias_relu_image(cout, P, (size_t)S * P, yt + (size_t)s * P, b, y + (size_t)s * cout * P);
}

/* dz = dy (y > 0) for S images in NCHW, in place; dz' (cout x S P) the same permuted as Y'; db += each
 * plane's sum. */
static void relu_grad_cnhw(int cout, int P, int S, const float *y, float *dy, float *dzt, float *db)
{
    const size_t N = (size_t)S * P;
    for (int s = 0; s < S; s++)
        for (int co = 0; co < cout; co++) {
            size_t o = ((size_t)s * cout + co) * P;
            db[co] += relu_grad_plane(y + o, dy + o, dzt + co * N + (size_t)s * P, P);
        }
}

/* dW += dz' col^T for one slice (cout x K, a reduction over N). OpenBLAS splits a product's output
 * among its threads, which then synchronise once per block of the reduction (a few hundred long): for
 * a small output (conv1's 8 x 9) a block is well under a microsecond of work, and two threads took
 * 1.8x one thread's time (8 products of 8 x 9 over 43 264: 3.3 ms against 1.8 ms; conv2's 16 x 72
 * over 7744: 1.3-1.5 ms against 2.0). So an output under DW_SPLIT_MIN elements runs on one thread. */
enum { DW_SPLIT_MIN = 256 };

static void weight_grad(int cout, int K, int N, const float *dzt, const float *col, float *dw, int threads)
{
    kern_blas_threads(cout * K < DW_SPLIT_MIN ? 1 : threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, cout, K, N, 1.0f, dzt, N, col, N, 1.0f, dw, K);
    kern_blas_threads(threads);
}

void cnn_conv_forward_blas(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                           float *scratch, int threads)
{
    kern_blas_threads(threads);
    const int K = c->cin * c->k * c->k, P = cnn_conv_ho(c) * cnn_conv_wo(c);
    const size_t in = (size_t)c->cin * c->h * c->w, out = (size_t)c->cout * P;
    float *col = scratch, *yt = scratch + up16((size_t)K * P * (B < CNN_BLAS_SLICE ? B : CNN_BLAS_SLICE));
    for (int n = 0; n < B; n += CNN_BLAS_SLICE) {
        const int S = B - n < CNN_BLAS_SLICE ? B - n : CNN_BLAS_SLICE, N = S * P;
        im2col(c, S, x + n * in, col);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->cout, N, K, 1.0f, w, K, col, N, 0.0f, yt, N);
        bias_relu_nchw(c->cout, P, S, yt, b, y + n * out);
    }
}

void cnn_conv_backward_blas(const cnn_conv *c, int B, const float *x, const float *w, const float *y,
                            float *dy, float *dw, float *db, float *dx, float *scratch, int threads)
{
    kern_blas_threads(threads);
    const int K = c->cin * c->k * c->k, P = cnn_conv_ho(c) * cnn_conv_wo(c);
    const size_t in = (size_t)c->cin * c->h * c->w, out = (size_t)c->cout * P;
    float *col = scratch, *dzt = scratch + up16((size_t)K * P * (B < CNN_BLAS_SLICE ? B : CNN_BLAS_SLICE));
    memset(dw, 0, (size_t)c->cout * K * sizeof(float)); /* an empty batch: every sum is 0 */
    memset(db, 0, (size_t)c->cout * sizeof(float));
    for (int n = 0; n < B; n += CNN_BLAS_SLICE) {
        const int S = B - n < CNN_BLAS_SLICE ? B - n : CNN_BLAS_SLICE, N = S * P;
        relu_grad_cnhw(c->cout, P, S, y + n * out, dy + n * out, dzt, db);
        im2col(c, S, x + n * in, col);
        weight_grad(c->cout, K, N, dzt, col, dw, threads);
        if (dx) {
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, N, c->cout, 1.0f, w, K, dzt, N, 0.0f, col,
                        N);
            col2im(c, S, col, dx + n * in);
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
