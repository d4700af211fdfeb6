/*
 * kernels/precision/prec_convert.h: float32 <-> bfloat16 and float16, scalar and one kernels/simd.h
 * vector at a time, round to nearest even as the hardware converters do (vcvtneps2bf16, vcvtps2ph).
 *
 *   bf16: float32's top 16 bits (8-bit exponent, 7-bit mantissa): the same range as float32, about
 *         2-3 significant digits. Conversion is a shift (and a rounding add), so it costs a few integer
 *         instructions on any x86-64 level: these are GCC vector operations, as wide as simd.h's vf32.
 *   fp16: IEEE binary16 (5-bit exponent, 10-bit mantissa): 65504 at most, subnormals below 2^-14.
 *         With F16C (x86-64-v3 and v4) one vcvtph2ps / vcvtps2ph per vector; without it (x86-64-v2)
 *         the software conversion below, lane by lane: correct, and much slower, which the records of
 *         a v2 run show (the env's cpu_flags and isa say which ran).
 * NaN stays NaN (made quiet), infinities stay infinite, a float32 beyond the type's range rounds to
 * infinity, and fp16 keeps subnormals (no flush to zero).
 */
#ifndef SL_KERNELS_PREC_CONVERT_H
#define SL_KERNELS_PREC_CONVERT_H

#include <stdint.h>
#include <string.h>

#include "simd.h"
#if defined(__F16C__)
#include <immintrin.h>
#endif

static inline uint32_t prec_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static inline float prec_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* ---- bfloat16 ------------------------------------------------------------------------------------- */
static inline float prec_bf16_to_f32(uint16_t h) { return prec_float((uint32_t)h << 16); }

static inline uint16_t prec_f32_to_bf16(float x)
{
    uint32_t u = prec_bits(x);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x0040u); /* NaN: keep sign and payload's top, set the quiet bit */
    u += 0x7fffu + ((u >> 16) & 1u);            /* ties to even; a carry out of the mantissa is right, */
    return (uint16_t)(u >> 16);                 /* up to infinity for the largest floats */
}

/* ---- float16, in software ------------------------------------------------------------------------- */
static inline float prec_f16_to_f32_sw(uint16_t h)
{
    uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) /* infinity or NaN: the mantissa moves up, quiet bit included */
        return prec_float(s | 0x7f800000u | (m << 13));
    if (e == 0) { /* zero or subnormal: m * 2^-24, exact in float32 */
        float v = (float)m * 0x1p-24f;
        return s ? -v : v;
    }
    return prec_float(s | ((e + 112) << 23) | (m << 13)); /* rebias 15 -> 127 */
}

static inline uint16_t prec_f32_to_f16_sw(float x)
{
    uint32_t u = prec_bits(x), s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) /* NaN: quiet, the payload's top bits */
        return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* 65520 and up (65504 is the largest; 65520 ties to even, which is up) */
        return (uint16_t)(s | 0x7c00u);
    if (a < 0x38800000u) { /* below 2^-14: a subnormal; adding 0.5 puts the unit 2^-24 in the last
                            * place of the sum, so the float add itself rounds to nearest even */
        uint32_t m = prec_bits(prec_float(a) + 0.5f) - 0x3f000000u; /* 0x400 (the least normal) at most */
        return (uint16_t)(s | m);
    }
    a += 0xfffu + ((a >> 13) & 1u); /* ties to even; a carry into the exponent is right */
    return (uint16_t)(s | ((a - 0x38000000u) >> 13));
}

#if defined(__F16C__)
static inline float prec_f16_to_f32(uint16_t h) { return _cvtsh_ss(h); }
static inline uint16_t prec_f32_to_f16(float x) { return (uint16_t)_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT); }
#else
static inline float prec_f16_to_f32(uint16_t h) { return prec_f16_to_f32_sw(h); }
static inline uint16_t prec_f32_to_f16(float x) { return prec_f32_to_f16_sw(x); }
#endif

/* ---- one vector of 16-bit values ------------------------------------------------------------------ */
typedef uint16_t prec_vu16 __attribute__((vector_size(SIMD_BYTES / 2))); /* VF32_LANES halves */
typedef uint32_t prec_vu32 __attribute__((vector_size(SIMD_BYTES)));

