/*
 * kernels/mlp/mlp_simd.h: the register-blocked products shared by simd.c (one thread, all rows) and
 * omp.c (each thread a range of rows). Internal to kernels/mlp; everything is static inline.
 *
 * Every product of a step is one shape, C (m x n) = A (m x k) B (k x n), with strides chosen per use:
 *   forward  Z = A_prev W      rows = batch, reduction = layer input;  bias first, ReLU last (fused)
 *   gradient dW = A^T D        rows = layer input, reduction = batch;  A read transposed in place
 *   delta    D_prev = D W^T    rows = batch, reduction = layer output; relu'(A_prev) mask last (fused)
 * Blocking (the classic GEMM one, sized for this network): the reduction is cut in blocks of KC = 128
 * and the columns in blocks of NC = NV vectors (64 floats with AVX-512); each KC x NC block of B is
 * reused by every MR-row tile of the range (the panel). Where B's rows hold the block's whole vectors
 * (W in the forward, D in the gradient) it is read in place: copying it into an L1 buffer measured ~7 %
 * slower, the copy costing more than the L2 reads it saves. Otherwise (a column tail, or W^T for the
 * delta) it is copied, transposed as needed and zero-padded to whole vectors, into an aligned 32 KB
 * stack panel, so the micro-kernel never has column-tail code.
 * The micro-kernel keeps an MR x NV tile of C in vector registers: MR = 6 rows x NV vectors (AVX-512:
 * 6 x 4 zmm = 24 accumulators + 4 panel vectors + 1 broadcast of 32 registers; AVX2: 6 x 2 ymm + 2 + 1
 * of 16). Each reduction step is NV vector loads, MR broadcasts of A and MR*NV independent FMAs, enough
 * to hide the FMA latency. Measured on a Zen 4 VM in 2026-11 (one core, FMA peak ~117 GFLOP/s): ~116
 * GFLOP/s with operands in L1, 100-105 on the study's 784x128 products (4 x 4 tiles gave ~80). Row tails run
 * as 4-, 2- and 1-row tiles. The batch (64) is the weight gradient's reduction, so one panel covers it
 * and each dW tile is written once, with no accumulation through memory.
 */
#ifndef SL_KERNELS_MLP_SIMD_H
#define SL_KERNELS_MLP_SIMD_H

#include "mlp_kernels.h"
#include "simd.h"

#include <stddef.h>
#include <string.h>

/* Register blocking from kernels/simd.h's width: 32 registers (AVX-512): 6 x 4 accumulators + 4 panel
 * vectors + a broadcast; 16 (AVX2, SSE): 6 x 2 + 2 + 1. */
#define MLPS_VL VF32_LANES
#define MLPS_NV (SIMD_NREGS >= 32 ? 4 : 2)
#define MLPS_MR 6
#define MLPS_NC (MLPS_VL * MLPS_NV)
#define MLPS_KC 128

/* One product C = A B (+ bias, then ReLU or mask), element (r, c) of each operand at the strides below.
 * A: rows r (the range given to mlps_gemm), reduction p < k; B: reduction p, columns c < n. */
typedef struct mlps_op {
    const float *A;
    size_t ars, aps;
    const float *B;
    size_t bps, bcs;
    float *C;
    size_t ldc;
    int n, k;
    const float *bias; /* C starts at bias[c] (NULL: 0) */
    int relu;          /* C = max(C, 0) at the end */
    const float *mask; /* C = mask(r, c) > 0 ? C : 0 at the end (NULL: no mask) */
    size_t ldm;
} mlps_op;

/* Panel[p][c] = B(p0 + p, c0 + c) for p < kn, c < nc; columns nc..NC-1 zero, so a tail vector adds 0. */
static inline void mlps_pack(const mlps_op *o, int p0, int kn, int c0, int nc, float *panel)
{
    const float *s = o->B + (size_t)p0 * o->bps + (size_t)c0 * o->bcs;
    if (o->bcs == 1) { /* rows of B are contiguous: a copy, whole vectors (vf32_load_n zero-fills a tail) */
        for (int p = 0; p < kn; p++)
            for (int v = 0; v < MLPS_NV; v++)
                vf32_store(panel + (size_t)p * MLPS_NC + v * MLPS_VL,
                           vf32_load_n(s + (size_t)p * o->bps + v * MLPS_VL, nc - v * MLPS_VL));
        return;
    }
    /* W^T for the delta: read W's rows (contiguous in p), write a panel column */
    if (nc < MLPS_NC)
        memset(panel, 0, (size_t)kn * MLPS_NC * sizeof(float));
    for (int c = 0; c < nc; c++)
        for (int p = 0; p < kn; p++)
            panel[(size_t)p * MLPS_NC + c] = s[(size_t)c * o->bcs + (size_t)p * o->bps];
}

