/*
 * tests/cnn/test_cnn_train.c: the cnn study's training path.
 *  - max pooling on a plane with known winners (ties, odd sizes), forward and backward, any threads;
 *  - the double reference's gradient against central finite differences on a tiny input (13 x 12
 *    images, so both pools drop a row or column), every parameter block;
 *  - naive's float gradient, through cnn_forward / cnn_loss / cnn_backward, against the reference;
 *  - every CPU variant of the study's table equal to naive (logits and every gradient block);
 *  - train_run's partial last batch (trained when asked, dropped otherwise);
 *  - the study through sl_study on small IDX files it writes: check, runs, the metrics finish()
 *    records, accuracy above chance on a learnable set; a bad --param refused, named.
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

#include "cnn/cnn_kernels.h"
#include "record.h"
#include "sl_config.h"
#include "studies/cnn/cnn_study.h"
#include "study.h"
#include "train/train.h"

#include "../data/idx_files.h"

static double urand(uint32_t *s) { return (lcg(s) % 100000) / 100000.0; }

/* The parameter blocks, for per-block reports: name, offset, length. */
typedef struct block {
    const char *name;
    size_t off, n;
} block;

static int blocks_of(const cnn_layout *L, block out[8])
{
    const char *names[8] = {"conv1.w", "conv1.b", "conv2.w", "conv2.b", "dense1.w", "dense1.b", "dense2.w",
                            "dense2.b"};
    size_t off[9] = {L->c1w, L->c1b, L->c2w, L->c2b, L->d1w, L->d1b, L->d2w, L->d2b, L->n};
    for (int i = 0; i < 8; i++)
        out[i] = (block){names[i], off[i], off[i + 1] - off[i]};
    return 8;
}

/* ---- pooling ------------------------------------------------------------------------------------- */
static void test_pool_known_argmax(void **state)
{
    (void)state;
    /* one 5 x 5 plane: 2 x 2 windows at rows 0-1 and 2-3, columns 0-1 and 2-3; row 4 and column 4 are
     * dropped (their 9s must never win). Window (0,0) ties at 7: the first (index 0) wins. */
    const float x[25] = {7, 1, 2, 3, 9,
                         0, 7, 4, 1, 9,
                         5, 6, 0, 0, 9,
                         8, 2, 0, 3, 9,
                         9, 9, 9, 9, 9};
    cnn_pool p = {.c = 1, .h = 5, .w = 5};
    float y[4], dy[4] = {1, 2, 3, 4}, dx[25];
    uint8_t arg[4];
    cnn_pool_forward(&p, 1, x, y, arg, 1);
    const float want_y[4] = {7, 4, 8, 3};
    const uint8_t want_arg[4] = {0, 2, 2, 3};
    assert_memory_equal(y, want_y, sizeof y);
    assert_memory_equal(arg, want_arg, sizeof arg);
    for (int i = 0; i < 25; i++)
        dx[i] = -1; /* every input not a winner must become 0 */
    cnn_pool_backward(&p, 1, dy, arg, dx, 1);
    float want_dx[25] = {0};
    want_dx[0] = 1, want_dx[1 * 5 + 2] = 2, want_dx[3 * 5 + 0] = 3, want_dx[3 * 5 + 3] = 4;
    assert_memory_equal(dx, want_dx, sizeof dx);
}

static void test_pool_threads_agree(void **state)
{
    (void)state;
    enum { B = 5, C = 3, H = 11, W = 9, O = 5 * 4 };
    cnn_pool p = {.c = C, .h = H, .w = W};
    float x[B * C * H * W], y1[B * C * O], y2[B * C * O], dy[B * C * O], dx1[B * C * H * W], dx2[B * C * H * W];
    uint8_t a1[B * C * O], a2[B * C * O];
    uint32_t s = 3;
    for (int i = 0; i < B * C * H * W; i++)
        x[i] = (float)urand(&s);
    for (int i = 0; i < B * C * O; i++)
        dy[i] = (float)urand(&s);
    cnn_pool_forward(&p, B, x, y1, a1, 1);
    cnn_pool_forward(&p, B, x, y2, a2, 2);
    cnn_pool_backward(&p, B, dy, a1, dx1, 1);
    cnn_pool_backward(&p, B, dy, a2, dx2, 3);
    assert_memory_equal(y1, y2, sizeof y1);
    assert_memory_equal(a1, a2, sizeof a1);
    assert_memory_equal(dx1, dx2, sizeof dx1);
}

