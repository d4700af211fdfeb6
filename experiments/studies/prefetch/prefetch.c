/*
 * experiments/studies/prefetch/prefetch.c: the prefetch study (seed 003, part 2: overlap). mlp or cnn
 * (--param model) is trained with its omp kernels on MNIST-format data (Fashion-MNIST by default), every
 * variant from the same weights on the same batches; the variants differ only in who prepares a batch
 * (gather, scale by 1/255, and with --param augment=flipshift a random flip and shift):
 *   sync           the training thread, inline, before each step;
 *   queue1/2/4     a loader thread (experiments/train/loader.h), up to 1, 2 or 4 batches ahead.
 * The region "wait" is around the training thread's wait for its batch (sync: around making it, which
 * the compute waits for just the same), "compute" around the step; the study sums the wait per epoch
 * and records it as a fraction of the epoch (wait_fraction) and 1 minus it (compute_utilisation, MLPerf
 * Storage's accelerator utilisation). The check (check.c) trains the first steps through the variant's
 * path against sync's and every delivered batch against a double reference.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <speedlab/prof.h>

#include "prefetch/prefetch_kernels.h"
#include "prefetch_study.h"
#include "stats.h"

#define MAX_EPOCHS 1000

static const sl_param params[] = {
    {"model", "mlp", "the network trained: mlp (seed 001's 784-128-128-10) or cnn (seed 004's), omp kernels",
     SL_TEXT("mlp|cnn")},
    {"augment", "none", "batch preparation: none (gather and scale) or flipshift (also a random horizontal "
                        "flip and a shift of up to 2 pixels, the same for every variant)", SL_TEXT("none|flipshift")},
    {"epochs", "3", "training epochs per repetition", SL_INT(1, MAX_EPOCHS)},
};
static const long sizes[] = {64};
static const long quick_sizes[] = {64};
static const long sweep_sizes[] = {16, 32, 128, 256, 512, 1024};

#define QUICK_ROWS 3000 /* --quick: training rows, one epoch, 2000 test rows */
#define QUICK_TEST 2000

/* ---- the batch -------------------------------------------------------------------------------- */

void pf_prepare_batch(const pf_state *s, int epoch, const int32_t *idx, int B, float *X, uint8_t *y)
{
    if (s->flipshift)
        pf_gather_flipshift(s->train.images, s->train.labels, s->train.rows, s->train.cols, idx, B, s->cfg.seed,
                            epoch, X, y);
    else
        train_gather(&s->train, idx, B, X, y);
}

/* The loader's fill (on its thread): item i is step i % steps of epoch i / steps, from its own shuffle,
 * so it never reads what the training thread writes. */
static int fill(void *ctx, long i, float *X, uint8_t *y)
{
    pf_state *s = ctx;
    int epoch = (int)(i / s->steps_per_epoch);
    long step = i % s->steps_per_epoch, left = s->cfg.n_train - step * s->cfg.batch;
    if (epoch != s->fill_epoch) {
        train_shuffle(s->fill_perm, s->train.n, s->cfg.seed, epoch);
        s->fill_epoch = epoch;
    }
    int B = left < s->cfg.batch ? (int)left : s->cfg.batch;
    pf_prepare_batch(s, epoch, s->fill_perm + step * s->cfg.batch, B, X, y);
    return B;
}

/* The next batch from the loader, which must be item next_item with B rows. */
static int fetch_queued(pf_state *s, int B, const float **X, const uint8_t **y, sl_error *err)
{
    loader_batch b = {0};
    int rc = loader_next(s->q, &b);
    if (rc != 1 || b.i != s->next_item || b.B != B) {
        sl_error_set(err, "prefetch %s: the loader gave %s (item %ld, %d rows) where item %ld of %d rows was due",
                     sl_study_prefetch.variants[s->v].name, rc == 1 ? "a batch" : rc == 0 ? "no batch" : "an error",
                     b.i, rc == 1 ? b.B : 0, s->next_item, B);
        return -1;
    }
    s->next_item++;
    *X = b.X, *y = b.y;
    return 0;
}

