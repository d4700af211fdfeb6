/*
 * experiments/studies/mlp/mlp.c: the mlp study (seed 001): a 784-128-128-10 ReLU network with softmax
 * cross-entropy, trained by minibatch SGD on MNIST-format data (Fashion-MNIST by default). One repetition
 * is one whole training from the same He-initialised weights, every variant seeing the same batches.
 * The swept size is the batch. Per epoch: time, samples/s, training loss and test accuracy (series);
 * per case: accuracy and training time as mean and spread over the repetitions, peak memory.
 * The check (before any timed run, check.c) takes check_steps steps, each from the double-precision
 * reference's weights (kernels/mlp/mlp_ref.c), and compares the step's loss and update with it.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <speedlab/prof.h>

#include "mlp_study.h"
#include "stats.h"
#include "sl_config.h"
#if MLP_DEVICE
#include "mlp/mlp_cuda.h"
#endif

/* Defaults chosen to reach >= 88 % test accuracy on Fashion-MNIST with every variant (docs/study-mlp.md
 * has the measurement); the write-up's own setting is
 * --param epochs=40 --param lr=0.001 --param lr_final=0.001. */
static const sl_param params[] = {
    {"epochs", "20", "training epochs (the write-up: 40)", SL_INT(1, 100000)},
    {"lr", "0.1", "SGD learning rate of the first epoch (the write-up: 0.001)", SL_REAL(1e-30, 1e30)},
    {"lr_final", "0.01", "learning rate of the last epoch, linear in between (= lr: constant, as the write-up)", SL_REAL(1e-30, 1e30)},
    {"naive_epochs", "1", "epochs for the naive variant (it is slow; its records say they are reduced)", SL_INT(1, 100000)},
    {"check_steps", "50", "SGD steps checked against double precision before timing (check.c)", SL_INT(1, 1000000)},
    {"train_rows", "0", "training rows per epoch (0 = all; fewer marks the case reduced)", SL_INT(0, 2147483647)},
    {"feed", "resident", "cuda and cublas: resident (the training set on the GPU, batches gathered there), sync "
                         "(each batch gathered on the host and copied from pageable memory on the compute "
                         "stream) or overlap (pinned slots copied on a second stream while the last step "
                         "computes); CPU variants ignore it", SL_TEXT("resident|sync|overlap")},
    {"fused", "1", "simd and omp: 1 runs their fused step (one call, the update inside the gradient's store; "
                   "regions data and step), 0 the separate calls with a region per phase (data, forward, "
                   "loss, backward, update), for the per-phase profile at some cost in speed", SL_INT(0, 1)},
    {"spans", "1", "cuda, cublas: 1 times every step's copies and kernels with CUDA events (the record's "
                   "phases, the epoch region's device time); 0 records no phases, for step times free "
                   "of the events' cost (CPU variants ignore it)", SL_INT(0, 1)},
};
static const long sizes[] = {64};
static const long quick_sizes[] = {64};
/* The batch-size sweep (seed 003, part 3), run only when named: --sizes 16,32,64,128,256,512,1024. */
static const long sweep_sizes[] = {16, 32, 64, 128, 256, 512, 1024};

#define QUICK_ROWS 3000 /* --quick: training rows per epoch, one epoch, 2000 test rows */
#define QUICK_TEST 2000

static void teardown(void *vs)
{
    mlp_state *s = vs;
    if (!s)
        return;
#if MLP_DEVICE
    mlp_dev_release(s);
#endif
    idx_set_free(&s->train);
    idx_set_free(&s->test);
    free(s->P0); free(s->P); free(s->G); free(s->ext_update); free(s->wsblock); free(s->X); free(s->y); free(s->perm);
    train_series_free(&s->series);
    free(s);
}

/* The runner's data_missing hook: only asked when no --data was given. */
static int data_missing(const sl_opts *o, char *why, size_t n)
{
    (void)o;
    return train_mnist_missing("mlp", why, n);
}

static int load_data(mlp_state *s, const sl_opts *o, sl_error *err)
{
    return train_load_mnist("mlp", "784-128-128-10", 28, o, &s->train, &s->test, err);
}

