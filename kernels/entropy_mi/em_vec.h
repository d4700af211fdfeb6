/*
 * Private to the entropy_mi CPU kernels: a 16-lane float vector (GCC vector extensions; one AVX-512
 * register, two AVX2 registers where AVX-512 is absent) and a vector exp, so the row softmax does not
 * cost as much as the D x D sum (scalar expf is ~20x slower than the rest of a lane's work).
 */
#ifndef KERNELS_ENTROPY_MI_VEC_H
#define KERNELS_ENTROPY_MI_VEC_H

#include <string.h>

#define EM_W 16
typedef float em_v __attribute__((vector_size(64)));
typedef int em_vi __attribute__((vector_size(64)));

static inline em_v em_load(const float *p) { em_v v; memcpy(&v, p, sizeof v); return v; }
static inline void em_store(float *p, em_v v) { memcpy(p, &v, sizeof v); }
static inline em_v em_splat(float x) { return (em_v){0} + x; }

static inline float em_hsum(em_v v)
{
    float s = 0.0f;
    for (int k = 0; k < EM_W; k++)
        s += v[k];
    return s;
}

static inline em_v em_max(em_v a, em_v b)
{
    em_vi m = a > b;
    em_vi r = (m & (em_vi)a) | (~m & (em_vi)b);
    return (em_v)r;
}

/* exp(x) for x <= 0 (softmax arguments after subtracting the row max): range reduction x = n ln2 + r,
 * |r| <= ln2/2, degree-6 Taylor polynomial (relative error < 2e-7), 2^n built in the exponent bits.
 * Arguments below -87 give ~0 (a denormal-free underflow, as float expf would). */
static inline em_v em_exp(em_v x)
{
    x = em_max(x, em_splat(-87.0f));
    const em_v magic = em_splat(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
    em_v t = x * 1.44269504f + magic;
    em_v n = t - magic;
    em_v r = x - n * 0.693145752f - n * 1.42860677e-6f;
    em_v p = em_splat(1.0f / 720.0f);
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    em_vi e = ((em_vi)t - (em_vi)magic + 127) << 23;
    return p * (em_v)e;
}

/* Stable softmax of one row into p, zero-padded to a multiple of EM_W (p holds at least that many). */
static inline void em_softmax_vec(const float *x, long D, float *p)
{
    const long Dv = D / EM_W * EM_W;
    float m = x[0];
    em_v vm = em_splat(x[0]);
    for (long i = 0; i < Dv; i += EM_W)
        vm = em_max(vm, em_load(x + i));
    for (int k = 0; k < EM_W; k++)
        m = vm[k] > m ? vm[k] : m;
    for (long i = Dv; i < D; i++)
        m = x[i] > m ? x[i] : m;
    em_v vs = {0};
    for (long i = 0; i < Dv; i += EM_W) {
        em_v e = em_exp(em_load(x + i) - m);
        em_store(p + i, e);
        vs += e;
    }
    if (Dv < D) { /* tail: pad the argument with -inf's stand-in, then zero the padding lanes */
        float tail[EM_W];
        for (int k = 0; k < EM_W; k++)
            tail[k] = Dv + k < D ? x[Dv + k] - m : -100.0f;
        em_v e = em_exp(em_load(tail));
        for (long k = D - Dv; k < EM_W; k++)
            e[k] = 0.0f;
        em_store(p + Dv, e);
        vs += e;
    }
    const float inv = 1.0f / em_hsum(vs);
    const long Dp = (D + EM_W - 1) / EM_W * EM_W;
    for (long i = 0; i < Dp; i += EM_W)
        em_store(p + i, em_load(p + i) * inv);
}

#endif
