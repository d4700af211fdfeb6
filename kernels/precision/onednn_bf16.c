/* kernels/precision/onednn_bf16.c: the bf16 row by oneDNN's bf16 matmul (AVX512_BF16 dot products, or
 * AMX, where the CPU has them: the record's env.onednn_isa says which; oneDNN emulates them elsewhere),
 * one thread. Built with oneDNN only, compiled once (kernels/kern_onednn.h).
 *
 * The forward is the study's bf16 row exactly: bf16 input, weights and stored activations, float32
 * accumulation, bias and ReLU as post-ops, each activation rounded once to bf16 by the primitive.
 * The backward keeps the study's float32 deltas although oneDNN multiplies bf16 only by bf16: each
 * delta D is split into two bf16 halves, hi = bf16(D) and lo = bf16(D - hi) (D to about 16 bits), and
 * every product runs twice, the second added by a sum post-op. The products of two bf16 numbers are
 * exact in float32, so this row's gradient matches the bf16 reference as bf16's does, at twice the
 * backward's products. The halves live in ws->f.a1 and a2, which this row (storing a1q, a2q) leaves
 * free. */
#include "kern_onednn.h"
#include "precision_kernels.h"

#include <math.h>
#include <string.h>

/* Round to nearest even, NaN kept quiet (prec_convert.h's rounding, one number at a time). */
static uint16_t to_bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

void prec_convert_onednn_bf16(const mlp_dims *d, const float *P, uint16_t *Pq)
{
    size_t n = mlp_layout_of(d).n;
    for (size_t i = 0; i < n; i++)
        Pq[i] = to_bf16(P[i]);
}

void prec_forward_onednn_bf16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                              prec_ws *ws)
{
    if (B <= 0)
        return;
    mlp_layout L = mlp_layout_of(d);
    for (size_t i = 0; i < (size_t)B * d->n0; i++)
        ws->xq[i] = to_bf16(X[i]);
    kern_onednn_matmul_bf16(0, 0, B, d->n1, d->n0, ws->xq, d->n0, Pq + L.W1, d->n1, P + L.b1, ws->a1q, 1, d->n1,
                            1, 0, 1);
    kern_onednn_matmul_bf16(0, 0, B, d->n2, d->n1, ws->a1q, d->n1, Pq + L.W2, d->n2, P + L.b2, ws->a2q, 1, d->n2,
                            1, 0, 1);
    kern_onednn_matmul_bf16(0, 0, B, d->n3, d->n2, ws->a2q, d->n2, Pq + L.W3, d->n3, P + L.b3, ws->f.z3, 0, d->n3,
                            0, 0, 1);
}

/* hi, lo (n each) = the two bf16 halves of D; db = D's column sums (B rows of m). */
static void split(const float *D, int B, int m, uint16_t *hi, float *db)
{
    uint16_t *lo = hi + (size_t)B * m;
    for (size_t i = 0; i < (size_t)B * m; i++) {
        hi[i] = to_bf16(D[i]);
        lo[i] = to_bf16(D[i] - from_bf16(hi[i]));
    }
    for (int j = 0; j < m; j++)
        db[j] = 0.0f;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < m; j++)
            db[j] += D[(size_t)b * m + j];
}

/* dW (n_in x n_out) = A^T (hi + lo): A (B x n_in) bf16, read transposed through its strides. */
static void wgrad(const uint16_t *A, const uint16_t *hi, float *dW, int B, int n_in, int n_out)
{
    const uint16_t *lo = hi + (size_t)B * n_out;
    kern_onednn_matmul_bf16(1, 0, n_in, n_out, B, A, n_in, hi, n_out, NULL, dW, 0, n_out, 0, 0, 1);
    kern_onednn_matmul_bf16(1, 0, n_in, n_out, B, A, n_in, lo, n_out, NULL, dW, 0, n_out, 0, 1, 1);
}

/* Dprev (B x n_in) = ((hi + lo) W^T) * relu'(Aprev): W (n_in x n_out) bf16, read transposed. */
static void delta(const uint16_t *hi, const uint16_t *W, const uint16_t *Aprev, float *Dprev, int B, int n_in,
                  int n_out)
{
    const uint16_t *lo = hi + (size_t)B * n_out;
    kern_onednn_matmul_bf16(0, 1, B, n_in, n_out, hi, n_out, W, n_out, NULL, Dprev, 0, n_in, 0, 0, 1);
    kern_onednn_matmul_bf16(0, 1, B, n_in, n_out, lo, n_out, W, n_out, NULL, Dprev, 0, n_in, 0, 1, 1);
    for (size_t i = 0; i < (size_t)B * n_in; i++)
        Dprev[i] = from_bf16(Aprev[i]) > 0.0f ? Dprev[i] : 0.0f;
}

void prec_backward_onednn_bf16(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                               prec_ws *ws, float *G)
{
    (void)P, (void)X; /* the biases' gradients need no weights; dW1 reads the stored input */
    mlp_layout L = mlp_layout_of(d);
    /* the halves of d3 (2 B n3 bf16) in whichever of a1, a2 (B n1, B n2 floats) holds them */
    float *h3 = d->n3 <= d->n1 ? ws->f.a1 : d->n3 <= d->n2 ? ws->f.a2 : NULL;
    if (B <= 0 || !h3) { /* no rows: every gradient is an empty sum; no room: NaN fails the check */
        for (size_t i = 0; i < L.n; i++)
            G[i] = B <= 0 ? 0.0f : NAN;
        return;
    }
    uint16_t *hi3 = (uint16_t *)h3, *hi2 = (uint16_t *)ws->f.a2, *hi1 = (uint16_t *)ws->f.a1;
    split(ws->f.d3, B, d->n3, hi3, G + L.b3);
    wgrad(ws->a2q, hi3, G + L.W3, B, d->n2, d->n3);
    delta(hi3, Pq + L.W3, ws->a2q, ws->f.d2, B, d->n2, d->n3);
    split(ws->f.d2, B, d->n2, hi2, G + L.b2);
    wgrad(ws->a1q, hi2, G + L.W2, B, d->n1, d->n2);
    delta(hi2, Pq + L.W2, ws->a1q, ws->f.d1, B, d->n1, d->n2);
    split(ws->f.d1, B, d->n1, hi1, G + L.b1);
    wgrad(ws->xq, hi1, G + L.W1, B, d->n0, d->n1);
}
