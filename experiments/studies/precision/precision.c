/*
 * experiments/studies/precision/precision.c: reduced precision (seed 003, part 4). The mlp study's
 * network (784-128-128-10, ReLU, softmax cross-entropy), data (Fashion-MNIST), He initialisation from
 * the seed and SGD schedule (train_run), trained with its weights and activations stored in float32,
 * bfloat16 or float16 (kernels/precision: float32 master weights and update, float32 accumulation), so
 * that each row's epoch time and test accuracy after the same epochs can be set against fp32's. One
 * repetition is one whole training from the same weights, every row seeing the same batches.
 * The check (before timing, models.c) takes check_steps teacher-forced steps against the double
 * reference; the tolerance admits bf16's rounding, the record's rel_err says each row's.
 * The GPU rows (cuda-*) run the same training on the device with cublasGemmEx in their type and a
 * dynamic loss scaler (kernels/precision/prec_cuda.h); without a GPU they are unavailable like every GPU
 * row (they are compiled and linked in every CUDA build, but no measured run of them exists).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <speedlab/prof.h>

#include "prec_study.h"
#include "stats.h"
#if PREC_DEVICE
#include "precision/prec_cuda.h"
#endif

/* Ten epochs: enough for the rows' accuracies to settle past the first epochs' swings (the mlp's batch
 * sweep, docs/study-pipeline.md Part 3, shows where they are after 2), short enough that the CPU rows'
 * 2 repetitions each take minutes, not hours, on a 2-vCPU machine. */
static const sl_param params[] = {
    {"epochs", "10", "training epochs, the same for every row", SL_INT(1, 100000)},
    {"lr", "0.1", "SGD learning rate of the first epoch (the mlp study's)", SL_REAL(1e-30, 1e30)},
    {"lr_final", "0.01", "learning rate of the last epoch, linear in between", SL_REAL(1e-30, 1e30)},
    {"check_steps", "20", "SGD steps checked against double precision before timing (models.c)",
     SL_INT(1, 1000000)},
    {"train_rows", "0", "training rows per epoch (0 = all; fewer marks the case reduced)", SL_INT(0, 2147483647)},
};
static const long sizes[] = {64};
static const long quick_sizes[] = {64};

#define QUICK_ROWS 3000 /* --quick: one epoch on 3000 training rows, 2000 test rows */
#define QUICK_TEST 2000

static void teardown(void *vs)
{
    prec_state *s = vs;
    if (!s)
        return;
#if PREC_DEVICE
    prec_dev_release(s);
#endif
    idx_set_free(&s->train);
    idx_set_free(&s->test);
    free(s->P0); free(s->P); free(s->G); free(s->Pq); free(s->wsblock); free(s->X); free(s->y); free(s->perm);
    train_series_free(&s->series);
    free(s);
}

static int data_missing(const sl_opts *o, char *why, size_t n)
{
    (void)o;
    return train_mnist_missing("precision", why, n);
}

static int read_params(prec_state *s, long batch, const sl_opts *o, sl_error *err)
{
    const sl_study *st = &sl_study_precision;
    s->epochs = (int)sl_param_long(o, st, "epochs");
    s->check_steps = (int)sl_param_long(o, st, "check_steps");
    double lr = sl_param_double(o, st, "lr"), lr_final = sl_param_double(o, st, "lr_final");
    long rows = sl_param_long(o, st, "train_rows");
    if (s->epochs < 1 || s->check_steps < 1 || !(lr > 0) || !(lr_final > 0) || rows < 0) {
        sl_error_set(err, "precision: want epochs >= 1 (got %d), check_steps >= 1 (got %d), lr > 0 (got %g), "
                     "lr_final > 0 (got %g), train_rows >= 0 (got %ld)", s->epochs, s->check_steps, lr, lr_final, rows);
        return -1;
    }
    if (batch < 1 || batch > PREC_MAX_BATCH) {
        sl_error_set(err, "precision: batch %ld out of range: want 1-%d", batch, PREC_MAX_BATCH);
        return -1;
    }
    s->quick = o->quick;
    long n = rows > 0 && rows < s->train.n ? rows : s->train.n;
    if (s->quick) {
        s->epochs = 1;
        s->check_steps = s->check_steps < 20 ? s->check_steps : 20;
        n = n < QUICK_ROWS ? n : QUICK_ROWS;
    }
    if (n < batch) {
        sl_error_set(err, "precision: %ld training rows, fewer than one batch of %ld", n, batch);
        return -1;
    }
    long steps = n / batch * s->epochs;
    s->check_steps = s->check_steps < steps ? s->check_steps : (int)steps;
    s->cfg = (train_cfg){.epochs = s->epochs, .batch = (int)batch, .lr = (float)lr, .lr_final = (float)lr_final,
                         .seed = o->seed, .n_train = n,
                         .n_test = s->quick && s->test.n > QUICK_TEST ? QUICK_TEST : s->test.n};
    return 0;
}

