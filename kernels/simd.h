/*
 * kernels/simd.h: the vectors of every hand-written CPU kernel, as wide as the target the file is
 * compiled for, and the helpers they share (load, store, splat, horizontal sum, max, exp, exp/log of
 * doubles by glibc's libmvec).
 *
 * Why from the target: a GCC vector wider than the machine's registers is lowered piecewise, and one
 * passed to or returned from a function goes through memory (gcc's -Wpsabi warning). 64-byte vectors
 * made entropy_mi's simd variant 1.7x slower than naive on an AVX2-only Zen 3. So no kernel
 * names a byte width: it asks for VF32_LANES floats or VF64_LANES doubles and blocks its registers by
 * SIMD_NREGS. The widths, per target macro (x86-64 levels: docs/speedlab.md, "ISA levels"):
 *   __AVX512F__          64 bytes, 32 registers   ("avx512", x86-64-v4)
 *   __AVX2__ / __AVX__   32 bytes, 16 registers   ("avx2", x86-64-v3; "avx")
 *   __SSE2__             16 bytes, 16 registers   ("sse4.2" at x86-64-v2, else "sse2")
 *   __ARM_NEON           16 bytes, 32 registers   ("neon")
 *   otherwise             8 bytes, treated as 8 registers ("generic": two floats, one double; GCC
 *                        keeps such vectors in general registers, so they cost what scalars cost)
 * In a dispatch build (meson -Disa=dispatch) every kernel file is compiled once per x86-64 level, so
 * each copy gets its own widths; kernels/isa.h says which copy runs.
 *
 * A kernel file whose data is narrower than a zmm register (cnn's convolutions: 8 and 16 channels) may
 * define SIMD_MAX_BYTES 32 before including this header: at AVX-512 its vectors are then AVX-512VL's
 * 32-byte ones, with the same 32 registers (SIMD_NREGS), and its code takes the 32-byte paths (the
 * broadcasts, libmvec's AVX2 entries); elsewhere nothing changes. Only 32 is accepted.
 */
#ifndef SL_KERNELS_SIMD_H
#define SL_KERNELS_SIMD_H

#include <string.h>

#include "sl_config.h"

#if defined(SIMD_MAX_BYTES) && SIMD_MAX_BYTES != 32
#error "SIMD_MAX_BYTES: only 32 (256-bit vectors at AVX-512) is supported"
#endif
#if defined(__AVX512F__) && defined(SIMD_MAX_BYTES)
#define SIMD_BYTES 32
#define SIMD_NREGS 32
#define SIMD_ISA "avx512"
#elif defined(__AVX512F__)
#define SIMD_BYTES 64
#define SIMD_NREGS 32
#define SIMD_ISA "avx512"
#elif defined(__AVX2__)
#define SIMD_BYTES 32
#define SIMD_NREGS 16
#define SIMD_ISA "avx2"
#elif defined(__AVX__)
#define SIMD_BYTES 32
#define SIMD_NREGS 16
#define SIMD_ISA "avx"
#elif defined(__SSE4_2__)
#define SIMD_BYTES 16
#define SIMD_NREGS 16
#define SIMD_ISA "sse4.2"
#elif defined(__SSE2__)
#define SIMD_BYTES 16
#define SIMD_NREGS 16
#define SIMD_ISA "sse2"
#elif defined(__ARM_NEON)
#define SIMD_BYTES 16
#define SIMD_NREGS 32
#define SIMD_ISA "neon"
#else
#define SIMD_BYTES 8
#define SIMD_NREGS 8
#define SIMD_ISA "generic"
#endif

#define VF32_LANES (SIMD_BYTES / 4)
#define VF64_LANES (SIMD_BYTES / 8)

typedef float vf32 __attribute__((vector_size(SIMD_BYTES)));
typedef int vi32 __attribute__((vector_size(SIMD_BYTES)));
typedef double vf64 __attribute__((vector_size(SIMD_BYTES)));

