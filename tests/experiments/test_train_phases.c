/*
 * tests/experiments/test_train_phases.c: the device timing of the training studies without a
 * device. train_run reads a device model's CUDA-event times through train_timer (train.h), the seam mlp's
 * cuda/cublas and cnn's cuda/cudnn plug mlp_cuda.h's and cnn_cuda.h's span calls into; here a fake
 * device gives known times, and the tests check:
 *   - the record's `phases` has one entry per timed repetition (a warm-up run, outside
 *     sl_record_timing, adds none), each the sum of the fake's spans over the repetition's epochs;
 *   - a run that fails records none, a CPU model (no timer) none, and a repetition whose spans could
 *     not be read an entry of nulls (so the arrays stay aligned with the repetitions);
 *   - the "epoch" region carries the steps' device time (h2d + kernel) and data ... update the sampled
 *     steps' phase times (a phase the sample lacks, NAN, adds nothing);
 *   - the spans are dropped as each run starts (the check's and warm-up's do not leak into a repetition).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include <speedlab/prof.h>

#include "record.h"
#include "train/train.h"

#define N_TRAIN 40
#define BATCH 10   /* 4 steps an epoch */
#define EPOCHS 3
static const double base[3] = {0.5, 10.0, 0.25}; /* h2d, kernel, d2h of one epoch of the first run */
static const double sample[TRAIN_STEP_PHASES] = {1.0, 2.0, NAN, 4.0, 5.0};

typedef struct fake_dev {
    int runs;          /* drops so far: the run in progress is runs (1-based) */
    int steps;         /* steps of the run in progress */
    int fail_step;     /* the run's step that fails (-1: none) */
    int fail_take;     /* a take of this kind fails (-1: none) */
    int polls;
    int leaked;        /* spans "recorded" before the first drop (the check): must never be read */
    train_timer timer;
} fake_dev;

/* Each take of kind k in run r gives base[k] * r: a run's sum is EPOCHS * base[k] * r. */
static int fake_take(void *ctx, int which, double *ms)
{
    fake_dev *d = ctx;
    if (which == d->fail_take) {
        *ms = NAN;
        return -1;
    }
    *ms = base[which] * d->runs + (d->leaked ? 1000.0 : 0.0);
    return 0;
}

static void fake_drop(void *ctx)
{
    fake_dev *d = ctx;
    d->runs++;
    d->steps = 0;
    d->leaked = 0;
}

/* A sample is ready at the first step of every epoch (every 4th poll: one poll a step). */
static int fake_poll(void *ctx, double ms[TRAIN_STEP_PHASES])
{
    fake_dev *d = ctx;
    if (d->polls++ % (N_TRAIN / BATCH) != 0)
        return 0;
    for (int i = 0; i < TRAIN_STEP_PHASES; i++)
        ms[i] = sample[i];
    return 1;
}

static int fake_step(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err)
{
    (void)idx, (void)B, (void)lr;
    fake_dev *d = ctx;
    static const char *const names[TRAIN_STEP_PHASES] = {"data", "forward", "loss", "backward", "update"};
    if (d->steps++ == d->fail_step) {
        sl_error_set(err, "fake: step %d failed", d->fail_step);
        return -1;
    }
    for (int i = 0; i < TRAIN_STEP_PHASES; i++) {
        prof_begin(names[i]);
        train_timer_region(&d->timer, i);
        prof_end(names[i]);
    }
    *loss = NAN; /* per epoch, as a device model */
    return 0;
}

static int fake_sync(void *ctx, sl_error *err)
{
    (void)ctx, (void)err;
    return 0;
}

static int fake_epoch_end(void *ctx, double *loss_sum, long *correct, sl_error *err)
{
    (void)ctx, (void)err;
    *loss_sum = 1.0;
    *correct = 5;
    return 0;
}

static train_model fake_model(fake_dev *d, int with_timer)
{
    d->timer = (train_timer){.ctx = d, .take = fake_take, .drop = fake_drop, .poll = fake_poll};
    return (train_model){.ctx = d, .step = fake_step, .sync = fake_sync, .epoch_end = fake_epoch_end,
                         .timer = with_timer ? &d->timer : NULL};
}

static int run_once(fake_dev *d, const train_model *m, sl_record *rec)
{
    static int32_t perm[N_TRAIN];
    train_cfg cfg = {.epochs = EPOCHS, .batch = BATCH, .lr = 0.1f, .lr_final = 0.1f, .seed = 7,
                     .n_train = N_TRAIN, .n_test = 10};
    train_series series = {0};
    assert_int_equal(train_series_alloc(&series, EPOCHS), 0);
    sl_error err = {{0}};
    int rc = train_run(&cfg, m, N_TRAIN, perm, &series, rec, &err);
    train_series_free(&series);
    (void)d;
    return rc;
}

/* The record's fields as the runner writes them; the caller frees. */
static json_t *merged(const sl_record *rec)
{
    json_t *out = json_object();
    json_object_set_new(out, "work", json_object());
    sl_record_merge(rec, out);
    return out;
}

