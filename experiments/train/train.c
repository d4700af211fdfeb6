/*
 * experiments/train/train.c: the shared SGD epoch loop (see train.h).
 */
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <speedlab/prof.h>

#include "seeded_normal.h"
#include "sl_config.h"

int train_series_alloc(train_series *s, int epochs)
{
    s->n = 0;
    s->cap = epochs;
    double **a[] = {&s->epoch, &s->train_loss, &s->test_acc, &s->epoch_s, &s->samples_per_s};
    int ok = 1;
    for (int i = 0; i < 5; i++)
        ok &= (*a[i] = calloc((size_t)(epochs > 0 ? epochs : 1), sizeof(double))) != NULL;
    if (!ok)
        train_series_free(s);
    return ok ? 0 : -1;
}

void train_series_free(train_series *s)
{
    free(s->epoch); free(s->train_loss); free(s->test_acc); free(s->epoch_s); free(s->samples_per_s);
    *s = (train_series){0};
}

void train_series_record(const train_series *s, sl_record *rec)
{
    if (s->n <= 0)
        return;
    sl_record_series(rec, "epoch", s->epoch, s->n);
    sl_record_series(rec, "train_loss", s->train_loss, s->n);
    sl_record_series(rec, "test_acc", s->test_acc, s->n);
    sl_record_series(rec, "epoch_s", s->epoch_s, s->n);
    sl_record_series(rec, "samples_per_s", s->samples_per_s, s->n);
}

