/*
 * kernels/cnn/cnn_conv1_simd.h: conv1's shape (one input channel, 3 x 3) fused with its 2x2 max pool at
 * AVX2: the forward with the output channels as the lanes, the weight gradient with pooling windows as
 * the lanes. Included by cnn_simd.h; internal to kernels/cnn.
 *
 * Forward (cnns_conv1_pool_image, where cout = L): each pooling window's four positions are four
 * accumulators of the L channels, each tap an FMA of a broadcast input pixel and the tap's weights, then
 * the ReLU and the pool's tournament in registers, the pooled values transposed into the channel planes
 * L windows at a time, and at L = 8 the winners put in bytes without a transpose (cnns_arg8).
 *
 * Weight gradient (cnns_c1_wgrad_range): the image is split into its four phases, x[2r + pr][2c + pc]
 * for pr, pc in {0, 1}, each a plane with row stride s = pw + 1. Window (i, j)'s position (dy, dx) under
 * tap (ky, kx) reads input row 2i + dy + ky, column 2j + dx + kx: phase ((dy + ky) & 1, (dx + kx) & 1)
 * at row i + ((dy + ky) >> 1), column j + ((dx + kx) >> 1). So for L windows j..j+L-1 of a pooled row
 * the inputs of all four positions under all nine taps are 16 unaligned vector loads from L1 (input row
 * 2i + r, column 2j + c for r, c in 0..3), each loaded once for its up to 9 FMAs. Per channel, dz (the
 * pooled gradient where the pooled value is > 0) is read straight from dp's plane and selected into the
 * four positions by the winner, and 9 accumulators, one per tap, sum the products; a row's vectors
 * start at 0, L, 2L, ... and the last one at pw - L, with the lanes the one before covers masked off (16
 * lanes for a row's 13 windows at 28 x 28). One image's sums stay in registers and are added to the
 * range's in the area. The channel-lanes form of the weight gradient (the forward's mirror image) takes
 * a broadcast input pixel for each FMA, 36 per window, and reaches a quarter of the FMA peak in the
 * training step; this form half.
 *
 * The forward keeps the channel lanes: the windows as the lanes there (a tile of 3 channels x the 4
 * positions, the weights as broadcast vectors in L1; stored straight into p's planes, through an
 * image's block in L1, or with the windows laid out along the whole image at i s + j, 169 of 184 lanes
 * used, and copied into the planes) are as fast with the data in cache and slower with p and arg not in
 * cache, as in the training step.
 */
#ifndef SL_KERNELS_CNN_CONV1_SIMD_H
#define SL_KERNELS_CNN_CONV1_SIMD_H

/* The taps' and positions' loops unrolled whole: each of the 16 input vectors then has its offset fixed
 * at compile time from the phase plane and row stride (GCC's own unrolling stops short of 36 FMAs). */
#define CNNS_UNROLL _Pragma("GCC unroll 16")

/* ---- forward ----------------------------------------------------------------------------------------- */

/* conv1's shape (one input channel, L output channels, 3 x 3) fused with its pool, with the output
 * channels as the lanes: each 2x2 window's four positions are four accumulators, each tap an FMA of a
 * broadcast input and the tap's weights (one vector), then the ReLU and the pool's tournament on the
 * four (the same winners as cnnp_windows'), all in registers: every lane useful (the position-lanes tile
 * computes 736 lanes for 676 outputs), no output plane written and read back. The pooled values and
 * winners go to tbuf (windows x L) and from there into p's and arg's channel planes. */
#ifndef CNNS_C1W
#define CNNS_C1W 1 /* windows at a time (cnns_conv1_windows) */
#endif
static inline int cnns_conv1_channel_lanes(const cnn_conv *c) { return c->cin == 1 && c->cout == CNNS_VL && c->k == 3; }

/* v[0..L-1] transposed in place (lane l of v[k] <-> lane k of v[l]): log2 L rounds of zips. */
CNNS_ALWAYS_INLINE void cnns_transpose(vf32 *v)
{
    for (int round = 1; round < CNNS_VL; round *= 2) {
        vf32 t[CNNS_VL];
        for (int k = 0; k < CNNS_VL / 2; k++) {
            t[2 * k] = cnns_zip(v[k], v[k + CNNS_VL / 2], 0);
            t[2 * k + 1] = cnns_zip(v[k], v[k + CNNS_VL / 2], 1);
        }
        for (int k = 0; k < CNNS_VL; k++)
            v[k] = t[k];
    }
}

