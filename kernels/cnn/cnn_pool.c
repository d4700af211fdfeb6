/*
 * kernels/cnn/cnn_pool.c: 2x2 max pooling, stride 2, shared by every variant. The forward keeps, per
 * pooled output, which of the four inputs won (0-3, row-major in the window, the first on ties) as one
 * byte, so the backward is a scatter that reads neither x nor y. The forward takes a vector of windows at
 * a time (explicit vectors, cnn_pool_simd.h, shared with simd's and omp's fused convolutions: even and
 * odd lanes for the left and right inputs, selects for the max): a pass over 11 MB at batch 512 whose
 * scalar, branching form cost 5 ms (one
 * thread, Zen 5 VM, AVX-512 native build, `build/kernels/cnn_layers 1 9`). `threads` > 1 splits
 * the B x c channel planes into contiguous ranges, i.e. the batch into slices (planes are independent; a
 * thread writes only its own).
 */
#include "cnn_kernels.h"
#include "cnn_pool_simd.h"
#include "simd.h"

#include <string.h>

/* One channel plane: h x w in, (h/2) x (w/2) out (an odd last row and column are never used). A row's
 * last vector of windows reads up to 2L - 1 floats past its start, into the next rows or planes; where
 * that would pass `end` (the last rows of the batch) the windows go one at a time through the same code
 * on a zero-padded copy. */
static void pool_plane(const float *x, int h, int w, float *y, uint8_t *arg, const float *end)
{
    int ho = h / 2, wo = w / 2;
    float pad[2][2 * VF32_LANES] = {{0}};
    for (int i = 0; i < ho; i++) {
        const float *r0 = x + (size_t)(2 * i) * w, *r1 = r0 + w;
        for (int j = 0; j < wo; j += VF32_LANES) {
            int n = wo - j < VF32_LANES ? wo - j : VF32_LANES;
            if (r1 + 2 * j + 2 * VF32_LANES <= end)
                cnnp_windows(r0 + 2 * j, r1 + 2 * j, y + (size_t)i * wo + j, arg + (size_t)i * wo + j, n);
            else {
                memcpy(pad[0], r0 + 2 * j, (size_t)(2 * n) * sizeof(float));
                memcpy(pad[1], r1 + 2 * j, (size_t)(2 * n) * sizeof(float));
                cnnp_windows(pad[0], pad[1], y + (size_t)i * wo + j, arg + (size_t)i * wo + j, n);
            }
        }
    }
}

void cnn_pool_forward(const cnn_pool *p, int B, const float *x, float *y, uint8_t *arg, int threads)
{
    size_t in = (size_t)p->h * p->w, out = (size_t)(p->h / 2) * (size_t)(p->w / 2);
    int planes = B * p->c; /* B x c planes, each independent */
    const float *end = x + (size_t)planes * in;
    if (threads < 1)
        threads = 1;
    #pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int q = 0; q < planes; q++)
        pool_plane(x + (size_t)q * in, p->h, p->w, y + (size_t)q * out, arg + (size_t)q * out, end);
}

/* dx := 0 on the plane, then each dy goes to the input that won its window. */
static void unpool_plane(const float *dy, const uint8_t *arg, int h, int w, float *dx)
{
    int ho = h / 2, wo = w / 2;
    memset(dx, 0, (size_t)h * w * sizeof *dx);
    for (int i = 0; i < ho; i++)
        for (int j = 0; j < wo; j++) {
            int a = arg[(size_t)i * wo + j];
            dx[(size_t)(2 * i + (a >> 1)) * w + 2 * j + (a & 1)] = dy[(size_t)i * wo + j];
        }
}

void cnn_pool_backward(const cnn_pool *p, int B, const float *dy, const uint8_t *arg, float *dx, int threads)
{
    size_t in = (size_t)p->h * p->w, out = (size_t)(p->h / 2) * (size_t)(p->w / 2);
    int planes = B * p->c;
    if (threads < 1)
        threads = 1;
    #pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int q = 0; q < planes; q++)
        unpool_plane(dy + (size_t)q * out, arg + (size_t)q * out, p->h, p->w, dx + (size_t)q * in);
}
