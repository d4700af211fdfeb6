/*
 * kernels/mlp/mlp_simd.h: the register-blocked products shared by simd.c (one thread, all rows) and
 * omp.c (each thread a range of rows). Internal to kernels/mlp; everything is static inline.
 *
 * Every product of a step is one shape, C (m x n) = A (m x k) B (k x n), with strides chosen per use:
 *   forward  Z = A_prev W      rows = batch, reduction = layer input;  bias first, ReLU last (fused)
 *   gradient dW = A^T D        rows = layer input, reduction = batch;  A read transposed in place
 *   delta    D_prev = D W^T    rows = batch, reduction = layer output; relu'(A_prev) mask last (fused)
 * Blocking (the classic GEMM one, sized for this network): the reduction is cut in blocks of KC rows
 * and the columns in blocks of NC = NV vectors (64 floats with AVX-512, 16 with AVX2); each KC x NC
 * block of B is reused by every MR-row tile of the range (the panel). The panel is copied, transposed
 * as needed (W^T for the delta) and zero-padded to whole vectors (a column tail), into an aligned stack
 * buffer, so the micro-kernel never has column-tail code; where B's rows hold the block's whole vectors
 * (W in the forward, D in the gradient) it may be read in place instead. Per width (MLPS_KC,
 * MLPS_B_IN_PLACE), each measured on its machine:
 *   AVX-512 (Zen 4): KC = 128, B read in place where it can be: the copy measured ~7 % slower, costing
 *     more than the L2 reads it saves (a panel row is 4 cache lines; the panel 32 KB).
 *   AVX2 (Zen 3): KC = 1024, B always copied. A panel row is one 64-byte line, and read in place the
 *     rows of W and D, 512 B apart in this network, fall in 8 of the L1's 64 sets, which hold 64 of the
 *     panel's lines: each tile read even the weight gradient's 64-line panel (4 KB) from L2 again.
 *     Copied, a panel is contiguous: the small ones stay in L1, the large ones (layer 1's forward: 784
 *     lines, 49 KB, more than L1) are one sequential stream from L2. One reduction
 *     block of up to 1024 covers every layer and batch of the studies, so a C tile is loaded and stored
 *     once (layer 1's 784 inputs were 7 blocks) and the update is fused at every batch. The study on a
 *     2-vCPU Zen 3 VM, against a build with -Dc_args="-DMLPS_KC=128 -DMLPS_B_IN_PLACE=1" (AVX-512's
 *     choice at AVX2), 3 interleaved rounds of `speedlab run mlp --variants simd|omp --reps 1`: about
 *     4 % less time (simd) and 3 % (omp, 2 threads).
 * The micro-kernel keeps an MR x NV tile of C in vector registers: MR = 6 rows x NV vectors (AVX-512:
 * 6 x 4 zmm = 24 accumulators + 4 panel vectors + 1 broadcast of 32 registers; AVX2: 6 x 2 ymm + 2 + 1
 * of 16). Each reduction step is NV vector loads, MR broadcasts of A and MR*NV independent FMAs, enough
 * to hide the FMA latency. Measured on a Zen 4 VM (one core, FMA peak ~117 GFLOP/s): ~116
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
/* The blocking per width (the file's comment); either can be set with -Dc_args to compare. */
#ifndef MLPS_KC
#if MLPS_VL == 8 /* AVX2 (AVX without AVX2 takes the same, unmeasured) */
#define MLPS_KC 1024
#else
#define MLPS_KC 128
#endif
#endif
#ifndef MLPS_B_IN_PLACE
#define MLPS_B_IN_PLACE (MLPS_VL != 8)
#endif

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
    float lr;          /* > 0: C -= lr * (A B), the SGD update fused into the store (C is the weights);
                        * only where k fits one reduction block (mlps_fused_ok) */
} mlps_op;

/* Whether the fused update (mlps_op.lr) can run at batch B: the weight gradient's reduction is the
 * batch, and C can only take the update once, at the end of a single reduction block. */
static inline int mlps_fused_ok(int B)
{
    return B > 0 && B <= MLPS_KC;
}

/* The VL x VL block whose rows are src[i * lds ..] (i < VL), transposed into dst[j * ldd ..]: one
 * stage per bit of the lane index, each swapping that bit of the row index with that bit of the lane
 * (pairs of rows i, i + s exchange the lanes with bit s set in i for those with it clear in i + s), so
 * log2(VL) stages of VL two-vector shuffles replace VL * VL scalar moves. The masks are constants once
 * the lane loops unroll (GCC: one two-source permute per shuffle with AVX-512 and AVX2). */
