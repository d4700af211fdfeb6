/*
 * kernels/mlp/onednn.c: the six products by oneDNN matmul primitives (kern_onednn.h: made once per
 * shape, oneDNN's own ISA choice, `threads` OpenMP threads), the way PyTorch's CPU backend runs
 * nn.Linear. The forward's bias and ReLU are post-ops of its product (no pass of their own); the
 * backward's transposes are strides of the same row-major arrays (no copies). The bias gradients and
 * the relu'(A_prev) masks are the plain loops blas.c has: O(B n) beside O(B n n') products.
 */
#include "kern_onednn.h"
#include "mlp_kernels.h"

#include <string.h>

void mlp_forward_onednn(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, int threads)
{
    if (B <= 0)
        return;
    mlp_layout L = mlp_layout_of(d);
    kern_onednn_matmul(0, 0, B, d->n1, d->n0, X, d->n0, P + L.W1, d->n1, P + L.b1, ws->a1, d->n1, 1, threads);
    kern_onednn_matmul(0, 0, B, d->n2, d->n1, ws->a1, d->n1, P + L.W2, d->n2, P + L.b2, ws->a2, d->n2, 1,
                       threads);
    kern_onednn_matmul(0, 0, B, d->n3, d->n2, ws->a2, d->n2, P + L.W3, d->n3, P + L.b3, ws->z3, d->n3, 0,
                       threads);
}

/* dW = A^T D (n_in x n_out; A read transposed through its strides), db = column sums of D. */
static void weight_grad(const float *A, const float *D, float *dW, float *db, int B, int n_in, int n_out,
                        int threads)
{
    kern_onednn_matmul(1, 0, n_in, n_out, B, A, n_in, D, n_out, NULL, dW, n_out, 0, threads);
    for (int j = 0; j < n_out; j++)
        db[j] = 0.0f;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < n_out; j++)
            db[j] += D[(size_t)b * n_out + j];
}

/* Dprev = (D W^T) * relu'(Aprev): D is B x n_out, W n_in x n_out (read transposed). */
static void delta_back(const float *D, const float *W, const float *Aprev, float *Dprev, int B, int n_in,
                       int n_out, int threads)
{
    kern_onednn_matmul(0, 1, B, n_in, n_out, D, n_out, W, n_out, NULL, Dprev, n_in, 0, threads);
    for (size_t i = 0; i < (size_t)B * n_in; i++)
        Dprev[i] = Aprev[i] > 0.0f ? Dprev[i] : 0.0f;
}

void mlp_backward_onednn(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, float *G,
                         int threads)
{
    mlp_layout L = mlp_layout_of(d);
    if (B <= 0) { /* no rows: every gradient is an empty sum */
        memset(G, 0, L.n * sizeof(float));
        return;
    }
    weight_grad(ws->a2, ws->d3, G + L.W3, G + L.b3, B, d->n2, d->n3, threads);
    delta_back(ws->d3, P + L.W3, ws->a2, ws->d2, B, d->n2, d->n3, threads);
    weight_grad(ws->a1, ws->d2, G + L.W2, G + L.b2, B, d->n1, d->n2, threads);
    delta_back(ws->d2, P + L.W2, ws->a1, ws->d1, B, d->n1, d->n2, threads);
    weight_grad(X, ws->d1, G + L.W1, G + L.b1, B, d->n0, d->n1, threads);
}
