/*
 * tests/prefetch/test_prefetch.c: the prefetch study (seed 003, part 2, overlap).
 *  - the loader (experiments/train/loader.h): at depths 1, 2 and 4 every item of a job comes once, in
 *    order, with its own rows (the last one partial), whatever the producer's and consumer's pace; a job
 *    cancelled or destroyed mid-way returns without deadlock (and, under ASan, without a leak); a failed
 *    fill reaches the consumer as -1;
 *  - the flip-and-shift augmentation: deterministic per (seed, epoch, row), every flip and shift drawn,
 *    the fused gather equal to the double reference, a flip alone a mirror image;
 *  - the study through sl_study on small IDX files: every variant passes its check, records a
 *    wait_fraction in [0, 1] and trains to the same weights (the same test accuracy) as sync, with mlp and
 *    cnn, with and without augmentation; a wrong batch fails the check; bad --param values are refused.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "prefetch/prefetch_kernels.h"
#include "record.h"
#include "studies/prefetch/prefetch_study.h"
#include "study.h"
#include "train/loader.h"

#include "../data/idx_files.h"

/* ---- the loader ------------------------------------------------------------------------------- */

#define ROW 16 /* floats per test batch */

typedef struct job {
    long n;
    int last_rows; /* rows of the last item (a partial batch) */
    long fail_at;  /* the item whose fill fails, or -1 */
    int slow;      /* producer sleeps up to this many microseconds per item */
} job;

static void pause_us(int max, uint32_t *seed)
{
    if (max > 0) {
        struct timespec t = {0, (long)(lcg(seed) % (uint32_t)max) * 1000};
        nanosleep(&t, NULL);
    }
}

/* Item i: X[k] = i + k / 100, y[k] = i % 251, 8 rows (last_rows for the last item). */
static int fill_item(void *ctx, long i, float *X, uint8_t *y)
{
    job *j = ctx;
    static uint32_t seed = 7;
    pause_us(j->slow, &seed);
    if (i == j->fail_at)
        return -1;
    for (int k = 0; k < ROW; k++)
        X[k] = (float)i + (float)k / 100;
    y[0] = (uint8_t)(i % 251);
    return i == j->n - 1 ? j->last_rows : 8;
}

/* Takes every item of a started job in order, checking each, with the consumer sleeping up to slow us. */
static void take_all(loader *q, const job *j, int slow)
{
    uint32_t seed = 11;
    loader_batch b;
    for (long i = 0; i < j->n; i++) {
        assert_int_equal(loader_next(q, &b), 1);
        assert_int_equal(b.i, i);
        assert_int_equal(b.B, i == j->n - 1 ? j->last_rows : 8);
        assert_int_equal(b.y[0], i % 251);
        for (int k = 0; k < ROW; k++)
            assert_true(b.X[k] == (float)i + (float)k / 100);
        pause_us(slow, &seed);
    }
    assert_int_equal(loader_next(q, &b), 0); /* the job is over: no item twice */
}

static void loader_delivers_in_order(void **state)
{
    (void)state;
    static const int depths[] = {1, 2, 4};
    for (int d = 0; d < 3; d++)
        for (int pace = 0; pace < 3; pace++) { /* fast both, slow producer, slow consumer */
            job j = {.n = 200, .last_rows = 3, .fail_at = -1, .slow = pace == 1 ? 200 : 0};
            char why[128];
            loader *q = loader_create(depths[d], ROW, 8, fill_item, &j, why, sizeof why);
            assert_non_null(q);
            assert_int_equal(loader_depth(q), depths[d]);
            loader_start(q, j.n);
            take_all(q, &j, pace == 2 ? 200 : 0);
            assert_true(loader_busy_s(q) > 0);
            loader_start(q, j.n); /* a second job on the same ring starts from item 0 again */
            take_all(q, &j, 0);
            loader_destroy(q);
        }
}

static void loader_cancel_and_destroy_mid_job(void **state)
{
    (void)state;
    job j = {.n = 1000, .last_rows = 8, .fail_at = -1, .slow = 50};
    char why[128];
    loader *q = loader_create(2, ROW, 8, fill_item, &j, why, sizeof why);
    assert_non_null(q);
    loader_batch b;
    loader_start(q, j.n);
    for (int i = 0; i < 5; i++)
        assert_int_equal(loader_next(q, &b), 1);
    loader_cancel(q);
    assert_int_equal(loader_next(q, &b), 0); /* nothing left of the cancelled job */
    job k = {.n = 10, .last_rows = 1, .fail_at = -1};
    j = k;
    loader_start(q, j.n);
    take_all(q, &j, 0);
    j.n = 1000, j.slow = 50;
    loader_start(q, j.n);
    assert_int_equal(loader_next(q, &b), 1);
    loader_destroy(q); /* mid-job, the producer filling or waiting for a slot */
    loader_destroy(NULL);
}

