/*
 * experiments/studies/precision/models.c: a precision row as a train_model, and its check.
 * A CPU step, each a region: data (gather), convert (the master weights to the row's storage), forward,
 * loss, backward, update (float32 SGD on the master: mlp_sgd). A GPU step is one region, "step": its
 * calls are enqueued on a stream (kernels/precision/prec_cuda.h), and "epoch" holds the device time
 * through train_model.sync.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <speedlab/prof.h>

#include "prec_study.h"
#include "train/mlp_check.h"
#if PREC_DEVICE
#include "precision/prec_cuda.h"
#endif

static int cpu_step(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err)
{
    prec_state *s = ctx;
    const prec_kernels *k = prec_kernels_of(s->v);
    prof_begin("data");
    train_gather(&s->train, idx, B, s->X, s->y);
    prof_end("data");
    prof_begin("convert");
    k->convert(&s->dims, s->P, s->Pq);
    prof_end("convert");
    prof_begin("forward");
    k->forward(&s->dims, s->P, s->Pq, s->X, B, &s->ws);
    prof_end("forward");
    prof_begin("loss");
    *loss = mlp_loss(&s->dims, s->y, B, &s->ws.f);
    prof_end("loss");
    prof_begin("backward");
    k->backward(&s->dims, s->P, s->Pq, s->X, B, &s->ws, s->G);
    prof_end("backward");
    prof_begin("update");
    mlp_sgd(s->P, s->G, s->L.n, lr);
    prof_end("update");
    if (!isfinite(*loss)) {
        sl_error_set(err, "precision: %s's training loss is %g (diverged: lower --param lr)",
                     sl_study_precision.variants[s->v].name, *loss);
        return -1;
    }
    return 0;
}

/* Test accuracy with the row's own forward (weights converted once), in chunks of PREC_EVAL_CHUNK rows. */
static int cpu_epoch_end(void *ctx, double *loss_sum, long *correct, sl_error *err)
{
    (void)loss_sum, (void)err;
    prec_state *s = ctx;
    const prec_kernels *k = prec_kernels_of(s->v);
    int32_t idx[PREC_EVAL_CHUNK];
    long ok = 0;
    k->convert(&s->dims, s->P, s->Pq);
    for (long r = 0; r < s->cfg.n_test; r += PREC_EVAL_CHUNK) {
        int B = (int)(s->cfg.n_test - r < PREC_EVAL_CHUNK ? s->cfg.n_test - r : PREC_EVAL_CHUNK);
        for (int b = 0; b < B; b++)
            idx[b] = (int32_t)(r + b);
        train_gather(&s->test, idx, B, s->X, s->y);
        k->forward(&s->dims, s->P, s->Pq, s->X, B, &s->ws);
        ok += mlp_correct(&s->dims, s->ws.f.z3, s->y, B);
    }
    *correct = ok;
    return 0;
}

train_model prec_cpu_model(prec_state *s)
{
    return (train_model){.ctx = s, .step = cpu_step, .epoch_end = cpu_epoch_end};
}

#if PREC_DEVICE
static int dev_fail(prec_state *s, sl_error *err)
{
    sl_error_set(err, "precision: %s", prec_cuda_error(s->dev));
    return -1;
}

static int dev_step(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err)
{
    prec_state *s = ctx;
    prof_begin("step");
    int rc = prec_cuda_step(s->dev, idx, B, lr);
    prof_end("step");
    if (rc)
        return dev_fail(s, err);
    *loss = NAN;
    if (s->dev_per_step && (prec_cuda_sync(s->dev) || prec_cuda_take_loss(s->dev, loss)))
        return dev_fail(s, err);
    return 0;
}

static int dev_sync(void *ctx, sl_error *err)
{
    prec_state *s = ctx;
    return prec_cuda_sync(s->dev) ? dev_fail(s, err) : 0;
}

static int dev_epoch_end(void *ctx, double *loss_sum, long *correct, sl_error *err)
{
    prec_state *s = ctx;
    if (prec_cuda_sync(s->dev) || prec_cuda_take_loss(s->dev, loss_sum) || prec_cuda_evaluate(s->dev, correct))
        return dev_fail(s, err);
    double b = (double)prec_cuda_bytes(s->dev);
    s->peak_dev_bytes = b > s->peak_dev_bytes ? b : s->peak_dev_bytes;
    return 0;
}

