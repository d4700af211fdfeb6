/*
 * tensor_mean, simd: A[i][j][:] += a_ni b_nj c_n[:] as register-blocked rank-1 updates.
 * For one i and a block of 8 j's and one 16-float slice of k, the 8 accumulators stay in registers
 * over a chunk of 64 n's: per n, one multiply w = a_ni * c_n[k..k+16] and 8 FMAs acc_j += b_nj * w
 * (b_nj a broadcast load). A chunk of the inputs (64 x D x 3 floats, 24 KiB at D = 32) stays in L1 and
 * A (128 KiB) in L2 while the chunk is swept. The last D mod 8 j's go one at a time; the last D mod 16
 * k's are scalar.
 */
#include <string.h>

#include "tensor_mean.h"
#include "tm_private.h"

#define TM_W 16
#define TM_JB 8
#define TM_NC 64
typedef float tm_v __attribute__((vector_size(64)));

static inline tm_v tm_load(const float *p) { tm_v v; memcpy(&v, p, sizeof v); return v; }
static inline void tm_store(float *p, tm_v v) { memcpy(p, &v, sizeof v); }

/* Accumulates n0 <= n < n1 into A[i][j..j+jb][kc..kc+16]; jb is a constant after inlining. */
static inline __attribute__((always_inline)) void
tm_block(const float *a, const float *b, const float *c, long D, long i, long j, long kc, long n0,
         long n1, float *A, const int jb)
{
    tm_v acc[TM_JB];
    for (int t = 0; t < jb; t++)
        acc[t] = tm_load(A + (i * D + j + t) * D + kc);
    for (long n = n0; n < n1; n++) {
        const tm_v w = a[n * D + i] * tm_load(c + n * D + kc);
        const float *bn = b + n * D + j;
        for (int t = 0; t < jb; t++)
            acc[t] += bn[t] * w;
    }
    for (int t = 0; t < jb; t++)
        tm_store(A + (i * D + j + t) * D + kc, acc[t]);
}

/* The last D mod 16 k's of A[i][j][:], scalar. */
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
        for (long kc = 0; kc < Dv; kc += TM_W) {
            long j = 0;
            for (; j + TM_JB <= D; j += TM_JB)
                tm_block(a, b, c, D, i, j, kc, n0, n1, A, TM_JB);
            for (; j < D; j++)
                tm_block(a, b, c, D, i, j, kc, n0, n1, A, 1);
        }
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

int tm_simd(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws)
{
    if (N < 1 || D < 1 || !ws)
        return -1;
    float *a = ws, *b = a + N * D, *c = b + N * D;
    tm_tanh_fast(X, N * D, a);
    tm_tanh_fast(Y, N * D, b);
    tm_tanh_fast(Z, N * D, c);
    tm_simd_rows(a, b, c, N, D, 0, D, A);
    return 0;
}
