/*
 * kernels/cnn/cnn_kernels.h: the small convolutional network of seed 004, trained with full
 * backpropagation through every layer, float32:
 *
 *   x (B x 1 x 28 x 28) -> conv1 1->8 3x3 + ReLU (26x26) -> pool1 max 2x2/2 (13x13)
 *     -> conv2 8->16 3x3 + ReLU (11x11) -> pool2 max 2x2/2 (5x5: the 11th row and column are dropped)
 *     -> flatten 400 (channel, row, column) -> dense1 400->128 + ReLU -> dense2 128->10 -> softmax CE
 *
 * Every tensor between layers is NCHW, row-major, batch first (a dense layer's input is B x n_in), the
 * same for every variant, so the per-layer functions of different variants can be mixed (a variant's row
 * names its functions) and checked one against another. A variant is a set of per-layer functions
 * (cnn_layers); the network's order of layers lives once, in cnn_net.c, which the study calls with a
 * `mark` callback so that it can open a profiler region around each layer (kernels never time).
 *
 * Parameters live in one float array P, the same layout for every variant (cnn_layout_of), so all start
 * from the same weights; gradients G and the momentum buffer V use it too:
 *   conv1.w: 8 x 1 x 3 x 3 (OIHW, as PyTorch), conv1.b: 8, conv2.w: 16 x 8 x 3 x 3, conv2.b: 16,
 *   dense1.w: 400 x 128 (input index first: Z = X W + b, as mlp), dense1.b: 128, dense2.w: 128 x 10, dense2.b: 10.
 *
 * Kernels do no I/O and no allocation: the caller binds a cnn_ws to one block of cnn_ws_floats(d, B,
 * threads) floats (and cnn_ws_argmax_bytes(d, B) bytes for the pooling argmax indices).
 */
#ifndef SL_KERNELS_CNN_KERNELS_H
#define SL_KERNELS_CNN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* ---- shapes ----------------------------------------------------------------------------------- */

/* A 'valid' k x k convolution, stride 1: cin x h x w -> cout x (h-k+1) x (w-k+1). */
typedef struct cnn_conv {
    int cin, h, w, cout, k;
} cnn_conv;
static inline int cnn_conv_ho(const cnn_conv *c) { return c->h - c->k + 1; }
static inline int cnn_conv_wo(const cnn_conv *c) { return c->w - c->k + 1; }

/* Max pooling 2x2, stride 2: c x h x w -> c x (h/2) x (w/2), floor (an odd last row/column is dropped). */
typedef struct cnn_pool {
    int c, h, w;
} cnn_pool;

typedef struct cnn_dense {
    int nin, nout;
} cnn_dense;

/* The network's shapes, from the image size (28 x 28 for (Fashion-)MNIST) and the fixed channels. */
typedef struct cnn_dims {
    cnn_conv conv1, conv2;
    cnn_pool pool1, pool2;
    cnn_dense dense1, dense2;
} cnn_dims;

/* 0, or -1 when the image is too small for the two conv + pool stages (under 10 x 10). */
int cnn_dims_init(cnn_dims *d, int h, int w);
/* Elements per sample of each layer's output. */
size_t cnn_conv_out(const cnn_conv *c);
size_t cnn_pool_out(const cnn_pool *p);
/* All six per sample, in forward order (cnn_ws's): a1 p1 a2 p2 a3 z4. */
void cnn_act_sizes(const cnn_dims *d, size_t n[6]);

typedef struct cnn_layout {
    size_t c1w, c1b, c2w, c2b, d1w, d1b, d2w, d2b; /* offsets into P (and G, V) */
    size_t n;                                      /* total parameter count */
} cnn_layout;

cnn_layout cnn_layout_of(const cnn_dims *d);

/* ---- per-layer functions (one set per variant) ------------------------------------------------ */

/* y = relu(conv(x, w) + b): x B x cin x h x w, w cout x cin x k x k, y B x cout x ho x wo.
 * scratch: the workspace's scratch floats (im2col buffers, per-thread partial sums). */