static int read_params(mlp_state *s, long batch, const sl_opts *o, sl_error *err)
{
    /* checked as given (long), then narrowed: a value past an int must be refused, not wrapped */
    long epochs = sl_param_long(o, &sl_study_mlp, "epochs");
    long naive_epochs = sl_param_long(o, &sl_study_mlp, "naive_epochs");
    long check_steps = sl_param_long(o, &sl_study_mlp, "check_steps");
    double lr = sl_param_double(o, &sl_study_mlp, "lr");
    double lr_final = sl_param_double(o, &sl_study_mlp, "lr_final");
    long rows = sl_param_long(o, &sl_study_mlp, "train_rows");
    if (epochs < 1 || epochs > 100000 || naive_epochs < 1 || naive_epochs > 100000 || check_steps < 1 ||
        check_steps > 1000000 || !(lr > 0) || !(lr_final > 0) || rows < 0) {
        sl_error_set(err, "mlp: want epochs 1-100000 (got %ld), naive_epochs 1-100000 (got %ld), check_steps "
                     "1-1000000 (got %ld), lr > 0 (got %g), lr_final > 0 (got %g), train_rows >= 0 (got %ld)",
                     epochs, naive_epochs, check_steps, lr, lr_final, rows);
        return -1;
    }
    s->epochs = (int)epochs, s->naive_epochs = (int)naive_epochs, s->check_steps = (int)check_steps;
    if (batch < 1 || batch > MLP_MAX_BATCH) {
        sl_error_set(err, "mlp: batch %ld out of range: want 1-%d", batch, MLP_MAX_BATCH);
        return -1;
    }
    const char *feed = sl_param_str(o, &sl_study_mlp, "feed");
    s->feed = !strcmp(feed, "resident") ? 0 : !strcmp(feed, "sync") ? 1 : !strcmp(feed, "overlap") ? 2 : -1;
    if (s->feed < 0) {
        sl_error_set(err, "mlp: --param feed=%s: expected resident, sync or overlap", feed);
        return -1;
    }
    s->spans = sl_param_long(o, &sl_study_mlp, "spans") != 0; /* SL_INT(0, 1): checked before setup */
    s->fused = sl_param_long(o, &sl_study_mlp, "fused") != 0;
    s->quick = o->quick;
    long n = rows > 0 && rows < s->train.n ? rows : s->train.n;
    if (s->quick) {
        s->epochs = s->naive_epochs = 1;
        s->check_steps = s->check_steps < 20 ? s->check_steps : 20;
        n = n < QUICK_ROWS ? n : QUICK_ROWS;
    }
    if (n < batch) {
        sl_error_set(err, "mlp: %ld training rows, fewer than one batch of %ld", n, batch);
        return -1;
    }
    long steps = n / batch * s->epochs;
    s->check_steps = s->check_steps < steps ? s->check_steps : (int)steps;
    s->cfg = (train_cfg){.epochs = s->epochs, .batch = (int)batch, .lr = (float)lr,
                         .lr_final = (float)lr_final, .seed = o->seed,
                         .n_train = n, .n_test = s->quick && s->test.n > QUICK_TEST ? QUICK_TEST : s->test.n};
    s->threads = o->threads > 0 ? o->threads : 1;
    return 0;
}

static void work_of(const mlp_dims *d, long batch, long epochs, long rows, long test, double *flops,
                    double *bytes);

static void *setup(long batch, const sl_opts *o, sl_error *err)
{
    mlp_state *s = calloc(1, sizeof *s);
    if (!s || load_data(s, o, err) || read_params(s, batch, o, err)) {
        if (!s)
            sl_error_set(err, "mlp: out of memory");
        teardown(s);
        return NULL;
    }
    s->dims = (mlp_dims){s->train.rows * s->train.cols, 128, 128, 10};
    s->L = mlp_layout_of(&s->dims);
    int rows = (int)mlp_ws_rows(batch); /* a batch above the evaluation chunk needs the larger workspace */
    size_t np = s->L.n, nws = mlp_ws_floats(&s->dims, rows);
    s->P0 = malloc(np * sizeof(float));
    s->P = malloc(np * sizeof(float));
    s->G = malloc(np * sizeof(float));
    s->wsblock = aligned_alloc(64, (nws * sizeof(float) + 63) / 64 * 64);
    s->X = aligned_alloc(64, ((size_t)rows * s->dims.n0 * sizeof(float) + 63) / 64 * 64);
    s->y = malloc((size_t)rows);
    s->perm = malloc((size_t)s->train.n * sizeof(int32_t));
    if (!s->P0 || !s->P || !s->G || !s->wsblock || !s->X || !s->y || !s->perm ||
        train_series_alloc(&s->series, s->epochs)) {
        sl_error_set(err, "mlp: out of memory for the parameters and workspace");
        teardown(s);
        return NULL;
    }
    mlp_ws_bind(&s->ws, &s->dims, rows, s->wsblock);
    mlp_init_he(&s->dims, s->P0, o->seed);
    return s;
}

