/*
 * tensor_mean, simd: A[i][j][:] += a_ni b_nj c_n[:] as register-blocked rank-1 updates.
 * For one i and a chunk of TM_NC n's, the products w_n = a_ni * c_n[k..] for a tile of TM_KV vectors of
 * k (kernels/simd.h's width) are made once into a small L1 buffer and shared by every block of j's;
 * a TM_JB x TM_KV tile of A then stays in registers over the chunk: per n, TM_KV loads of w, TM_JB
 * broadcasts of b_nj and TM_JB x TM_KV independent FMAs, no multiply. At D = 32: AVX-512 holds all 32
 * k's in 2 zmm and 8 j's (16 accumulators of 32 registers); AVX2 16 k's in 2 ymm and 6 j's (12
 * accumulators + 2 w + a broadcast of 16 registers), enough chains to cover the FMA latency on two
 * pipes. Making w inside the tile would cost TM_KV multiplies per block and n on the FMA pipes (a fifth
 * of them at AVX2). While a k slice is swept, b's chunk (64 x D floats, 8 KiB at D = 32) and w (TM_NC
 * x TM_KV vectors: 4 KiB at AVX2, 8 KiB at AVX-512) stay in L1 and A (128 KiB) in L2. The j's past the
 * last whole block (2 at AVX2, D = 32) go in pairs over TM_KVT vectors of k while that many remain, and
 * otherwise one at a time; k's past the last whole vector are scalar.
 */
#include <string.h>

#include "simd.h"
#include "tensor_mean_kernels.h"
#include "tm_private.h"

#define TM_W VF32_LANES
#define TM_KV 2
#define TM_JB (SIMD_NREGS >= 32 ? 8 : 6)
#define TM_KVT 4 /* the j tail's tile: 2 x 4 = 8 accumulators + 4 w + a broadcast */
#define TM_NC 64

/* Accumulates the chunk's n's into A[i][j..j+jb][kc..kc+kv*TM_W], w[nn * ldw + v * TM_W] being
 * a_ni * c_n[kc + v * TM_W ..] for n = n0 + nn; jb and kv are constants after inlining. */
static inline __attribute__((always_inline)) void
tm_block(const float *w, long ldw, const float *b, long D, long i, long j, long kc, long n0, long n1,
         float *A, const int jb, const int kv)
{
    vf32 acc[TM_JB][TM_KVT];
    for (int t = 0; t < jb; t++)
        for (int v = 0; v < kv; v++)
            acc[t][v] = vf32_load(A + (i * D + j + t) * D + kc + v * TM_W);
    for (long n = n0; n < n1; n++) {
        vf32 wv[TM_KVT];
        for (int v = 0; v < kv; v++) {
            wv[v] = vf32_load(w + (n - n0) * ldw + v * TM_W);
            SIMD_KEEP_IN_REG(wv[v]);
        }
        const float *bn = b + n * D + j;
        for (int t = 0; t < jb; t++) {
            const vf32 bv = vf32_bcast(bn + t);
            for (int v = 0; v < kv; v++)
                acc[t][v] += bv * wv[v];
        }
    }
    for (int t = 0; t < jb; t++)
        for (int v = 0; v < kv; v++)
            vf32_store(A + (i * D + j + t) * D + kc + v * TM_W, acc[t][v]);
}

/* w[nn][v] = a_ni * c_n[kc + v * TM_W ..] for the chunk's n's and kv vectors, rows ldw floats apart. */
static inline __attribute__((always_inline)) void
tm_wtile(const float *a, const float *c, long D, long i, long kc, long n0, long n1, float *w, long ldw,
         const int kv)
{
    for (long n = n0; n < n1; n++) {
        const float an = a[n * D + i];
        for (int v = 0; v < kv; v++)
            vf32_store(w + (n - n0) * ldw + v * TM_W, an * vf32_load(c + n * D + kc + v * TM_W));
    }
}

/* The j's below jm in blocks of TM_JB, for the kv vectors of k at kc. */
static inline __attribute__((always_inline)) void
tm_jsweep(const float *a, const float *b, const float *c, long D, long i, long kc, long jm, long n0,
          long n1, float *w, float *A, const int kv)
{
    tm_wtile(a, c, D, i, kc, n0, n1, w, kv * TM_W, kv);
    for (long j = 0; j < jm; j += TM_JB)
        tm_block(w, kv * TM_W, b, D, i, j, kc, n0, n1, A, TM_JB, kv);
}