/* C tile rows r..r+mr-1, columns c..c+nc-1 over reduction p0..p0+kn-1, held in mr x nv registers;
 * panel row p (B's row p0 + p from column c) at panel + p * ldp. mr and nv are constants at every call,
 * so the loops unroll and acc stays in registers. */
static inline __attribute__((always_inline)) void mlps_tile(const int mr, const int nv, const mlps_op *o,
                                                            int r, int c, int nc, int p0, int kn,
                                                            const float *panel, size_t ldp)
{
    vf32 acc[MLPS_MR][MLPS_NV];
    float *C = o->C + (size_t)r * o->ldc + c;
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++) {
            int n = nc - v * MLPS_VL;
            if (p0 > 0) /* a later reduction block: continue the sums left in C */
                acc[i][v] = vf32_load_n(C + (size_t)i * o->ldc + v * MLPS_VL, n);
            else if (o->bias)
                acc[i][v] = vf32_load_n(o->bias + c + v * MLPS_VL, n);
            else
                acc[i][v] = (vf32){0};
        }
    const float *A = o->A + (size_t)r * o->ars + (size_t)p0 * o->aps;
    const size_t ars = o->ars, aps = o->aps;
    for (int p = 0; p < kn; p++) {
        const float *wp = panel + (size_t)p * ldp;
        vf32 wv[MLPS_NV];
        for (int v = 0; v < nv; v++) {
            wv[v] = vf32_load(wp + v * MLPS_VL);
            SIMD_KEEP_IN_REG(wv[v]);
        }
        for (int i = 0; i < mr; i++) {
            float a = A[(size_t)i * ars + (size_t)p * aps];
            for (int v = 0; v < nv; v++)
                acc[i][v] += a * wv[v];
        }
    }
    const int last = p0 + kn == o->k;
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++) {
            int n = nc - v * MLPS_VL;
            vf32 x = acc[i][v];
            if (last && o->relu) /* fused ReLU: x > 0 is all-ones where kept */
                x = (vf32)((vi32)x & (x > 0.0f));
            if (last && o->mask) { /* fused relu'(A_prev): A_prev > 0 iff its z > 0 */
                vf32 m = vf32_load_n(o->mask + (size_t)(r + i) * o->ldm + c + v * MLPS_VL, n);
                x = (vf32)((vi32)x & (m > 0.0f));
            }
            vf32_store_n(C + (size_t)i * o->ldc + v * MLPS_VL, x, n);
        }
}

/* All MR-row tiles of one panel, with the column count's vector count fixed at compile time. */
static inline __attribute__((always_inline)) void mlps_rows(const int nv, const mlps_op *o, int r0, int r1,
                                                            int c, int nc, int p0, int kn,
                                                            const float *panel, size_t ldp)
{
    int r = r0;
    for (; r + MLPS_MR <= r1; r += MLPS_MR)
        mlps_tile(MLPS_MR, nv, o, r, c, nc, p0, kn, panel, ldp);
    if (r + 4 <= r1) { /* row tails in as few tiles as possible: 4, 2, 1 */
        mlps_tile(4, nv, o, r, c, nc, p0, kn, panel, ldp);
        r += 4;
    }
    if (r + 2 <= r1) {
        mlps_tile(2, nv, o, r, c, nc, p0, kn, panel, ldp);
        r += 2;
    }
    if (r < r1)
        mlps_tile(1, nv, o, r, c, nc, p0, kn, panel, ldp);
}

/* Rows r0..r1-1 of C = A B (all columns). A narrow block (the 10 logits) uses one-vector tiles rather
 * than computing NV-1 vectors of zero padding. */
