/*
 * kernels/precision/prec_dp.h: the bf16 row's products by AVX512_BF16's vdpbf16ps (_mm256_dpbf16_ps in
 * the AVX2 and AVX-512 kernels: PREC_DP_BYTES below says why), forward and backward. Internal to
 * kernels/precision; bf16.c takes this path where prec_path(PT_BF16) says so (the CPU has AVX512_BF16,
 * by cpuid at run time) and its conversions (prec_gemm.h) elsewhere.
 *
 * One vdpbf16ps multiplies VL pairs of bf16 and adds both products of each pair to a float32 lane: per
 * instruction twice the multiply-adds of an FMA, and no conversion of either operand. The pair is two
 * consecutive reduction indices, so both operands are read as 32-bit words, each holding one pair:
 *   A(r, pp) = A[r ars + pp aps]   broadcast to every lane (one pair of row r)
 *   B(pp, c) = B[pp bps + c]       VL consecutive columns (the pair of each column)
 * The three products of a step in those terms (kp = pairs of the reduction):
 *   forward   Z = A_prev W       A: the stored activations (pairs along a row); B: W with its row pairs
 *                                interleaved (prec_pairs_offset, made by convert)
 *   gradient  dW = A^T D         A: the activations' row pairs interleaved (ws->ap, pairs along the batch);
 *                                B: D's row pairs interleaved in bf16 (ws->dp)
 *   delta     Dprev = D W^T      A: D in bf16 (ws->dq, pairs along a row); B: W^T's pairs (W's rows read
 *                                as words, transposed: prec_tpairs_offset, made by convert)
 * So this path also rounds the deltas to bf16 for the products (as frameworks' bf16 autocast does); their
 * sums (the biases' gradients) and every accumulation stay float32. A reduction of odd length is padded
 * with a zero partner. The tile: MR x NV vectors of C in registers (12 x 2 of 32: AVX512VL code has 32
 * registers at either width), each reduction step NV loads, MR broadcasts and MR NV dot products. A
 * 12 x 2 tile (fewer loads per dot product) was 7 % faster than 6 x 4 on layer 1 on Zen 4, where a
 * zmm vdpbf16ps issues at about half an FMA's rate: about the multiply-adds per cycle of float32 FMA,
 * so there this path gains through its halved operands and conversions more than its arithmetic.
 */
#ifndef SL_KERNELS_PREC_DP_H
#define SL_KERNELS_PREC_DP_H

#include "prec_gemm.h"

/* The dot products are compiled into the AVX2 and AVX-512 kernels of an x86-64 GCC or clang (the
 * target attribute below adds AVX512_BF16 to their functions alone); elsewhere this path does not exist
 * and prec_path never chooses it. */
#if defined(__x86_64__) && SIMD_BYTES >= 32 && (defined(__clang__) || __GNUC__ >= 10)
#define PREC_HAVE_DP_CODE 1
#else
#define PREC_HAVE_DP_CODE 0
#endif
/* The dot products' width: 256-bit in the AVX-512 kernels too (with AVX512VL's 32 registers). Measured
 * on Zen 4 (kernels/prec_step, thread CPU time, interleaved), the 256-bit path's step was faster than
 * the 512-bit one's (a zmm vdpbf16ps issues at about the rate of a ymm one there, and the zmm pair
 * interleave of convert costs more), and on Sapphire Rapids a ymm vdpbf16ps issues on two ports, a zmm
 * one on one: the same multiply-adds per cycle. -DPREC_DP_BYTES=64 builds the 512-bit path to compare. */
#ifndef PREC_DP_BYTES
#define PREC_DP_BYTES 32
#endif

#if PREC_HAVE_DP_CODE
#include <immintrin.h>

#define DP_TARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512bf16")))
#define DP_INLINE static inline __attribute__((always_inline)) DP_TARGET
#define DP_VL (PREC_DP_BYTES / 4)
#ifndef DP_MR /* -D to compare tiles */
#define DP_MR 12
#endif
#ifndef DP_NV
#define DP_NV 2
#endif

typedef uint32_t dp_vu32 __attribute__((vector_size(PREC_DP_BYTES)));
typedef float dp_vf __attribute__((vector_size(PREC_DP_BYTES)));
typedef int dp_vi __attribute__((vector_size(PREC_DP_BYTES)));
typedef uint16_t dp_vu16 __attribute__((vector_size(PREC_DP_BYTES / 2)));

