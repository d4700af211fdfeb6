/*
 * kernels/mlp/blas.c: the six products by cblas_sgemm (OpenBLAS), with the element-wise work in plain loops
 * around them: the bias is written into the output first and the product added with beta = 1 (so
 * there is no separate bias pass), ReLU after; the delta's relu'(A_prev) mask after its product. The
 * threads argument becomes OpenBLAS's thread count (kern_blas.h).
 */
#include "kern_blas.h"
#include "mlp_kernels.h"

#include <cblas.h>
#include <string.h>

/* Z = act(A W + bias): A is B x n_in, W n_in x n_out, all row-major. */
static void dense(const float *A, const float *W, const float *bias, float *Z, int B, int n_in, int n_out,
                  int relu)
{
    for (int b = 0; b < B; b++)
        memcpy(Z + (size_t)b * n_out, bias, (size_t)n_out * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, n_out, n_in, 1.0f, A, n_in, W, n_out, 1.0f,
                Z, n_out);
    if (relu)
        for (size_t i = 0; i < (size_t)B * n_out; i++)
            Z[i] = Z[i] > 0.0f ? Z[i] : 0.0f;
}

void mlp_forward_blas(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, int threads)
{
    kern_blas_threads(threads);
    if (B <= 0)
        return;
    mlp_layout L = mlp_layout_of(d);
    dense(X, P + L.W1, P + L.b1, ws->a1, B, d->n0, d->n1, 1);
    dense(ws->a1, P + L.W2, P + L.b2, ws->a2, B, d->n1, d->n2, 1);
    dense(ws->a2, P + L.W3, P + L.b3, ws->z3, B, d->n2, d->n3, 0);
}

/* dW = A^T D (n_in x n_out), db = column sums of D. */
static void weight_grad(const float *A, const float *D, float *dW, float *db, int B, int n_in, int n_out)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, n_in, n_out, B, 1.0f, A, n_in, D, n_out, 0.0f,
                dW, n_out);
    for (int j = 0; j < n_out; j++)
        db[j] = 0.0f;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < n_out; j++)
            db[j] += D[(size_t)b * n_out + j];
}

/* Dprev = (D W^T) * relu'(Aprev): D is B x n_out, W n_in x n_out. */
static void delta_back(const float *D, const float *W, const float *Aprev, float *Dprev, int B, int n_in,
                       int n_out)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, n_in, n_out, 1.0f, D, n_out, W, n_out, 0.0f,
                Dprev, n_in);
    for (size_t i = 0; i < (size_t)B * n_in; i++)
        Dprev[i] = Aprev[i] > 0.0f ? Dprev[i] : 0.0f;
}

void mlp_backward_blas(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, float *G,
                       int threads)
{
    kern_blas_threads(threads);
    mlp_layout L = mlp_layout_of(d);
    if (B <= 0) { /* no rows: every gradient is an empty sum */
        memset(G, 0, L.n * sizeof(float));
        return;
    }
    weight_grad(ws->a2, ws->d3, G + L.W3, G + L.b3, B, d->n2, d->n3);
    delta_back(ws->d3, P + L.W3, ws->a2, ws->d2, B, d->n2, d->n3);
    weight_grad(ws->a1, ws->d2, G + L.W2, G + L.b2, B, d->n1, d->n2);
    delta_back(ws->d2, P + L.W2, ws->a1, ws->d1, B, d->n1, d->n2);
    weight_grad(X, ws->d1, G + L.W1, G + L.b1, B, d->n0, d->n1);
}
