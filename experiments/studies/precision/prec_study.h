/*
 * experiments/studies/precision/prec_study.h: the precision study's state, shared by its glue
 * (precision.c) and its model and check (models.c).
 */
#ifndef SL_STUDY_PRECISION_H
#define SL_STUDY_PRECISION_H

#include "data/idx.h"
#include "precision/precision_kernels.h"
#include "study.h"
#include "train/train.h"

/* What a row's `kernels` points to. A CPU row: its three kernels (kernels/precision) and its storage.
 * An SL_DEVICE row: the storage its device step would use (cuBLAS GemmEx inputs). */
typedef struct prec_kernels {
    prec_convert_fn convert;
    prec_forward_fn forward;
    prec_backward_fn backward;
    const char *storage; /* "fp32", "bf16", "fp16": the type weights and activations are stored in */
    int bits;            /* its width: 32 or 16 */
} prec_kernels;

extern const sl_study sl_study_precision;

static inline const prec_kernels *prec_kernels_of(int v)
{
    return sl_study_precision.variants[v].kernels;
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
    train_series series;
    int nreps;
    prec_rep reps[PREC_MAX_REPS];
} prec_state;

/* models.c */
train_model prec_cpu_model(prec_state *s);
/* The teacher-forced check of CPU row v (models.c). 0, or -1 with err. */
int prec_check(prec_state *s, int v, double *rel_err, sl_error *err);

#endif
