/*
 * kernels/mlp/mlp_cuda.cu: the mlp network of mlp_kernels.h on the GPU, both device variants of
 * mlp_cuda.h. The host-fed steps are in mlp_cuda_feed.cu (mlp_cuda_impl.h is what the two share); device
 * time by events in kernels/gpu/gpu_timing.cu (the phase marks, and the spans of every step's copies,
 * kernels and read-backs that make the record's phases).
 *
 * Design (and why):
 *   - Everything lives in one context on one non-blocking stream: the training and test images as bytes
 *     (uploaded once by mlp_cuda_create; 47 MB for MNIST as floats would be 188 MB and a step only needs
 *     B rows), the parameters P and gradients G in mlp_kernels.h's single-array layout (so
 *     set/get_params are one copy and the update is one kernel over L.n floats), and the per-batch activations sized max_batch.
 *   - data: the host's B int32 indices are copied into a pinned staging buffer and sent with
 *     cudaMemcpyAsync (pageable memory would make the copy synchronous). Two staging slots, each guarded
 *     by an event, so the host never overwrites indices a still-queued copy has not read yet and rarely
 *     waits. A gather kernel then reads the B rows (and labels) and scales them to [0,1] with an IEEE
 *     multiplication by the float 1/255 (__fmul_rn, so no fast-math contraction changes it), exactly as
 *     the CPU's gather (train_gather, mlp_gather_omp) does: every variant sees the same floats.
 *   - products, cuda variant: one templated tiled SGEMM (256-thread blocks, k-slices of 16 in shared
 *     memory, RM x RN outputs per thread at stride 16 so shared reads are conflict-free and the stores
 *     coalesce; 64x64 tiles when that still gives every SM a block, else 32x32 or 16x16, as the small
 *     products of small batches would otherwise run on a few of the H100's 132 SMs). Template flags give the three shapes of the network without transposing anything
 *     in memory: X W (forward), A^T D (weight gradients: A is read as stored, k = batch row), D W^T (input
 *     deltas). The epilogue is fused: + bias, + bias then ReLU, or the ReLU' mask of the previous layer's
 *     activations (the delta of a hidden layer), which saves one pass over each activation array.
 *   - products, cublas variant: cublasSgemm on the same row-major arrays by computing the transposed
 *     problem (a row-major M x N matrix is a column-major N x M one: C^T = op(B)^T op(A)^T, so the
 *     operands swap and each keeps its own op and its stored row length as leading dimension). The
 *     epilogue is then a small elementwise kernel. Math mode is CUBLAS_DEFAULT_MATH (full FP32, no TF32)
 *     so both variants compute the same float32 function as the CPU ones.
 *   - loss: one warp per row (lanes over the n3 classes; n3 = 10 fits one pass): max-shifted softmax,
 *     d3 = (p - onehot)/B, and the row's -log p_y in double (clamped at 1e-30 as mlp_loss). A one-block
 *     kernel then adds the batch mean to a device double accumulator in a fixed order (deterministic, no
 *     double atomics); mlp_cuda_take_loss copies and zeroes it. No host sync in the step.
 *   - bias gradients: column sums of the deltas by 32x8 blocks (coalesced rows, shared-memory finish).
 *   - evaluate: the test rows go through the same gather (contiguous, no indices) and forward in chunks
 *     of max_batch; one thread per row takes the argmax (first maximum, as mlp_correct) and a block
 *     count (__syncthreads_count) is added atomically to a device counter. It reuses the step's activation
 *     arrays: call it between steps, not between a step's forward and backward.
 *   - errors: every CUDA and cuBLAS return is checked (kernel launches by cudaGetLastError); a failing
 *     call returns -1 with "mlp cuda: <what>: <reason>" in mlp_cuda_error(). Without cuBLAS in the build
 *     (SL_HAVE_CUBLAS 0) the cublas variant fails at create with that message.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp_cuda_impl.h"
#include "gpu/gpu_batch.cuh"
#include "gpu/gpu_epilogue.cuh"
#include "gpu/gpu_gemm.cuh"

#define MAX_GRID 4096    /* cap for grid-stride elementwise kernels */

