/* kernels/precision/fp16.c: IEEE half storage, its conversions F16C's vcvtph2ps and vcvtps2ph
 * (x86-64-v3, v4; in software lane by lane at v2, which has no F16C).
 * Weights converted once per step, input and activations stored as fp16, float32 accumulation
 * (prec_gemm.h). */
#include "prec_gemm.h"

void prec_convert_fp16(const mlp_dims *d, const float *P, uint16_t *Pq)
{
    prec_convert_array(PT_F16, Pq, P, mlp_layout_of(d).n);
}

void prec_forward_fp16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B, prec_ws *ws)
{
    prec_forward_q(PT_F16, d, P, Pq, X, B, ws);
}

void prec_backward_fp16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                     prec_ws *ws, float *G)
{
    (void)P, (void)X; /* the biases' gradients need no weights; dW1 reads the stored input */
    prec_backward_q(PT_F16, d, Pq, B, ws, G);
}