#if CNNS_VL == 8
typedef uint64_t cnns_vu64 __attribute__((vector_size(32)));
/* The winners u[k] of 8 windows (k), each a vector of the 8 channels' (0..3), as bytes into arg, channel
 * co's 8 at co ld: 4 windows shifted into the bytes of each lane, then the two halves' lanes interleaved
 * (channel co's 8 bytes one 64-bit element), 14 vector operations and 8 stores where a transpose and
 * 8 narrowings take 64. */
CNNS_ALWAYS_INLINE void cnns_arg8(const vf32 *u, uint8_t *arg, size_t ld)
{
    const vi32 a = (vi32)u[0] | (vi32)u[1] << 8 | (vi32)u[2] << 16 | (vi32)u[3] << 24;
    const vi32 b = (vi32)u[4] | (vi32)u[5] << 8 | (vi32)u[6] << 16 | (vi32)u[7] << 24;
    const cnns_vu64 lo = (cnns_vu64)vf32_shuffle2((vf32)a, (vf32)b, (vi32){0, 8, 1, 9, 4, 12, 5, 13}); /* 0 1 4 5 */
    const cnns_vu64 hi = (cnns_vu64)vf32_shuffle2((vf32)a, (vf32)b, (vi32){2, 10, 3, 11, 6, 14, 7, 15}); /* 2 3 6 7 */
    const int at_lo[4] = {0, 1, 4, 5}, at_hi[4] = {2, 3, 6, 7};
    for (int e = 0; e < 4; e++) {
        uint64_t l = lo[e], h = hi[e];
        memcpy(arg + (size_t)at_lo[e] * ld, &l, 8);
        memcpy(arg + (size_t)at_hi[e] * ld, &h, 8);
    }
}
#endif

/* The weights and bias of the kernels with the output channels as the lanes: W (cout x taps, OIHW)
 * transposed to taps x cout (tap t's cout weights at wt + t cout) and the bias as cout / L vectors (0
 * without one); cout a multiple of L. */
static inline void cnns_pack_channel_lanes(const float *W, const float *bias, int cout, int taps, float *wt, vf32 *bv)
{
    for (int t = 0; t < taps; t++)
        for (int co = 0; co < cout; co++)
            wt[(size_t)t * cout + co] = W[(size_t)co * taps + t];
    for (int co = 0; co < cout; co++)
        bv[co / CNNS_VL][co % CNNS_VL] = bias ? bias[co] : 0.0f;
}

/* tbuf and tidx (windows x L channels, n windows, a multiple of L readable) into the planes p and arg
 * (channel co's window at at co np + at): L windows at a time by a transpose, the last ones lane by lane. */
static inline void cnns_untranspose(const float *tbuf, const float *tidx, int n, int np, float *p, uint8_t *arg)
{
    int at = 0;
    for (; at + CNNS_VL <= n; at += CNNS_VL) {
        vf32 v[CNNS_VL], u[CNNS_VL];
        for (int k = 0; k < CNNS_VL; k++)
            v[k] = vf32_load(tbuf + (size_t)(at + k) * CNNS_VL), u[k] = vf32_load(tidx + (size_t)(at + k) * CNNS_VL);
        cnns_transpose(v);
        for (int co = 0; co < CNNS_VL; co++)
            vf32_store(p + (size_t)co * np + at, v[co]);
#if CNNS_VL == 8
        cnns_arg8(u, arg + at, (size_t)np);
#else
        cnns_transpose(u);
        for (int co = 0; co < CNNS_VL; co++)
            cnns_narrow((vi32)u[co], arg + (size_t)co * np + at);
#endif
    }
    for (; at < n; at++)
        for (int co = 0; co < CNNS_VL; co++) {
            p[(size_t)co * np + at] = tbuf[(size_t)at * CNNS_VL + co];
            arg[(size_t)co * np + at] = (uint8_t)((const int32_t *)tidx)[(size_t)at * CNNS_VL + co];
        }
}

/* nw windows from (i, j) along a pooled row: 4 nw accumulators, taps outermost, each tap's weights one
 * load from L1 used by every accumulator, instead of the 9 weight vectors held in registers (with them,
 * at AVX2, one thread at batch 512: 2.2 ms for conv1's forward; taps outermost 1.7). nw = 1 measured
 * best: 2 and 3 windows (8 and 12 accumulators) were no faster than the 9 registers. */