/* ---- kernels (the shared ones are in kernels/gpu/gpu_*.cuh) ----------------------------------- */

__global__ void k_sgd(float *P, const float *G, size_t n, float lr)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        P[i] -= lr * G[i];
}

/* ---- host helpers --------------------------------------------------------------------------------- */

int mlp_fail(mlp_cuda *c, const char *what, const char *why)
{
    snprintf(c->err, sizeof c->err, "mlp cuda: %s: %s", what, why);
    return -1;
}
#if SL_HAVE_CUBLAS
#define CKB(call, what) \
    do { cublasStatus_t s_ = (call); \
         if (s_ != CUBLAS_STATUS_SUCCESS) return mlp_fail(c, what, cublasGetStatusString(s_)); } while (0)
#endif

static unsigned grid_for(size_t n, unsigned threads)
{
    size_t g = (n + threads - 1) / threads;
    return (unsigned)(g < 1 ? 1 : g > MAX_GRID ? MAX_GRID : g);
}

int mlp_dalloc(mlp_cuda *c, void **p, size_t n, const char *what)
{
    if (n < 16)
        n = 16; /* never a zero-byte allocation (empty test set) */
    CK(cudaMalloc(p, n), what);
    c->bytes += n;
    return 0;
}

static long tiles(int M, int N, int t) { return (long)((M + t - 1) / t) * ((N + t - 1) / t); }

/* The tile: 64 x 64 (4 x 4 outputs a thread, the most reuse) while that still gives every SM a block;
 * 32 x 32 or 16 x 16 for the small products (small batches, the 10-wide output layer), which would
 * otherwise run on a handful of SMs. */
template <bool TA, bool TB, int EPI>
static int own_gemm(mlp_cuda *c, int M, int N, int K, const float *A, const float *Bm, float *C, const float *aux,
                    const char *what)
{
    const int r = tiles(M, N, 64) >= c->sms ? 4 : tiles(M, N, 32) >= c->sms ? 2 : 1;
    dim3 grid((unsigned)((N + 16 * r - 1) / (16 * r)), (unsigned)((M + 16 * r - 1) / (16 * r)));
    if (r == 4)
        k_gpu_gemm<4, 4, TA, TB, EPI><<<grid, GPU_GEMM_THREADS, 0, c->s>>>(M, N, K, A, Bm, C, aux);
    else if (r == 2)
        k_gpu_gemm<2, 2, TA, TB, EPI><<<grid, GPU_GEMM_THREADS, 0, c->s>>>(M, N, K, A, Bm, C, aux);
    else
        k_gpu_gemm<1, 1, TA, TB, EPI><<<grid, GPU_GEMM_THREADS, 0, c->s>>>(M, N, K, A, Bm, C, aux);
    CK(cudaGetLastError(), what);
    return 0;
}

/* C (M x N) = op(A) op(B), then the epilogue, by the context's variant. The shapes used: (ta, tb, epi)
 * = (0, 0, BIAS[_RELU]) forward, (1, 0, STORE) weight gradients, (0, 1, MASK) hidden deltas. */
static int product(mlp_cuda *c, int ta, int tb, int epi, int M, int N, int K, const float *A, const float *Bm,
                   float *C, const float *aux, const char *what)
{
    if (M > 65535 * 16)
        return mlp_fail(c, what, "too many rows for the grid");
    if (c->use_cublas) {
#if SL_HAVE_CUBLAS
        const float one = 1.0f, zero = 0.0f;
        /* row-major C = op(A) op(B)  <=>  column-major C^T = op(B)^T op(A)^T: swap the operands, keep
         * each op, leading dimension = the stored row length */
        CKB(cublasSgemm(c->h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &one, Bm,
                        tb ? K : N, A, ta ? M : K, &zero, C, N),
            what);
        size_t n = (size_t)M * N;
        if (epi == EPI_BIAS || epi == EPI_BIAS_RELU) {
            k_gpu_bias_act<<<grid_for(n, 256), 256, 0, c->s>>>(C, aux, M, N, epi == EPI_BIAS_RELU);
            LAUNCHED("bias_act");
        } else if (epi == EPI_MASK) {
            k_gpu_mask<<<grid_for(n, 256), 256, 0, c->s>>>(C, aux, n);
            LAUNCHED("mask");
        }
        return 0;
#else
        return mlp_fail(c, what, "built without cuBLAS");
#endif
    }
    if (!ta && !tb && epi == EPI_BIAS_RELU)
        return own_gemm<false, false, EPI_BIAS_RELU>(c, M, N, K, A, Bm, C, aux, what);
    if (!ta && !tb && epi == EPI_BIAS)
        return own_gemm<false, false, EPI_BIAS>(c, M, N, K, A, Bm, C, aux, what);
    if (ta && !tb && epi == EPI_STORE)
        return own_gemm<true, false, EPI_STORE>(c, M, N, K, A, Bm, C, aux, what);
    if (!ta && tb && epi == EPI_MASK)
        return own_gemm<false, true, EPI_MASK>(c, M, N, K, A, Bm, C, aux, what);
    return mlp_fail(c, what, "unsupported product shape");
}

