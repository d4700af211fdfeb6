/*
 * kernels/cnn/onednn.c: every layer by oneDNN primitives (kern_onednn.h: made once per shape, oneDNN's
 * own ISA choice, `threads` OpenMP threads), as PyTorch's CPU backend runs nn.Conv2d and nn.Linear: the
 * convolutions by its convolution forward (bias and ReLU as a post-op), backward-data and
 * backward-weights (bias gradient included) primitives, the pooling by its max pooling forward and
 * backward (its workspace is the study's argmax bytes), the dense layers by matmul primitives as in
 * kernels/mlp/onednn.c. Activations stay in the study's plain NCHW layout, so no reorder runs between
 * layers (oneDNN's blocked layouts would need one at every hand-over to the shared pooling and loss).
 * The ReLU masks and the dense bias gradients are plain loops: O(outputs) beside the products.
 */
#include "cnn_kernels.h"
#include "kern_onednn.h"

#include <string.h>

/* dy *= (y > 0): the ReLU's backward, in place. */
static void relu_mask(float *dy, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void cnn_conv_forward_onednn(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                             float *scratch, int threads)
{
    (void)scratch;
    kern_onednn_conv_forward(B, c->cin, c->h, c->w, c->cout, c->k, x, w, b, y, 1, threads);
}

void cnn_conv_backward_onednn(const cnn_conv *c, int B, const float *x, const float *w, const float *y, float *dy,
                              float *dw, float *db, float *dx, float *scratch, int threads)
{
    (void)scratch;
    if (B <= 0) { /* no rows: every gradient is an empty sum */
        memset(dw, 0, (size_t)c->cout * c->cin * c->k * c->k * sizeof(float));
        memset(db, 0, (size_t)c->cout * sizeof(float));
        return;
    }
    relu_mask(dy, y, (size_t)B * c->cout * cnn_conv_ho(c) * cnn_conv_wo(c));
    kern_onednn_conv_backward_weights(B, c->cin, c->h, c->w, c->cout, c->k, x, dy, dw, db, threads);
    if (dx)
        kern_onednn_conv_backward_data(B, c->cin, c->h, c->w, c->cout, c->k, w, dy, dx, threads);
}

void cnn_dense_forward_onednn(const cnn_dense *l, int B, const float *x, const float *w, const float *b,
                              float *y, int relu, float *scratch, int threads)
{
    (void)scratch;
    kern_onednn_matmul(0, 0, B, l->nout, l->nin, x, l->nin, w, l->nout, b, y, l->nout, relu, threads);
}

void cnn_dense_backward_onednn(const cnn_dense *l, int B, const float *x, const float *w, const float *y,
                               float *dy, int relu, float *dw, float *db, float *dx, float *scratch, int threads)
{
    (void)scratch;
    if (B <= 0) {
        memset(dw, 0, (size_t)l->nin * l->nout * sizeof(float));
        memset(db, 0, (size_t)l->nout * sizeof(float));
        return;
    }
    if (relu)
        relu_mask(dy, y, (size_t)B * l->nout);
    /* dw = x^T dz (x read transposed through its strides), db = column sums of dz, dx = dz w^T */
    kern_onednn_matmul(1, 0, l->nin, l->nout, B, x, l->nin, dy, l->nout, NULL, dw, l->nout, 0, threads);
    for (int j = 0; j < l->nout; j++)
        db[j] = 0.0f;
    for (int n = 0; n < B; n++)
        for (int j = 0; j < l->nout; j++)
            db[j] += dy[(size_t)n * l->nout + j];
    if (dx)
        kern_onednn_matmul(0, 1, B, l->nin, l->nout, dy, l->nout, w, l->nout, NULL, dx, l->nin, 0, threads);
}

void cnn_pool_forward_onednn(const cnn_pool *p, int B, const float *x, float *y, uint8_t *arg, int threads)
{
    kern_onednn_pool_forward(B, p->c, p->h, p->w, x, y, arg, threads);
}

void cnn_pool_backward_onednn(const cnn_pool *p, int B, const float *dy, const uint8_t *arg, float *dx, int threads)
{
    kern_onednn_pool_backward(B, p->c, p->h, p->w, dy, arg, dx, threads);
}
