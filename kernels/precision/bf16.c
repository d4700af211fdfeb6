/* kernels/precision/bf16.c: bfloat16 storage. Two paths, chosen at run time (prec_path):
 *   convert  bf16 widened to float32 by a shift (prec_convert.h: GCC vectors, the same at every level)
 *            around float32 FMA (prec_gemm.h), forward and backward;
 *   bf16dp   on a CPU with AVX512_BF16 (AVX2 or AVX-512 kernels): every product by vdpbf16ps
 *            (prec_dp.h), forward and backward, the deltas rounded to bf16 for the backward's products.
 * Weights converted once per step (the dot products' pair layouts too), input and activations stored
 * as bf16, float32 accumulation in both. */
#include "prec_dp.h"

#if PREC_HAVE_DP_CODE
/* The pairs (W[i][2jj], W[i][2jj+1]) of W (n_in x n_out, plain bf16) as words jj n_in + i. */
static void transpose_pairs(const uint16_t *W, uint16_t *WTp, int n_in, int n_out)
{
    uint32_t *o = (uint32_t *)(void *)WTp;
    for (int i = 0; i < n_in; i++) {
        const uint16_t *w = W + (size_t)i * n_out;
        for (int jj = 0; jj < (n_out + 1) / 2; jj++)
            o[(size_t)jj * n_in + i] = w[2 * jj] | (2 * jj + 1 < n_out ? (uint32_t)w[2 * jj + 1] << 16 : 0);
    }
}


/* Each W's row pairs interleaved in bf16 (the forward's B operand). */
static DP_TARGET void pairs_of(const mlp_dims *d, const float *P, uint16_t *Pq)
{
    mlp_layout L = mlp_layout_of(d);
    dp_interleave_w((uint32_t *)(void *)(Pq + prec_pairs_offset(d, 0)), P + L.W1, d->n0, d->n1);
    dp_interleave_w((uint32_t *)(void *)(Pq + prec_pairs_offset(d, 1)), P + L.W2, d->n1, d->n2);
    dp_interleave_w((uint32_t *)(void *)(Pq + prec_pairs_offset(d, 2)), P + L.W3, d->n2, d->n3);
}
#endif

void prec_convert_bf16(const mlp_dims *d, const float *P, uint16_t *Pq)
{
    mlp_layout L = mlp_layout_of(d);
#if PREC_HAVE_DP_CODE
    if (prec_path(PT_BF16) == PREC_PATH_BF16DP) {
        /* the plain layout where a layer's forward needs it (odd inputs) and for W^T's pairs */
        prec_convert_array(PT_BF16, Pq + (d->n0 % 2 ? 0 : L.W2), P + (d->n0 % 2 ? 0 : L.W2),
                           L.n - (d->n0 % 2 ? 0 : L.W2));
        pairs_of(d, P, Pq);
        transpose_pairs(Pq + L.W2, Pq + prec_tpairs_offset(d, 1), d->n1, d->n2);
        transpose_pairs(Pq + L.W3, Pq + prec_tpairs_offset(d, 2), d->n2, d->n3);
        return;
    }
#endif
    prec_convert_array(PT_BF16, Pq, P, L.n);
}

#if PREC_HAVE_DP_CODE
/* A layer's forward: by dot products where its inputs pair up (n_in even), else through conversions. */
static DP_TARGET void layer_dp(const mlp_dims *d, int l, int ct, const uint16_t *In, const uint16_t *Pq,
                               const float *P, void *Out, int relu, int B)
{
    mlp_layout L = mlp_layout_of(d);
    const int n[4] = {d->n0, d->n1, d->n2, d->n3};
    const size_t W[3] = {L.W1, L.W2, L.W3}, b[3] = {L.b1, L.b2, L.b3};
    if (n[l] % 2 == 0)
        dp_layer(ct, In, Pq + prec_pairs_offset(d, l), P + b[l], Out, n[l], n[l + 1], relu, B);
    else
        prec_layer(PT_BF16, ct, In, Pq + W[l], P + b[l], Out, n[l], n[l + 1], relu, B);
}

static DP_TARGET void backward_dp(const mlp_dims *d, const uint16_t *Pq, int B, prec_ws *ws, float *G)
{
    mlp_layout L = mlp_layout_of(d);
    if (B <= 0) { /* no rows: every gradient is an empty sum */
        memset(G, 0, L.n * sizeof(float));
        return;
    }
    dp_wgrad(ws->a2q, ws->f.d3, G + L.W3, B, d->n2, d->n3, ws);
    mlps_colsum(ws->f.d3, G + L.b3, B, d->n3, 0, d->n3);
    dp_delta(ws->f.d3, Pq + prec_tpairs_offset(d, 2), ws->a2q, ws->f.d2, d->n2, d->n3, B, ws);
    dp_wgrad(ws->a1q, ws->f.d2, G + L.W2, B, d->n1, d->n2, ws);
    mlps_colsum(ws->f.d2, G + L.b2, B, d->n2, 0, d->n2);
    dp_delta(ws->f.d2, Pq + prec_tpairs_offset(d, 1), ws->a1q, ws->f.d1, d->n1, d->n2, B, ws);
    dp_wgrad(ws->xq, ws->f.d1, G + L.W1, B, d->n0, d->n1, ws);
    mlps_colsum(ws->f.d1, G + L.b1, B, d->n1, 0, d->n1);
}
#endif

void prec_forward_bf16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B, prec_ws *ws)
{
#if PREC_HAVE_DP_CODE
    if (prec_path(PT_BF16) == PREC_PATH_BF16DP) {
        prec_convert_array(PT_BF16, ws->xq, X, (size_t)B * d->n0);
        layer_dp(d, 0, PT_BF16, ws->xq, Pq, P, ws->a1q, 1, B);
        layer_dp(d, 1, PT_BF16, ws->a1q, Pq, P, ws->a2q, 1, B);
        layer_dp(d, 2, PT_F32, ws->a2q, Pq, P, ws->f.z3, 0, B);
        return;
    }
#endif
    prec_forward_q(PT_BF16, d, P, Pq, X, B, ws);
}

void prec_backward_bf16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                     prec_ws *ws, float *G)
{
    (void)P, (void)X; /* the biases' gradients need no weights; dW1 reads the stored input */
#if PREC_HAVE_DP_CODE
    if (prec_path(PT_BF16) == PREC_PATH_BF16DP) {
        backward_dp(d, Pq, B, ws, G);
        return;
    }
#endif
    prec_backward_q(PT_BF16, d, Pq, B, ws, G);
}