static train_model model_of(mlp_state *s, int v)
{
#if MLP_DEVICE
    if (mlp_is_device(v))
        return mlp_dev_model(s);
#endif
    s->v = v;
    s->vthreads = sl_variant_threads(&sl_study_mlp.variants[v], s->threads);
    return mlp_cpu_model(s);
}

/* The check (check.c) with variant v's model. */
static int check(void *vs, int v, double *rel_err, sl_error *err)
{
    mlp_state *s = vs;
    if (sl_study_mlp.variants[v].traits & SL_EXTERNAL) /* its first step, from baselines/mlp.py */
        return mlp_check_external(s, rel_err, err);
    train_model m = model_of(s, v);
    s->dev_per_step = 1;
    int rc = mlp_check(s, v, &m, rel_err, err);
    s->dev_per_step = 0;
    return rc;
}

static int prepare(void *vs, int v, sl_error *err)
{
    mlp_state *s = vs;
    s->nreps = 0;
    s->peak_dev_bytes = 0;
#if MLP_DEVICE
    if (mlp_is_device(v))
        return mlp_dev_prepare(s, v, err);
#else
    (void)v, (void)err;
#endif
    return 0;
}

static void release(void *vs, int v)
{
    (void)vs, (void)v;
#if MLP_DEVICE
    mlp_dev_release(vs);
#endif
}

static int run(void *vs, int v, sl_record *rec, sl_error *err)
{
    mlp_state *s = vs;
    if (mlp_set_weights(s, v, s->P0, err) != 0)
        return -1;
    train_cfg cfg = s->cfg;
    if ((sl_study_mlp.variants[v].traits & SL_REDUCED) && s->naive_epochs < cfg.epochs)
        cfg.epochs = s->naive_epochs;
    train_model m = model_of(s, v);
    s->series.n = 0;
    uint64_t t0 = prof_now_ns();
    if (train_run(&cfg, &m, s->train.n, s->perm, &s->series, rec, err) != 0)
        return -1;
    double secs = (double)(prof_now_ns() - t0) * 1e-9;
    if (!sl_record_is_timed(rec))      /* a warm-up run: not one of the repetitions */
        return 0;
    if (s->nreps < MLP_MAX_REPS) {
        s->acc[s->nreps] = s->series.test_acc[s->series.n - 1];
        s->secs[s->nreps] = secs;
    }
    s->nreps++;                         /* all timed runs; the first MLP_MAX_REPS are kept */
    return 0;
}

#if MLP_DEVICE
/* The device time of each phase of the last sampled step (mlp_cuda_phase_ms, CUDA events), as cnn
 * records them: device_data_ms ... device_update_ms. */
static void record_device_phases(mlp_state *s, sl_record *rec)
{
    static const char *const names[MLP_PHASES] = {"device_data_ms", "device_forward_ms", "device_loss_ms",
                                                  "device_backward_ms", "device_update_ms"};
    double ms[MLP_PHASES];
    if (!s->dev || mlp_cuda_phase_ms(s->dev, ms) != 0)
        return;
    for (int i = 0; i < MLP_PHASES; i++)
        if (!isnan(ms[i]))
            sl_record_metric(rec, names[i], ms[i]);
}
#endif

