/*
 * kernels/cnn/cnn_pool.c: 2x2 max pooling, stride 2, shared by every variant. The forward keeps, per
 * pooled output, which of the four inputs won (0-3, row-major in the window, the first on ties) as one
 * byte, so the backward is a scatter that reads neither x nor y. The forward takes a vector of windows at
 * a time (explicit vectors, kernels/simd.h: even and odd lanes for the left and right inputs, selects for
 * the max): a pass over 11 MB at batch 512 whose scalar, branching form cost 5 ms (one
 * thread, Zen 5 VM, AVX-512 native build, `build/kernels/cnn_layers 1 9`). `threads` > 1 splits
 * the B x c channel planes into contiguous ranges, i.e. the batch into slices (planes are independent; a
 * thread writes only its own).
 */
#include "cnn_kernels.h"
#include "simd.h"

#include <string.h>

/* The even and the odd lanes of the 2L floats a:b (a window row's left and right inputs). */
static inline vf32 lanes_from(vf32 a, vf32 b, int first)
{
    vi32 m;
    for (int l = 0; l < VF32_LANES; l++)
        m[l] = 2 * l + first;
    return vf32_shuffle2(a, b, m);
}
static inline vf32 even_lanes(vf32 a, vf32 b) { return lanes_from(a, b, 0); }
static inline vf32 odd_lanes(vf32 a, vf32 b) { return lanes_from(a, b, 1); }
static inline vf32 pick(vi32 m, vf32 t, vf32 f) { return (vf32)((m & (vi32)t) | (~m & (vi32)f)); }

/* Windows j..j+n-1 (n <= L) of one output row, from input rows r0 and r1 (L windows read whatever n is).
 * The max as a tournament: each input row's pair (the left one wins a tie), then the two rows (the top
 * one wins a tie), which picks the same input as scanning the four in order and keeping the first strict
 * maximum; selects, not branches: the scan's data-dependent branches, mispredicted about half the time,
 * made pool1's forward 4.9 ms at batch 512 (one thread, Zen 5 VM, AVX-512), more than conv1's forward (0.8 ms). */
static inline void pool_windows(const float *r0, const float *r1, float *y, uint8_t *arg, int n)
{
    vf32 a0 = vf32_load(r0), a1 = vf32_load(r0 + VF32_LANES), c0 = vf32_load(r1), c1 = vf32_load(r1 + VF32_LANES);
    vf32 a = even_lanes(a0, a1), b = odd_lanes(a0, a1), c = even_lanes(c0, c1), d = odd_lanes(c0, c1);
    vi32 right_top = b > a, right_bottom = d > c; /* -1 where the right input wins */
    vf32 top = pick(right_top, b, a), bottom = pick(right_bottom, d, c);
    vi32 low = bottom > top;
    vf32 m = pick(low, bottom, top);
    vi32 idx = (low & (2 - right_bottom)) | (~low & -right_top);
    if (n == VF32_LANES)
        vf32_store(y, m);
    else
        for (int l = 0; l < n; l++)
            y[l] = m[l];
    for (int l = 0; l < n; l++)
        arg[l] = (uint8_t)idx[l];
}

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
                pool_windows(r0 + 2 * j, r1 + 2 * j, y + (size_t)i * wo + j, arg + (size_t)i * wo + j, n);
            else {
                memcpy(pad[0], r0 + 2 * j, (size_t)(2 * n) * sizeof(float));
                memcpy(pad[1], r1 + 2 * j, (size_t)(2 * n) * sizeof(float));
                pool_windows(pad[0], pad[1], y + (size_t)i * wo + j, arg + (size_t)i * wo + j, n);
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
