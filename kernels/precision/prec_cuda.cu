/*
 * kernels/precision/prec_cuda.cu: the GPU rows of the precision study (prec_cuda.h says what they do).
 * Row-major arrays as mlp_kernels.h's; cuBLAS is column-major, so every row-major C = A B is issued as
 * the column-major C^T = B^T A^T (the same memory): forward Z (B x n) = In W is gemm(N, N, n, B, k, W,
 * In); the weight gradient dW = A^T D is gemm(N, T, n_out, n_in, B, D, A); the delta D W^T is
 * gemm(T, N, n_prev, B, n_out, W, D). The element-wise steps are small kernels templated on the
 * storage type T (float, __half, __nv_bfloat16).
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu_timing.h"
#include "prec_cuda.h"
#include "sl_config.h"

#define THREADS 256
#define MAX_GRID 4096
#define SCALE_START 65536.0f /* torch.cuda.amp.GradScaler's init_scale */
#define SCALE_GROWTH 2000    /* its growth_interval: good steps before the scale doubles */

struct prec_cuda {
    mlp_dims d;
    mlp_layout L;
    int type, max_batch, train_batch;
    long n_train, n_test;
    cudaDataType dt; /* the storage type as cuBLAS names it */
    size_t esz;      /* its bytes */
    cudaStream_t s;
    cublasHandle_t h;
    uint8_t *tr_x, *tr_y, *te_x, *te_y, *y;
    int32_t *idx;
    float *P, *G, *Z;           /* master weights, gradient, a product's float32 output (B x max width) */
    void *Pq, *X, *a1, *a2, *d3, *d2, *d1; /* in the storage type (Pq is P itself for fp32) */
    double *loss;               /* sum of batch-mean losses since the last take */
    float *scale;               /* the scaler's state: scale, good steps in a row, skipped steps, inf flag */
    int *good, *flag;
    long long *skipped;
    unsigned long long *count;
    double *h_loss;               /* pinned: the read-backs' host ends (a copy into pageable memory */
    unsigned long long *h_count;  /* would wait on the host inside the span) */
    gpu_spans *span[PREC_SPANS]; /* the steps' index copies and kernels, the read-backs (gpu_timing.h) */
    size_t bytes;
    char err[256];
};

/* ---- kernels ----------------------------------------------------------------------------------- */
template <typename T> __device__ T to_t(float x) { return (T)x; }
template <> __device__ __half to_t<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __nv_bfloat16 to_t<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <typename T> __device__ float to_f(T x) { return (float)x; }
template <> __device__ float to_f<__half>(__half x) { return __half2float(x); }
template <> __device__ float to_f<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

#define GRID_LOOP(i, n) \
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (size_t)gridDim.x * blockDim.x)

/* X (B x n0) = images[row] / 255 for row = idx[b], or first + b when idx is NULL (evaluation). */
template <typename T>
__global__ void k_gather(T *X, uint8_t *y, const uint8_t *images, const uint8_t *labels, const int32_t *idx,
                         long first, int B, int n0)
{
    GRID_LOOP(i, (size_t)B * n0) {
        size_t b = i / n0, k = i % n0, row = idx ? (size_t)idx[b] : (size_t)(first + (long)b);
        X[i] = to_t<T>(images[row * n0 + k] * (1.0f / 255.0f));
        if (k == 0)
            y[b] = labels[row];
    }
}

template <typename T> __global__ void k_convert(T *Pq, const float *P, size_t n)
{
    GRID_LOOP(i, n) Pq[i] = to_t<T>(P[i]);
}

/* Out (B x n) = act(Z + bias), stored as T. */
template <typename T> __global__ void k_bias_relu(T *Out, const float *Z, const float *bias, int B, int n)
{
    GRID_LOOP(i, (size_t)B * n) {
        float z = Z[i] + bias[i % n];
        Out[i] = to_t<T>(z > 0.0f ? z : 0.0f);
    }
}

