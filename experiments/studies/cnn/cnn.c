/*
 * experiments/studies/cnn/cnn.c: the cnn study (seed 004): a small convolutional network (conv 1->8 3x3,
 * max-pool, conv 8->16 3x3, max-pool, dense 400->128, dense 128->10, softmax cross-entropy; shapes in
 * kernels/cnn/cnn_kernels.h) trained with full backpropagation by SGD with momentum on MNIST-format data
 * (Fashion-MNIST by default). One repetition is one whole training from the same He-initialised
 * weights, every variant seeing the same batches; the last partial batch of an epoch is trained as a
 * smaller step (60 000 = 117 x 512 + 96), where the write-up padded it by repeating samples
 * (docs/study-cnn.md). Per epoch: time, samples/s, training loss, test accuracy (series); per case:
 * the write-up's Table I columns as mean and spread over the repetitions (finish()).
 * The check (before any timed run, check.c) takes check_steps teacher-forced steps against the double
 * reference (kernels/cnn/cnn_ref.c), momentum included.
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <speedlab/prof.h>

#include "cnn_study.h"
#include "sl_config.h"
#include "stats.h"
#if CNN_DEVICE
#include "cnn/cnn_cuda.h"
#endif

/* The write-up's settings (SGD momentum 0.9, lr 0.01, batch 512, 10 epochs). naive_rows keeps the
 * whole naive case (check and 3 repetitions) near a minute on a 2-vCPU machine (docs/study-cnn.md). */
static const sl_param params[] = {
    {"epochs", "10", "training epochs (the write-up: 10)", SL_INT(1, 100000)},
    {"lr", "0.01", "SGD learning rate, constant (the write-up: 0.01)", SL_REAL(1e-30, 1e30)},
    {"momentum", "0.9", "SGD momentum, PyTorch's form: V = mu V + G, P -= lr V (the write-up: 0.9)", SL_REAL(0, 0.9999999)},
    {"naive_epochs", "1", "epochs for the naive variant (it is slow; its records say they are reduced)", SL_INT(1, 100000)},
    {"naive_rows", "20000", "training rows per epoch for the naive variant (0 = all; fewer: reduced)", SL_INT(0, 2147483647)},
    {"check_steps", "4", "teacher-forced SGD steps checked against double precision before timing (check.c)", SL_INT(1, 1000000)},
    {"train_rows", "0", "training rows per epoch (0 = all; fewer marks the case reduced)", SL_INT(0, 2147483647)},
    {"graph", "0", "cuda and cudnn: 1 captures each training step as a CUDA graph (CPU variants ignore it)", SL_INT(0, 1)},
    {"spans", "1", "cuda, cudnn: 1 times every step's copies and kernels with CUDA events (the record's "
                   "phases, the epoch region's device time); 0 records no phases, for step times free "
                   "of the events' cost (CPU variants ignore it)", SL_INT(0, 1)},
};
static const long sizes[] = {512};
static const long quick_sizes[] = {512};
/* The batch-size sweep (seed 003, part 3), run only when named: --sizes 16,32,64,128,256,512,1024. */
static const long sweep_sizes[] = {16, 32, 64, 128, 256, 512, 1024};

#define QUICK_ROWS 3000 /* --quick: training rows per epoch (5 steps of 512 and one of 440), one epoch */
#define QUICK_TEST 2000 /* --quick: test rows */

static void teardown(void *vs)
{
    cnn_state *s = vs;
    if (!s)
        return;
#if CNN_DEVICE
    cnn_dev_release(s);
#endif
    idx_set_free(&s->train);
    idx_set_free(&s->test);
    free(s->P0), free(s->P), free(s->G), free(s->V), free(s->ext_update), free(s->wsblock), free(s->X), free(s->argmax);
    free(s->y), free(s->perm), free(s->eval_idx);
    train_series_free(&s->series);
    free(s);
}

/* The runner's data_missing hook: only asked when no --data was given. */
static int data_missing(const sl_opts *o, char *why, size_t n)
{
    (void)o;
    return train_mnist_missing("cnn", why, n);
}

