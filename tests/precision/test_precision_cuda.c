/*
 * tests/precision/test_precision_cuda.c: the precision study's GPU rows (kernels/precision/prec_cuda.h)
 * train like the CPU's float32 path (mlp_forward_naive, mlp_loss, mlp_backward_naive, mlp_sgd) on a
 * small deterministic set: 512 training rows of the study's 784-128-128-10, 128 test rows, the same
 * He-initialised weights and the same 30 batches of 50. Per row type:
 *   - every step's loss within the type's tolerance of the CPU's (fp32 1e-4 relative; fp16 1e-2, bf16
 *     5e-2: their weights and activations are rounded), and the final weights' relative 2-norm
 *     difference (fp32 1e-4, fp16 2e-2, bf16 1e-1);
 *   - the loss scaler: 1 for fp32, 2^16 for the 16-bit rows after 30 good steps, no step skipped;
 *   - the evaluation's count within 10 % of the CPU's, and set/get_params round-tripping exactly;
 *   - each kind of span (index copies, kernels, read-backs) measured (> 0 ms) and emptied by its take.
 * Plain main, meson's exitcode protocol: 0 pass, 1 fail, 77 skip (no CUDA device).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp/mlp_cuda.h"
#include "mlp/mlp_kernels.h"
#include "precision/prec_cuda.h"

#define N_TRAIN 512
#define N_TEST 128
#define B 50
#define STEPS 30
#define LR 0.05f

static const mlp_dims dims = {784, 128, 128, 10};

static uint32_t rng = 12345;
static uint32_t next_u32(void) { return (rng = rng * 1664525u + 1013904223u) >> 8; }

/* A class-dependent band of bright pixels plus noise, so that the loss moves. */
static void make_rows(uint8_t *x, uint8_t *y, long n)
{
    for (long r = 0; r < n; r++) {
        int lab = (int)(next_u32() % 10);
        y[r] = (uint8_t)lab;
        for (int k = 0; k < dims.n0; k++) {
            int v = (int)(next_u32() % 120) + (k / 78 == lab ? 100 : 0);
            x[(size_t)r * dims.n0 + k] = (uint8_t)v;
        }
    }
}

static int failures;
#define EXPECT(cond, ...) do { if (!(cond)) { printf("FAIL: " __VA_ARGS__); printf("\n"); failures++; } } while (0)