static void finish(void *vs, int v, sl_record *rec)
{
    mlp_state *s = vs;
    if (s->nreps == 0)
        return;
    int kept = train_reps_kept(s->nreps, MLP_MAX_REPS, "test_acc and train_time_s", rec);
    sl_stats acc, secs; /* over the repetitions */
    sl_stats_compute(s->acc, kept, &acc);
    sl_stats_compute(s->secs, kept, &secs);
    int epochs = s->series.n;
    sl_record_metric(rec, "test_acc", acc.mean);          /* final-epoch accuracy, mean over repetitions */
    if (kept > 1)
        sl_record_metric(rec, "test_acc_std", acc.std);
    sl_record_metric(rec, "train_time_s", secs.mean);      /* whole training incl. per-epoch evaluation */
    sl_record_metric(rec, "epochs", epochs);
    sl_record_metric(rec, "lr", s->cfg.lr);
    train_cfg ran = s->cfg; /* the schedule as run (naive's is shorter) */
    ran.epochs = epochs;
    sl_record_metric(rec, "lr_final", train_lr(&ran, epochs - 1));
    sl_record_metric(rec, "train_rows", (double)s->cfg.n_train);
    double epoch_s = train_mean(s->series.epoch_s, epochs);
    double step_flops = mlp_step_flops(&s->dims, s->cfg.batch) * (double)(s->cfg.n_train / s->cfg.batch);
    sl_record_metric(rec, "epoch_gflops", step_flops / epoch_s * 1e-9); /* training steps only */
    if (mlp_is_device(v))
        sl_record_metric(rec, "peak_gpu_bytes", s->peak_dev_bytes);
    if (mlp_is_device(v)) /* seed 003, part 5: 0 resident, 1 host-fed sync, 2 host-fed with overlap */
        sl_record_metric(rec, "feed", s->feed);
#if MLP_DEVICE
    if (mlp_is_device(v))
        record_device_phases(s, rec);
#endif
    train_series_record(&s->series, rec);
    double ran_flops, b;
    work_of(&s->dims, s->cfg.batch, epochs, s->cfg.n_train, s->cfg.n_test, &ran_flops, &b);
    sl_record_work(rec, ran_flops, b);
    char why[256];
    if (s->quick)
        sl_record_reduced(rec, "--quick: one epoch on 3000 training rows, 2000 test rows");
    else if (epochs < s->epochs) {
        snprintf(why, sizeof why, "%d of %d epochs (naive_epochs)", epochs, s->epochs);
        sl_record_reduced(rec, why);
    } else if (s->cfg.n_train < s->train.n) {
        snprintf(why, sizeof why, "%ld of %ld training rows per epoch (train_rows)", s->cfg.n_train, s->train.n);
        sl_record_reduced(rec, why);
    }
}

/* Work of one training run: every epoch's steps plus its test-set forward. Bytes are the compulsory
 * traffic if nothing stayed in cache between passes: per step the batch (bytes read, floats written
 * once and read twice: forward and dW1) and five passes over the parameters (forward and backward read
 * them, backward writes the gradient, the update reads it and rewrites P in place, that read-modify-write
 * counted as two passes); per evaluation the test
 * set likewise and one pass over the parameters per chunk. The arithmetic intensity (about 11 flop per
 * byte at batch 64) puts every CPU variant under the compute roof. */
static void work_of(const mlp_dims *d, long batch, long epochs, long rows, long test, double *flops,
                    double *bytes)
{
    double steps = (double)(rows / batch), np = (double)mlp_layout_of(d).n;
    double per_step = (double)batch * d->n0 * (1 + 3 * 4.0) + 5 * 4.0 * np;
    double chunks = (double)((test + MLP_EVAL_CHUNK - 1) / MLP_EVAL_CHUNK);
    double per_eval = (double)test * d->n0 * (1 + 2 * 4.0) + chunks * 4.0 * np;
    *flops = (double)epochs * (steps * mlp_step_flops(d, (int)batch) + mlp_forward_flops(d, (int)test));
    *bytes = (double)epochs * (steps * per_step + per_eval);
}

/* The runner asks before the data is read: the standard 60000/10000 split and the epochs parameter.
 * finish() records the work the variant ran when it differs (naive's epochs, another data set's rows). */
static void declared_work(long batch, const sl_opts *o, double *flops, double *bytes)
{
    mlp_dims d = {784, 128, 128, 10};
    train_cfg cfg = train_declared(&sl_study_mlp, batch, o, QUICK_ROWS, QUICK_TEST);
    work_of(&d, batch, cfg.epochs, cfg.n_train, cfg.n_test, flops, bytes);
}

static double flops(long batch, const sl_opts *o)
{
    double f, b;
    declared_work(batch, o, &f, &b);
    return f;
}

static double bytes(long batch, const sl_opts *o)
{
    double f, b;
    declared_work(batch, o, &f, &b);
    return b;
}

/* Images as bytes (train and test), the index, the workspace: about 60 MB for Fashion-MNIST. */
static double footprint(long batch, const sl_opts *o)
{
    (void)o;
    return 70000.0 * 785 + 60000.0 * 4 + 4.0 * (double)mlp_ws_rows(batch) * (784 + 600) + 4.0 * 3 * 118282 + 1e6;
}

/* What a row lacks: a CPU variant its forward and backward (blas's exist only with BLAS). */
static const char *incomplete(const sl_variant *v)
{
    const mlp_kernels *k = v->kernels;
    if (v->traits & SL_EXTERNAL) /* run by baselines/mlp.py (external.c) */
        return k->forward || k->backward ? "an SL_EXTERNAL row has no kernels" : NULL;
    if (v->traits & SL_DEVICE)
        return k->forward ? "an SL_DEVICE row runs the device model: no CPU kernels" : NULL;
    if (!SL_HAVE_BLAS && v->requires && strcmp(v->requires, "blas") == 0)
        return NULL;
    if (!SL_HAVE_ONEDNN && v->requires && strcmp(v->requires, "onednn") == 0)
        return NULL;
    return k->forward && k->backward ? NULL : "a CPU row needs .forward and .backward";
}