static int load_data(cnn_state *s, const sl_opts *o, sl_error *err)
{
    if (train_load_mnist("cnn", "conv 8 - pool - conv 16 - pool - 128 - 10", 28, o, &s->train, &s->test, err) != 0)
        return -1;
    if (cnn_dims_init(&s->dims, s->train.rows, s->train.cols) != 0) {
        sl_error_set(err, "cnn: %s: images are %dx%d; the two conv + pool stages need at least 10x10",
                     train_mnist_dir(o), s->train.rows, s->train.cols);
        return -1;
    }
    return 0;
}

/* The --param values as given, before any is narrowed to the state's int or float. */
typedef struct cnn_params {
    long epochs, naive_epochs, naive_rows, check_steps, train_rows, graph, spans;
    double lr, momentum;
} cnn_params;

/* The first parameter out of range, named with its value and what would be right; 0 when none is.
 * Checked as given (long, double), so that a value past an int or a float is refused, not wrapped. */
static int bad_param(const cnn_params *p, sl_error *err)
{
    const char *name = NULL, *want = NULL;
    char got[64] = "";
    if (p->epochs < 1 || p->epochs > INT_MAX)
        name = "epochs", want = "an integer from 1 to 2147483647", snprintf(got, sizeof got, "%ld", p->epochs);
    else if (!(p->lr > 0 && (float)p->lr > 0 && isfinite((float)p->lr)))
        name = "lr", want = "a number > 0 that a float holds (1e-38 to 3e38)", snprintf(got, sizeof got, "%g", p->lr);
    else if (!(p->momentum >= 0 && (float)p->momentum < 1))
        name = "momentum", want = "a number in [0, 1) (as a float)", snprintf(got, sizeof got, "%g", p->momentum);
    else if (p->naive_epochs < 1 || p->naive_epochs > INT_MAX)
        name = "naive_epochs", want = "an integer from 1 to 2147483647",
        snprintf(got, sizeof got, "%ld", p->naive_epochs);
    else if (p->naive_rows < 0)
        name = "naive_rows", want = "an integer >= 0 (0 = all)", snprintf(got, sizeof got, "%ld", p->naive_rows);
    else if (p->check_steps < 1 || p->check_steps > INT_MAX)
        name = "check_steps", want = "an integer from 1 to 2147483647",
        snprintf(got, sizeof got, "%ld", p->check_steps);
    else if (p->train_rows < 0)
        name = "train_rows", want = "an integer >= 0 (0 = all)", snprintf(got, sizeof got, "%ld", p->train_rows);
    else if (p->graph != 0 && p->graph != 1)
        name = "graph", want = "0 or 1", snprintf(got, sizeof got, "%ld", p->graph);
    else if (p->spans != 0 && p->spans != 1)
        name = "spans", want = "0 or 1", snprintf(got, sizeof got, "%ld", p->spans);
    if (!name)
        return 0;
    sl_error_set(err, "cnn: --param %s=%s is out of range: want %s", name, got, want);
    return -1;
}

static int read_params(cnn_state *s, long batch, const sl_opts *o, sl_error *err)
{
    const sl_study *st = &sl_study_cnn;
    cnn_params p = {.epochs = sl_param_long(o, st, "epochs"), .naive_epochs = sl_param_long(o, st, "naive_epochs"),
                    .naive_rows = sl_param_long(o, st, "naive_rows"),
                    .check_steps = sl_param_long(o, st, "check_steps"),
                    .train_rows = sl_param_long(o, st, "train_rows"), .graph = sl_param_long(o, st, "graph"),
                    .spans = sl_param_long(o, st, "spans"),
                    .lr = sl_param_double(o, st, "lr"), .momentum = sl_param_double(o, st, "momentum")};
    if (bad_param(&p, err))
        return -1;
    if (batch < 1) {
        sl_error_set(err, "cnn: batch %ld out of range: want >= 1", batch);
        return -1;
    }
    s->epochs = (int)p.epochs, s->naive_epochs = (int)p.naive_epochs, s->check_steps = (int)p.check_steps;
    s->naive_rows = p.naive_rows, s->graph = (int)p.graph, s->spans = (int)p.spans, s->momentum = (float)p.momentum;
    s->quick = o->quick;
    long n = p.train_rows > 0 && p.train_rows < s->train.n ? p.train_rows : s->train.n;
    if (s->quick) {
        s->epochs = s->naive_epochs = 1;
        s->check_steps = s->check_steps < 2 ? s->check_steps : 2;
        n = n < QUICK_ROWS ? n : QUICK_ROWS;
    }
    if (n < batch) {
        sl_error_set(err, "cnn: %ld training rows%s, fewer than one batch of %ld: want a batch of at most %ld", n,
                     s->quick ? " (--quick)" : "", batch, n);
        return -1;
    }
    long steps = n / batch * s->epochs; /* the check walks full batches of the schedule */
    s->check_steps = s->check_steps < steps ? s->check_steps : (int)steps;
    s->cfg = (train_cfg){.epochs = s->epochs, .batch = (int)batch, .lr = (float)p.lr, .lr_final = (float)p.lr,
                         .seed = o->seed, .n_train = n, .partial_last = 1,
                         .n_test = s->quick && s->test.n > QUICK_TEST ? QUICK_TEST : s->test.n};
    s->threads = o->threads > 0 ? o->threads : 1;
    return 0;
}

