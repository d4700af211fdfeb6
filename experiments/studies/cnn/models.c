/*
 * experiments/studies/cnn/models.c: the cnn variants as train_model adapters. The CPU model runs one
 * step as data (gather + scale), forward, loss, backward, update, each a region, with one region per
 * layer inside forward and backward (cnn_net.c's mark callback), so a profile reads
 * epoch/forward/conv1. The device model calls the same five phases of kernels/cnn/cnn_cuda.h (enqueued
 * on a stream, so their regions' host time is the enqueue; "epoch" holds the device time through
 * train_model.sync). Device time (train_timer): the epoch region's device_ms is every step's h2d and
 * kernel spans, the five regions' the sampled steps' phases (none with a graph), and train_run records
 * the repetition's phases (docs/nsight.md, docs/results-schema.md).
 */
#include <math.h>

#include <speedlab/prof.h>

#include "cnn_study.h"
#if CNN_DEVICE
#include "cnn/cnn_cuda.h"
#endif

/* cnn_net.c's layer callback: the layer's name is a string literal there, as prof_begin needs. */
static void mark(void *ctx, const char *layer, int begin)
{
    (void)ctx;
    if (begin)
        prof_begin(layer);
    else
        prof_end(layer);
}

/* The resident memory at an epoch's end, for avg_rss_bytes (the write-up's logger read psutil once an
 * epoch): prof_rss_bytes() opens, reads and closes /proc/self/statm (5 us a call, 2-vCPU Zen 5 VM), so it
 * is taken in epoch_end, inside "evaluate" and outside the timed steps (run() does no I/O in them). */
static void sample_rss(cnn_state *s)
{
    s->rss_sum += (double)prof_rss_bytes();
    s->rss_n++;
}

static int cpu_step(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err)
{
    cnn_state *s = ctx;
    const cnn_layers *k = &cnn_row_of(s->v)->layers;
    if (!k->conv_forward) { /* a row whose kernels this build lacks (blas without BLAS): never run */
        sl_error_set(err, "cnn: variant %s has no CPU kernels in this build", sl_study_cnn.variants[s->v].name);
        return -1;
    }
    prof_begin("data");
    cnn_gather(s->train.images, s->train.labels, (size_t)s->train.rows * s->train.cols, idx, B, s->X, s->y,
               s->vthreads);
    prof_end("data");
    prof_begin("forward");
    cnn_forward(&s->dims, k, s->P, s->X, B, &s->ws, s->vthreads, mark, NULL);
    prof_end("forward");
    prof_begin("loss");
    *loss = cnn_loss(&s->dims, s->y, B, &s->ws);
    prof_end("loss");
    prof_begin("backward");
    cnn_backward(&s->dims, k, s->P, s->X, B, &s->ws, s->G, s->vthreads, mark, NULL);
    prof_end("backward");
    prof_begin("update");
    cnn_update_fn update = k->update ? k->update : cnn_sgd_momentum;
    update(s->P, s->V, s->G, s->L.n, lr, s->momentum, s->vthreads);
    prof_end("update");
    if (!isfinite(*loss)) {
        sl_error_set(err, "cnn: the training loss is %g (diverged: lower --param lr)", *loss);
        return -1;
    }
    return 0;
}

/* Test accuracy with the variant's own forward, in chunks of one batch (the workspace's size). */
static int cpu_epoch_end(void *ctx, double *loss_sum, long *correct, sl_error *err)
{
    (void)loss_sum, (void)err;
    cnn_state *s = ctx;
    const cnn_layers *k = &cnn_row_of(s->v)->layers;
    sample_rss(s);
    int chunk = s->cfg.batch;
    long ok = 0;
    for (long r = 0; r < s->cfg.n_test; r += chunk) {
        int B = (int)(s->cfg.n_test - r < chunk ? s->cfg.n_test - r : chunk);
        for (int b = 0; b < B; b++)
            s->eval_idx[b] = (int32_t)(r + b);
        train_gather(&s->test, s->eval_idx, B, s->X, s->y);
        cnn_forward(&s->dims, k, s->P, s->X, B, &s->ws, s->vthreads, NULL, NULL);
        ok += cnn_correct(&s->dims, s->ws.z4, s->y, B);
    }
    *correct = ok;
    return 0;
}

train_model cnn_cpu_model(cnn_state *s)
{
    return (train_model){.ctx = s, .step = cpu_step, .epoch_end = cpu_epoch_end};
}

#if CNN_DEVICE
static int dev_fail(cnn_state *s, sl_error *err)
{
    sl_error_set(err, "cnn: %s", cnn_cuda_error(s->dev));
    return -1;
}

/* With --param graph=1 the forward, loss and backward calls enqueue nothing after the first step of a
 * batch size (cnn_cuda.h): their regions then show the graph's absence of host work. */