/* train_model.step: wait for (or make) the batch, then one SGD step on it. */
static int step(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err)
{
    pf_state *s = ctx;
    const float *X = s->X;
    const uint8_t *y = s->y;
    int rc = 0;
    uint64_t t0 = prof_now_ns();
    prof_begin("wait");
    if (s->q)
        rc = fetch_queued(s, B, &X, &y, err);
    else
        pf_prepare_batch(s, s->epoch, idx, B, s->X, s->y);
    prof_end("wait");
    s->wait_ns += prof_now_ns() - t0;
    if (rc)
        return -1;
    if (s->check_err >= 0) /* the check: is this the batch sync makes? */
        s->check_err = fmax(s->check_err, pf_batch_error(s, idx, B, X, y));
    prof_begin("compute");
    *loss = s->model->step(s->net, X, y, B, lr, s->vthreads);
    prof_end("compute");
    if (!isfinite(*loss)) {
        sl_error_set(err, "prefetch: the training loss is %g (diverged)", *loss);
        return -1;
    }
    return 0;
}

/* train_model.epoch_end: the epoch's wait, then the test accuracy (unaugmented, in chunks of a batch). */
static int epoch_end(void *ctx, double *loss_sum, long *correct, sl_error *err)
{
    (void)loss_sum, (void)err;
    pf_state *s = ctx;
    if (s->epoch < s->epochs)
        s->wait_epoch[s->epoch] = (double)s->wait_ns * 1e-9;
    s->wait_ns = 0;
    s->epoch++;
    long ok = 0;
    for (long r = 0; r < s->cfg.n_test; r += s->cfg.batch) {
        int B = (int)(s->cfg.n_test - r < s->cfg.batch ? s->cfg.n_test - r : s->cfg.batch);
        for (int b = 0; b < B; b++)
            s->eval_idx[b] = (int32_t)(r + b);
        train_gather(&s->test, s->eval_idx, B, s->X, s->y);
        ok += s->model->correct(s->net, s->X, s->y, B, s->vthreads);
    }
    *correct = ok;
    return 0;
}

train_model pf_train_model(pf_state *s, int v)
{
    s->v = v;
    s->vthreads = sl_variant_threads(&sl_study_prefetch.variants[v], s->threads);
    return (train_model){.ctx = s, .step = step, .epoch_end = epoch_end};
}

/* ---- setup ------------------------------------------------------------------------------------ */

static void teardown(void *vs)
{
    pf_state *s = vs;
    if (!s)
        return;
    loader_destroy(s->q);
    if (s->net)
        s->model->destroy(s->net);
    idx_set_free(&s->train);
    idx_set_free(&s->test);
    free(s->X), free(s->y), free(s->perm), free(s->fill_perm), free(s->eval_idx), free(s->ref), free(s->Pref);
    free(s->wait_epoch);
    train_series_free(&s->series);
    free(s);
}

static int data_missing(const sl_opts *o, char *why, size_t n)
{
    (void)o;
    return train_mnist_missing("prefetch", why, n);
}

static int read_params(pf_state *s, long batch, const sl_opts *o, sl_error *err)
{
    const sl_study *st = &sl_study_prefetch;
    const char *model = sl_param_str(o, st, "model"), *aug = sl_param_str(o, st, "augment");
    long epochs = sl_param_long(o, st, "epochs");
    if (strcmp(model, "mlp") && strcmp(model, "cnn")) {
        sl_error_set(err, "prefetch: --param model=%s: expected mlp or cnn", model);
        return -1;
    }
    if (strcmp(aug, "none") && strcmp(aug, "flipshift")) {
        sl_error_set(err, "prefetch: --param augment=%s: expected none or flipshift", aug);
        return -1;
    }
    if (epochs < 1 || epochs > MAX_EPOCHS) {
        sl_error_set(err, "prefetch: --param epochs=%ld is out of range: want an integer from 1 to %d", epochs,
                     MAX_EPOCHS);
        return -1;
    }
    s->model = strcmp(model, "cnn") ? &pf_model_mlp : &pf_model_cnn;
    s->flipshift = !strcmp(aug, "flipshift");
    s->quick = o->quick;
    s->epochs = s->quick ? 1 : (int)epochs;
    long n = s->quick && s->train.n > QUICK_ROWS ? QUICK_ROWS : s->train.n;
    if (batch < 1 || batch > n) {
        sl_error_set(err, "prefetch: batch %ld out of range: want 1 to %ld (the training rows%s)", batch, n,
                     s->quick ? " under --quick" : "");
        return -1;
    }
    const pf_model *m = s->model;
    s->cfg = (train_cfg){.epochs = s->epochs, .batch = (int)batch, .lr = m->lr, .lr_final = m->lr_final,
                         .seed = o->seed, .n_train = n, .partial_last = m->partial_last,
                         .n_test = s->quick && s->test.n > QUICK_TEST ? QUICK_TEST : s->test.n};
    s->steps_per_epoch = n / batch + (m->partial_last && n % batch ? 1 : 0);
    s->threads = o->threads > 0 ? o->threads : 1;
    return 0;
}

