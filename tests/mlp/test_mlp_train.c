/*
 * tests/mlp/test_mlp_train.c: the mlp study's training path.
 *  - the double-precision reference's gradient against central finite differences (tiny network);
 *  - naive's float gradient against the reference;
 *  - every CPU variant trained 300 SGD steps from the same weights on the same batches of a synthetic
 *    set: each step's loss within 1e-3 relative of the double-precision run (the study's tolerance) and
 *    within 1e-4 of naive's, and the loss falls;
 *  - the per-epoch shuffle is a deterministic permutation that changes per epoch;
 *  - the study through the sl_study interface on small IDX files it writes (check, run, record), and a
 *    missing data directory refused with a message that says how to get the data.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "mlp/mlp_kernels.h"
#include "record.h"
#include "sl_config.h"
#include "study.h"
#include "train/train.h"

#include "../data/idx_files.h"

#define STEP_TOL_REF 1e-3   /* float32 run vs double run, per step (sl_study_mlp.tolerance) */
#define STEP_TOL_NAIVE 1e-4 /* float32 variant vs naive float32, per step */


/* ---- gradients ----------------------------------------------------------------------------------- */
static void test_fd_gradient(void **state)
{
    (void)state;
    mlp_dims d = {6, 5, 4, 3};
    int B = 4;
    mlp_layout L = mlp_layout_of(&d);
    float Pf[256];
    double P[256], G[256], X[24], ws[512];
    uint8_t y[4] = {0, 2, 1, 2};
    assert_true(L.n <= 256 && mlp_ref_ws_doubles(&d, B) <= 512);
    mlp_init_he(&d, Pf, 3);
    uint32_t s = 9;
    for (size_t i = 0; i < L.n; i++) /* biases too, so no unit sits exactly at the ReLU kink */
        P[i] = Pf[i] + 0.05 * ((lcg(&s) % 1000) / 1000.0 - 0.5);
    for (int i = 0; i < 24; i++)
        X[i] = (lcg(&s) % 1000) / 1000.0;
    mlp_ref_loss_grad(&d, P, X, y, B, G, ws);
    double worst = 0, h = 1e-6;
    for (size_t i = 0; i < L.n; i++) {
        double keep = P[i];
        P[i] = keep + h;
        double up = mlp_ref_loss_grad(&d, P, X, y, B, NULL, ws);
        P[i] = keep - h;
        double down = mlp_ref_loss_grad(&d, P, X, y, B, NULL, ws);
        P[i] = keep;
        double fd = (up - down) / (2 * h);
        worst = fmax(worst, fabs(fd - G[i]) / fmax(1e-3, fabs(G[i])));
    }
    print_message("# finite differences vs backward: worst relative error %.2e over %zu parameters\n", worst, L.n);
    assert_true(worst < 1e-6);
}

static void test_naive_gradient_matches_reference(void **state)
{
    (void)state;
    mlp_dims d = {30, 17, 9, 10};
    int B = 7;
    mlp_layout L = mlp_layout_of(&d);
    float *P = malloc(L.n * sizeof *P), *G = malloc(L.n * sizeof *G), X[7 * 30];
    float *blk = malloc(mlp_ws_floats(&d, B) * sizeof *blk);
    double *Pd = malloc(L.n * sizeof *Pd), *Gd = malloc(L.n * sizeof *Gd), Xd[7 * 30];
    double *wsd = malloc(mlp_ref_ws_doubles(&d, B) * sizeof *wsd);
    uint8_t y[7] = {1, 9, 3, 0, 4, 4, 7};
    mlp_ws ws;
    mlp_ws_bind(&ws, &d, B, blk);
    mlp_init_he(&d, P, 11);
    uint32_t s = 5;
    for (int i = 0; i < B * d.n0; i++)
        Xd[i] = X[i] = (float)(lcg(&s) % 256) / 255.0f;
    for (size_t i = 0; i < L.n; i++)
        Pd[i] = P[i];
    mlp_forward_naive(&d, P, X, B, &ws, 1);
    float loss = mlp_loss(&d, y, B, &ws);
    mlp_backward_naive(&d, P, X, B, &ws, G, 1);
    double lref = mlp_ref_loss_grad(&d, Pd, Xd, y, B, Gd, wsd);
    assert_true(fabs(loss - lref) <= 1e-5 * fabs(lref));
    double gmax = 0, dmax = 0;
    for (size_t i = 0; i < L.n; i++)
        gmax = fmax(gmax, fabs(Gd[i])), dmax = fmax(dmax, fabs(G[i] - Gd[i]));
    print_message("# naive float gradient vs double: max |diff| / max |g| = %.2e\n", dmax / gmax);
    assert_true(dmax <= 1e-5 * gmax);
    free(P), free(G), free(blk), free(Pd), free(Gd), free(wsd);
}