static void loader_reports_failed_fill(void **state)
{
    (void)state;
    job j = {.n = 10, .last_rows = 8, .fail_at = 3};
    char why[128];
    loader *q = loader_create(4, ROW, 8, fill_item, &j, why, sizeof why);
    assert_non_null(q);
    loader_start(q, j.n);
    loader_batch b;
    for (int i = 0; i < 3; i++)
        assert_int_equal(loader_next(q, &b), 1);
    assert_int_equal(loader_next(q, &b), -1);
    assert_int_equal(loader_next(q, &b), 0); /* nothing is filled after the failure */
    loader_destroy(q);
}

/* ---- the augmentation ------------------------------------------------------------------------- */

static void augmentation_is_deterministic_and_matches_reference(void **state)
{
    (void)state;
    enum { N = 400, SIDE = 28, PX = SIDE * SIDE };
    idx_set st = idx_files_stripes(N, SIDE, 5, 100);
    int seen[2][2 * PF_MAX_SHIFT + 1][2 * PF_MAX_SHIFT + 1] = {{{0}}};
    int32_t idx[N];
    for (int i = 0; i < N; i++) {
        idx[i] = (int32_t)((i * 7) % N);
        pf_aug a = pf_aug_of(42, 3, idx[i]), b = pf_aug_of(42, 3, idx[i]);
        assert_memory_equal(&a, &b, sizeof a);
        assert_true(a.dx >= -PF_MAX_SHIFT && a.dx <= PF_MAX_SHIFT && a.dy >= -PF_MAX_SHIFT && a.dy <= PF_MAX_SHIFT);
        seen[a.flip][a.dx + PF_MAX_SHIFT][a.dy + PF_MAX_SHIFT]++;
    }
    for (int f = 0; f < 2; f++) /* all 50 combinations among 400 draws */
        for (int x = 0; x <= 2 * PF_MAX_SHIFT; x++)
            for (int y = 0; y <= 2 * PF_MAX_SHIFT; y++)
                assert_true(seen[f][x][y] > 0);
    int differ = 0; /* another epoch draws another augmentation for most rows */
    for (int i = 0; i < N; i++)
        differ += memcmp(&(pf_aug[1]){pf_aug_of(42, 3, i)}, &(pf_aug[1]){pf_aug_of(42, 4, i)}, sizeof(pf_aug)) != 0;
    assert_true(differ > N / 2);
    float *X = malloc(sizeof(float) * N * PX);
    double *R = malloc(sizeof(double) * N * PX);
    uint8_t y[N];
    pf_gather_flipshift(st.images, st.labels, SIDE, SIDE, idx, N, 42, 3, X, y);
    pf_ref_flipshift(st.images, SIDE, SIDE, idx, N, 42, 3, R);
    for (int i = 0; i < N; i++) {
        assert_int_equal(y[i], st.labels[idx[i]]);
        for (int k = 0; k < PX; k++)
            assert_true(fabs(X[i * PX + k] - R[i * PX + k]) < 1e-7);
        pf_aug a = pf_aug_of(42, 3, idx[i]);
        if (a.flip && a.dx == 0 && a.dy == 0) /* a mirror image, by hand */
            for (int r = 0; r < SIDE; r++)
                for (int c = 0; c < SIDE; c++)
                    assert_true(X[i * PX + r * SIDE + c] ==
                                (float)st.images[(size_t)idx[i] * PX + r * SIDE + SIDE - 1 - c] * (1.0f / 255.0f));
        if (a.dy > 0) /* the top rows come from outside the image */
            for (int c = 0; c < SIDE; c++)
                assert_true(X[i * PX + c] == 0.0f);
    }
    free(X), free(R), idx_set_free(&st);
}

/* ---- the study -------------------------------------------------------------------------------- */

static char dir[64];

static int make_data(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/sl_pf_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    idx_set tr = idx_files_stripes(700, 28, 1, 100), te = idx_files_stripes(150, 28, 2, 100);
    idx_files_write(dir, "train", &tr); /* 700 = 10 x 64 + 60: cnn trains a partial last batch */
    idx_files_write(dir, "t10k", &te);
    idx_set_free(&tr), idx_set_free(&te);
    return 0;
}

static int drop_data(void **state)
{
    (void)state;
    idx_files_remove(dir);
    return 0;
}

static double metric(const sl_record *r, const char *name)
{
    json_t *m = json_object_get(r->metrics, name);
    if (!m)
        fail_msg("no metric %s", name);
    return json_number_value(m);
}

/* Every variant of the study with model and augment, quick or 2 epochs: the check passes, wait_fraction
 * is a fraction, and every variant ends with sync's test accuracy (the same weights). */
