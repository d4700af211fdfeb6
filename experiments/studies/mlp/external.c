/*
 * experiments/studies/mlp/external.c: the mlp study's framework baselines (baselines/mlp.py,
 * docs/baselines.md): the data, initial weights, shuffles and learning rates handed over; the first SGD
 * step checked against the double-precision reference; the last training's results taken back.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlp_study.h"

/* The training and test sets as bytes (the program scales them by 1/255 as train_gather does), the He
 * weights, every epoch's shuffle (train_shuffle: the C variants' batches, in their order) and rate. */
int mlp_external_inputs(void *vs, sl_inputs *in, sl_error *err)
{
    mlp_state *s = vs;
    const long px = (long)s->train.rows * s->train.cols, E = s->cfg.epochs, n = s->train.n;
    const long tr[2] = {n, px}, te[2] = {s->cfg.n_test, px}, np = (long)s->L.n, pe[2] = {E, n};
    int32_t *perms = malloc((size_t)(E * n) * sizeof *perms);
    double *lrs = malloc((size_t)E * sizeof *lrs);
    int rc = -1;
    if (!perms || !lrs) {
        sl_error_set(err, "mlp: out of memory for %ld epochs' shuffles", E);
        goto out;
    }
    for (long e = 0; e < E; e++) {
        train_shuffle(perms + e * n, n, s->cfg.seed, (int)e);
        lrs[e] = train_lr(&s->cfg, (int)e);
    }
    if (sl_input_u8(in, "images", s->train.images, 2, tr, err) ||
        sl_input_u8(in, "labels", s->train.labels, 1, tr, err) ||
        sl_input_u8(in, "test_images", s->test.images, 2, te, err) ||
        sl_input_u8(in, "test_labels", s->test.labels, 1, te, err) || sl_input_f32(in, "P0", s->P0, 1, &np, err) ||
        sl_input_i32(in, "perms", perms, 2, pe, err) || sl_input_f64(in, "lr", lrs, 1, &E, err))
        goto out;
    const long dims[4] = {s->dims.n0, s->dims.n1, s->dims.n2, s->dims.n3};
    const char *dn[4] = {"n0", "n1", "n2", "n3"};
    for (int i = 0; i < 4; i++)
        sl_input_number(in, dn[i], (double)dims[i]);
    sl_input_number(in, "batch", s->cfg.batch);
    sl_input_number(in, "n_train", (double)s->cfg.n_train);
    rc = 0;
out:
    free(perms);
    free(lrs);
    return rc;
}

/* The series of the program's last training, into s->series, as train_run fills it for a C variant. */
static int take_series(mlp_state *s, const sl_outputs *out, int epochs, sl_error *err)
{
    double *dst[] = {s->series.train_loss, s->series.test_acc, s->series.epoch_s};
    const char *names[] = {"train_loss", "test_acc_series", "epoch_s"};
    if (epochs < 1 || epochs > s->series.cap) {
        sl_error_set(err, "mlp: the baseline trained %d epochs, want 1-%d", epochs, s->series.cap);
        return -1;
    }
    for (int i = 0; i < 3; i++)
        if (sl_output_array(out, names[i], dst[i], epochs, err) != 0)
            return -1;
    for (int e = 0; e < epochs; e++) {
        s->series.epoch[e] = e + 1;
        s->series.samples_per_s[e] = (double)s->cfg.n_train / s->series.epoch_s[e];
    }
    s->series.n = epochs;
    return 0;
}

int mlp_external_outputs(void *vs, int v, const sl_outputs *out, sl_error *err)
{
    mlp_state *s = vs;
    (void)v;
    if (sl_output_has(out, "loss0")) { /* the first report: the first step's loss and update */
        free(s->ext_update);
        s->ext_update = malloc(s->L.n * sizeof *s->ext_update);
        if (!s->ext_update) {
            sl_error_set(err, "mlp: out of memory for the baseline's update");
            return -1;
        }
        return sl_output_number(out, "loss0", &s->ext_loss0, err) ||
               sl_output_array(out, "update0", s->ext_update, (long)s->L.n, err) ? -1 : 0;
    }
    double epochs = 0;
    if (sl_output_number(out, "epochs", &epochs, err) || sl_output_number(out, "test_acc", &s->acc[0], err) ||
        sl_output_number(out, "train_time_s", &s->secs[0], err) || take_series(s, out, (int)epochs, err))
        return -1;
    s->nreps = 1; /* finish reports the last training's accuracy and time */
    return 0;
}

/* The check of a baseline: its first step (batch 0 of epoch 0 from the He weights, the first step of
 * mlp_check) against the double-precision reference: the loss, and the update against -lr * gradient
 * (relative 2-norm). The C variants' check goes on check_steps steps teacher-forced; the program would
 * need the reference's weights before each step, so a baseline is checked on the first. */
int mlp_check_external(mlp_state *s, double *rel_err, sl_error *err)
{
    const mlp_dims *d = &s->dims;
    int B = s->cfg.batch;
    size_t np = s->L.n, nx = (size_t)B * d->n0;
    double *P = malloc(np * sizeof *P), *G = malloc(np * sizeof *G), *X = malloc(nx * sizeof *X);
    double *ws = malloc(mlp_ref_ws_doubles(d, B) * sizeof *ws);
    int rc = -1;
    if (!P || !G || !X || !ws || !s->ext_update) {
        sl_error_set(err, "mlp: out of memory for the reference (or no update from the baseline)");
        goto out;
    }
    train_shuffle(s->perm, s->train.n, s->cfg.seed, 0);
    train_gather(&s->train, s->perm, B, s->X, s->y);
    for (size_t i = 0; i < nx; i++)
        X[i] = s->X[i];
    for (size_t i = 0; i < np; i++)
        P[i] = s->P0[i];
    double ref_loss = mlp_ref_loss_grad(d, P, X, s->y, B, G, ws);
    double e_update = train_delta_error(s->ext_update, G, -train_lr(&s->cfg, 0), np);
    *rel_err = isnan(s->ext_loss0) || isnan(e_update) ? NAN
                                                      : fmax(fabs(s->ext_loss0 - ref_loss) / fabs(ref_loss), e_update);
    rc = 0;
out:
    free(P), free(G), free(X), free(ws);
    return rc;
}
