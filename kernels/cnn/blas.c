/*
 * kernels/cnn/blas.c: the GEMM-shaped parts by cblas_sgemm (OpenBLAS), the rest in plain loops around
 * them. A convolution is im2col + a few large products over slices of up to CNN_BLAS_SLICE images
 * (cnn_fast.h), the lowering of Caffe and cuDNN's im2col GEMM: col (K x N, K = cin k k, N = S ho wo for
 * a slice of S images) holds each output position's input patch as a column, so that
 *   forward          Y'   = W col       (cout x K) (K x N), then bias and ReLU while permuting Y'
 *                                        (cout x N, images side by side) into the network's NCHW y;
 *   weight gradient  dW  += dz' col^T   (cout x N) (N x K), summed over the slices by beta = 1 (as
 *                                        dW^T = col dz'^T: backward_slice says why);
 *   data gradient    dcol = W^T dz'     (K x cout) (cout x N), then col2im adds each column back onto
 *                                        the input positions it came from;
 * with dz' the ReLU'd delta permuted to cout x N in the same pass that writes dz into dy and sums db.
 * For conv2 that is three products of 16 x 7744 x 72 per slice of 64 images, where one image at a
 * time gave 16 x 121 x 72: the same code with slices of one image made the two layers' four calls 7 %
 * slower (12.3 ms against 11.5 on one thread, 6.5 against 6.0 on two; 2-vCPU Zen 5 VM, AVX-512 native
 * build, OpenBLAS's Haswell kernels, a driver calling the layers alone: docs/study-cnn.md, *The blas
 * variant*). The slice (not the whole batch)
 * keeps col, written by im2col and read by the products, in cache.
 * Threads: `threads` OpenMP threads take the slices in turn (each with its own area of the scratch and
 * partial dW, db, summed in thread order at the end), and every product runs on the thread that calls
 * it (OpenBLAS set to one thread: kern_blas.h); the dense layers split their rows, or for the weight
 * gradient its columns, the same way. Why not OpenBLAS's own threads: below, before slice_of.
 */
#include "cnn_fast.h"
#include "cnn_kernels.h"
#include "kern_blas.h"
#include "kern_omp.h"

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

/* The passes around a slice's products, over its S images. */
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

/* ---- one slice of S images: x, y, dy, dx point at its first image -------------------------------- */

static void forward_slice(const cnn_conv *c, int S, const float *x, const float *w, const float *b, float *y,
                          float *col, float *yt)
{
    const int K = c->cin * c->k * c->k, P = cnn_conv_ho(c) * cnn_conv_wo(c), N = S * P;
    im2col(c, S, x, col);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->cout, N, K, 1.0f, w, K, col, N, 0.0f, yt, N);
    bias_relu_nchw(c->cout, P, S, yt, b, y);
}

/* Adds the slice's weight gradient, transposed (dwt, K x cout), and bias gradient into the thread's
 * partial sums. dW^T = col dz'^T is the same product as dW = dz' col^T with the operands swapped, which
 * OpenBLAS 0.3.21 ran faster here (8 slices, one thread: conv1 1.35-1.66 ms against 1.78-2.0, conv2
 * 1.63 against 2.1; Zen 5 VM, AVX-512 native build); sum_partials transposes it back. */
static void backward_slice(const cnn_conv *c, int S, const float *x, const float *w, const float *y, float *dy,
                           float *dwt, float *db, float *dx, float *col, float *dzt)
{
    const int K = c->cin * c->k * c->k, P = cnn_conv_ho(c) * cnn_conv_wo(c), N = S * P;
    relu_grad_cnhw(c->cout, P, S, y, dy, dzt, db);
    im2col(c, S, x, col);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, K, c->cout, N, 1.0f, col, N, dzt, N, 1.0f, dwt,
                c->cout);
    if (dx) { /* dcol into col, which the weight gradient has finished reading */
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, N, c->cout, 1.0f, w, K, dzt, N, 0.0f, col, N);
        col2im(c, S, col, dx);
    }
}

