/*
 * kernels/cnn/cnn_simd.h: the vector convolutions of simd.c (one thread, the whole batch) and omp.c (each
 * thread a slice of the batch), through cnn_simd_conv.c: the forward here, the backward in
 * cnn_simd_bwd.h. Internal to kernels/cnn; everything is static inline.
 *
 * 8 floats a vector at AVX2 and at AVX-512 alike (SIMD_MAX_BYTES, kernels/simd.h): the layers have 8 and
 * 16 output channels, so the kernels with channels as the lanes (conv1's forward and weight gradient,
 * conv2's forward, cnn_conv1_simd.h and cnn_conv2_simd.h) fill every lane of a 256-bit vector, where at
 * 512 bits conv1 would fill half and the position-lanes forms that took their place at AVX-512 computed
 * the wide rows' dropped columns and the padding's zeros: at batch 512 the whole training step ran about
 * half as fast at AVX-512 as at AVX2 (Zen 4 and an Intel Xeon with full-width AVX-512 alike). With GCC
 * the AVX-512 copy is compiled for AVX2 (cnn_simd_conv.c says why); another compiler gets AVX-512VL's 32
 * registers, with the tile shapes below. The dense layers (cnn_dense_simd.h, simd.c and omp.c) run at the
 * full width.
 *
 * Forward, one image at a time, as a direct convolution over "wide" positions: output position
 * q = oy * w + ox runs over whole input rows (ox < w, not just ox < wo), so that the input under tap
 * (ci, ky, kx) of the positions q..q+L-1 is the contiguous run x[ci][ky][kx + q ..]: one unaligned vector
 * load, no im2col copy. The wo..w-1 columns are computed and dropped when the wide result is copied into
 * y (cnns_compact): 121 of 144 lanes are kept for conv2 (11 x 11 of 11 x 13, 9 vectors of 16), 676 of 736
 * for conv1. The tile keeps MR output channels x NV vectors of positions in registers; each tap is NV
 * loads, MR broadcasts of a weight and MR * NV independent FMAs (AVX-512: 8 x 3 = 24 accumulators of 32
 * registers; AVX2: 4 x 2 = 8 of 16, cnns_tile_k says why). Bias is the accumulators' start, ReLU is applied before the store.
 * The other way, im2col + the same register-blocked product, measured slower here: kernels/cnn/bench/.
 *
 * Fused with the pool (cnns_conv_pool_forward_range): the wide output is pooled from the work area, and
 * with FMA and 8-float vectors (AVX2, AVX-512) conv1's shape (one input channel, 3 x 3) has kernels of
 * its own, forward and weight gradient (cnn_conv1_simd.h), and so has conv2's forward (16 output
 * channels, two vectors: cnn_conv2_simd.h).
 */
#ifndef SL_KERNELS_CNN_SIMD_H
#define SL_KERNELS_CNN_SIMD_H

#ifndef SIMD_MAX_BYTES
#define SIMD_MAX_BYTES 32 /* this file's first comment says why */
#endif
#include "cnn_kernels.h"
#include "cnn_pool_simd.h"
#include "simd.h"
#if SIMD_BYTES > 32
#error "cnn_simd.h: include it before anything else that includes simd.h (its vectors are 32 bytes at most)"
#endif

#include <stddef.h>
#include <string.h>

#define CNNS_VL VF32_LANES
/* The position-lanes tiles' shapes for 32 registers of 16 floats; with 8-float vectors, even with 32
 * registers, AVX2's: there 8 x 3 (the forward) and 3 x 3 x 3 (the position-lanes weight gradient)
 * spilled in every tap, and conv1's unfused forward and backward took 3 to 4 times as long as with 4 x 2
 * and 2 x 2 x 3 (kernels/cnn/bench/cnn_layers.c, one thread, batch 512, Zen 4, AVX-512VL). */