/* Masked loads and stores only, in the tile: a column tail through memcpy would be a call, and a call
 * in the epilogue makes GCC spill every accumulator of every tile (kernels/mlp/mlp_simd.h's mlps_ld).
 * LOADM: words; LOADF / STOREF: floats; LOADH: halves widened to words; STOREH: words' low halves. */
#if PREC_DP_BYTES == 64
typedef __mmask16 dp_mask;
#define DP_DOT(acc, a, b) ((dp_vf)_mm512_dpbf16_ps((__m512)(acc), (__m512bh)(a), (__m512bh)(b)))
#define DP_LOADM(m, p) ((dp_vu32)_mm512_maskz_loadu_epi32((m), (p)))
#define DP_LOADF(m, p) ((dp_vf)_mm512_maskz_loadu_ps((m), (p)))
#define DP_STOREF(p, m, x) _mm512_mask_storeu_ps((p), (m), (__m512)(x))
#define DP_LOADH(m, p) ((dp_vu32)_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16((m), (p))))
#define DP_STOREH(p, m, x) _mm512_mask_cvtepi32_storeu_epi16((p), (m), (__m512i)(x))
/* (bf16(lo[j]), bf16(hi[j])) word by word: vcvtne2ps2bf16 (lo's halves low), then vpermw interleaves. */
DP_INLINE dp_vu32 dp_pair_round(dp_vf lo, dp_vf hi)
{
    const __m512i ix = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6,
                                        21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    return (dp_vu32)_mm512_permutexvar_epi16(ix, (__m512i)_mm512_cvtne2ps_pbh((__m512)hi, (__m512)lo));
}
#else
typedef __mmask8 dp_mask;
#define DP_DOT(acc, a, b) ((dp_vf)_mm256_dpbf16_ps((__m256)(acc), (__m256bh)(a), (__m256bh)(b)))
#define DP_LOADM(m, p) ((dp_vu32)_mm256_maskz_loadu_epi32((m), (p)))
#define DP_LOADF(m, p) ((dp_vf)_mm256_maskz_loadu_ps((m), (p)))
#define DP_STOREF(p, m, x) _mm256_mask_storeu_ps((p), (m), (__m256)(x))
#define DP_LOADH(m, p) ((dp_vu32)_mm256_cvtepu16_epi32(_mm_maskz_loadu_epi16((m), (p))))
#define DP_STOREH(p, m, x) _mm256_mask_cvtepi32_storeu_epi16((p), (m), (__m256i)(x))
DP_INLINE dp_vu32 dp_pair_round(dp_vf lo, dp_vf hi)
{
    const __m256i ix = _mm256_set_epi16(15, 7, 14, 6, 13, 5, 12, 4, 11, 3, 10, 2, 9, 1, 8, 0);
    return (dp_vu32)_mm256_permutexvar_epi16(ix, (__m256i)_mm256_cvtne2ps_pbh((__m256)hi, (__m256)lo));
}
#endif

typedef struct dp_op {
    const uint32_t *A;
    size_t ars, aps;
    const uint32_t *B;
    size_t bps;
    void *C;
    size_t ldc;
    int ct;              /* C's type: PT_F32 or PT_BF16 */
    int n, kp;           /* columns, reduction pairs */
    const float *bias;   /* C starts at bias[c] (NULL: 0) */
    int relu;            /* C = max(C, 0) at the end */
    const uint16_t *mask; /* C = mask(r, c) > 0 ? C : 0 at the end, mask bf16 of C's shape (NULL: none) */
} dp_op;

/* The first m lanes of a vector as a load mask. */
DP_INLINE dp_mask dp_lanes(int m) { return m >= DP_VL ? (dp_mask)~0u : m <= 0 ? 0 : (dp_mask)((1u << m) - 1); }

/* x rounded to bf16 (prec_convert.h's rounding: nearest even, NaN quiet), in each word's low half. */
DP_INLINE dp_vu32 dp_round_bf16(dp_vf x)
{
    dp_vu32 u = (dp_vu32)x, r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    dp_vu32 nan = (dp_vu32)((u & 0x7fffffffu) > 0x7f800000u);
    return (r & ~nan) | (((u >> 16) | 0x40u) & nan);
}

DP_INLINE uint32_t dp_word(const uint32_t *p, size_t i)
{
    uint32_t w;
    memcpy(&w, p + i, sizeof w);
    return w;
}