CNNS_ALWAYS_INLINE void cnns_conv1_windows(const int nw, const float *x, int w, int i, int j, int pw, const vf32 *wv,
                                           vf32 bias, float *tbuf, float *tidx)
{
    vf32 acc[3][4];
    for (int n = 0; n < nw; n++)
        for (int d = 0; d < 4; d++)
            acc[n][d] = bias;
    const float *s = x + (size_t)(2 * i) * w + 2 * j;
    for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
            const vf32 wt = wv[ky * 3 + kx];
            for (int n = 0; n < nw; n++)
                for (int d = 0; d < 4; d++)
                    acc[n][d] += vf32_bcast(s + (ky + (d >> 1)) * w + 2 * n + kx + (d & 1)) * wt;
        }
    for (int n = 0; n < nw; n++) {
        vf32 r[4];
        for (int d = 0; d < 4; d++)
            r[d] = (vf32)((vi32)acc[n][d] & (acc[n][d] > 0.0f));
        vf32 m;
        vi32 idx;
        cnnp_tournament(r, &m, &idx);
        const size_t at = (size_t)(i * pw + j + n) * CNNS_VL;
        vf32_store(tbuf + at, m);
        vf32_store(tidx + at, (vf32)idx);
    }
}

static inline void cnns_conv1_pool_image(const cnn_conv *c, const float *x, const vf32 *wv, vf32 bias, float *p,
                                         uint8_t *arg, float *tbuf, float *tidx)
{
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), ph = ho / 2, pw = wo / 2, w = c->w;
    for (int i = 0; i < ph; i++) {
        int j = 0;
        for (; j + CNNS_C1W <= pw; j += CNNS_C1W)
            cnns_conv1_windows(CNNS_C1W, x, w, i, j, pw, wv, bias, tbuf, tidx);
        for (; j < pw; j++)
            cnns_conv1_windows(1, x, w, i, j, pw, wv, bias, tbuf, tidx);
    }
    cnns_untranspose(tbuf, tidx, ph * pw, ph * pw, p, arg);
}

/* Images b0..b1-1 (cnns_conv1_channel_lanes' shape): p and arg as cnns_conv_pool_forward_range gives
 * them; area: the windows' values, then their winners. */
static inline void cnns_c1_pool_forward_range(const cnn_conv *c, const float *x, const float *W,
                                              const float *bias, float *p, uint8_t *arg, int b0, int b1,
                                              float *area)
{
    const size_t in = (size_t)c->h * c->w, plane = (size_t)(cnn_conv_ho(c) / 2) * (size_t)(cnn_conv_wo(c) / 2);
    const size_t out = (size_t)c->cout * plane;
    float wt[9 * CNNS_VL];
    vf32 wv[9], bv;
    cnns_pack_channel_lanes(W, bias, CNNS_VL, 9, wt, &bv);
    for (int t = 0; t < 9; t++)
        wv[t] = vf32_load(wt + t * CNNS_VL);
    for (int b = b0; b < b1; b++)
        cnns_conv1_pool_image(c, x + (size_t)b * in, wv, bv, p + (size_t)b * out, arg + (size_t)b * out, area,
                              area + cnns_up(plane, CNNS_VL) * CNNS_VL);
}

/* ---- weight gradient --------------------------------------------------------------------------------- */

/* Where the windows-as-lanes weight gradient takes conv1's shape: AVX2 (8 lanes, 16 registers, FMA).
 * AVX-512 keeps the position lanes (not measured there), and so does x86-64-v2: without FMA its
 * products rounded apart, in an order other than the unfused backward's, part from that one's by more
 * than the fused test's 1e-6 of the largest element (2.9e-6 on one of conv1's dw). */
#if defined(__AVX2__) && defined(__FMA__) && CNNS_VL == 8
#define CNNS_C1_WINDOWS 1
#else
#define CNNS_C1_WINDOWS 0
#endif
static inline int cnns_conv1_window_lanes(const cnn_conv *c) { return CNNS_C1_WINDOWS && c->cin == 1 && c->k == 3; }