static void one_type(int type, const char *name, double loss_tol, double param_tol, const uint8_t *tx,
                     const uint8_t *ty, const uint8_t *vx, const uint8_t *vy)
{
    mlp_layout L = mlp_layout_of(&dims);
    float *P = malloc(L.n * 4), *Pc = malloc(L.n * 4), *G = malloc(L.n * 4), *Pg = malloc(L.n * 4);
    float *X = malloc((size_t)N_TEST * dims.n0 * 4), *block = malloc(mlp_ws_floats(&dims, N_TEST) * 4);
    uint8_t y[N_TEST];
    int32_t idx[B];
    mlp_ws ws;
    mlp_ws_bind(&ws, &dims, N_TEST, block);
    mlp_init_he(&dims, P, 7);
    memcpy(Pc, P, L.n * 4);
    char msg[256];
    prec_cuda *c = prec_cuda_create(&dims, type, B, B, tx, ty, N_TRAIN, vx, vy, N_TEST, msg, sizeof msg);
    if (!c) {
        EXPECT(0, "%s: create: %s", name, msg);
        return;
    }
    EXPECT(prec_cuda_set_params(c, P) == 0 && prec_cuda_get_params(c, Pg) == 0 && !memcmp(P, Pg, L.n * 4),
           "%s: set/get params do not round-trip", name);
    double worst = 0;
    for (int t = 0; t < STEPS; t++) {
        for (int b = 0; b < B; b++)
            idx[b] = (int32_t)((t * 37 + b * 11) % N_TRAIN);
        for (int b = 0; b < B; b++) { /* the CPU's float32 step */
            y[b] = ty[idx[b]];
            for (int k = 0; k < dims.n0; k++)
                X[(size_t)b * dims.n0 + k] = tx[(size_t)idx[b] * dims.n0 + k] * (1.0f / 255.0f);
        }
        mlp_forward_naive(&dims, Pc, X, B, &ws, 1);
        double cpu = mlp_loss(&dims, y, B, &ws);
        mlp_backward_naive(&dims, Pc, X, B, &ws, G, 1);
        mlp_sgd(Pc, G, L.n, LR);
        double gpu = NAN;
        if (prec_cuda_step(c, idx, B, LR) || prec_cuda_sync(c) || prec_cuda_take_loss(c, &gpu)) {
            EXPECT(0, "%s: step %d: %s", name, t, prec_cuda_error(c));
            break;
        }
        worst = fmax(worst, fabs(gpu - cpu) / cpu);
    }
    printf("%s: worst step loss difference %.3g (tolerance %.3g)\n", name, worst, loss_tol);
    EXPECT(worst <= loss_tol, "%s: loss differs by %g", name, worst);
    double e = 0, w = 0;
    prec_cuda_get_params(c, Pg);
    for (size_t i = 0; i < L.n; i++)
        e += (Pg[i] - Pc[i]) * (double)(Pg[i] - Pc[i]), w += Pc[i] * (double)Pc[i];
    printf("%s: final weights' relative difference %.3g (tolerance %.3g)\n", name, sqrt(e / w), param_tol);
    EXPECT(sqrt(e / w) <= param_tol, "%s: weights differ by %g", name, sqrt(e / w));
    double scale;
    long skipped, correct = -1;
    EXPECT(prec_cuda_scaler(c, &scale, &skipped) == 0 && skipped == 0 &&
               scale == (type == PREC_CUDA_F32 ? 1.0 : 65536.0),
           "%s: scale %g, %ld skipped", name, scale, skipped);
    for (int b = 0; b < N_TEST; b++) /* the CPU's count with its weights */
        for (int k = 0; k < dims.n0; k++)
            X[(size_t)b * dims.n0 + k] = vx[(size_t)b * dims.n0 + k] * (1.0f / 255.0f);
    mlp_forward_naive(&dims, Pc, X, N_TEST, &ws, 1);
    long cpu_correct = mlp_correct(&dims, ws.z3, vy, N_TEST);
    EXPECT(prec_cuda_evaluate(c, &correct) == 0 && labs(correct - cpu_correct) <= N_TEST / 10,
           "%s: %ld test rows right, the CPU %ld", name, correct, cpu_correct);
    /* the spans of every step, read-back and the evaluation's count: each kind measured, positive */
    for (int k = 0; k < PREC_SPANS; k++) {
        double ms = NAN;
        EXPECT(prec_cuda_span_take(c, k, &ms) == 0 && ms > 0 && ms < 1e4, "%s: span %d: %g ms (%s)", name, k, ms,
               prec_cuda_error(c));
        EXPECT(prec_cuda_span_take(c, k, &ms) == 0 && ms == 0, "%s: span %d not emptied by its take: %g ms", name, k,
               ms);
    }
    prec_cuda_destroy(c);
    free(P), free(Pc), free(G), free(Pg), free(X), free(block);
}

int main(void)
{
    if (mlp_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    uint8_t *tx = malloc((size_t)N_TRAIN * dims.n0), *ty = malloc(N_TRAIN);
    uint8_t *vx = malloc((size_t)N_TEST * dims.n0), *vy = malloc(N_TEST);
    make_rows(tx, ty, N_TRAIN);
    make_rows(vx, vy, N_TEST);
    one_type(PREC_CUDA_F32, "cuda-fp32", 1e-4, 1e-4, tx, ty, vx, vy);
    one_type(PREC_CUDA_F16, "cuda-fp16", 1e-2, 2e-2, tx, ty, vx, vy);
    one_type(PREC_CUDA_BF16, "cuda-bf16", 5e-2, 1e-1, tx, ty, vx, vy);
    free(tx), free(ty), free(vx), free(vy);
    return failures ? 1 : 0;
}
