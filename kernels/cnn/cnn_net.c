/*
 * kernels/cnn/cnn_net.c: the network's order of layers, written once for every variant (a variant only
 * supplies the per-layer functions). `mark` is told before and after each layer so that the study can
 * open a profiler region around it; the kernels themselves never time.
 */
#include "cnn_kernels.h"

#define MARK(name, begin)                                                                                \
    do {                                                                                                 \
        if (mark)                                                                                        \
            mark(ctx, name, begin);                                                                      \
    } while (0)

void cnn_forward(const cnn_dims *d, const cnn_layers *k, const float *P, const float *X, int B, cnn_ws *ws,
                 int threads, cnn_mark_fn mark, void *ctx)
{
    cnn_layout L = cnn_layout_of(d);
    cnn_pool_forward_fn pool_forward = k->pool_forward ? k->pool_forward : cnn_pool_forward;
    if (k->conv_pool_forward) { /* the convolutions' outputs a1, a2 are never written */
        MARK("conv1+pool1", 1);
        k->conv_pool_forward(&d->conv1, &d->pool1, B, X, P + L.c1w, P + L.c1b, ws->p1, ws->arg1, ws->scratch,
                             threads);
        MARK("conv1+pool1", 0);
        MARK("conv2+pool2", 1);
        k->conv_pool_forward(&d->conv2, &d->pool2, B, ws->p1, P + L.c2w, P + L.c2b, ws->p2, ws->arg2,
                             ws->scratch, threads);
        MARK("conv2+pool2", 0);
        goto dense;
    }
    MARK("conv1", 1);
    k->conv_forward(&d->conv1, B, X, P + L.c1w, P + L.c1b, ws->a1, ws->scratch, threads);
    MARK("conv1", 0);
    MARK("pool1", 1);
    pool_forward(&d->pool1, B, ws->a1, ws->p1, ws->arg1, threads);
    MARK("pool1", 0);
    MARK("conv2", 1);
    k->conv_forward(&d->conv2, B, ws->p1, P + L.c2w, P + L.c2b, ws->a2, ws->scratch, threads);
    MARK("conv2", 0);
    MARK("pool2", 1);
    pool_forward(&d->pool2, B, ws->a2, ws->p2, ws->arg2, threads);
    MARK("pool2", 0);
dense:
    MARK("dense1", 1); /* p2 is the flattened B x 400 input: NCHW per sample is (channel, row, column) */
    k->dense_forward(&d->dense1, B, ws->p2, P + L.d1w, P + L.d1b, ws->a3, 1, ws->scratch, threads);
    MARK("dense1", 0);
    MARK("dense2", 1);
    k->dense_forward(&d->dense2, B, ws->a3, P + L.d2w, P + L.d2b, ws->z4, 0, ws->scratch, threads);
    MARK("dense2", 0);
}

/* In reverse. Each delta arrives as dL/d(output) and the layer's backward turns it into dL/dz through
 * its own ReLU (the dense2 logits have none), so no layer applies another layer's activation. */
void cnn_backward(const cnn_dims *d, const cnn_layers *k, const float *P, const float *X, int B, cnn_ws *ws,
                  float *G, int threads, cnn_mark_fn mark, void *ctx)
{
    cnn_layout L = cnn_layout_of(d);
    cnn_pool_backward_fn pool_backward = k->pool_backward ? k->pool_backward : cnn_pool_backward;
    MARK("dense2", 1);
    k->dense_backward(&d->dense2, B, ws->a3, P + L.d2w, ws->z4, ws->d4, 0, G + L.d2w, G + L.d2b, ws->da3,
                      ws->scratch, threads);
    MARK("dense2", 0);
    MARK("dense1", 1);
    k->dense_backward(&d->dense1, B, ws->p2, P + L.d1w, ws->a3, ws->da3, 1, G + L.d1w, G + L.d1b, ws->dp2,
                      ws->scratch, threads);
    MARK("dense1", 0);
    if (k->pool_conv_backward) {
        MARK("conv2+pool2", 1);
        k->pool_conv_backward(&d->conv2, &d->pool2, B, ws->p1, P + L.c2w, ws->p2, ws->arg2, ws->dp2, G + L.c2w,
                              G + L.c2b, ws->dp1, ws->scratch, threads);
        MARK("conv2+pool2", 0);
        MARK("conv1+pool1", 1);
        k->pool_conv_backward(&d->conv1, &d->pool1, B, X, P + L.c1w, ws->p1, ws->arg1, ws->dp1, G + L.c1w,
                              G + L.c1b, NULL, ws->scratch, threads);
        MARK("conv1+pool1", 0);
        return;
    }
    MARK("pool2", 1);
    pool_backward(&d->pool2, B, ws->dp2, ws->arg2, ws->da2, threads);
    MARK("pool2", 0);
    MARK("conv2", 1);
    k->conv_backward(&d->conv2, B, ws->p1, P + L.c2w, ws->a2, ws->da2, G + L.c2w, G + L.c2b, ws->dp1,
                     ws->scratch, threads);
    MARK("conv2", 0);
    MARK("pool1", 1);
    pool_backward(&d->pool1, B, ws->dp1, ws->arg1, ws->da1, threads);
    MARK("pool1", 0);
    MARK("conv1", 1); /* the image needs no gradient */
    k->conv_backward(&d->conv1, B, X, P + L.c1w, ws->a1, ws->da1, G + L.c1w, G + L.c1b, NULL, ws->scratch,
                     threads);
    MARK("conv1", 0);
}