/* ---- loss curves ---------------------------------------------------------------------------------- */
static idx_set synthetic(long n, int side, uint32_t seed) { return idx_files_stripes(n, side, seed, 100); }

typedef struct variant_fns {
    const char *name;
    mlp_forward_fn fw;
    mlp_backward_fn bw;
    int threads;
} variant_fns;

static const variant_fns cpu_variants[] = {
    {"naive", mlp_forward_naive, mlp_backward_naive, 1},
    {"simd", mlp_forward_simd, mlp_backward_simd, 1},
    {"omp", mlp_forward_omp, mlp_backward_omp, 2},
#if SL_HAVE_BLAS
    {"blas", mlp_forward_blas, mlp_backward_blas, 1},
#endif
};
#define N_CPU (int)(sizeof cpu_variants / sizeof *cpu_variants)

enum { STEPS = 300, BATCH = 32 };

static void train_float(const variant_fns *v, const mlp_dims *d, const idx_set *set, double *losses)
{
    mlp_layout L = mlp_layout_of(d);
    float *P = malloc(L.n * sizeof *P), *G = malloc(L.n * sizeof *G);
    float *X = malloc((size_t)BATCH * d->n0 * sizeof *X), *blk = aligned_alloc(64, mlp_ws_floats(d, BATCH) * 4);
    int32_t *perm = malloc((size_t)set->n * sizeof *perm);
    uint8_t y[BATCH];
    mlp_ws ws;
    mlp_ws_bind(&ws, d, BATCH, blk);
    mlp_init_he(d, P, 42);
    long per_epoch = set->n / BATCH;
    for (int t = 0; t < STEPS; t++) {
        if (t % per_epoch == 0)
            train_shuffle(perm, set->n, 42, (int)(t / per_epoch));
        train_gather(set, perm + (t % per_epoch) * BATCH, BATCH, X, y);
        v->fw(d, P, X, BATCH, &ws, v->threads);
        losses[t] = mlp_loss(d, y, BATCH, &ws);
        v->bw(d, P, X, BATCH, &ws, G, v->threads);
        mlp_sgd(P, G, L.n, 0.1f);
    }
    free(P), free(G), free(X), free(blk), free(perm);
}

static void train_double(const mlp_dims *d, const idx_set *set, double *losses)
{
    mlp_layout L = mlp_layout_of(d);
    float *Pf = malloc(L.n * sizeof *Pf), *Xf = malloc((size_t)BATCH * d->n0 * sizeof *Xf);
    double *P = malloc(L.n * sizeof *P), *G = malloc(L.n * sizeof *G);
    double *X = malloc((size_t)BATCH * d->n0 * sizeof *X), *ws = malloc(mlp_ref_ws_doubles(d, BATCH) * 8);
    int32_t *perm = malloc((size_t)set->n * sizeof *perm);
    uint8_t y[BATCH];
    mlp_init_he(d, Pf, 42);
    for (size_t i = 0; i < L.n; i++)
        P[i] = Pf[i];
    long per_epoch = set->n / BATCH;
    for (int t = 0; t < STEPS; t++) {
        if (t % per_epoch == 0)
            train_shuffle(perm, set->n, 42, (int)(t / per_epoch));
        train_gather(set, perm + (t % per_epoch) * BATCH, BATCH, Xf, y);
        for (int i = 0; i < BATCH * d->n0; i++)
            X[i] = Xf[i];
        losses[t] = mlp_ref_loss_grad(d, P, X, y, BATCH, G, ws);
        for (size_t i = 0; i < L.n; i++)
            P[i] -= 0.1f * G[i];
    }
    free(Pf), free(Xf), free(P), free(G), free(X), free(ws), free(perm);
}