/* GCC otherwise folds a loaded vector into every FMA that uses it (one load per use instead of one);
 * an empty asm that "changes" the register keeps it there (about +10 % in mlp's and galaxy's tiles). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__SSE2__)
#define SIMD_KEEP_IN_REG(x) __asm__("" : "+v"(x))
#else
#define SIMD_KEEP_IN_REG(x) ((void)0)
#endif
/* The same, and never merged with an identical one (volatile): GCC otherwise computes a broadcast of the
 * same address once and shares it among every FMA that reads it, holding it in a register the tile
 * needs (cnn_conv2_simd.h). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__SSE2__)
#define SIMD_KEEP_APART(x) __asm__ volatile("" : "+v"(x))
#else
#define SIMD_KEEP_APART(x) ((void)0)
#endif

#define SIMD_INLINE static inline __attribute__((always_inline))

/* ---- float lanes ----------------------------------------------------------------------------------- */
SIMD_INLINE vf32 vf32_load(const float *p) { vf32 v; memcpy(&v, p, sizeof v); return v; }
SIMD_INLINE void vf32_store(float *p, vf32 v) { memcpy(p, &v, sizeof v); }
/* x in every lane. Not `(vf32){0} + x`: adding +0.0 is not the identity for -0.0 (it gives +0.0), so
 * GCC keeps the add, one more instruction in every loop that splats, and splat(-0.0f) is +0.0. */
SIMD_INLINE vf32 vf32_splat(float x)
{
    vf32 v;
    for (int k = 0; k < VF32_LANES; k++) v[k] = x;
    return v;
}
/* *p in every lane, as one broadcast load. GCC 12 builds vf32_splat of a loaded float as a half-width
 * broadcast and an insert (under register pressure, a chain of inserts): an extra instruction on the
 * vector ports for every broadcast of a register tile, at AVX2 (Zen 3 tuning) and at AVX-512 alike. */
#if defined(__AVX512F__) && SIMD_BYTES == 64
#include <immintrin.h>
SIMD_INLINE vf32 vf32_bcast(const float *p) { return (vf32)_mm512_set1_ps(*p); }
#elif defined(__AVX__) && SIMD_BYTES == 32
#include <immintrin.h>
SIMD_INLINE vf32 vf32_bcast(const float *p) { return (vf32)_mm256_broadcast_ss(p); }
#else
SIMD_INLINE vf32 vf32_bcast(const float *p) { return vf32_splat(*p); }
#endif
/* n (< VF32_LANES, possibly <= 0) floats, the other lanes zero; and the store of n lanes. */
SIMD_INLINE vf32 vf32_load_n(const float *p, int n)
{
    vf32 v = {0};
    if (n >= VF32_LANES) memcpy(&v, p, sizeof v);
    else if (n > 0) memcpy(&v, p, (size_t)n * sizeof(float));
    return v;
}
SIMD_INLINE void vf32_store_n(float *p, vf32 v, int n)
{
    if (n >= VF32_LANES) memcpy(p, &v, sizeof v);
    else if (n > 0) memcpy(p, &v, (size_t)n * sizeof(float));
}
/* The lanes added in lane order (a fixed order: the same bits for the same vector). */
SIMD_INLINE float vf32_hsum(vf32 v)
{
    float s = 0.0f;
    for (int k = 0; k < VF32_LANES; k++) s += v[k];
    return s;
}
SIMD_INLINE vf32 vf32_max(vf32 a, vf32 b)
{
    vi32 m = a > b;
    return (vf32)((m & (vi32)a) | (~m & (vi32)b));
}
/* Two-source shuffle: lane l of the result is lane m[l] of the concatenation [a b] (m[l] < 2 lanes).
 * GCC's builtin takes an index vector at any width (one permute once m is a constant); clang has only
 * the constant-index __builtin_shufflevector, so there lane by lane (clang builds: the fuzzers). */
SIMD_INLINE vf32 vf32_shuffle2(vf32 a, vf32 b, vi32 m)
{
#if defined(__GNUC__) && !defined(__clang__)
    return __builtin_shuffle(a, b, m);
#else
    vf32 r;
    for (int l = 0; l < VF32_LANES; l++)
        r[l] = m[l] < VF32_LANES ? a[m[l]] : b[m[l] - VF32_LANES];
    return r;
#endif
}
SIMD_INLINE float vf32_hmax(vf32 v)
{
    float m = v[0];
    for (int k = 1; k < VF32_LANES; k++) m = v[k] > m ? v[k] : m;
    return m;
}

