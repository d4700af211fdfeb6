/*
 * experiments/studies/prefetch/check.c: the prefetch study's check, run before a variant is timed: the
 * loader must deliver exactly the batches sync makes, in order, so that the variants train the same
 * model and differ only in time.
 *
 * It trains the first PF_CHECK_STEPS steps of epoch 0 (fewer when the epoch has fewer) twice from the
 * initial weights: once inline (sync's path, done once per setup) and once through variant v's own path
 * (its loader, as the timed runs use it). Every batch the variant's step gets is compared with a double
 * reference made from the definition (bytes / 255, flipped and shifted by pf_ref_flipshift), and the
 * weights after the steps with sync's: the same kernels on the same batches give the same bits, so
 * the relative error (max |difference| / max |sync's weight|) is 0 unless a batch came twice, late,
 * out of order or wrong. The check's error is the larger of the two.
 */
#include <math.h>
#include <string.h>

#include "prefetch/prefetch_kernels.h"
#include "prefetch_study.h"

double pf_batch_error(const pf_state *s, const int32_t *idx, int B, const float *X, const uint8_t *y)
{
    size_t px = s->px;
    if (s->flipshift)
        pf_ref_flipshift(s->train.images, s->train.rows, s->train.cols, idx, B, s->cfg.seed, s->epoch, s->ref);
    else
        for (int b = 0; b < B; b++)
            for (size_t k = 0; k < px; k++)
                s->ref[(size_t)b * px + k] = s->train.images[(size_t)idx[b] * px + k] / 255.0;
    double worst = 0;
    for (int b = 0; b < B; b++) {
        if (y[b] != s->train.labels[idx[b]])
            return 1.0;
        for (size_t k = 0; k < px; k++) {
            double d = fabs((double)X[(size_t)b * px + k] - s->ref[(size_t)b * px + k]);
            worst = d > worst || isnan(d) ? (isnan(d) ? INFINITY : d) : worst; /* pixels are in [0, 1] */
        }
    }
    return worst;
}

/* n steps of epoch 0 from the initial weights through variant v's path (its loader when s->q). */
static int train_steps(pf_state *s, int v, long n, sl_error *err)
{
    s->model->reset(s->net);
    s->epoch = 0, s->next_item = 0, s->wait_ns = 0;
    train_shuffle(s->perm, s->train.n, s->cfg.seed, 0);
    if (s->q) {
        s->fill_epoch = -1;
        loader_start(s->q, n);
    }
    train_model m = pf_train_model(s, v);
    int rc = 0;
    for (long i = 0; i < n && rc == 0; i++) {
        long left = s->cfg.n_train - i * s->cfg.batch;
        double loss;
        rc = m.step(m.ctx, s->perm + i * s->cfg.batch, left < s->cfg.batch ? (int)left : s->cfg.batch,
                    train_lr(&s->cfg, 0), &loss, err);
    }
    if (s->q)
        loader_cancel(s->q);
    return rc;
}

/* Sync's weights after n steps into Pref, made inline whatever v's path is. */
static int reference_weights(pf_state *s, int v, long n, sl_error *err)
{
    loader *q = s->q;
    s->q = NULL;
    int rc = train_steps(s, v, n, err);
    s->q = q;
    if (rc)
        return -1;
    size_t np;
    const float *P = s->model->weights(s->net, &np);
    memcpy(s->Pref, P, np * sizeof(float));
    s->have_ref = 1;
    return 0;
}

int pf_check(pf_state *s, int v, double *rel_err, sl_error *err)
{
    long n = s->steps_per_epoch < PF_CHECK_STEPS ? s->steps_per_epoch : PF_CHECK_STEPS;
    if (!s->have_ref && reference_weights(s, v, n, err) != 0)
        return -1;
    s->check_err = 0;
    int rc = train_steps(s, v, n, err);
    double batch_err = s->check_err;
    s->check_err = -1;
    if (rc)
        return -1;
    size_t np;
    const float *P = s->model->weights(s->net, &np);
    double diff = 0, top = 0;
    for (size_t i = 0; i < np; i++) {
        double d = fabs((double)P[i] - s->Pref[i]);
        diff = d > diff || isnan(d) ? (isnan(d) ? INFINITY : d) : diff;
        top = fmax(top, fabs((double)s->Pref[i]));
    }
    *rel_err = fmax(batch_err, top > 0 ? diff / top : diff);
    return 0;
}
