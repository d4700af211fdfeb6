/* kernels/precision/onednn_fp32.c: the reference row by oneDNN: float32 everywhere, the mlp study's
 * onednn kernels (kernels/mlp/onednn.c: matmul primitives) on the master weights, one thread as every
 * precision row. Built with oneDNN only, compiled once (kernels/kern_onednn.h). */
#include "precision_kernels.h"

void prec_convert_onednn_fp32(const mlp_dims *d, const float *P, uint16_t *Pq)
{
    (void)d, (void)P, (void)Pq; /* the forward reads P */
}

void prec_forward_onednn_fp32(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                              prec_ws *ws)
{
    (void)Pq;
    mlp_forward_onednn(d, P, X, B, &ws->f, 1);
}

void prec_backward_onednn_fp32(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                               prec_ws *ws, float *G)
{
    (void)Pq;
    mlp_backward_onednn(d, P, X, B, &ws->f, G, 1);
}
