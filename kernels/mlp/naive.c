/*
 * kernels/mlp/naive.c: the network in plain loops, in the textbook order a first C port of the NumPy
 * code takes (for each row, for each output unit, a dot product over the inputs). The weights are
 * stored input-major (W[k][j], Z = X W), so the inner dot product walks a column with stride n_out:
 * that is the naive part, and what the simd variant fixes.
 */
#include "mlp_kernels.h"

/* Z[b][j] = act(sum_k X[b][k] W[k][j] + bias[j]) */
static void dense(const float *X, const float *W, const float *bias, float *Z, int B, int n_in, int n_out,
                  int relu)
{
    for (int b = 0; b < B; b++)
        for (int j = 0; j < n_out; j++) {
            float s = bias[j];
            for (int k = 0; k < n_in; k++)
                s += X[(size_t)b * n_in + k] * W[(size_t)k * n_out + j];
            Z[(size_t)b * n_out + j] = relu && s < 0.0f ? 0.0f : s;
        }
}

void mlp_forward_naive(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, int threads)
{
    (void)threads;
    mlp_layout L = mlp_layout_of(d);
    dense(X, P + L.W1, P + L.b1, ws->a1, B, d->n0, d->n1, 1);
    dense(ws->a1, P + L.W2, P + L.b2, ws->a2, B, d->n1, d->n2, 1);
    dense(ws->a2, P + L.W3, P + L.b3, ws->z3, B, d->n2, d->n3, 0);
}

/* dW[k][j] = sum_b A[b][k] D[b][j]; db[j] = sum_b D[b][j] */
static void weight_grad(const float *A, const float *D, float *dW, float *db, int B, int n_in, int n_out)
{
    for (int k = 0; k < n_in; k++)
        for (int j = 0; j < n_out; j++) {
            float s = 0.0f;
            for (int b = 0; b < B; b++)
                s += A[(size_t)b * n_in + k] * D[(size_t)b * n_out + j];
            dW[(size_t)k * n_out + j] = s;
        }
    for (int j = 0; j < n_out; j++) {
        float s = 0.0f;
        for (int b = 0; b < B; b++)
            s += D[(size_t)b * n_out + j];
        db[j] = s;
    }
}

/* Dprev[b][k] = (sum_j D[b][j] W[k][j]) * relu'(Aprev[b][k]) */
static void delta_back(const float *D, const float *W, const float *Aprev, float *Dprev, int B, int n_in,
                       int n_out)
{
    for (int b = 0; b < B; b++)
        for (int k = 0; k < n_in; k++) {
            float s = 0.0f;
            for (int j = 0; j < n_out; j++)
                s += D[(size_t)b * n_out + j] * W[(size_t)k * n_out + j];
            Dprev[(size_t)b * n_in + k] = Aprev[(size_t)b * n_in + k] > 0.0f ? s : 0.0f;
        }
}

void mlp_backward_naive(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, float *G,
                        int threads)
{
    (void)threads;
    mlp_layout L = mlp_layout_of(d);
    weight_grad(ws->a2, ws->d3, G + L.W3, G + L.b3, B, d->n2, d->n3);
    delta_back(ws->d3, P + L.W3, ws->a2, ws->d2, B, d->n2, d->n3);
    weight_grad(ws->a1, ws->d2, G + L.W2, G + L.b2, B, d->n1, d->n2);
    delta_back(ws->d2, P + L.W2, ws->a1, ws->d1, B, d->n1, d->n2);
    weight_grad(X, ws->d1, G + L.W1, G + L.b1, B, d->n0, d->n1);
}