int mlp_check_B(mlp_cuda *c, int B, const char *what)
{
    if (B < 1 || B > c->max_batch) {
        char why[96];
        snprintf(why, sizeof why, "batch %d out of range 1-%d", B, c->max_batch);
        return mlp_fail(c, what, why);
    }
    return 0;
}

/* X, y <- rows of (src_x, src_y): by the device indices c->idx, or contiguous from row0 (use_idx 0). */
int mlp_gather(mlp_cuda *c, const uint8_t *src_x, const uint8_t *src_y, int use_idx, long row0, int B)
{
    unsigned g = (unsigned)(B < MAX_GRID ? B : MAX_GRID);
    k_gpu_gather<<<g, 256, 0, c->s>>>(src_x, src_y, use_idx ? c->idx : NULL, row0, B, c->d.n0, c->X, c->y);
    LAUNCHED("gather");
    return 0;
}

static int forward(mlp_cuda *c, int B)
{
    const mlp_dims *d = &c->d;
    const mlp_layout *L = &c->L;
    if (product(c, 0, 0, EPI_BIAS_RELU, B, d->n1, d->n0, c->X, c->P + L->W1, c->a1, c->P + L->b1, "forward 1") ||
        product(c, 0, 0, EPI_BIAS_RELU, B, d->n2, d->n1, c->a1, c->P + L->W2, c->a2, c->P + L->b2, "forward 2") ||
        product(c, 0, 0, EPI_BIAS, B, d->n3, d->n2, c->a2, c->P + L->W3, c->z3, c->P + L->b3, "forward 3"))
        return -1;
    return 0;
}

/* dW = A^T D (n_in x n_out, k = the B rows) and db = column sums of D. */
static int weight_grad(mlp_cuda *c, const float *A, const float *D, int B, int n_in, int n_out, size_t oW,
                       size_t ob, const char *what)
{
    if (product(c, 1, 0, EPI_STORE, n_in, n_out, B, A, D, c->G + oW, NULL, what))
        return -1;
    k_gpu_colsum<<<(unsigned)((n_out + 31) / 32), dim3(32, 8), 0, c->s>>>(D, B, n_out, c->G + ob);
    LAUNCHED("bias gradient");
    return 0;
}

/* ---- API ------------------------------------------------------------------------------------------ */

extern "C" int mlp_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear "no device" / "insufficient driver" */
        return 0;
    }
    return n;
}

extern "C" const char *mlp_cuda_error(const mlp_cuda *c) { return c ? c->err : "mlp cuda: no context"; }

extern "C" size_t mlp_cuda_bytes(const mlp_cuda *c) { return c ? c->bytes : 0; }

extern "C" void mlp_cuda_destroy(mlp_cuda *c)
{
    if (!c)
        return;
    if (c->s)
        cudaStreamSynchronize(c->s); /* nothing queued may still use what is freed below */
    mlp_free_feed(c);
#if SL_HAVE_CUBLAS
    if (c->h)
        cublasDestroy(c->h);
#endif
    void *dev[] = {c->tr_x, c->tr_y, c->te_x, c->te_y, c->y, c->P, c->G, c->X, c->a1, c->a2, c->z3,
                   c->d3, c->d2, c->d1, c->idx, c->rowloss, c->acc, c->count};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    void *host[] = {c->h_idx, c->h_loss, c->h_count};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (host[i])
            cudaFreeHost(host[i]);
    for (int i = 0; i < 2; i++)
        if (c->staged[i])
            cudaEventDestroy(c->staged[i]);
    gpu_marks_destroy(c->marks);
    gpu_spans_destroy_all(c->span, MLP_SPANS);
    if (c->s)
        cudaStreamDestroy(c->s);
    free(c);
}

