/*
 * experiments/train/train.h: what the minibatch-SGD training studies share (mlp and cnn): the
 * per-epoch shuffle from the run's seed, the batch gather (bytes -> floats in [0,1]), the epoch loop
 * with its per-epoch series (epoch, train_loss, test_acc, epoch_s, samples_per_s) and the regions
 * around it. A model plugs in as callbacks (step, sync, epoch_end), so a CPU model and a device-resident one (which gathers
 * on the GPU) run the same loop and see the same batches.
 */
#ifndef SL_TRAIN_H
#define SL_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "data/idx.h"
#include "study.h"

/* A device model's CUDA-event times: the seam between train_run and the device (mlp_cuda.h's
 * and cnn_cuda.h's span and phase calls; a fake in tests/experiments/test_train_phases.c).
 *   take: the ms of the completed spans of one kind (TRAIN_H2D, TRAIN_KERNEL, TRAIN_D2H) since the last
 *     take or drop, summed (every span measured, nothing sampled), and forgets them; 0, or -1 (not
 *     measured: the repetition's phases are then NAN, null in the record). Called after the stream drained (sync,
 *     epoch_end), so it waits for nothing.
 *   drop: forgets every span (what the check or an earlier run left).
 *   poll: may be NULL: one sampled step's TRAIN_STEP_PHASES phase times (data, forward, loss, backward,
 *     update; NAN for one not measured) once that step has ended on the device, without waiting: 1;
 *     else 0 (nothing new) or -1.
 * pending and have_pending are train.c's (a polled sample on its way into the step's regions). */
enum { TRAIN_H2D = 0, TRAIN_KERNEL = 1, TRAIN_D2H = 2 };
#define TRAIN_STEP_PHASES 5
typedef struct train_timer {
    void *ctx;
    int (*take)(void *ctx, int which, double *ms);
    void (*drop)(void *ctx);
    int (*poll)(void *ctx, double ms[TRAIN_STEP_PHASES]);
    double pending[TRAIN_STEP_PHASES];
    int have_pending;
} train_timer;

/* For a device model's step, inside its region of phase `phase` (0 data ... 4 update, in that order):
 * at data, polls for a sampled step that has ended (timer->poll); while one is pending, adds its phase
 * time to the open region (prof_add_device_ms), so data ... update carry the device time of the sampled
 * steps (an earlier step's than the one whose host time the region holds). NULL timer: nothing. */
void train_timer_region(train_timer *timer, int phase);

typedef struct train_model {
    void *ctx;
    /* One SGD step on training rows idx[0..B): gather, forward, loss, backward, update (the model opens
     * those regions). *loss gets the batch-mean loss, or NAN when the model reports losses per epoch only
     * (a device model that would otherwise synchronise every step). 0, or -1 with err. */
    int (*step)(void *ctx, const int32_t *idx, int B, float lr, double *loss, sl_error *err);
    /* May be NULL: waits until the epoch's steps are done (a device model), so that epoch_s is the
     * steps' real time and not their enqueue time. 0, or -1 with err. */
    int (*sync)(void *ctx, sl_error *err);
    /* End of an epoch: *loss_sum = sum of the epoch's batch-mean losses when step gave NAN (untouched
     * otherwise), *correct = test rows predicted right with the current weights. 0, or -1 with err. */
    int (*epoch_end)(void *ctx, double *loss_sum, long *correct, sl_error *err);
    /* May be NULL (a CPU model): the device's event times. With one, train_run drops the spans as it
     * starts, adds each epoch's h2d + kernel ms to the "epoch" region after sync, and records the
     * repetition's phases (sl_record_phases: h2d, kernel, d2h summed over its epochs; NAN, null in
     * the record, when a take did not measure) when it ends well (a failed run records none). */
    train_timer *timer;
} train_model;

typedef struct train_cfg {
    int epochs;
    int batch;
    float lr;       /* the first epoch's learning rate */
    float lr_final; /* the last epoch's: linear in between (train_lr); lr_final = lr keeps it constant */
    uint64_t seed;
    long n_train;   /* rows used per epoch (a prefix of the shuffled order; < the set's n when reduced) */
    long n_test;
    int partial_last; /* 1: the last n_train % batch rows are one smaller step (cnn); 0: dropped (mlp) */
} train_cfg;

