/*
 * experiments/studies/cnn/cnn_study.h: the cnn study's state, shared by its glue (cnn.c), its model
 * adapters (models.c: one CPU model over a variant's per-layer functions, the device model for cuda and
 * cudnn) and its check (check.c).
 */
#ifndef SL_STUDY_CNN_H
#define SL_STUDY_CNN_H

#include "cnn/cnn_kernels.h"
#include "data/idx.h"
#include "sl_config.h"
#include "study.h"
#include "train/train.h"

/* The device variants (cuda, cudnn: kernels/cnn/cnn_cuda.h) are wired in when their kernels are built:
 * in a build with CUDA (kernels/cnn/meson.build's kernel_cuda_sources). */
#define CNN_DEVICE SL_HAVE_CUDA

/* What a variant row's `kernels` points to (cnn.c's table). A CPU variant: its per-layer functions
 * (a NULL update is cnn_sgd_momentum), run by the CPU model (models.c). An SL_DEVICE variant: which
 * backend the device model asks cnn_cuda_create for (CNN_CUDA_OWN or CNN_CUDA_CUDNN). */
typedef struct cnn_row {
    cnn_layers layers;
    int backend;
} cnn_row;

extern const sl_study sl_study_cnn;

static inline const cnn_row *cnn_row_of(int v)
{
    return sl_study_cnn.variants[v].kernels;
}

static inline int cnn_is_device(int v)
{
    return (sl_study_cnn.variants[v].traits & SL_DEVICE) != 0;
}

#define CNN_MAX_REPS 64 /* repetitions whose figures are kept for mean and spread */

/* One timed repetition's figures (finish() summarises them over the repetitions). */
typedef struct cnn_rep {
    double secs;      /* the whole training, evaluations included */
    double epoch_s;   /* mean epoch time (steps only) */
    double sps;       /* mean of the samples_per_s series */
    double acc, best; /* final and best test accuracy */
    double rss;       /* mean resident memory over the epochs' ends */
} cnn_rep;

typedef struct cnn_state {
    idx_set train, test;
    cnn_dims dims;
    cnn_layout L;
    train_cfg cfg;      /* epochs, batch, lr, seed, rows, partial_last: the timed runs */
    float momentum;
    int epochs, naive_epochs, check_steps, quick, threads, graph; /* threads: --threads */
    int spans;            /* --param spans: 0 = no per-step CUDA events (no phases recorded) */
    long naive_rows;    /* training rows per epoch of the naive variant (0 = all) */
    float *P0, *P, *G, *V; /* initial weights (He, from the seed), working copy, gradient, momentum */
    float *wsblock, *X; /* workspace for one batch; the batch (or an evaluation chunk) as floats */
    uint8_t *argmax, *y; /* pooling argmax (ws.arg1, ws.arg2); labels */
    cnn_ws ws;
    int32_t *perm, *eval_idx; /* the shuffled order (set size); test row numbers (one batch) */
    int v;              /* the variant the CPU model runs */
    int vthreads;       /* and its thread count (sl_variant_threads) */
    void *dev;          /* cnn_cuda * for cuda/cudnn (prepare/release) */
    int dev_per_step;   /* device model: read the loss every step (the check) */
    train_timer timer;  /* device model: its event times (train.h; ctx = dev) */
    double rss_sum;     /* resident memory summed over this repetition's epoch ends, and their count */
    long rss_n;
    train_series series; /* the last repetition's */
    int nreps;          /* timed runs since prepare; reps keeps the first CNN_MAX_REPS */
    cnn_rep reps[CNN_MAX_REPS];
    double peak_dev_bytes, launches_per_step;
    double ext_loss0, *ext_update; /* a framework baseline's first step (external.c) */
} cnn_state;

/* external.c: the framework baseline (docs/baselines.md) */
int cnn_external_inputs(void *vs, sl_inputs *in, sl_error *err);
int cnn_external_outputs(void *vs, int v, const sl_outputs *out, sl_error *err);
int cnn_check_external(cnn_state *s, double *rel_err, sl_error *err);

/* models.c */
train_model cnn_cpu_model(cnn_state *s);
#if CNN_DEVICE
train_model cnn_dev_model(cnn_state *s);
int cnn_dev_prepare(cnn_state *s, int v, sl_error *err);
void cnn_dev_release(cnn_state *s);
#endif
/* check.c */
/* Variant v's weights := P, its momentum := 0. 0, or -1 with err. */
int cnn_set_weights(cnn_state *s, int v, const float *P, sl_error *err);
/* The check's relative error of variant v, whose model is m (see check.c). 0, or -1 with err. */
int cnn_check(cnn_state *s, int v, train_model *m, double *rel_err, sl_error *err);

#endif
