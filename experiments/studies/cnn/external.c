/*
 * experiments/studies/cnn/external.c: the cnn study's framework baseline (baselines/cnn.py, torch.nn:
 * docs/baselines.md), as mlp's: the data, He weights, every epoch's shuffle and the schedule handed over;
 * the first SGD step checked against the double-precision reference; the last training's figures back.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cnn_study.h"

int cnn_external_inputs(void *vs, sl_inputs *in, sl_error *err)
{
    cnn_state *s = vs;
    const long px = (long)s->train.rows * s->train.cols, E = s->cfg.epochs, n = s->train.n;
    const long tr[2] = {n, px}, te[2] = {s->cfg.n_test, px}, np = (long)s->L.n, pe[2] = {E, n};
    int32_t *perms = malloc((size_t)(E * n) * sizeof *perms);
    if (!perms) {
        sl_error_set(err, "cnn: out of memory for %ld epochs' shuffles", E);
        return -1;
    }
    for (long e = 0; e < E; e++) /* the C variants' batches, in their order (train_run) */
        train_shuffle(perms + e * n, n, s->cfg.seed, (int)e);
    int rc = sl_input_u8(in, "images", s->train.images, 2, tr, err) ||
             sl_input_u8(in, "labels", s->train.labels, 1, tr, err) ||
             sl_input_u8(in, "test_images", s->test.images, 2, te, err) ||
             sl_input_u8(in, "test_labels", s->test.labels, 1, te, err) ||
             sl_input_f32(in, "P0", s->P0, 1, &np, err) || sl_input_i32(in, "perms", perms, 2, pe, err) ? -1 : 0;
    free(perms);
    sl_input_number(in, "rows", s->train.rows);
    sl_input_number(in, "cols", s->train.cols);
    sl_input_number(in, "batch", s->cfg.batch);
    sl_input_number(in, "n_train", (double)s->cfg.n_train);
    sl_input_number(in, "lr", s->cfg.lr);
    sl_input_number(in, "momentum", s->momentum);
    return rc;
}

/* The last training's series into s->series, and its figures into reps[0], as run() keeps them. */
static int take_training(cnn_state *s, const sl_outputs *out, sl_error *err)
{
    double epochs = 0, secs = 0;
    if (sl_output_number(out, "epochs", &epochs, err) || sl_output_number(out, "train_time_s", &secs, err))
        return -1;
    int E = (int)epochs;
    if (E < 1 || E > s->series.cap) {
        sl_error_set(err, "cnn: the baseline trained %d epochs, want 1-%d", E, s->series.cap);
        return -1;
    }
    train_series *z = &s->series;
    if (sl_output_array(out, "train_loss", z->train_loss, E, err) ||
        sl_output_array(out, "test_acc_series", z->test_acc, E, err) || sl_output_array(out, "epoch_s", z->epoch_s, E, err))
        return -1;
    double best = 0;
    for (int e = 0; e < E; e++) {
        z->epoch[e] = e + 1;
        z->samples_per_s[e] = (double)s->cfg.n_train / z->epoch_s[e];
        best = fmax(best, z->test_acc[e]);
    }
    z->n = E;
    s->reps[0] = (cnn_rep){.secs = secs, .epoch_s = train_mean(z->epoch_s, E), .acc = z->test_acc[E - 1],
                           .sps = train_mean(z->samples_per_s, E), .best = best, .rss = NAN};
    s->nreps = 1;
    return 0;
}

int cnn_external_outputs(void *vs, int v, const sl_outputs *out, sl_error *err)
{
    cnn_state *s = vs;
    (void)v;
    if (!sl_output_has(out, "loss0"))
        return take_training(s, out, err);
    free(s->ext_update); /* the first report: the first step's loss and update */
    s->ext_update = malloc(s->L.n * sizeof *s->ext_update);
    if (!s->ext_update) {
        sl_error_set(err, "cnn: out of memory for the baseline's update");
        return -1;
    }
    return sl_output_number(out, "loss0", &s->ext_loss0, err) ||
           sl_output_array(out, "update0", s->ext_update, (long)s->L.n, err) ? -1 : 0;
}

/* The first step (batch 0 of epoch 0 from the He weights, zero momentum: the update is -lr G) against
 * the reference, as the first step of cnn_check's first pair. */
int cnn_check_external(cnn_state *s, double *rel_err, sl_error *err)
{
    const cnn_dims *d = &s->dims;
    int B = s->cfg.batch;
    size_t np = s->L.n, nx = (size_t)B * d->conv1.h * d->conv1.w;
    double *P = malloc(np * sizeof *P), *G = malloc(np * sizeof *G), *X = malloc(nx * sizeof *X);
    double *ws = malloc(cnn_ref_ws_doubles(d, B) * sizeof *ws);
    int rc = -1;
    if (!P || !G || !X || !ws || !s->ext_update) {
        sl_error_set(err, "cnn: out of memory for the reference (or no update from the baseline)");
        goto out;
    }
    train_shuffle(s->perm, s->train.n, s->cfg.seed, 0);
    train_gather(&s->train, s->perm, B, s->X, s->y);
    for (size_t i = 0; i < nx; i++)
        X[i] = s->X[i];
    for (size_t i = 0; i < np; i++)
        P[i] = s->P0[i];
    double ref_loss = cnn_ref_loss_grad(d, P, X, s->y, B, G, ws);
    double e_update = train_delta_error(s->ext_update, G, -s->cfg.lr, np);
    *rel_err = isnan(s->ext_loss0) || isnan(e_update) ? NAN
                                                      : fmax(fabs(s->ext_loss0 - ref_loss) / fabs(ref_loss), e_update);
    rc = 0;
out:
    free(P), free(G), free(X), free(ws);
    return rc;
}