static int alloc_buffers(prec_state *s, long batch)
{
    int rows = (int)(batch > PREC_EVAL_CHUNK ? batch : PREC_EVAL_CHUNK); /* a batch or an evaluation chunk */
    size_t np = s->L.n;
    s->P0 = malloc(np * sizeof(float));
    s->P = malloc(np * sizeof(float));
    s->G = malloc(np * sizeof(float));
    s->Pq = malloc(prec_qweights_elems(&s->dims) * sizeof(uint16_t));
    s->wsblock = aligned_alloc(64, prec_ws_bytes(&s->dims, rows));
    s->X = aligned_alloc(64, ((size_t)rows * s->dims.n0 * sizeof(float) + 63) / 64 * 64);
    s->y = malloc((size_t)rows);
    s->perm = malloc((size_t)s->train.n * sizeof(int32_t));
    if (!s->P0 || !s->P || !s->G || !s->Pq || !s->wsblock || !s->X || !s->y || !s->perm ||
        train_series_alloc(&s->series, s->epochs))
        return -1;
    prec_ws_bind(&s->ws, &s->dims, rows, s->wsblock);
    return 0;
}

static void *setup(long batch, const sl_opts *o, sl_error *err)
{
    prec_state *s = calloc(1, sizeof *s);
    if (!s) {
        sl_error_set(err, "precision: out of memory");
        return NULL;
    }
    if (train_load_mnist("precision", "784-128-128-10", 28, o, &s->train, &s->test, err) || read_params(s, batch, o, err)) {
        teardown(s);
        return NULL;
    }
    s->dims = (mlp_dims){s->train.rows * s->train.cols, 128, 128, 10};
    s->L = mlp_layout_of(&s->dims);
    if (alloc_buffers(s, batch) != 0) {
        sl_error_set(err, "precision: out of memory for the parameters and workspace");
        teardown(s);
        return NULL;
    }
    mlp_init_he(&s->dims, s->P0, o->seed);
    return s;
}

/* Row v's model: the CPU one over its kernels, or the device one. */
static train_model model_of(prec_state *s, int v)
{
    s->v = v;
#if PREC_DEVICE
    if (prec_is_device(v))
        return prec_dev_model(s);
#endif
    return prec_cpu_model(s);
}

static int check(void *vs, int v, double *rel_err, sl_error *err)
{
    prec_state *s = vs;
    train_model m = model_of(s, v);
    s->dev_per_step = 1;
    int rc = prec_check(s, v, &m, rel_err, err);
    s->dev_per_step = 0;
    return rc;
}

static int prepare(void *vs, int v, sl_error *err)
{
    prec_state *s = vs;
    s->nreps = 0;
    s->peak_dev_bytes = 0;
#if PREC_DEVICE
    if (prec_is_device(v))
        return prec_dev_prepare(s, v, err);
#else
    if (prec_is_device(v)) { /* never: such a row requires cublas, which this build lacks */
        sl_error_set(err, "precision: %s needs a build with cuBLAS", sl_study_precision.variants[v].name);
        return -1;
    }
#endif
    return 0;
}

