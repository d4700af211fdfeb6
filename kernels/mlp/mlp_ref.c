/*
 * kernels/mlp/mlp_ref.c: the double-precision reference for the correctness checks (loss curves of the
 * float variants against it, and the finite-difference check of the backward pass). Straightforward
 * loops, written independently of naive.c (row-major walks, explicit softmax) so the two do not share
 * a mistake.
 */
#include "mlp_kernels.h"

#include <math.h>
#include <string.h>

size_t mlp_ref_ws_doubles(const mlp_dims *d, int B)
{
    return (size_t)B * (2 * (size_t)d->n1 + 2 * (size_t)d->n2 + 2 * (size_t)d->n3);
}

/* Z = X W + b, optional ReLU; rows of X walked once, W row by row (Z[b] += X[b][k] * W[k]). */
static void dense(const double *X, const double *W, const double *bias, double *Z, int B, int n_in,
                  int n_out, int relu)
{
    for (int b = 0; b < B; b++) {
        double *z = Z + (size_t)b * n_out;
        memcpy(z, bias, (size_t)n_out * sizeof *z);
        for (int k = 0; k < n_in; k++) {
            double x = X[(size_t)b * n_in + k];
            const double *w = W + (size_t)k * n_out;
            for (int j = 0; j < n_out; j++)
                z[j] += x * w[j];
        }
        if (relu)
            for (int j = 0; j < n_out; j++)
                z[j] = z[j] > 0 ? z[j] : 0;
    }
}

/* dW = A^T D, db = sum of D's rows; Dprev = (D W^T) * relu'(A) when Dprev is not NULL */
static void back(const double *A, const double *D, const double *W, double *dW, double *db, double *Dprev,
                 int B, int n_in, int n_out)
{
    memset(dW, 0, (size_t)n_in * n_out * sizeof *dW);
    memset(db, 0, (size_t)n_out * sizeof *db);
    for (int b = 0; b < B; b++) {
        const double *a = A + (size_t)b * n_in, *g = D + (size_t)b * n_out;
        for (int k = 0; k < n_in; k++)
            for (int j = 0; j < n_out; j++)
                dW[(size_t)k * n_out + j] += a[k] * g[j];
        for (int j = 0; j < n_out; j++)
            db[j] += g[j];
        if (!Dprev)
            continue;
        for (int k = 0; k < n_in; k++) {
            double s = 0;
            for (int j = 0; j < n_out; j++)
                s += g[j] * W[(size_t)k * n_out + j];
            Dprev[(size_t)b * n_in + k] = a[k] > 0 ? s : 0;
        }
    }
}

double mlp_ref_loss_grad(const mlp_dims *d, const double *P, const double *X, const uint8_t *y, int B,
                         double *G, double *ws)
{
    mlp_layout L = mlp_layout_of(d);
    double *a1 = ws, *a2 = a1 + (size_t)B * d->n1, *z3 = a2 + (size_t)B * d->n2;
    double *d3 = z3 + (size_t)B * d->n3, *d2 = d3 + (size_t)B * d->n3, *d1 = d2 + (size_t)B * d->n2;
    dense(X, P + L.W1, P + L.b1, a1, B, d->n0, d->n1, 1);
    dense(a1, P + L.W2, P + L.b2, a2, B, d->n1, d->n2, 1);
    dense(a2, P + L.W3, P + L.b3, z3, B, d->n2, d->n3, 0);
    double loss = 0;
    for (int b = 0; b < B; b++) {
        double *z = z3 + (size_t)b * d->n3, mx = z[0], s = 0;
        for (int j = 1; j < d->n3; j++)
            mx = fmax(mx, z[j]);
        for (int j = 0; j < d->n3; j++)
            s += exp(z[j] - mx);
        loss += log(s) + mx - z[y[b]];  /* -log softmax_y, computed stably */
        for (int j = 0; j < d->n3; j++)
            d3[(size_t)b * d->n3 + j] = (exp(z[j] - mx) / s - (j == y[b])) / B;
    }
    if (G) {
        back(a2, d3, P + L.W3, G + L.W3, G + L.b3, d2, B, d->n2, d->n3);
        back(a1, d2, P + L.W2, G + L.W2, G + L.b2, d1, B, d->n1, d->n2);
        back(X, d1, NULL, G + L.W1, G + L.b1, NULL, B, d->n0, d->n1);
    }
    return loss / B;
}
