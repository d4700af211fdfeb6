/*
 * kernels/cnn/omp.c: simd's work (cnn_simd_conv.c, cnn_dense_simd.h) shared among `threads` OpenMP threads, one parallel region
 * per call; the convolutions fused with their pooling are cut as the plain ones (pooled outputs and
 * winners by batch slices, the backward's partial gradients reduced as below). How it is cut, so that no
 * thread ever writes what another writes:
 *   convolution forward: by batch slices (an image's output depends on that image only); each thread
 *            has its own work area in `scratch` (cnn_simd_area_floats(c) floats, areas back to back, each a
 *            multiple of 64 bytes, so no two threads share a cache line).
 *   convolution backward: by batch slices; each thread sums its images' dW^T and db into the partial
 *            in its own area; after one barrier, each thread adds the partials of a range of dw's (and
 *            db's) elements, ranges cut at multiples of 16 floats, in thread order 0, 1, ...: the sums do
 *            not depend on which thread finished first (they do depend on the thread count).
 *   dense forward: by batch rows. Dense backward: the ReLU mask and dx by batch rows; after a barrier
 *            dW by its rows (each thread sums the whole batch for its rows of W: no partial copies and
 *            no reduction pass, which for dense1's 400 x 128 would move 200 KB per thread) and db by
 *            columns. dense's results are the same bits as simd's at any thread count.
 * Without OpenMP the pragmas are ignored and the one thread takes every range: simd's result.
 */
#include "cnn_dense_simd.h"
#include "cnn_fast.h"
#include "cnn_kernels.h"
#include "kern_omp.h"

#include <string.h>

/* [*lo, *hi) of n items for part t of nt, cut at multiples of `align`. */
static void split(size_t n, int t, int nt, size_t align, size_t *lo, size_t *hi)
{
    size_t chunk = ((n + (size_t)nt - 1) / (size_t)nt + align - 1) / align * align;
    size_t a = (size_t)t * chunk, b = a + chunk;
    *lo = a < n ? a : n;
    *hi = b < n ? b : n;
}

void cnn_conv_forward_omp(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                          float *scratch, int threads)
{
    const size_t stride = cnn_simd_area_floats(c);
    #pragma omp parallel num_threads(threads > 1 ? threads : 1)
    {
        size_t b0, b1;
        split(B > 0 ? (size_t)B : 0, kern_tid(), kern_nthreads(), 1, &b0, &b1);
        KERN_SHARE cnn_simd_conv_forward_range(c, B, x, w, b, y, (int)b0, (int)b1, scratch + (size_t)kern_tid() * stride);
    }
}

void cnn_conv_backward_omp(const cnn_conv *c, int B, const float *x, const float *w, const float *y,
                           float *dy, float *dw, float *db, float *dx, float *scratch, int threads)
{
    const size_t stride = cnn_simd_area_floats(c);
    const size_t n = (size_t)c->cout * c->cin * c->k * c->k + (size_t)c->cout; /* dw's and db's elements */
    #pragma omp parallel num_threads(threads > 1 ? threads : 1)
    {
        int t = kern_tid(), nt = kern_nthreads();
        size_t lo, hi;
        split(B > 0 ? (size_t)B : 0, t, nt, 1, &lo, &hi);
        KERN_SHARE cnn_simd_conv_backward_range(c, B, x, w, y, dy, dx, (int)lo, (int)hi, scratch + (size_t)t * stride);
        #pragma omp barrier
        split(n, t, nt, 16, &lo, &hi);
        KERN_SHARE cnn_simd_reduce(c, scratch, stride, nt, dw, db, lo, hi);
    }
}

void cnn_conv_pool_forward_omp(const cnn_conv *c, const cnn_pool *pl, int B, const float *x, const float *w,
                               const float *b, float *p, uint8_t *arg, float *scratch, int threads)
{
    const size_t stride = cnn_simd_area_floats(c);
    #pragma omp parallel num_threads(threads > 1 ? threads : 1)
    {
        size_t b0, b1;
        split(B > 0 ? (size_t)B : 0, kern_tid(), kern_nthreads(), 1, &b0, &b1);
        cnn_simd_conv_pool_forward_range(c, pl, B, x, w, b, p, arg, (int)b0, (int)b1,
                                     scratch + (size_t)kern_tid() * stride);
    }
}

void cnn_pool_conv_backward_omp(const cnn_conv *c, const cnn_pool *pl, int B, const float *x, const float *w,
                                const float *p, const uint8_t *arg, const float *dp, float *dw, float *db,
                                float *dx, float *scratch, int threads)
{
    (void)pl;
    const size_t stride = cnn_simd_area_floats(c);
    const size_t n = (size_t)c->cout * c->cin * c->k * c->k + (size_t)c->cout;
    #pragma omp parallel num_threads(threads > 1 ? threads : 1)
    {
        int t = kern_tid(), nt = kern_nthreads();
        size_t lo, hi;
        split(B > 0 ? (size_t)B : 0, t, nt, 1, &lo, &hi);
        cnn_simd_pool_conv_backward_range(c, B, x, w, p, arg, dp, dx, (int)lo, (int)hi, scratch + (size_t)t * stride);
        #pragma omp barrier
        split(n, t, nt, 16, &lo, &hi);
        cnn_simd_reduce(c, scratch, stride, nt, dw, db, lo, hi);
    }
}

void cnn_dense_forward_omp(const cnn_dense *l, int B, const float *x, const float *w, const float *b, float *y,
                           int relu, float *scratch, int threads)
{
    (void)scratch;
    #pragma omp parallel num_threads(threads > 1 ? threads : 1)
    {
        int r0, r1;
        mlps_split(B, kern_tid(), kern_nthreads(), &r0, &r1);
        KERN_SHARE cnns_dense_forward_rows(l, x, w, b, y, relu, r0, r1);
    }
}

void cnn_dense_backward_omp(const cnn_dense *l, int B, const float *x, const float *w, const float *y,
                            float *dy, int relu, float *dw, float *db, float *dx, float *scratch, int threads)
{
    (void)scratch;
    #pragma omp parallel num_threads(threads > 1 ? threads : 1)
    {
        int t = kern_tid(), nt = kern_nthreads(), lo, hi;
        mlps_split(B, t, nt, &lo, &hi);
        KERN_SHARE cnns_dense_delta_rows(l, w, y, dy, relu, dx, lo, hi);
        #pragma omp barrier
        KERN_SHARE {
        mlps_split(l->nin, t, nt, &lo, &hi); /* rows of dw: each the whole batch's sum */
        if (B <= 0)
            memset(dw + (size_t)lo * l->nout, 0, (size_t)(hi - lo) * l->nout * sizeof(float));
        else
            mlps_wgrad_rows(x, dy, dw, B, l->nin, l->nout, lo, hi);
        size_t c0, c1;
        split((size_t)l->nout, t, nt, 16, &c0, &c1);
        mlps_colsum(dy, db, B, l->nout, (int)c0, (int)c1);
        }
    }
}
