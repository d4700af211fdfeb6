/*
 * kernels/mlp/mlp_kernels.h: a three-layer perceptron n0-n1-n2-n3 (the study: 784-128-128-10), ReLU on
 * the two hidden layers, softmax + cross-entropy on the output, float32. One file per variant supplies
 * forward and backward; the loss, the SGD update and the prediction count are shared (mlp_common.c),
 * being a few thousand flops per batch (omp brings its own update and gather: see omp.c). mlp_ref.c is the double-precision reference.
 *
 * Parameters live in one float array P (identical layout for every variant, so all start from the same
 * weights and an update is one loop):
 *   W1: n0 x n1 row-major (layer input index first: Z = X W + b, as NumPy's X.dot(W)), b1: n1,
 *   W2: n1 x n2, b2: n2, W3: n2 x n3, b3: n3.          offsets: mlp_layout()
 * Gradients G use the same layout. X is B x n0 row-major (pixels in [0,1]); y holds B labels < n3.
 *
 * Kernels do no I/O and no allocation: the caller gives an mlp_ws whose arrays hold
 * mlp_ws_floats(d, B) floats together (mlp_ws_bind carves them out of one block).
 */
#ifndef SL_KERNELS_MLP_KERNELS_H
#define SL_KERNELS_MLP_KERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef struct mlp_dims {
    int n0, n1, n2, n3;
} mlp_dims;

typedef struct mlp_layout {
    size_t W1, b1, W2, b2, W3, b3; /* offsets into P (and G) */
    size_t n;                      /* total parameter count */
} mlp_layout;

mlp_layout mlp_layout_of(const mlp_dims *d);

/* Activations and deltas of one batch of up to B rows. */
typedef struct mlp_ws {
    float *a1;  /* B x n1: relu(X W1 + b1) */
    float *a2;  /* B x n2: relu(a1 W2 + b2) */
    float *z3;  /* B x n3: logits a2 W3 + b3 (mlp_loss turns them into probabilities) */
    float *d3;  /* B x n3: dLoss/dz3 = (softmax - onehot) / B */
    float *d2;  /* B x n2: dLoss/dz2 */
    float *d1;  /* B x n1: dLoss/dz1 */
} mlp_ws;

size_t mlp_ws_floats(const mlp_dims *d, int B);
/* Points ws's arrays into `block` (mlp_ws_floats(d, B) floats, 64-byte aligned recommended). */
void mlp_ws_bind(mlp_ws *ws, const mlp_dims *d, int B, float *block);

/* forward: a1, a2, z3 for B rows of X. backward: all of G from ws->d3 (set by mlp_loss), with the
 * activations of the same forward; d2 and d1 are scratch (omp's forward uses d1 as scratch too). `threads` is used by parallel variants only.
 * Every variant's forward + backward computes the same function (up to float rounding). */
typedef void (*mlp_forward_fn)(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws,
                               int threads);
typedef void (*mlp_backward_fn)(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws,
                                float *G, int threads);

/* The SGD update P -= lr G of a variant that has its own (NULL in a model's table: mlp_sgd). */
typedef void (*mlp_update_fn)(const mlp_dims *d, float *P, const float *G, float lr, int threads);
/* The batch X (B x n0) = images[idx[b]] * (1/255) of a variant that has its own (NULL: the study's
 * serial gather). images holds n0 bytes per row. */
typedef void (*mlp_gather_fn)(const mlp_dims *d, const uint8_t *images, const int32_t *idx, int B,
                              float *X, int threads);

/* A whole SGD step of a variant that has one (NULL in a model's table: gather, forward, mlp_loss,
 * backward, update as separate calls): the forward, the loss (returned, as mlp_loss) and the backward
 * with the update P -= lr G fused in, where G is never written (scratch for a batch the fusion does
 * not cover). images/idx: the variant gathers X itself from images[idx] (its own gather), or, with
 * images NULL, X already holds the batch. y: the B labels. */
typedef float (*mlp_step_fn)(const mlp_dims *d, float *P, const uint8_t *images, const int32_t *idx,
                             float *X, const uint8_t *y, int B, mlp_ws *ws, float *G, float lr, int threads);
float mlp_step_simd(const mlp_dims *d, float *P, const uint8_t *images, const int32_t *idx, float *X,
                    const uint8_t *y, int B, mlp_ws *ws, float *G, float lr, int threads);
float mlp_step_omp(const mlp_dims *d, float *P, const uint8_t *images, const int32_t *idx, float *X,
                   const uint8_t *y, int B, mlp_ws *ws, float *G, float lr, int threads);

/* The variant kernels, declared by the build line that builds them: for each NAME of mlp_variant_kernels
 * (kernels/mlp/meson.build), NAME.c defines mlp_forward_NAME and mlp_backward_NAME, and the generated
 * mlp_variant_kernels.h has the line MLP_KERNEL(NAME). What each does: its file's first comment (blas is
 * built, and listed, only with BLAS; `threads` is then OpenBLAS's count). */
#define MLP_KERNEL(name)                                                                                 \
    void mlp_forward_##name(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws,        \
                            int threads);                                                                \
    void mlp_backward_##name(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws,       \
                             float *G, int threads);
#include "mlp_variant_kernels.h" /* generated: build tree kernels/ */
#undef MLP_KERNEL

/* omp's own gather and update (the variant's row names them beside its forward and backward). */
/* X (B x n0) = images[idx[b]] * (1/255) for the batch, each thread a range of X's columns (at two
 * threads the columns its layer-1 forward reads); the same floats as the study's serial gather. */
void mlp_gather_omp(const mlp_dims *d, const uint8_t *images, const int32_t *idx, int B, float *X,
                    int threads);
/* Each thread updates the parts of P whose gradient it computed in mlp_backward_omp. */
void mlp_update_omp(const mlp_dims *d, float *P, const float *G, float lr, int threads);

/* Shared (mlp_common.c). mlp_loss: softmax of ws->z3 in place, returns the mean cross-entropy over the B
 * rows and writes ws->d3 = (softmax - onehot(y)) / B. mlp_sgd: P -= lr * G. mlp_correct: how many of the
 * B rows' logits (ws->z3 before mlp_loss, or probabilities after) have their argmax at y. */
float mlp_loss(const mlp_dims *d, const uint8_t *y, int B, mlp_ws *ws);
void mlp_sgd(float *P, const float *G, size_t n, float lr);
int mlp_correct(const mlp_dims *d, const float *z3, const uint8_t *y, int B);
/* He initialisation from a seed: W ~ N(0, 2/fan_in) (Box-Muller on splitmix64), biases 0. */
void mlp_init_he(const mlp_dims *d, float *P, uint64_t seed);

/* Double-precision reference (mlp_ref.c): mean loss of B rows and, when G is not NULL, its gradient,
 * in the same layout. ws: mlp_ref_ws_doubles(d, B) doubles. */
size_t mlp_ref_ws_doubles(const mlp_dims *d, int B);
double mlp_ref_loss_grad(const mlp_dims *d, const double *P, const double *X, const uint8_t *y, int B,
                         double *G, double *ws);

/* FLOPs of one training step on B rows (forward + backward, no input gradient), and of a forward. */
double mlp_step_flops(const mlp_dims *d, int B);
double mlp_forward_flops(const mlp_dims *d, int B);

#endif
