/*
 * experiments/studies/cnn/check.c: the cnn study's correctness check, run before a variant is timed.
 *
 * Teacher-forced, as mlp's (experiments/studies/mlp/check.c says why: float and double SGD from the same
 * start drift apart through ReLU kinks, with every kernel correct). Momentum is state as well, and the
 * device API can set the weights only with the momentum zeroed (cnn_cuda_set_params), so the steps go in
 * pairs, each pair from the double reference's weights P (rounded to float) and zero momentum:
 *   - the pair's first step: the variant's update must be -lr G(P), and its loss the reference's at P;
 *   - the second, on the next batch, from where the variant got and with the momentum it made: its
 *     update must be -lr (mu G(P) + G(P1)) with P1 = P - lr G(P) the reference's weights after the
 *     first step, and its loss the reference's at P1.
 * The reference then goes on from P1 with its own momentum step, and the next pair starts from there.
 * Updates are compared as the relative 2-norm of (after - before) - expected over all parameters; the
 * check's relative error is the larger of the worst loss error and the 90th percentile of the update
 * errors (a kink flip still happens within one step, rarely; a wrong kernel is wrong on most steps).
 * The steps follow the training schedule (the epoch's shuffle, batch, learning rate, momentum).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cnn_study.h"
#if CNN_DEVICE
#include "cnn/cnn_cuda.h"
#endif

int cnn_set_weights(cnn_state *s, int v, const float *P, sl_error *err)
{
    if (P != s->P)
        memcpy(s->P, P, s->L.n * sizeof(float));
    memset(s->V, 0, s->L.n * sizeof(float)); /* as cnn_cuda_set_params does on the device */
#if CNN_DEVICE
    if (cnn_is_device(v) && cnn_cuda_set_params(s->dev, P) != 0) {
        sl_error_set(err, "cnn: %s", cnn_cuda_error(s->dev));
        return -1;
    }
#else
    (void)v, (void)err;
#endif
    return 0;
}

/* P := variant v's weights. */
static int get_weights(cnn_state *s, int v, float *P, sl_error *err)
{
#if CNN_DEVICE
    if (cnn_is_device(v)) {
        if (cnn_cuda_sync(s->dev) != 0 || cnn_cuda_get_params(s->dev, P) != 0) {
            sl_error_set(err, "cnn: %s", cnn_cuda_error(s->dev));
            return -1;
        }
        return 0;
    }
#else
    (void)v, (void)err;
#endif
    memcpy(P, s->P, s->L.n * sizeof(float));
    return 0;
}

/* Buffers of the check (one batch of the reference in double). */
typedef struct check_buf {
    double *P, *G, *V, *want, *X, *ws, *errs;
    float *before, *after;
} check_buf;

static void buf_free(check_buf *b)
{
    free(b->P), free(b->G), free(b->V), free(b->want), free(b->X), free(b->ws), free(b->errs);
    free(b->before), free(b->after);
}

static int buf_alloc(check_buf *b, const cnn_state *s)
{
    size_t np = s->L.n, nx = (size_t)s->cfg.batch * s->train.rows * s->train.cols;
    *b = (check_buf){malloc(np * 8), malloc(np * 8), malloc(np * 8), malloc(np * 8), malloc(nx * 8),
                     malloc(cnn_ref_ws_doubles(&s->dims, s->cfg.batch) * 8),
                     malloc((size_t)s->check_steps * 8), malloc(np * 4), malloc(np * 4)};
    return b->P && b->G && b->V && b->want && b->X && b->ws && b->errs && b->before && b->after ? 0 : -1;
}

/* Step t of the schedule: its batch into s->X/s->y (and b->X in double), its learning rate. */
static const int32_t *batch_of(cnn_state *s, check_buf *b, int t, double *lr)
{
    int B = s->cfg.batch;
    long per_epoch = s->cfg.n_train / B;
    int epoch = (int)(t / per_epoch);
    if (t % per_epoch == 0)
        train_shuffle(s->perm, s->train.n, s->cfg.seed, epoch);
    const int32_t *idx = s->perm + (t % per_epoch) * B;
    train_gather(&s->train, idx, B, s->X, s->y);
    size_t nx = (size_t)B * s->train.rows * s->train.cols;
    for (size_t i = 0; i < nx; i++)
        b->X[i] = s->X[i];
    *lr = train_lr(&s->cfg, epoch);
    return idx;
}

int cnn_check(cnn_state *s, int v, train_model *m, double *rel_err, sl_error *err)
{
    const cnn_dims *d = &s->dims;
    int B = s->cfg.batch, rc = -1;
    size_t np = s->L.n;
    double mu = s->momentum, worst_loss = 0;
    check_buf b;
    if (buf_alloc(&b, s) != 0) {
        sl_error_set(err, "cnn: out of memory for the double-precision reference");
        goto out;
    }
    for (size_t i = 0; i < np; i++)
        b.P[i] = s->P0[i], b.V[i] = 0;
    for (int t = 0; t < s->check_steps; t++) {
        double lr;
        const int32_t *idx = batch_of(s, &b, t, &lr);
        int first = t % 2 == 0;
        double ref_loss = cnn_ref_loss_grad(d, b.P, b.X, s->y, B, b.G, b.ws);
        for (size_t i = 0; i < np; i++) {
            b.V[i] = (first ? 0 : mu * b.V[i]) + b.G[i]; /* the reference's momentum step */
            b.want[i] = -lr * b.V[i];
        }
        if (first) { /* the variant from the reference's weights, zero momentum */
            for (size_t i = 0; i < np; i++)
                b.before[i] = (float)b.P[i];
            if (cnn_set_weights(s, v, b.before, err) != 0)
                goto out;
        } else if (get_weights(s, v, b.before, err) != 0)
            goto out;
        double loss = NAN;
        if (m->step(m->ctx, idx, B, (float)lr, &loss, err) != 0 || get_weights(s, v, b.after, err) != 0)
            goto out;
        double e_loss = fabs(loss - ref_loss) / fabs(ref_loss);
        b.errs[t] = train_update_error(b.before, b.after, b.want, 1.0, np);
        if (isnan(e_loss) || isnan(b.errs[t])) {
            *rel_err = NAN; /* a NaN anywhere fails the check */
            rc = 0;
            goto out;
        }
        worst_loss = fmax(worst_loss, e_loss);
        for (size_t i = 0; i < np; i++)
            b.P[i] += b.want[i];
    }
    *rel_err = train_check_error(b.errs, s->check_steps, worst_loss);
    rc = 0;
out:
    buf_free(&b);
    return rc;
}
