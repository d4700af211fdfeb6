/* kernels/precision/bf16.c: bfloat16 storage, its conversions shifts with a rounding add
 * (prec_convert.h: GCC vectors, the same at every level).
 * Weights converted once per step, input and activations stored as bf16, float32 accumulation
 * (prec_gemm.h). */
#include "prec_gemm.h"

void prec_convert_bf16(const mlp_dims *d, const float *P, uint16_t *Pq)
{
    prec_convert_array(PT_BF16, Pq, P, mlp_layout_of(d).n);
}

void prec_forward_bf16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B, prec_ws *ws)
{
    prec_forward_q(PT_BF16, d, P, Pq, X, B, ws);
}

void prec_backward_bf16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                     prec_ws *ws, float *G)
{
    (void)P, (void)X; /* the biases' gradients need no weights; dW1 reads the stored input */
    prec_backward_q(PT_BF16, d, Pq, B, ws, G);
}
