/*
 * kernels/cnn/cnn_common.c: what every variant shares: the shapes, the parameter layout, the workspace,
 * softmax + cross-entropy, the prediction count, the momentum update, He initialisation and the FLOP
 * counts. The loss and the update are O(B * 10) and O(parameters) per step, far under 1 % of a step's
 * work, so one plain version serves every variant (a row may still name its own update).
 */
#include "cnn_fast.h"
#include "cnn_kernels.h"
#include "kern_train.h"

#include <math.h>

int cnn_dims_init(cnn_dims *d, int h, int w)
{
    if (h < 10 || w < 10) /* 10 x 10 -> conv 8 x 8 -> pool 4 x 4 -> conv 2 x 2 -> pool 1 x 1 */
        return -1;
    d->conv1 = (cnn_conv){.cin = 1, .h = h, .w = w, .cout = 8, .k = 3};
    d->pool1 = (cnn_pool){.c = 8, .h = cnn_conv_ho(&d->conv1), .w = cnn_conv_wo(&d->conv1)};
    d->conv2 = (cnn_conv){.cin = 8, .h = d->pool1.h / 2, .w = d->pool1.w / 2, .cout = 16, .k = 3};
    d->pool2 = (cnn_pool){.c = 16, .h = cnn_conv_ho(&d->conv2), .w = cnn_conv_wo(&d->conv2)};
    d->dense1 = (cnn_dense){.nin = (int)cnn_pool_out(&d->pool2), .nout = 128};
    d->dense2 = (cnn_dense){.nin = 128, .nout = 10};
    return 0;
}

size_t cnn_conv_out(const cnn_conv *c)
{
    return (size_t)c->cout * (size_t)cnn_conv_ho(c) * (size_t)cnn_conv_wo(c);
}

size_t cnn_pool_out(const cnn_pool *p)
{
    return (size_t)p->c * (size_t)(p->h / 2) * (size_t)(p->w / 2);
}

static size_t conv_weights(const cnn_conv *c) { return (size_t)c->cout * c->cin * c->k * c->k; }

/* Packed in the header's order, no padding: n is the parameter count itself. */
cnn_layout cnn_layout_of(const cnn_dims *d)
{
    cnn_layout L;
    L.c1w = 0;
    L.c1b = L.c1w + conv_weights(&d->conv1);
    L.c2w = L.c1b + (size_t)d->conv1.cout;
    L.c2b = L.c2w + conv_weights(&d->conv2);
    L.d1w = L.c2b + (size_t)d->conv2.cout;
    L.d1b = L.d1w + (size_t)d->dense1.nin * d->dense1.nout;
    L.d2w = L.d1b + (size_t)d->dense1.nout;
    L.d2b = L.d2w + (size_t)d->dense2.nin * d->dense2.nout;
    L.n = L.d2b + (size_t)d->dense2.nout;
    return L;
}

/* ---- workspace ------------------------------------------------------------------------------------ */

/* Each array rounded up to 16 floats so that every one starts 64-byte aligned in an aligned block. */
static size_t up16(size_t n) { return (n + 15) & ~(size_t)15; }

static size_t max2(size_t a, size_t b) { return a > b ? a : b; }

size_t cnn_blas_area_floats(const cnn_conv *c, int B)
{
    size_t S = (size_t)(B < 0 ? 0 : B < CNN_BLAS_SLICE ? B : CNN_BLAS_SLICE), P = (size_t)cnn_conv_ho(c) * cnn_conv_wo(c);
    size_t K = (size_t)c->cin * c->k * c->k, cout = (size_t)c->cout;
    return up16(K * S * P) + up16(cout * S * P) + up16(cout * K + cout);
}

size_t cnn_scratch_floats(const cnn_dims *d, int B, int threads)
{
    cnn_layout L = cnn_layout_of(d);
    /* per thread, the largest of: the largest layer's weights and bias (omp's partial gradients; dense1's,
     * 51328 floats at 28 x 28) */
    size_t grad = up16(max2(max2(L.c2w - L.c1w, L.d1w - L.c2w), max2(L.d2w - L.d1w, L.n - L.d2w)));
    /* the simd and omp variants' work area (larger than grad for images under about 24 x 24) */
    size_t area = max2(cnn_simd_area_floats(&d->conv1), cnn_simd_area_floats(&d->conv2));
    /* blas's slice of im2col matrix and product, and its partial gradients (cnn_fast.h) */
    size_t blas = max2(cnn_blas_area_floats(&d->conv1, B), cnn_blas_area_floats(&d->conv2, B));
    return (size_t)(threads > 1 ? threads : 1) * max2(max2(grad, area), blas);
}

void cnn_act_sizes(const cnn_dims *d, size_t n[6])
{
    n[0] = cnn_conv_out(&d->conv1);
    n[1] = cnn_pool_out(&d->pool1);
    n[2] = cnn_conv_out(&d->conv2);
    n[3] = cnn_pool_out(&d->pool2);
    n[4] = (size_t)d->dense1.nout;
    n[5] = (size_t)d->dense2.nout;
}