static void test_variants_agree_step_by_step(void **state)
{
    (void)state;
    mlp_dims d = {196, 32, 32, 10}; /* 14x14 images: the study's shape, smaller, so sanitizers stay fast */
    idx_set set = synthetic(1000, 14, 77);
    double ref[STEPS], naive[STEPS], got[STEPS];
    train_double(&d, &set, ref);
    for (int v = 0; v < N_CPU; v++) {
        train_float(&cpu_variants[v], &d, &set, v == 0 ? naive : got);
        const double *l = v == 0 ? naive : got;
        double w_ref = 0, w_naive = 0;
        for (int t = 0; t < STEPS; t++) {
            w_ref = fmax(w_ref, fabs(l[t] - ref[t]) / ref[t]);
            w_naive = fmax(w_naive, fabs(l[t] - naive[t]) / naive[t]);
        }
        print_message("# %-5s: %d steps, loss %.4f -> %.4f, worst step vs double %.2e, vs naive %.2e\n",
                      cpu_variants[v].name, STEPS, l[0], l[STEPS - 1], w_ref, w_naive);
        if (!(w_ref <= STEP_TOL_REF && w_naive <= STEP_TOL_NAIVE))
            fail_msg("%s: loss curve off (vs double %.2e, tolerance %.0e; vs naive %.2e, tolerance %.0e)",
                     cpu_variants[v].name, w_ref, STEP_TOL_REF, w_naive, STEP_TOL_NAIVE);
        assert_true(l[STEPS - 1] < 0.5 * l[0]); /* it learns */
    }
    idx_set_free(&set);
}

static void test_shuffle(void **state)
{
    (void)state;
    enum { N = 1000 };
    int32_t a[N], b[N], c[N];
    train_shuffle(a, N, 5, 0);
    train_shuffle(b, N, 5, 0);
    train_shuffle(c, N, 5, 1);
    assert_memory_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    char seen[N] = {0};
    for (int i = 0; i < N; i++) {
        assert_true(a[i] >= 0 && a[i] < N && !seen[a[i]]);
        seen[a[i]] = 1;
    }
}

/* ---- the study through sl_study ---------------------------------------------------------------- */
static char dir[64];

static void write_split(const char *prefix, long n, uint32_t seed)
{
    idx_set st = synthetic(n, 28, seed);
    idx_files_write(dir, prefix, &st);
    idx_set_free(&st);
}

static int make_data(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/sl_mlp_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    write_split("train", 1100, 1); /* more than the sweep's largest batch, 1024, and not a multiple of it */
    write_split("t10k", 200, 2);
    return 0;
}

static int drop_data(void **state)
{
    (void)state;
    idx_files_remove(dir);
    return 0;
}