static inline void mlps_gemm(const mlps_op *o, int r0, int r1)
{
    float panel[MLPS_KC * MLPS_NC] __attribute__((aligned(64)));
    if (r0 >= r1)
        return;
    for (int c = 0; c < o->n; c += MLPS_NC) {
        int nc = o->n - c < MLPS_NC ? o->n - c : MLPS_NC;
        for (int p0 = 0; p0 < o->k; p0 += MLPS_KC) {
            int kn = o->k - p0 < MLPS_KC ? o->k - p0 : MLPS_KC;
            const float *pp = panel;
            size_t ldp = MLPS_NC;
            if (o->bcs == 1 && nc == MLPS_NC) { /* whole vectors of B's own rows: read in place */
                pp = o->B + (size_t)p0 * o->bps + c;
                ldp = o->bps;
            } else
                mlps_pack(o, p0, kn, c, nc, panel);
            if (nc <= MLPS_VL)
                mlps_rows(1, o, r0, r1, c, nc, p0, kn, pp, ldp);
            else
                mlps_rows(MLPS_NV, o, r0, r1, c, nc, p0, kn, pp, ldp);
        }
    }
}

/* Forward of rows r0..r1-1: rows are independent through all three layers, so a thread needs no other
 * thread's rows. */
static inline void mlps_forward_rows(const mlp_dims *d, const float *P, const float *X, mlp_ws *ws,
                                     int r0, int r1)
{
    mlp_layout L = mlp_layout_of(d);
    mlps_op o1 = {.A = X, .ars = d->n0, .aps = 1, .B = P + L.W1, .bps = d->n1, .bcs = 1, .C = ws->a1,
                  .ldc = d->n1, .n = d->n1, .k = d->n0, .bias = P + L.b1, .relu = 1};
    mlps_op o2 = {.A = ws->a1, .ars = d->n1, .aps = 1, .B = P + L.W2, .bps = d->n2, .bcs = 1, .C = ws->a2,
                  .ldc = d->n2, .n = d->n2, .k = d->n1, .bias = P + L.b2, .relu = 1};
    mlps_op o3 = {.A = ws->a2, .ars = d->n2, .aps = 1, .B = P + L.W3, .bps = d->n3, .bcs = 1, .C = ws->z3,
                  .ldc = d->n3, .n = d->n3, .k = d->n2, .bias = P + L.b3, .relu = 0};
    mlps_gemm(&o1, r0, r1);
    mlps_gemm(&o2, r0, r1);
    mlps_gemm(&o3, r0, r1);
}

/* D_prev rows r0..r1-1 = (D W^T) * relu'(A_prev): W is n_prev x n_out; B(p = j, c = k) = W[k][j]. */
static inline void mlps_delta_rows(const float *D, const float *W, const float *Aprev, float *Dprev,
                                   int n_prev, int n_out, int r0, int r1)
{
    mlps_op o = {.A = D, .ars = n_out, .aps = 1, .B = W, .bps = 1, .bcs = n_out, .C = Dprev, .ldc = n_prev,
                 .n = n_prev, .k = n_out, .mask = Aprev, .ldm = n_prev};
    mlps_gemm(&o, r0, r1);
}

/* dW rows k0..k1-1 (W is n_in x n_out) = A^T D over the B rows: A(r = k, p = b) = A[b][k]. */
static inline void mlps_wgrad_rows(const float *A, const float *D, float *dW, int B, int n_in, int n_out,
                                   int k0, int k1)
{
    mlps_op o = {.A = A, .ars = 1, .aps = n_in, .B = D, .bps = n_out, .bcs = 1, .C = dW, .ldc = n_out,
                 .n = n_out, .k = B};
    mlps_gemm(&o, k0, k1);
}

/* db[j] = sum_b D[b][j] for j0 <= j < j1 (B x n floats: a few hundred adds, left to the vectoriser). */
static inline void mlps_colsum(const float *D, float *db, int B, int n, int j0, int j1)
{
    for (int j = j0; j < j1; j++)
        db[j] = 0.0f;
    for (int b = 0; b < B; b++)
        for (int j = j0; j < j1; j++)
            db[j] += D[(size_t)b * n + j];
}

/* [*lo, *hi) of n items for part t of nt: equal parts rounded up to even counts (whole MR tiles would
 * give 36 + 28 of 64 rows with MR = 6; the 2-row tail tile costs less than that imbalance). */
static inline void mlps_split(int n, int t, int nt, int *lo, int *hi)
{
    int chunk = ((n + nt - 1) / nt + 1) / 2 * 2;
    long a = (long)t * chunk, b = a + chunk;
    *lo = a < n ? (int)a : n;
    *hi = b < n ? (int)b : n;
}

#endif