#define CNNS_BIG_TILES (SIMD_NREGS >= 32 && CNNS_VL >= 16)
#ifndef CNNS_MR
#define CNNS_MR (CNNS_BIG_TILES ? 8 : 4) /* forward tile: output channels x ... */
#endif
#ifndef CNNS_NV
#define CNNS_NV (CNNS_BIG_TILES ? 3 : 2) /* ... vectors of positions (cnns_tile_k says why) */
#endif
#ifndef CNNS_NB
#define CNNS_NB 4 /* images per weight-gradient pass (cnn_simd_bwd.h) */
#endif
#define CNNS_CL (CNNS_VL >= 16 ? 1 : 2) /* vectors of output channels of a channel-lanes tile */
#define CNNS_CW (CNNS_CL * CNNS_VL)     /* its output channels: 16 at AVX2 and AVX-512 */
/* The input gradient by scatter at AVX2 and AVX-512 (8-float vectors), where it was measured, by gather
 * (the full correlation) at every other level: cnns_dx_image (-Dc_args=-DCNNS_DX_SCATTER=0 keeps the
 * gather). */
#ifndef CNNS_DX_SCATTER
#if defined(__AVX2__) && CNNS_VL == 8
#define CNNS_DX_SCATTER 1
#else
#define CNNS_DX_SCATTER 0
#endif
#endif


#define CNNS_ALWAYS_INLINE static inline __attribute__((always_inline))

static inline size_t cnns_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

/* ---- the direct convolution over wide positions ---------------------------------------------------- */

/* One image's convolution as the tile sees it: input element (ci, row, col) at src[ci cs + row rs + col],
 * tap (ci, ky, kx) of position q at src + ci cs + ky rs + kx + q; weights packed by cnns_pack_w; output
 * channel co, position q at out[co ldo + q], nq vectors of positions (ldo >= nq L). */
typedef struct cnns_op {
    const float *src;
    size_t cs, rs;
    int cin, k, cout, nq;
    const float *wp;   /* packed weights */
    const float *bias; /* NULL: 0 */
    int relu;
    float *out;
    size_t ldo;
} cnns_op;

/* Rows of the tile at output channel co: MR, then 4, 2, 1 for the tail (as few tiles as possible). */
static inline int cnns_rows_at(int co, int cout)
{
    int left = cout - co;
    return left >= CNNS_MR ? CNNS_MR : left >= 4 ? 4 : left >= 2 ? 2 : 1;
}

/* Weights packed per tile (rows co0..co0+mr-1 at wp + co0 K, tap t's mr weights adjacent), so that the
 * tile reads one pointer moving by mr per tap. flip: the backward-data weights, W'[ci][co][ky][kx] =
 * W[co][ci][k-1-ky][k-1-kx] (out = cin rows, taps over cout); otherwise W itself (out = cout rows). */
static inline void cnns_pack_w(const float *W, int cout, int cin, int k, int flip, float *wp)
{
    const int kk = k * k, rows = flip ? cin : cout, taps = (flip ? cout : cin) * kk;
    for (int r0 = 0, mr; r0 < rows; r0 += mr) {
        mr = cnns_rows_at(r0, rows);
        for (int t = 0; t < taps; t++)
            for (int i = 0; i < mr; i++) {
                int r = r0 + i, a = t / kk, tap = t % kk; /* a: the tap's channel */
                wp[(size_t)r0 * taps + (size_t)t * mr + i] =
                    flip ? W[((size_t)a * cin + r) * kk + (size_t)(kk - 1 - tap)] : W[(size_t)r * taps + t];
            }
    }
}

/* Output channels co..co+mr-1 x positions q..q+nv L-1, every tap summed in registers. kk: the kernel
 * size when known at compile time (3: the study's; the kx loop is then unrolled), else 0 (o->k).
 * AVX-512 (32 registers): per tap the nv input vectors are loaded into registers, then each weight is
 * an FMA's embedded broadcast (8 x 3: 24 accumulators + 3 inputs). AVX2 (16 registers, and an FMA
 * cannot take a broadcast operand): the mr weights are broadcast into registers first, then each input
 * vector is loaded once and used by its mr FMAs (4 x 2: 8 accumulators + 4 weights + 1 input = 13
 * registers, 6 loads per 8 FMAs). Tiles that fill all 16 registers (4 x 3 either way round, or 2 x 6)
 * leave GCC none for scheduling the unrolled taps, and it spills inputs or accumulators to the stack in
 * every tap: each was slower at AVX2 on Zen 3 than 4 x 2 (conv2's forward at batch 512: 4 x 3 with
 * the inputs loaded first 3.4 ms, weights first 4.5; 2 x 6 2.9; 2 x 5 2.4; 4 x 2 2.5; one thread).
 * SIMD_KEEP_IN_REG keeps GCC from folding a loaded vector into each FMA that uses it (one load per use). */
