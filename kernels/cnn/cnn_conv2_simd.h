/*
 * kernels/cnn/cnn_conv2_simd.h: conv2's shape (2L output channels, 3 x 3) fused with its 2x2 max pool at
 * AVX2, with the output channels as the vector lanes. Included by cnn_simd.h; internal to kernels/cnn.
 *
 * The position-lanes tile (cnns_tile_k) at AVX2 holds 4 channels x 2 vectors of positions, and a third
 * of its unaligned input loads cross a cache line; it computes 144 lanes for the 121 outputs of a
 * channel (the wide rows). Here a tile is NP consecutive outputs (row-major, so a tile may wrap onto the
 * next row) x the 16 channels (two vectors): 2 NP accumulators, the tap's two weight vectors (aligned,
 * packed tap by tap) and one broadcast input pixel per position, so 2 + NP loads feed 2 NP FMAs and
 * every lane is an output (the odd last row and column, which the pool drops, are computed as the
 * study's FLOP count counts them). NP = 4 runs conv2's fused forward in two thirds of the position
 * tile's time (one thread, batch 512, a 2-vCPU Zen 3 VM; kernels/cnn/bench/cnn_layers.c's conv2+pool2,
 * against a build with -DCNNS_C2_LANES=0); 5 and 6 spill accumulators and are no faster.
 * The tile sums the taps in the position tile's order (bias first, then ci, ky, kx), so both give the
 * same floats.
 *
 * The tile writes its ReLU'd outputs position by position (16 channels each) into the work area; the
 * pool then reads each window's four positions as whole vectors, and its values and winners go into
 * p's and arg's channel planes by cnns_untranspose, 8 channels at a time.
 */
#ifndef SL_KERNELS_CNN_CONV2_SIMD_H
#define SL_KERNELS_CNN_CONV2_SIMD_H

#ifndef CNNS_C2NP
#define CNNS_C2NP 4 /* positions per tile (this file's first comment says why) */
#endif
#if CNNS_C2NP > 6
#error "CNNS_C2NP: cnns_c2_image's tail tiles go up to 5 positions"
#endif

/* AVX2 with FMA only: AVX-512 (one vector of 16 channels) and x86-64-v2 keep the position lanes.
 * -DCNNS_C2_LANES=0 builds AVX2 with the position tile too, to compare the two (docs/study-cnn.md). */
#ifndef CNNS_C2_LANES
#if defined(__AVX2__) && defined(__FMA__) && CNNS_VL == 8
#define CNNS_C2_LANES 1
#else
#define CNNS_C2_LANES 0
#endif
#endif
static inline int cnns_conv2_channel_lanes(const cnn_conv *c)
{
    return CNNS_C2_LANES && c->cout == 2 * CNNS_VL && c->k == 3;
}

/* The parts of the work area (floats, each a multiple of 16): the outputs (positions x 2L channels), each
 * half's pooled values and winners (windows x L, the windows rounded up to L: cnns_untranspose reads
 * whole vectors), the packed weights (tap t's 2L channels at t 2L). */
typedef struct cnns_c2 {
    size_t out, pooled, wt;
} cnns_c2;

static inline cnns_c2 cnns_c2_of(const cnn_conv *c)
{
    const size_t L = CNNS_VL, pos = (size_t)cnn_conv_ho(c) * (size_t)cnn_conv_wo(c);
    const size_t win = (size_t)(cnn_conv_ho(c) / 2) * (size_t)(cnn_conv_wo(c) / 2);
    return (cnns_c2){.out = cnns_up(pos * 2 * L, 16), .pooled = cnns_up(cnns_up(win, L) * L, 16),
                     .wt = cnns_up((size_t)c->cin * 9 * 2 * L, 16)};
}

static inline size_t cnns_c2_floats(const cnn_conv *c)
{
    const cnns_c2 g = cnns_c2_of(c);
    return g.out + 4 * g.pooled + g.wt;
}

/* np positions from q (in the row-major order of the ho x wo outputs, so a tile may wrap onto the next
 * row) x the 2L channels: out (positions x 2L, position q first) = relu(bias + the taps' sums).
 * x: one image (cin planes of h x w), wt: the packed weights. The broadcasts are kept apart
 * (SIMD_KEEP_APART): GCC otherwise shares each pixel between the taps kx and positions p that read it,
 * which needs more registers than the tile leaves and spills accumulators in every tap. */