static void *setup(long batch, const sl_opts *o, sl_error *err)
{
    pf_state *s = calloc(1, sizeof *s);
    if (!s) {
        sl_error_set(err, "prefetch: out of memory");
        return NULL;
    }
    s->check_err = -1;
    /* both networks take 28 x 28 images, as their own studies do (train_load_mnist refuses another size) */
    const char *net = strcmp(sl_param_str(o, &sl_study_prefetch, "model"), "cnn")
                          ? "mlp 784-128-128-10" : "cnn conv 8 - pool - conv 16 - pool - 128 - 10";
    if (train_load_mnist("prefetch", net, 28, o, &s->train, &s->test, err) || read_params(s, batch, o, err) ||
        !(s->net = s->model->create(s->train.rows, s->train.cols, (int)batch, s->threads, o->seed, err))) {
        teardown(s);
        return NULL;
    }
    size_t np;
    s->model->weights(s->net, &np);
    s->px = (size_t)s->train.rows * s->train.cols;
    s->X = aligned_alloc(64, ((size_t)batch * s->px * sizeof(float) + 63) / 64 * 64);
    s->y = malloc((size_t)batch);
    s->perm = malloc((size_t)s->train.n * sizeof(int32_t));
    s->fill_perm = malloc((size_t)s->train.n * sizeof(int32_t));
    s->eval_idx = malloc((size_t)batch * sizeof(int32_t));
    s->ref = malloc((size_t)batch * s->px * sizeof(double));
    s->Pref = malloc(np * sizeof(float));
    s->wait_epoch = calloc((size_t)s->epochs, sizeof(double));
    if (!s->X || !s->y || !s->perm || !s->fill_perm || !s->eval_idx || !s->ref || !s->Pref || !s->wait_epoch ||
        train_series_alloc(&s->series, s->epochs)) {
        sl_error_set(err, "prefetch: out of memory for the batch buffers (batch %ld)", batch);
        teardown(s);
        return NULL;
    }
    return s;
}

/* The queue variants' loader thread and ring live from prepare to release: no thread is started and
 * nothing allocated inside a timed repetition. */
static int prepare(void *vs, int v, sl_error *err)
{
    pf_state *s = vs;
    s->nreps = 0;
    loader_destroy(s->q);
    s->q = NULL;
    if (pf_depth(v) == 0)
        return 0;
    char why[256];
    s->q = loader_create(pf_depth(v), (size_t)s->cfg.batch * s->px, (size_t)s->cfg.batch, fill, s, why, sizeof why);
    if (!s->q) {
        sl_error_set(err, "prefetch %s: %s", sl_study_prefetch.variants[v].name, why);
        return -1;
    }
    return 0;
}

static void release(void *vs, int v)
{
    (void)v;
    pf_state *s = vs;
    loader_destroy(s->q);
    s->q = NULL;
}

static int check(void *vs, int v, double *rel_err, sl_error *err)
{
    return pf_check(vs, v, rel_err, err);
}

/* ---- the timed repetition --------------------------------------------------------------------- */

static double sum(const double *x, int n)
{
    double t = 0;
    for (int i = 0; i < n; i++)
        t += x[i];
    return t;
}

/* One repetition: a whole training from the initial weights, the loader (if any) given every epoch's
 * batches at once, so that it works on through the evaluations as a real input pipeline would. */