CNNS_ALWAYS_INLINE void cnns_tile_k(const int kk, const int mr, const int nv, const cnns_op *o, int co, int q)
{
    const int k = kk ? kk : o->k;
    vf32 acc[CNNS_MR][CNNS_NV];
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++)
            acc[i][v] = o->bias ? vf32_splat(o->bias[co + i]) : (vf32){0};
    const float *wp = o->wp + (size_t)co * o->cin * k * k;
    for (int ci = 0; ci < o->cin; ci++)
        for (int ky = 0; ky < k; ky++) {
            const float *s = o->src + (size_t)ci * o->cs + (size_t)ky * o->rs + q;
            for (int kx = 0; kx < k; kx++, wp += mr) {
#if CNNS_BIG_TILES
                vf32 xv[CNNS_NV];
                for (int v = 0; v < nv; v++) {
                    xv[v] = vf32_load(s + kx + v * CNNS_VL);
                    SIMD_KEEP_IN_REG(xv[v]);
                }
                for (int i = 0; i < mr; i++)
                    for (int v = 0; v < nv; v++)
                        acc[i][v] += wp[i] * xv[v];
#else
                vf32 wv[CNNS_MR];
                for (int i = 0; i < mr; i++)
                    wv[i] = vf32_bcast(wp + i);
                for (int v = 0; v < nv; v++) {
                    vf32 xv = vf32_load(s + kx + v * CNNS_VL);
                    SIMD_KEEP_IN_REG(xv);
                    for (int i = 0; i < mr; i++)
                        acc[i][v] += wv[i] * xv;
                }
#endif
            }
        }
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++) {
            vf32 z = acc[i][v];
            if (o->relu)
                z = (vf32)((vi32)z & (z > 0.0f));
            vf32_store(o->out + (size_t)(co + i) * o->ldo + q + v * CNNS_VL, z);
        }
}

CNNS_ALWAYS_INLINE void cnns_tile(const int mr, const int nv, const cnns_op *o, int co, int q)
{
    if (o->k == 3)
        cnns_tile_k(3, mr, nv, o, co, q);
    else
        cnns_tile_k(0, mr, nv, o, co, q);
}

/* Every output channel of nv vectors of positions from q, the tail tiles' sizes fixed at compile time. */
CNNS_ALWAYS_INLINE void cnns_channels(const int nv, const cnns_op *o, int q)
{
    for (int co = 0, mr; co < o->cout; co += mr) {
        mr = cnns_rows_at(co, o->cout);
        if (mr == CNNS_MR)
            cnns_tile(CNNS_MR, nv, o, co, q);
#if CNNS_MR > 4
        else if (mr == 4)
            cnns_tile(4, nv, o, co, q);
#endif
        else if (mr == 2)
            cnns_tile(2, nv, o, co, q);
        else
            cnns_tile(1, nv, o, co, q);
    }
}

/* Every tile of the plane: whole tiles of NV vectors, then one of the nq mod NV left (its size fixed at
 * compile time). */
static inline void cnns_conv_wide(const cnns_op *o)
{
    int v = 0;
    for (; v + CNNS_NV <= o->nq; v += CNNS_NV)
        cnns_channels(CNNS_NV, o, v * CNNS_VL);
    switch (o->nq - v) {
#if CNNS_NV > 5
    case 5: cnns_channels(5, o, v * CNNS_VL); break;
    case 4: cnns_channels(4, o, v * CNNS_VL); break;
#endif
#if CNNS_NV > 3
    case 3: cnns_channels(3, o, v * CNNS_VL); break;
#endif
#if CNNS_NV > 2
    case 2: cnns_channels(2, o, v * CNNS_VL); break;
#endif
    case 1: cnns_channels(1, o, v * CNNS_VL); break;
    default: break;
    }
}

