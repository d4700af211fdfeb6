/*
 * tests/cnn/test_cnn_cuda.c: the device backends of kernels/cnn/cnn_cuda.h (cuda: own kernels; cudnn:
 * cuDNN + cuBLAS), (and cudnn-heuristic: cuDNN with the heuristic's algorithms), each without and with the CUDA graph, train like the double-precision reference
 * cnn_ref_loss_grad with SGD momentum, on a small deterministic synthetic set: 256 training rows of
 * 28 x 28 bytes, 100 test rows, the study's network (cnn_dims_init(28, 28)), He-initialised weights
 * (cnn_init_he) and the same 12 batches. Batch sizes cycle through 32 (= max_batch), 19 and 1, so each
 * size gets a graph that is captured once and replayed three times, and every grid tail runs; the rate
 * changes every step (lr_s = 0.05 / (1 + 0.1 s), mu = 0.9), so a graph that froze its rate fails.
 * Pixels are never 0 (noise in 1-255 plus a class band): no two conv outputs in a pooling window tie
 * exactly except at 0, where every tie rule gives the same gradient (cuDNN's may differ from the CPU's
 * on positive ties: kernels/cnn/cnn_cudnn.cu).
 * Checks, for each of the six (backend, graph) runs:
 *   - every step's batch-mean loss: |gpu - ref| <= 1e-4 |ref| (a float forward against a double one:
 *     ~1e-6; a wrong layer gives percent-level differences at once);
 *   - the parameters after the first step and after all 12: per block (conv1.w ... dense2.b), the
 *     displacement from the initial weights against the reference's, ||P_gpu - P_ref|| / ||P_ref - P0||
 *     <= 1e-3 after one step (= the gradient's relative error: float sums over up to 21632 terms,
 *     ~1e-5) and <= 5e-3 after 12 (the float trajectory drifts from the double one);
 *   - evaluate's count against cnn_correct on the CPU forward (the naive layers) with the GPU's final
 *     weights: equal, except for rows whose two largest CPU logits are within 1e-4 (counted, printed);
 *   - graph mode enqueues exactly 2 operations a step (the copy and the launch) and fewer than without;
 *     phase times are finite without a graph, NAN with one; the h2d, kernel and d2h spans (the record's
 *     phases) are positive and a second take is 0; the loss accumulator is 0 after a take and
 *     an evaluation; set/get_params round-trip exactly; an out-of-range index is refused.
 * Plain main, meson's exitcode protocol: 0 pass, 1 fail, 77 skip (no CUDA device).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnn/cnn_cuda.h"
#include "cnn/cnn_kernels.h"
#include "sl_config.h"

#define N_TRAIN 256
#define N_TEST 100
#define MAXB 32
#define STEPS 12
#define LR0 0.05
#define MU 0.9f
#define LOSS_TOL 1e-4
#define STEP1_TOL 1e-3
#define STEPS_TOL 5e-3
#define TIE_EPS 1e-4f
#define NBLOCKS 8

static cnn_dims dims;
static cnn_layout L;
static size_t n0; /* bytes per image */

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

/* Noise in 1-255 (never 0) with a brighter band of rows chosen by the label, so the loss moves. */
static void make_rows(uint8_t *x, uint8_t *y, long n)
{
    for (long r = 0; r < n; r++) {
        int lab = (int)(next_u32() % 10);
        y[r] = (uint8_t)lab;
        for (size_t k = 0; k < n0; k++) {
            int v = 1 + (int)(next_u32() % 150);
            if ((int)(k / 28) / 3 == lab)
                v += 100;
            x[(size_t)r * n0 + k] = (uint8_t)(v > 255 ? 255 : v);
        }
    }
}

static int batch_size(int s) { return s % 3 == 0 ? MAXB : s % 3 == 1 ? 19 : 1; }
static float rate(int s) { return (float)(LR0 / (1.0 + 0.1 * s)); }
static void batch_idx(int s, int B, int32_t *idx)
{
    for (int b = 0; b < B; b++)
        idx[b] = (int32_t)(((long)s * 97 + (long)b * 13) % N_TRAIN);
}