static int run(void *vs, int v, sl_record *rec, sl_error *err)
{
    pf_state *s = vs;
    s->model->reset(s->net);
    s->epoch = 0, s->wait_ns = 0, s->next_item = 0, s->series.n = 0;
    train_model m = pf_train_model(s, v);
    if (s->q) {
        s->fill_epoch = -1; /* the loader is idle: it reads this only after loader_start */
        loader_start(s->q, (long)s->epochs * s->steps_per_epoch);
    }
    uint64_t t0 = prof_now_ns();
    int rc = train_run(&s->cfg, &m, s->train.n, s->perm, &s->series, rec, err);
    double secs = (double)(prof_now_ns() - t0) * 1e-9, busy = s->q ? loader_busy_s(s->q) : NAN;
    if (s->q)
        loader_cancel(s->q);
    if (rc != 0 || !sl_record_is_timed(rec))
        return rc;
    const train_series *z = &s->series;
    double epochs_s = sum(z->epoch_s, z->n), wait = sum(s->wait_epoch, z->n);
    if (s->nreps < PF_MAX_REPS)
        s->reps[s->nreps] = (pf_rep){.epoch_s = epochs_s / z->n, .wait_s = wait / z->n,
                                     .compute_s = (epochs_s - wait) / z->n,
                                     .wait_fraction = wait / epochs_s, .busy_fraction = busy / epochs_s,
                                     .sps = train_mean(z->samples_per_s, z->n), .acc = z->test_acc[z->n - 1],
                                     .secs = secs};
    s->nreps++;
    return 0;
}

/* ---- the record ------------------------------------------------------------------------------- */

/* Mean over the kept repetitions of the field at offset off of pf_rep as `name`, and its sample std as
 * `std_name` when there is more than one (std_name NULL: none). Returns the mean. */
static double record_spread(sl_record *rec, const pf_state *s, int kept, size_t off, const char *name,
                            const char *std_name)
{
    double x[PF_MAX_REPS];
    for (int i = 0; i < kept; i++)
        memcpy(&x[i], (const char *)&s->reps[i] + off, sizeof(double));
    sl_stats st;
    sl_stats_compute(x, kept, &st);
    sl_record_metric(rec, name, st.mean);
    if (std_name && kept > 1)
        sl_record_metric(rec, std_name, st.std);
    return st.mean;
}

/* Who ran on how many CPUs: on 2 vCPUs a loader thread beside 2 compute threads takes a core from them,
 * and an OpenMP thread that spins at a barrier (libgomp does, for a while, unless OMP_WAIT_POLICY=passive)
 * while the loader holds its partner's core stalls the step: the wait policy goes into the note. */
static void thread_note(const pf_state *s, int v, sl_record *rec)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int loaders = pf_depth(v) > 0, total = s->vthreads + loaders;
    const char *policy = getenv("OMP_WAIT_POLICY");
    char b[400];
    snprintf(b, sizeof b, "%d compute thread%s (OpenMP, --threads)%s on %ld online CPU%s%s; OMP_WAIT_POLICY=%s",
             s->vthreads, s->vthreads == 1 ? "" : "s", loaders ? " and 1 loader thread" : ", batches made inline",
             cpus, cpus == 1 ? "" : "s",
             !loaders ? "" : total > cpus ? ": the loader competes with the compute for a core"
                                          : ": a core is free for the loader",
             policy && *policy ? policy : "(unset: libgomp's default, spin then sleep)");
    sl_record_note(rec, b);
    sl_record_metric(rec, "compute_threads", s->vthreads);
    sl_record_metric(rec, "loader_threads", loaders);
    sl_record_metric(rec, "online_cpus", (double)cpus);
}