/* Per-epoch series, epochs long (allocated by train_series_alloc). */
typedef struct train_series {
    int n, cap;
    double *epoch, *train_loss, *test_acc, *epoch_s, *samples_per_s;
} train_series;

int train_series_alloc(train_series *s, int epochs);
void train_series_free(train_series *s);
/* Adds the five series to the record. */
void train_series_record(const train_series *s, sl_record *rec);

/* Epoch e's learning rate (0-based): lr, then linearly down to lr_final at the last epoch. A decay
 * steadies the final test accuracy, which jumps by a point from epoch to epoch at a constant 0.1. */
float train_lr(const train_cfg *cfg, int epoch);

/* The order of epoch `epoch`'s rows: a Fisher-Yates shuffle of 0..n-1 seeded by (seed, epoch), so every
 * variant sees the same batches. */
void train_shuffle(int32_t *perm, long n, uint64_t seed, int epoch);
/* Rows idx[0..B) of set into X (B x rows*cols floats, pixel / 255) and y. */
void train_gather(const idx_set *set, const int32_t *idx, int B, float *X, uint8_t *y);

/* A training study's data set: the MNIST-format train and t10k splits of --data DIR, or of Debian's
 * Fashion-MNIST (SL_DEFAULT_FASHION_MNIST) without it, both of images side x side, the shape of the
 * study's network (`net` says which, for the message: a 10x10 set once trained a 100-input mlp under
 * the name of the 784-128-128-10 study). 0, or -1 with err ("STUDY: ..." with the directory and what
 * is wrong). */
int train_load_mnist(const char *study, const char *net, int side, const sl_opts *o, idx_set *train,
                     idx_set *test, sl_error *err);
/* Where a training study's Fashion-MNIST is: --data DIR; else $SPEEDLAB_DATA_DIR/fashion-mnist when that
 * variable is set (a relocated tree, such as the GPU bundle, sets it); else SL_DEFAULT_FASHION_MNIST.
 * o may be NULL (no --data). The result may be a static buffer, valid until the next call. */
const char *train_mnist_dir(const sl_opts *o);
/* A study's data_missing hook for that default: 0 when the files are there, else 1 with why. */
int train_mnist_missing(const char *study, char *why, size_t n);

/* The epoch loop. perm: n_train-or-more int32 scratch (set size). Regions: "epoch" around each epoch's
 * steps and "evaluate" around epoch_end. rec: the repetition's record, told each finished epoch
 * (sl_record_progress, after the evaluation: outside both regions); may be NULL. 0, or -1 with err. */
int train_run(const train_cfg *cfg, const train_model *m, long set_n, int32_t *perm, train_series *out,
              sl_record *rec, sl_error *err);

/* The schedule a training study declares before its data is read (its flops and bytes): batch, the
 * "epochs" parameter of st and the standard 60000/10000 split; with --quick one epoch on quick_rows
 * training and quick_test test rows. The other fields are 0. */
train_cfg train_declared(const sl_study *st, long batch, const sl_opts *o, long quick_rows, long quick_test);

/* Mean of x[0..n) (NAN when n is 0): a series' per-epoch mean (epoch_s, samples_per_s). */
double train_mean(const double *x, int n);
/* Repetitions a study's finish() summarises: nreps, at most max (those its state kept); when fewer
 * than nreps, notes on rec that `what` summarise the first max repetitions only. */
int train_reps_kept(int nreps, int max, const char *what, sl_record *rec);

/* The teacher-forced check's measures (mlp and cnn check.c). The relative error of one step's update:
 * |after - before - scale want| / |scale want| over n parameters (|...| when want is all zero). */
double train_update_error(const float *before, const float *after, const double *want, double scale, size_t n);
/* The same for an update given as its difference got (a framework baseline's first step): |got - scale
 * want| / |scale want| over n parameters. */
double train_delta_error(const double *got, const double *want, double scale, size_t n);
/* The check's result: the larger of worst_loss and the 90th percentile of errs[0..n) (n >= 1; errs is
 * sorted in place). */
double train_check_error(double *errs, int n, double worst_loss);

#endif
