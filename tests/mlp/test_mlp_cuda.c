/*
 * tests/mlp/test_mlp_cuda.c: both device variants of kernels/mlp/mlp_cuda.h (cuda: own kernels, cublas)
 * train like the CPU path (mlp_forward_naive, mlp_loss, mlp_backward_naive, mlp_sgd) on a small
 * deterministic synthetic set: 512 training rows of 784 bytes, 128 test rows, the study's 784-128-128-10,
 * the same He-initialised weights (mlp_init_he) and the same 50 batches. Batch sizes cycle through 50
 * (= max_batch), 37 and 1, so every tile tail and the one-row case run. Checks:
 *   - every step's batch-mean loss: |gpu - cpu| <= 1e-4 * |cpu| (float sums in another order drift by
 *     ~1e-6 over 50 steps; a wrong product, bias or mask gives percent-level differences at once);
 *   - the final parameters: max |gpu - cpu| <= 5e-4 per block (W1, b1, ... b3), printed per block;
 *   - mlp_cuda_evaluate's count against mlp_correct on the CPU forward, over 128 test rows in chunks of
 *     50 (50 + 50 + 28): equal, except for rows whose two largest CPU logits are within 1e-4 (a tie that
 *     float rounding may break either way; counted and printed);
 *   - set/get_params round-trip exactly, and an out-of-range index is refused with a message;
 *   - the same for the cuda variant fed from the host (seed 003, part 5): rows copied from pageable
 *     memory on the compute stream (feed=sync) and from two pinned slots on a second stream
 *     (feed=overlap), whose events must keep every step's rows intact; an unknown feed is refused.
 * Plain main, meson's exitcode protocol: 0 pass, 1 fail, 77 skip (no CUDA device).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp/mlp_kernels.h"
#include "mlp/mlp_cuda.h"

#define N_TRAIN 512
#define N_TEST 128
#define MAXB 50
#define STEPS 50
#define LR 0.05f
#define LOSS_TOL 1e-4
#define PARAM_TOL 5e-4
#define TIE_EPS 1e-4f

static const mlp_dims dims = {784, 128, 128, 10};

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

/* Rows with some structure (a class-dependent band of bright pixels plus noise, a third of the pixels
 * zero as in real images) so that the loss moves and ReLU masks are mixed. */
static void make_rows(uint8_t *x, uint8_t *y, long n)
{
    for (long r = 0; r < n; r++) {
        int lab = (int)(next_u32() % 10);
        y[r] = (uint8_t)lab;
        for (int k = 0; k < dims.n0; k++) {
            uint32_t u = next_u32();
            int v = (u % 3 == 0) ? 0 : (int)((u >> 8) % 160);
            if (k / 78 == lab)
                v += 90;
            x[(size_t)r * dims.n0 + k] = (uint8_t)(v > 255 ? 255 : v);
        }
    }
}

static void gather(const uint8_t *src_x, const uint8_t *src_y, const int32_t *idx, int B, float *X, uint8_t *y)
{
    for (int b = 0; b < B; b++) {
        for (int k = 0; k < dims.n0; k++)
            X[(size_t)b * dims.n0 + k] = (float)src_x[(size_t)idx[b] * dims.n0 + k] / 255.0f;
        y[b] = src_y[idx[b]];
    }
}

static int batch_size(int step) { return step % 3 == 0 ? MAXB : step % 3 == 1 ? 37 : 1; }

/* The step's indices: a deterministic stride walk over the training rows. */
static void batch_idx(int step, int B, int32_t *idx)
{
    for (int b = 0; b < B; b++)
        idx[b] = (int32_t)(((long)step * 97 + (long)b * 13) % N_TRAIN);
}

typedef struct cpu_run {
    float losses[STEPS];
    float *P;     /* after the steps */
    long correct; /* after the steps */
    int ties;     /* test rows whose top two logits are within TIE_EPS */
} cpu_run;

