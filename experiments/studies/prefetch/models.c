/*
 * experiments/studies/prefetch/models.c: the two networks the prefetch study trains, over the fastest
 * CPU kernels of their own studies, reused rather than copied: mlp's omp forward, backward, update
 * (kernels/mlp/omp.c) and cnn's omp layers with the shared pooling and momentum update (kernels/cnn).
 * Each step runs on the training thread, its OpenMP team `threads` wide; the schedule (learning rates,
 * momentum, partial last batch) is each study's default.
 */
#include <stdlib.h>
#include <string.h>

#include "cnn/cnn_kernels.h"
#include "mlp/mlp_kernels.h"
#include "prefetch_study.h"

static size_t bytes64(size_t n) { return (n + 63) / 64 * 64; } /* aligned_alloc wants a multiple */

/* ---- mlp: 784-128-128-10, SGD ------------------------------------------------------------------ */

typedef struct pf_mlp {
    mlp_dims d;
    mlp_layout L;
    mlp_ws ws;
    float *block, *P0, *P, *G;
} pf_mlp;

static void mlp_destroy(void *vn)
{
    pf_mlp *n = vn;
    if (n)
        free(n->block), free(n->P0), free(n->P), free(n->G);
    free(n);
}

static void *mlp_create(int rows, int cols, int batch, int threads, uint64_t seed, sl_error *err)
{
    (void)threads;
    pf_mlp *n = calloc(1, sizeof *n);
    if (n) {
        n->d = (mlp_dims){rows * cols, 128, 128, 10};
        n->L = mlp_layout_of(&n->d);
        n->block = aligned_alloc(64, bytes64(mlp_ws_floats(&n->d, batch) * sizeof(float)));
        n->P0 = malloc(n->L.n * sizeof(float));
        n->P = malloc(n->L.n * sizeof(float));
        n->G = malloc(n->L.n * sizeof(float));
    }
    if (!n || !n->block || !n->P0 || !n->P || !n->G) {
        sl_error_set(err, "prefetch: out of memory for the mlp at batch %d", batch);
        mlp_destroy(n);
        return NULL;
    }
    mlp_ws_bind(&n->ws, &n->d, batch, n->block);
    mlp_init_he(&n->d, n->P0, seed);
    memcpy(n->P, n->P0, n->L.n * sizeof(float));
    return n;
}

static void mlp_reset(void *vn)
{
    pf_mlp *n = vn;
    memcpy(n->P, n->P0, n->L.n * sizeof(float));
}

static float mlp_step(void *vn, const float *X, const uint8_t *y, int B, float lr, int threads)
{
    pf_mlp *n = vn;
    mlp_forward_omp(&n->d, n->P, X, B, &n->ws, threads);
    float loss = mlp_loss(&n->d, y, B, &n->ws);
    mlp_backward_omp(&n->d, n->P, X, B, &n->ws, n->G, threads);
    mlp_update_omp(&n->d, n->P, n->G, lr, threads);
    return loss;
}

static int mlp_count(void *vn, const float *X, const uint8_t *y, int B, int threads)
{
    pf_mlp *n = vn;
    mlp_forward_omp(&n->d, n->P, X, B, &n->ws, threads);
    return mlp_correct(&n->d, n->ws.z3, y, B);
}

static const float *mlp_weights(const void *vn, size_t *np)
{
    const pf_mlp *n = vn;
    *np = n->L.n;
    return n->P;
}

const pf_model pf_model_mlp = {"mlp", 0.1f, 0.01f, 0.0f, 0, mlp_create, mlp_reset, mlp_step, mlp_count,
                               mlp_weights, mlp_destroy};

/* ---- cnn: two conv + pool, two dense, SGD with momentum --------------------------------------- */

typedef struct pf_cnn {
    cnn_dims d;
    cnn_layout L;
    cnn_ws ws;
    float *block, *P0, *P, *G, *V;
    uint8_t *argmax;
} pf_cnn;

#define CNN_MOMENTUM 0.9f /* cnn's default (--param momentum there) */

static const cnn_layers cnn_omp = {cnn_conv_forward_omp, cnn_conv_backward_omp, cnn_dense_forward_omp,
                                   cnn_dense_backward_omp, NULL, NULL, NULL, NULL, NULL};

static void cnn_destroy(void *vn)
{
    pf_cnn *n = vn;
    if (n)
        free(n->block), free(n->P0), free(n->P), free(n->G), free(n->V), free(n->argmax);
    free(n);
}

static void *cnn_create(int rows, int cols, int batch, int threads, uint64_t seed, sl_error *err)
{
    pf_cnn *n = calloc(1, sizeof *n);
    if (n && cnn_dims_init(&n->d, rows, cols) != 0) {
        sl_error_set(err, "prefetch: images are %dx%d; the cnn's two conv + pool stages need at least 10x10",
                     rows, cols);
        free(n);
        return NULL;
    }
    if (n) {
        n->L = cnn_layout_of(&n->d);
        n->block = aligned_alloc(64, bytes64(cnn_ws_floats(&n->d, batch, threads) * sizeof(float)));
        n->argmax = malloc(cnn_ws_argmax_bytes(&n->d, batch));
        n->P0 = malloc(n->L.n * sizeof(float));
        n->P = malloc(n->L.n * sizeof(float));
        n->G = malloc(n->L.n * sizeof(float));
        n->V = calloc(n->L.n, sizeof(float));
    }
    if (!n || !n->block || !n->argmax || !n->P0 || !n->P || !n->G || !n->V) {
        sl_error_set(err, "prefetch: out of memory for the cnn at batch %d", batch);
        cnn_destroy(n);
        return NULL;
    }
    cnn_ws_bind(&n->ws, &n->d, batch, threads, n->block, n->argmax);
    cnn_init_he(&n->d, n->P0, seed);
    memcpy(n->P, n->P0, n->L.n * sizeof(float));
    return n;
}

static void cnn_reset(void *vn)
{
    pf_cnn *n = vn;
    memcpy(n->P, n->P0, n->L.n * sizeof(float));
    memset(n->V, 0, n->L.n * sizeof(float));
}

static float cnn_step(void *vn, const float *X, const uint8_t *y, int B, float lr, int threads)
{
    pf_cnn *n = vn;
    cnn_forward(&n->d, &cnn_omp, n->P, X, B, &n->ws, threads, NULL, NULL);
    float loss = cnn_loss(&n->d, y, B, &n->ws);
    cnn_backward(&n->d, &cnn_omp, n->P, X, B, &n->ws, n->G, threads, NULL, NULL);
    cnn_sgd_momentum(n->P, n->V, n->G, n->L.n, lr, CNN_MOMENTUM, threads);
    return loss;
}

static int cnn_count(void *vn, const float *X, const uint8_t *y, int B, int threads)
{
    pf_cnn *n = vn;
    cnn_forward(&n->d, &cnn_omp, n->P, X, B, &n->ws, threads, NULL, NULL);
    return cnn_correct(&n->d, n->ws.z4, y, B);
}

static const float *cnn_weights(const void *vn, size_t *np)
{
    const pf_cnn *n = vn;
    *np = n->L.n;
    return n->P;
}

const pf_model pf_model_cnn = {"cnn", 0.01f, 0.01f, CNN_MOMENTUM, 1, cnn_create, cnn_reset, cnn_step, cnn_count,
                               cnn_weights, cnn_destroy};