/* One thread per row: softmax cross-entropy of Z + bias, added to *loss / B; d3 = scale (p - onehot) / B. */
template <typename T>
__global__ void k_loss(T *d3, const float *Z, const float *bias, const uint8_t *y, int B, int n, const float *scale,
                       double *loss)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= B)
        return;
    const float *z = Z + (size_t)b * n;
    float mx = z[0] + bias[0], sum = 0.0f;
    for (int j = 1; j < n; j++)
        mx = fmaxf(mx, z[j] + bias[j]);
    for (int j = 0; j < n; j++)
        sum += expf(z[j] + bias[j] - mx);
    atomicAdd(loss, (double)(logf(sum) - (z[y[b]] + bias[y[b]] - mx)) / B);
    for (int j = 0; j < n; j++) {
        float p = expf(z[j] + bias[j] - mx) / sum;
        d3[(size_t)b * n + j] = to_t<T>(*scale * (p - (j == y[b] ? 1.0f : 0.0f)) / B);
    }
}

/* Dprev = Z * relu'(Aprev), stored as T. */
template <typename T> __global__ void k_mask(T *Dprev, const float *Z, const T *Aprev, size_t n)
{
    GRID_LOOP(i, n) Dprev[i] = to_t<T>(to_f<T>(Aprev[i]) > 0.0f ? Z[i] : 0.0f);
}

/* db[j] = sum over the B rows of D[b][j]. */
template <typename T> __global__ void k_colsum(float *db, const T *D, int B, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n)
        return;
    float s = 0.0f;
    for (int b = 0; b < B; b++)
        s += to_f<T>(D[(size_t)b * n + j]);
    db[j] = s;
}

__global__ void k_check(const float *G, size_t n, int *flag)
{
    GRID_LOOP(i, n) if (!isfinite(G[i])) *flag = 1;
}

/* P -= lr G / scale, unless the step's gradient had an inf or NaN. */
__global__ void k_update(float *P, const float *G, size_t n, float lr, const float *scale, const int *flag)
{
    if (*flag)
        return;
    float f = lr / *scale;
    GRID_LOOP(i, n) P[i] -= f * G[i];
}

/* GradScaler's update: on inf halve and count a skip, else double after SCALE_GROWTH good steps. */
__global__ void k_scaler(float *scale, int *good, long long *skipped, int *flag, int dynamic)
{
    if (dynamic && *flag) {
        *scale *= 0.5f;
        *good = 0;
        (*skipped)++;
    } else if (dynamic && ++*good >= SCALE_GROWTH) {
        *scale *= 2.0f;
        *good = 0;
    }
    *flag = 0;
}

/* Rows whose logits Z + bias have their argmax at y. */
__global__ void k_correct(const float *Z, const float *bias, const uint8_t *y, int B, int n, unsigned long long *count)
{
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= B)
        return;
    int best = 0;
    for (int j = 1; j < n; j++)
        if (Z[(size_t)b * n + j] + bias[j] > Z[(size_t)b * n + best] + bias[best])
            best = j;
    if (best == y[b])
        atomicAdd(count, 1ull);
}

/* ---- host helpers ------------------------------------------------------------------------------ */
static int fail(prec_cuda *c, const char *what, const char *why)
{
    snprintf(c->err, sizeof c->err, "precision cuda: %s: %s", what, why);
    return -1;
}
#define CK(call, what) \
    do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return fail(c, what, cudaGetErrorString(e_)); } while (0)
#define CKB(call, what) \
    do { cublasStatus_t s_ = (call); \
         if (s_ != CUBLAS_STATUS_SUCCESS) return fail(c, what, cublasGetStatusString(s_)); } while (0)
#define LAUNCHED(what) CK(cudaGetLastError(), "launch " what)
#define TIMED(call, what) \
    do { int r_ = (call); if (r_) return fail(c, what, gpu_timing_error(r_)); } while (0)

static unsigned grid_for(size_t n)
{
    size_t g = (n + THREADS - 1) / THREADS;
    return (unsigned)(g < 1 ? 1 : g > MAX_GRID ? MAX_GRID : g);
}

static int dalloc(prec_cuda *c, void **p, size_t n, const char *what)
{
    n = n < 16 ? 16 : n;
    CK(cudaMalloc(p, n), what);
    c->bytes += n;
    return 0;
}

