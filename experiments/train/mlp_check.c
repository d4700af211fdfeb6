/*
 * experiments/train/mlp_check.c: the teacher-forced check of a model of the mlp network, run before a
 * variant is timed (the mlp study's variants, the precision study's rows).
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

#include "train/mlp_check.h"

/* One step t of the schedule: the reference's loss and gradient at P (double), the variant's step from
 * the same weights rounded to float; *e_loss and *e_update their relative errors. 0, or -1 with err. */
static int check_step(const mlp_check_job *j, int t, const double *P, double *G, double *X, double *ws,
                      float *before, float *after, double *e_loss, double *e_update, sl_error *err)
{
    const int B = j->cfg->batch;
    const size_t np = j->n_params, nx = (size_t)B * j->dims->n0;
    long per_epoch = j->cfg->n_train / B;
    int epoch = (int)(t / per_epoch);
    const int32_t *idx = j->perm + (t % per_epoch) * B;
    double lr = train_lr(j->cfg, epoch), loss = NAN;
    if (t % per_epoch == 0)
        train_shuffle(j->perm, j->train->n, j->cfg->seed, epoch);
    train_gather(j->train, idx, B, j->X, j->y);
    for (size_t i = 0; i < nx; i++)
        X[i] = j->X[i];
    double ref_loss = mlp_ref_loss_grad(j->dims, P, X, j->y, B, G, ws);
    for (size_t i = 0; i < np; i++)
        before[i] = (float)P[i];
    if (j->set_weights(j->state, j->v, before, err) != 0 ||
        j->model.step(j->model.ctx, idx, B, (float)lr, &loss, err) != 0 ||
        j->get_weights(j->state, j->v, after, err) != 0)
        return -1;
    *e_loss = fabs(loss - ref_loss) / fabs(ref_loss);
    *e_update = train_update_error(before, after, G, -lr, np);
    return 0;
}

int mlp_check_run(const mlp_check_job *j, double *rel_err, sl_error *err)
{
    const int B = j->cfg->batch;
    const size_t np = j->n_params, nx = (size_t)B * j->dims->n0;
    double *P = malloc(np * sizeof *P), *G = malloc(np * sizeof *G), *X = malloc(nx * sizeof *X);
    double *ws = malloc(mlp_ref_ws_doubles(j->dims, B) * sizeof *ws);
    float *before = malloc(np * sizeof *before), *after = malloc(np * sizeof *after);
    double *e_updates = malloc((size_t)j->steps * sizeof *e_updates);
    int rc = -1;
    if (!P || !G || !X || !ws || !before || !after || !e_updates) {
        sl_error_set(err, "%s: out of memory for the double-precision reference", j->study);
        goto out;
    }
    for (size_t i = 0; i < np; i++)
        P[i] = j->P0[i];
    double worst_loss = 0;
    for (int t = 0; t < j->steps; t++) {
        double e_loss;
        if (check_step(j, t, P, G, X, ws, before, after, &e_loss, &e_updates[t], err) != 0)
            goto out;
        if (isnan(e_loss) || isnan(e_updates[t])) {
            *rel_err = NAN; /* a NaN anywhere fails the check */
            rc = 0;
            goto out;
        }
        worst_loss = fmax(worst_loss, e_loss);
        /* the reference follows its own schedule: the next step starts from its weights */
        double lr = train_lr(j->cfg, (int)(t / (j->cfg->n_train / B)));
        for (size_t i = 0; i < np; i++)
            P[i] -= lr * G[i];
    }
    *rel_err = train_check_error(e_updates, j->steps, worst_loss);
    rc = 0;
out:
    free(P), free(G), free(X), free(ws), free(before), free(after), free(e_updates);
    return rc;
}
