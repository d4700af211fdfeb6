/*
 * kernels/mlp/omp.c: simd's blocks (mlp_simd.h) shared among `threads` OpenMP threads, one parallel
 * region per call. How the work is cut, so that no thread ever adds into another's output:
 *   forward: on two threads, layer 1 by its input index k (layer1_split_k: partial sums, one barrier,
 *            then each thread finishes its batch rows) and layers 2 and 3 by batch rows; on other thread
 *            counts all three layers by batch rows (a row's a1, a2 and z3 depend on that row only).
 *   backward, phase 1: by batch rows for the deltas d2 and d1 (again row-local), and by the input
 *            index k for dW3 (rows of dW3: each thread sums the whole batch for its rows, no reduction).
 *   backward, phase 2 (after the one barrier, since dW2 and dW1 need every row's d2 and d1): dW2 and
 *            dW1 by k, the bias sums by column.
 *   update (mlp_update_omp): each thread applies P -= lr G to exactly the rows and columns of G it
 *            wrote in phase 2, so the gradient never moves between the cores' caches. With the update
 *            on one thread, half of G (about 236 KB of its 473 KB) crossed to the other core every
 *            step: on a 2-vCPU VM that made the serial update about 8x slower than simd's (a hand
 *            measurement, not kept) whenever the two vCPUs sat on different L3 slices.
 *   data (mlp_gather_omp): the batch's bytes -> floats, each thread a range of the columns k of X:
 *            on two threads the columns its layer-1 products read (layer1_split_k), so X is written
 *            and read on the same core; on other counts layer 1 runs by rows and X crosses cores.
 * Ranges are equal even-sized parts (mlps_split): 32 + 32 of the study's 64 rows. Without OpenMP the
 * pragmas are ignored and the one thread takes every range: the same result as simd.
 */
#include "mlp_kernels.h"
#include "mlp_simd.h"

#include "kern_omp.h"
#include "kern_train.h"

/* Layer 1 for two threads, split by its input index k (the rows of W1 and the columns of X): thread t
 * sums X[:, k_t] W1[k_t, :] over its half of k for every batch row, thread 0 into a1 (with the bias),
 * thread 1 into d1 (scratch during the forward); after a barrier each thread adds the two partial sums
 * of its batch rows and applies ReLU. The k halves are mlps_split(n0)'s, the same rows of W1 whose
 * gradient each thread computes and whose update it applies (mlp_update_omp): W1 (401 KB) never
 * leaves the core that owns it; only the partial sums (B x n1 floats, 32 KB at batch 64) cross. */
static void layer1_split_k(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, int t)
{
    mlp_layout L = mlp_layout_of(d);
    int k0, k1, r0, r1;
    mlps_split(d->n0, t, 2, &k0, &k1);
    mlps_op o = {.A = X + k0, .ars = d->n0, .aps = 1, .B = P + L.W1 + (size_t)k0 * d->n1, .bps = d->n1,
                 .bcs = 1, .C = t == 0 ? ws->a1 : ws->d1, .ldc = d->n1, .n = d->n1, .k = k1 - k0,
                 .bias = t == 0 ? P + L.b1 : NULL, .relu = 0};
    KERN_SHARE mlps_gemm(&o, 0, B);
    #pragma omp barrier
    mlps_split(B, t, 2, &r0, &r1);
    KERN_SHARE for (size_t i = (size_t)r0 * d->n1; i < (size_t)r1 * d->n1; i++) {
        float z = ws->a1[i] + ws->d1[i];
        ws->a1[i] = z > 0.0f ? z : 0.0f;
    }
}

/* Thread t of nt's part of the forward (the cuts in the file's comment). */
static void forward_part(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, int t, int nt)
{
    int r0, r1;
    mlps_split(B, t, nt, &r0, &r1);
    if (nt == 2) { /* layer 1 by k; layers 2 and 3 (an eighth of the work) by rows */
        mlp_layout L = mlp_layout_of(d);
        layer1_split_k(d, P, X, B, ws, t);
        mlps_op o2 = {.A = ws->a1, .ars = d->n1, .aps = 1, .B = P + L.W2, .bps = d->n2, .bcs = 1,
                      .C = ws->a2, .ldc = d->n2, .n = d->n2, .k = d->n1, .bias = P + L.b2, .relu = 1};
        mlps_op o3 = {.A = ws->a2, .ars = d->n2, .aps = 1, .B = P + L.W3, .bps = d->n3, .bcs = 1,
                      .C = ws->z3, .ldc = d->n3, .n = d->n3, .k = d->n2, .bias = P + L.b3, .relu = 0};
        KERN_SHARE {
            mlps_gemm(&o2, r0, r1);
            mlps_gemm(&o3, r0, r1);
        }
    } else
        KERN_SHARE mlps_forward_rows(d, P, X, ws, r0, r1);
}

