/*
 * experiments/studies/mlp/check.c: the mlp study's correctness check, run before a variant is timed: the
 * teacher-forced check of experiments/train/mlp_check.c (which says why it is teacher-forced) over the
 * study's schedule, with the variant's model and how its weights are set and read.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlp_study.h"
#include "train/mlp_check.h"
#if MLP_DEVICE
#include "mlp/mlp_cuda.h"
#endif

/* Variant v's weights := P (the CPU variants train s->P in place). */
int mlp_set_weights(mlp_state *s, int v, const float *P, sl_error *err)
{
    if (P != s->P)
        memcpy(s->P, P, s->L.n * sizeof(float));
#if MLP_DEVICE
    if (mlp_is_device(v) && mlp_cuda_set_params(s->dev, P) != 0) {
        sl_error_set(err, "mlp: %s", mlp_cuda_error(s->dev));
        return -1;
    }
#else
    (void)v, (void)err;
#endif
    return 0;
}

/* P := variant v's weights. */
static int get_weights(mlp_state *s, int v, float *P, sl_error *err)
{
#if MLP_DEVICE
    if (mlp_is_device(v)) {
        if (mlp_cuda_sync(s->dev) != 0 || mlp_cuda_get_params(s->dev, P) != 0) {
            sl_error_set(err, "mlp: %s", mlp_cuda_error(s->dev));
            return -1;
        }
        return 0;
    }
#else
    (void)v, (void)err;
#endif
    memcpy(P, s->P, s->L.n * sizeof(float));
    return 0;
}

static int set_any(void *s, int v, const float *P, sl_error *err)
{
    return mlp_set_weights(s, v, P, err);
}

static int get_any(void *s, int v, float *P, sl_error *err)
{
    return get_weights(s, v, P, err);
}

int mlp_check(mlp_state *s, int v, train_model *m, double *rel_err, sl_error *err)
{
    const mlp_check_job j = {
        .study = "mlp", .dims = &s->dims, .n_params = s->L.n, .cfg = &s->cfg, .train = &s->train, .P0 = s->P0,
        .steps = s->check_steps, .perm = s->perm, .X = s->X, .y = s->y, .model = *m, .state = s, .v = v,
        .set_weights = set_any, .get_weights = get_any,
    };
    return mlp_check_run(&j, rel_err, err);
}