/* C rows r..r+mr-1, columns c.. (nv vectors, the last possibly partial). */
DP_INLINE void dp_tile(const int mr, const int nv, const dp_op *o, int r, int c)
{
    const int nc = o->n - c;
    dp_mask m[DP_NV];
    dp_vf acc[DP_MR][DP_NV];
    for (int v = 0; v < nv; v++)
        m[v] = dp_lanes(nc - v * DP_VL);
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++)
            acc[i][v] = o->bias ? DP_LOADF(m[v], o->bias + c + v * DP_VL) : (dp_vf){0};
    const uint32_t *a = o->A + (size_t)r * o->ars, *b = o->B + c;
    for (int pp = 0; pp < o->kp; pp++, a += o->aps, b += o->bps) {
        dp_vu32 w[DP_NV];
        for (int v = 0; v < nv; v++)
            w[v] = DP_LOADM(m[v], b + v * DP_VL);
        for (int i = 0; i < mr; i++) {
            dp_vu32 x = (dp_vu32){0} + dp_word(a, (size_t)i * o->ars);
            for (int v = 0; v < nv; v++)
                acc[i][v] = DP_DOT(acc[i][v], x, w[v]);
        }
    }
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++) {
            size_t at = (size_t)(r + i) * o->ldc + c + v * DP_VL;
            dp_vf x = acc[i][v];
            if (o->relu)
                x = (dp_vf)((dp_vi)x & (x > 0.0f));
            if (o->mask) /* relu'(A_prev): A_prev > 0 (a bf16 is a float32's top half) */
                x = (dp_vf)((dp_vi)x & ((dp_vf)(DP_LOADH(m[v], o->mask + at) << 16) > 0.0f));
            if (o->ct == PT_F32)
                DP_STOREF((float *)o->C + at, m[v], x);
            else
                DP_STOREH((uint16_t *)o->C + at, m[v], dp_round_bf16(x));
        }
}

/* Rows 0..M-1 of one column block: MR-row tiles, then tails of 8, 4, 2 and 1 rows. */
DP_INLINE void dp_rows(const int nv, const dp_op *o, int M, int c)
{
    int r = 0;
    for (; r + DP_MR <= M; r += DP_MR)
        dp_tile(DP_MR, nv, o, r, c);
    if (r + 8 <= M) {
        dp_tile(8, nv, o, r, c);
        r += 8;
    }
    if (r + 4 <= M) {
        dp_tile(4, nv, o, r, c);
        r += 4;
    }
    if (r + 2 <= M) {
        dp_tile(2, nv, o, r, c);
        r += 2;
    }
    if (r < M)
        dp_tile(1, nv, o, r, c);
}

/* All M rows of C, column block by column block; a block of one vector or less in one-vector tiles. */
DP_INLINE void dp_gemm(const dp_op *o, int M)
{
    for (int c = 0; c < o->n; c += DP_NV * DP_VL) {
        if (o->n - c > DP_VL)
            dp_rows(DP_NV, o, M, c);
        else
            dp_rows(1, o, M, c);
    }
}

/* ---- the pair layouts ---------------------------------------------------------------------------- */
/* VL words (lo | hi << 16) from two rows of VL bf16 values each. */
DP_INLINE dp_vu32 dp_pair_bits(const uint16_t *lo, const uint16_t *hi)
{
    dp_vu16 l, h = {0};
    memcpy(&l, lo, sizeof l);
    if (hi)
        memcpy(&h, hi, sizeof h);
    return __builtin_convertvector(l, dp_vu32) | __builtin_convertvector(h, dp_vu32) << 16;
}

/* Out (ceil(B / 2) x n words) := rows 2 bb and 2 bb + 1 of In (B x n, bf16) interleaved; a missing
 * last row is zero. */
DP_INLINE void dp_interleave_rows(uint32_t *Out, const uint16_t *In, int B, int n)
{
    uint16_t tl[DP_VL] = {0}, th[DP_VL] = {0};
    for (int bb = 0; bb < (B + 1) / 2; bb++) {
        const uint16_t *lo = In + (size_t)2 * bb * n, *hi = 2 * bb + 1 < B ? lo + n : NULL;
        uint32_t *o = Out + (size_t)bb * n;
        int j = 0;
        for (; j + DP_VL <= n; j += DP_VL) {
            dp_vu32 w = dp_pair_bits(lo + j, hi ? hi + j : NULL);
            memcpy(o + j, &w, sizeof w);
        }
        if (j < n) {
            memcpy(tl, lo + j, (size_t)(n - j) * 2);
            if (hi)
                memcpy(th, hi + j, (size_t)(n - j) * 2);
            dp_vu32 w = dp_pair_bits(tl, hi ? th : NULL);
            memcpy(o + j, &w, (size_t)(n - j) * 4);
        }
    }
}