/* The weight gradient's geometry of one image, and the parts of the work area (floats, each a multiple of 16): the
 * partial dw and db first (cnns_reduce reads them there), the four phases, the accumulators (10 vectors
 * per channel: 9 taps and db). */
typedef struct cnns_c1 {
    int ph, pw, s;     /* pooled rows and columns, the phases' row stride */
    size_t plane;      /* floats per phase */
    size_t part, phases, acc;
} cnns_c1;

static inline cnns_c1 cnns_c1_of(const cnn_conv *c)
{
    cnns_c1 g;
    const size_t L = CNNS_VL;
    g.ph = cnn_conv_ho(c) / 2, g.pw = cnn_conv_wo(c) / 2, g.s = g.pw + 1;
    /* rows 0..ph, and what a row's vector reads past the last one (L + 1 columns when pw < L) */
    g.plane = cnns_up((size_t)(g.ph + 1) * g.s + L + 1, 16);
    g.part = cnns_up(10 * (size_t)c->cout, 16);
    g.phases = 4 * g.plane;
    g.acc = 10 * (size_t)c->cout * L;
    return g;
}

static inline size_t cnns_c1_floats(const cnn_conv *c)
{
    const cnns_c1 g = cnns_c1_of(c);
    return g.part + g.phases + g.acc;
}

/* The starts of a row's vectors: 0, L, 2L, ..., the last at pw - L when that overlaps (0 when pw < L). */
static inline int cnns_c1_at(const cnns_c1 *g, int j0)
{
    return g->pw >= CNNS_VL && j0 + CNNS_VL > g->pw ? g->pw - CNNS_VL : j0;
}

/* The image's rows 0..ph of each phase, at r s + c for c < s (every element an input pixel: 2 s <= w,
 * 2 ph + 1 <= h - 1), by vectors of L columns (the last one overlapping) and an even/odd split; the
 * planes' tails past (ph + 1) s are the caller's (zeros, cnns_c1_tails). */
static inline void cnns_c1_phases(const cnns_c1 *g, const float *x, int w, float *xs)
{
    vi32 even, odd;
    for (int l = 0; l < CNNS_VL; l++)
        even[l] = 2 * l, odd[l] = 2 * l + 1;
    for (int pr = 0; pr < 2; pr++)
        for (int r = 0; r <= g->ph; r++) {
            const float *row = x + (size_t)(2 * r + pr) * w;
            float *e = xs + (size_t)(2 * pr) * g->plane + (size_t)r * g->s, *o = e + g->plane;
            if (g->s < CNNS_VL) {
                for (int c = 0; c < g->s; c++)
                    e[c] = row[2 * c], o[c] = row[2 * c + 1];
                continue;
            }
            for (int c0 = 0; c0 < g->s; c0 += CNNS_VL) {
                const int c = c0 + CNNS_VL > g->s ? g->s - CNNS_VL : c0;
                const vf32 a = vf32_load(row + 2 * c), b = vf32_load(row + 2 * c + CNNS_VL);
                vf32_store(e + c, vf32_shuffle2(a, b, even));
                vf32_store(o + c, vf32_shuffle2(a, b, odd));
            }
        }
}

static inline void cnns_c1_tails(const cnns_c1 *g, float *xs)
{
    const size_t used = (size_t)(g->ph + 1) * g->s;
    for (int f = 0; f < 4; f++)
        memset(xs + f * g->plane + used, 0, (g->plane - used) * sizeof(float));
}

/* Input vector of phase row offset r >> 1, column offset c >> 1 of phase (r & 1, c & 1), for the
 * windows from lane q (= i s + j) of the phases: input row 2i + r, column 2j + c, which position (dy, dx)
 * of a window reads under tap (r - dy, c - dx). */
CNNS_ALWAYS_INLINE vf32 cnns_c1_at_rc(const cnns_c1 *g, const float *xs, int r, int c, int q)
{
    return vf32_load(xs + (size_t)((r & 1) * 2 + (c & 1)) * g->plane + (size_t)(r >> 1) * g->s + (c >> 1) + q);
}

/* Channel co of one image (pv, arg, dp at the channel's plane): its 9 taps' sums added to acc_io (9
 * vectors), db's to acc_io[9]. */