static void run_study(const char *model, const char *augment, int quick)
{
    const sl_study *s = sl_find_study("prefetch");
    assert_non_null(s);
    const char *names[] = {"model", "augment", "epochs"}, *values[] = {model, augment, "2"};
    sl_opts o = {.seed = 3, .threads = 2, .quick = quick, .data_dir = dir, .n_params = 3, .param_names = names,
                 .param_values = values};
    sl_error err = {{0}};
    void *st = s->setup(s->sizes[0], &o, &err);
    if (!st)
        fail_msg("setup: %s", err.msg);
    double acc0 = NAN;
    for (int v = 0; v < s->n_variants; v++) {
        if (!can_run(&s->variants[v]))
            continue;
        double rel;
        sl_record *r = study_run(s, st, v, 1, 2, &rel);
        assert_true(rel >= 0 && rel <= s->tolerance); /* the check passed */
        double wf = metric(r, "wait_fraction");
        assert_true(wf >= 0 && wf <= 1);
        assert_true(fabs(metric(r, "compute_utilisation") - (1 - wf)) < 1e-12);
        assert_true(metric(r, "epoch_s_mean") > 0);
        assert_int_equal((int)metric(r, "epochs"), quick ? 1 : 2);
        int depth = ((const pf_row *)s->variants[v].kernels)->depth;
        assert_int_equal((int)metric(r, "depth"), depth);
        assert_int_equal(json_object_get(r->metrics, "loader_busy_fraction") != NULL, depth > 0);
        assert_int_equal(json_array_size(json_object_get(r->series, "wait_s")), quick ? 1 : 2);
        assert_true((r->reduced_reason != NULL) == (quick != 0));
        double acc = metric(r, "test_acc");
        if (isnan(acc0))
            acc0 = acc;
        assert_true(acc == acc0); /* the same batches in the same order: the same model */
        sl_record_free(r);
        s->release(st, v);
    }
    s->teardown(st);
}

static void study_mlp_quick(void **state) { (void)state; run_study("mlp", "none", 1); }
static void study_mlp_flipshift(void **state) { (void)state; run_study("mlp", "flipshift", 0); }
static void study_cnn_flipshift(void **state) { (void)state; run_study("cnn", "flipshift", 0); }

/* A batch that is not sync's fails the check's comparison: another epoch's augmentation, a wrong label. */
static void wrong_batch_fails_check(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("prefetch");
    const char *names[] = {"augment"}, *values[] = {"flipshift"};
    sl_opts o = {.seed = 3, .threads = 1, .data_dir = dir, .n_params = 1, .param_names = names,
                 .param_values = values};
    sl_error err = {{0}};
    pf_state *st = s->setup(64, &o, &err);
    assert_non_null(st);
    int32_t idx[64];
    for (int i = 0; i < 64; i++)
        idx[i] = i * 3;
    st->epoch = 0;
    pf_prepare_batch(st, 0, idx, 64, st->X, st->y);
    assert_true(pf_batch_error(st, idx, 64, st->X, st->y) < 1e-7);
    pf_prepare_batch(st, 1, idx, 64, st->X, st->y); /* epoch 1's flips and shifts where epoch 0's are due */
    assert_true(pf_batch_error(st, idx, 64, st->X, st->y) > s->tolerance);
    pf_prepare_batch(st, 0, idx, 64, st->X, st->y);
    st->y[5] = (uint8_t)((st->y[5] + 1) % 10);
    assert_true(pf_batch_error(st, idx, 64, st->X, st->y) == 1.0);
    s->teardown(st);
}

static void bad_params_refused(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("prefetch");
    static const struct {
        const char *name, *value, *want;
    } bad[] = {{"model", "rnn", "--param model=rnn: expected mlp or cnn"},
               {"augment", "rotate", "--param augment=rotate: expected none or flipshift"},
               {"epochs", "0", "--param epochs=0 is out of range: want an integer from 1 to"}};
    for (int i = 0; i < 3; i++) {
        sl_opts o = {.seed = 1, .threads = 1, .data_dir = dir, .n_params = 1, .param_names = &bad[i].name,
                     .param_values = &bad[i].value};
        sl_error err = {{0}};
        assert_null(s->setup(64, &o, &err));
        if (!strstr(err.msg, bad[i].want))
            fail_msg("error \"%s\" does not say \"%s\"", err.msg, bad[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loader_delivers_in_order),
        cmocka_unit_test(loader_cancel_and_destroy_mid_job),
        cmocka_unit_test(loader_reports_failed_fill),
        cmocka_unit_test(augmentation_is_deterministic_and_matches_reference),
        cmocka_unit_test(study_mlp_quick),
        cmocka_unit_test(study_mlp_flipshift),
        cmocka_unit_test(study_cnn_flipshift),
        cmocka_unit_test(wrong_batch_fails_check),
        cmocka_unit_test(bad_params_refused),
    };
    return cmocka_run_group_tests(tests, make_data, drop_data);
}