void mlp_forward_omp(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, int threads)
{
    if (threads < 1)
        threads = 1;
    #pragma omp parallel num_threads(threads)
    forward_part(d, P, X, B, ws, kern_tid(), kern_nthreads());
}

/* Column range of part t of nt for the bias sums (any cut will do: a few hundred adds each). */
static void cols(int n, int t, int nt, int *lo, int *hi)
{
    *lo = (int)((long)n * t / nt);
    *hi = (int)((long)n * (t + 1) / nt);
}

void mlp_backward_omp(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, float *G,
                      int threads)
{
    mlp_layout L = mlp_layout_of(d);
    if (B <= 0) {
        memset(G, 0, L.n * sizeof(float));
        return;
    }
    if (threads < 1)
        threads = 1;
    #pragma omp parallel num_threads(threads)
    {
        int t = kern_tid(), nt = kern_nthreads(), lo, hi;
        /* phase 1: own batch rows of d2, then d1 (d1's rows need only the same rows of d2) */
        KERN_SHARE {
            mlps_split(B, t, nt, &lo, &hi);
            mlps_delta_rows(ws->d3, P + L.W3, ws->a2, ws->d2, d->n2, d->n3, lo, hi);
            mlps_delta_rows(ws->d2, P + L.W2, ws->a1, ws->d1, d->n1, d->n2, lo, hi);
            mlps_split(d->n2, t, nt, &lo, &hi);
            mlps_wgrad_rows(ws->a2, ws->d3, G + L.W3, B, d->n2, d->n3, lo, hi);
            cols(d->n3, t, nt, &lo, &hi);
            mlps_colsum(ws->d3, G + L.b3, B, d->n3, lo, hi);
        }
        #pragma omp barrier
        /* phase 2: every row of d2 and d1 is there */
        KERN_SHARE {
        mlps_split(d->n1, t, nt, &lo, &hi);
        mlps_wgrad_rows(ws->a1, ws->d2, G + L.W2, B, d->n1, d->n2, lo, hi);
        mlps_split(d->n0, t, nt, &lo, &hi);
        mlps_wgrad_rows(X, ws->d1, G + L.W1, B, d->n0, d->n1, lo, hi);
        cols(d->n2, t, nt, &lo, &hi);
        mlps_colsum(ws->d2, G + L.b2, B, d->n2, lo, hi);
        cols(d->n1, t, nt, &lo, &hi);
        mlps_colsum(ws->d1, G + L.b1, B, d->n1, lo, hi);
        }
    }
}

/* P -= lr G over rows lo..hi of a rows x cols block at offset off. */
static void sgd_rows(float *P, const float *G, size_t off, int cols, int lo, int hi, float lr)
{
    size_t a = off + (size_t)lo * cols, b = off + (size_t)hi * cols;
    for (size_t i = a; i < b; i++)
        P[i] -= lr * G[i];
}

void mlp_update_omp(const mlp_dims *d, float *P, const float *G, float lr, int threads)
{
    mlp_layout L = mlp_layout_of(d);
    if (threads < 1)
        threads = 1;
    #pragma omp parallel num_threads(threads)
    KERN_SHARE {
        int t = kern_tid(), nt = kern_nthreads(), lo, hi;
        /* the cuts of mlp_backward_omp, in the same order */
        mlps_split(d->n2, t, nt, &lo, &hi);
        sgd_rows(P, G, L.W3, d->n3, lo, hi, lr);
        cols(d->n3, t, nt, &lo, &hi);
        sgd_rows(P, G, L.b3, 1, lo, hi, lr);
        mlps_split(d->n1, t, nt, &lo, &hi);
        sgd_rows(P, G, L.W2, d->n2, lo, hi, lr);
        mlps_split(d->n0, t, nt, &lo, &hi);
        sgd_rows(P, G, L.W1, d->n1, lo, hi, lr);
        cols(d->n2, t, nt, &lo, &hi);
        sgd_rows(P, G, L.b2, 1, lo, hi, lr);
        cols(d->n1, t, nt, &lo, &hi);
        sgd_rows(P, G, L.b1, 1, lo, hi, lr);
    }
}

#define GATHER_AHEAD 8 /* rows prefetched ahead, as train_gather (experiments/train/train.c) */

/* Thread t of nt's columns of the batch X (mlp_gather_omp). */
static void gather_part(const mlp_dims *d, const uint8_t *images, const int32_t *idx, int B, float *X, int t,
                        int nt)
{
    const float scale = 1.0f / 255.0f; /* as train_gather, so every variant sees the same floats */
    int k0, k1;
    mlps_split(d->n0, t, nt, &k0, &k1);
    KERN_SHARE for (int b = 0; b < B; b++) {
        const uint8_t *src = images + (size_t)idx[b] * d->n0;
        if (b + GATHER_AHEAD < B) { /* the rows are random rows of a 47 MB set: fetch ahead */
            const uint8_t *next = images + (size_t)idx[b + GATHER_AHEAD] * d->n0;
            for (int k = k0; k < k1; k += 64)
                __builtin_prefetch(next + k);
        }
        float *dst = X + (size_t)b * d->n0;
        for (int k = k0; k < k1; k++)
            dst[k] = (float)src[k] * scale;
    }
}