static void release(void *vs, int v)
{
    (void)v;
#if PREC_DEVICE
    prec_dev_release(vs);
#else
    (void)vs;
#endif
}

static int run(void *vs, int v, sl_record *rec, sl_error *err)
{
    prec_state *s = vs;
    train_model m = model_of(s, v);
#if PREC_DEVICE
    if (prec_is_device(v) && prec_cuda_set_params(s->dev, s->P0) != 0) {
        sl_error_set(err, "precision: %s", prec_cuda_error(s->dev));
        return -1;
    }
#endif
    memcpy(s->P, s->P0, s->L.n * sizeof(float));
    s->series.n = 0;
    uint64_t t0 = prof_now_ns();
    if (train_run(&s->cfg, &m, s->train.n, s->perm, &s->series, rec, err) != 0)
        return -1;
    double secs = (double)(prof_now_ns() - t0) * 1e-9;
    if (!sl_record_is_timed(rec)) /* a warm-up run: not one of the repetitions */
        return 0;
    if (s->nreps < PREC_MAX_REPS) {
        const train_series *se = &s->series;
        prec_rep *r = &s->reps[s->nreps];
        *r = (prec_rep){.secs = secs, .epoch_s = train_mean(se->epoch_s, se->n),
                        .sps = train_mean(se->samples_per_s, se->n), .acc = se->test_acc[se->n - 1], .best = 0};
        for (int e = 0; e < se->n; e++)
            r->best = se->test_acc[e] > r->best ? se->test_acc[e] : r->best;
    }
    s->nreps++;
    return 0;
}

/* Mean over the kept repetitions of one field, and its sample std with more than one. */
static void record_spread(sl_record *rec, const prec_state *s, int kept, size_t off, const char *mean_key,
                          const char *std_key)
{
    double x[PREC_MAX_REPS];
    for (int i = 0; i < kept; i++)
        memcpy(&x[i], (const char *)&s->reps[i] + off, sizeof(double));
    sl_stats st;
    sl_stats_compute(x, kept, &st);
    sl_record_metric(rec, mean_key, st.mean);
    if (kept > 1)
        sl_record_metric(rec, std_key, st.std);
}

/* Bytes of the weights and the stored activations (input, a1, a2) of one step, in the row's storage:
 * what the storage type halves (the float32 logits, deltas and gradient are the same in every row). */
static double step_storage_bytes(const prec_state *s, int bits)
{
    const mlp_dims *d = &s->dims;
    double acts = (double)s->cfg.batch * (d->n0 + d->n1 + d->n2);
    return ((double)s->L.n + acts) * bits / 8;
}

