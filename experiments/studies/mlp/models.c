/*
 * experiments/studies/mlp/models.c: the mlp variants as train_model adapters. The CPU model runs one
 * step as data (gather + scale), forward, loss, backward, update, each a region, or, for a variant
 * with a fused step (simd, omp) unless --param fused=0, as that one call (region "step", after "data"
 * when the model gathers); the device model calls the same five steps of kernels/mlp/mlp_cuda.h
 * (enqueued on a stream, so their regions' host time is the enqueue; "epoch" holds the device time
 * through train_model.sync). Device time (train_timer): the epoch region's device_ms is every step's h2d
 * and kernel spans, the five regions' the sampled steps' phases, and train_run records the repetition's
 * phases (docs/nsight.md, docs/results-schema.md).
 */
#include <math.h>

#include <speedlab/prof.h>

#include "mlp_study.h"
#include "sl_config.h"
#if MLP_DEVICE
#include "mlp/mlp_cuda.h"
#endif

/* y := the labels of rows idx of set (a variant with its own gather fills X itself). */
static void labels(const mlp_state *s, const idx_set *set, const int32_t *idx, int B)
{
    for (int b = 0; b < B; b++)
        s->y[b] = set->labels[idx[b]];
}

/* X, y := rows idx of set, with variant k's gather. */
static void gather(const mlp_state *s, const mlp_kernels *k, const idx_set *set, const int32_t *idx, int B)
{
    if (!k->gather) {
        train_gather(set, idx, B, s->X, s->y);
        return;
    }
    k->gather(&s->dims, set->images, idx, B, s->X, s->vthreads);
    labels(s, set, idx, B);
}

/* A variant's fused step (mlp_kernels.step): the gather here only when the variant has none of its
 * own; one region "step" for the rest (the phases run inside one call, with no boundaries to time). */
static float fused_step(mlp_state *s, const mlp_kernels *k, const int32_t *idx, int B, float lr)
{
    const uint8_t *images = NULL;
    if (k->gather) {
        images = s->train.images;
        labels(s, &s->train, idx, B);
    } else {
        prof_begin("data");
        train_gather(&s->train, idx, B, s->X, s->y);
        prof_end("data");
    }
    prof_begin("step");
    float loss = k->step(&s->dims, s->P, images, idx, s->X, s->y, B, &s->ws, s->G, lr, s->vthreads);
    prof_end("step");
    return loss;
}

/* The step as separate calls, a region each. */
static float separate_step(mlp_state *s, const mlp_kernels *k, const int32_t *idx, int B, float lr)
{
    float loss;
    prof_begin("data");
    gather(s, k, &s->train, idx, B);
    prof_end("data");
    prof_begin("forward");
    k->forward(&s->dims, s->P, s->X, B, &s->ws, s->vthreads);
    prof_end("forward");
    prof_begin("loss");
    loss = mlp_loss(&s->dims, s->y, B, &s->ws);
    prof_end("loss");
    prof_begin("backward");
    k->backward(&s->dims, s->P, s->X, B, &s->ws, s->G, s->vthreads);
    prof_end("backward");
    prof_begin("update");
    if (k->update)
        k->update(&s->dims, s->P, s->G, lr, s->vthreads);
    else
        mlp_sgd(s->P, s->G, s->L.n, lr);
    prof_end("update");
    return loss;
}

static int cpu_step(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err)
{
    mlp_state *s = ctx;
    const mlp_kernels *k = mlp_kernels_of(s->v);
    if (!k->forward) { /* a row whose kernels this build lacks (blas without BLAS): never run, but say so */
        sl_error_set(err, "mlp: variant %s has no CPU kernels in this build", sl_study_mlp.variants[s->v].name);
        return -1;
    }
    *loss = k->step && s->fused ? fused_step(s, k, idx, B, lr) : separate_step(s, k, idx, B, lr);
    if (!isfinite(*loss)) {
        sl_error_set(err, "mlp: the training loss is %g (diverged: lower --param lr)", *loss);
        return -1;
    }
    return 0;
}

/* Test accuracy with the variant's own forward, in chunks of MLP_EVAL_CHUNK rows. */
static int cpu_epoch_end(void *ctx, double *loss_sum, long *correct, sl_error *err)
{
    (void)loss_sum, (void)err;
    mlp_state *s = ctx;
    const mlp_kernels *k = mlp_kernels_of(s->v);
    int32_t idx[MLP_EVAL_CHUNK];
    long ok = 0;
    for (long r = 0; r < s->cfg.n_test; r += MLP_EVAL_CHUNK) {
        int B = (int)(s->cfg.n_test - r < MLP_EVAL_CHUNK ? s->cfg.n_test - r : MLP_EVAL_CHUNK);
        for (int b = 0; b < B; b++)
            idx[b] = (int32_t)(r + b);
        gather(s, k, &s->test, idx, B);
        k->forward(&s->dims, s->P, s->X, B, &s->ws, s->vthreads);
        ok += mlp_correct(&s->dims, s->ws.z3, s->y, B);
    }
    *correct = ok;
    return 0;
}

