/*
 * experiments/train/mlp_check.h: the teacher-forced correctness check of a model of the mlp network
 * (kernels/mlp/mlp_kernels.h), shared by the studies that train it: mlp (its variants) and precision
 * (its storage types). mlp_check.c says why the check is teacher-forced and how its error is formed.
 */
#ifndef SL_TRAIN_MLP_CHECK_H
#define SL_TRAIN_MLP_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "data/idx.h"
#include "mlp/mlp_kernels.h"
#include "study.h"
#include "train/train.h"

/* What the check needs of its study: the network, the schedule, the data, scratch, the model under
 * test and how to move its weights. */
typedef struct mlp_check_job {
    const char *study;   /* for messages: "mlp", "precision" */
    const mlp_dims *dims;
    size_t n_params;     /* mlp_layout_of(dims).n */
    const train_cfg *cfg; /* batch, seed, learning rates, n_train */
    const idx_set *train;
    const float *P0;     /* the initial weights */
    int steps;           /* consecutive SGD steps of the schedule checked (>= 1) */
    int32_t *perm;       /* scratch: the shuffled order, train->n rows */
    float *X;            /* scratch: one batch as floats */
    uint8_t *y;          /* scratch: its labels */
    train_model model;   /* the variant's model: its step is checked */
    void *state;         /* passed to the two functions below */
    int v;               /* the variant */
    /* The variant's weights := P, and P := the variant's weights (after its step). 0, or -1 with err. */
    int (*set_weights)(void *state, int v, const float *P, sl_error *err);
    int (*get_weights)(void *state, int v, float *P, sl_error *err);
} mlp_check_job;

/* The check's relative error of j's variant into *rel_err (NAN when a loss or update was NaN). 0, or -1
 * with err (out of memory, or a step or weight copy failed). */
int mlp_check_run(const mlp_check_job *j, double *rel_err, sl_error *err);

#endif
