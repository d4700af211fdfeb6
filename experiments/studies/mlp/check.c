/*
 * experiments/studies/mlp/check.c: the mlp study's correctness check, run before a variant is timed.
 *
 * Why teacher-forced: float32 SGD and double SGD from the same start drift apart for good reasons.
 * A ReLU whose input is within rounding of zero is on in one and off in the other, that sample's
 * gradient for the unit's weights switches on or off, and at lr 0.1 the networks then diverge
 * chaotically: on some seeds the loss differs by 1e-2 after a hundred steps with every kernel correct.
 * So each step starts the variant from the reference's weights (rounded to float), and compares
 *   - the step's loss with the reference's (same weights, same batch: float rounding only), and
 *   - the step's update (weights after - weights before) with the reference's, -lr * gradient, as the
 *     relative 2-norm of the difference.
 * Over check_steps consecutive steps of the training schedule (shuffle and learning rate as train_run),
 * the check's relative error is the larger of the worst loss error and the 90th percentile of the update
 * errors. Not the worst update: a kink flip still happens within one step, rarely, and switches one
 * sample's contribution to one unit's gradient (seen: an update error of 1e-3 on one step in 200 of
 * seed 5, every other step 4e-6). A wrong kernel is wrong on most steps, and shows in the percentile.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlp_study.h"
#if MLP_DEVICE
#include "mlp/mlp_cuda.h"
#endif

/* Variant v's weights := P (the CPU variants train s->P in place). */
int mlp_set_weights(mlp_state *s, int v, const float *P, sl_error *err)
{
    if (P != s->P)
        memcpy(s->P, P, s->L.n * sizeof(float));
#if MLP_DEVICE
    if (mlp_is_device(v) && mlp_cuda_set_params(s->dev, P) != 0) {
        sl_error_set(err, "mlp: %s", mlp_cuda_error(s->dev));
        return -1;
    }
#else
    (void)v, (void)err;
#endif
    return 0;
}

/* P := variant v's weights. */
static int get_weights(mlp_state *s, int v, float *P, sl_error *err)
{
#if MLP_DEVICE
    if (mlp_is_device(v)) {
        if (mlp_cuda_sync(s->dev) != 0 || mlp_cuda_get_params(s->dev, P) != 0) {
            sl_error_set(err, "mlp: %s", mlp_cuda_error(s->dev));
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

int mlp_check(mlp_state *s, int v, train_model *m, double *rel_err, sl_error *err)
{
    const mlp_dims *d = &s->dims;
    int B = s->cfg.batch;
    size_t np = s->L.n, nx = (size_t)B * d->n0;
    double *P = malloc(np * sizeof *P), *G = malloc(np * sizeof *G), *X = malloc(nx * sizeof *X);
    double *ws = malloc(mlp_ref_ws_doubles(d, B) * sizeof *ws);
    float *before = malloc(np * sizeof *before), *after = malloc(np * sizeof *after);
    double *e_updates = malloc((size_t)s->check_steps * sizeof *e_updates);
    int rc = -1;
    if (!P || !G || !X || !ws || !before || !after || !e_updates) {
        sl_error_set(err, "mlp: out of memory for the double-precision reference");
        goto out;
    }
    for (size_t i = 0; i < np; i++)
        P[i] = s->P0[i];
    long per_epoch = s->cfg.n_train / B;
    double worst_loss = 0;
    for (int t = 0; t < s->check_steps; t++) {
        int epoch = (int)(t / per_epoch);
        const int32_t *idx = s->perm + (t % per_epoch) * B;
        double lr = train_lr(&s->cfg, epoch);
        if (t % per_epoch == 0)
            train_shuffle(s->perm, s->train.n, s->cfg.seed, epoch);
        /* reference: loss and gradient at P, in double */
        train_gather(&s->train, idx, B, s->X, s->y);
        for (size_t i = 0; i < nx; i++)
            X[i] = s->X[i];
        double ref_loss = mlp_ref_loss_grad(d, P, X, s->y, B, G, ws);
        /* the variant: one step from the same weights */
        for (size_t i = 0; i < np; i++)
            before[i] = (float)P[i];
        double loss = NAN;
        if (mlp_set_weights(s, v, before, err) != 0 || m->step(m->ctx, idx, B, (float)lr, &loss, err) != 0 ||
            get_weights(s, v, after, err) != 0)
            goto out;
        double e_loss = fabs(loss - ref_loss) / fabs(ref_loss);
        e_updates[t] = train_update_error(before, after, G, -lr, np);
        if (isnan(e_loss) || isnan(e_updates[t])) {
            *rel_err = NAN; /* a NaN anywhere fails the check */
            rc = 0;
            goto out;
        }
        worst_loss = fmax(worst_loss, e_loss);
        for (size_t i = 0; i < np; i++)
            P[i] -= lr * G[i];
    }
    *rel_err = train_check_error(e_updates, s->check_steps, worst_loss);
    rc = 0;
out:
    free(P), free(G), free(X), free(ws), free(before), free(after), free(e_updates);
    return rc;
}