static void test_study_interface(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("mlp");
    assert_non_null(s);
    const char *names[] = {"epochs", "check_steps", "naive_epochs"}, *values[] = {"2", "30", "1"};
    sl_opts o = {.seed = 3, .threads = 2, .data_dir = dir, .n_params = 3, .param_names = names,
                 .param_values = values};
    sl_error err = {{0}};
    void *st = s->setup(s->sizes[0], &o, &err);
    if (!st)
        fail_msg("setup: %s", err.msg);
    for (int v = 0; v < s->n_variants; v++) {
        if (!can_run(&s->variants[v]))
            continue;
        double rel;
        sl_record *r = study_run(s, st, v, 1, 1, &rel); /* a warm-up, then one timed repetition */
        /* one timed repetition: the warm-up is not among the runs summarised (no spread of one) */
        assert_null(json_object_get(r->metrics, "test_acc_std"));
        int epochs = strcmp(s->variants[v].name, "naive") ? 2 : 1;
        json_t *acc = json_object_get(r->series, "test_acc");
        assert_int_equal(json_array_size(acc), epochs);
        assert_int_equal(json_array_size(json_object_get(r->series, "train_loss")), epochs);
        double a = json_number_value(json_object_get(r->metrics, "test_acc"));
        assert_true(a >= 0 && a <= 1);
        /* the peak RSS is the runner's record field (peak_rss_bytes), not a metric of the study */
        assert_null(json_object_get(r->metrics, "peak_rss_bytes"));
        /* naive trained fewer epochs than asked: its record says so */
        assert_true((epochs == 1) == (r->reduced_reason != NULL));
        sl_record_free(r);
        if (s->release)
            s->release(st, v);
    }
    s->teardown(st);
}

/* The batch-size sweep's ends (seed 003, part 3): batch 16, and 1024, above the evaluation chunk of
 * MLP_EVAL_CHUNK rows that once capped it, train and record with simd and omp at 2 threads. */
static void test_sweep_ends(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("mlp");
    const long batches[] = {16, 1024};
    const char *names[] = {"epochs", "check_steps"}, *values[] = {"1", "10"};
    sl_opts o = {.seed = 5, .threads = 2, .data_dir = dir, .n_params = 2, .param_names = names,
                 .param_values = values};
    for (int b = 0; b < 2; b++) {
        assert_true(in_sweep(s, batches[b])); /* what --sizes accepts */
        sl_error err = {{0}};
        void *st = s->setup(batches[b], &o, &err);
        if (!st)
            fail_msg("setup at batch %ld: %s", batches[b], err.msg);
        for (int v = 0; v < s->n_variants; v++) {
            const char *name = s->variants[v].name;
            if ((strcmp(name, "simd") && strcmp(name, "omp")) || !can_run(&s->variants[v]))
                continue;
            sl_record *r = sweep_run(s, st, v, batches[b]);
            double a = json_number_value(json_object_get(r->metrics, "test_acc"));
            json_t *sps = json_object_get(r->series, "samples_per_s");
            assert_true(a >= 0 && a <= 1);
            assert_int_equal(json_array_size(sps), 1);
            assert_true(json_number_value(json_array_get(sps, 0)) > 0);
            print_message("# %s batch %ld: test accuracy %.3f\n", name, batches[b], a);
            sl_record_free(r);
            if (s->release)
                s->release(st, v);
        }
        s->teardown(st);
    }
}

static void test_missing_data(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("mlp");
    sl_opts o = {.seed = 1, .threads = 1, .data_dir = "/nonexistent/mnist"};
    sl_error err = {{0}};
    assert_null(s->setup(s->sizes[0], &o, &err));
    print_message("# %s\n", err.msg);
    assert_non_null(strstr(err.msg, "/nonexistent/mnist"));
    assert_non_null(strstr(err.msg, "--data"));
}

static void test_image_shape_refused(void **state)
{
    (void)state;
    idx_files_shape_refused("mlp", 10);
    idx_files_shape_refused("mlp", 29);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_gradient),
        cmocka_unit_test(test_naive_gradient_matches_reference),
        cmocka_unit_test(test_variants_agree_step_by_step),
        cmocka_unit_test(test_shuffle),
        cmocka_unit_test(test_study_interface),
        cmocka_unit_test(test_sweep_ends),
        cmocka_unit_test(test_missing_data),
        cmocka_unit_test(test_image_shape_refused),
    };
    return cmocka_run_group_tests(tests, make_data, drop_data);
}
