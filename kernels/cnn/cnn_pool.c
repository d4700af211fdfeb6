/*
 * kernels/cnn/cnn_pool.c: 2x2 max pooling, stride 2, shared by every variant: a memory-bound pass over
 * the conv output (under 1 % of a step's flops), so direct loops. The forward keeps, per pooled output,
 * which of the four inputs won (0-3, row-major in the window, the first on ties) as one byte, so the
 * backward is a scatter that reads neither x nor y. `threads` > 1 splits the B x c channel planes into
 * contiguous ranges, i.e. the batch into slices (planes are independent; a thread writes only its own).
 */
#include "cnn_kernels.h"

#include <string.h>

/* One channel plane: h x w in, (h/2) x (w/2) out (an odd last row and column are never read). */
static void pool_plane(const float *x, int h, int w, float *y, uint8_t *arg)
{
    int ho = h / 2, wo = w / 2;
    for (int i = 0; i < ho; i++)
        for (int j = 0; j < wo; j++) {
            const float *r0 = x + (size_t)(2 * i) * w + 2 * j, *r1 = r0 + w;
            float v[4] = {r0[0], r0[1], r1[0], r1[1]};
            int best = 0;
            for (int q = 1; q < 4; q++)
                if (v[q] > v[best]) /* strictly greater: the first max wins a tie */
                    best = q;
            y[(size_t)i * wo + j] = v[best];
            arg[(size_t)i * wo + j] = (uint8_t)best;
        }
}

void cnn_pool_forward(const cnn_pool *p, int B, const float *x, float *y, uint8_t *arg, int threads)
{
    size_t in = (size_t)p->h * p->w, out = (size_t)(p->h / 2) * (size_t)(p->w / 2);
    int planes = B * p->c; /* B x c planes, each independent */
    if (threads < 1)
        threads = 1;
    #pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int q = 0; q < planes; q++)
        pool_plane(x + (size_t)q * in, p->h, p->w, y + (size_t)q * out, arg + (size_t)q * out);
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