static int dev_step(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err)
{
    cnn_state *s = ctx;
    cnn_cuda *c = s->dev;
    int rc;
    /* each region also gets a sampled step's device time of its phase, once that step has ended
     * (train_timer_region: polled, never waited for; none with a graph) */
    prof_begin("data");
    rc = cnn_cuda_data(c, idx, B);
    train_timer_region(&s->timer, 0);
    prof_end("data");
    prof_begin("forward");
    rc |= cnn_cuda_forward(c, B);
    train_timer_region(&s->timer, 1);
    prof_end("forward");
    prof_begin("loss");
    rc |= cnn_cuda_loss(c, B);
    train_timer_region(&s->timer, 2);
    prof_end("loss");
    prof_begin("backward");
    rc |= cnn_cuda_backward(c, B);
    train_timer_region(&s->timer, 3);
    prof_end("backward");
    prof_begin("update");
    rc |= cnn_cuda_update(c, B, lr, s->momentum);
    train_timer_region(&s->timer, 4);
    prof_end("update");
    if (rc)
        return dev_fail(s, err);
    *loss = NAN;
    if (s->dev_per_step) { /* the check compares every step's loss: wait for it */
        if (cnn_cuda_sync(c) || cnn_cuda_take_loss(c, loss))
            return dev_fail(s, err);
    }
    return 0;
}

static int dev_sync(void *ctx, sl_error *err)
{
    cnn_state *s = ctx;
    return cnn_cuda_sync(s->dev) ? dev_fail(s, err) : 0;
}

static int dev_epoch_end(void *ctx, double *loss_sum, long *correct, sl_error *err)
{
    cnn_state *s = ctx;
    sample_rss(s);
    if (cnn_cuda_sync(s->dev) || cnn_cuda_take_loss(s->dev, loss_sum) || cnn_cuda_evaluate(s->dev, correct))
        return dev_fail(s, err);
    double b = (double)cnn_cuda_bytes(s->dev);
    s->peak_dev_bytes = b > s->peak_dev_bytes ? b : s->peak_dev_bytes;
    s->launches_per_step = cnn_cuda_launches_per_step(s->dev);
    return 0;
}

/* The seam train_run reads the device's event times through (train_timer, train.h). */
static int dev_take(void *ctx, int which, double *ms)
{
    return cnn_cuda_span_take(ctx, which, ms);
}
static void dev_drop(void *ctx) { cnn_cuda_span_drop(ctx); }
static int dev_poll(void *ctx, double ms[TRAIN_STEP_PHASES])
{
    return cnn_cuda_phase_poll(ctx, ms);
}

train_model cnn_dev_model(cnn_state *s)
{
    _Static_assert((int)CNN_SPAN_H2D == (int)TRAIN_H2D && (int)CNN_SPAN_KERNEL == (int)TRAIN_KERNEL &&
                   (int)CNN_SPAN_D2H == (int)TRAIN_D2H, "cnn_cuda.h's spans are train.h's");
    s->timer = (train_timer){.ctx = s->dev, .take = dev_take, .drop = dev_drop, .poll = dev_poll};
    return (train_model){.ctx = s, .step = dev_step, .sync = dev_sync, .epoch_end = dev_epoch_end,
                         .timer = s->spans ? &s->timer : NULL}; /* spans=0: no phases to record */
}

/* With graph = 1 the first step of each batch size captures that size's graph (cnn_cuda.h). The check
 * takes full batches only, so the epoch's partial last batch would be captured inside the first timed
 * epoch: set-up in a timed region. One untimed step at each size the training uses captures both here;
 * run() sets the weights (and zeroes the momentum) before training, and the loss it added is taken. */
static int capture_graphs(cnn_state *s, sl_error *err)
{
    int sizes[2] = {s->cfg.batch, (int)(s->cfg.n_train % s->cfg.batch)};
    double discard;
    train_shuffle(s->perm, s->train.n, s->cfg.seed, 0);
    for (int i = 0; i < 2; i++) {
        int B = sizes[i];
        if (B <= 0)
            continue;
        int rc = cnn_cuda_data(s->dev, s->perm, B) | cnn_cuda_forward(s->dev, B) | cnn_cuda_loss(s->dev, B) |
                 cnn_cuda_backward(s->dev, B) | cnn_cuda_update(s->dev, B, s->cfg.lr, s->momentum);
        if (rc || cnn_cuda_sync(s->dev) || cnn_cuda_take_loss(s->dev, &discard))
            return dev_fail(s, err);
    }
    return 0;
}

int cnn_dev_prepare(cnn_state *s, int v, sl_error *err)
{
    char msg[512];
    cnn_dev_release(s);
    s->dev = cnn_cuda_create(&s->dims, cnn_row_of(v)->backend, s->graph, s->cfg.batch, s->train.images,
                             s->train.labels, s->train.n, s->test.images, s->test.labels, s->cfg.n_test,
                             msg, sizeof msg);
    if (!s->dev) {
        sl_error_set(err, "cnn: %s", msg);
        return -1;
    }
    if (!s->spans)
        cnn_cuda_spans_off(s->dev);
    if (s->graph && capture_graphs(s, err) != 0) {
        cnn_dev_release(s);
        return -1;
    }
    return 0;
}

void cnn_dev_release(cnn_state *s)
{
    if (s->dev)
        cnn_cuda_destroy(s->dev);
    s->dev = NULL;
}
#endif