/* exp(x) for x <= 0 (softmax arguments after subtracting the row max, tanh's exp(-2|x|)): range
 * reduction x = n ln2 + r, |r| <= ln2/2, a degree-5 near-minimax polynomial for exp(r) (fitted on
 * [-ln2/2, ln2/2] by reweighted least squares with exp(0) = 1 exact; it replaced a degree-6 Taylor
 * one, one FMA more), 2^n built in the exponent bits. Relative error against libm's double exp, from
 * a one-off sweep of x over [-87, 0] (not a test; tests/kernels/test_tensor_mean.c bounds the tanh built
 * on it to 3e-7 absolute): 2.0e-7 for x > -20 and 3.9e-7 near -87 with FMA (x86-64-v3, v4), 1.9e-7
 * without (v2). Arguments below -87 give ~0 (a denormal-free underflow, as expf would). Scalar expf is
 * ~20x slower than the rest of a softmax lane's work. */
SIMD_INLINE vf32 vf32_exp_neg(vf32 x)
{
    x = vf32_max(x, vf32_splat(-87.0f));
    const vf32 magic = vf32_splat(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
    vf32 t = x * 1.44269504f + magic;
    vf32 n = t - magic;
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
    /* one fused step: the product is not rounded, so only ln2's float error (1.9e-9) times |n| <= 126
     * enters r (2.4e-7 absolute at the bottom of the range, where the values are below 1e-37) */
    vf32 r = x - n * 0.693147182f;
#else
    vf32 r = x - n * 0.693145752f - n * 1.42860677e-6f; /* ln2 in two parts: n * hi is exact */
#endif
    vf32 p = vf32_splat(0.00829031505f);
    p = p * r + 0.0418979302f;
    p = p * r + 0.166676357f;
    p = p * r + 0.499991506f;
    p = p * r + 0.999999702f;
    p = p * r + 1.0f; /* fitted with this 1 fixed: exp(0) is exactly 1 (a softmax's largest term) */
    vi32 e = ((vi32)t - (vi32)magic + 127) << 23;
    return p * (vf32)e;
}

/* ---- double lanes ---------------------------------------------------------------------------------- */
SIMD_INLINE vf64 vf64_load(const double *p) { vf64 v; memcpy(&v, p, sizeof v); return v; }
SIMD_INLINE void vf64_store(double *p, vf64 v) { memcpy(p, &v, sizeof v); }
SIMD_INLINE vf64 vf64_splat(double x) /* as vf32_splat */
{
    vf64 v;
    for (int k = 0; k < VF64_LANES; k++) v[k] = x;
    return v;
}

/* exp and log of every lane by glibc's libmvec (within 4 ulp of libm; each lane's result depends on
 * that lane's input only) at the target's width: _ZGVeN8v (AVX-512), _ZGVdN4v (AVX2), _ZGVcN4v
 * (AVX), _ZGVbN2v (SSE4).
 * SIMD_HAVE_VEXP is 0 where libmvec is absent or has no entry at this width: callers use libm then. */
#if SL_HAVE_MVEC && defined(__x86_64__) && defined(__AVX512F__) && SIMD_BYTES == 64
#define SIMD_MVEC _ZGVeN8v
#elif SL_HAVE_MVEC && defined(__x86_64__) && defined(__AVX2__) && SIMD_BYTES == 32
#define SIMD_MVEC _ZGVdN4v
#elif SL_HAVE_MVEC && defined(__x86_64__) && defined(__AVX__)
#define SIMD_MVEC _ZGVcN4v
#elif SL_HAVE_MVEC && defined(__x86_64__) && defined(__SSE4_1__) && SIMD_BYTES == 16
#define SIMD_MVEC _ZGVbN2v
#endif
#ifdef SIMD_MVEC
#define SIMD_HAVE_VEXP 1
#define SIMD_MVEC_NAME_(prefix, f) prefix##_##f
#define SIMD_MVEC_NAME(prefix, f) SIMD_MVEC_NAME_(prefix, f) /* expands prefix first: _ZGVeN8v_exp */
vf64 SIMD_MVEC_NAME(SIMD_MVEC, exp)(vf64 x);
vf64 SIMD_MVEC_NAME(SIMD_MVEC, log)(vf64 x);
static inline vf64 vf64_exp(vf64 x) { return SIMD_MVEC_NAME(SIMD_MVEC, exp)(x); }
static inline vf64 vf64_log(vf64 x) { return SIMD_MVEC_NAME(SIMD_MVEC, log)(x); }
#else
#define SIMD_HAVE_VEXP 0
#endif

#endif /* SL_KERNELS_SIMD_H */
