/* kernels/precision/fp32.c: the reference row, float32 everywhere: the mlp study's simd kernels
 * (kernels/mlp/simd.c) on the master weights themselves, so there is nothing to convert. */
#include "precision_kernels.h"

void prec_convert_fp32(const mlp_dims *d, const float *P, uint16_t *Pq)
{
    (void)d, (void)P, (void)Pq; /* the forward reads P */
}

void prec_forward_fp32(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B, prec_ws *ws)
{
    (void)Pq;
    mlp_forward_simd(d, P, X, B, &ws->f, 1);
}

void prec_backward_fp32(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                        prec_ws *ws, float *G)
{
    (void)Pq;
    mlp_backward_simd(d, P, X, B, &ws->f, G, 1);
}
