/* kernels/precision/fp16.c: IEEE half storage. Two paths, chosen at run time (prec_path):
 *   convert  F16C's vcvtph2ps and vcvtps2ph (x86-64-v3, v4; in software lane by lane at v2, which has
 *            no F16C) around float32 FMA (prec_gemm.h), forward and backward;
 *   fp16     on a CPU with AVX512_FP16 (AVX-512 kernels): the forward's products in native fp16
 *            arithmetic (prec_fp16n.h), the backward the conversions' (float32 deltas).
 * Weights converted once per step, input and activations stored as fp16. */
#include "prec_fp16n.h"

void prec_convert_fp16(const mlp_dims *d, const float *P, uint16_t *Pq)
{
    prec_convert_array(PT_F16, Pq, P, mlp_layout_of(d).n);
}

#if PREC_HAVE_FP16_CODE
static FN_TARGET void forward_native(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                                     prec_ws *ws)
{
    mlp_layout L = mlp_layout_of(d);
    prec_convert_array(PT_F16, ws->xq, X, (size_t)B * d->n0);
    fn_layer(PT_F16, ws->xq, Pq + L.W1, P + L.b1, ws->a1q, d->n0, d->n1, 1, B);
    fn_layer(PT_F16, ws->a1q, Pq + L.W2, P + L.b2, ws->a2q, d->n1, d->n2, 1, B);
    fn_layer(PT_F32, ws->a2q, Pq + L.W3, P + L.b3, ws->f.z3, d->n2, d->n3, 0, B);
}
#endif

void prec_forward_fp16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B, prec_ws *ws)
{
#if PREC_HAVE_FP16_CODE
    if (prec_path(PT_F16) == PREC_PATH_FP16) {
        forward_native(d, P, Pq, X, B, ws);
        return;
    }
#endif
    prec_forward_q(PT_F16, d, P, Pq, X, B, ws);
}

void prec_backward_fp16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                     prec_ws *ws, float *G)
{
    (void)P, (void)X; /* the biases' gradients need no weights; dW1 reads the stored input */
    prec_backward_q(PT_F16, d, Pq, B, ws, G);
}
