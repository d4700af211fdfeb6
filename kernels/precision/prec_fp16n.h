/*
 * kernels/precision/prec_fp16n.h: the fp16 row's forward in native fp16 arithmetic (AVX512_FP16:
 * vfmadd231ph, 32 halves per instruction, twice the lanes of a float32 FMA, no conversion of either
 * operand). Internal to kernels/precision; fp16.c takes this path where prec_path(PT_F16) says so.
 *
 * AVX512_FP16 has no fp16 product summed into float32, and an fp16 sum of a whole reduction (784
 * terms) would lose several bits, so each tile sums PREC_FP16_CHUNK steps in fp16 registers, then
 * widens them (vcvtph2psx) into float32 accumulators: one widening per 16 FMAs, each fp16 partial sum
 * about 16 x 2^-11 relative at worst. The tile: MR x NV vectors of 32 columns in fp16, twice as many
 * float32 accumulators (4 x 2 + 4 x 4 + 2 loads + a broadcast of 32 registers). Compiled into the
 * AVX-512 kernels of GCC 12 or later (its target attribute adds AVX512_FP16 to these functions alone);
 * run only on a CPU whose cpuid says AVX512_FP16.
 */
#ifndef SL_KERNELS_PREC_FP16N_H
#define SL_KERNELS_PREC_FP16N_H

#include "prec_gemm.h"

#if defined(__x86_64__) && SIMD_BYTES == 64 && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#define PREC_HAVE_FP16_CODE 1
#else
#define PREC_HAVE_FP16_CODE 0
#endif

#if PREC_HAVE_FP16_CODE
#include <immintrin.h>

#define FN_TARGET __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx512fp16")))
#define FN_INLINE static inline __attribute__((always_inline)) FN_TARGET
#define FN_MR 4
#define FN_NV 2

FN_INLINE __mmask32 fn_lanes(int m) { return m >= 32 ? 0xffffffffu : m <= 0 ? 0 : (1u << m) - 1; }

/* Out rows r..r+mr-1, columns c.. (nv vectors of 32): act(In (B x n_in, fp16) W (n_in x n_out, fp16) +
 * bias), stored as ct. */
FN_INLINE void fn_tile(const int mr, const int nv, const int ct, const uint16_t *In, const uint16_t *W,
                       const float *bias, void *Out, int n_in, int n_out, int relu, int r, int c)
{
    const int nc = n_out - c;
    __mmask32 m[FN_NV];
    __m512 f[FN_MR][2 * FN_NV];
    for (int v = 0; v < nv; v++)
        m[v] = fn_lanes(nc - 32 * v);
    for (int i = 0; i < mr; i++)
        for (int u = 0; u < 2 * nv; u++)
            f[i][u] = (__m512)vf32_load_n(bias + c + 16 * u, nc - 16 * u);
    for (int k0 = 0; k0 < n_in; k0 += PREC_FP16_CHUNK) {
        int kend = n_in - k0 < PREC_FP16_CHUNK ? n_in : k0 + PREC_FP16_CHUNK;
        __m512h h[FN_MR][FN_NV];
        for (int i = 0; i < mr; i++)
            for (int v = 0; v < nv; v++)
                h[i][v] = _mm512_setzero_ph();
        for (int k = k0; k < kend; k++) {
            __m512h w[FN_NV];
            for (int v = 0; v < nv; v++)
                w[v] = _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m[v], W + (size_t)k * n_out + c + 32 * v));
            for (int i = 0; i < mr; i++) {
                __m512h a = _mm512_castsi512_ph(_mm512_set1_epi16((short)In[(size_t)(r + i) * n_in + k]));
                for (int v = 0; v < nv; v++)
                    h[i][v] = _mm512_fmadd_ph(a, w[v], h[i][v]);
            }
        }
        for (int i = 0; i < mr; i++)
            for (int v = 0; v < nv; v++) {
                __m256h lo = _mm512_castph512_ph256(h[i][v]);
                __m256h hi = _mm256_castsi256_ph(_mm512_extracti64x4_epi64(_mm512_castph_si512(h[i][v]), 1));
                f[i][2 * v] = _mm512_add_ps(f[i][2 * v], _mm512_cvtxph_ps(lo));
                f[i][2 * v + 1] = _mm512_add_ps(f[i][2 * v + 1], _mm512_cvtxph_ps(hi));
            }
    }
    for (int i = 0; i < mr; i++)
        for (int u = 0; u < 2 * nv; u++) {
            __m512 x = relu ? _mm512_max_ps(f[i][u], _mm512_setzero_ps()) : f[i][u];
            prec_stv(ct, Out, (size_t)(r + i) * n_out + c + 16 * u, (vf32)x, nc - 16 * u);
        }
}

FN_INLINE void fn_rows(const int nv, const int ct, const uint16_t *In, const uint16_t *W, const float *bias,
                       void *Out, int n_in, int n_out, int relu, int B, int c)
{
    int r = 0;
    for (; r + FN_MR <= B; r += FN_MR)
        fn_tile(FN_MR, nv, ct, In, W, bias, Out, n_in, n_out, relu, r, c);
    switch (B - r) {
    case 3: fn_tile(3, nv, ct, In, W, bias, Out, n_in, n_out, relu, r, c); break;
    case 2: fn_tile(2, nv, ct, In, W, bias, Out, n_in, n_out, relu, r, c); break;
    case 1: fn_tile(1, nv, ct, In, W, bias, Out, n_in, n_out, relu, r, c); break;
    default: break;
    }
}

/* One layer over B rows, column block by column block (a block of 32 columns or fewer: one vector). */
FN_INLINE void fn_layer(const int ct, const uint16_t *In, const uint16_t *W, const float *bias, void *Out,
                        int n_in, int n_out, int relu, int B)
{
    for (int c = 0; c < n_out; c += 32 * FN_NV) {
        if (n_out - c > 32)
            fn_rows(FN_NV, ct, In, W, bias, Out, n_in, n_out, relu, B, c);
        else
            fn_rows(1, ct, In, W, bias, Out, n_in, n_out, relu, B, c);
    }
}
#endif /* PREC_HAVE_FP16_CODE */

#endif
