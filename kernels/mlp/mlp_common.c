/*
 * kernels/mlp/mlp_common.c: what every CPU variant shares: parameter layout, workspace, softmax +
 * cross-entropy, the SGD update, the prediction count, He initialisation and the FLOP counts. These are
 * O(B * n3) or O(parameters) per step, under 1 % of a step's work, so one plain version serves every
 * variant but omp, whose update stays on the threads that wrote the gradient (omp.c).
 */
#include "mlp_kernels.h"
#include "kern_train.h"

#include <math.h>

mlp_layout mlp_layout_of(const mlp_dims *d)
{
    mlp_layout L;
    L.W1 = 0;
    L.b1 = L.W1 + (size_t)d->n0 * d->n1;
    L.W2 = L.b1 + (size_t)d->n1;
    L.b2 = L.W2 + (size_t)d->n1 * d->n2;
    L.W3 = L.b2 + (size_t)d->n2;
    L.b3 = L.W3 + (size_t)d->n2 * d->n3;
    L.n = L.b3 + (size_t)d->n3;
    return L;
}

/* Each array rounded up to 16 floats so that every one starts 64-byte aligned in an aligned block. */
static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

size_t mlp_ws_floats(const mlp_dims *d, int B)
{
    size_t b = (size_t)B;
    return 2 * up16(b * d->n1) + 2 * up16(b * d->n2) + 2 * up16(b * d->n3);
}

void mlp_ws_bind(mlp_ws *ws, const mlp_dims *d, int B, float *block)
{
    size_t b = (size_t)B;
    ws->a1 = block;          block += up16(b * d->n1);
    ws->d1 = block;          block += up16(b * d->n1);
    ws->a2 = block;          block += up16(b * d->n2);
    ws->d2 = block;          block += up16(b * d->n2);
    ws->z3 = block;          block += up16(b * d->n3);
    ws->d3 = block;
}

float mlp_loss(const mlp_dims *d, const uint8_t *y, int B, mlp_ws *ws)
{
    return kern_softmax_xent(ws->z3, ws->d3, y, B, d->n3);
}

void mlp_sgd(float *P, const float *G, size_t n, float lr)
{
    for (size_t i = 0; i < n; i++)
        P[i] -= lr * G[i];
}

int mlp_correct(const mlp_dims *d, const float *z3, const uint8_t *y, int B)
{
    return kern_count_correct(z3, y, B, d->n3);
}

void mlp_init_he(const mlp_dims *d, float *P, uint64_t seed)
{
    mlp_layout L = mlp_layout_of(d);
    uint64_t s = seed ^ 0x6d6c7000ull; /* "mlp": weights differ from other studies' draws of one seed */
    for (size_t i = 0; i < L.n; i++)
        P[i] = 0.0f;
    kern_he_fill(P + L.W1, (size_t)d->n0 * d->n1, d->n0, &s);
    kern_he_fill(P + L.W2, (size_t)d->n1 * d->n2, d->n1, &s);
    kern_he_fill(P + L.W3, (size_t)d->n2 * d->n3, d->n2, &s);
}

/* Multiply-adds counted as 2 flops. Forward: the three products. A step adds the weight gradients
 * (same count again) and the deltas of the two hidden layers (the input's delta is never formed). */
double mlp_forward_flops(const mlp_dims *d, int B)
{
    return 2.0 * B * ((double)d->n0 * d->n1 + (double)d->n1 * d->n2 + (double)d->n2 * d->n3);
}

double mlp_step_flops(const mlp_dims *d, int B)
{
    double fw = mlp_forward_flops(d, B);
    return 2.0 * fw + 2.0 * B * ((double)d->n1 * d->n2 + (double)d->n2 * d->n3);
}