static void finish(void *vs, int v, sl_record *rec)
{
    prec_state *s = vs;
    if (s->nreps == 0)
        return;
    const prec_kernels *k = prec_kernels_of(v);
    int kept = train_reps_kept(s->nreps, PREC_MAX_REPS, "the metrics", rec);
    record_spread(rec, s, kept, offsetof(prec_rep, secs), "train_time_s", "train_time_s_std");
    record_spread(rec, s, kept, offsetof(prec_rep, epoch_s), "epoch_s_mean", "epoch_s_std");
    record_spread(rec, s, kept, offsetof(prec_rep, sps), "samples_per_s_mean", "samples_per_s_std");
    record_spread(rec, s, kept, offsetof(prec_rep, acc), "test_acc", "test_acc_std");
    record_spread(rec, s, kept, offsetof(prec_rep, best), "test_acc_best", "test_acc_best_std");
    sl_record_metric(rec, "epochs", s->series.n);
    sl_record_metric(rec, "lr", s->cfg.lr);
    sl_record_metric(rec, "lr_final", train_lr(&s->cfg, s->series.n - 1));
    sl_record_metric(rec, "train_rows", (double)s->cfg.n_train);
    sl_record_metric(rec, "storage_bits", k->bits);
    sl_record_metric(rec, "step_storage_bytes", step_storage_bytes(s, k->bits));
    char note[128];
    snprintf(note, sizeof note, "storage: %s", k->storage); /* the report's precision column reads it */
    sl_record_note(rec, note);
    if (!prec_is_device(v)) { /* what the CPU offered and which path ran (the report prints both) */
        char line[256];
        const char *name = sl_study_precision.variants[v].name;
        snprintf(line, sizeof line, "path: %s", !strcmp(name, "fp32")     ? "float32 FMA (the mlp's simd kernels)"
                                                : !strcmp(name, "bf16dp") ? "vdpbf16ps (AVX512_BF16) forward, "
                                                                            "conversions to float32 backward"
                                                                          : prec_path_name(prec_row_path(v)));
        sl_record_note(rec, line);
        snprintf(line, sizeof line, "cpu offers: %s", prec_cpu_offers());
        sl_record_note(rec, line);
    }
#if PREC_DEVICE
    double scale;
    long skipped;
    if (prec_is_device(v) && prec_dev_scaler(s, &scale, &skipped) == 0) {
        sl_record_metric(rec, "loss_scale", scale);     /* at the end of the last run */
        sl_record_metric(rec, "skipped_steps", skipped); /* over every run since prepare, check included */
        sl_record_metric(rec, "peak_gpu_bytes", s->peak_dev_bytes);
    }
#endif
    train_series_record(&s->series, rec);
    if (s->quick)
        sl_record_reduced(rec, "--quick: one epoch on 3000 training rows, 2000 test rows");
    else if (s->cfg.n_train < s->train.n) {
        snprintf(note, sizeof note, "%ld of %ld training rows per epoch (train_rows)", s->cfg.n_train, s->train.n);
        sl_record_reduced(rec, note);
    }
}

/* Work of one run: the mlp's (every epoch's steps plus a test-set forward); the bytes counted as
 * float32 traffic for every row, so that the rates compare the same work. */