void train_shuffle(int32_t *perm, long n, uint64_t seed, int epoch)
{
    sn_rng st = {seed * 0x100000001b3ull + (uint64_t)epoch * 0x9e3779b97f4a7c15ull + 0x73687566ull};
    for (long i = 0; i < n; i++)
        perm[i] = (int32_t)i;
    for (long i = n - 1; i > 0; i--) {
        /* the modulo bias of a 64-bit draw over < 2^31 values is below 2^-32: immaterial here */
        long j = (long)(sn_next(&st) % (uint64_t)(i + 1));
        int32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Rows ahead whose bytes are prefetched: a row's first line is a DRAM miss (the training set is 47 MB),
 * which converting 784 bytes does not hide. Zen 5 VM, dispatch build with GATHER_AHEAD 0 against 8,
 * interleaved, `SPEEDLAB_ISA=vN speedlab run mlp --variants simd,omp --reps 1 --param epochs=3
 * --timerstats`, the `data` region over 3 epochs: omp's gather (kernels/mlp/omp.c, the same scheme)
 * 24-30 -> 13-17 ms at v4 and 35-64 -> 13-16 ms at v3; this one (simd) 74-81 -> 37-40 ms at v3 in a
 * first run, no clear change at v3 or v4 (22-40 ms either way) in a second. */
#define GATHER_AHEAD 8

void train_gather(const idx_set *set, const int32_t *idx, int B, float *X, uint8_t *y)
{
    size_t px = (size_t)set->rows * (size_t)set->cols;
    const float scale = 1.0f / 255.0f;
    for (int b = 0; b < B; b++) {
        const uint8_t *src = set->images + (size_t)idx[b] * px;
        float *dst = X + (size_t)b * px;
        if (b + GATHER_AHEAD < B) /* random rows of a set larger than the L3: fetch ahead */
            for (size_t k = 0; k < px; k += 64)
                __builtin_prefetch(set->images + (size_t)idx[b + GATHER_AHEAD] * px + k);
        for (size_t k = 0; k < px; k++)
            dst[k] = (float)src[k] * scale;
        y[b] = set->labels[idx[b]];
    }
}

float train_lr(const train_cfg *cfg, int epoch)
{
    if (cfg->epochs <= 1 || epoch <= 0)
        return cfg->lr;
    if (epoch >= cfg->epochs - 1)
        return cfg->lr_final;
    double f = (double)epoch / (double)(cfg->epochs - 1);
    return (float)((1.0 - f) * cfg->lr + f * cfg->lr_final);
}

/* Steps in an epoch: the full batches, and the partial last one when the model trains it. */
static long epoch_steps(const train_cfg *cfg)
{
    long full = cfg->n_train / cfg->batch;
    return full + (cfg->partial_last && cfg->n_train % cfg->batch ? 1 : 0);
}

void train_timer_region(train_timer *t, int phase)
{
    if (!t || phase < 0 || phase >= TRAIN_STEP_PHASES)
        return;
    if (phase == 0 && !t->have_pending && t->poll)
        t->have_pending = t->poll(t->ctx, t->pending) == 1;
    if (!t->have_pending)
        return;
    if (!isnan(t->pending[phase]))
        prof_add_device_ms(t->pending[phase]);
    if (phase == TRAIN_STEP_PHASES - 1)
        t->have_pending = 0;
}

/* Adds the spans of kinds `which` (n of them) to sum[]; 0, or -1 when one was not measured. When
 * `region` is set, their total also goes to the open region. */
static int take_spans(train_timer *t, const int *which, int n, double sum[3], int region)
{
    double ms[3], total = 0;
    int ok = 1;
    for (int i = 0; i < n; i++) /* every kind is taken, so none is left for the next epoch */
        ok &= t->take(t->ctx, which[i], &ms[i]) == 0 && ms[i] >= 0;
    if (!ok)
        return -1;
    for (int i = 0; i < n; i++)
        sum[which[i]] += ms[i], total += ms[i];
    if (region)
        prof_add_device_ms(total);
    return 0;
}

int train_run(const train_cfg *cfg, const train_model *m, long set_n, int32_t *perm, train_series *out,
              sl_record *rec, sl_error *err)
{
    long steps_per_epoch = epoch_steps(cfg); /* mlp drops the partial batch, as its write-up */
    static const int steps_kinds[] = {TRAIN_H2D, TRAIN_KERNEL}, back[] = {TRAIN_D2H};
    train_timer *timer = m->timer;
    double phases[3] = {0, 0, 0};
    int measured = timer != NULL;
    if (timer) {
        timer->drop(timer->ctx);
        timer->have_pending = 0;
    }
    for (int e = 0; e < cfg->epochs; e++) {
        train_shuffle(perm, set_n, cfg->seed, e);
        float lr = train_lr(cfg, e);
        double loss_sum = 0;
        int per_step = 1, steps = 0;
        long rows = 0;
        prof_begin("epoch");
        uint64_t t0 = prof_now_ns();
        for (long s = 0; s < steps_per_epoch; s++) {
            double loss = NAN;
            long left = cfg->n_train - s * cfg->batch;
            int B = left < cfg->batch ? (int)left : cfg->batch;
            if (m->step(m->ctx, perm + s * cfg->batch, B, lr, &loss, err) != 0) {
                prof_end("epoch");
                return -1;
            }
            if (isnan(loss))
                per_step = 0;
            else
                loss_sum += loss;
            steps++;
            rows += B;
        }
        if (m->sync && m->sync(m->ctx, err) != 0) {
            prof_end("epoch");
            return -1;
        }
        uint64_t t1 = prof_now_ns();
        if (timer) /* the steps have ended on the device: their spans are read without a wait (and
                    * always taken, so that an unmeasured epoch leaves none for the next) */
            measured &= take_spans(timer, steps_kinds, 2, phases, 1) == 0;
        prof_end("epoch");
        long correct = 0;
        double device_sum = 0;
        prof_begin("evaluate");
        int rc = m->epoch_end(m->ctx, &device_sum, &correct, err);
        prof_end("evaluate");
        if (rc != 0)
            return -1;
        if (timer) /* the evaluation's read-backs: outside any region that would mislabel them */
            measured &= take_spans(timer, back, 1, phases, 0) == 0;
        if (!per_step)
            loss_sum = device_sum;
        if (out && out->n < out->cap) {
            /* epoch_s: the steps only (a device model's included, through sync), not the evaluation */
            double secs = (double)(t1 - t0) * 1e-9;
            int i = out->n++;
            out->epoch[i] = e + 1;
            out->train_loss[i] = steps ? loss_sum / steps : NAN;
            out->test_acc[i] = cfg->n_test ? (double)correct / (double)cfg->n_test : NAN;
            out->epoch_s[i] = secs;
            out->samples_per_s[i] = secs > 0 ? (double)rows / secs : NAN;
        }
        sl_record_progress(rec, e + 1, cfg->epochs, "epoch");
    }
    /* kept only while the runner times repetitions (sl_record_phases); NAN (null in the record) when a
     * span could not be read, so that the arrays keep one entry per repetition */
    if (timer && measured)
        sl_record_phases(rec, phases[TRAIN_H2D], phases[TRAIN_KERNEL], phases[TRAIN_D2H]);
    else if (timer)
        sl_record_phases(rec, NAN, NAN, NAN);
    return 0;
}

const char *train_mnist_dir(const sl_opts *o)
{
    static char dir[1024];
    if (o && o->data_dir)
        return o->data_dir;
    const char *root = getenv("SPEEDLAB_DATA_DIR");
    if (!root || !*root)
        return SL_DEFAULT_FASHION_MNIST;
    snprintf(dir, sizeof dir, "%s/fashion-mnist", root);
    return dir;
}

int train_mnist_missing(const char *study, char *why, size_t n)
{
    const char *dir = train_mnist_dir(NULL);
    if (idx_dir_complete(dir))
        return 0;
    snprintf(why, n, "%s: no Fashion-MNIST in %s: " IDX_MISSING_HINT " (sh scripts/setup.sh installs it)", study,
             dir);
    return 1;
}

int train_load_mnist(const char *study, const char *net, int side, const sl_opts *o, idx_set *train,
                     idx_set *test, sl_error *err)
{
    const char *dir = train_mnist_dir(o);
    char msg[1024];
    if (idx_load_split(dir, "train", 10, train, msg, sizeof msg) ||
        idx_load_split(dir, "t10k", 10, test, msg, sizeof msg)) {
        sl_error_set(err, "%s: %s", study, msg);
        return -1;
    }
    if (train->rows != test->rows || train->cols != test->cols) {
        sl_error_set(err, "%s: %s: training images are %dx%d but test images %dx%d; both splits must match", study,
                     dir, train->rows, train->cols, test->rows, test->cols);
        return -1;
    }
    if (train->rows != side || train->cols != side) {
        sl_error_set(err, "%s: %s: images are %dx%d, but the study's network (%s) takes %dx%d images: want "
                     "the %dx%d Fashion-MNIST files", study, dir, train->rows, train->cols, net, side, side,
                     side, side);
        return -1;
    }
    return 0;
}

double train_update_error(const float *before, const float *after, const double *want, double scale, size_t n)
{
    double diff = 0, ref = 0;
    for (size_t i = 0; i < n; i++) {
        double w = scale * want[i];
        double got = (double)after[i] - (double)before[i];
        diff += (got - w) * (got - w);
        ref += w * w;
    }
    return ref > 0 ? sqrt(diff / ref) : sqrt(diff);
}

double train_delta_error(const double *got, const double *want, double scale, size_t n)
{
    double diff = 0, ref = 0;
    for (size_t i = 0; i < n; i++) {
        double w = scale * want[i];
        diff += (got[i] - w) * (got[i] - w);
        ref += w * w;
    }
    return ref > 0 ? sqrt(diff / ref) : sqrt(diff);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double train_check_error(double *errs, int n, double worst_loss)
{
    qsort(errs, (size_t)n, sizeof *errs, cmp_double);
    return fmax(worst_loss, errs[(n - 1) * 9 / 10]);
}

double train_mean(const double *x, int n)
{
    double t = 0;
    for (int i = 0; i < n; i++)
        t += x[i];
    return n > 0 ? t / n : NAN;
}

int train_reps_kept(int nreps, int max, const char *what, sl_record *rec)
{
    int kept = nreps < max ? nreps : max;
    if (kept < nreps) { /* (noted at finish, not in run: no allocation on the timed path) */
        char note[128];
        snprintf(note, sizeof note, "%s summarise the first %d repetitions only", what, max);
        sl_record_note(rec, note);
    }
    return kept;
}

train_cfg train_declared(const sl_study *st, long batch, const sl_opts *o, long quick_rows, long quick_test)
{
    return (train_cfg){.epochs = o->quick ? 1 : (int)sl_param_long(o, st, "epochs"), .batch = (int)batch,
                       .n_train = o->quick ? quick_rows : 60000, .n_test = o->quick ? quick_test : 10000};
}
