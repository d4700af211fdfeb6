/*
 * fake_study.h: two tiny studies for the runner's tests, passed to sl_main as their own registry.
 *   fake: a trivial kernel ("good"), a variant that fails its check ("bad"), one that needs CUDA ("gpu"),
 *         a size (99) whose footprint cannot fit in memory: its setup aborts if the runner ever calls it.
 *         With SL_FAKE_NO_DATA set, its default data set is missing (data_missing), unless --data is given.
 *         "toy" is the recipe of docs/developing.md ("Add a variant") applied to it: one kernel function
 *         (fake_sum_threaded, standing for a kernel file) and one row, nothing else.
 *   slow: every repetition sleeps 30 ms, so a test can interrupt a run between records.
 *   trainer: a training-kind study whose repetition is TRAINER_EPOCHS "epochs" of 100 ms, each told to
 *         the runner (sl_record_progress) as mlp's are: long enough for the status line to be drawn.
 */
#ifndef FAKE_STUDY_H
#define FAKE_STUDY_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "study.h"

typedef struct fake_state {
    long n;
    float *x;
    double sum;
    int threads;      /* --threads */
    int threads_seen; /* what the last kernel call was given */
} fake_state;

/* The fake study's kernel signature, and what its rows' `kernels` point to. */
typedef double fake_kernel_fn(const float *x, long n, int threads, int *threads_seen);
typedef struct fake_kernels {
    fake_kernel_fn *sum;
} fake_kernels;

/* The kernels ("kernels/fake/"): a one-thread sum, and the toy variant's, which takes a thread count. */
static double fake_sum(const float *x, long n, int threads, int *threads_seen)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += x[i];
    *threads_seen = threads;
    return sum;
}

static double fake_sum_threaded(const float *x, long n, int threads, int *threads_seen)
{
    double sum = 0;
    for (long i = n - 1; i >= 0; i--) /* another order; the same exact sum of small integers */
        sum += x[i];
    *threads_seen = threads;
    return sum;
}

static double fake_flops(long n, const sl_opts *o) { (void)o; return 2.0 * (double)n; }
static double fake_bytes(long n, const sl_opts *o) { (void)o; return 4.0 * (double)n; }
static double fake_footprint(long n, const sl_opts *o)
{
    (void)o;
    return n == 99 ? 1e18 : 4.0 * (double)n; /* 1 EB: more than any machine has */
}

static int fake_data_missing(const sl_opts *o, char *why, size_t n)
{
    (void)o;
    if (!getenv("SL_FAKE_NO_DATA"))
        return 0;
    snprintf(why, n, "fake: no data in /nonexistent: pass --data DIR");
    return 1;
}

static void *fake_setup(long n, const sl_opts *o, sl_error *err)
{
    if (n == 99)
        abort(); /* the runner must refuse this size before setup */
    fake_state *s = calloc(1, sizeof *s);
    if (!s) {
        sl_error_set(err, "out of memory");
        return NULL;
    }
    s->n = n;
    s->threads = o->threads;
    s->x = malloc((size_t)n * sizeof *s->x);
    for (long i = 0; i < n; i++)
        s->x[i] = (float)(i + o->seed % 3);
    return s;
}

static const sl_study fake_study;

static int fake_run(void *st, int v, sl_record *rec, sl_error *err)
{
    (void)err;
    fake_state *s = st;
    const sl_variant *var = &fake_study.variants[v];
    const fake_kernels *k = var->kernels;
    s->sum = k->sum(s->x, s->n, sl_variant_threads(var, s->threads), &s->threads_seen);
    sl_record_note(rec, "fake note");
    return 0;
}

static int fake_check(void *st, int v, double *rel_err, sl_error *err)
{
    (void)st;
    (void)err;
    *rel_err = v == 1 ? 1.0 : 0.0; /* variant 1 ("bad") is always wrong */
    return 0;
}

static void fake_finish(void *st, int v, sl_record *rec)
{
    (void)v;
    sl_record_metric(rec, "sum", ((fake_state *)st)->sum);
    sl_record_metric(rec, "threads_seen", ((fake_state *)st)->threads_seen);
}