/* ---- gradients ------------------------------------------------------------------------------------ */
/* Weights He-drawn, every parameter (biases too) nudged so no unit sits at a ReLU kink; pixels random. */
static void tiny_problem(const cnn_dims *d, int B, uint32_t seed, double *P, double *X, uint8_t *y)
{
    cnn_layout L = cnn_layout_of(d);
    float *Pf = malloc(L.n * sizeof *Pf);
    cnn_init_he(d, Pf, seed);
    uint32_t s = seed;
    for (size_t i = 0; i < L.n; i++)
        P[i] = Pf[i] + 0.05 * (urand(&s) - 0.5);
    for (int i = 0; i < B * d->conv1.h * d->conv1.w; i++)
        X[i] = urand(&s);
    for (int b = 0; b < B; b++)
        y[b] = (uint8_t)(lcg(&s) % 10);
    free(Pf);
}

static void test_fd_gradient_every_block(void **state)
{
    (void)state;
    cnn_dims d;
    assert_int_equal(cnn_dims_init(&d, 13, 12), 0);
    assert_int_equal(d.pool2.h, 3); /* 13 -> 11 -> 5 -> 3 -> 1: both pools drop their last row */
    int B = 3;
    cnn_layout L = cnn_layout_of(&d);
    double *P = malloc(L.n * 8), *G = malloc(L.n * 8), X[3 * 13 * 12];
    double *ws = malloc(cnn_ref_ws_doubles(&d, B) * 8);
    uint8_t y[3];
    tiny_problem(&d, B, 7, P, X, y);
    cnn_ref_loss_grad(&d, P, X, y, B, G, ws);
    block bl[8];
    blocks_of(&L, bl);
    double h = 1e-6, worst_all = 0;
    for (int k = 0; k < 8; k++) {
        double worst = 0, gmax = 0;
        for (size_t i = bl[k].off; i < bl[k].off + bl[k].n; i++)
            gmax = fmax(gmax, fabs(G[i]));
        for (size_t i = bl[k].off; i < bl[k].off + bl[k].n; i++) {
            double keep = P[i];
            P[i] = keep + h;
            double up = cnn_ref_loss_grad(&d, P, X, y, B, NULL, ws);
            P[i] = keep - h;
            double down = cnn_ref_loss_grad(&d, P, X, y, B, NULL, ws);
            P[i] = keep;
            worst = fmax(worst, fabs((up - down) / (2 * h) - G[i]) / gmax);
        }
        print_message("# %-8s %5zu parameters: max |fd - g| / max |g| = %.2e (max |g| %.2e)\n", bl[k].name,
                      bl[k].n, worst, gmax);
        assert_true(gmax > 0); /* the block is reached by the gradient at all */
        worst_all = fmax(worst_all, worst);
    }
    assert_true(worst_all < 1e-6);
    free(P), free(G), free(ws);
}

/* A float gradient through the network (cnn_net.c) with variant layers k, and its loss and logits. */
typedef struct float_run {
    float loss, *z4, *G;
} float_run;

static float_run float_step(const cnn_dims *d, const cnn_layers *k, const float *P, const float *X,
                            const uint8_t *y, int B, int threads)
{
    cnn_layout L = cnn_layout_of(d);
    float *blk = aligned_alloc(64, (cnn_ws_floats(d, B, threads) * 4 + 63) / 64 * 64);
    uint8_t *argmax = malloc(cnn_ws_argmax_bytes(d, B));
    float_run r = {0, malloc((size_t)B * 10 * 4), malloc(L.n * 4)};
    cnn_ws ws;
    cnn_ws_bind(&ws, d, B, threads, blk, argmax);
    cnn_forward(d, k, P, X, B, &ws, threads, NULL, NULL);
    memcpy(r.z4, ws.z4, (size_t)B * 10 * 4);
    r.loss = cnn_loss(d, y, B, &ws);
    cnn_backward(d, k, P, X, B, &ws, r.G, threads, NULL, NULL);
    free(blk), free(argmax);
    return r;
}

