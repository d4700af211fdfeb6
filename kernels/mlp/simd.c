/*
 * kernels/mlp/simd.c: the register-blocked variant on one thread. The products are the blocked
 * micro-kernel of mlp_simd.h (explicit vectors: 16 floats with AVX-512, 8 with AVX2, 4 otherwise);
 * what is fused:
 *   forward: bias is the accumulators' starting value and ReLU is applied in registers before the one
 *            store, so a1/a2 are written once and never re-read for an activation pass;
 *   backward: relu'(A_prev) masks the delta tile in registers before its store; dW is written once per
 *            tile (the whole batch is one reduction block); the input's delta is never formed;
 *   step (mlp_step_simd, what the study runs): forward, loss and backward in one call, with the SGD
 *            update fused into the weight-gradient tiles' store (each tile of W is read, less lr times
 *            its gradient, and written back), so G is never written and the update is no extra pass.
 */
#include "mlp_kernels.h"
#include "mlp_simd.h"

void mlp_forward_simd(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, int threads)
{
    (void)threads;
    mlps_forward_rows(d, P, X, ws, 0, B);
}

void mlp_backward_simd(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, float *G,
                       int threads)
{
    (void)threads;
    mlp_layout L = mlp_layout_of(d);
    if (B <= 0) { /* no rows: every gradient is an empty sum */
        memset(G, 0, L.n * sizeof(float));
        return;
    }
    /* layer 3, then its delta into layer 2; each product reads what the previous one just wrote */
    mlps_wgrad_rows(ws->a2, ws->d3, G + L.W3, B, d->n2, d->n3, 0, d->n2);
    mlps_colsum(ws->d3, G + L.b3, B, d->n3, 0, d->n3);
    mlps_delta_rows(ws->d3, P + L.W3, ws->a2, ws->d2, d->n2, d->n3, 0, B);
    mlps_wgrad_rows(ws->a1, ws->d2, G + L.W2, B, d->n1, d->n2, 0, d->n1);
    mlps_colsum(ws->d2, G + L.b2, B, d->n2, 0, d->n2);
    mlps_delta_rows(ws->d2, P + L.W2, ws->a1, ws->d1, d->n1, d->n2, 0, B);
    mlps_wgrad_rows(X, ws->d1, G + L.W1, B, d->n0, d->n1, 0, d->n0);
    mlps_colsum(ws->d1, G + L.b1, B, d->n1, 0, d->n1);
}

/* Backward and update in one: each layer's input delta is taken before that layer's weights change
 * (the delta reads the old W), then its weights and bias are updated in the gradient products' stores. */
static void backward_sgd(const mlp_dims *d, float *P, const float *X, int B, mlp_ws *ws, float lr)
{
    mlp_layout L = mlp_layout_of(d);
    mlps_delta_rows(ws->d3, P + L.W3, ws->a2, ws->d2, d->n2, d->n3, 0, B);
    mlps_wgrad_sgd_rows(ws->a2, ws->d3, P + L.W3, B, d->n2, d->n3, 0, d->n2, lr);
    mlps_colsum_sgd(ws->d3, P + L.b3, B, d->n3, 0, d->n3, lr);
    mlps_delta_rows(ws->d2, P + L.W2, ws->a1, ws->d1, d->n1, d->n2, 0, B);
    mlps_wgrad_sgd_rows(ws->a1, ws->d2, P + L.W2, B, d->n1, d->n2, 0, d->n1, lr);
    mlps_colsum_sgd(ws->d2, P + L.b2, B, d->n2, 0, d->n2, lr);
    mlps_wgrad_sgd_rows(X, ws->d1, P + L.W1, B, d->n0, d->n1, 0, d->n0, lr);
    mlps_colsum_sgd(ws->d1, P + L.b1, B, d->n1, 0, d->n1, lr);
}

float mlp_step_simd(const mlp_dims *d, float *P, const uint8_t *images, const int32_t *idx, float *X,
                    const uint8_t *y, int B, mlp_ws *ws, float *G, float lr, int threads)
{
    (void)images, (void)idx; /* simd has no gather of its own: X holds the batch */
    mlp_forward_simd(d, P, X, B, ws, threads);
    float loss = mlp_loss(d, y, B, ws);
    if (mlps_fused_ok(B))
        backward_sgd(d, P, X, B, ws, lr);
    else { /* a batch over one reduction block: the gradient, then the update */
        mlp_backward_simd(d, P, X, B, ws, G, threads);
        mlp_sgd(P, G, mlp_layout_of(d).n, lr);
    }
    return loss;
}