CNNS_ALWAYS_INLINE void cnns_c1_wgrad_channel(const cnns_c1 *g, const float *xs, const float *pv,
                                              const uint8_t *arg, const float *dp, vf32 *acc_io)
{
    vf32 acc[9] = {{0}}, db = {0};
    vi32 lane;
    for (int l = 0; l < CNNS_VL; l++)
        lane[l] = l;
    for (int i = 0; i < g->ph; i++)
        for (int j0 = 0; j0 < g->pw; j0 += CNNS_VL) {
            const int j = cnns_c1_at(g, j0);
            const size_t e = (size_t)i * g->pw + (size_t)j;
            vf32 z;
            vi32 a;
            if (g->pw >= CNNS_VL) {
                z = (vf32)((vi32)vf32_load(dp + e) & (vf32_load(pv + e) > 0.0f) & (lane >= j0 - j));
                a = cnns_widen(arg + e);
            } else { /* a short row: its windows only (the loads would pass the batch's end) */
                z = (vf32){0}, a = (vi32){0};
                for (int l = 0; l < g->pw; l++)
                    z[l] = pv[e + l] > 0.0f ? dp[e + l] : 0.0f, a[l] = arg[e + l];
            }
            db += z;
            const int q = i * g->s + j;
            vf32 zd[4];
            for (int d = 0; d < 4; d++)
                zd[d] = (vf32)((vi32)z & (a == d));
            CNNS_UNROLL for (int r = 0; r < 4; r++)
                CNNS_UNROLL for (int c = 0; c < 4; c++) {
                    vf32 xv = cnns_c1_at_rc(g, xs, r, c, q);
                    SIMD_KEEP_IN_REG(xv);
                    CNNS_UNROLL for (int d = 0; d < 4; d++) {
                        const int ky = r - (d >> 1), kx = c - (d & 1);
                        if (ky >= 0 && ky <= 2 && kx >= 0 && kx <= 2)
                            acc[ky * 3 + kx] += zd[d] * xv;
                    }
                }
        }
    for (int t = 0; t < 9; t++)
        acc_io[t] += acc[t];
    acc_io[9] += db;
}

CNNS_ALWAYS_INLINE void cnns_c1_wgrad_image(const cnns_c1 *g, int cout, int w, const float *x, const float *pv,
                                            const uint8_t *arg, const float *dp, float *xs, vf32 *acc)
{
    const size_t np = (size_t)g->ph * g->pw;
    cnns_c1_phases(g, x, w, xs);
    for (int co = 0; co < cout; co++)
        cnns_c1_wgrad_channel(g, xs, pv + co * np, arg + co * np, dp + co * np, acc + 10 * co);
}

/* Images b0..b1-1: the partial dw (cout x 9) and db at the start of area, from dp, pv and arg (the
 * pooled gradient, values and winners); as cnns_pool_conv_backward_range without dx. The study's
 * 28 x 28 is a case of its own, so that the 16 input vectors' offsets are constants. */
static inline void cnns_c1_wgrad_range(const cnn_conv *c, const float *x, const float *pv, const uint8_t *arg,
                                       const float *dp, int b0, int b1, float *area)
{
    const cnn_conv c28 = {.cin = 1, .h = 28, .w = 28, .cout = c->cout, .k = 3};
    const int study = c->h == 28 && c->w == 28;
    const cnns_c1 g = cnns_c1_of(c), g28 = cnns_c1_of(&c28);
    float *part = area, *xs = area + g.part;
    vf32 *acc = (vf32 *)(void *)(xs + g.phases); /* 9 taps, then db, per channel */
    const size_t in = (size_t)c->h * c->w, out = (size_t)c->cout * g.ph * g.pw;
    cnns_c1_tails(&g, xs);
    for (int i = 0; i < 10 * c->cout; i++)
        acc[i] = (vf32){0};
    for (int b = b0; b < b1; b++) {
        const size_t e = (size_t)b * out;
        if (study)
            cnns_c1_wgrad_image(&g28, c->cout, 28, x + (size_t)b * in, pv + e, arg + e, dp + e, xs, acc);
        else
            cnns_c1_wgrad_image(&g, c->cout, c->w, x + (size_t)b * in, pv + e, arg + e, dp + e, xs, acc);
    }
    for (int co = 0; co < c->cout; co++) {
        for (int t = 0; t < 9; t++)
            part[(size_t)co * 9 + t] = vf32_hsum(acc[10 * co + t]);
        part[(size_t)9 * c->cout + co] = vf32_hsum(acc[10 * co + 9]);
    }
}

#endif