void mlp_gather_omp(const mlp_dims *d, const uint8_t *images, const int32_t *idx, int B, float *X,
                    int threads)
{
    if (threads < 1)
        threads = 1;
    #pragma omp parallel num_threads(threads)
    gather_part(d, images, idx, B, X, kern_tid(), kern_nthreads());
}

/* Thread t's part of the backward with the update fused (mlps_fused_ok(B)). Phase 1, own batch rows:
 * d2, then d1, from the old W3 and W2. After the one barrier, by the input index k: each thread's rows
 * of W3, W2 and W1 (at two threads the W1 rows whose X columns it gathered and whose layer-1 sums it
 * took) get their gradient and update in one store, and the biases by column. No thread reads W after
 * the barrier, so the updates race with nothing. */
static void backward_sgd_part(const mlp_dims *d, float *P, const float *X, int B, mlp_ws *ws, float lr,
                              int t, int nt)
{
    mlp_layout L = mlp_layout_of(d);
    int lo, hi;
    mlps_split(B, t, nt, &lo, &hi);
    KERN_SHARE {
        mlps_delta_rows(ws->d3, P + L.W3, ws->a2, ws->d2, d->n2, d->n3, lo, hi);
        mlps_delta_rows(ws->d2, P + L.W2, ws->a1, ws->d1, d->n1, d->n2, lo, hi);
    }
    #pragma omp barrier
    KERN_SHARE {
    mlps_split(d->n2, t, nt, &lo, &hi);
    mlps_wgrad_sgd_rows(ws->a2, ws->d3, P + L.W3, B, d->n2, d->n3, lo, hi, lr);
    mlps_split(d->n1, t, nt, &lo, &hi);
    mlps_wgrad_sgd_rows(ws->a1, ws->d2, P + L.W2, B, d->n1, d->n2, lo, hi, lr);
    mlps_split(d->n0, t, nt, &lo, &hi);
    mlps_wgrad_sgd_rows(X, ws->d1, P + L.W1, B, d->n0, d->n1, lo, hi, lr);
    cols(d->n3, t, nt, &lo, &hi);
    mlps_colsum_sgd(ws->d3, P + L.b3, B, d->n3, lo, hi, lr);
    cols(d->n2, t, nt, &lo, &hi);
    mlps_colsum_sgd(ws->d2, P + L.b2, B, d->n2, lo, hi, lr);
    cols(d->n1, t, nt, &lo, &hi);
    mlps_colsum_sgd(ws->d1, P + L.b1, B, d->n1, lo, hi, lr);
    }
}

/* The whole step in one parallel region: an empty region costs about 3 us on a 2-vCPU VM (a fork and a
 * join, each a cache line crossing between the vCPUs), and gather, forward, backward and update were
 * four. Inside: the gather by columns (no barrier at two threads: layer 1 reads the columns its thread
 * wrote), the forward (one barrier in layer1_split_k), the loss of the thread's own batch rows (the
 * rows its layers 2 and 3 computed), then backward_sgd_part (one barrier). */
float mlp_step_omp(const mlp_dims *d, float *P, const uint8_t *images, const int32_t *idx, float *X,
                   const uint8_t *y, int B, mlp_ws *ws, float *G, float lr, int threads)
{
    if (threads < 1)
        threads = 1;
    if (!mlps_fused_ok(B)) { /* a batch over one reduction block: the separate calls */
        if (images)
            mlp_gather_omp(d, images, idx, B, X, threads);
        mlp_forward_omp(d, P, X, B, ws, threads);
        float loss = mlp_loss(d, y, B, ws);
        mlp_backward_omp(d, P, X, B, ws, G, threads);
        mlp_update_omp(d, P, G, lr, threads);
        return loss;
    }
    double total = 0.0;
    #pragma omp parallel num_threads(threads) reduction(+ : total)
    {
        int t = kern_tid(), nt = kern_nthreads(), r0, r1;
        if (images) {
            gather_part(d, images, idx, B, X, t, nt);
            if (nt != 2) { /* the forward by rows reads every column */
                #pragma omp barrier
            }
        }
        forward_part(d, P, X, B, ws, t, nt);
        mlps_split(B, t, nt, &r0, &r1);
        KERN_SHARE total += kern_softmax_xent_rows(ws->z3, ws->d3, y, r0, r1, B, d->n3);
        backward_sgd_part(d, P, X, B, ws, lr, t, nt);
    }
    return (float)(total / B);
}