SIMD_INLINE vf32 prec_bf16_load(const uint16_t *p)
{
    prec_vu16 h;
    memcpy(&h, p, sizeof h);
    return (vf32)(__builtin_convertvector(h, prec_vu32) << 16);
}

SIMD_INLINE void prec_bf16_store(uint16_t *p, vf32 x)
{
    prec_vu32 u = (prec_vu32)x;
    prec_vu32 r = u + 0x7fffu + ((u >> 16) & 1u);
    prec_vu32 nan = (prec_vu32)((u & 0x7fffffffu) > 0x7f800000u);
    r = (r & ~nan) | ((u | 0x400000u) & nan);
    prec_vu16 h = __builtin_convertvector(r >> 16, prec_vu16);
    memcpy(p, &h, sizeof h);
}

SIMD_INLINE vf32 prec_f16_load(const uint16_t *p)
{
#if defined(__F16C__) && SIMD_BYTES == 64
    return (vf32)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
#elif defined(__F16C__) && SIMD_BYTES == 32
    return (vf32)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
#else
    vf32 v;
    for (int k = 0; k < VF32_LANES; k++)
        v[k] = prec_f16_to_f32(p[k]);
    return v;
#endif
}

SIMD_INLINE void prec_f16_store(uint16_t *p, vf32 x)
{
#if defined(__F16C__) && SIMD_BYTES == 64
    _mm256_storeu_si256((__m256i *)p, _mm512_cvtps_ph((__m512)x, _MM_FROUND_TO_NEAREST_INT));
#elif defined(__F16C__) && SIMD_BYTES == 32
    _mm_storeu_si128((__m128i *)p, _mm256_cvtps_ph((__m256)x, _MM_FROUND_TO_NEAREST_INT));
#else
    for (int k = 0; k < VF32_LANES; k++)
        p[k] = prec_f32_to_f16(x[k]);
#endif
}

/* The element type of an operand of the products (prec_gemm.h): the row's storage, or float32. */
enum { PT_F32 = 0, PT_BF16 = 1, PT_F16 = 2 };

/* Element i of p, of type t, as a float. t is a constant at every call, so the test folds away. */
SIMD_INLINE float prec_ld1(const int t, const void *p, size_t i)
{
    if (t == PT_BF16)
        return prec_bf16_to_f32(((const uint16_t *)p)[i]);
    if (t == PT_F16)
        return prec_f16_to_f32(((const uint16_t *)p)[i]);
    return ((const float *)p)[i];
}

/* n elements from p + i as floats (n >= VF32_LANES: a whole vector; fewer: the other lanes zero). */
SIMD_INLINE vf32 prec_ldv(const int t, const void *p, size_t i, int n)
{
    if (t == PT_F32)
        return vf32_load_n((const float *)p + i, n);
    uint16_t tmp[VF32_LANES] = {0};
    const uint16_t *q = (const uint16_t *)p + i;
    if (n < VF32_LANES) { /* a column tail: through a zero-padded copy */
        if (n > 0)
            memcpy(tmp, q, (size_t)n * sizeof *q);
        q = tmp;
    }
    return t == PT_BF16 ? prec_bf16_load(q) : prec_f16_load(q);
}

/* The first n lanes of x (all when n >= VF32_LANES) to p + i, converted to type t. */
SIMD_INLINE void prec_stv(const int t, void *p, size_t i, vf32 x, int n)
{
    if (t == PT_F32) {
        vf32_store_n((float *)p + i, x, n);
        return;
    }
    uint16_t tmp[VF32_LANES];
    uint16_t *q = n >= VF32_LANES ? (uint16_t *)p + i : tmp;
    if (t == PT_BF16)
        prec_bf16_store(q, x);
    else
        prec_f16_store(q, x);
    if (q == tmp && n > 0)
        memcpy((uint16_t *)p + i, tmp, (size_t)n * sizeof *tmp);
}

/* dst[0..n) := src converted to type t (a loop over whole vectors, the tail through prec_stv). */
SIMD_INLINE void prec_convert_array(const int t, void *dst, const float *src, size_t n)
{
    size_t i = 0;
    for (; i + VF32_LANES <= n; i += VF32_LANES)
        prec_stv(t, dst, i, vf32_load(src + i), VF32_LANES);
    if (i < n)
        prec_stv(t, dst, i, vf32_load_n(src + i, (int)(n - i)), (int)(n - i));
}

#endif