#if SL_HAVE_BLAS
#define MLP_BLAS_KERNELS {.forward = mlp_forward_blas, .backward = mlp_backward_blas}
#else
#define MLP_BLAS_KERNELS {0} /* unavailable: the runner never runs it */
#endif
#if SL_HAVE_ONEDNN
#define MLP_ONEDNN_KERNELS {.forward = mlp_forward_onednn, .backward = mlp_backward_onednn}
#else
#define MLP_ONEDNN_KERNELS {0} /* unavailable: the runner never runs it */
#endif

/* One row per variant: name, requirement, description, the variant it builds on, traits, functions. */
static const sl_variant variants[] = {
    {"naive", NULL, "plain loops, weights walked with a stride (trains naive_epochs epochs)", NULL,
     SL_REDUCED, &(const mlp_kernels){.forward = mlp_forward_naive, .backward = mlp_backward_naive}},
    {"simd", NULL, "register-blocked products with explicit vectors, one thread", "naive", 0,
     &(const mlp_kernels){.forward = mlp_forward_simd, .backward = mlp_backward_simd, .step = mlp_step_simd}},
    /* the threads gather X by columns (at two threads, those they read) and update what they wrote; a
     * step is one parallel region (mlp_step_omp) */
    {"omp", "openmp", "simd's blocks shared among --threads OpenMP threads", "simd", SL_THREADED,
     &(const mlp_kernels){.forward = mlp_forward_omp, .backward = mlp_backward_omp, .update = mlp_update_omp,
                          .gather = mlp_gather_omp, .step = mlp_step_omp}},
    {"blas", "blas", "the products by cblas_sgemm", "naive", SL_THREADED, &(const mlp_kernels)MLP_BLAS_KERNELS},
    {"onednn", "onednn", "the products by oneDNN matmul primitives, bias and ReLU as post-ops", "naive", SL_THREADED,
     &(const mlp_kernels)MLP_ONEDNN_KERNELS},
    {"cuda", "cuda", "own CUDA kernels, data resident on the GPU, batch gathered there", "omp", SL_DEVICE,
     &(const mlp_kernels){.cublas = 0}},
    {"cublas", "cublas", "the products by cublasSgemm, the rest as cuda", "cuda", SL_DEVICE,
     &(const mlp_kernels){.cublas = 1}},
    /* Framework baselines (docs/baselines.md): baselines/mlp.py, the same batches, rates and weights */
    {"numpy", "python:numpy", "the NumPy MLP: matrix forward and backward, in-place SGD (the write-up's), or the "
     "same in buffers allocated once", NULL, SL_EXTERNAL, &(const mlp_kernels){0}},
    {"torch", "python:torch", "torch.nn: Linear/ReLU, F.cross_entropy, autograd, torch.optim.SGD, eager or "
     "torch.compile", NULL, SL_EXTERNAL, &(const mlp_kernels){0}},
    /* GPU baselines: the framework's forms on its GPU (python:MODULE@DEVICE), beside cuda */
    {"torch-cuda", "python:torch@cuda", "torch.nn on the GPU: the torch forms with the model and batches on CUDA",
     NULL, SL_EXTERNAL | SL_DEVICE, &(const mlp_kernels){0}},
};

const sl_study sl_study_mlp = {
    .name = "mlp",
    .title = "784-128-128-10 MLP trained by minibatch SGD on (Fashion-)MNIST",
    .source = "seed 001",
    .kind = SL_TRAINING,
    .size_name = "batch",
    .sizes = sizes, .n_sizes = 1, .quick_sizes = quick_sizes, .n_quick_sizes = 1,
    .sweep_sizes = sweep_sizes, .n_sweep_sizes = (int)(sizeof sweep_sizes / sizeof *sweep_sizes),
    .baseline = "simd",
    .tolerance = 1e-3,
    .variants = variants, .n_variants = (int)(sizeof variants / sizeof *variants),
    .incomplete = incomplete,
    .params = params, .n_params = (int)(sizeof params / sizeof *params),
    .default_reps = 3,
    .flops = flops,
    .bytes = bytes,
    .footprint = footprint,
    .data_missing = data_missing,
    .external_inputs = mlp_external_inputs, .external_outputs = mlp_external_outputs,
    .setup = setup, .prepare = prepare, .run = run, .check = check, .finish = finish, .release = release,
    .teardown = teardown,
};