typedef void (*cnn_conv_forward_fn)(const cnn_conv *c, int B, const float *x, const float *w,
                                    const float *b, float *y, float *scratch, int threads);
/* Backward of the same: dy (B x cout x ho x wo) holds dL/dy on entry and is overwritten with
 * dL/dz = dy * (y > 0) (the ReLU); then dw = dL/dw and db = dL/db are written (not accumulated), and
 * dx = dL/dx when dx is not NULL (conv1 needs none). */
typedef void (*cnn_conv_backward_fn)(const cnn_conv *c, int B, const float *x, const float *w,
                                     const float *y, float *dy, float *dw, float *db, float *dx,
                                     float *scratch, int threads);
/* y = act(x w + b): x B x nin, w nin x nout, y B x nout; relu 1 = ReLU, 0 = none. */
typedef void (*cnn_dense_forward_fn)(const cnn_dense *l, int B, const float *x, const float *w,
                                     const float *b, float *y, int relu, float *scratch, int threads);
/* Backward: dy holds dL/dy (and becomes dL/dz when relu: dy * (y > 0)); dw, db written, dx when not NULL. */
typedef void (*cnn_dense_backward_fn)(const cnn_dense *l, int B, const float *x, const float *w,
                                      const float *y, float *dy, int relu, float *dw, float *db, float *dx,
                                      float *scratch, int threads);
/* P -= lr * (V = mu * V + G), PyTorch's SGD momentum (dampening 0, no Nesterov). n parameters. */
typedef void (*cnn_update_fn)(float *P, float *V, const float *G, size_t n, float lr, float mu, int threads);

/* Optional: a convolution and the 2x2 max pool after it (pl: its output's dims) in one call. p and arg
 * are what cnn_pool_forward gives from relu(conv(x, w) + b); the convolution's output is not written. */
typedef void (*cnn_conv_pool_forward_fn)(const cnn_conv *c, const cnn_pool *pl, int B, const float *x,
                                         const float *w, const float *b, float *p, uint8_t *arg, float *scratch,
                                         int threads);
/* Optional: the backward of the same, from dp = dL/dp (read only), p and arg of the forward: dw and db
 * written, dx when not NULL; as cnn_pool_backward then the conv backward. */
typedef void (*cnn_pool_conv_backward_fn)(const cnn_conv *c, const cnn_pool *pl, int B, const float *x,
                                          const float *w, const float *p, const uint8_t *arg, const float *dp,
                                          float *dw, float *db, float *dx, float *scratch, int threads);

/* Optional: the 2x2 max pooling of a variant that has its own, with cnn_pool_forward's and
 * cnn_pool_backward's contract (below). */
typedef void (*cnn_pool_forward_fn)(const cnn_pool *p, int B, const float *x, float *y, uint8_t *arg, int threads);
typedef void (*cnn_pool_backward_fn)(const cnn_pool *p, int B, const float *dy, const uint8_t *arg, float *dx,
                                     int threads);

typedef struct cnn_layers {
    cnn_conv_forward_fn conv_forward;
    cnn_conv_backward_fn conv_backward;
    cnn_dense_forward_fn dense_forward;
    cnn_dense_backward_fn dense_backward;
    cnn_update_fn update; /* NULL: cnn_sgd_momentum */
    /* Both or neither (NULL: conv_forward then cnn_pool_forward, cnn_pool_backward then conv_backward);
     * cnn_net.c uses them for both convolutions, whose regions are then conv1+pool1 and conv2+pool2. */
    cnn_conv_pool_forward_fn conv_pool_forward;
    cnn_pool_conv_backward_fn pool_conv_backward;
    cnn_pool_forward_fn pool_forward;   /* NULL: cnn_pool_forward (the shared pooling) */
    cnn_pool_backward_fn pool_backward; /* NULL: cnn_pool_backward */
} cnn_layers;