/* The rows scaled as the device's gather does them (the float 1/255), then widened to double. */
static void gather(const uint8_t *src_x, const uint8_t *src_y, const int32_t *idx, int B, float *X, double *Xd,
                   uint8_t *y)
{
    for (int b = 0; b < B; b++) {
        for (size_t k = 0; k < n0; k++) {
            float v = (float)src_x[(size_t)idx[b] * n0 + k] * (1.0f / 255.0f);
            if (X)
                X[(size_t)b * n0 + k] = v;
            if (Xd)
                Xd[(size_t)b * n0 + k] = v;
        }
        y[b] = src_y[idx[b]];
    }
}

typedef struct ref_run {
    double losses[STEPS];
    double *P1, *Pn; /* after the first step, after all */
} ref_run;

/* The double reference trajectory: G from cnn_ref_loss_grad, V = mu V + G, P -= lr V. */
static int run_ref(const float *P0, const uint8_t *trx, const uint8_t *try_, ref_run *out)
{
    double *P = malloc(L.n * sizeof(double)), *V = calloc(L.n, sizeof(double)), *G = malloc(L.n * sizeof(double));
    double *X = malloc((size_t)MAXB * n0 * sizeof(double));
    double *ws = malloc(cnn_ref_ws_doubles(&dims, MAXB) * sizeof(double));
    out->P1 = malloc(L.n * sizeof(double));
    if (!P || !V || !G || !X || !ws || !out->P1) {
        printf("FAIL: out of host memory\n");
        return -1;
    }
    for (size_t i = 0; i < L.n; i++)
        P[i] = P0[i];
    uint8_t y[MAXB];
    int32_t idx[MAXB];
    for (int s = 0; s < STEPS; s++) {
        int B = batch_size(s);
        batch_idx(s, B, idx);
        gather(trx, try_, idx, B, NULL, X, y);
        out->losses[s] = cnn_ref_loss_grad(&dims, P, X, y, B, G, ws);
        for (size_t i = 0; i < L.n; i++) {
            V[i] = (double)MU * V[i] + G[i];
            P[i] -= (double)rate(s) * V[i];
        }
        if (s == 0)
            memcpy(out->P1, P, L.n * sizeof(double));
    }
    out->Pn = P;
    free(V);
    free(G);
    free(X);
    free(ws);
    return 0;
}

static const char *block_name[NBLOCKS] = {"conv1.w", "conv1.b", "conv2.w", "conv2.b",
                                          "dense1.w", "dense1.b", "dense2.w", "dense2.b"};

/* Per block, ||P - ref|| / ||ref - P0||; prints them; returns 1 when one is over tol (or NaN). */
static int compare_params(const char *name, const char *when, const float *P, const double *ref, const float *P0,
                          double tol)
{
    const size_t off[NBLOCKS + 1] = {L.c1w, L.c1b, L.c2w, L.c2b, L.d1w, L.d1b, L.d2w, L.d2b, L.n};
    int bad = 0;
    printf("%s: %s, |gpu - ref| / |ref - P0| per block:", name, when);
    for (int k = 0; k < NBLOCKS; k++) {
        double num = 0.0, den = 0.0;
        for (size_t i = off[k]; i < off[k + 1]; i++) {
            double e = (double)P[i] - ref[i], m = ref[i] - (double)P0[i];
            num += e * e;
            den += m * m;
        }
        double rel = den > 0.0 ? sqrt(num / den) : sqrt(num);
        printf(" %s %.2g", block_name[k], rel);
        if (!(rel <= tol))
            bad = 1;
    }
    printf(" (limit %g)\n", tol);
    if (bad)
        printf("FAIL %s: parameters %s differ from the reference beyond %g\n", name, when, tol);
    return bad;
}