/* dst (nch x nr x n, contiguous) = the first n floats of each row of src (channel c, row r at
 * src + c lds + r ldr), by whole vectors: a row of n >= L ends with a vector aligned to its end, a shorter
 * row is stored whole and spills into the next rows' places, which their stores overwrite; only the last
 * rows, whose vector would pass dst's end, go lane by lane. src needs L readable floats past a row start. */
static inline void cnns_compact(float *dst, const float *src, int nch, int nr, int n, size_t lds, size_t ldr)
{
    const size_t total = (size_t)nch * nr * n;
    size_t at = 0;
    for (int c = 0; c < nch; c++)
        for (int r = 0; r < nr; r++, at += (size_t)n) {
            const float *s = src + (size_t)c * lds + (size_t)r * ldr;
            float *d = dst + at;
            if (n >= CNNS_VL) {
                int j = 0;
                for (; j + CNNS_VL < n; j += CNNS_VL)
                    vf32_store(d + j, vf32_load(s + j));
                vf32_store(d + n - CNNS_VL, vf32_load(s + n - CNNS_VL));
            } else if (at + CNNS_VL <= total)
                vf32_store(d, vf32_load(s));
            else
                for (int j = 0; j < n; j++)
                    d[j] = s[j];
        }
}

/* Lanes of a and b interleaved (a0 b0 a1 b1 ...): the first L (half 0) or the last L (half 1). */
static inline vf32 cnns_zip(vf32 a, vf32 b, int half)
{
    vi32 m;
    for (int l = 0; l < CNNS_VL; l++)
        m[l] = (half * CNNS_VL + l) / 2 + (l & 1) * CNNS_VL;
    return vf32_shuffle2(a, b, m);
}

typedef uint8_t cnns_vu8 __attribute__((vector_size(CNNS_VL))); /* L winners as bytes */

/* L winners as bytes widened to lanes, and lanes (0..255) narrowed to bytes: at AVX2 one vpmovzxbd, or
 * two packs and an unpack, where GCC's __builtin_convertvector goes lane by lane through general
 * registers (a dozen instructions and more per vector). */
#if defined(__AVX2__) && SIMD_BYTES == 32
CNNS_ALWAYS_INLINE vi32 cnns_widen(const uint8_t *p)
{
    return (vi32)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
}
CNNS_ALWAYS_INLINE void cnns_narrow(vi32 v, uint8_t *p)
{
    __m256i t = _mm256_packs_epi32((__m256i)v, (__m256i)v);
    t = _mm256_packus_epi16(t, t);
    _mm_storel_epi64((__m128i *)(void *)p,
                     _mm_unpacklo_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1)));
}
#else
CNNS_ALWAYS_INLINE vi32 cnns_widen(const uint8_t *p)
{
    cnns_vu8 b;
    memcpy(&b, p, sizeof b);
    return __builtin_convertvector(b, vi32);
}
CNNS_ALWAYS_INLINE void cnns_narrow(vi32 v, uint8_t *p)
{
    cnns_vu8 b = __builtin_convertvector(v, cnns_vu8);
    memcpy(p, &b, sizeof b);
}
#endif

#include "cnn_conv1_simd.h"
#include "cnn_conv2_simd.h"

/* ---- the per-thread work area -------------------------------------------------------------------- */

/* Whether the backward sums the weight gradient with output channels as the vector lanes (enough of
 * them to fill CW lanes) or with positions as the lanes (cnn_simd_bwd.h). */
static inline int cnns_channel_lanes(const cnn_conv *c) { return c->cout >= CNNS_CW; }

/* dz of one image in the forward's wide layout (row stride w, zero in the columns wo..w-1), each channel
 * a plane with k - 1 zero rows above and below and L zeros after, the planes after a margin of zeros:
 * read at the wide positions by the position-lanes weight gradient, and as the input of the backward
 * data convolution (cnn_simd_bwd.h), whose taps reach k - 1 rows and columns before a position. */
typedef struct cnns_dzw {
    size_t margin, plane, size; /* floats: before plane 0, per plane, in all (a multiple of 16) */
} cnns_dzw;

