/*
 * experiments/studies/mlp/mlp_study.h: the mlp study's state, shared by its glue (mlp.c) and its model
 * adapters (models.c: one CPU model over a table of kernels per variant, the device model for cuda and cublas).
 */
#ifndef SL_STUDY_MLP_H
#define SL_STUDY_MLP_H

#include "data/idx.h"
#include "sl_config.h"
#include "mlp/mlp_kernels.h"
#include "study.h"
#include "train/train.h"

/* The device variants are wired in when the CUDA kernels of kernels/mlp are built. */
#define MLP_DEVICE SL_HAVE_CUDA

/* What a variant row's `kernels` points to (mlp.c's table). A CPU variant: its kernels
 * (kernels/mlp/mlp_kernels.h; a NULL update is mlp_sgd, a NULL gather is train_gather on one thread; with
 * a step, the model calls that instead of forward ... update, after the gather when it has none), run
 * by the CPU model
 * (models.c). An SL_DEVICE variant: the device model's options (mlp_cuda.h). */
typedef struct mlp_kernels {
    mlp_forward_fn forward;
    mlp_backward_fn backward;
    mlp_update_fn update;
    mlp_gather_fn gather;
    int cublas; /* SL_DEVICE: the products by cuBLAS rather than the own kernels */
    mlp_step_fn step; /* NULL, or the whole step in one call (the CPU model's "step" region) */
} mlp_kernels;

extern const sl_study sl_study_mlp;

static inline const mlp_kernels *mlp_kernels_of(int v)
{
    return sl_study_mlp.variants[v].kernels;
}

/* The variants whose weights and steps live on the GPU (mlp_cuda.h). */
static inline int mlp_is_device(int v)
{
    return (sl_study_mlp.variants[v].traits & SL_DEVICE) != 0;
}

#define MLP_EVAL_CHUNK 1000 /* test rows per forward call when evaluating on the host */
#define MLP_MAX_BATCH 65536 /* a sanity bound: far above the sweep's 1024, the workspace stays < 1 GB */

/* Rows the host workspace and X hold: one training batch or one evaluation chunk, whichever is larger. */
static inline long mlp_ws_rows(long batch)
{
    return batch > MLP_EVAL_CHUNK ? batch : MLP_EVAL_CHUNK;
}
#define MLP_MAX_REPS 64     /* repetitions whose accuracy and time are kept for mean and spread */

typedef struct mlp_state {
    idx_set train, test;
    mlp_dims dims;
    mlp_layout L;
    train_cfg cfg;        /* epochs, batch, lr, seed, n_train, n_test for the timed runs */
    int epochs, naive_epochs, check_steps, quick, threads; /* threads: --threads */
    float *P0, *P, *G;    /* initial weights (He, from the seed), working copy, gradient */
    float *wsblock, *X;   /* workspace for mlp_ws_rows(batch) rows; batch (or eval chunk) as floats */
    uint8_t *y;
    mlp_ws ws;
    int32_t *perm;
    int v;                /* the variant the CPU model runs */
    int vthreads;         /* and its thread count (sl_variant_threads) */
    void *dev;            /* mlp_cuda * for cuda/cublas (prepare/release) */
    int dev_per_step;     /* device model: read the loss every step (checks) */
    train_timer timer;    /* device model: its event times (train.h; ctx = dev) */
    int feed;             /* --param feed: 0 resident, 1 sync, 2 overlap (MLP_FEED_* of mlp_cuda.h) */
    int spans;            /* --param spans: 0 = no per-step CUDA events (no phases recorded) */
    int fused;            /* --param fused: 0 = simd/omp run the separate calls, a region per phase */
    train_series series;  /* the last repetition's */
    int nreps;            /* timed runs since prepare; acc and secs keep the first MLP_MAX_REPS */
    double acc[MLP_MAX_REPS], secs[MLP_MAX_REPS];
    double peak_dev_bytes;
    double ext_loss0, *ext_update; /* a framework baseline's first step (external.c) */
} mlp_state;

/* external.c: the framework baselines (docs/baselines.md) */
int mlp_external_inputs(void *vs, sl_inputs *in, sl_error *err);
int mlp_external_outputs(void *vs, int v, const sl_outputs *out, sl_error *err);
int mlp_check_external(mlp_state *s, double *rel_err, sl_error *err);

/* models.c */
train_model mlp_cpu_model(mlp_state *s);
#if MLP_DEVICE
train_model mlp_dev_model(mlp_state *s);
int mlp_dev_prepare(mlp_state *s, int v, sl_error *err);
void mlp_dev_release(mlp_state *s);
#endif
/* check.c */
int mlp_set_weights(mlp_state *s, int v, const float *P, sl_error *err);
/* The check's relative error of variant v, whose model is m (see check.c). 0, or -1 with err. */
int mlp_check(mlp_state *s, int v, train_model *m, double *rel_err, sl_error *err);

#endif