/* The variant kernels, declared by the build line that builds them: for each NAME of cnn_variant_kernels
 * (kernels/cnn/meson.build), NAME.c defines the four functions below, and the generated
 * cnn_variant_kernels.h has the line CNN_KERNEL(NAME). What each does: its file's first comment. */
#define CNN_KERNEL(name)                                                                                 \
    void cnn_conv_forward_##name(const cnn_conv *c, int B, const float *x, const float *w,               \
                                 const float *b, float *y, float *scratch, int threads);                 \
    void cnn_conv_backward_##name(const cnn_conv *c, int B, const float *x, const float *w,              \
                                  const float *y, float *dy, float *dw, float *db, float *dx,            \
                                  float *scratch, int threads);                                          \
    void cnn_dense_forward_##name(const cnn_dense *l, int B, const float *x, const float *w,             \
                                  const float *b, float *y, int relu, float *scratch, int threads);      \
    void cnn_dense_backward_##name(const cnn_dense *l, int B, const float *x, const float *w,            \
                                   const float *y, float *dy, int relu, float *dw, float *db, float *dx, \
                                   float *scratch, int threads);
#include "cnn_variant_kernels.h" /* generated: build tree kernels/ */
#undef CNN_KERNEL

/* simd's and omp's convolutions fused with their pooling (cnn_conv_pool_forward_fn, cnn_pool_conv_backward_fn). */
#define CNN_FUSED_KERNEL(name)                                                                           \
    void cnn_conv_pool_forward_##name(const cnn_conv *c, const cnn_pool *pl, int B, const float *x,      \
                                      const float *w, const float *b, float *p, uint8_t *arg,            \
                                      float *scratch, int threads);                                      \
    void cnn_pool_conv_backward_##name(const cnn_conv *c, const cnn_pool *pl, int B, const float *x,     \
                                       const float *w, const float *p, const uint8_t *arg,               \
                                       const float *dp, float *dw, float *db, float *dx, float *scratch, \
                                       int threads);
CNN_FUSED_KERNEL(simd)
CNN_FUSED_KERNEL(omp)
#undef CNN_FUSED_KERNEL

/* onednn's own pooling (oneDNN's max pooling primitives; built with oneDNN only). */
void cnn_pool_forward_onednn(const cnn_pool *p, int B, const float *x, float *y, uint8_t *arg, int threads);
void cnn_pool_backward_onednn(const cnn_pool *p, int B, const float *dy, const uint8_t *arg, float *dx, int threads);

/* Pooling is shared by every variant without fused convolutions (cnn_pool.c: the forward by explicit
 * vectors, the backward a scatter; memory-bound, the reason simd and omp fuse it into theirs): y = max
 * over each 2x2 window, arg = the index (0-3, row-major in the window) of the max, the first one on ties;
 * backward scatters dy to dx through arg, zero elsewhere (dropped rows included). `threads` > 1 splits
 * the batch. */
void cnn_pool_forward(const cnn_pool *p, int B, const float *x, float *y, uint8_t *arg, int threads);
void cnn_pool_backward(const cnn_pool *p, int B, const float *dy, const uint8_t *arg, float *dx, int threads);

/* The batch: X (B x px floats) = images[idx[b]] * (1/255), y[b] = labels[idx[b]] (px bytes per image),
 * `threads` splitting the rows (cnn_gather.c), shared by every CPU variant as pooling is. */
void cnn_gather(const uint8_t *images, const uint8_t *labels, size_t px, const int32_t *idx, int B, float *X,
                uint8_t *y, int threads);

/* ---- the network ------------------------------------------------------------------------------ */

/* Activations and deltas of one batch of up to B rows (cnn_ws_bind carves them out of one block). */
typedef struct cnn_ws {
    float *a1, *p1, *a2, *p2, *a3, *z4; /* conv1, pool1, conv2, pool2 (= flatten), dense1 outputs; logits */
    float *d4;                          /* dL/dz4 = (softmax - onehot) / B (cnn_loss) */
    float *da3, *dp2, *da2, *dp1, *da1; /* deltas, same shapes as the activations */
    uint8_t *arg1, *arg2;               /* pooling argmax, one per pooled output */
    float *scratch;                     /* cnn_scratch_floats(d, B, threads) floats, 64-byte aligned */
} cnn_ws;