static int run_cpu(const float *P0, const uint8_t *trx, const uint8_t *try_, const uint8_t *tex,
                   const uint8_t *tey, cpu_run *out)
{
    mlp_layout L = mlp_layout_of(&dims);
    float *P = malloc(L.n * sizeof(float)), *G = malloc(L.n * sizeof(float));
    float *X = malloc((size_t)MAXB * dims.n0 * sizeof(float));
    float *block = malloc(mlp_ws_floats(&dims, MAXB) * sizeof(float));
    uint8_t y[MAXB];
    int32_t idx[MAXB];
    if (!P || !G || !X || !block) {
        printf("FAIL: out of host memory\n");
        return -1;
    }
    memcpy(P, P0, L.n * sizeof(float));
    mlp_ws ws;
    mlp_ws_bind(&ws, &dims, MAXB, block);
    for (int s = 0; s < STEPS; s++) {
        int B = batch_size(s);
        batch_idx(s, B, idx);
        gather(trx, try_, idx, B, X, y);
        mlp_forward_naive(&dims, P, X, B, &ws, 1);
        out->losses[s] = mlp_loss(&dims, y, B, &ws);
        mlp_backward_naive(&dims, P, X, B, &ws, G, 1);
        mlp_sgd(P, G, L.n, LR);
    }
    out->correct = 0;
    out->ties = 0;
    for (int r = 0; r < N_TEST; r += MAXB) {
        int B = N_TEST - r < MAXB ? N_TEST - r : MAXB;
        for (int b = 0; b < B; b++)
            idx[b] = r + b;
        gather(tex, tey, idx, B, X, y);
        mlp_forward_naive(&dims, P, X, B, &ws, 1);
        out->correct += mlp_correct(&dims, ws.z3, y, B);
        for (int b = 0; b < B; b++) {
            const float *z = ws.z3 + (size_t)b * dims.n3;
            float m1 = -INFINITY, m2 = -INFINITY;
            for (int j = 0; j < dims.n3; j++) {
                if (z[j] > m1) {
                    m2 = m1;
                    m1 = z[j];
                } else if (z[j] > m2) {
                    m2 = z[j];
                }
            }
            out->ties += m1 - m2 <= TIE_EPS;
        }
    }
    out->P = P;
    free(G);
    free(X);
    free(block);
    return 0;
}