/* Test rows the CPU forward (naive layers, float) gets right with weights P, and its near-ties. */
static long cpu_correct(const float *P, const uint8_t *tex, const uint8_t *tey, int *ties)
{
    const cnn_layers naive = {cnn_conv_forward_naive, cnn_conv_backward_naive, cnn_dense_forward_naive,
                              cnn_dense_backward_naive, NULL, NULL, NULL, NULL, NULL};
    size_t nf = cnn_ws_floats(&dims, MAXB, 1);
    float *block = aligned_alloc(64, (nf * sizeof(float) + 63) / 64 * 64);
    uint8_t *argmax = malloc(cnn_ws_argmax_bytes(&dims, MAXB));
    float *X = malloc((size_t)MAXB * n0 * sizeof(float));
    if (!block || !argmax || !X)
        return -1;
    cnn_ws ws;
    cnn_ws_bind(&ws, &dims, MAXB, 1, block, argmax);
    long correct = 0;
    *ties = 0;
    int32_t idx[MAXB];
    uint8_t y[MAXB];
    for (int r = 0; r < N_TEST; r += MAXB) {
        int B = N_TEST - r < MAXB ? N_TEST - r : MAXB;
        for (int b = 0; b < B; b++)
            idx[b] = r + b;
        gather(tex, tey, idx, B, X, NULL, y);
        cnn_forward(&dims, &naive, P, X, B, &ws, 1, NULL, NULL);
        correct += cnn_correct(&dims, ws.z4, y, B);
        for (int b = 0; b < B; b++) {
            const float *z = ws.z4 + (size_t)b * dims.dense2.nout;
            float m1 = -INFINITY, m2 = -INFINITY;
            for (int j = 0; j < dims.dense2.nout; j++) {
                if (z[j] > m1) {
                    m2 = m1;
                    m1 = z[j];
                } else if (z[j] > m2) {
                    m2 = z[j];
                }
            }
            *ties += m1 - m2 <= TIE_EPS;
        }
    }
    free(block);
    free(argmax);
    free(X);
    return correct;
}

typedef struct data {
    const uint8_t *trx, *try_, *tex, *tey;
    const float *P0;
    const ref_run *ref;
} data;

/* The contract around the steps: round trip, a refused index. Returns failed checks. */
static int check_setup(cnn_cuda *c, const char *name, const data *t, float *P)
{
    int fails = 0;
    if (cnn_cuda_set_params(c, t->P0) || cnn_cuda_get_params(c, P)) {
        printf("FAIL %s: params: %s\n", name, cnn_cuda_error(c));
        return 1;
    }
    if (memcmp(P, t->P0, L.n * sizeof(float)) != 0) {
        printf("FAIL %s: parameters read back differ from those written\n", name);
        fails++;
    }
    int32_t bad[2] = {0, N_TRAIN};
    if (cnn_cuda_data(c, bad, 2) == 0) {
        printf("FAIL %s: index %d accepted with %d training rows\n", name, N_TRAIN, N_TRAIN);
        fails++;
    } else {
        printf("%s: bad index refused: %s\n", name, cnn_cuda_error(c));
    }
    return fails;
}

/* The STEPS steps, each loss against the reference, the parameters after the first and the last. */
static int check_steps(cnn_cuda *c, const char *name, const data *t, float *P)
{
    int fails = 0, worst_step = 0;
    double worst = 0.0, first = NAN, last = NAN;
    for (int s = 0; s < STEPS; s++) {
        int B = batch_size(s);
        int32_t idx[MAXB];
        batch_idx(s, B, idx);
        double loss = NAN;
        if (cnn_cuda_data(c, idx, B) || cnn_cuda_forward(c, B) || cnn_cuda_loss(c, B) || cnn_cuda_backward(c, B) ||
            cnn_cuda_update(c, B, rate(s), MU) || cnn_cuda_take_loss(c, &loss)) {
            printf("FAIL %s: step %d: %s\n", name, s, cnn_cuda_error(c));
            return fails + 1;
        }
        first = s == 0 ? loss : first;
        last = loss;
        double ref = t->ref->losses[s], rel = fabs(loss - ref) / fmax(fabs(ref), 1e-30);
        if (!(rel <= LOSS_TOL)) { /* also catches NaN */
            printf("FAIL %s: step %d (B=%d): loss %.8g, reference %.8g, relative difference %.3g > %g\n", name, s, B,
                   loss, ref, rel, LOSS_TOL);
            fails++;
        }
        if (!(rel <= worst)) {
            worst = rel;
            worst_step = s;
        }
        if (s == 0) {
            if (cnn_cuda_get_params(c, P)) {
                printf("FAIL %s: get params: %s\n", name, cnn_cuda_error(c));
                return fails + 1;
            }
            fails += compare_params(name, "after step 1", P, t->ref->P1, t->P0, STEP1_TOL);
        }
    }
    printf("%s: %d steps (B = 32, 19, 1, ...), loss %.6f -> %.6f (reference %.6f -> %.6f), worst relative loss "
           "difference %.3g at step %d (limit %g)\n",
           name, STEPS, first, last, t->ref->losses[0], t->ref->losses[STEPS - 1], worst, worst_step, LOSS_TOL);
    if (cnn_cuda_get_params(c, P)) {
        printf("FAIL %s: get params: %s\n", name, cnn_cuda_error(c));
        return fails + 1;
    }
    return fails + compare_params(name, "after all steps", P, t->ref->Pn, t->P0, STEPS_TOL);
}

