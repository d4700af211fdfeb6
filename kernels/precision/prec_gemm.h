/*
 * kernels/precision/prec_gemm.h: the products of one mlp step with operands of mixed element types
 * (prec_convert.h's PT_F32, PT_BF16, PT_F16), accumulated in float32 vectors. Internal to
 * kernels/precision; everything is static inline, and the types are constants at every call so that
 * each instantiation has its own conversions inlined and no type test in its loops.
 *
 * One shape, C (M x n) = A (M x k) B (k x n), B's columns contiguous: the forward Z = A_prev W, the
 * weight gradient dW = A^T D (A read transposed in place), the delta D W^T (W^T first converted to a
 * float32 copy, ws->wt, so that its columns are contiguous: a 128 x 128 layer is 16 K conversions
 * against 1 M multiply-adds). The tile keeps MR x NV vectors of C in registers over the whole
 * reduction: each step loads NV vectors of B (converted once) and broadcasts MR elements of A, so a
 * conversion of B serves MR rows. Simpler than kernels/mlp/mlp_simd.h's (no reduction blocking or
 * packing): what this study compares is the storage type, every row with the same blocking.
 */
#ifndef SL_KERNELS_PREC_GEMM_H
#define SL_KERNELS_PREC_GEMM_H

#include "mlp/mlp_simd.h" /* mlps_colsum */
#include "prec_convert.h"
#include "precision_kernels.h"

#define PREC_VL VF32_LANES
/* 4 x 4 accumulators + 4 B vectors + a broadcast of 32 registers; 4 x 2 + 2 + 1 of 16. Six rows (as
 * mlp_simd.h's) were about 1.5x slower here in (contended) smoke runs: with the conversions' temporaries
 * the tile no longer fits the registers. */
#define PREC_NV (SIMD_NREGS >= 32 ? 4 : 2)
#define PREC_MR 4

typedef struct prec_op {
    const void *A;
    size_t ars, aps;  /* A(r, p) = A[r ars + p aps] */
    const void *B;
    size_t bps;       /* B(p, c) = B[p bps + c] */
    void *C;
    size_t ldc;       /* C(r, c) = C[r ldc + c]; the mask has the same shape */
    int n, k;
    const float *bias; /* C starts at bias[c] (NULL: 0) */
    int relu;          /* C = max(C, 0) at the end */
    const void *mask;  /* C = mask(r, c) > 0 ? C : 0 at the end (NULL: none) */
} prec_op;

/* C rows r..r+mr-1, columns c.. (nv vectors, the last possibly partial). at, bt, ct, mt: the types of
 * A, B, C and the mask. */
SIMD_INLINE void prec_tile(const int mr, const int nv, const int at, const int bt, const int ct, const int mt,
                           const prec_op *o, int r, int c)
{
    const int nc = o->n - c;
    vf32 acc[PREC_MR][PREC_NV];
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++)
            acc[i][v] = o->bias ? vf32_load_n(o->bias + c + v * PREC_VL, nc - v * PREC_VL) : (vf32){0};
    for (int p = 0; p < o->k; p++) {
        vf32 b[PREC_NV];
        for (int v = 0; v < nv; v++) {
            b[v] = prec_ldv(bt, o->B, (size_t)p * o->bps + c + v * PREC_VL, nc - v * PREC_VL);
            SIMD_KEEP_IN_REG(b[v]);
        }
        for (int i = 0; i < mr; i++) {
            float a = prec_ld1(at, o->A, (size_t)(r + i) * o->ars + (size_t)p * o->aps);
            for (int v = 0; v < nv; v++)
                acc[i][v] += a * b[v];
        }
    }
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++) {
            size_t at_c = (size_t)(r + i) * o->ldc + c + v * PREC_VL;
            vf32 x = acc[i][v];
            if (o->relu)
                x = (vf32)((vi32)x & (x > 0.0f));
            if (o->mask)
                x = (vf32)((vi32)x & (prec_ldv(mt, o->mask, at_c, nc - v * PREC_VL) > 0.0f));
            prec_stv(ct, o->C, at_c, x, nc - v * PREC_VL);
        }
}

/* Rows 0..M-1 of one column block in MR-row tiles, then tails of 2 and 1 rows (single-row tiles only
 * would convert each B vector for one row). nv is a constant at each call. */
SIMD_INLINE void prec_rows(const int nv, const int at, const int bt, const int ct, const int mt, const prec_op *o,
                           int M, int c)
{
    int r = 0;
    for (; r + PREC_MR <= M; r += PREC_MR)
        prec_tile(PREC_MR, nv, at, bt, ct, mt, o, r, c);
    if (r + 2 <= M) {
        prec_tile(2, nv, at, bt, ct, mt, o, r, c);
        r += 2;
    }
    if (r < M)
        prec_tile(1, nv, at, bt, ct, mt, o, r, c);
}

