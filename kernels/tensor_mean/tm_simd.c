/*
 * tensor_mean, simd: A[i][j][:] += a_ni b_nj c_n[:] as register-blocked rank-1 updates.
 * For one i, a block of TM_JB j's and TM_KV vectors of k (kernels/simd.h's width), the TM_JB x TM_KV
 * accumulators stay in registers over a chunk of 64 n's: per n, TM_KV multiplies w = a_ni * c_n[k..]
 * and TM_JB x TM_KV FMAs acc_jv += b_nj * w_v (b_nj a broadcast load). At D = 32: AVX-512 holds all 32
 * k's in 2 zmm and 8 j's (16 accumulators of 32 registers), AVX2 16 k's in 2 ymm and 4 j's
 * (8 accumulators + 2 w + a broadcast of 16 registers): either way each broadcast feeds TM_KV FMAs and
 * each w load TM_JB. A chunk of the inputs (64 x D x 3 floats, 24 KiB at D = 32) stays in L1 and A
 * (128 KiB) in L2 while the chunk is swept. j's past the last whole block go one at a time; k's past
 * the last whole tile go one vector at a time, then scalar.
 */
#include <string.h>

#include "simd.h"
#include "tensor_mean_kernels.h"
#include "tm_private.h"

#define TM_W VF32_LANES
#define TM_KV 2
#define TM_JB (SIMD_NREGS >= 32 ? 8 : 4)
#define TM_NC 64

/* Accumulates n0 <= n < n1 into A[i][j..j+jb][kc..kc+kv*TM_W]; jb and kv are constants after inlining. */
static inline __attribute__((always_inline)) void
tm_block(const float *a, const float *b, const float *c, long D, long i, long j, long kc, long n0,
         long n1, float *A, const int jb, const int kv)
{
    vf32 acc[TM_JB][TM_KV];
    for (int t = 0; t < jb; t++)
        for (int v = 0; v < kv; v++)
            acc[t][v] = vf32_load(A + (i * D + j + t) * D + kc + v * TM_W);
    for (long n = n0; n < n1; n++) {
        vf32 w[TM_KV];
        for (int v = 0; v < kv; v++)
            w[v] = a[n * D + i] * vf32_load(c + n * D + kc + v * TM_W);
        const float *bn = b + n * D + j;
        for (int t = 0; t < jb; t++) {
            const vf32 bv = vf32_splat(bn[t]);
            for (int v = 0; v < kv; v++)
                acc[t][v] += bv * w[v];
        }
    }
    for (int t = 0; t < jb; t++)
        for (int v = 0; v < kv; v++)
            vf32_store(A + (i * D + j + t) * D + kc + v * TM_W, acc[t][v]);
}

/* Every j of row i for the kv vectors of k at kc. */
static inline __attribute__((always_inline)) void
tm_jsweep(const float *a, const float *b, const float *c, long D, long i, long kc, long n0, long n1,
          float *A, const int kv)
{
    long j = 0;
    for (; j + TM_JB <= D; j += TM_JB)
        tm_block(a, b, c, D, i, j, kc, n0, n1, A, TM_JB, kv);
    for (; j < D; j++)
        tm_block(a, b, c, D, i, j, kc, n0, n1, A, 1, kv);
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
    const long Dv = D / TM_W * TM_W;
    for (long i = i0; i < i1; i++) {
        long kc = 0;
        for (; kc + TM_KV * TM_W <= Dv; kc += TM_KV * TM_W)
            tm_jsweep(a, b, c, D, i, kc, n0, n1, A, TM_KV);
        for (; kc < Dv; kc += TM_W)
            tm_jsweep(a, b, c, D, i, kc, n0, n1, A, 1);
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