static void declared_work(long batch, const sl_opts *o, double *flops, double *bytes)
{
    mlp_dims d = {784, 128, 128, 10};
    train_cfg cfg = train_declared(&sl_study_precision, batch, o, QUICK_ROWS, QUICK_TEST);
    double steps = (double)(cfg.n_train / batch), np = (double)mlp_layout_of(&d).n;
    *flops = cfg.epochs * (steps * mlp_step_flops(&d, (int)batch) + mlp_forward_flops(&d, (int)cfg.n_test));
    *bytes = cfg.epochs * (steps * ((double)batch * d.n0 * 13.0 + 20.0 * np) + (double)cfg.n_test * d.n0 * 9.0);
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

/* Images as bytes, the index, the weights in three copies plus the 16-bit one, the workspace. */
static double footprint(long batch, const sl_opts *o)
{
    (void)o;
    double rows = batch > PREC_EVAL_CHUNK ? (double)batch : PREC_EVAL_CHUNK;
    return 70000.0 * 785 + 60000.0 * 4 + 4.0 * 3 * 118282 + 2.0 * 2 * 118282 + rows * (784 * 6.0 + 1200 * 4.0) + 1e6;
}

static const char *incomplete(const sl_variant *v)
{
    const prec_kernels *k = v->kernels;
    if (!k->storage || (k->bits != 16 && k->bits != 32))
        return "a row needs .storage and .bits (16 or 32)";
    if (v->traits & SL_DEVICE)
        return k->forward ? "an SL_DEVICE row runs the device model: no CPU kernels" : NULL;
    if (!SL_HAVE_ONEDNN && v->requires && strcmp(v->requires, "onednn") == 0)
        return NULL; /* built without oneDNN: no kernels, the row is unavailable */
    return k->convert && k->forward && k->backward ? NULL : "a CPU row needs .convert, .forward and .backward";
}

#define PREC_CPU(name, type, nbits)                                                                  \
    &(const prec_kernels){.convert = prec_convert_##name, .forward = prec_forward_##name,               \
                          .backward = prec_backward_##name, .storage = type, .bits = nbits}
#if SL_HAVE_ONEDNN /* the oneDNN rows' kernels exist only with oneDNN */
#define PREC_ONEDNN(name, type, nbits) PREC_CPU(name, type, nbits)
#else
#define PREC_ONEDNN(name, type, nbits) &(const prec_kernels){.storage = type, .bits = nbits}
#endif
#define PREC_GPU(type, nbits, ct) &(const prec_kernels){.storage = type, .bits = nbits, .cuda_type = ct}
#if !PREC_DEVICE /* the GPU rows' types, for a build without cuBLAS (the rows are then unavailable) */
enum { PREC_CUDA_F32 = 0, PREC_CUDA_F16 = 1, PREC_CUDA_BF16 = 2 };
#endif

/* One row per variant: name, requirement, description, the variant it builds on, traits, functions. */
static const sl_variant variants[] = {
    {"fp32", NULL, "float32 weights and activations: the mlp's simd kernels (the reference)", NULL, 0,
     PREC_CPU(fp32, "fp32", 32)},
    {"bf16", NULL, "bf16 weights and activations; AVX512_BF16 vdpbf16ps where the CPU has it, else shift "
     "conversions and float32 FMA (the record's path)", "fp32", 0, PREC_CPU(bf16, "bf16", 16)},
    {"fp16", NULL, "fp16 weights and activations; the forward in AVX512_FP16 where the CPU has it, else F16C "
     "conversions and float32 FMA (the record's path)", "fp32", 0, PREC_CPU(fp16, "fp16", 16)},
    {"bf16dp", "avx512bf16", "bf16 storage, the forward alone by AVX512_BF16 _mm512_dpbf16_ps, the backward by "
     "conversions", "bf16", 0, PREC_CPU(bf16dp, "bf16", 16)},
    {"onednn-fp32", "onednn", "float32 by oneDNN matmul primitives (mlp's onednn kernels), one thread", "fp32", 0,
     PREC_ONEDNN(onednn_fp32, "fp32", 32)},
    {"onednn-bf16", "onednn", "bf16 storage, the products by oneDNN's bf16 matmul, float32 deltas as two bf16 halves",
     "onednn-fp32", 0, PREC_ONEDNN(onednn_bf16, "bf16", 16)},
    {"cuda-fp32", "cublas", "on the GPU: cublasGemmEx in float32 (no TF32), data resident", NULL, SL_DEVICE,
     PREC_GPU("fp32", 32, PREC_CUDA_F32)},
    {"cuda-fp16", "cublas", "cublasGemmEx fp16 inputs (tensor cores), fp32 compute, dynamic loss scaling", "cuda-fp32",
     SL_DEVICE, PREC_GPU("fp16", 16, PREC_CUDA_F16)},
    {"cuda-bf16", "cublas", "cublasGemmEx bf16 inputs (tensor cores), fp32 compute, dynamic loss scaling", "cuda-fp32",
     SL_DEVICE, PREC_GPU("bf16", 16, PREC_CUDA_BF16)},
};

const sl_study sl_study_precision = {
    .name = "precision",
    .title = "the mlp with bf16 / fp16 storage against fp32: epoch time and accuracy (seed 003, part 4)",
    .source = "seed 001's mlp; seed 003, part 4",
    .kind = SL_TRAINING,
    .size_name = "batch",
    .sizes = sizes, .n_sizes = 1, .quick_sizes = quick_sizes, .n_quick_sizes = 1,
    .baseline = "fp32",
    .tolerance = 1e-1, /* bf16: 3e-2 (8 significant bits), fp16 1.5e-2, fp32 2e-6; a wrong kernel: ~1 */
    .variants = variants, .n_variants = (int)(sizeof variants / sizeof *variants),
    .incomplete = incomplete,
    .params = params, .n_params = (int)(sizeof params / sizeof *params),
    .default_reps = 2,
    .flops = flops,
    .bytes = bytes,
    .footprint = footprint,
    .data_missing = data_missing,
    .setup = setup, .prepare = prepare, .run = run, .check = check, .finish = finish, .release = release,
    .teardown = teardown,
};
