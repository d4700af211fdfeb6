/*
 * kernels/precision/bf16dp.c: bf16 storage with the forward's products by AVX512_BF16's
 * _mm512_dpbf16_ps (vdpbf16ps): one instruction multiplies 16 pairs of bf16 and adds both products
 * of each pair to a float32 lane, so the weights are never widened to float32 in the forward. The pair
 * is two consecutive reduction indices p, p+1: a 32-bit broadcast of A[r][p..p+1] against 16 columns'
 * W[p][j], W[p+1][j], which is why convert also writes each W with its row pairs interleaved
 * (precision_kernels.h). The backward is bf16's (the deltas are float32 there: no bf16 pairs to dot).
 * The dot products are compiled where KERN_CAN_AVX512BF16 (kernels/isa.h): a -march with AVX512_BF16,
 * or an AVX-512BW copy (a dispatch build's x86-64-v4) through the target attribute below. Elsewhere
 * (v3, v2) the forward is bf16's and kern_isa_avx512bf16() says 0, so the row is unavailable
 * ("avx512bf16", experiments/avail.c); on a CPU without the instructions the requirement refuses it too.
 */
#include "isa.h"
#include "prec_gemm.h"

#if KERN_CAN_AVX512BF16
#include <immintrin.h>

#define BF16DP __attribute__((target("avx512bf16")))

/* The lanes below m (of 16 floats, or of 32 halves for 16 pairs) as a load mask. */
static inline __mmask16 lanes16(int m) { return m >= 16 ? (__mmask16)0xffff : m <= 0 ? 0 : (__mmask16)((1u << m) - 1); }
static inline __mmask32 lanes32(int m) { return m >= 32 ? 0xffffffffu : m <= 0 ? 0 : (1u << m) - 1; }

/* Layer output rows r..r+mr-1, columns c.. (nv vectors of 16): In (bf16, rows of n_in) times the
 * interleaved W (n_in / 2 pair rows of 2 n_out halves), bias first, ReLU at the end, stored as ct. */
static inline __attribute__((always_inline)) BF16DP void dp_tile(const int mr, const int nv, const int ct,
                                                          const uint16_t *In, const uint16_t *Wp,
                                                          const float *bias, void *Out, int n_in, int n_out,
                                                          int relu, int r, int c)
{
    const int nc = n_out - c;
    __m512 acc[PREC_MR][PREC_NV];
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++)
            acc[i][v] = _mm512_maskz_loadu_ps(lanes16(nc - 16 * v), bias + c + 16 * v);
    for (int pp = 0; pp < n_in / 2; pp++) {
        __m512i w[PREC_NV];
        for (int v = 0; v < nv; v++)
            w[v] = _mm512_maskz_loadu_epi16(lanes32(2 * (nc - 16 * v)), Wp + ((size_t)pp * n_out + c + 16 * v) * 2);
        for (int i = 0; i < mr; i++) {
            uint32_t pair;
            memcpy(&pair, In + (size_t)(r + i) * n_in + 2 * pp, sizeof pair);
            __m512i a = _mm512_set1_epi32((int)pair);
            for (int v = 0; v < nv; v++)
                acc[i][v] = _mm512_dpbf16_ps(acc[i][v], (__m512bh)a, (__m512bh)w[v]);
        }
    }
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++) {
            __m512 x = relu ? _mm512_max_ps(acc[i][v], _mm512_setzero_ps()) : acc[i][v];
            prec_stv(ct, Out, (size_t)(r + i) * n_out + c + 16 * v, (vf32)x, nc - 16 * v);
        }
}

/* Rows 0..B-1 of one column block: MR-row tiles, then tails of 2 and 1 rows (as prec_gemm.h's). */
static inline __attribute__((always_inline)) BF16DP void dp_rows(const int nv, const int ct, const uint16_t *In,
                                                                 const uint16_t *Wp, const float *bias, void *Out,
                                                                 int n_in, int n_out, int relu, int B, int c)
{
    int r = 0;
    for (; r + PREC_MR <= B; r += PREC_MR)
        dp_tile(PREC_MR, nv, ct, In, Wp, bias, Out, n_in, n_out, relu, r, c);
    if (r + 2 <= B) {
        dp_tile(2, nv, ct, In, Wp, bias, Out, n_in, n_out, relu, r, c);
        r += 2;
    }
    if (r < B)
        dp_tile(1, nv, ct, In, Wp, bias, Out, n_in, n_out, relu, r, c);
}

/* One layer over B rows (n_in even), column block by column block. */
static inline __attribute__((always_inline)) BF16DP void dp_layer(const int ct, const uint16_t *In, const uint16_t *Wp,
                                                                  const float *bias, void *Out, int n_in, int n_out,
                                                                  int relu, int B)
{
    for (int c = 0; c < n_out; c += PREC_NV * 16) {
        if (n_out - c > 16)
            dp_rows(PREC_NV, ct, In, Wp, bias, Out, n_in, n_out, relu, B, c);
        else
            dp_rows(1, ct, In, Wp, bias, Out, n_in, n_out, relu, B, c);
    }
}

BF16DP void prec_forward_bf16dp(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                                prec_ws *ws)
{
    if (d->n0 % 2 || d->n1 % 2 || d->n2 % 2) { /* a pair would straddle two rows of In: bf16's way */
        prec_forward_q(PT_BF16, d, P, Pq, X, B, ws);
        return;
    }
    mlp_layout L = mlp_layout_of(d);
    prec_convert_array(PT_BF16, ws->xq, X, (size_t)B * d->n0);
    dp_layer(PT_BF16, ws->xq, Pq + prec_pairs_offset(d, 0), P + L.b1, ws->a1q, d->n0, d->n1, 1, B);
    dp_layer(PT_BF16, ws->a1q, Pq + prec_pairs_offset(d, 1), P + L.b2, ws->a2q, d->n1, d->n2, 1, B);
    dp_layer(PT_F32, ws->a2q, Pq + prec_pairs_offset(d, 2), P + L.b3, ws->f.z3, d->n2, d->n3, 0, B);
}
#else
void prec_forward_bf16dp(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B, prec_ws *ws)
{
    prec_forward_q(PT_BF16, d, P, Pq, X, B, ws); /* never timed: the row is unavailable */
}
#endif

/* W (n_in x n_out) with its rows' pairs interleaved; an odd last row's partner is zero. */
static void interleave(const float *W, uint16_t *Wp, int n_in, int n_out)
{
    for (int p = 0; p < (n_in + 1) / 2 * 2; p++)
        for (int j = 0; j < n_out; j++)
            Wp[((size_t)(p / 2) * n_out + j) * 2 + p % 2] = p < n_in ? prec_f32_to_bf16(W[(size_t)p * n_out + j]) : 0;
}

void prec_convert_bf16dp(const mlp_dims *d, const float *P, uint16_t *Pq)
{
    mlp_layout L = mlp_layout_of(d);
    prec_convert_array(PT_BF16, Pq, P, L.n); /* the plain layout: the backward's W^T */
    interleave(P + L.W1, Pq + prec_pairs_offset(d, 0), d->n0, d->n1);
    interleave(P + L.W2, Pq + prec_pairs_offset(d, 1), d->n1, d->n2);
    interleave(P + L.W3, Pq + prec_pairs_offset(d, 2), d->n2, d->n3);
}

void prec_backward_bf16dp(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                          prec_ws *ws, float *G)
{
    (void)P, (void)X;
    prec_backward_q(PT_BF16, d, Pq, B, ws, G);
}