static double at(json_t *phases, const char *name, size_t i)
{
    json_t *a = json_object_get(phases, name), *x = json_array_get(a, i);
    assert_non_null(x);
    return json_is_null(x) ? NAN : json_number_value(x);
}

static double region_device_ms(const char *path)
{
    prof_stats st;
    assert_int_equal(prof_get(path, &st), 0);
    return st.device_ms;
}

static void test_one_entry_per_timed_rep(void **state)
{
    (void)state;
    prof_reset();
    fake_dev d = {.fail_step = -1, .fail_take = -1, .leaked = 1};
    train_model m = fake_model(&d, 1);
    sl_record *rec = sl_record_new();
    assert_int_equal(run_once(&d, &m, rec), 0); /* the warm-up: not timed */
    sl_record_timing(rec, 1);
    assert_int_equal(run_once(&d, &m, rec), 0);
    assert_int_equal(run_once(&d, &m, rec), 0);
    sl_record_timing(rec, 0);
    json_t *out = merged(rec);
    json_t *ph = json_object_get(out, "phases");
    assert_non_null(ph);
    static const char *const names[3] = {"h2d_ms", "kernel_ms", "d2h_ms"};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(json_array_size(json_object_get(ph, names[k])), 2);
        for (int r = 0; r < 2; r++) /* runs 2 and 3: EPOCHS takes of base[k] * run */
            assert_true(fabs(at(ph, names[k], (size_t)r) - EPOCHS * base[k] * (r + 2)) < 1e-12);
    }
    /* "epoch": every run's steps' device time (h2d + kernel), warm-up included (it ran the regions) */
    assert_true(fabs(region_device_ms("epoch") - EPOCHS * (base[0] + base[1]) * (1 + 2 + 3)) < 1e-9);
    /* data ... update: one sample an epoch, 3 runs; loss's sample is NAN: no device time there */
    assert_true(fabs(region_device_ms("epoch/data") - 3 * EPOCHS * sample[0]) < 1e-12);
    assert_true(fabs(region_device_ms("epoch/forward") - 3 * EPOCHS * sample[1]) < 1e-12);
    assert_true(region_device_ms("epoch/loss") == 0.0);
    assert_true(fabs(region_device_ms("epoch/update") - 3 * EPOCHS * sample[4]) < 1e-12);
    /* the read-backs are in no region: evaluate carries none */
    assert_true(region_device_ms("evaluate") == 0.0);
    json_decref(out);
    sl_record_free(rec);
    prof_reset();
}

static void test_failed_run_records_none(void **state)
{
    (void)state;
    fake_dev d = {.fail_step = 5, .fail_take = -1};
    train_model m = fake_model(&d, 1);
    sl_record *rec = sl_record_new();
    sl_record_timing(rec, 1);
    assert_int_equal(run_once(&d, &m, rec), -1);
    json_t *out = merged(rec);
    assert_null(json_object_get(out, "phases"));
    json_decref(out);
    sl_record_free(rec);
    prof_reset();
}

static void test_cpu_model_records_none(void **state)
{
    (void)state;
    fake_dev d = {.fail_step = -1, .fail_take = -1};
    train_model m = fake_model(&d, 0);
    sl_record *rec = sl_record_new();
    sl_record_timing(rec, 1);
    assert_int_equal(run_once(&d, &m, rec), 0);
    json_t *out = merged(rec);
    assert_null(json_object_get(out, "phases"));
    assert_int_equal(d.runs, 0); /* nothing was asked of a timer */
    json_decref(out);
    sl_record_free(rec);
    prof_reset();
}

/* A take that cannot measure (a span left open, the log full) gives that repetition nulls, not a
 * partial sum, and the next repetition is measured again. */
static void test_unmeasured_rep_is_null(void **state)
{
    (void)state;
    prof_reset();
    fake_dev d = {.fail_step = -1, .fail_take = TRAIN_D2H};
    train_model m = fake_model(&d, 1);
    sl_record *rec = sl_record_new();
    sl_record_timing(rec, 1);
    assert_int_equal(run_once(&d, &m, rec), 0);
    d.fail_take = -1;
    assert_int_equal(run_once(&d, &m, rec), 0);
    json_t *out = merged(rec);
    json_t *ph = json_object_get(out, "phases");
    assert_non_null(ph);
    assert_int_equal(json_array_size(json_object_get(ph, "kernel_ms")), 2);
    assert_true(isnan(at(ph, "h2d_ms", 0)) && isnan(at(ph, "kernel_ms", 0)) && isnan(at(ph, "d2h_ms", 0)));
    assert_true(fabs(at(ph, "kernel_ms", 1) - EPOCHS * base[1] * 2) < 1e-12);
    /* every epoch's steps were still taken and read into the region, the unmeasured run's included */
    assert_true(fabs(region_device_ms("epoch") - EPOCHS * (base[0] + base[1]) * (1 + 2)) < 1e-9);
    json_decref(out);
    sl_record_free(rec);
    prof_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_entry_per_timed_rep),
        cmocka_unit_test(test_failed_run_records_none),
        cmocka_unit_test(test_cpu_model_records_none),
        cmocka_unit_test(test_unmeasured_rep_is_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