static size_t bytes64(size_t n) { return (n + 63) / 64 * 64; } /* aligned_alloc wants a multiple */

static int alloc_state(cnn_state *s)
{
    int B = s->cfg.batch;
    size_t np = s->L.n, px = (size_t)s->train.rows * s->train.cols;
    s->P0 = malloc(np * sizeof(float));
    s->P = malloc(np * sizeof(float));
    s->G = malloc(np * sizeof(float));
    s->V = malloc(np * sizeof(float));
    s->wsblock = aligned_alloc(64, bytes64(cnn_ws_floats(&s->dims, B, s->threads) * sizeof(float)));
    s->argmax = malloc(cnn_ws_argmax_bytes(&s->dims, B));
    s->X = aligned_alloc(64, bytes64((size_t)B * px * sizeof(float)));
    s->y = malloc((size_t)B);
    s->perm = malloc((size_t)s->train.n * sizeof(int32_t));
    s->eval_idx = malloc((size_t)B * sizeof(int32_t));
    return s->P0 && s->P && s->G && s->V && s->wsblock && s->argmax && s->X && s->y && s->perm && s->eval_idx &&
                   train_series_alloc(&s->series, s->epochs) == 0
               ? 0
               : -1;
}

static void *setup(long batch, const sl_opts *o, sl_error *err)
{
    cnn_state *s = calloc(1, sizeof *s);
    if (!s || load_data(s, o, err) || read_params(s, batch, o, err)) {
        if (!s)
            sl_error_set(err, "cnn: out of memory");
        teardown(s);
        return NULL;
    }
    s->L = cnn_layout_of(&s->dims);
    if (alloc_state(s) != 0) {
        sl_error_set(err, "cnn: out of memory for the parameters and workspace (batch %ld)", batch);
        teardown(s);
        return NULL;
    }
    cnn_ws_bind(&s->ws, &s->dims, s->cfg.batch, s->threads, s->wsblock, s->argmax);
    cnn_init_he(&s->dims, s->P0, o->seed);
    return s;
}

static train_model model_of(cnn_state *s, int v)
{
#if CNN_DEVICE
    if (cnn_is_device(v))
        return cnn_dev_model(s);
#endif
    s->v = v;
    s->vthreads = sl_variant_threads(&sl_study_cnn.variants[v], s->threads);
    return cnn_cpu_model(s);
}

/* The schedule variant v trains: the study's, or naive's shorter one (naive_epochs, naive_rows). */
static train_cfg cfg_of(const cnn_state *s, int v)
{
    train_cfg cfg = s->cfg;
    if (sl_study_cnn.variants[v].traits & SL_REDUCED) {
        cfg.epochs = s->naive_epochs < cfg.epochs ? s->naive_epochs : cfg.epochs;
        if (s->naive_rows > 0 && s->naive_rows < cfg.n_train)
            cfg.n_train = s->naive_rows > cfg.batch ? s->naive_rows : cfg.batch;
    }
    return cfg;
}

/* The check (check.c) with variant v's model. */
static int check(void *vs, int v, double *rel_err, sl_error *err)
{
    cnn_state *s = vs;
    if (sl_study_cnn.variants[v].traits & SL_EXTERNAL) /* its first step, from baselines/cnn.py */
        return cnn_check_external(s, rel_err, err);
    train_model m = model_of(s, v);
    s->dev_per_step = 1;
    int rc = cnn_check(s, v, &m, rel_err, err);
    s->dev_per_step = 0;
    return rc;
}