static void fake_teardown(void *st)
{
    fake_state *s = st;
    free(s->x);
    free(s);
}

static const long fake_sizes[] = {8, 16, 99};
static const long fake_quick[] = {4};
static const long fake_sweep[] = {32, 8}; /* 8 is also a size: --sizes names each once */
static const sl_variant fake_variants[] = {
    {"good", NULL, "sums the inputs", NULL, 0, &(const fake_kernels){fake_sum}},
    {"bad", NULL, "fails its check", "good", 0, &(const fake_kernels){fake_sum}},
    {"gpu", "cuda", "needs a CUDA device", "good", SL_DEVICE, &(const fake_kernels){fake_sum}},
    {"toy", NULL, "sums backwards, reads the thread count", "good", SL_THREADED,
     &(const fake_kernels){fake_sum_threaded}},
};
#define FAKE_N_VARIANTS (int)(sizeof fake_variants / sizeof *fake_variants)
static const sl_param fake_params[] = {{"scale", "2", "unused", SL_INT(0, 1000)}};

static const sl_study fake_study = {
    .name = "fake", .title = "a fake study", .source = "tests", .kind = SL_KERNEL, .size_name = "N",
    .sizes = fake_sizes, .n_sizes = 3, .quick_sizes = fake_quick, .n_quick_sizes = 1,
    .sweep_sizes = fake_sweep, .n_sweep_sizes = 2,
    .baseline = "good", .tolerance = 1e-3, .variants = fake_variants, .n_variants = FAKE_N_VARIANTS,
    .params = fake_params, .n_params = 1, .default_reps = 3,
    .flops = fake_flops, .bytes = fake_bytes, .footprint = fake_footprint,
    .data_missing = fake_data_missing,
    .setup = fake_setup, .run = fake_run, .check = fake_check, .finish = fake_finish,
    .teardown = fake_teardown,
};

static int slow_run(void *st, int v, sl_record *rec, sl_error *err)
{
    (void)v, (void)err;
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    fake_state *s = st;
    s->sum = fake_sum(s->x, s->n, 1, &s->threads_seen);
    sl_record_note(rec, "fake note");
    return 0;
}

static const long slow_sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
static const sl_variant slow_variants[] = {{"naive", NULL, "sleeps", NULL, 0, &(const fake_kernels){fake_sum}}};
static const sl_study slow_study = {
    .name = "slow", .title = "a slow study", .kind = SL_KERNEL, .size_name = "N",
    .sizes = slow_sizes, .n_sizes = 20, .baseline = "naive", .tolerance = 1e-3,
    .variants = slow_variants, .n_variants = 1, .default_reps = 2,
    .flops = fake_flops, .bytes = fake_bytes, .footprint = fake_footprint,
    .setup = fake_setup, .run = slow_run, .check = fake_check, .teardown = fake_teardown,
};

#define TRAINER_EPOCHS 4

static int trainer_run(void *st, int v, sl_record *rec, sl_error *err)
{
    (void)v, (void)err;
    fake_state *s = st;
    for (int e = 0; e < TRAINER_EPOCHS; e++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        sl_record_progress(rec, e + 1, TRAINER_EPOCHS, "epoch");
    }
    s->sum = fake_sum(s->x, s->n, 1, &s->threads_seen);
    return 0;
}

static const long trainer_sizes[] = {4};
static const sl_variant trainer_variants[] = {{"sgd", NULL, "sleeps per epoch", NULL, 0, &(const fake_kernels){fake_sum}}};
static const sl_study trainer_study = {
    .name = "trainer", .title = "a fake training study", .kind = SL_TRAINING, .size_name = "batch",
    .sizes = trainer_sizes, .n_sizes = 1, .baseline = "sgd", .tolerance = 1e-3,
    .variants = trainer_variants, .n_variants = 1, .default_reps = 1,
    .footprint = fake_footprint,
    .setup = fake_setup, .run = trainer_run, .check = fake_check, .finish = fake_finish,
    .teardown = fake_teardown,
};

static const sl_study *const fake_registry[] = {&fake_study, &slow_study, &trainer_study};
#define FAKE_N_REGISTRY (int)(sizeof fake_registry / sizeof *fake_registry)

#endif