train_model mlp_cpu_model(mlp_state *s)
{
    return (train_model){.ctx = s, .step = cpu_step, .epoch_end = cpu_epoch_end};
}

#if MLP_DEVICE
static int dev_fail(mlp_state *s, sl_error *err)
{
    sl_error_set(err, "mlp: %s", mlp_cuda_error(s->dev));
    return -1;
}

static int dev_step(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err)
{
    mlp_state *s = ctx;
    mlp_cuda *c = s->dev;
    int rc = mlp_cuda_phase_mark(c, 0); /* device time per phase, on a sampled step (mlp_cuda.h) */
    /* each region also gets a sampled step's device time of its phase, once that step has ended
     * (train_timer_region: polled, never waited for) */
    prof_begin("data");
    rc |= s->feed ? mlp_cuda_data_host(c, s->train.images, s->train.labels, idx, B) : mlp_cuda_data(c, idx, B);
    train_timer_region(&s->timer, 0);
    prof_end("data");
    rc |= mlp_cuda_phase_mark(c, 1);
    prof_begin("forward");
    rc |= mlp_cuda_forward(c, B);
    train_timer_region(&s->timer, 1);
    prof_end("forward");
    rc |= mlp_cuda_phase_mark(c, 2);
    prof_begin("loss");
    rc |= mlp_cuda_loss(c, B);
    train_timer_region(&s->timer, 2);
    prof_end("loss");
    rc |= mlp_cuda_phase_mark(c, 3);
    prof_begin("backward");
    rc |= mlp_cuda_backward(c, B);
    train_timer_region(&s->timer, 3);
    prof_end("backward");
    rc |= mlp_cuda_phase_mark(c, 4);
    prof_begin("update");
    rc |= mlp_cuda_update(c, lr);
    train_timer_region(&s->timer, 4);
    prof_end("update");
    rc |= mlp_cuda_phase_mark(c, 5);
    if (rc)
        return dev_fail(s, err);
    *loss = NAN;
    if (s->dev_per_step) { /* the checks compare every step's loss: wait for it */
        if (mlp_cuda_sync(c) || mlp_cuda_take_loss(c, loss))
            return dev_fail(s, err);
    }
    return 0;
}

static int dev_sync(void *ctx, sl_error *err)
{
    mlp_state *s = ctx;
    return mlp_cuda_sync(s->dev) ? dev_fail(s, err) : 0;
}

static int dev_epoch_end(void *ctx, double *loss_sum, long *correct, sl_error *err)
{
    mlp_state *s = ctx;
    if (mlp_cuda_sync(s->dev) || mlp_cuda_take_loss(s->dev, loss_sum) || mlp_cuda_evaluate(s->dev, correct))
        return dev_fail(s, err);
    double b = (double)mlp_cuda_bytes(s->dev);
    s->peak_dev_bytes = b > s->peak_dev_bytes ? b : s->peak_dev_bytes;
    return 0;
}

/* The seam train_run reads the device's event times through (train_timer, train.h). */
static int dev_take(void *ctx, int which, double *ms)
{
    return mlp_cuda_span_take(ctx, which, ms);
}
static void dev_drop(void *ctx) { mlp_cuda_span_drop(ctx); }
static int dev_poll(void *ctx, double ms[TRAIN_STEP_PHASES])
{
    return mlp_cuda_phase_poll(ctx, ms);
}

train_model mlp_dev_model(mlp_state *s)
{
    _Static_assert((int)MLP_SPAN_H2D == (int)TRAIN_H2D && (int)MLP_SPAN_KERNEL == (int)TRAIN_KERNEL &&
                   (int)MLP_SPAN_D2H == (int)TRAIN_D2H &&
                   MLP_PHASES == TRAIN_STEP_PHASES, "mlp_cuda.h's spans and phases are train.h's");
    s->timer = (train_timer){.ctx = s->dev, .take = dev_take, .drop = dev_drop, .poll = dev_poll};
    return (train_model){.ctx = s, .step = dev_step, .sync = dev_sync, .epoch_end = dev_epoch_end,
                         .timer = s->spans ? &s->timer : NULL}; /* spans=0: no phases to record */
}

int mlp_dev_prepare(mlp_state *s, int v, sl_error *err)
{
    char msg[512];
    mlp_dev_release(s);
    s->dev = mlp_cuda_create(&s->dims, mlp_kernels_of(v)->cublas, s->cfg.batch, s->train.images, s->train.labels,
                             s->train.n, s->test.images, s->test.labels, s->cfg.n_test, msg, sizeof msg);
    if (!s->dev) {
        sl_error_set(err, "mlp: %s", msg);
        return -1;
    }
    if (mlp_cuda_set_feed(s->dev, s->feed)) {
        sl_error_set(err, "mlp: %s", mlp_cuda_error(s->dev));
        return -1;
    }
    if (!s->spans)
        mlp_cuda_spans_off(s->dev);
    return 0;
}

void mlp_dev_release(mlp_state *s)
{
    if (s->dev)
        mlp_cuda_destroy(s->dev);
    s->dev = NULL;
}
#endif