static inline cnns_dzw cnns_dzw_of(const cnn_conv *c)
{
    cnns_dzw z;
    const size_t k1 = (size_t)c->k - 1, w = (size_t)c->w, ho = (size_t)cnn_conv_ho(c);
    z.margin = cnns_up(k1 + 1, 16);
    z.plane = (ho + 2 * k1) * w + CNNS_VL;
    z.size = cnns_up(z.margin + (size_t)c->cout * z.plane, 16);
    return z;
}

/* Floats of each part (every one a multiple of 16, so each starts 64-byte aligned): the wide output, a
 * padded copy of an input image, the packed weights; for the backward also the partial dw and db, the
 * accumulators of the weight-gradient tiles, dz of CNNS_NB images transposed (channel lanes), dz of
 * CNNS_NB images (position lanes) or of one (channel lanes) in the wide layout, the wide input gradient. */
typedef struct cnns_area {
    size_t wide, xpad, wp, part, acc, dzt, dzw, dxwide;
    size_t dzts; /* floats of one image's dz transposed */
} cnns_area;

/* Floats per channel of the wide input gradient: its h w positions, rounded to whole vectors; the
 * scatter's last tile adds up to L + k - 2 past them (cnns_dx_image). */
static inline size_t cnns_dx_ldo(const cnn_conv *c)
{
    const size_t hw = (size_t)c->h * c->w;
    return CNNS_DX_SCATTER ? cnns_up(hw + CNNS_VL + (size_t)c->k - 2, CNNS_VL) : cnns_up(hw, CNNS_VL);
}

static inline cnns_area cnns_area_of(const cnn_conv *c)
{
    cnns_area a;
    const size_t L = CNNS_VL, k = (size_t)c->k, h = (size_t)c->h, w = (size_t)c->w, co = (size_t)c->cout;
    const size_t ho = (size_t)cnn_conv_ho(c), wo = (size_t)cnn_conv_wo(c), taps = (size_t)c->cin * k * k;
    a.wide = cnns_up(co * cnns_up(ho * w, L) + 2 * L, 16); /* + 2L: cnns_compact's and the pool's reads */
    /* an image + what the last tile reads past it: k - 1 columns and the vector rounding */
    a.xpad = cnns_up((size_t)c->cin * h * w + k + L, 16);
    a.wp = cnns_up(taps * co, 16);
    a.part = cnns_up(taps * co + co, 16);
    if (cnns_channel_lanes(c)) { /* dW^T (taps x channels); dz transposed (positions x channels) */
        a.acc = cnns_up(taps * cnns_up(co, CNNS_CW), 16);
        a.dzts = cnns_up(ho * wo * cnns_up(co, CNNS_CW), 16);
        a.dzt = CNNS_NB * a.dzts;
        a.dzw = cnns_dzw_of(c).size;
    } else { /* one vector per (tap, channel) */
        a.acc = cnns_up(taps * co * L, 16);
        a.dzts = a.dzt = 0;
        a.dzw = CNNS_NB * cnns_dzw_of(c).size;
    }
    a.dxwide = cnns_up((size_t)c->cin * cnns_dx_ldo(c) + L, 16);
    return a;
}

/* One thread's work area in floats (a multiple of 16): the forward and the backward use the same one. */
static inline size_t cnns_area_floats(const cnn_conv *c)
{
    cnns_area a = cnns_area_of(c);
    size_t fw = a.wide + a.xpad + a.wp;
    size_t bw = a.part + a.acc + a.dzt + a.dzw + a.dxwide + a.xpad + a.wp;
    size_t c1 = cnns_conv1_window_lanes(c) ? cnns_c1_floats(c) : 0;
    size_t c2 = cnns_conv2_channel_lanes(c) ? cnns_c2_floats(c) : 0;
    size_t n = fw > bw ? fw : bw;
    n = n > c1 ? n : c1;
    return n > c2 ? n : c2;
}

/* Image b of a batch of B at x (in floats each), read in place, except the batch's last: a tile reads
 * up to k - 1 + L floats past an image, which is the next image's start but past the end of x for the
 * last, so that one is read from a zero-padded copy in xpad (n floats). */