static const cnn_layers naive_layers = {cnn_conv_forward_naive, cnn_conv_backward_naive, cnn_dense_forward_naive,
                                        cnn_dense_backward_naive, NULL, NULL, NULL, NULL, NULL};

/* max over blocks of max |a - b| / max |b| within the block */
static double block_error(const cnn_layout *L, const float *a, const double *b, const char **where)
{
    block bl[8];
    blocks_of(L, bl);
    double worst = 0;
    for (int k = 0; k < 8; k++) {
        double diff = 0, mag = 0;
        for (size_t i = bl[k].off; i < bl[k].off + bl[k].n; i++)
            diff = fmax(diff, fabs(a[i] - b[i])), mag = fmax(mag, fabs(b[i]));
        double e = mag > 0 ? diff / mag : diff;
        if (e >= worst)
            worst = e, *where = bl[k].name;
    }
    return worst;
}

static void test_naive_gradient_matches_reference(void **state)
{
    (void)state;
    cnn_dims d;
    assert_int_equal(cnn_dims_init(&d, 16, 15), 0);
    int B = 5;
    cnn_layout L = cnn_layout_of(&d);
    size_t nx = (size_t)B * 16 * 15;
    double *Pd = malloc(L.n * 8), *Gd = malloc(L.n * 8), *Xd = malloc(nx * 8);
    double *ws = malloc(cnn_ref_ws_doubles(&d, B) * 8);
    float *P = malloc(L.n * 4), *X = malloc(nx * 4);
    uint8_t y[5];
    tiny_problem(&d, B, 11, Pd, Xd, y);
    for (size_t i = 0; i < L.n; i++)
        P[i] = (float)Pd[i], Pd[i] = P[i]; /* the same (float) point for both */
    for (size_t i = 0; i < nx; i++)
        X[i] = (float)Xd[i], Xd[i] = X[i];
    double lref = cnn_ref_loss_grad(&d, Pd, Xd, y, B, Gd, ws);
    float_run r = float_step(&d, &naive_layers, P, X, y, B, 1);
    const char *where = "";
    double e = block_error(&L, r.G, Gd, &where);
    print_message("# naive float vs double: loss %.6f vs %.6f, worst gradient block %s: %.2e\n", r.loss, lref,
                  where, e);
    assert_true(fabs(r.loss - lref) <= 1e-5 * fabs(lref));
    assert_true(e <= 1e-5);
    free(Pd), free(Gd), free(Xd), free(ws), free(P), free(X), free(r.z4), free(r.G);
}

/* ---- every CPU variant of the study's table against naive --------------------------------------- */
static void variants_vs_naive(int h, int w, int B)
{
    cnn_dims d;
    assert_int_equal(cnn_dims_init(&d, h, w), 0);
    cnn_layout L = cnn_layout_of(&d);
    size_t nx = (size_t)B * h * w;
    float *P = malloc(L.n * 4), *X = malloc(nx * 4);
    double *G0 = malloc(L.n * 8);
    uint8_t *y = malloc((size_t)B);
    uint32_t s = 5;
    cnn_init_he(&d, P, 3);
    for (size_t i = 0; i < nx; i++)
        X[i] = (float)(lcg(&s) % 256) / 255.0f;
    for (int b = 0; b < B; b++)
        y[b] = (uint8_t)(lcg(&s) % 10);
    float_run ref = float_step(&d, &naive_layers, P, X, y, B, 1);
    for (size_t i = 0; i < L.n; i++)
        G0[i] = ref.G[i];
    const sl_study *st = sl_find_study("cnn");
    for (int v = 0; v < st->n_variants; v++) {
        if (!can_run(&st->variants[v]))
            continue;
        const cnn_layers *k = &((const cnn_row *)st->variants[v].kernels)->layers;
        if (k->conv_forward == cnn_conv_forward_naive)
            continue; /* naive itself */
        int threads = st->variants[v].traits & SL_THREADED ? 2 : 1;
        float_run r = float_step(&d, k, P, X, y, B, threads);
        double zmax = 0, zdiff = 0;
        for (int i = 0; i < B * 10; i++)
            zmax = fmax(zmax, fabs(ref.z4[i])), zdiff = fmax(zdiff, fabs(r.z4[i] - ref.z4[i]));
        const char *where = "";
        double e = block_error(&L, r.G, G0, &where);
        print_message("# %dx%d B=%d %-6s vs naive: logits %.2e, worst gradient block %s %.2e\n", h, w, B,
                      st->variants[v].name, zdiff / zmax, where, e);
        if (!(zdiff <= 1e-5 * zmax && e <= 1e-4))
            fail_msg("%s at %dx%d, B=%d: logits off by %.2e (tolerance 1e-5), gradient block %s by %.2e "
                     "(tolerance 1e-4)", st->variants[v].name, h, w, B, zdiff / zmax, where, e);
        free(r.z4), free(r.G);
    }
    free(P), free(X), free(G0), free(y), free(ref.z4), free(ref.G);
}