/* One device variant against the CPU run; returns the number of failed checks (or 1 on an error). */
static int run_gpu(int use_cublas, int feed, const float *P0, const uint8_t *trx, const uint8_t *try_,
                   const uint8_t *tex, const uint8_t *tey, const cpu_run *cpu)
{
    static const char *feeds[3] = {"", " feed=sync", " feed=overlap"};
    char name[48], msg[256];
    snprintf(name, sizeof name, "%s%s", use_cublas ? "cublas" : "cuda", feeds[feed]);
    mlp_layout L = mlp_layout_of(&dims);
    int fails = 0;
    mlp_cuda *c = mlp_cuda_create(&dims, use_cublas, MAXB, trx, try_, N_TRAIN, tex, tey, N_TEST, msg, sizeof msg);
    if (!c) {
        printf("FAIL %s: create: %s\n", name, msg);
        return 1;
    }
    if (mlp_cuda_set_feed(c, 3) == 0) {
        printf("FAIL %s: feed 3 accepted\n", name);
        mlp_cuda_destroy(c);
        return 1;
    }
    if (mlp_cuda_set_feed(c, feed)) {
        printf("FAIL %s: set_feed: %s\n", name, mlp_cuda_error(c));
        mlp_cuda_destroy(c);
        return 1;
    }
    printf("%s: context holds %zu bytes of device memory\n", name, mlp_cuda_bytes(c));
    float *P = malloc(L.n * sizeof(float));
    if (!P) {
        printf("FAIL %s: out of host memory\n", name);
        mlp_cuda_destroy(c);
        return 1;
    }

    /* set/get round trip */
    if (mlp_cuda_set_params(c, P0) || mlp_cuda_get_params(c, P)) {
        printf("FAIL %s: params: %s\n", name, mlp_cuda_error(c));
        fails++;
        goto done;
    }
    if (memcmp(P, P0, L.n * sizeof(float)) != 0) {
        printf("FAIL %s: parameters read back differ from those written\n", name);
        fails++;
    }

    /* a bad index is refused before anything is enqueued */
    int32_t bad[2] = {0, N_TRAIN};
    if (mlp_cuda_data(c, bad, 2) == 0) {
        printf("FAIL %s: index %d accepted with %d training rows\n", name, N_TRAIN, N_TRAIN);
        fails++;
    } else {
        printf("%s: bad index refused: %s\n", name, mlp_cuda_error(c));
    }

    double worst = 0.0, first = NAN, last = NAN;
    int worst_step = 0;
    for (int s = 0; s < STEPS; s++) {
        int B = batch_size(s);
        int32_t idx[MAXB];
        batch_idx(s, B, idx);
        double loss = NAN;
        int data = mlp_cuda_phase_mark(c, 0) ||
                   (feed ? mlp_cuda_data_host(c, trx, try_, idx, B) : mlp_cuda_data(c, idx, B));
        if (data || mlp_cuda_phase_mark(c, 1) || mlp_cuda_forward(c, B) || mlp_cuda_phase_mark(c, 2) ||
            mlp_cuda_loss(c, B) || mlp_cuda_phase_mark(c, 3) || mlp_cuda_backward(c, B) ||
            mlp_cuda_phase_mark(c, 4) || mlp_cuda_update(c, LR) || mlp_cuda_phase_mark(c, 5) ||
            mlp_cuda_sync(c) || mlp_cuda_take_loss(c, &loss)) {
            printf("FAIL %s: step %d: %s\n", name, s, mlp_cuda_error(c));
            fails++;
            goto done;
        }
        if (s == 0)
            first = loss;
        last = loss;
        double ref = cpu->losses[s], rel = fabs(loss - ref) / fmax(fabs(ref), 1e-30);
        if (!(rel <= LOSS_TOL)) { /* also catches NaN */
            printf("FAIL %s: step %d (B=%d): loss %.8g, cpu %.8g, relative difference %.3g > %g\n", name, s, B,
                   loss, ref, rel, LOSS_TOL);
            fails++;
        }
        if (!(rel <= worst)) {
            worst = rel;
            worst_step = s;
        }
    }
    /* the first step was sampled (MLP_PHASE_EVERY), so every phase has a device time */
    double ms[MLP_PHASES];
    if (mlp_cuda_phase_ms(c, ms) != 0 || !(ms[0] >= 0 && ms[1] > 0 && ms[2] > 0 && ms[3] > 0 && ms[4] > 0)) {
        printf("FAIL %s: phase device times %g %g %g %g %g ms (%s)\n", name, ms[0], ms[1], ms[2], ms[3], ms[4],
               mlp_cuda_error(c));
        fails++;
    }
    /* every step's copies, kernels and read-backs are event spans; a take sums and empties */
    for (int k = 0; k < MLP_SPANS; k++) {
        double sum = NAN, again = NAN;
        if (mlp_cuda_span_take(c, k, &sum) || mlp_cuda_span_take(c, k, &again) || !(sum > 0) || again != 0) {
            printf("FAIL %s: span %d (h2d, kernel, d2h): %g ms, then %g (want > 0, then 0) %s\n", name, k, sum,
                   again, mlp_cuda_error(c));
            fails++;
        }
    }
    printf("%s: %d SGD steps (B = 50, 37, 1, ...; lr %g), loss %.6f -> %.6f (cpu %.6f -> %.6f), "
           "worst relative loss difference %.3g at step %d (limit %g)\n",
           name, STEPS, (double)LR, first, last, (double)cpu->losses[0],
           (double)cpu->losses[STEPS - 1], worst, worst_step, LOSS_TOL);

    if (mlp_cuda_get_params(c, P)) {
        printf("FAIL %s: get params: %s\n", name, mlp_cuda_error(c));
        fails++;
        goto done;
    }
    {
        const char *bn[6] = {"W1", "b1", "W2", "b2", "W3", "b3"};
        size_t off[7] = {L.W1, L.b1, L.W2, L.b2, L.W3, L.b3, L.n};
        printf("%s: final parameters, max |gpu - cpu| per block:", name);
        int bad_block = -1;
        for (int k = 0; k < 6; k++) {
            double m = 0.0;
            for (size_t i = off[k]; i < off[k + 1]; i++) {
                double e = fabs((double)P[i] - (double)cpu->P[i]);
                if (!(e <= m))
                    m = e; /* NaN sticks */
            }
            printf(" %s %.2g", bn[k], m);
            if (!(m <= PARAM_TOL) && bad_block < 0)
                bad_block = k;
        }
        printf(" (limit %g)\n", PARAM_TOL);
        if (bad_block >= 0) {
            printf("FAIL %s: final parameters differ from the cpu's beyond %g (first in %s)\n", name, PARAM_TOL,
                   bn[bad_block]);
            fails++;
        }
    }

    long correct = -1;
    if (mlp_cuda_evaluate(c, &correct)) {
        printf("FAIL %s: evaluate: %s\n", name, mlp_cuda_error(c));
        fails++;
        goto done;
    }
    /* evaluate must not leave anything in the loss accumulator */
    double left = -1.0;
    if (mlp_cuda_take_loss(c, &left) || left != 0.0) {
        printf("FAIL %s: loss accumulator after take + evaluate is %g, want 0 (%s)\n", name, left,
               mlp_cuda_error(c));
        fails++;
    }
    printf("%s: test rows correct %ld of %d (cpu %ld; %d near-ties)\n", name, correct, N_TEST, cpu->correct,
           cpu->ties);
    if (labs(correct - cpu->correct) > cpu->ties) {
        printf("FAIL %s: evaluate counts %ld correct, the cpu %ld\n", name, correct, cpu->correct);
        fails++;
    }
done:
    free(P);
    mlp_cuda_destroy(c);
    return fails;
}