/* All M rows of C, column block by column block; a block of one vector or less (the 10 logits) in
 * one-vector tiles. */
SIMD_INLINE void prec_gemm(const int at, const int bt, const int ct, const int mt, const prec_op *o, int M)
{
    for (int c = 0; c < o->n; c += PREC_NV * PREC_VL) {
        if (o->n - c > PREC_VL)
            prec_rows(PREC_NV, at, bt, ct, mt, o, M, c);
        else
            prec_rows(1, at, bt, ct, mt, o, M, c);
    }
}

/* Out (B x n_out, type ct) = act(In (B x n_in, storage S) W (storage S) + bias). */
SIMD_INLINE void prec_layer(const int S, const int ct, const uint16_t *In, const uint16_t *W, const float *bias,
                            void *Out, int n_in, int n_out, int relu, int B)
{
    prec_op o = {.A = In, .ars = (size_t)n_in, .aps = 1, .B = W, .bps = (size_t)n_out, .C = Out,
                 .ldc = (size_t)n_out, .n = n_out, .k = n_in, .bias = bias, .relu = relu};
    prec_gemm(S, S, ct, PT_F32, &o, B);
}

/* The forward of a row that stores in S: X converted once, a1 and a2 stored in S, z3 in float32. */
SIMD_INLINE void prec_forward_q(const int S, const mlp_dims *d, const float *P, const uint16_t *Pq,
                                const float *X, int B, prec_ws *ws)
{
    mlp_layout L = mlp_layout_of(d);
    prec_convert_array(S, ws->xq, X, (size_t)B * d->n0);
    prec_layer(S, S, ws->xq, Pq + L.W1, P + L.b1, ws->a1q, d->n0, d->n1, 1, B);
    prec_layer(S, S, ws->a1q, Pq + L.W2, P + L.b2, ws->a2q, d->n1, d->n2, 1, B);
    prec_layer(S, PT_F32, ws->a2q, Pq + L.W3, P + L.b3, ws->f.z3, d->n2, d->n3, 0, B);
}

/* dW (n_in x n_out, float32) = A^T D over B rows: A (B x n_in) in S, D (B x n_out) float32. */
SIMD_INLINE void prec_wgrad(const int S, const uint16_t *A, const float *D, float *dW, int B, int n_in, int n_out)
{
    prec_op o = {.A = A, .ars = 1, .aps = (size_t)n_in, .B = D, .bps = (size_t)n_out, .C = dW,
                 .ldc = (size_t)n_out, .n = n_out, .k = B};
    prec_gemm(S, PT_F32, PT_F32, PT_F32, &o, n_in);
}

/* Dprev (B x n_prev) = (D W^T) * relu'(Aprev): W (n_prev x n_out) in S, through wt = W^T in float32. */
SIMD_INLINE void prec_delta(const int S, const float *D, const uint16_t *W, const uint16_t *Aprev, float *Dprev,
                            float *wt, int n_prev, int n_out, int B)
{
    for (int j = 0; j < n_prev; j++)
        for (int k = 0; k < n_out; k++)
            wt[(size_t)k * n_prev + j] = prec_ld1(S, W, (size_t)j * n_out + k);
    prec_op o = {.A = D, .ars = (size_t)n_out, .aps = 1, .B = wt, .bps = (size_t)n_prev, .C = Dprev,
                 .ldc = (size_t)n_prev, .n = n_prev, .k = n_out, .mask = Aprev};
    prec_gemm(PT_F32, PT_F32, PT_F32, S, &o, B);
}

/* The backward of a row that stores in S: the deltas and G in float32 from the stored activations. */
SIMD_INLINE void prec_backward_q(const int S, const mlp_dims *d, const uint16_t *Pq, int B, prec_ws *ws, float *G)
{
    mlp_layout L = mlp_layout_of(d);
    if (B <= 0) { /* no rows: every gradient is an empty sum */
        memset(G, 0, L.n * sizeof(float));
        return;
    }
    prec_wgrad(S, ws->a2q, ws->f.d3, G + L.W3, B, d->n2, d->n3);
    mlps_colsum(ws->f.d3, G + L.b3, B, d->n3, 0, d->n3);
    prec_delta(S, ws->f.d3, Pq + L.W3, ws->a2q, ws->f.d2, ws->wt, d->n2, d->n3, B);
    prec_wgrad(S, ws->a1q, ws->f.d2, G + L.W2, B, d->n1, d->n2);
    mlps_colsum(ws->f.d2, G + L.b2, B, d->n2, 0, d->n2);
    prec_delta(S, ws->f.d2, Pq + L.W2, ws->a1q, ws->f.d1, ws->wt, d->n1, d->n2, B);
    prec_wgrad(S, ws->xq, ws->f.d1, G + L.W1, B, d->n0, d->n1);
    mlps_colsum(ws->f.d1, G + L.b1, B, d->n1, 0, d->n1);
}

#endif