/* Out (ceil(n_in / 2) x n words) := the float32 rows of W (n_in x n) paired and rounded to bf16 by
 * vcvtne2ps2bf16 (nearest even as prec_convert.h's, but a subnormal float32 becomes zero: no weight
 * of these networks is below 1e-38). */
DP_INLINE void dp_interleave_w(uint32_t *Out, const float *W, int n_in, int n)
{
    for (int p = 0; p < n_in; p += 2) {
        const float *lo = W + (size_t)p * n, *hi = lo + n;
        uint32_t *o = Out + (size_t)(p / 2) * n;
        for (int j = 0; j < n; j += DP_VL) {
            dp_mask m = dp_lanes(n - j);
            dp_vu32 w = dp_pair_round(DP_LOADF(m, lo + j), p + 1 < n_in ? DP_LOADF(m, hi + j) : (dp_vf){0});
            DP_STOREF((float *)(void *)(o + j), m, (dp_vf)w);
        }
    }
}

/* The same from float32 rows (a delta D, B x n): each value rounded to bf16 first, through scratch. */
DP_INLINE void dp_interleave_f32(uint32_t *Out, uint16_t *scratch, const float *In, int B, int n)
{
    prec_convert_array(PT_BF16, scratch, In, (size_t)B * n);
    dp_interleave_rows(Out, scratch, B, n);
}

/* ---- the path's forward and backward -------------------------------------------------------------- */
/* Out (B x n_out, type ct) = act(In (B x n_in bf16, n_in even) Wp + bias), Wp W's interleaved pairs. */
DP_INLINE void dp_layer(int ct, const uint16_t *In, const uint16_t *Wp, const float *bias, void *Out, int n_in,
                        int n_out, int relu, int B)
{
    dp_op o = {.A = (const uint32_t *)(const void *)In, .ars = (size_t)n_in / 2, .aps = 1,
               .B = (const uint32_t *)(const void *)Wp, .bps = (size_t)n_out, .C = Out, .ldc = (size_t)n_out,
               .ct = ct, .n = n_out, .kp = n_in / 2, .bias = bias, .relu = relu};
    dp_gemm(&o, B);
}

/* dW (n_in x n_out, float32) = A^T D over B rows: A (B x n_in, bf16), D (B x n_out, float32). */
DP_INLINE void dp_wgrad(const uint16_t *A, const float *D, float *dW, int B, int n_in, int n_out, prec_ws *ws)
{
    dp_interleave_rows(ws->ap, A, B, n_in);
    dp_interleave_f32(ws->dp, ws->dq, D, B, n_out);
    dp_op o = {.A = ws->ap, .ars = 1, .aps = (size_t)n_in, .B = ws->dp, .bps = (size_t)n_out, .C = dW,
               .ldc = (size_t)n_out, .ct = PT_F32, .n = n_out, .kp = (B + 1) / 2};
    dp_gemm(&o, n_in);
}

/* Dprev (B x n_prev, float32) = (D W^T) * relu'(Aprev), WTp W^T's pairs (n_out / 2 rounded up, x n_prev). */
DP_INLINE void dp_delta(const float *D, const uint16_t *WTp, const uint16_t *Aprev, float *Dprev, int n_prev,
                        int n_out, int B, prec_ws *ws)
{
    int ne = (n_out + 1) / 2 * 2; /* dq's rows: n_out rounded up to a whole pair, the partner zero */
    for (int b = 0; b < B; b++) {
        prec_convert_array(PT_BF16, ws->dq + (size_t)b * ne, D + (size_t)b * n_out, (size_t)n_out);
        if (ne > n_out)
            ws->dq[(size_t)b * ne + n_out] = 0;
    }
    dp_op o = {.A = (const uint32_t *)(const void *)ws->dq, .ars = (size_t)ne / 2, .aps = 1,
               .B = (const uint32_t *)(const void *)WTp, .bps = (size_t)n_prev, .C = Dprev,
               .ldc = (size_t)n_prev, .ct = PT_F32, .n = n_prev, .kp = ne / 2, .mask = Aprev};
    dp_gemm(&o, B);
}
#endif /* PREC_HAVE_DP_CODE */

#endif