static int setup(mlp_cuda *c, const uint8_t *train_x, const uint8_t *train_y, const uint8_t *test_x,
                 const uint8_t *test_y)
{
    const mlp_dims *d = &c->d;
    const size_t mb = (size_t)c->max_batch, n0 = (size_t)d->n0, ntr = (size_t)c->n_train, nte = (size_t)c->n_test;
    int dev = 0;
    CK(cudaGetDevice(&dev), "cudaGetDevice");
    CK(cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
    if (c->sms < 1)
        c->sms = 1;
    CK(cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking), "stream");
    CK(cudaEventCreateWithFlags(&c->staged[0], cudaEventDisableTiming), "event");
    CK(cudaEventCreateWithFlags(&c->staged[1], cudaEventDisableTiming), "event");
    int rc = 0; /* the spans' events for an epoch's steps are created now, not in the timed steps */
    long steps = ntr / mb + 2, reserve[MLP_SPANS] = {steps, steps, 4};
    if (!(c->marks = gpu_marks_create(MLP_PHASES, MLP_PHASE_EVERY, &rc)))
        return mlp_fail(c, "phase events", gpu_timing_error(rc));
    for (int i = 0; i < MLP_SPANS; i++)
        if (!(c->span[i] = gpu_spans_create(reserve[i], &rc)))
            return mlp_fail(c, "span events", gpu_timing_error(rc));
    if (c->use_cublas) {
#if SL_HAVE_CUBLAS
        CKB(cublasCreate(&c->h), "cublasCreate");
        CKB(cublasSetStream(c->h, c->s), "cublasSetStream");
        CKB(cublasSetMathMode(c->h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
#else
        return mlp_fail(c, "cublas variant", "built without cuBLAS");
#endif
    }
    if (mlp_dalloc(c, (void **)&c->tr_x, ntr * n0, "cudaMalloc train x") ||
        mlp_dalloc(c, (void **)&c->tr_y, ntr, "cudaMalloc train y") ||
        mlp_dalloc(c, (void **)&c->te_x, nte * n0, "cudaMalloc test x") ||
        mlp_dalloc(c, (void **)&c->te_y, nte, "cudaMalloc test y") ||
        mlp_dalloc(c, (void **)&c->P, c->L.n * sizeof(float), "cudaMalloc P") ||
        mlp_dalloc(c, (void **)&c->G, c->L.n * sizeof(float), "cudaMalloc G") ||
        mlp_dalloc(c, (void **)&c->X, mb * n0 * sizeof(float), "cudaMalloc X") ||
        mlp_dalloc(c, (void **)&c->y, mb, "cudaMalloc y") ||
        mlp_dalloc(c, (void **)&c->idx, mb * sizeof(int32_t), "cudaMalloc idx") ||
        mlp_dalloc(c, (void **)&c->a1, mb * d->n1 * sizeof(float), "cudaMalloc a1") ||
        mlp_dalloc(c, (void **)&c->d1, mb * d->n1 * sizeof(float), "cudaMalloc d1") ||
        mlp_dalloc(c, (void **)&c->a2, mb * d->n2 * sizeof(float), "cudaMalloc a2") ||
        mlp_dalloc(c, (void **)&c->d2, mb * d->n2 * sizeof(float), "cudaMalloc d2") ||
        mlp_dalloc(c, (void **)&c->z3, mb * d->n3 * sizeof(float), "cudaMalloc z3") ||
        mlp_dalloc(c, (void **)&c->d3, mb * d->n3 * sizeof(float), "cudaMalloc d3") ||
        mlp_dalloc(c, (void **)&c->rowloss, mb * sizeof(double), "cudaMalloc rowloss") ||
        mlp_dalloc(c, (void **)&c->acc, sizeof(double), "cudaMalloc loss") ||
        mlp_dalloc(c, (void **)&c->count, sizeof(unsigned long long), "cudaMalloc count"))
        return -1;
    CK(cudaMallocHost((void **)&c->h_idx, 2 * mb * sizeof(int32_t)), "cudaMallocHost idx");
    CK(cudaMallocHost((void **)&c->h_loss, sizeof(double)), "cudaMallocHost loss");
    CK(cudaMallocHost((void **)&c->h_count, sizeof(unsigned long long)), "cudaMallocHost count");
    if (ntr) {
        CK(cudaMemcpy(c->tr_x, train_x, ntr * n0, cudaMemcpyHostToDevice), "copy train x");
        CK(cudaMemcpy(c->tr_y, train_y, ntr, cudaMemcpyHostToDevice), "copy train y");
    }
    if (nte) {
        CK(cudaMemcpy(c->te_x, test_x, nte * n0, cudaMemcpyHostToDevice), "copy test x");
        CK(cudaMemcpy(c->te_y, test_y, nte, cudaMemcpyHostToDevice), "copy test y");
    }
    CK(cudaMemset(c->P, 0, c->L.n * sizeof(float)), "memset P");
    CK(cudaMemset(c->G, 0, c->L.n * sizeof(float)), "memset G");
    CK(cudaMemset(c->acc, 0, sizeof(double)), "memset loss");
    CK(cudaDeviceSynchronize(), "upload");
    return 0;
}

extern "C" mlp_cuda *mlp_cuda_create(const mlp_dims *d, int use_cublas, int max_batch, const uint8_t *train_x,
                                     const uint8_t *train_y, long n_train, const uint8_t *test_x,
                                     const uint8_t *test_y, long n_test, char *msg, size_t msg_len)
{
    char tmp[8];
    if (!msg || !msg_len)
        msg = tmp, msg_len = sizeof tmp;
    msg[0] = 0;
    if (!d || d->n0 < 1 || d->n1 < 1 || d->n2 < 1 || d->n3 < 1 || d->n3 > 256) {
        snprintf(msg, msg_len, "mlp cuda: bad dimensions");
        return NULL;
    }
    if (max_batch < 1 || max_batch > 65535 * 16 || n_train < 0 || n_test < 0 ||
        (n_train > 0 && (!train_x || !train_y)) || (n_test > 0 && (!test_x || !test_y)) ||
        n_train > INT32_MAX) {
        snprintf(msg, msg_len, "mlp cuda: bad arguments (max_batch %d, %ld training rows, %ld test rows)",
                 max_batch, n_train, n_test);
        return NULL;
    }
    for (long i = 0; i < n_train; i++)
        if (train_y[i] >= d->n3) {
            snprintf(msg, msg_len, "mlp cuda: training label %d at row %ld is not below %d", train_y[i], i, d->n3);
            return NULL;
        }
    for (long i = 0; i < n_test; i++)
        if (test_y[i] >= d->n3) {
            snprintf(msg, msg_len, "mlp cuda: test label %d at row %ld is not below %d", test_y[i], i, d->n3);
            return NULL;
        }
#if !SL_HAVE_CUBLAS
    if (use_cublas) {
        snprintf(msg, msg_len, "mlp cuda: cublas variant: built without cuBLAS");
        return NULL;
    }
#endif
    if (mlp_cuda_device_count() == 0) {
        snprintf(msg, msg_len, "mlp cuda: no CUDA device");
        return NULL;
    }
    mlp_cuda *c = (mlp_cuda *)calloc(1, sizeof *c);
    if (!c) {
        snprintf(msg, msg_len, "mlp cuda: out of host memory");
        return NULL;
    }
    c->d = *d;
    c->L = mlp_layout_of(d);
    c->use_cublas = use_cublas ? 1 : 0;
    c->max_batch = max_batch;
    c->n_train = n_train;
    c->n_test = n_test;
    if (setup(c, train_x, train_y, test_x, test_y)) {
        snprintf(msg, msg_len, "%s", c->err);
        mlp_cuda_destroy(c);
        return NULL;
    }
    return c;
}

extern "C" int mlp_cuda_set_params(mlp_cuda *c, const float *P)
{
    if (!c || !P)
        return -1;
    CK(cudaMemcpyAsync(c->P, P, c->L.n * sizeof(float), cudaMemcpyHostToDevice, c->s), "copy params in");
    CK(cudaStreamSynchronize(c->s), "copy params in");
    return 0;
}

extern "C" int mlp_cuda_get_params(mlp_cuda *c, float *P)
{
    if (!c || !P)
        return -1;
    CK(cudaMemcpyAsync(P, c->P, c->L.n * sizeof(float), cudaMemcpyDeviceToHost, c->s), "copy params out");
    CK(cudaStreamSynchronize(c->s), "copy params out");
    return 0;
}

extern "C" int mlp_cuda_data(mlp_cuda *c, const int32_t *idx, int B)
{
    if (!c)
        return -1;
    if (mlp_check_B(c, B, "data"))
        return -1;
    if (!idx)
        return mlp_fail(c, "data", "no indices");
    for (int b = 0; b < B; b++)
        if (idx[b] < 0 || idx[b] >= c->n_train) {
            char why[96];
            snprintf(why, sizeof why, "index %ld at %d outside the %ld training rows", (long)idx[b], b,
                     c->n_train);
            return mlp_fail(c, "data", why);
        }
    /* the slot's previous copy must have read it before the host writes it again */
    c->slot ^= 1;
    int32_t *stage = c->h_idx + (size_t)c->slot * c->max_batch;
    CK(cudaEventSynchronize(c->staged[c->slot]), "data: staging wait");
    memcpy(stage, idx, (size_t)B * sizeof(int32_t));
    TIMED(gpu_spans_begin(c->span[MLP_SPAN_H2D], c->s), "data: span");
    CK(cudaMemcpyAsync(c->idx, stage, (size_t)B * sizeof(int32_t), cudaMemcpyHostToDevice, c->s),
       "data: copy indices");
    TIMED(gpu_spans_end(c->span[MLP_SPAN_H2D], c->s), "data: span");
    CK(cudaEventRecord(c->staged[c->slot], c->s), "data: event");
    TIMED(gpu_spans_begin(c->span[MLP_SPAN_KERNEL], c->s), "data: span"); /* to update's end */
    return mlp_gather(c, c->tr_x, c->tr_y, 1, 0, B);
}

extern "C" int mlp_cuda_forward(mlp_cuda *c, int B)
{
    if (!c || mlp_check_B(c, B, "forward"))
        return -1;
    return forward(c, B);
}

extern "C" int mlp_cuda_loss(mlp_cuda *c, int B)
{
    if (!c || mlp_check_B(c, B, "loss"))
        return -1;
    unsigned g = (unsigned)((B + GPU_ROWS_PER_BLOCK - 1) / GPU_ROWS_PER_BLOCK);
    k_gpu_softmax_ce<<<g, 32 * GPU_ROWS_PER_BLOCK, 0, c->s>>>(c->z3, c->y, B, c->d.n3, c->d3, c->rowloss);
    LAUNCHED("softmax");
    k_gpu_loss_sum<<<1, 256, 0, c->s>>>(c->rowloss, B, c->acc);
    LAUNCHED("loss sum");
    return 0;
}

extern "C" int mlp_cuda_backward(mlp_cuda *c, int B)
{
    if (!c || mlp_check_B(c, B, "backward"))
        return -1;
    const mlp_dims *d = &c->d;
    const mlp_layout *L = &c->L;
    if (weight_grad(c, c->a2, c->d3, B, d->n2, d->n3, L->W3, L->b3, "grad W3") ||
        product(c, 0, 1, EPI_MASK, B, d->n2, d->n3, c->d3, c->P + L->W3, c->d2, c->a2, "delta 2") ||
        weight_grad(c, c->a1, c->d2, B, d->n1, d->n2, L->W2, L->b2, "grad W2") ||
        product(c, 0, 1, EPI_MASK, B, d->n1, d->n2, c->d2, c->P + L->W2, c->d1, c->a1, "delta 1") ||
        weight_grad(c, c->X, c->d1, B, d->n0, d->n1, L->W1, L->b1, "grad W1"))
        return -1;
    return 0;
}

extern "C" int mlp_cuda_update(mlp_cuda *c, float lr)
{
    if (!c)
        return -1;
    k_sgd<<<grid_for(c->L.n, 256), 256, 0, c->s>>>(c->P, c->G, c->L.n, lr);
    LAUNCHED("sgd");
    TIMED(gpu_spans_end(c->span[MLP_SPAN_KERNEL], c->s), "update: span");
    return 0;
}

extern "C" int mlp_cuda_phase_mark(mlp_cuda *c, int i)
{
    TIMED(gpu_marks_mark(c->marks, i, c->s), "phase event");
    return 0;
}

extern "C" int mlp_cuda_phase_poll(mlp_cuda *c, double ms[MLP_PHASES])
{
    int rc = gpu_marks_poll(c->marks, ms);
    return rc <= 1 ? rc : mlp_fail(c, "phase time", gpu_timing_error(rc));
}

extern "C" int mlp_cuda_phase_ms(mlp_cuda *c, double ms[MLP_PHASES])
{
    int rc = gpu_marks_last(c->marks, ms);
    return rc <= 0 ? rc : mlp_fail(c, "phase time", gpu_timing_error(rc));
}

extern "C" int mlp_cuda_span_take(mlp_cuda *c, int which, double *ms)
{
    if (!c || which < 0 || which >= MLP_SPANS)
        return -1;
    TIMED(gpu_spans_take(c->span[which], ms), "span time");
    return 0;
}

extern "C" void mlp_cuda_span_drop(mlp_cuda *c)
{
    if (c)
        gpu_spans_drop_all(c->span, MLP_SPANS);
}

extern "C" void mlp_cuda_spans_off(mlp_cuda *c)
{
    if (c)
        gpu_spans_destroy_all(c->span, MLP_SPANS);
}

extern "C" int mlp_cuda_sync(mlp_cuda *c)
{
    if (!c)
        return -1;
    CK(cudaStreamSynchronize(c->s), "sync");
    return 0;
}

extern "C" int mlp_cuda_take_loss(mlp_cuda *c, double *loss_sum)
{
    if (!c || !loss_sum)
        return -1;
    TIMED(gpu_spans_begin(c->span[MLP_SPAN_D2H], c->s), "take loss: span");
    CK(cudaMemcpyAsync(c->h_loss, c->acc, sizeof(double), cudaMemcpyDeviceToHost, c->s), "take loss");
    TIMED(gpu_spans_end(c->span[MLP_SPAN_D2H], c->s), "take loss: span");
    CK(cudaMemsetAsync(c->acc, 0, sizeof(double), c->s), "take loss: zero");
    CK(cudaStreamSynchronize(c->s), "take loss");
    *loss_sum = *c->h_loss;
    return 0;
}

extern "C" int mlp_cuda_evaluate(mlp_cuda *c, long *correct)
{
    if (!c || !correct)
        return -1;
    CK(cudaMemsetAsync(c->count, 0, sizeof(unsigned long long), c->s), "evaluate: zero");
    for (long r = 0; r < c->n_test; r += c->max_batch) {
        int B = (int)(c->n_test - r < c->max_batch ? c->n_test - r : c->max_batch);
        if (mlp_gather(c, c->te_x, c->te_y, 0, r, B) || forward(c, B))
            return -1;
        k_gpu_count<<<(unsigned)((B + 255) / 256), 256, 0, c->s>>>(c->z3, c->y, B, c->d.n3, c->count);
        LAUNCHED("count");
    }
    TIMED(gpu_spans_begin(c->span[MLP_SPAN_D2H], c->s), "evaluate: span");
    CK(cudaMemcpyAsync(c->h_count, c->count, sizeof(unsigned long long), cudaMemcpyDeviceToHost, c->s),
       "evaluate: copy count");
    TIMED(gpu_spans_end(c->span[MLP_SPAN_D2H], c->s), "evaluate: span");
    CK(cudaStreamSynchronize(c->s), "evaluate");
    *correct = (long)*c->h_count;
    return 0;
}
