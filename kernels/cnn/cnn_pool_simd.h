/*
 * kernels/cnn/cnn_pool_simd.h: the vector 2x2 max pool's windows, shared by the shared pooling
 * (cnn_pool.c) and simd's and omp's convolution fused with its pooling (cnn_simd.h), which pools the
 * convolution's output from its work area instead of writing it out. Internal to kernels/cnn; static
 * inline.
 */
#ifndef SL_KERNELS_CNN_POOL_SIMD_H
#define SL_KERNELS_CNN_POOL_SIMD_H

#include "simd.h"

#include <stddef.h>
#include <stdint.h>

/* The even and the odd lanes of the 2L floats a:b (a window row's left and right inputs). */
static inline vf32 cnnp_lanes_from(vf32 a, vf32 b, int first)
{
    vi32 m;
    for (int l = 0; l < VF32_LANES; l++)
        m[l] = 2 * l + first;
    return vf32_shuffle2(a, b, m);
}
static inline vf32 cnnp_pick(vi32 m, vf32 t, vf32 f) { return (vf32)((m & (vi32)t) | (~m & (vi32)f)); }

/* The max of a window's four inputs r (top left, top right, bottom left, bottom right) and its index
 * (0-3), as a tournament: each row's pair (the left one wins a tie), then the two rows (the top one wins
 * a tie), which picks the same input as scanning the four in order and keeping the first strict
 * maximum; selects, not branches (see cnnp_windows). */
static inline void cnnp_tournament(const vf32 r[4], vf32 *max, vi32 *idx)
{
    const vi32 right_top = r[1] > r[0], right_bottom = r[3] > r[2]; /* -1 where the right input wins */
    const vf32 top = cnnp_pick(right_top, r[1], r[0]), bottom = cnnp_pick(right_bottom, r[3], r[2]);
    const vi32 low = bottom > top;
    *max = cnnp_pick(low, bottom, top);
    *idx = (low & (2 - right_bottom)) | (~low & -right_top);
}

/* Windows j..j+n-1 (n <= L) of one output row, from input rows r0 and r1 (L windows read whatever n is),
 * by cnnp_tournament: selects, because the scan's data-dependent branches, mispredicted about half the
 * time, made pool1's forward 4.9 ms at batch 512 (one thread, Zen 5 VM, AVX-512), more than conv1's
 * forward (0.8 ms). */
static inline void cnnp_windows(const float *r0, const float *r1, float *y, uint8_t *arg, int n)
{
    vf32 a0 = vf32_load(r0), a1 = vf32_load(r0 + VF32_LANES), c0 = vf32_load(r1), c1 = vf32_load(r1 + VF32_LANES);
    const vf32 r[4] = {cnnp_lanes_from(a0, a1, 0), cnnp_lanes_from(a0, a1, 1), cnnp_lanes_from(c0, c1, 0),
                       cnnp_lanes_from(c0, c1, 1)};
    vf32 m;
    vi32 idx;
    cnnp_tournament(r, &m, &idx);
    if (n == VF32_LANES)
        vf32_store(y, m);
    else
        for (int l = 0; l < n; l++)
            y[l] = m[l];
    for (int l = 0; l < n; l++)
        arg[l] = (uint8_t)idx[l];
}

/* One plane of h rows of (at least) w columns, rows rs floats apart: (h/2) x (w/2) out, contiguous.
 * Reads up to 2L - 1 floats past each used row's start + 2j, which the caller keeps readable. */
static inline void cnnp_plane_strided(const float *x, int h, int w, size_t rs, float *y, uint8_t *arg)
{
    const int ho = h / 2, wo = w / 2;
    for (int i = 0; i < ho; i++) {
        const float *r0 = x + (size_t)(2 * i) * rs, *r1 = r0 + rs;
        for (int j = 0; j < wo; j += VF32_LANES) {
            int n = wo - j < VF32_LANES ? wo - j : VF32_LANES;
            cnnp_windows(r0 + 2 * j, r1 + 2 * j, y + (size_t)i * wo + j, arg + (size_t)i * wo + j, n);
        }
    }
}

#endif