/* ---- the batch: OpenMP threads take slices in turn, each product on its own thread --------------------
 * OpenBLAS runs on one thread per call (kern_blas_threads(1)) and `threads` is the OpenMP team. With
 * OpenBLAS's own threads instead, every product after an OpenMP region (pooling, the update, and any
 * OpenMP pass here) waited for the second core, on which libgomp's worker spin-waits after a region
 * (its default policy): a step at 2 threads took 45 ms against 17 on one thread (2-vCPU Zen 5 VM,
 * AVX-512 native build, 5 runs; docs/study-cnn.md, *The blas variant*).
 * One pool of threads for the whole step avoids that, and splits the passes around the products too. */

/* The slice each thread takes: up to CNN_BLAS_SLICE images, fewer when the batch would leave a thread
 * idle (B = 96 at 2 threads: two of 48, not 64 and 32). */
static int slice_of(int B, int threads)
{
    int even = (B + threads - 1) / threads;
    return even < CNN_BLAS_SLICE ? even : CNN_BLAS_SLICE;
}

/* A thread's area (cnn_blas_area_floats floats) holds col at 0, then Y' or dz' at area_product, then
 * its partial dW^T and db at area_partials; sized for slices of min(B, CNN_BLAS_SLICE) images. */
static size_t area_product(const cnn_conv *c, int B)
{
    size_t P = (size_t)cnn_conv_ho(c) * cnn_conv_wo(c), S = (size_t)(B < CNN_BLAS_SLICE ? B : CNN_BLAS_SLICE);
    return up16((size_t)c->cin * c->k * c->k * S * P);
}
static size_t area_partials(const cnn_conv *c, int B)
{
    size_t P = (size_t)cnn_conv_ho(c) * cnn_conv_wo(c), S = (size_t)(B < CNN_BLAS_SLICE ? B : CNN_BLAS_SLICE);
    return area_product(c, B) + up16((size_t)c->cout * S * P);
}

void cnn_conv_forward_blas(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                           float *scratch, int threads)
{
    kern_blas_threads(1);
    threads = threads > 1 ? threads : 1;
    const int S = slice_of(B, threads);
    const size_t in = (size_t)c->cin * c->h * c->w, out = cnn_conv_out(c), area = cnn_blas_area_floats(c, B);
    #pragma omp parallel num_threads(threads)
    {
        float *col = scratch + (size_t)kern_tid() * area, *yt = col + area_product(c, B);
        for (int n = kern_tid() * S; n < B; n += kern_nthreads() * S)
            forward_slice(c, B - n < S ? B - n : S, x + n * in, w, b, y + n * out, col, yt);
    }
}

/* dw (cout x K) and db = the threads' partials (dW^T, K x cout, then db) summed in thread order: the
 * same bits whatever the timing. */
static void sum_partials(const cnn_conv *c, int B, const float *scratch, int threads, float *dw, float *db)
{
    const int K = c->cin * c->k * c->k, cout = c->cout;
    const size_t area = cnn_blas_area_floats(c, B);
    const float *part = scratch + area_partials(c, B);
    for (int co = 0; co < cout; co++) {
        for (int k = 0; k < K; k++) {
            float sum = 0.0f;
            for (int t = 0; t < threads; t++)
                sum += part[t * area + (size_t)k * cout + co];
            dw[(size_t)co * K + k] = sum;
        }
        float sum = 0.0f;
        for (int t = 0; t < threads; t++)
            sum += part[t * area + (size_t)K * cout + co];
        db[co] = sum;
    }
}

void cnn_conv_backward_blas(const cnn_conv *c, int B, const float *x, const float *w, const float *y,
                            float *dy, float *dw, float *db, float *dx, float *scratch, int threads)
{
    kern_blas_threads(1);
    threads = threads > 1 ? threads : 1;
    const int S = slice_of(B, threads), K = c->cin * c->k * c->k;
    const size_t in = (size_t)c->cin * c->h * c->w, out = cnn_conv_out(c), area = cnn_blas_area_floats(c, B);
    for (int t = 0; t < threads; t++) /* all zero, so that a thread the team lacks adds nothing */
        memset(scratch + t * area + area_partials(c, B), 0, ((size_t)c->cout * K + c->cout) * sizeof(float));
    #pragma omp parallel num_threads(threads)
    {
        float *col = scratch + (size_t)kern_tid() * area, *dzt = col + area_product(c, B);
        float *pdwt = col + area_partials(c, B), *pdb = pdwt + (size_t)K * c->cout;
        for (int n = kern_tid() * S; n < B; n += kern_nthreads() * S)
            backward_slice(c, B - n < S ? B - n : S, x + n * in, w, y + n * out, dy + n * out, pdwt, pdb,
                           dx ? dx + n * in : NULL, col, dzt);
    }
    sum_partials(c, B, scratch, threads, dw, db);
}