static int prepare(void *vs, int v, sl_error *err)
{
    cnn_state *s = vs;
    s->nreps = 0;
    s->peak_dev_bytes = 0;
    s->launches_per_step = NAN;
#if CNN_DEVICE
    if (cnn_is_device(v))
        return cnn_dev_prepare(s, v, err);
#else
    (void)v, (void)err;
#endif
    return 0;
}

static void release(void *vs, int v)
{
    (void)vs, (void)v;
#if CNN_DEVICE
    cnn_dev_release(vs);
#endif
}

static double series_max(const double *x, int n)
{
    double m = -INFINITY;
    for (int i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m;
    return m;
}

/* One repetition: a whole training from P0 with zero momentum (cnn_set_weights). */
static int run(void *vs, int v, sl_record *rec, sl_error *err)
{
    cnn_state *s = vs;
    if (cnn_set_weights(s, v, s->P0, err) != 0)
        return -1;
    train_cfg cfg = cfg_of(s, v);
    train_model m = model_of(s, v);
    s->series.n = 0;
    s->rss_sum = 0, s->rss_n = 0;
    uint64_t t0 = prof_now_ns();
    if (train_run(&cfg, &m, s->train.n, s->perm, &s->series, rec, err) != 0)
        return -1;
    double secs = (double)(prof_now_ns() - t0) * 1e-9;
    if (!sl_record_is_timed(rec)) /* a warm-up run: not one of the repetitions */
        return 0;
    if (s->nreps < CNN_MAX_REPS) {
        const train_series *z = &s->series;
        s->reps[s->nreps] = (cnn_rep){.secs = secs, .epoch_s = train_mean(z->epoch_s, z->n),
                                      .sps = train_mean(z->samples_per_s, z->n),
                                      .acc = z->test_acc[z->n - 1], .best = series_max(z->test_acc, z->n),
                                      .rss = s->rss_n ? s->rss_sum / (double)s->rss_n : NAN};
    }
    s->nreps++; /* all timed runs; the first CNN_MAX_REPS are kept */
    return 0;
}

/* Work of one training run of cfg: every epoch's steps (the partial last one included) plus its
 * test-set forward. Bytes are the compulsory traffic if nothing stayed in cache between passes, an
 * estimate: per step the batch (bytes read, floats written once and read by conv1's forward and
 * backward), the activations (written once, read by the next layer and by their own backward: 3
 * passes) and their deltas (written and read: 2 passes), and seven passes over the parameters (P read
 * by forward and backward, G written and read, V read and written, P written); per
 * evaluation the test rows, the activations written and read once, and the parameters once per chunk. */
static void work_of(const cnn_dims *d, const train_cfg *cfg, double *flops, double *bytes)
{
    long full = cfg->n_train / cfg->batch, last = cfg->n_train % cfg->batch;
    double px = (double)d->conv1.h * d->conv1.w, np = (double)cnn_layout_of(d).n;
    size_t n[6];
    cnn_act_sizes(d, n);
    double act = (double)(n[0] + n[1] + n[2] + n[3] + n[4] + n[5]); /* every activation of a sample */
    double rows = (double)cfg->n_train, chunks = ceil((double)cfg->n_test / cfg->batch);
    double step_bytes = rows * (px * (1 + 3 * 4.0) + act * 5 * 4.0) + (double)(full + (last > 0)) * 7 * 4.0 * np;
    double eval_bytes = (double)cfg->n_test * (px * (1 + 2 * 4.0) + act * 2 * 4.0) + chunks * 4.0 * np;
    double train_flops = (double)full * cnn_step_flops(d, cfg->batch) + cnn_step_flops(d, (int)last);
    *flops = (double)cfg->epochs * (train_flops + cnn_forward_flops(d, (int)cfg->n_test));
    *bytes = (double)cfg->epochs * (step_bytes + eval_bytes);
}

/* Mean over the kept repetitions of one field (at offset off of cnn_rep), and its sample std when
 * there is more than one: NAME and NAME_std (or NAME_mean and NAME_std when mean_suffix). */
static void record_spread(sl_record *rec, const cnn_state *s, int kept, size_t off, const char *name,
                          int mean_suffix)
{
    double x[CNN_MAX_REPS];
    for (int i = 0; i < kept; i++)
        memcpy(&x[i], (const char *)&s->reps[i] + off, sizeof(double));
    sl_stats st;
    sl_stats_compute(x, kept, &st);
    char key[64];
    snprintf(key, sizeof key, mean_suffix ? "%s_mean" : "%s", name);
    sl_record_metric(rec, key, st.mean);
    if (kept > 1) {
        snprintf(key, sizeof key, "%s_std", name);
        sl_record_metric(rec, key, st.std);
    }
}

static void record_reduced(const cnn_state *s, const train_cfg *ran, sl_record *rec)
{
    char why[256];
    if (s->quick)
        snprintf(why, sizeof why, "--quick: one epoch on %ld training rows, %ld test rows", ran->n_train,
                 ran->n_test);
    else if (ran->epochs < s->epochs || ran->n_train < s->train.n) {
        int naive = ran->n_train < s->cfg.n_train || ran->epochs < s->epochs, rows = s->cfg.n_train < s->train.n;
        snprintf(why, sizeof why, "%d of %d epochs on %ld of %ld training rows (%s%s%s)", ran->epochs, s->epochs,
                 ran->n_train, s->train.n, rows ? "train_rows" : "", rows && naive ? ", " : "",
                 naive ? "naive_epochs, naive_rows" : "");
    } else
        return;
    sl_record_reduced(rec, why);
}

#if CNN_DEVICE
/* The device time of each phase of the last sampled step (every 8th), from CUDA events (cnn_cuda_phase_ms):
 * device_data_ms ... device_update_ms; a phase not measured (inside a graph) is left out. */
static void record_device_phases(cnn_state *s, sl_record *rec)
{
    static const char *const names[5] = {"device_data_ms", "device_forward_ms", "device_loss_ms",
                                         "device_backward_ms", "device_update_ms"};
    double ms[5];
    if (cnn_cuda_phase_ms(s->dev, ms) != 0)
        return;
    for (int i = 0; i < 5; i++)
        if (!isnan(ms[i]))
            sl_record_metric(rec, names[i], ms[i]);
}
#endif

/* The write-up's Table I columns over the timed repetitions (mean, and sample std with more than one),
 * and what the runs were. */
static void finish(void *vs, int v, sl_record *rec)
{
    cnn_state *s = vs;
    if (s->nreps == 0)
        return;
    int kept = train_reps_kept(s->nreps, CNN_MAX_REPS, "the metrics", rec);
    record_spread(rec, s, kept, offsetof(cnn_rep, secs), "train_time_s", 0); /* evaluations included */
    record_spread(rec, s, kept, offsetof(cnn_rep, epoch_s), "epoch_s", 1);   /* training steps only */
    record_spread(rec, s, kept, offsetof(cnn_rep, sps), "samples_per_s", 1);
    record_spread(rec, s, kept, offsetof(cnn_rep, acc), "test_acc", 0);      /* final epoch */
    record_spread(rec, s, kept, offsetof(cnn_rep, best), "test_acc_best", 0);
    record_spread(rec, s, kept, offsetof(cnn_rep, rss), "avg_rss_bytes", 0); /* each epoch's end (models.c) */
    train_cfg ran = cfg_of(s, v);
    sl_record_metric(rec, "epochs", ran.epochs);
    sl_record_metric(rec, "lr", ran.lr);
    sl_record_metric(rec, "momentum", s->momentum);
    sl_record_metric(rec, "train_rows", (double)ran.n_train);
    sl_record_metric(rec, "batch_rows_last", (double)(ran.n_train % ran.batch)); /* 0: none */
    double epoch_s = 0, steps = (double)(ran.n_train / ran.batch);
    for (int i = 0; i < kept; i++)
        epoch_s += s->reps[i].epoch_s / kept;
    double epoch_flops = steps * cnn_step_flops(&s->dims, ran.batch) +
                         cnn_step_flops(&s->dims, (int)(ran.n_train % ran.batch));
    sl_record_metric(rec, "epoch_gflops", epoch_flops / epoch_s * 1e-9);
    if (cnn_is_device(v)) {
        sl_record_metric(rec, "peak_gpu_bytes", s->peak_dev_bytes);
        sl_record_metric(rec, "launches_per_step", s->launches_per_step);
#if CNN_DEVICE
        record_device_phases(s, rec);
        const char *algos = cnn_cuda_algorithms(s->dev);
        if (algos && *algos) {
            char note[600];
            snprintf(note, sizeof note, "cuDNN's algorithms: %s", algos);
            sl_record_note(rec, note);
            /* cuDNN benchmark mode's price (seed 003, part 6): what choosing them cost, once, before
             * the timed epochs */
            sl_record_metric(rec, "algo_search_s", cnn_cuda_algo_search_s(s->dev));
            sl_record_metric(rec, "cudnn_find", cnn_row_of(v)->backend == CNN_CUDA_CUDNN);
        }
#endif
    }
    train_series_record(&s->series, rec);
    double f, b;
    work_of(&s->dims, &ran, &f, &b);
    sl_record_work(rec, f, b);
    record_reduced(s, &ran, rec);
}

/* The runner asks before the data is read: the standard 60000/10000 split at 28 x 28 and the epochs
 * parameter. finish() records the work the variant ran when it differs (naive's, another data set's). */
static void declared_work(long batch, const sl_opts *o, double *flops, double *bytes)
{
    cnn_dims d;
    cnn_dims_init(&d, 28, 28);
    train_cfg cfg = train_declared(&sl_study_cnn, batch, o, QUICK_ROWS, QUICK_TEST);
    work_of(&d, &cfg, flops, bytes);
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

/* Images as bytes (train and test), the shuffle, the workspace and batch at --threads, the check's
 * double buffers: about 125 MB for Fashion-MNIST at batch 512. */
static double footprint(long batch, const sl_opts *o)
{
    cnn_dims d;
    cnn_dims_init(&d, 28, 28);
    int B = (int)batch, t = o->threads > 0 ? o->threads : 1;
    double np = (double)cnn_layout_of(&d).n;
    double ws = 4.0 * (double)cnn_ws_floats(&d, B, t) + (double)cnn_ws_argmax_bytes(&d, B) + 4.0 * B * 784;
    double check = 8.0 * (4 * np + (double)B * 784 + (double)cnn_ref_ws_doubles(&d, B)) + 8.0 * np;
    return 70000.0 * 785 + 60000.0 * 4 + ws + 4.0 * 4 * np + check + 1e6;
}

/* What a row lacks: a CPU variant its four layer functions (blas's exist only with BLAS). */
static const char *incomplete(const sl_variant *v)
{
    const cnn_layers *k = &((const cnn_row *)v->kernels)->layers;
    int any = k->conv_forward || k->conv_backward || k->dense_forward || k->dense_backward;
    if (v->traits & SL_EXTERNAL) /* run by baselines/cnn.py (external.c) */
        return any ? "an SL_EXTERNAL row has no layer functions" : NULL;
    if (v->traits & SL_DEVICE)
        return any ? "an SL_DEVICE row runs the device model: no CPU layer functions" : NULL;
    if (!SL_HAVE_BLAS && v->requires && strcmp(v->requires, "blas") == 0)
        return NULL;
    if (!SL_HAVE_ONEDNN && v->requires && strcmp(v->requires, "onednn") == 0)
        return NULL;
    return k->conv_forward && k->conv_backward && k->dense_forward && k->dense_backward
               ? NULL
               : "a CPU row needs conv_forward, conv_backward, dense_forward and dense_backward";
}

#define CNN_CPU(name)                                                                                    \
    &(const cnn_row)                                                                                     \
    {                                                                                                    \
        .layers = {cnn_conv_forward_##name, cnn_conv_backward_##name, cnn_dense_forward_##name,          \
                   cnn_dense_backward_##name, NULL}                                                      \
    }
/* A CPU row whose convolutions are fused with their pooling (cnn_layers' conv_pool_forward). */
#define CNN_CPU_FUSED(name)                                                                              \
    &(const cnn_row)                                                                                     \
    {                                                                                                    \
        .layers = {cnn_conv_forward_##name, cnn_conv_backward_##name, cnn_dense_forward_##name,          \
                   cnn_dense_backward_##name, NULL, cnn_conv_pool_forward_##name,                        \
                   cnn_pool_conv_backward_##name}                                                        \
    }
#if SL_HAVE_BLAS
#define CNN_BLAS CNN_CPU(blas)
#else
#define CNN_BLAS &(const cnn_row){{0}} /* unavailable: the runner never runs it */
#endif
#if SL_HAVE_ONEDNN
#define CNN_ONEDNN                                                                                       \
    &(const cnn_row)                                                                                     \
    {                                                                                                    \
        .layers = {.conv_forward = cnn_conv_forward_onednn, .conv_backward = cnn_conv_backward_onednn,   \
                   .dense_forward = cnn_dense_forward_onednn, .dense_backward = cnn_dense_backward_onednn, \
                   .pool_forward = cnn_pool_forward_onednn, .pool_backward = cnn_pool_backward_onednn}   \
    }
#else
#define CNN_ONEDNN &(const cnn_row){.backend = 0} /* unavailable: the runner never runs it */
#endif

/* One row per variant: name, requirement, description, the variant it builds on, traits, functions. */
static const sl_variant variants[] = {
    {"naive", NULL, "direct loops for every layer, the maths as written, one thread (trains naive_epochs "
     "epochs on naive_rows rows)", NULL, SL_REDUCED, CNN_CPU(naive)},
    {"simd", NULL, "explicit vectors, fused bias + ReLU, one thread", "naive", 0, CNN_CPU_FUSED(simd)},
    {"omp", "openmp", "simd's work split across --threads OpenMP threads by batch slices", "simd", SL_THREADED,
     CNN_CPU_FUSED(omp)},
    {"blas", "blas", "the GEMM-shaped parts by cblas_sgemm (im2col for the convolutions)", "naive",
     SL_THREADED, CNN_BLAS},
    {"onednn", "onednn", "convolutions (bias + ReLU post-op, backward data and weights), max pooling and dense "
     "layers by oneDNN primitives, plain NCHW", "naive", SL_THREADED, CNN_ONEDNN},
#if CNN_DEVICE
    {"cuda", "cuda", "own CUDA kernels for every layer, data resident on the GPU (--param graph=1: each step "
     "one CUDA graph)", "omp", SL_DEVICE, &(const cnn_row){.backend = CNN_CUDA_OWN}},
    {"cudnn", "cudnn", "convolutions, pooling and activations by cuDNN (algorithms by cudnnFind*), dense "
     "layers by cuBLAS", "cuda", SL_DEVICE, &(const cnn_row){.backend = CNN_CUDA_CUDNN}},
    {"cudnn-heuristic", "cudnn", "cudnn with the algorithms cuDNN's heuristics rank first (cudnnGet*_v7, "
     "nothing timed: the framework default), against cudnn's cudnnFind* (benchmark mode)", "cuda", SL_DEVICE,
     &(const cnn_row){.backend = CNN_CUDA_CUDNN_HEURISTIC}},
#endif
    /* Framework baseline (docs/baselines.md): baselines/cnn.py on the same batches and weights */
    {"torch", "python:torch", "torch.nn (Conv2d, MaxPool2d, Linear), autograd, torch.optim.SGD with momentum "
     "(the write-up's PyTorch CPU code): eager, channels_last or torch.compile", NULL, SL_EXTERNAL,
     &(const cnn_row){.backend = 0}},
    /* GPU baselines: the framework's forms on its GPU (python:MODULE@DEVICE), beside cuda */
    {"torch-cuda", "python:torch@cuda", "torch.nn on the GPU (cuDNN): the torch forms with "
     "torch.backends.cudnn.benchmark off and on", NULL, SL_EXTERNAL | SL_DEVICE, &(const cnn_row){.backend = 0}},
};

const sl_study sl_study_cnn = {
    .name = "cnn",
    .title = "two-conv CNN trained by SGD with momentum on (Fashion-)MNIST, every layer backpropagated",
    .source = "seed 004",
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
    .external_inputs = cnn_external_inputs, .external_outputs = cnn_external_outputs,
    .setup = setup, .prepare = prepare, .run = run, .check = check, .finish = finish, .release = release,
    .teardown = teardown,
};