/* Column-major C (m x n, float32) = op(A) op(B), A and B in the storage type: the top comment's mapping. */
static int gemm(prec_cuda *c, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *A, int lda,
                const void *B, int ldb, float *C, int ldc)
{
    const float one = 1.0f, zero = 0.0f;
    CKB(cublasGemmEx(c->h, ta, tb, m, n, k, &one, A, c->dt, lda, B, c->dt, ldb, &zero, C, CUDA_R_32F, ldc,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
    return 0;
}

static const char *elem(const void *base, size_t i, size_t esz) { return (const char *)base + i * esz; }

/* Z (B x n) = In (B x k) W (k x n), W at element offset w of Pq. */
static int product(prec_cuda *c, const void *In, size_t w, int B, int k, int n)
{
    return gemm(c, CUBLAS_OP_N, CUBLAS_OP_N, n, B, k, elem(c->Pq, w, c->esz), n, In, k, c->Z, n);
}

template <typename T> static int forward(prec_cuda *c, int B)
{
    const mlp_dims *d = &c->d;
    const mlp_layout *L = &c->L;
    if (c->type != PREC_CUDA_F32) {
        k_convert<T><<<grid_for(L->n), THREADS, 0, c->s>>>((T *)c->Pq, c->P, L->n);
        LAUNCHED("convert");
    }
    if (product(c, c->X, L->W1, B, d->n0, d->n1))
        return -1;
    k_bias_relu<T><<<grid_for((size_t)B * d->n1), THREADS, 0, c->s>>>((T *)c->a1, c->Z, c->P + L->b1, B, d->n1);
    LAUNCHED("bias relu 1");
    if (product(c, c->a1, L->W2, B, d->n1, d->n2))
        return -1;
    k_bias_relu<T><<<grid_for((size_t)B * d->n2), THREADS, 0, c->s>>>((T *)c->a2, c->Z, c->P + L->b2, B, d->n2);
    LAUNCHED("bias relu 2");
    return product(c, c->a2, L->W3, B, d->n2, d->n3); /* the logits, without their bias: in Z */
}

/* G's layer (W at offset w, b at bo; n_in x n_out) from its delta D and input A; Dprev = D W^T relu'(A). */
template <typename T>
static int layer_back(prec_cuda *c, const void *D, const void *A, void *Dprev, size_t w, size_t bo, int B, int n_in,
                      int n_out)
{
    if (gemm(c, CUBLAS_OP_N, CUBLAS_OP_T, n_out, n_in, B, D, n_out, A, n_in, c->G + w, n_out))
        return -1;
    k_colsum<T><<<(n_out + THREADS - 1) / THREADS, THREADS, 0, c->s>>>(c->G + bo, (const T *)D, B, n_out);
    LAUNCHED("colsum");
    if (!Dprev)
        return 0;
    if (gemm(c, CUBLAS_OP_T, CUBLAS_OP_N, n_in, B, n_out, elem(c->Pq, w, c->esz), n_out, D, n_out, c->Z, n_in))
        return -1;
    k_mask<T><<<grid_for((size_t)B * n_in), THREADS, 0, c->s>>>((T *)Dprev, c->Z, (const T *)A, (size_t)B * n_in);
    LAUNCHED("mask");
    return 0;
}

template <typename T> static int step(prec_cuda *c, const int32_t *idx, int B, float lr)
{
    const mlp_dims *d = &c->d;
    const mlp_layout *L = &c->L;
    TIMED(gpu_spans_begin(c->span[PREC_SPAN_H2D], c->s), "indices up: span");
    CK(cudaMemcpyAsync(c->idx, idx, (size_t)B * sizeof *idx, cudaMemcpyHostToDevice, c->s), "indices up");
    TIMED(gpu_spans_end(c->span[PREC_SPAN_H2D], c->s), "indices up: span");
    TIMED(gpu_spans_begin(c->span[PREC_SPAN_KERNEL], c->s), "step: span"); /* to the scaler's end */
    k_gather<T><<<grid_for((size_t)B * d->n0), THREADS, 0, c->s>>>((T *)c->X, c->y, c->tr_x, c->tr_y, c->idx, 0, B, d->n0);
    LAUNCHED("gather");
    if (forward<T>(c, B))
        return -1;
    k_loss<T><<<(B + THREADS - 1) / THREADS, THREADS, 0, c->s>>>((T *)c->d3, c->Z, c->P + L->b3, c->y, B, d->n3,
                                                                c->scale, c->loss);
    LAUNCHED("loss");
    if (layer_back<T>(c, c->d3, c->a2, c->d2, L->W3, L->b3, B, d->n2, d->n3) ||
        layer_back<T>(c, c->d2, c->a1, c->d1, L->W2, L->b2, B, d->n1, d->n2) ||
        layer_back<T>(c, c->d1, c->X, NULL, L->W1, L->b1, B, d->n0, d->n1))
        return -1;
    k_check<<<grid_for(L->n), THREADS, 0, c->s>>>(c->G, L->n, c->flag);
    k_update<<<grid_for(L->n), THREADS, 0, c->s>>>(c->P, c->G, L->n, lr, c->scale, c->flag);
    k_scaler<<<1, 1, 0, c->s>>>(c->scale, c->good, c->skipped, c->flag, c->type != PREC_CUDA_F32);
    LAUNCHED("update");
    TIMED(gpu_spans_end(c->span[PREC_SPAN_KERNEL], c->s), "step: span");
    return 0;
}

template <typename T> static int evaluate(prec_cuda *c, long *correct)
{
    const mlp_dims *d = &c->d;
    CK(cudaMemsetAsync(c->count, 0, sizeof *c->count, c->s), "count");
    for (long r = 0; r < c->n_test; r += c->max_batch) {
        int B = (int)(c->n_test - r < c->max_batch ? c->n_test - r : c->max_batch);
        k_gather<T><<<grid_for((size_t)B * d->n0), THREADS, 0, c->s>>>((T *)c->X, c->y, c->te_x, c->te_y, NULL, r, B,
                                                                        d->n0);
        LAUNCHED("gather test");
        if (forward<T>(c, B))
            return -1;
        k_correct<<<(B + THREADS - 1) / THREADS, THREADS, 0, c->s>>>(c->Z, c->P + c->L.b3, c->y, B, d->n3, c->count);
        LAUNCHED("correct");
    }
    TIMED(gpu_spans_begin(c->span[PREC_SPAN_D2H], c->s), "count down: span");
    CK(cudaMemcpyAsync(c->h_count, c->count, sizeof *c->h_count, cudaMemcpyDeviceToHost, c->s), "count down");
    TIMED(gpu_spans_end(c->span[PREC_SPAN_D2H], c->s), "count down: span");
    CK(cudaStreamSynchronize(c->s), "evaluate");
    *correct = (long)*c->h_count;
    return 0;
}

/* Runs every product shape and kernel the timed run will use once, on zeros, results discarded: the
 * training step's (train_batch and the epoch's partial batch) and the evaluation's (max_batch and its
 * last chunk). The first launch of a kernel in a process loads its module (CUDA's lazy loading), and the
 * first cublasGemmEx of a shape picks and loads cuBLAS's kernel for it. On the H200, one of the 16-bit
 * rows' two timed evaluations took about 3.5 ms longer than the other (the evaluation's shapes are not
 * the step's): a set-up cost that belongs here, not in a timed repetition. The update runs with
 * rate 0 and the scaler without its dynamic rule, so P and the scaler's state are unchanged; the loss,
 * the count, the gradient and the inf flag are zeroed after. */
template <typename T> static int warm(prec_cuda *c)
{
    const mlp_dims *d = &c->d;
    const mlp_layout *L = &c->L;
    const size_t mb = (size_t)c->max_batch;
    CK(cudaMemsetAsync(c->P, 0, L->n * sizeof(float), c->s), "warm-up: zero P");
    CK(cudaMemsetAsync(c->X, 0, mb * d->n0 * c->esz, c->s), "warm-up: zero X");
    CK(cudaMemsetAsync(c->y, 0, mb, c->s), "warm-up: zero y");
    const long sizes[4] = {c->train_batch, c->n_train % c->train_batch, c->max_batch,
                           c->n_test > 0 ? c->n_test % c->max_batch : 0};
    for (int i = 0; i < 4; i++) {
        const int B = (int)sizes[i];
        if (B < 1)
            continue;
        if (B <= c->n_test) {
            k_gather<T><<<grid_for((size_t)B * d->n0), THREADS, 0, c->s>>>((T *)c->X, c->y, c->te_x, c->te_y, NULL,
                                                                            0, B, d->n0);
            LAUNCHED("warm-up gather");
        }
        if (forward<T>(c, B))
            return -1;
        k_correct<<<(B + THREADS - 1) / THREADS, THREADS, 0, c->s>>>(c->Z, c->P + L->b3, c->y, B, d->n3, c->count);
        k_loss<T><<<(B + THREADS - 1) / THREADS, THREADS, 0, c->s>>>((T *)c->d3, c->Z, c->P + L->b3, c->y, B, d->n3,
                                                                    c->scale, c->loss);
        LAUNCHED("warm-up loss");
        if (layer_back<T>(c, c->d3, c->a2, c->d2, L->W3, L->b3, B, d->n2, d->n3) ||
            layer_back<T>(c, c->d2, c->a1, c->d1, L->W2, L->b2, B, d->n1, d->n2) ||
            layer_back<T>(c, c->d1, c->X, NULL, L->W1, L->b1, B, d->n0, d->n1))
            return -1;
    }
    k_check<<<grid_for(L->n), THREADS, 0, c->s>>>(c->G, L->n, c->flag);
    k_update<<<grid_for(L->n), THREADS, 0, c->s>>>(c->P, c->G, L->n, 0.0f, c->scale, c->flag); /* lr 0 */
    k_scaler<<<1, 1, 0, c->s>>>(c->scale, c->good, c->skipped, c->flag, 0); /* not dynamic: the flag only */
    LAUNCHED("warm-up update");
    CK(cudaMemsetAsync(c->G, 0, L->n * sizeof(float), c->s), "warm-up: zero G");
    CK(cudaMemsetAsync(c->loss, 0, sizeof(double), c->s), "warm-up: zero loss");
    CK(cudaMemsetAsync(c->count, 0, sizeof(unsigned long long), c->s), "warm-up: zero count");
    CK(cudaMemsetAsync(c->flag, 0, sizeof(int), c->s), "warm-up: zero flag");
    CK(cudaStreamSynchronize(c->s), "warm-up");
    return 0;
}

static int warm_all(prec_cuda *c)
{
    if (c->type == PREC_CUDA_F16)
        return warm<__half>(c);
    if (c->type == PREC_CUDA_BF16)
        return warm<__nv_bfloat16>(c);
    return warm<float>(c);
}

/* ---- the API ----------------------------------------------------------------------------------- */
static int alloc_all(prec_cuda *c)
{
    const mlp_dims *d = &c->d;
    size_t mb = (size_t)c->max_batch, w = (size_t)(d->n1 > d->n2 ? d->n1 : d->n2), e = c->esz;
    w = w > (size_t)d->n3 ? w : (size_t)d->n3;
    if (dalloc(c, (void **)&c->tr_x, (size_t)c->n_train * d->n0, "train x") ||
        dalloc(c, (void **)&c->tr_y, (size_t)c->n_train, "train y") ||
        dalloc(c, (void **)&c->te_x, (size_t)c->n_test * d->n0, "test x") ||
        dalloc(c, (void **)&c->te_y, (size_t)c->n_test, "test y") || dalloc(c, (void **)&c->y, mb, "y") ||
        dalloc(c, (void **)&c->idx, mb * sizeof(int32_t), "idx") ||
        dalloc(c, (void **)&c->P, c->L.n * sizeof(float), "P") ||
        dalloc(c, (void **)&c->G, c->L.n * sizeof(float), "G") || dalloc(c, (void **)&c->Z, mb * w * 4, "Z") ||
        dalloc(c, &c->X, mb * d->n0 * e, "X") || dalloc(c, &c->a1, mb * d->n1 * e, "a1") ||
        dalloc(c, &c->a2, mb * d->n2 * e, "a2") || dalloc(c, &c->d3, mb * d->n3 * e, "d3") ||
        dalloc(c, &c->d2, mb * d->n2 * e, "d2") || dalloc(c, &c->d1, mb * d->n1 * e, "d1") ||
        dalloc(c, (void **)&c->loss, sizeof(double), "loss") || dalloc(c, (void **)&c->scale, sizeof(float), "scale") ||
        dalloc(c, (void **)&c->good, sizeof(int), "good") || dalloc(c, (void **)&c->flag, sizeof(int), "flag") ||
        dalloc(c, (void **)&c->skipped, sizeof(long long), "skipped") ||
        dalloc(c, (void **)&c->count, sizeof(unsigned long long), "count"))
        return -1;
    if (c->type == PREC_CUDA_F32)
        c->Pq = c->P; /* fp32 reads the master itself */
    else if (dalloc(c, &c->Pq, c->L.n * e, "Pq"))
        return -1;
    return 0;
}

static int init(prec_cuda *c, const uint8_t *tx, const uint8_t *ty, const uint8_t *vx, const uint8_t *vy)
{
    CK(cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking), "stream");
    CKB(cublasCreate(&c->h), "cublasCreate");
    CKB(cublasSetStream(c->h, c->s), "cublasSetStream");
    CKB(cublasSetMathMode(c->h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode"); /* tensor cores for 16-bit, no TF32 */
    if (alloc_all(c))
        return -1;
    const size_t n0 = (size_t)c->d.n0;
    const float s0 = c->type == PREC_CUDA_F32 ? 1.0f : SCALE_START;
    CK(cudaMemcpy(c->tr_x, tx, (size_t)c->n_train * n0, cudaMemcpyHostToDevice), "train x up");
    CK(cudaMemcpy(c->tr_y, ty, (size_t)c->n_train, cudaMemcpyHostToDevice), "train y up");
    CK(cudaMemcpy(c->te_x, vx, (size_t)c->n_test * n0, cudaMemcpyHostToDevice), "test x up");
    CK(cudaMemcpy(c->te_y, vy, (size_t)c->n_test, cudaMemcpyHostToDevice), "test y up");
    CK(cudaMemcpy(c->scale, &s0, sizeof s0, cudaMemcpyHostToDevice), "scale");
    CK(cudaMemset(c->good, 0, sizeof(int)), "good");
    CK(cudaMemset(c->flag, 0, sizeof(int)), "flag");
    CK(cudaMemset(c->skipped, 0, sizeof(long long)), "skipped");
    CK(cudaMemset(c->loss, 0, sizeof(double)), "loss");
    CK(cudaMallocHost((void **)&c->h_loss, sizeof *c->h_loss), "pinned loss");
    CK(cudaMallocHost((void **)&c->h_count, sizeof *c->h_count), "pinned count");
    /* the spans' events for an epoch's steps are made now, not in the timed steps */
    int rc = 0;
    long steps = c->n_train / c->train_batch + 2, reserve[PREC_SPANS] = {steps, steps, 4};
    for (int i = 0; i < PREC_SPANS; i++)
        if (!(c->span[i] = gpu_spans_create(reserve[i], &rc)))
            return fail(c, "span events", gpu_timing_error(rc));
    return warm_all(c);
}

extern "C" prec_cuda *prec_cuda_create(const mlp_dims *d, int type, int max_batch, int train_batch,
                                       const uint8_t *train_x, const uint8_t *train_y, long n_train,
                                       const uint8_t *test_x, const uint8_t *test_y, long n_test, char *msg,
                                       size_t msg_len)
{
    static const cudaDataType dts[] = {CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF};
    static const size_t eszs[] = {4, 2, 2};
    if (type < 0 || type > 2 || max_batch < 1 || train_batch < 1 || train_batch > max_batch || n_train < 1 ||
        n_test < 0) {
        snprintf(msg, msg_len, "precision cuda: bad arguments (type %d, max_batch %d, train_batch %d, %ld train, "
                 "%ld test rows)", type, max_batch, train_batch, n_train, n_test);
        return NULL;
    }
    for (long i = 0; i < n_train + n_test; i++) {
        int y = i < n_train ? train_y[i] : test_y[i - n_train];
        if (y >= d->n3) {
            snprintf(msg, msg_len, "precision cuda: label %d at row %ld is not below %d", y, i, d->n3);
            return NULL;
        }
    }
    prec_cuda *c = (prec_cuda *)calloc(1, sizeof *c);
    if (!c) {
        snprintf(msg, msg_len, "precision cuda: out of memory");
        return NULL;
    }
    c->d = *d, c->L = mlp_layout_of(d), c->type = type, c->max_batch = max_batch, c->train_batch = train_batch;
    c->n_train = n_train, c->n_test = n_test, c->dt = dts[type], c->esz = eszs[type];
    if (init(c, train_x, train_y, test_x, test_y) != 0) {
        snprintf(msg, msg_len, "%s", c->err);
        prec_cuda_destroy(c);
        return NULL;
    }
    return c;
}

extern "C" void prec_cuda_destroy(prec_cuda *c)
{
    if (!c)
        return;
    void *bufs[] = {c->tr_x, c->tr_y, c->te_x, c->te_y, c->y, c->idx, c->P, c->G, c->Z, c->X, c->a1, c->a2,
                    c->d3, c->d2, c->d1, c->loss, c->scale, c->good, c->flag, c->skipped, c->count};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        if (bufs[i])
            cudaFree(bufs[i]);
    if (c->Pq && c->Pq != c->P)
        cudaFree(c->Pq);
    gpu_spans_destroy_all(c->span, PREC_SPANS);
    if (c->h_loss)
        cudaFreeHost(c->h_loss);
    if (c->h_count)
        cudaFreeHost(c->h_count);
    if (c->h)
        cublasDestroy(c->h);
    if (c->s)
        cudaStreamDestroy(c->s);
    free(c);
}

extern "C" const char *prec_cuda_error(const prec_cuda *c) { return c->err; }

extern "C" int prec_cuda_set_params(prec_cuda *c, const float *P)
{
    CK(cudaMemcpyAsync(c->P, P, c->L.n * sizeof(float), cudaMemcpyHostToDevice, c->s), "params up");
    CK(cudaStreamSynchronize(c->s), "params up");
    return 0;
}

extern "C" int prec_cuda_get_params(prec_cuda *c, float *P)
{
    CK(cudaMemcpyAsync(P, c->P, c->L.n * sizeof(float), cudaMemcpyDeviceToHost, c->s), "params down");
    CK(cudaStreamSynchronize(c->s), "params down");
    return 0;
}

extern "C" int prec_cuda_step(prec_cuda *c, const int32_t *idx, int B, float lr)
{
    if (B < 1 || B > c->max_batch)
        return fail(c, "step", "batch out of range");
    if (c->type == PREC_CUDA_F16)
        return step<__half>(c, idx, B, lr);
    if (c->type == PREC_CUDA_BF16)
        return step<__nv_bfloat16>(c, idx, B, lr);
    return step<float>(c, idx, B, lr);
}

extern "C" int prec_cuda_sync(prec_cuda *c)
{
    CK(cudaStreamSynchronize(c->s), "sync");
    return 0;
}

extern "C" int prec_cuda_take_loss(prec_cuda *c, double *loss_sum)
{
    TIMED(gpu_spans_begin(c->span[PREC_SPAN_D2H], c->s), "loss down: span");
    CK(cudaMemcpyAsync(c->h_loss, c->loss, sizeof *c->h_loss, cudaMemcpyDeviceToHost, c->s), "loss down");
    TIMED(gpu_spans_end(c->span[PREC_SPAN_D2H], c->s), "loss down: span");
    CK(cudaMemsetAsync(c->loss, 0, sizeof(double), c->s), "loss reset");
    CK(cudaStreamSynchronize(c->s), "loss");
    *loss_sum = *c->h_loss;
    return 0;
}

extern "C" int prec_cuda_evaluate(prec_cuda *c, long *correct)
{
    if (c->type == PREC_CUDA_F16)
        return evaluate<__half>(c, correct);
    if (c->type == PREC_CUDA_BF16)
        return evaluate<__nv_bfloat16>(c, correct);
    return evaluate<float>(c, correct);
}

extern "C" int prec_cuda_scaler(prec_cuda *c, double *scale, long *skipped)
{
    float s = 0;
    long long k = 0;
    CK(cudaMemcpyAsync(&s, c->scale, sizeof s, cudaMemcpyDeviceToHost, c->s), "scale down");
    CK(cudaMemcpyAsync(&k, c->skipped, sizeof k, cudaMemcpyDeviceToHost, c->s), "skipped down");
    CK(cudaStreamSynchronize(c->s), "scaler");
    *scale = s, *skipped = (long)k;
    return 0;
}

extern "C" size_t prec_cuda_bytes(const prec_cuda *c) { return c->bytes; }

extern "C" int prec_cuda_span_take(prec_cuda *c, int which, double *ms)
{
    *ms = NAN;
    if (!c)
        return -1;
    if (which < 0 || which >= PREC_SPANS)
        return fail(c, "span time", "no such span kind");
    TIMED(gpu_spans_take(c->span[which], ms), "span time");
    return 0;
}

extern "C" void prec_cuda_span_drop(prec_cuda *c)
{
    if (c)
        gpu_spans_drop_all(c->span, PREC_SPANS);
}