/* Floats of scratch any variant may use at batch B and `threads` threads: per thread, the largest of
 * the largest layer's gradient, the simd/omp convolutions' work area (cnn_fast.h: cnn_simd_area_floats,
 * which depends on the ISA level) and blas's area for a slice of up to CNN_BLAS_SLICE images
 * (cnn_fast.h: cnn_blas_area_floats). */
size_t cnn_scratch_floats(const cnn_dims *d, int B, int threads);
size_t cnn_ws_floats(const cnn_dims *d, int B, int threads);
size_t cnn_ws_argmax_bytes(const cnn_dims *d, int B); /* bytes of arg1 + arg2 */
/* Points ws's arrays into `block` (cnn_ws_floats floats, 64-byte aligned) and `argmax` (cnn_ws_argmax_bytes bytes). */
void cnn_ws_bind(cnn_ws *ws, const cnn_dims *d, int B, int threads, float *block, uint8_t *argmax);

/* Called before (begin = 1) and after (begin = 0) each layer, with its name: conv1, pool1, conv2, pool2,
 * dense1, dense2 (conv1+pool1 and conv2+pool2 for a variant with fused convolutions). May be NULL. */
typedef void (*cnn_mark_fn)(void *ctx, const char *layer, int begin);

/* Forward of B rows of X (B x 1 x h x w, pixels in [0,1]) through every layer: ws's activations, z4. */
void cnn_forward(const cnn_dims *d, const cnn_layers *k, const float *P, const float *X, int B, cnn_ws *ws,
                 int threads, cnn_mark_fn mark, void *ctx);
/* Backward from ws->d4 (set by cnn_loss) through every layer, all of G (the layers in reverse order;
 * conv1 computes no input gradient). ws holds the activations of the forward of the same X. */
void cnn_backward(const cnn_dims *d, const cnn_layers *k, const float *P, const float *X, int B, cnn_ws *ws,
                  float *G, int threads, cnn_mark_fn mark, void *ctx);

/* Softmax of ws->z4 in place; returns the mean cross-entropy of the B rows; ws->d4 = (softmax - onehot(y)) / B. */
float cnn_loss(const cnn_dims *d, const uint8_t *y, int B, cnn_ws *ws);
/* How many of B rows' logits (or probabilities) z4 have their argmax at y. */
int cnn_correct(const cnn_dims *d, const float *z4, const uint8_t *y, int B);
/* The shared momentum update (cnn_update_fn). */
void cnn_sgd_momentum(float *P, float *V, const float *G, size_t n, float lr, float mu, int threads);
/* He initialisation from a seed: every weight ~ N(0, 2 / fan_in) (fan_in: cin k k for a conv, nin for a
 * dense layer), biases 0; the same draws for every variant. */
void cnn_init_he(const cnn_dims *d, float *P, uint64_t seed);

/* FLOPs (a multiply-add counts 2) of one training step on B rows: forward, backward data (conv1's
 * excluded), backward weights, per layer; the pools and the loss (comparisons, exp) are not counted.
 * And of a forward alone (evaluation). Formulas in cnn_common.c. */
double cnn_step_flops(const cnn_dims *d, int B);
double cnn_forward_flops(const cnn_dims *d, int B);

/* ---- double-precision reference (cnn_ref.c) ----------------------------------------------------- */

/* Mean loss of B rows at P and, when G is not NULL, its gradient (same layout), in double with direct
 * loops: what the checks and the finite-difference tests compare against. ws: cnn_ref_ws_doubles(d, B). */
size_t cnn_ref_ws_doubles(const cnn_dims *d, int B);
double cnn_ref_loss_grad(const cnn_dims *d, const double *P, const double *X, const uint8_t *y, int B,
                         double *G, double *ws);

#endif