size_t cnn_ws_floats(const cnn_dims *d, int B, int threads)
{
    size_t n[6], total = 0;
    cnn_act_sizes(d, n);
    for (int i = 0; i < 6; i++) /* each activation and its delta (z4's is d4) */
        total += 2 * up16(n[i] * (size_t)B);
    return total + cnn_scratch_floats(d, B, threads);
}

size_t cnn_ws_argmax_bytes(const cnn_dims *d, int B)
{
    return (cnn_pool_out(&d->pool1) + cnn_pool_out(&d->pool2)) * (size_t)B;
}

void cnn_ws_bind(cnn_ws *ws, const cnn_dims *d, int B, int threads, float *block, uint8_t *argmax)
{
    (void)threads; /* the scratch is last: its size does not move anything */
    size_t n[6];
    cnn_act_sizes(d, n);
    float **act[6] = {&ws->a1, &ws->p1, &ws->a2, &ws->p2, &ws->a3, &ws->z4};
    float **del[6] = {&ws->da1, &ws->dp1, &ws->da2, &ws->dp2, &ws->da3, &ws->d4};
    for (int i = 0; i < 6; i++) {
        *act[i] = block;
        block += up16(n[i] * (size_t)B);
        *del[i] = block;
        block += up16(n[i] * (size_t)B);
    }
    ws->scratch = block;
    ws->arg1 = argmax;
    ws->arg2 = argmax + cnn_pool_out(&d->pool1) * (size_t)B;
}

/* ---- loss, prediction, update ------------------------------------------------------------------- */

float cnn_loss(const cnn_dims *d, const uint8_t *y, int B, cnn_ws *ws)
{
    return kern_softmax_xent(ws->z4, ws->d4, y, B, d->dense2.nout);
}

int cnn_correct(const cnn_dims *d, const float *z4, const uint8_t *y, int B)
{
    return kern_count_correct(z4, y, B, d->dense2.nout);
}

/* 54 k parameters: a few microseconds on one core, so the threads are used only when asked for (an
 * `if` keeps one thread from paying for a parallel region). Each thread updates a contiguous range. */
void cnn_sgd_momentum(float *P, float *V, const float *G, size_t n, float lr, float mu, int threads)
{
    if (threads < 1)
        threads = 1;
    #pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (size_t i = 0; i < n; i++) {
        V[i] = mu * V[i] + G[i];
        P[i] -= lr * V[i];
    }
}

/* ---- initialisation --------------------------------------------------------------------------- */

void cnn_init_he(const cnn_dims *d, float *P, uint64_t seed)
{
    cnn_layout L = cnn_layout_of(d);
    uint64_t s = seed ^ 0x636e6e00ull; /* "cnn": weights differ from other studies' draws of one seed */
    for (size_t i = 0; i < L.n; i++)
        P[i] = 0.0f;
    const cnn_conv *c1 = &d->conv1, *c2 = &d->conv2;
    kern_he_fill(P + L.c1w, conv_weights(c1), c1->cin * c1->k * c1->k, &s);
    kern_he_fill(P + L.c2w, conv_weights(c2), c2->cin * c2->k * c2->k, &s);
    kern_he_fill(P + L.d1w, (size_t)d->dense1.nin * d->dense1.nout, d->dense1.nin, &s);
    kern_he_fill(P + L.d2w, (size_t)d->dense2.nin * d->dense2.nout, d->dense2.nin, &s);
}

/* ---- work ---------------------------------------------------------------------------------------- */

/* Multiply-adds of one sample through a layer, each counted as 2 flops:
 *   conv:  2 cout ho wo cin k k   (conv1 at 28 x 28: 2 * 8 * 26*26 * 9   =  97 344)
 *                                  (conv2:            2 * 16 * 11*11 * 72 = 278 784)
 *   dense: 2 nin nout             (dense1: 2 * 400 * 128 = 102 400; dense2: 2 * 128 * 10 = 2 560)
 * Biases, ReLU, pooling and the loss are not counted (a few per output, comparisons and exp).
 * Forward: 481 088 flops per sample at 28 x 28. */
static double conv_flops(const cnn_conv *c)
{
    return 2.0 * (double)cnn_conv_out(c) * c->cin * c->k * c->k;
}

static double dense_flops(const cnn_dense *l) { return 2.0 * l->nin * l->nout; }

double cnn_forward_flops(const cnn_dims *d, int B)
{
    return (double)B * (conv_flops(&d->conv1) + conv_flops(&d->conv2) + dense_flops(&d->dense1) +
                        dense_flops(&d->dense2));
}

/* A step: the forward, the weight gradient of every layer (the same multiply-adds as its forward) and
 * the input gradient of every layer but conv1 (again the same count; conv1's input is the image).
 * So 3 forwards less conv1's once: 1 345 920 flops per sample at 28 x 28, 80.8 GFLOP per epoch of
 * 60 000 rows. */
double cnn_step_flops(const cnn_dims *d, int B)
{
    return 3.0 * cnn_forward_flops(d, B) - (double)B * conv_flops(&d->conv1);
}
