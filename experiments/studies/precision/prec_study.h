/*
 * experiments/studies/precision/prec_study.h: the precision study's state, shared by its glue
 * (precision.c) and its model and check (models.c).
 */
#ifndef SL_STUDY_PRECISION_H
#define SL_STUDY_PRECISION_H

#include <string.h>

#include "data/idx.h"
#include "precision/precision_kernels.h"
#include "sl_config.h"
#include "study.h"
#include "train/train.h"

/* The GPU rows' device model is built with CUDA and cuBLAS (kernels/precision/prec_cuda.cu). */
#define PREC_DEVICE SL_HAVE_CUBLAS

/* What a row's `kernels` points to. A CPU row: its three kernels (kernels/precision) and its storage.
 * An SL_DEVICE row: the storage its device step would use (cuBLAS GemmEx inputs). */
typedef struct prec_kernels {
    prec_convert_fn convert;
    prec_forward_fn forward;
    prec_backward_fn backward;
    const char *storage; /* "fp32", "bf16", "fp16": the type weights and activations are stored in */
    int bits;            /* its width: 32 or 16 */
    int cuda_type;       /* an SL_DEVICE row: its prec_cuda.h type (PREC_CUDA_F32, _F16, _BF16) */
} prec_kernels;

extern const sl_study sl_study_precision;

static inline const prec_kernels *prec_kernels_of(int v)
{
    return sl_study_precision.variants[v].kernels;
}

static inline int prec_is_device(int v)
{
    return (sl_study_precision.variants[v].traits & SL_DEVICE) != 0;
}

/* The path CPU row v takes here (precision_kernels.h): bf16 and fp16 choose theirs at run time; fp32
 * and bf16dp have one way each. */
static inline int prec_row_path(int v)
{
    const char *name = sl_study_precision.variants[v].name;
    return !strcmp(name, "bf16") ? prec_path(1) : !strcmp(name, "fp16") ? prec_path(2) : PREC_PATH_CONVERT;
}

#define PREC_EVAL_CHUNK 1000 /* test rows per forward call when evaluating */
#define PREC_MAX_BATCH 4096
#define PREC_MAX_REPS 64     /* repetitions whose numbers are kept for mean and spread */

typedef struct prec_rep {
    double secs, epoch_s, sps, acc, best;
} prec_rep;

typedef struct prec_state {
    idx_set train, test;
    mlp_dims dims;
    mlp_layout L;
    train_cfg cfg;
    int epochs, check_steps, quick;
    float *P0, *P, *G;  /* initial weights (He, from the seed), the float32 master copy, the gradient */
    uint16_t *Pq;       /* the master converted to the row's storage, once per step */
    void *wsblock;
    prec_ws ws;
    float *X;           /* one batch or evaluation chunk, as floats */
    uint8_t *y;
    int32_t *perm;
    int v;              /* the row the CPU model runs */
    void *dev;          /* prec_cuda * of a GPU row (prepare/release) */
    int dev_per_step;   /* device model: read the loss every step (the check) */
    train_timer timer;  /* device model: its spans, the record's phases (prec_dev_model) */
    double peak_dev_bytes;
    train_series series;
    int nreps;
    prec_rep reps[PREC_MAX_REPS];
} prec_state;

/* models.c */
train_model prec_cpu_model(prec_state *s);
#if PREC_DEVICE
train_model prec_dev_model(prec_state *s);
int prec_dev_prepare(prec_state *s, int v, sl_error *err);
void prec_dev_release(prec_state *s);
/* The scaler's state (scale, skipped steps) after the runs. 0, or -1 when it cannot be read. */
int prec_dev_scaler(prec_state *s, double *scale, long *skipped);
#endif
/* The teacher-forced check of row v whose model is m (models.c). 0, or -1 with err. */
int prec_check(prec_state *s, int v, train_model *m, double *rel_err, sl_error *err);

#endif