static void test_variants_match_naive(void **state)
{
    (void)state;
    variants_vs_naive(28, 28, 37); /* the study's images, an odd batch */
    variants_vs_naive(13, 12, 3);  /* odd planes: the pools drop rows */
}

/* ---- train_run's partial batch ------------------------------------------------------------------- */
typedef struct step_log {
    int n, B[8];
} step_log;

static int log_step(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err)
{
    (void)idx, (void)lr, (void)err;
    step_log *l = ctx;
    if (l->n < 8)
        l->B[l->n] = B;
    l->n++;
    *loss = 1.0;
    return 0;
}

static int no_eval(void *ctx, double *loss_sum, long *correct, sl_error *err)
{
    (void)ctx, (void)loss_sum, (void)err;
    *correct = 0;
    return 0;
}

static void test_partial_last_batch(void **state)
{
    (void)state;
    int32_t perm[1000];
    sl_error err = {{0}};
    for (int partial = 0; partial <= 1; partial++) {
        step_log l = {0};
        train_model m = {.ctx = &l, .step = log_step, .epoch_end = no_eval};
        train_cfg cfg = {.epochs = 1, .batch = 300, .lr = 0.1f, .lr_final = 0.1f, .seed = 1, .n_train = 1000,
                         .n_test = 10, .partial_last = partial};
        train_series z;
        assert_int_equal(train_series_alloc(&z, 1), 0);
        assert_int_equal(train_run(&cfg, &m, 1000, perm, &z, NULL, &err), 0);
        assert_int_equal(l.n, partial ? 4 : 3);
        assert_int_equal(l.B[2], 300);
        if (partial)
            assert_int_equal(l.B[3], 100);
        /* samples/s counts the rows stepped: 1000 or 900 */
        assert_true(fabs(z.samples_per_s[0] * z.epoch_s[0] - (partial ? 1000 : 900)) < 1e-6 * 1000);
        train_series_free(&z);
    }
}

/* ---- the study through sl_study ---------------------------------------------------------------- */
static char dir[64];

enum { SIDE = 28, N_TRAIN = 1200, N_TEST = 300, BATCH = 64 }; /* 1200 = 18 x 64 + 48 */

/* n images of 20 x 20: class c < 9 a bright 4 x 4 blob in cell c of a 3 x 3 grid, class 9 none, on
 * noise: what a two-conv network learns within a few epochs. */
static idx_set blobs(long n, uint32_t seed)
{
    idx_set st = {malloc((size_t)n * SIDE * SIDE), malloc((size_t)n), n, SIDE, SIDE};
    for (long i = 0; i < n; i++) {
        int c = (int)(lcg(&seed) % 10);
        st.labels[i] = (uint8_t)c;
        for (int r = 0; r < SIDE; r++)
            for (int q = 0; q < SIDE; q++) {
                int in = c < 9 && r >= 6 * (c / 3) + 1 && r < 6 * (c / 3) + 5 && q >= 6 * (c % 3) + 1 &&
                         q < 6 * (c % 3) + 5;
                st.images[(i * SIDE + r) * SIDE + q] = (uint8_t)((in ? 180 : 0) + lcg(&seed) % 60);
            }
    }
    return st;
}

static void write_split(const char *prefix, long n, uint32_t seed)
{
    idx_set st = blobs(n, seed);
    idx_files_write(dir, prefix, &st);
    idx_set_free(&st);
}