static inline __attribute__((always_inline)) void mlps_tstage(vf32 *r, const int sb)
{
    vi32 lo, hi;
    #pragma GCC unroll 16
    for (int l = 0; l < MLPS_VL; l++) {
        lo[l] = (l & sb) ? MLPS_VL + l - sb : l;
        hi[l] = (l & sb) ? MLPS_VL + l : l + sb;
    }
    #pragma GCC unroll 16
    for (int i = 0; i < MLPS_VL; i++)
        if (!(i & sb)) {
            vf32 a = r[i], b = r[i + sb];
            r[i] = vf32_shuffle2(a, b, lo);
            r[i + sb] = vf32_shuffle2(a, b, hi);
        }
}

static inline __attribute__((always_inline)) void mlps_transpose(const float *src, size_t lds, float *dst,
                                                                 size_t ldd)
{
    vf32 r[MLPS_VL];
    #pragma GCC unroll 16
    for (int i = 0; i < MLPS_VL; i++)
        r[i] = vf32_load(src + (size_t)i * lds);
    if (MLPS_VL > 8) /* the stages with constant bits: masks fold to constants */
        mlps_tstage(r, 8);
    if (MLPS_VL > 4)
        mlps_tstage(r, 4);
    if (MLPS_VL > 2)
        mlps_tstage(r, 2);
    if (MLPS_VL > 1)
        mlps_tstage(r, 1);
    #pragma GCC unroll 16
    for (int j = 0; j < MLPS_VL; j++)
        vf32_store(dst + (size_t)j * ldd, r[j]);
}

/* Panel[p][c] = B(p0 + p, c0 + c) for p < kn, c < nc; columns nc..NC-1 zero, so a tail vector adds 0.
 * Not inlined: once per panel, and kept out of the tiles' register allocation. */
static __attribute__((noinline)) void mlps_pack(const mlps_op *o, int p0, int kn, int c0, int nc, float *panel)
{
    const float *s = o->B + (size_t)p0 * o->bps + (size_t)c0 * o->bcs;
    if (o->bcs == 1) { /* rows of B are contiguous: a copy, whole vectors (vf32_load_n zero-fills a tail) */
        for (int p = 0; p < kn; p++)
            for (int v = 0; v < MLPS_NV; v++)
                vf32_store(panel + (size_t)p * MLPS_NC + v * MLPS_VL,
                           vf32_load_n(s + (size_t)p * o->bps + v * MLPS_VL, nc - v * MLPS_VL));
        return;
    }
    /* W^T for the delta (W's rows contiguous in p, bps 1): whole VL x VL blocks by mlps_transpose
     * (a third of delta1's time went to this copy when it was scalar), the edges element by element */
    if (nc < MLPS_NC)
        memset(panel, 0, (size_t)kn * MLPS_NC * sizeof(float));
    int cv = o->bps == 1 ? nc / MLPS_VL * MLPS_VL : 0, pv = kn / MLPS_VL * MLPS_VL;
    for (int c = 0; c < cv; c += MLPS_VL)
        for (int p = 0; p < pv; p += MLPS_VL)
            mlps_transpose(s + (size_t)c * o->bcs + p, o->bcs, panel + (size_t)p * MLPS_NC + c, MLPS_NC);
    for (int c = 0; c < nc; c++)
        for (int p = c < cv ? pv : 0; p < kn; p++)
            panel[(size_t)p * MLPS_NC + c] = s[(size_t)c * o->bcs + (size_t)p * o->bps];
}

/* Vector v of a tile row at p: whole (full, a compile-time constant at every call) or the first n lanes.
 * Whole vectors matter beyond the tail: vf32_load_n/store_n may call memcpy, and a call in the tile's
 * epilogue makes GCC spill every accumulator to the stack first (all vector registers are
 * caller-saved), in every tile, not only in the tail ones. */
static inline __attribute__((always_inline)) vf32 mlps_ld(const int full, const float *p, int n)
{
    return full ? vf32_load(p) : vf32_load_n(p, n);
}
static inline __attribute__((always_inline)) void mlps_st(const int full, float *p, vf32 x, int n)
{
    if (full)
        vf32_store(p, x);
    else
        vf32_store_n(p, x, n);
}

/* C tile rows r..r+mr-1, columns c..c+nc-1 over reduction p0..p0+kn-1, held in mr x nv registers;
 * panel row p (B's row p0 + p from column c) at panel + p * ldp. mr, nv and full (nc = nv vectors
 * exactly) are constants at every call, so the loops unroll and acc stays in registers. */