/* The seam train_run reads the device's event times through (train_timer, train.h): no per-phase
 * samples (the step is one region), so no poll. */
static int dev_take(void *ctx, int which, double *ms)
{
    return prec_cuda_span_take(ctx, which, ms);
}
static void dev_drop(void *ctx) { prec_cuda_span_drop(ctx); }

train_model prec_dev_model(prec_state *s)
{
    _Static_assert((int)PREC_SPAN_H2D == (int)TRAIN_H2D && (int)PREC_SPAN_KERNEL == (int)TRAIN_KERNEL &&
                   (int)PREC_SPAN_D2H == (int)TRAIN_D2H, "prec_cuda.h's spans are train.h's");
    s->timer = (train_timer){.ctx = s->dev, .take = dev_take, .drop = dev_drop};
    return (train_model){.ctx = s, .step = dev_step, .sync = dev_sync, .epoch_end = dev_epoch_end,
                         .timer = &s->timer};
}

int prec_dev_prepare(prec_state *s, int v, sl_error *err)
{
    char msg[512];
    int chunk = s->cfg.batch > PREC_EVAL_CHUNK ? s->cfg.batch : PREC_EVAL_CHUNK;
    prec_dev_release(s);
    s->dev = prec_cuda_create(&s->dims, prec_kernels_of(v)->cuda_type, chunk, s->cfg.batch, s->train.images,
                              s->train.labels, s->train.n, s->test.images, s->test.labels, s->cfg.n_test, msg,
                              sizeof msg);
    if (!s->dev) {
        sl_error_set(err, "precision: %s", msg);
        return -1;
    }
    return 0;
}

void prec_dev_release(prec_state *s)
{
    if (s->dev)
        prec_cuda_destroy(s->dev);
    s->dev = NULL;
}

int prec_dev_scaler(prec_state *s, double *scale, long *skipped)
{
    return s->dev ? prec_cuda_scaler(s->dev, scale, skipped) : -1;
}
#endif

/* Row v's master weights := P (a CPU row trains s->P in place), and back. */
static int set_weights(prec_state *s, int v, const float *P, sl_error *err)
{
    memcpy(s->P, P, s->L.n * sizeof(float));
#if PREC_DEVICE
    if (prec_is_device(v) && prec_cuda_set_params(s->dev, P) != 0)
        return dev_fail(s, err);
#else
    (void)v, (void)err;
#endif
    return 0;
}

static int get_weights(prec_state *s, int v, float *P, sl_error *err)
{
#if PREC_DEVICE
    if (prec_is_device(v))
        return prec_cuda_sync(s->dev) || prec_cuda_get_params(s->dev, P) ? dev_fail(s, err) : 0;
#else
    (void)v, (void)err;
#endif
    memcpy(P, s->P, s->L.n * sizeof(float));
    return 0;
}

static int set_any(void *s, int v, const float *P, sl_error *err)
{
    return set_weights(s, v, P, err);
}

static int get_any(void *s, int v, float *P, sl_error *err)
{
    return get_weights(s, v, P, err);
}

/* The check of experiments/train/mlp_check.c, teacher-forced as the mlp study's: check_steps steps of the
 * schedule, each from the double reference's weights rounded to float32 (the master copy). The reference
 * is exact (double, no storage rounding), so the error measured is the row's own: about 1e-6 for fp32,
 * about 1e-2 for bf16 (8 significant bits in the weights and activations), fp16 between them. The study's
 * tolerance admits bf16; the record's check.rel_err shows each row's. A GPU row's step may be skipped by
 * its loss scaler (an inf in the scaled gradient): its update error is then 1, as a wrong step's. */
int prec_check(prec_state *s, int v, train_model *m, double *rel_err, sl_error *err)
{
    const mlp_check_job j = {
        .study = "precision", .dims = &s->dims, .n_params = s->L.n, .cfg = &s->cfg, .train = &s->train,
        .P0 = s->P0, .steps = s->check_steps, .perm = s->perm, .X = s->X, .y = s->y, .model = *m, .state = s,
        .v = v, .set_weights = set_any, .get_weights = get_any,
    };
    return mlp_check_run(&j, rel_err, err);
}