/* The j's from jm to D over the whole vectors of k (the first Dv k's): in pairs where TM_KVT vectors
 * remain, one at a time otherwise. */
static void tm_jtail(const float *a, const float *b, const float *c, long D, long i, long jm, long Dv,
                     long n0, long n1, float *w, float *A)
{
    for (long kc = 0; kc < Dv;) {
        const int kv = kc + TM_KVT * TM_W <= Dv ? TM_KVT : 1;
        long j = jm;
        if (kv == TM_KVT) {
            tm_wtile(a, c, D, i, kc, n0, n1, w, TM_KVT * TM_W, TM_KVT);
            for (; j + 2 <= D; j += 2)
                tm_block(w, TM_KVT * TM_W, b, D, i, j, kc, n0, n1, A, 2, TM_KVT);
            for (; j < D; j++)
                tm_block(w, TM_KVT * TM_W, b, D, i, j, kc, n0, n1, A, 1, TM_KVT);
        } else {
            tm_wtile(a, c, D, i, kc, n0, n1, w, TM_KVT * TM_W, 1);
            for (; j < D; j++)
                tm_block(w, TM_KVT * TM_W, b, D, i, j, kc, n0, n1, A, 1, 1);
        }
        kc += kv * TM_W;
    }
}

/* The last D mod TM_W k's of A[i][j][:], scalar. */
static void tm_ktail(const float *a, const float *b, const float *c, long D, long i, long j, long k0,
                     long n0, long n1, float *A)
{
    for (long k = k0; k < D; k++) {
        float s = A[(i * D + j) * D + k];
        for (long n = n0; n < n1; n++)
            s += a[n * D + i] * b[n * D + j] * c[n * D + k];
        A[(i * D + j) * D + k] = s;
    }
}

static void tm_chunk(const float *a, const float *b, const float *c, long D, long i0, long i1, long n0,
                     long n1, float *A)
{
    float w[TM_NC * TM_KVT * TM_W] __attribute__((aligned(64)));
    const long Dv = D / TM_W * TM_W, jm = D / TM_JB * TM_JB;
    for (long i = i0; i < i1; i++) {
        long kc = 0;
        for (; kc + TM_KV * TM_W <= Dv; kc += TM_KV * TM_W)
            tm_jsweep(a, b, c, D, i, kc, jm, n0, n1, w, A, TM_KV);
        for (; kc < Dv; kc += TM_W)
            tm_jsweep(a, b, c, D, i, kc, jm, n0, n1, w, A, 1);
        if (jm < D)
            tm_jtail(a, b, c, D, i, jm, Dv, n0, n1, w, A);
        if (Dv < D)
            for (long j = 0; j < D; j++)
                tm_ktail(a, b, c, D, i, j, Dv, n0, n1, A);
    }
}

void tm_simd_rows(const float *a, const float *b, const float *c, long N, long D, long i0, long i1,
                  float *A)
{
    memset(A + i0 * D * D, 0, (size_t)((i1 - i0) * D * D) * sizeof *A);
    for (long n0 = 0; n0 < N; n0 += TM_NC)
        tm_chunk(a, b, c, D, i0, i1, n0, n0 + TM_NC < N ? n0 + TM_NC : N, A);
    const float inv = 1.0f / (float)N;
    for (long e = i0 * D * D; e < i1 * D * D; e++)
        A[e] *= inv;
}

size_t tm_simd_workspace(long N, long D)
{
    return (size_t)(3 * N * D); /* tanh of all inputs */
}

int tm_simd(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws,
            int threads)
{
    (void)threads; /* one thread */
    if (N < 1 || D < 1 || !ws)
        return -1;
    float *a = ws, *b = a + N * D, *c = b + N * D;
    tm_tanh_fast(X, N * D, a);
    tm_tanh_fast(Y, N * D, b);
    tm_tanh_fast(Z, N * D, c);
    tm_simd_rows(a, b, c, N, D, 0, D, A);
    return 0;
}