static int make_data(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/sl_cnn_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    write_split("train", N_TRAIN, 1);
    write_split("t10k", N_TEST, 2);
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
        fail_msg("metric %s missing from the record", name);
    return json_number_value(m);
}

/* What finish() must record after `reps` timed runs of `epochs` epochs (docs/study-cnn.md, "Metrics"). */
static void check_record(const sl_record *r, const char *variant, int reps, int epochs)
{
    const char *spread[] = {"train_time_s", "epoch_s", "samples_per_s", "test_acc", "test_acc_best"};
    for (int i = 0; i < 5; i++) {
        char mean[64], std[64];
        snprintf(mean, sizeof mean, i == 1 || i == 2 ? "%s_mean" : "%s", spread[i]);
        snprintf(std, sizeof std, "%s_std", spread[i]);
        assert_true(metric(r, mean) > 0);
        if ((json_object_get(r->metrics, std) != NULL) != (reps > 1)) /* a spread only over >1 runs */
            fail_msg("%s: %s %s with %d timed repetition(s)", variant, std, reps > 1 ? "missing" : "present", reps);
    }
    assert_true(metric(r, "test_acc_best") >= metric(r, "test_acc"));
    assert_true(metric(r, "avg_rss_bytes") > 1e6);
    assert_int_equal((int)metric(r, "epochs"), epochs);
    assert_true(fabs(metric(r, "lr") - 0.01) < 1e-6 && fabs(metric(r, "momentum") - 0.9) < 1e-6);
    assert_int_equal((int)metric(r, "batch_rows_last"), N_TRAIN % BATCH);
    assert_true(metric(r, "epoch_gflops") > 0);
    assert_null(json_object_get(r->metrics, "peak_gpu_bytes")); /* device variants only */
    const char *series[] = {"epoch", "train_loss", "test_acc", "epoch_s", "samples_per_s"};
    for (int i = 0; i < 5; i++)
        assert_int_equal(json_array_size(json_object_get(r->series, series[i])), epochs);
    /* the work run: every step, the partial batch included, and each epoch's test forward */
    cnn_dims d;
    cnn_dims_init(&d, SIDE, SIDE);
    double want = epochs * ((N_TRAIN / BATCH) * cnn_step_flops(&d, BATCH) + cnn_step_flops(&d, N_TRAIN % BATCH) +
                            cnn_forward_flops(&d, N_TEST));
    assert_true(fabs(r->work_flops - want) <= 1e-9 * want);
}

static void test_study_interface(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("cnn");
    assert_non_null(s);
    const char *names[] = {"epochs", "check_steps"}, *values[] = {"3", "4"};
    sl_opts o = {.seed = 3, .threads = 2, .data_dir = dir, .n_params = 2, .param_names = names,
                 .param_values = values};
    sl_error err = {{0}};
    void *st = s->setup(BATCH, &o, &err);
    if (!st)
        fail_msg("setup: %s", err.msg);
    for (int v = 0; v < s->n_variants; v++) {
        const sl_variant *row = &s->variants[v];
        if (!can_run(row))
            continue;
        int naive = (row->traits & SL_REDUCED) != 0, reps = strcmp(row->name, "simd") ? 1 : 2;
        double rel;
        sl_record *r = study_run(s, st, v, reps > 1, reps, &rel); /* the warm-up is not among the runs summarised */
        int epochs = naive ? 1 : 3;
        check_record(r, row->name, reps, epochs);
        double acc = metric(r, "test_acc");
        print_message("# %-6s check %.2e, test accuracy %.3f after %d epoch(s)\n", row->name, rel, acc, epochs);
        if (!naive && !(acc > 0.5)) /* chance is 0.1 */
            fail_msg("%s: test accuracy %.3f after 3 epochs on a learnable set (want > 0.5)", row->name, acc);
        assert_true((r->reduced_reason != NULL) == naive); /* naive trained fewer epochs: says so */
        sl_record_free(r);
        if (s->release)
            s->release(st, v);
    }
    s->teardown(st);
}

/* The batch-size sweep's ends (seed 003, part 3): batch 16 (whole batches: 1200 = 75 x 16) and 1024 (a
 * partial last batch of 176; the test set in one chunk of 300 < 1024), simd and omp at 2 threads: the
 * workspace is sized by the batch and the threads' slices. */
