/*
 * experiments/studies/prefetch/prefetch_study.h: what the prefetch study's files share (seed 003, part 2).
 *
 * One repetition trains mlp or cnn (--param model) with their omp kernels, its batches prepared (gather,
 * scale, and with --param augment=flipshift a flip and a shift) either inline by the training thread
 * (the row's depth 0: sync) or by a loader thread up to `depth` batches ahead (experiments/train/loader.h).
 * The time the training thread waits for its batch (or, inline, spends making it) is summed per epoch.
 */
#ifndef SL_PREFETCH_STUDY_H
#define SL_PREFETCH_STUDY_H

#include <stddef.h>
#include <stdint.h>

#include "data/idx.h"
#include "study.h"
#include "train/loader.h"
#include "train/train.h"

#define PF_MAX_DEPTH 8
#define PF_MAX_REPS 64   /* repetitions whose figures are kept for mean and spread */
#define PF_CHECK_STEPS 20 /* steps the check trains and compares (fewer when an epoch has fewer) */

/* What a row's `kernels` points to: how many batches the loader prepares ahead (0: none, inline). */
typedef struct pf_row {
    int depth;
} pf_row;

/* A model the study trains: created once per setup, over mlp's or cnn's omp kernels (models.c). */
typedef struct pf_model {
    const char *name;
    float lr, lr_final, momentum; /* the model's study's schedule (mlp: 0.1 to 0.01; cnn: 0.01, mu 0.9) */
    int partial_last;             /* as train_cfg: cnn trains the epoch's last partial batch, mlp drops it */
    /* The network at batch rows and `threads` threads, initial weights He from seed. NULL with err. */
    void *(*create)(int rows, int cols, int batch, int threads, uint64_t seed, sl_error *err);
    void (*reset)(void *net);     /* weights := initial, momentum := 0 */
    /* One SGD step on X (B rows) and y: forward, loss, backward, update; returns the loss. */
    float (*step)(void *net, const float *X, const uint8_t *y, int B, float lr, int threads);
    int (*correct)(void *net, const float *X, const uint8_t *y, int B, int threads);
    const float *(*weights)(const void *net, size_t *n);
    void (*destroy)(void *net);
} pf_model;

extern const pf_model pf_model_mlp, pf_model_cnn;

typedef struct pf_rep {
    double epoch_s, wait_s, compute_s, wait_fraction, busy_fraction, sps, acc, secs; /* per epoch: s */
} pf_rep;

typedef struct pf_state {
    idx_set train, test;
    const pf_model *model;
    void *net;
    int flipshift;           /* --param augment=flipshift */
    int quick, threads, epochs;
    train_cfg cfg;
    long steps_per_epoch;
    size_t px;               /* pixels per image */
    float *X;                /* the inline batch (sync) and the evaluation chunks */
    uint8_t *y;
    int32_t *perm;           /* train_run's shuffle (the training thread's) */
    int32_t *fill_perm;      /* the loader's own shuffle, of epoch fill_epoch */
    int32_t *eval_idx;       /* test row numbers, one batch */
    int fill_epoch;
    double *ref;             /* the check's double batch */
    float *Pref;             /* the check: sync's weights after its steps */
    int have_ref;
    /* the variant running */
    int v, vthreads;
    loader *q;               /* queue variants: from prepare to release */
    int epoch;               /* the epoch training now (0-based) */
    long next_item;          /* the loader item the next step must get */
    uint64_t wait_ns;        /* this epoch's wait so far */
    double *wait_epoch;      /* per epoch: seconds waited */
    double check_err;        /* the check: worst batch error so far (< 0: not checking) */
    train_series series;
    int nreps;
    pf_rep reps[PF_MAX_REPS];
} pf_state;

extern const sl_study sl_study_prefetch;

static inline int pf_depth(int v)
{
    return ((const pf_row *)sl_study_prefetch.variants[v].kernels)->depth;
}

/* prefetch.c: the batch of rows idx in epoch `epoch` (gather, scale, augment): what sync does inline and
 * the loader on its thread. */
void pf_prepare_batch(const pf_state *s, int epoch, const int32_t *idx, int B, float *X, uint8_t *y);
/* prefetch.c: variant v's training model (train_model) over s. */
train_model pf_train_model(pf_state *s, int v);
/* check.c: the largest |X - reference| over B rows of X against the double reference of rows idx of
 * the current epoch (1 when a label differs): 0 up to float rounding when X is the batch sync makes. */
double pf_batch_error(const pf_state *s, const int32_t *idx, int B, const float *X, const uint8_t *y);
/* check.c: variant v's check (the study's `check`). */
int pf_check(pf_state *s, int v, double *rel_err, sl_error *err);

#endif