/* ---- dense layers: rows (or, for the weight gradient, columns) split across the team --------------- */

/* This thread's share [*lo, *hi) of n. */
static void share(int n, int *lo, int *hi)
{
    int t = kern_tid(), nt = kern_nthreads();
    *lo = (int)((long)n * t / nt), *hi = (int)((long)n * (t + 1) / nt);
}

/* y = act(x w + b) for R rows. */
static void dense_rows(const cnn_dense *l, int R, const float *x, const float *w, const float *b, float *y,
                       int relu)
{
    for (int n = 0; n < R; n++)
        memcpy(y + (size_t)n * l->nout, b, (size_t)l->nout * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, l->nout, l->nin, 1.0f, x, l->nin, w, l->nout, 1.0f,
                y, l->nout);
    if (relu)
        for (size_t i = 0; i < (size_t)R * l->nout; i++)
            y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

void cnn_dense_forward_blas(const cnn_dense *l, int B, const float *x, const float *w, const float *b, float *y,
                            int relu, float *scratch, int threads)
{
    (void)scratch, (void)threads; /* threads: read only by the pragma */
    kern_blas_threads(1);
    #pragma omp parallel num_threads(threads > 1 ? threads : 1)
    {
        int lo, hi;
        share(B, &lo, &hi);
        if (hi > lo)
            dense_rows(l, hi - lo, x + (size_t)lo * l->nin, w, b, y + (size_t)lo * l->nout, relu);
    }
}

/* Columns [lo, hi) of db (sums of dz's columns) and of dw = x^T dz (nin x nout), over B rows. */
static void dense_weight_grad(const cnn_dense *l, int B, int lo, int hi, const float *x, const float *dz,
                              float *dw, float *db)
{
    for (int j = lo; j < hi; j++)
        db[j] = 0.0f;
    for (int n = 0; n < B; n++) /* one chain of B adds per column, the columns side by side in vectors */
        for (int j = lo; j < hi; j++)
            db[j] += dz[(size_t)n * l->nout + j];
    if (B <= 0) { /* no rows: the product below would not write */
        for (int i = 0; i < l->nin; i++)
            memset(dw + (size_t)i * l->nout + lo, 0, (size_t)(hi - lo) * sizeof(float));
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, l->nin, hi - lo, B, 1.0f, x, l->nin, dz + lo, l->nout,
                0.0f, dw + lo, l->nout);
}

void cnn_dense_backward_blas(const cnn_dense *l, int B, const float *x, const float *w, const float *y,
                             float *dy, int relu, float *dw, float *db, float *dx, float *scratch, int threads)
{
    (void)scratch, (void)threads; /* threads: read only by the pragma */
    kern_blas_threads(1);
    #pragma omp parallel num_threads(threads > 1 ? threads : 1)
    {
        int lo, hi;
        share(B, &lo, &hi);
        if (relu) /* dz = dy (y > 0), this thread's rows */
            for (size_t i = (size_t)lo * l->nout; i < (size_t)hi * l->nout; i++)
                dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
        if (dx && hi > lo) /* dx = dz w^T, rows [lo, hi): needs only those rows of dz */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, hi - lo, l->nin, l->nout, 1.0f,
                        dy + (size_t)lo * l->nout, l->nout, w, l->nout, 0.0f, dx + (size_t)lo * l->nin, l->nin);
        #pragma omp barrier /* every row of dz before the column sums */
        share(l->nout, &lo, &hi);
        if (hi > lo)
            dense_weight_grad(l, B, lo, hi, x, dy, dw, db);
    }
}