int main(void)
{
    int ndev = mlp_cuda_device_count();
    if (ndev == 0) {
        printf("no CUDA device: skipping the mlp cuda/cublas comparison\n");
        return 77;
    }
    printf("%d CUDA device(s)\n", ndev);
    mlp_layout L = mlp_layout_of(&dims);
    uint8_t *trx = malloc((size_t)N_TRAIN * dims.n0), *try_ = malloc(N_TRAIN);
    uint8_t *tex = malloc((size_t)N_TEST * dims.n0), *tey = malloc(N_TEST);
    float *P0 = malloc(L.n * sizeof(float));
    if (!trx || !try_ || !tex || !tey || !P0) {
        printf("FAIL: out of host memory\n");
        return 1;
    }
    make_rows(trx, try_, N_TRAIN);
    make_rows(tex, tey, N_TEST);
    mlp_init_he(&dims, P0, 42);

    cpu_run cpu;
    if (run_cpu(P0, trx, try_, tex, tey, &cpu))
        return 1;
    printf("cpu (naive): loss %.6f -> %.6f over %d steps, %ld of %d test rows correct\n", (double)cpu.losses[0],
           (double)cpu.losses[STEPS - 1], STEPS, cpu.correct, N_TEST);

    int fails = run_gpu(0, MLP_FEED_RESIDENT, P0, trx, try_, tex, tey, &cpu);
    fails += run_gpu(1, MLP_FEED_RESIDENT, P0, trx, try_, tex, tey, &cpu);
    fails += run_gpu(0, MLP_FEED_SYNC, P0, trx, try_, tex, tey, &cpu);
    fails += run_gpu(0, MLP_FEED_OVERLAP, P0, trx, try_, tex, tey, &cpu);

    free(cpu.P);
    free(trx);
    free(try_);
    free(tex);
    free(tey);
    free(P0);
    if (fails) {
        printf("FAIL: %d check(s) failed\n", fails);
        return 1;
    }
    printf("PASS: cuda and cublas variants, and cuda fed from the host, agree with the cpu path\n");
    return 0;
}