CNNS_ALWAYS_INLINE void cnns_c2_tile(const int np, const float *x, int cin, int h, int w, int wo, const float *wt,
                                     const vf32 *bias, int q, float *out)
{
    vf32 acc[CNNS_C2NP][2];
    const float *src[CNNS_C2NP];
    for (int p = 0; p < np; p++) {
        acc[p][0] = bias[0], acc[p][1] = bias[1];
        src[p] = x + (size_t)((q + p) / wo) * w + (q + p) % wo;
    }
    const size_t cs = (size_t)h * w;
    for (int ci = 0; ci < cin; ci++)
        for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++, wt += 2 * CNNS_VL) {
                vf32 w0 = vf32_load(wt), w1 = vf32_load(wt + CNNS_VL);
                SIMD_KEEP_IN_REG(w0);
                SIMD_KEEP_IN_REG(w1);
                for (int p = 0; p < np; p++) {
                    vf32 xv = vf32_bcast(src[p] + ci * cs + ky * w + kx);
                    SIMD_KEEP_APART(xv);
                    acc[p][0] += xv * w0;
                    acc[p][1] += xv * w1;
                }
            }
    float *o = out + (size_t)q * 2 * CNNS_VL;
    for (int p = 0; p < np; p++)
        for (int v = 0; v < 2; v++)
            vf32_store(o + (size_t)(2 * p + v) * CNNS_VL, (vf32)((vi32)acc[p][v] & (acc[p][v] > 0.0f)));
}

/* Every output of one image: tiles of NP positions, then one of the rest (its size fixed at compile time). */
static inline void cnns_c2_image(const float *x, int cin, int h, int w, int ho, int wo, const float *wt,
                                 const vf32 *bias, float *out)
{
    const int n = ho * wo;
    int q = 0;
    for (; q + CNNS_C2NP <= n; q += CNNS_C2NP)
        cnns_c2_tile(CNNS_C2NP, x, cin, h, w, wo, wt, bias, q, out);
    switch (n - q) {
#if CNNS_C2NP > 5
    case 5: cnns_c2_tile(5, x, cin, h, w, wo, wt, bias, q, out); break;
#endif
#if CNNS_C2NP > 4
    case 4: cnns_c2_tile(4, x, cin, h, w, wo, wt, bias, q, out); break;
#endif
    case 3: cnns_c2_tile(3, x, cin, h, w, wo, wt, bias, q, out); break;
    case 2: cnns_c2_tile(2, x, cin, h, w, wo, wt, bias, q, out); break;
    case 1: cnns_c2_tile(1, x, cin, h, w, wo, wt, bias, q, out); break;
    default: break;
    }
}

/* The 2x2 pool of one image's outputs (cnns_c2_tile's layout), each window's four positions a vector
 * of L channels each: values and winners of half hf (channels hf L ..) at window i pw + j of the
 * half's tbuf and tidx (windows x L). */
static inline void cnns_c2_pool(const float *out, int ho, int wo, float *tbuf, float *tidx, size_t pooled)
{
    const int ph = ho / 2, pw = wo / 2;
    for (int i = 0; i < ph; i++)
        for (int j = 0; j < pw; j++)
            for (int hf = 0; hf < 2; hf++) {
                const float *o = out + ((size_t)(2 * i) * wo + 2 * j) * 2 * CNNS_VL + hf * CNNS_VL;
                const size_t row = (size_t)wo * 2 * CNNS_VL;
                const vf32 r[4] = {vf32_load(o), vf32_load(o + 2 * CNNS_VL), vf32_load(o + row),
                                   vf32_load(o + row + 2 * CNNS_VL)};
                vf32 m;
                vi32 idx;
                cnnp_tournament(r, &m, &idx);
                const size_t at = hf * pooled + (size_t)(i * pw + j) * CNNS_VL;
                vf32_store(tbuf + at, m);
                vf32_store(tidx + at, (vf32)idx);
            }
}

/* Images b0..b1-1 (cnns_conv2_channel_lanes' shape): p and arg as cnns_conv_pool_forward_range gives
 * them. Every tap reads inside the image, so no image needs a padded copy. */
static inline void cnns_c2_pool_forward_range(const cnn_conv *c, const float *x, const float *W, const float *bias,
                                              float *p, uint8_t *arg, int b0, int b1, float *area)
{
    const cnns_c2 g = cnns_c2_of(c);
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), taps = c->cin * 9;
    const size_t in = (size_t)c->cin * c->h * c->w, np = (size_t)(ho / 2) * (size_t)(wo / 2);
    const size_t out = (size_t)c->cout * np;
    float *o = area, *tbuf = o + g.out, *tidx = tbuf + 2 * g.pooled, *wt = tidx + 2 * g.pooled;
    vf32 bv[2];
    cnns_pack_channel_lanes(W, bias, c->cout, taps, wt, bv);
    for (int b = b0; b < b1; b++) {
        const float *xb = x + (size_t)b * in;
        cnns_c2_image(xb, c->cin, c->h, c->w, ho, wo, wt, bv, o);
        cnns_c2_pool(o, ho, wo, tbuf, tidx, g.pooled);
        for (int hf = 0; hf < 2; hf++) {
            const size_t e = (size_t)b * out + (size_t)hf * CNNS_VL * np;
            cnns_untranspose(tbuf + hf * g.pooled, tidx + hf * g.pooled, (int)np, (int)np, p + e, arg + e);
        }
    }
}

#endif