static inline const float *cnns_image(const float *x, int b, int B, size_t in, float *xpad, size_t n)
{
    const float *xb = x + (size_t)b * in;
    if (b != B - 1)
        return xb;
    memcpy(xpad, xb, in * sizeof(float));
    memset(xpad + in, 0, (n - in) * sizeof(float));
    return xpad;
}

/* ---- forward -------------------------------------------------------------------------------------- */

/* The forward's tile operand over one thread's work area (the wide output at its start, then the padded
 * last image xpad, then the packed weights, which this packs): bias, ReLU, wide output; o.src per image. */
static inline cnns_op cnns_fwd_op(const cnn_conv *c, const float *W, const float *bias, float *area)
{
    const cnns_area a = cnns_area_of(c);
    const size_t ldo = cnns_up((size_t)cnn_conv_ho(c) * c->w, CNNS_VL);
    float *wp = area + a.wide + a.xpad;
    cnns_pack_w(W, c->cout, c->cin, c->k, 0, wp);
    return (cnns_op){.cs = (size_t)c->h * c->w, .rs = (size_t)c->w, .cin = c->cin, .k = c->k, .cout = c->cout,
                     .nq = (int)(ldo / CNNS_VL), .wp = wp, .bias = bias, .relu = 1, .out = area, .ldo = ldo};
}

/* Images b0..b1-1 of a batch of B: y = relu(conv(x, W) + b), area: cnns_area_floats(c) floats. */
static inline void cnns_conv_forward_range(const cnn_conv *c, int B, const float *x, const float *W,
                                           const float *bias, float *y, int b0, int b1, float *area)
{
    if (b0 >= b1)
        return;
    const cnns_area a = cnns_area_of(c);
    const size_t in = (size_t)c->cin * c->h * c->w, out = cnn_conv_out(c);
    cnns_op o = cnns_fwd_op(c, W, bias, area);
    for (int b = b0; b < b1; b++) {
        o.src = cnns_image(x, b, B, in, area + a.wide, a.xpad);
        cnns_conv_wide(&o);
        cnns_compact(y + (size_t)b * out, area, c->cout, cnn_conv_ho(c), cnn_conv_wo(c), o.ldo, (size_t)c->w);
    }
}

/* Images b0..b1-1: p = the 2x2 max pool (pl) of relu(conv(x, W) + b), arg its winners, as
 * cnn_pool_forward would give from the convolution's output, which is pooled from the work area (L1 or
 * L2) and never written to memory: for conv1 at batch 512, 11 MB written and read again less. The wide
 * layout's row stride is w, and its columns past wo are never pooled (2 (wo/2) <= wo); the pool reads up
 * to 2L - 1 floats past a row's used part, inside the area's margin (cnns_area_of). */
static inline void cnns_conv_pool_forward_range(const cnn_conv *c, const cnn_pool *pl, int B, const float *x,
                                                const float *W, const float *bias, float *p, uint8_t *arg,
                                                int b0, int b1, float *area)
{
    (void)pl; /* its dims are the convolution's output: c->cout x ho x wo */
    if (b0 >= b1)
        return;
    if (cnns_conv1_channel_lanes(c)) {
        cnns_c1_pool_forward_range(c, x, W, bias, p, arg, b0, b1, area);
        return;
    }
    if (cnns_conv2_channel_lanes(c)) {
        cnns_c2_pool_forward_range(c, x, W, bias, p, arg, b0, b1, area);
        return;
    }
    const cnns_area a = cnns_area_of(c);
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c);
    const size_t in = (size_t)c->cin * c->h * c->w;
    const size_t plane = (size_t)(ho / 2) * (size_t)(wo / 2), out = (size_t)c->cout * plane;
    cnns_op o = cnns_fwd_op(c, W, bias, area);
    for (int b = b0; b < b1; b++) {
        o.src = cnns_image(x, b, B, in, area + a.wide, a.xpad);
        cnns_conv_wide(&o);
        for (int co = 0; co < c->cout; co++)
            cnnp_plane_strided(area + (size_t)co * o.ldo, ho, wo, (size_t)c->w, p + (size_t)b * out + co * plane,
                               arg + (size_t)b * out + co * plane);
    }
}

#endif