static void test_sweep_ends(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("cnn");
    const long batches[] = {16, 1024};
    const char *names[] = {"epochs", "check_steps"}, *values[] = {"1", "2"};
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
            assert_int_equal((int)metric(r, "batch_rows_last"), N_TRAIN % batches[b]);
            assert_true(metric(r, "samples_per_s_mean") > 0);
            double a = metric(r, "test_acc");
            assert_true(a >= 0 && a <= 1);
            print_message("# %s batch %ld: test accuracy %.3f\n", name, batches[b], a);
            sl_record_free(r);
            if (s->release)
                s->release(st, v);
        }
        s->teardown(st);
    }
}

static void refused(const char *name, const char *value, const char *want_text)
{
    const sl_study *s = sl_find_study("cnn");
    const char *names[] = {name}, *values[] = {value};
    sl_opts o = {.seed = 1, .threads = 1, .data_dir = dir, .n_params = 1, .param_names = names,
                 .param_values = values};
    sl_error err = {{0}};
    void *st = s->setup(BATCH, &o, &err);
    if (st) {
        s->teardown(st);
        fail_msg("--param %s=%s accepted", name, value);
    }
    print_message("# %s\n", err.msg);
    if (!strstr(err.msg, want_text) || !strstr(err.msg, "want"))
        fail_msg("--param %s=%s: the message \"%s\" does not name it (\"%s\") and what is right", name, value,
                 err.msg, want_text);
}

/* The shared batch gather (kernels/cnn/cnn_gather.c) at 1, 2 and 3 threads: the same floats and labels
 * as experiments/train's train_gather, bit for bit, on rows in a shuffled order. */
static void test_gather_matches_train_gather(void **state)
{
    (void)state;
    enum { N = 50, PX = 28 * 28, B = 37 };
    static uint8_t images[N * PX], labels[N];
    static float want[B * PX], got[B * PX];
    uint8_t ywant[B], ygot[B];
    int32_t idx[B];
    for (int i = 0; i < N * PX; i++)
        images[i] = (uint8_t)(i * 131u + 7u);
    for (int i = 0; i < N; i++)
        labels[i] = (uint8_t)(i % 10);
    for (int b = 0; b < B; b++)
        idx[b] = (int32_t)((b * 17 + 3) % N);
    idx_set set = {.images = images, .labels = labels, .n = N, .rows = 28, .cols = 28};
    train_gather(&set, idx, B, want, ywant);
    for (int t = 1; t <= 3; t++) {
        memset(got, 0xff, sizeof got);
        memset(ygot, 0xff, sizeof ygot);
        cnn_gather(images, labels, PX, idx, B, got, ygot, t);
        assert_memory_equal(got, want, sizeof want);
        assert_memory_equal(ygot, ywant, sizeof ywant);
    }
}

static void test_bad_params(void **state)
{
    (void)state;
    refused("epochs", "0", "epochs=0");
    refused("momentum", "1", "momentum=1");
    refused("graph", "2", "graph=2");
    refused("naive_rows", "-5", "naive_rows=-5");
    /* past an int: refused as given, not wrapped (4294967297 would wrap to 1) */
    refused("epochs", "4294967297", "epochs=4294967297");
    refused("graph", "4294967297", "graph=4294967297");
    refused("lr", "1e-50", "lr=1e-50"); /* 0 as a float */
}

static void test_image_shape_refused(void **state)
{
    (void)state;
    idx_files_shape_refused("cnn", 10);
    idx_files_shape_refused("cnn", 29);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_known_argmax),
        cmocka_unit_test(test_pool_threads_agree),
        cmocka_unit_test(test_gather_matches_train_gather),
        cmocka_unit_test(test_fd_gradient_every_block),
        cmocka_unit_test(test_naive_gradient_matches_reference),
        cmocka_unit_test(test_variants_match_naive),
        cmocka_unit_test(test_partial_last_batch),
        cmocka_unit_test(test_study_interface),
        cmocka_unit_test(test_sweep_ends),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_image_shape_refused),
    };
    return cmocka_run_group_tests(tests, make_data, drop_data);
}