static void finish(void *vs, int v, sl_record *rec)
{
    pf_state *s = vs;
    if (s->nreps == 0)
        return;
    int kept = train_reps_kept(s->nreps, PF_MAX_REPS, "the metrics", rec);
    record_spread(rec, s, kept, offsetof(pf_rep, epoch_s), "epoch_s_mean", "epoch_s_std");
    record_spread(rec, s, kept, offsetof(pf_rep, sps), "samples_per_s_mean", "samples_per_s_std");
    record_spread(rec, s, kept, offsetof(pf_rep, wait_s), "wait_s_per_epoch", NULL);
    /* the epoch less the wait: what a loader thread beside the compute threads costs them shows here */
    record_spread(rec, s, kept, offsetof(pf_rep, compute_s), "compute_s_per_epoch", NULL);
    double wf = record_spread(rec, s, kept, offsetof(pf_rep, wait_fraction), "wait_fraction", "wait_fraction_std");
    sl_record_metric(rec, "compute_utilisation", 1.0 - wf);
    if (pf_depth(v) > 0)
        record_spread(rec, s, kept, offsetof(pf_rep, busy_fraction), "loader_busy_fraction", NULL);
    record_spread(rec, s, kept, offsetof(pf_rep, acc), "test_acc", "test_acc_std");
    record_spread(rec, s, kept, offsetof(pf_rep, secs), "train_time_s", NULL);
    sl_record_metric(rec, "depth", pf_depth(v));
    sl_record_metric(rec, "epochs", s->series.n);
    sl_record_metric(rec, "train_rows", (double)s->cfg.n_train);
    thread_note(s, v, rec);
    train_series_record(&s->series, rec);
    sl_record_series(rec, "wait_s", s->wait_epoch, s->series.n); /* the last repetition's */
    char b[160];
    snprintf(b, sizeof b, "model %s, augment %s: batches %s", s->model->name, s->flipshift ? "flipshift" : "none",
             pf_depth(v) ? "made by the loader thread ahead of the step" : "made inline before each step");
    sl_record_note(rec, b);
    if (s->quick) {
        snprintf(b, sizeof b, "--quick: one epoch on %ld training rows, %ld test rows", s->cfg.n_train, s->cfg.n_test);
        sl_record_reduced(rec, b);
    }
}

/* Images as bytes (train and test), two shuffles, the batch buffers (inline, the loader's ring of up to
 * PF_MAX_DEPTH + 1 and the check's doubles) and the network (cnn's workspace is the larger). */
static double footprint(long batch, const sl_opts *o)
{
    (void)o;
    return 70000.0 * 785 + 2 * 60000.0 * 4 + (double)batch * 784 * (4.0 * (PF_MAX_DEPTH + 2) + 8) +
           4.0 * 3 * 118282 + 3e6 + 40.0 * batch * 784;
}

static const char *incomplete(const sl_variant *v)
{
    const pf_row *r = v->kernels;
    return r->depth >= 0 && r->depth <= PF_MAX_DEPTH ? NULL : "depth must be 0 (batches made inline) to 8 (PF_MAX_DEPTH)";
}

/* One row per variant: the depth is the row's, never read from its name. */
static const sl_variant variants[] = {
    {"sync", "openmp", "the training thread gathers (and augments) each batch, then trains on it", NULL,
     SL_THREADED, &(const pf_row){0}},
    {"queue1", "openmp", "a loader thread prepares the next batch while the current one trains (depth 1)", "sync",
     SL_THREADED, &(const pf_row){1}},
    {"queue2", "openmp", "the loader up to 2 batches ahead", "queue1", SL_THREADED, &(const pf_row){2}},
    {"queue4", "openmp", "the loader up to 4 batches ahead", "queue2", SL_THREADED, &(const pf_row){4}},
};

const sl_study sl_study_prefetch = {
    .name = "prefetch",
    .title = "data pipeline, part 2: batches prepared inline or by a loader thread ahead (mlp or cnn, omp)",
    .source = "seed 003, part 2",
    .kind = SL_TRAINING,
    .size_name = "batch",
    .sizes = sizes, .n_sizes = 1, .quick_sizes = quick_sizes, .n_quick_sizes = 1,
    .sweep_sizes = sweep_sizes, .n_sweep_sizes = (int)(sizeof sweep_sizes / sizeof *sweep_sizes),
    .baseline = "sync",
    .tolerance = 1e-6,
    .variants = variants, .n_variants = (int)(sizeof variants / sizeof *variants),
    .incomplete = incomplete,
    .params = params, .n_params = (int)(sizeof params / sizeof *params),
    .default_reps = 3,
    .footprint = footprint,
    .data_missing = data_missing,
    .setup = setup, .prepare = prepare, .run = run, .check = check, .finish = finish, .release = release,
    .teardown = teardown,
};