/* Launches, phase times, evaluation, the accumulator; P: the device's final weights. */
static int check_reports(cnn_cuda *c, const char *name, int graph, const data *t, const float *P, double *launches)
{
    int fails = 0;
    double ms[5];
    *launches = cnn_cuda_launches_per_step(c);
    if (cnn_cuda_phase_ms(c, ms)) {
        printf("FAIL %s: phase_ms: %s\n", name, cnn_cuda_error(c));
        return 1;
    }
    printf("%s: %g operations a step; phases (ms) data %.4g forward %.4g loss %.4g backward %.4g update %.4g\n", name,
           *launches, ms[0], ms[1], ms[2], ms[3], ms[4]);
    for (int i = 0; i < 5; i++)
        if (graph ? !isnan(ms[i]) : !(ms[i] >= 0.0)) {
            printf("FAIL %s: phase %d time %g: want %s\n", name, i, ms[i], graph ? "NAN (graph)" : "finite, >= 0");
            fails++;
            break;
        }
    /* every step's copy, kernels and read-backs are event spans; a take sums and empties */
    for (int k = 0; k < CNN_SPANS; k++) {
        double sum = NAN, again = NAN;
        if (cnn_cuda_span_take(c, k, &sum) || cnn_cuda_span_take(c, k, &again) || !(sum > 0) || again != 0) {
            printf("FAIL %s: span %d (h2d, kernel, d2h): %g ms, then %g (want > 0, then 0) %s\n", name, k, sum,
                   again, cnn_cuda_error(c));
            fails++;
        }
    }
    if (graph && *launches != 2.0) {
        printf("FAIL %s: a graph step enqueued %g operations, want 2 (copy + launch)\n", name, *launches);
        fails++;
    }
    long correct = -1;
    double left = -1.0;
    if (cnn_cuda_evaluate(c, &correct) || cnn_cuda_take_loss(c, &left)) {
        printf("FAIL %s: evaluate: %s\n", name, cnn_cuda_error(c));
        return fails + 1;
    }
    if (left != 0.0) {
        printf("FAIL %s: loss accumulator after take + evaluate is %g, want 0\n", name, left);
        fails++;
    }
    int ties = 0;
    long cpu = cpu_correct(P, t->tex, t->tey, &ties);
    printf("%s: test rows correct %ld of %d (cpu forward with the same weights %ld; %d near-ties)\n", name, correct,
           N_TEST, cpu, ties);
    if (cpu < 0 || labs(correct - cpu) > ties) {
        printf("FAIL %s: evaluate counts %ld correct, the cpu %ld\n", name, correct, cpu);
        fails++;
    }
    return fails;
}