static inline __attribute__((always_inline)) void mlps_tile(const int mr, const int nv, const int full,
                                                            const mlps_op *o, int r, int c, int nc, int p0,
                                                            int kn, const float *panel, size_t ldp)
{
    vf32 acc[MLPS_MR][MLPS_NV];
    float *C = o->C + (size_t)r * o->ldc + c;
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++) {
            int n = nc - v * MLPS_VL;
            if (p0 > 0) /* a later reduction block: continue the sums left in C */
                acc[i][v] = mlps_ld(full, C + (size_t)i * o->ldc + v * MLPS_VL, n);
            else if (o->bias)
                acc[i][v] = mlps_ld(full, o->bias + c + v * MLPS_VL, n);
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
                vf32 m = mlps_ld(full, o->mask + (size_t)(r + i) * o->ldm + c + v * MLPS_VL, n);
                x = (vf32)((vi32)x & (m > 0.0f));
            }
            if (o->lr > 0.0f) /* fused SGD (p0 is 0: one block): the weights, less lr times the gradient */
                x = mlps_ld(full, C + (size_t)i * o->ldc + v * MLPS_VL, n) - o->lr * x;
            mlps_st(full, C + (size_t)i * o->ldc + v * MLPS_VL, x, n);
        }
}

/* All MR-row tiles of one panel, with the column count's vector count (and whether it is whole) fixed
 * at compile time. */
static inline __attribute__((always_inline)) void mlps_rows(const int nv, const int full, const mlps_op *o,
                                                            int r0, int r1, int c, int nc, int p0, int kn,
                                                            const float *panel, size_t ldp)
{
    int r = r0;
    for (; r + MLPS_MR <= r1; r += MLPS_MR)
        mlps_tile(MLPS_MR, nv, full, o, r, c, nc, p0, kn, panel, ldp);
    if (r + 4 <= r1) { /* row tails in as few tiles as possible: 4, 2, 1 */
        mlps_tile(4, nv, full, o, r, c, nc, p0, kn, panel, ldp);
        r += 4;
    }
    if (r + 2 <= r1) {
        mlps_tile(2, nv, full, o, r, c, nc, p0, kn, panel, ldp);
        r += 2;
    }
    if (r < r1)
        mlps_tile(1, nv, full, o, r, c, nc, p0, kn, panel, ldp);
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
            if (MLPS_B_IN_PLACE && o->bcs == 1 && nc == MLPS_NC) { /* B's own rows: whole vectors */
                pp = o->B + (size_t)p0 * o->bps + c;
                ldp = o->bps;
            } else
                mlps_pack(o, p0, kn, c, nc, panel);
            if (nc == MLPS_NC) /* whole vectors: no tail code at all */
                mlps_rows(MLPS_NV, 1, o, r0, r1, c, nc, p0, kn, pp, ldp);
            else if (nc <= MLPS_VL)
                mlps_rows(1, 0, o, r0, r1, c, nc, p0, kn, pp, ldp);
            else
                mlps_rows(MLPS_NV, 0, o, r0, r1, c, nc, p0, kn, pp, ldp);
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

/* W rows k0..k1-1 -= lr * (A^T D)[k0..k1-1]: mlps_wgrad_rows with the update fused (mlps_fused_ok(B)),
 * so the gradient is never stored and the update is no separate pass over it. */
static inline void mlps_wgrad_sgd_rows(const float *A, const float *D, float *W, int B, int n_in, int n_out,
                                       int k0, int k1, float lr)
{
    mlps_op o = {.A = A, .ars = 1, .aps = n_in, .B = D, .bps = n_out, .bcs = 1, .C = W, .ldc = n_out,
                 .n = n_out, .k = B, .lr = lr};
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

/* b[j] -= lr * sum_b D[b][j] for j0 <= j < j1: mlps_colsum with the update fused, in chunks of 64
 * columns summed on the stack (the same order of adds as mlps_colsum). */
static inline void mlps_colsum_sgd(const float *D, float *bias, int B, int n, int j0, int j1, float lr)
{
    float s[64];
    for (int c = j0; c < j1; c += 64) {
        int m = j1 - c < 64 ? j1 - c : 64;
        mlps_colsum(D + c, s, B, n, 0, m);
        for (int j = 0; j < m; j++)
            bias[c + j] -= lr * s[j];
    }
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