/* One (backend, graph) run; returns failed checks. launches: its operations per step. */
static int run_gpu(int backend, int graph, const data *t, double *launches)
{
    char name[32], msg[512];
    snprintf(name, sizeof name, "%s graph=%d",
             backend == CNN_CUDA_OWN ? "cuda" : backend == CNN_CUDA_CUDNN ? "cudnn" : "cudnn-heuristic", graph);
    *launches = NAN;
    cnn_cuda *c = cnn_cuda_create(&dims, backend, graph, MAXB, t->trx, t->try_, N_TRAIN, t->tex, t->tey, N_TEST, msg,
                                  sizeof msg);
    if (!c) {
        printf("FAIL %s: create: %s\n", name, msg);
        return 1;
    }
    const char *alg = cnn_cuda_algorithms(c);
    printf("%s: context holds %zu bytes of device memory; algorithms: %s\n", name, cnn_cuda_bytes(c),
           *alg ? alg : "(none: own kernels)");
    int fails = (backend != CNN_CUDA_OWN) != (*alg != 0);
    double search = cnn_cuda_algo_search_s(c);
    if (backend != CNN_CUDA_OWN && !(search >= 0)) {
        printf("FAIL %s: algorithm search time %g s\n", name, search);
        fails++;
    }
    if (fails)
        printf("FAIL %s: algorithms text '%s'\n", name, alg);
    float *P = malloc(L.n * sizeof(float));
    if (!P) {
        cnn_cuda_destroy(c);
        return fails + 1;
    }
    int f = check_setup(c, name, t, P);
    if (!f)
        f = check_steps(c, name, t, P);
    if (!f)
        f = check_reports(c, name, graph, t, P, launches);
    free(P);
    cnn_cuda_destroy(c);
    return fails + f;
}

int main(void)
{
    int ndev = cnn_cuda_device_count();
    if (ndev == 0) {
        printf("no CUDA device: skipping the cnn cuda/cudnn comparison\n");
        return 77;
    }
    printf("%d CUDA device(s)\n", ndev);
    if (cnn_dims_init(&dims, 28, 28)) {
        printf("FAIL: cnn_dims_init(28, 28)\n");
        return 1;
    }
    L = cnn_layout_of(&dims);
    n0 = (size_t)dims.conv1.cin * dims.conv1.h * dims.conv1.w;
    uint8_t *trx = malloc(N_TRAIN * n0), *try_ = malloc(N_TRAIN), *tex = malloc(N_TEST * n0), *tey = malloc(N_TEST);
    float *P0 = malloc(L.n * sizeof(float));
    if (!trx || !try_ || !tex || !tey || !P0) {
        printf("FAIL: out of host memory\n");
        return 1;
    }
    make_rows(trx, try_, N_TRAIN);
    make_rows(tex, tey, N_TEST);
    cnn_init_he(&dims, P0, 42);
    ref_run ref;
    if (run_ref(P0, trx, try_, &ref))
        return 1;
    printf("reference (double): loss %.6f -> %.6f over %d steps\n", ref.losses[0], ref.losses[STEPS - 1], STEPS);

    const data t = {trx, try_, tex, tey, P0, &ref};
    int fails = 0;
    const int backends[3] = {CNN_CUDA_OWN, CNN_CUDA_CUDNN, CNN_CUDA_CUDNN_HEURISTIC};
    static const char *names[3] = {"cuda", "cudnn", "cudnn-heuristic"};
    for (int k = 0; k < 3; k++) {
        if (backends[k] != CNN_CUDA_OWN && !(SL_HAVE_CUDNN && SL_HAVE_CUBLAS)) {
            printf("%s: not built (no cuDNN or cuBLAS): skipped\n", names[k]);
            continue;
        }
        double plain = NAN, graphed = NAN;
        fails += run_gpu(backends[k], 0, &t, &plain);
        fails += run_gpu(backends[k], 1, &t, &graphed);
        printf("%s: operations a step %g without the graph, %g with it\n", names[k], plain, graphed);
        if (!(graphed < plain)) {
            printf("FAIL %s: the graph step does not enqueue fewer operations\n", names[k]);
            fails++;
        }
    }
    free(ref.P1);
    free(ref.Pn);
    free(trx);
    free(try_);
    free(tex);
    free(tey);
    free(P0);
    if (fails) {
        printf("FAIL: %d check(s) failed\n", fails);
        return 1;
    }
    printf("PASS: cuda, cudnn and cudnn-heuristic, with and without the graph, agree with the double reference\n");
    return 0;
}
