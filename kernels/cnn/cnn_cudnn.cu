/*
 * kernels/cnn/cnn_cudnn.cu: the cudnn variant's layers (the context and the step are cnn_cuda.cu's):
 * convolutions, pooling and ReLU by cuDNN 9's legacy API, the dense layers by cublasSgemm plus small
 * elementwise kernels (bias, ReLU, mask, bias gradient). Same maths as cnn_kernels.h.
 *
 * Design (and why):
 *   - descriptors: NCHW float tensors, one set per batch size (DNN_SHAPES sets). create prepares the
 *     sizes it can foresee: max_batch, the last partial batch of an epoch over all n_train rows and the
 *     last evaluation chunk of n_test rows; a size first met in a step is set there (in place of the
 *     oldest set but max_batch's when all are taken). Setting a
 *     set is five descriptors and five cudnnGet*WorkspaceSize queries, host work that a step switching
 *     between an epoch's full and partial batch would otherwise repeat while the GPU waits for its
 *     next call. Filters OIHW (cnn_kernels.h's layout, so P's blocks are passed as they are);
 *     convolutions 'valid', stride 1, CUDNN_CROSS_CORRELATION (no kernel flip: PyTorch's and the
 *     CPU's maths); pooling 2x2/2 without padding, whose output size cuDNN computes as 1 + (h - 2) / 2 =
 *     floor(h / 2), as cnn_pool. create checks both output shapes against cnn_dims.
 *   - FP32, not TF32: the convolution descriptors use CUDNN_FMA_MATH (CUDNN_DEFAULT_MATH lets Ampere and
 *     later GPUs use TF32 tensor cores for float data, 10-bit mantissas), and an algorithm cudnnFind*
 *     reports with tensor-op maths is skipped. cuBLAS runs in CUBLAS_DEFAULT_MATH (no TF32).
 *   - algorithms: chosen once, at create, by cudnnFindConvolution{Forward,BackwardData,BackwardFilter}
 *     Algorithm (cuDNN times each candidate: the "benchmark mode") at max_batch, the fastest that
 *     succeeded, or (CNN_CUDA_CUDNN_HEURISTIC) the first FP32 entry of cudnnGet*Algorithm_v7's ranking,
 *     nothing run: the framework default; every smaller batch uses the same ones. The workspace is the largest the chosen
 *     algorithms need at max_batch; a batch size that would need more is refused with a message.
 *     cnn_cuda_algorithms reports the choice.
 *   - a convolution layer forward is three calls: cudnnConvolutionForward, cudnnAddTensor (the bias,
 *     broadcast over 1 x cout x 1 x 1) and cudnnActivationForward in place. The fused
 *     cudnnConvolutionBiasActivationForward was not used: it restricts the algorithm (implicit precomputed
 *     GEMM for some modes), which would override what cudnnFind chose. Backward: cudnnPoolingBackward,
 *     cudnnActivationBackward in place (dy = dx; ReLU's derivative from y = relu(z), the same mask as
 *     z > 0), cudnnConvolutionBackwardBias, BackwardFilter and (conv2 only) BackwardData.
 *   - pooling: CUDNN_POOLING_MAX_DETERMINISTIC (CUDNN_POOLING_MAX's backward may use atomics). cuDNN's
 *     backward finds the maximum again from x and y, so its rule for ties is its own and may differ from
 *     the CPU's and the cuda variant's (the first maximum in the window takes the whole gradient): with
 *     exactly equal values in a window (a blank background gives equal conv outputs, relu(bias)) cuDNN
 *     may route the gradient elsewhere or to several. Where the tied value is 0 the ReLU mask zeroes it
 *     either way. The pool's dx is zeroed first, so the rows and columns no window covers (conv2's 11th)
 *     are 0 whatever cuDNN writes there.
 *   - cuBLAS on row-major arrays: a row-major M x N matrix is the column-major N x M matrix (its
 *     transpose) with leading dimension N, so row-major C = op(A) op(B) is computed as column-major
 *     C^T = op(B)^T op(A)^T: cublasSgemm(opB, opA, N, M, K, B, ldb, A, lda, C, N), each operand keeping
 *     its own op, and each leading dimension the stored row length (A: K, or M when transposed; B: N,
 *     or K when transposed). The products: a3 = p2 W1 (M = B, N = 128, K = 400), z4 = a3 W2, dW2 = a3^T
 *     d4, dW1 = p2^T da3 (op(A) = A^T, K = B), da3 = d4 W2^T, dp2 = da3 W1^T (op(B) = B^T).
 *   - graph capture: cuBLAS gets its own 4 MiB workspace (cublasSetWorkspace, after cublasSetStream,
 *     which resets it) so it allocates nothing while a step is captured; cnn_cuda.cu runs the layers
 *     once outside the capture first. If cuDNN still refuses capture, the step fails with that message
 *     (graph=0 then runs the same maths).
 *   - counting: each cuDNN or cuBLAS call counts as one operation (it may launch more kernels).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cnn_cuda_impl.h"
#include "sl_config.h"

#if SL_HAVE_CUDNN && SL_HAVE_CUBLAS
#include <cublas_v2.h>
#include <cudnn.h>

#include "gpu/gpu_epilogue.cuh"

#define BLAS_WS_BYTES ((size_t)4 << 20) /* cuBLAS's documented default workspace before Hopper */
#define DNN_SHAPES 4 /* descriptor sets: max_batch, the epoch's and the evaluation's partial batch, one more */

/* The activation tensors' descriptors for one batch size B (0: the set is free). */
typedef struct dnn_shape {
    int B;
    cudnnTensorDescriptor_t x, a1, p1, a2, p2;
} dnn_shape;

struct cnn_dnn {
    cudnnHandle_t h;
    cublasHandle_t blas;
    dnn_shape shape[DNN_SHAPES]; /* the activations' descriptors by batch size */
    dnn_shape *t;                /* the set the calls use now */
    int victim;                  /* the set a new size replaces when all are taken */
    cudnnTensorDescriptor_t b1, b2; /* the conv biases, 1 x cout x 1 x 1 */
    cudnnFilterDescriptor_t w1, w2;
    cudnnConvolutionDescriptor_t cv1, cv2;
    cudnnPoolingDescriptor_t pool;
    cudnnActivationDescriptor_t relu;
    cudnnConvolutionFwdAlgo_t fwd1, fwd2;
    cudnnConvolutionBwdFilterAlgo_t bwf1, bwf2;
    cudnnConvolutionBwdDataAlgo_t bwd2;
    int chosen; /* the algorithms are set: a new set of descriptors checks the workspace */
    void *ws, *blas_ws;
    size_t ws_bytes;
    double search_s; /* wall seconds choose_algorithms spent in the queries */
    char algos[384];
};

static const float one = 1.0f, zero = 0.0f;

#define CKD(call, what)                                                                                  \
    do {                                                                                                 \
        cudnnStatus_t s_ = (call);                                                                       \
        if (s_ != CUDNN_STATUS_SUCCESS)                                                                  \
            return cnn_fail(c, what, cudnnGetErrorString(s_));                                           \
    } while (0)
#define CKB(call, what)                                                                                  \
    do {                                                                                                 \
        cublasStatus_t s_ = (call);                                                                      \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                                 \
            return cnn_fail(c, what, cublasGetStatusString(s_));                                         \
    } while (0)
/* A call that enqueues work: checked and counted. */
#define DNN(call, what)                                                                                  \
    do {                                                                                                 \
        CKD(call, what);                                                                                 \
        cnn_count_op(c);                                                                                 \
    } while (0)

/* ---- dense layers (bias and mask kernels: kernels/gpu/gpu_epilogue.cuh) ----------------------- */

/* Row-major C (M x N) = op(A) op(B) by cublasSgemm on the transposed problem (top of file). */
static int sgemm(cnn_cuda *c, int ta, int tb, int M, int N, int K, const float *A, const float *Bm, float *C,
                 const char *what)
{
    CKB(cublasSgemm(c->dnn->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &one,
                    Bm, tb ? K : N, A, ta ? M : K, &zero, C, N),
        what);
    cnn_count_op(c);
    return 0;
}

static int bias_act(cnn_cuda *c, float *Z, const float *bias, int M, int N, int relu)
{
    k_gpu_bias_act<<<cnn_grid(c, (size_t)M * N, 256), 256, 0, c->s>>>(Z, bias, M, N, relu);
    LAUNCHED("dense bias");
    return 0;
}

static int mask(cnn_cuda *c, float *D, const float *A, size_t n)
{
    k_gpu_mask<<<cnn_grid(c, n, 256), 256, 0, c->s>>>(D, A, n);
    LAUNCHED("dense mask");
    return 0;
}

/* ---- descriptors and algorithms --------------------------------------------------------------------- */

static int set4d(cnn_cuda *c, cudnnTensorDescriptor_t t, int n, int ch, int h, int w)
{
    CKD(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, ch, h, w), "tensor descriptor");
    return 0;
}

/* The largest workspace the chosen algorithms need at t's batch size. */
static int ws_need(cnn_cuda *c, const dnn_shape *t, size_t *bytes)
{
    cnn_dnn *n = c->dnn;
    size_t s[5] = {0, 0, 0, 0, 0};
    CKD(cudnnGetConvolutionForwardWorkspaceSize(n->h, t->x, n->w1, n->cv1, t->a1, n->fwd1, &s[0]), "workspace");
    CKD(cudnnGetConvolutionForwardWorkspaceSize(n->h, t->p1, n->w2, n->cv2, t->a2, n->fwd2, &s[1]), "workspace");
    CKD(cudnnGetConvolutionBackwardFilterWorkspaceSize(n->h, t->x, t->a1, n->cv1, n->w1, n->bwf1, &s[2]),
        "workspace");
    CKD(cudnnGetConvolutionBackwardFilterWorkspaceSize(n->h, t->p1, t->a2, n->cv2, n->w2, n->bwf2, &s[3]),
        "workspace");
    CKD(cudnnGetConvolutionBackwardDataWorkspaceSize(n->h, n->w2, t->a2, n->cv2, t->p1, n->bwd2, &s[4]),
        "workspace");
    *bytes = 0;
    for (int i = 0; i < 5; i++)
        *bytes = s[i] > *bytes ? s[i] : *bytes;
    return 0;
}

/* Sets t's descriptors for batch B; once the algorithms are chosen, B's workspace must fit. */
static int set_shape(cnn_cuda *c, dnn_shape *t, int B)
{
    cnn_dnn *n = c->dnn;
    const cnn_dims *d = &c->d;
    t->B = 0; /* free until all five are set and checked */
    if (set4d(c, t->x, B, d->conv1.cin, d->conv1.h, d->conv1.w) ||
        set4d(c, t->a1, B, d->conv1.cout, cnn_conv_ho(&d->conv1), cnn_conv_wo(&d->conv1)) ||
        set4d(c, t->p1, B, d->pool1.c, d->pool1.h / 2, d->pool1.w / 2) ||
        set4d(c, t->a2, B, d->conv2.cout, cnn_conv_ho(&d->conv2), cnn_conv_wo(&d->conv2)) ||
        set4d(c, t->p2, B, d->pool2.c, d->pool2.h / 2, d->pool2.w / 2))
        return -1;
    if (n->chosen) {
        size_t need = 0;
        if (ws_need(c, t, &need))
            return -1;
        if (need > n->ws_bytes) {
            char why[128];
            snprintf(why, sizeof why, "batch %d needs %zu bytes of workspace, %zu were sized at max_batch", B, need,
                     n->ws_bytes);
            return cnn_fail(c, "cudnn workspace", why);
        }
    }
    t->B = B;
    return 0;
}

/* Makes B's descriptor set the current one: found among the prepared sets (no cuDNN call), else set in
 * a free one, or in place of the oldest set other than max_batch's (slot 0). */
static int set_batch(cnn_cuda *c, int B)
{
    cnn_dnn *n = c->dnn;
    if (n->t && n->t->B == B)
        return 0;
    dnn_shape *t = NULL;
    for (int i = 0; i < DNN_SHAPES && !t; i++)
        if (n->shape[i].B == B)
            t = &n->shape[i];
    for (int i = 0; i < DNN_SHAPES && !t; i++)
        if (n->shape[i].B == 0)
            t = &n->shape[i];
    if (!t) {
        n->victim = n->victim % (DNN_SHAPES - 1) + 1;
        t = &n->shape[n->victim];
    }
    n->t = NULL;
    if (t->B != B && set_shape(c, t, B))
        return -1;
    n->t = t;
    return 0;
}

/* The descriptors that do not depend on the batch size. */
static int set_fixed(cnn_cuda *c)
{
    cnn_dnn *n = c->dnn;
    const cnn_conv *v[2] = {&c->d.conv1, &c->d.conv2};
    cudnnFilterDescriptor_t w[2] = {n->w1, n->w2};
    cudnnConvolutionDescriptor_t cv[2] = {n->cv1, n->cv2};
    cudnnTensorDescriptor_t b[2] = {n->b1, n->b2};
    for (int i = 0; i < 2; i++) {
        CKD(cudnnSetFilter4dDescriptor(w[i], CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, v[i]->cout, v[i]->cin, v[i]->k,
                                       v[i]->k),
            "filter descriptor");
        CKD(cudnnSetConvolution2dDescriptor(cv[i], 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            "convolution descriptor");
        CKD(cudnnSetConvolutionMathType(cv[i], CUDNN_FMA_MATH), "convolution math type");
        if (set4d(c, b[i], 1, v[i]->cout, 1, 1))
            return -1;
    }
    CKD(cudnnSetPooling2dDescriptor(n->pool, CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2,
                                    2),
        "pooling descriptor");
    CKD(cudnnSetActivationDescriptor(n->relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
        "activation descriptor");
    return 0;
}

/* cuDNN's output shapes against cnn_dims' (descriptors set for max_batch). */
static int check_shapes(cnn_cuda *c)
{
    cnn_dnn *n = c->dnn;
    const dnn_shape *t = n->t;
    const cnn_dims *d = &c->d;
    const int B = c->max_batch;
    const int want[4][4] = {{B, d->conv1.cout, cnn_conv_ho(&d->conv1), cnn_conv_wo(&d->conv1)},
                            {B, d->pool1.c, d->pool1.h / 2, d->pool1.w / 2},
                            {B, d->conv2.cout, cnn_conv_ho(&d->conv2), cnn_conv_wo(&d->conv2)},
                            {B, d->pool2.c, d->pool2.h / 2, d->pool2.w / 2}};
    int got[4][4];
    CKD(cudnnGetConvolution2dForwardOutputDim(n->cv1, t->x, n->w1, &got[0][0], &got[0][1], &got[0][2], &got[0][3]),
        "conv1 shape");
    CKD(cudnnGetPooling2dForwardOutputDim(n->pool, t->a1, &got[1][0], &got[1][1], &got[1][2], &got[1][3]),
        "pool1 shape");
    CKD(cudnnGetConvolution2dForwardOutputDim(n->cv2, t->p1, n->w2, &got[2][0], &got[2][1], &got[2][2], &got[2][3]),
        "conv2 shape");
    CKD(cudnnGetPooling2dForwardOutputDim(n->pool, t->a2, &got[3][0], &got[3][1], &got[3][2], &got[3][3]),
        "pool2 shape");
    static const char *layer[4] = {"conv1", "pool1", "conv2", "pool2"};
    for (int i = 0; i < 4; i++)
        if (memcmp(got[i], want[i], sizeof got[i]) != 0) {
            char why[160];
            snprintf(why, sizeof why, "cuDNN's output is %dx%dx%dx%d, cnn_dims says %dx%dx%dx%d", got[i][0],
                     got[i][1], got[i][2], got[i][3], want[i][0], want[i][1], want[i][2], want[i][3]);
            return cnn_fail(c, layer[i], why);
        }
    return 0;
}

/* The index of the first (fastest) result that ran and used FP32 FMA maths, or -1. */
template <typename Perf>
static int pick(const Perf *r, int n)
{
    for (int i = 0; i < n; i++)
        if (r[i].status == CUDNN_STATUS_SUCCESS && r[i].mathType != CUDNN_TENSOR_OP_MATH &&
            r[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
            return i;
    return -1;
}

static const char *fwd_name(int a)
{
    static const char *s[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                              "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    return a >= 0 && a < (int)(sizeof s / sizeof s[0]) ? s[a] : "?";
}
static const char *bwf_name(int a)
{
    static const char *s[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
    return a >= 0 && a < (int)(sizeof s / sizeof s[0]) ? s[a] : "?";
}
static const char *bwd_name(int a)
{
    static const char *s[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    return a >= 0 && a < (int)(sizeof s / sizeof s[0]) ? s[a] : "?";
}

/* The queries that choose the algorithms: cudnnFind* (cuDNN runs each candidate on the descriptors'
 * shapes and sorts them by measured time) or cudnnGet*Algorithm_v7 (its heuristics' ranking, nothing
 * run). The two families take the same arguments, so the backend picks a set of three once. */
typedef struct dnn_queries {
    decltype(&cudnnFindConvolutionForwardAlgorithm) fwd;
    decltype(&cudnnFindConvolutionBackwardFilterAlgorithm) bwf;
    decltype(&cudnnFindConvolutionBackwardDataAlgorithm) bwd;
    const char *how;
} dnn_queries;

static const dnn_queries find_queries = {cudnnFindConvolutionForwardAlgorithm,
                                         cudnnFindConvolutionBackwardFilterAlgorithm,
                                         cudnnFindConvolutionBackwardDataAlgorithm, "cudnnFind"};
static const dnn_queries heuristic_queries = {cudnnGetConvolutionForwardAlgorithm_v7,
                                              cudnnGetConvolutionBackwardFilterAlgorithm_v7,
                                              cudnnGetConvolutionBackwardDataAlgorithm_v7, "cudnnGet*_v7 heuristic"};

static double wall_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The five convolutions' algorithms (descriptors at max_batch) by q, each the first FP32 one of its
 * ranking, then the workspace for them. */
static int query_algorithms(cnn_cuda *c, const dnn_queries *q)
{
    cnn_dnn *n = c->dnn;
    const dnn_shape *t = n->t;
    cudnnConvolutionFwdAlgoPerf_t f[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnnConvolutionBwdFilterAlgoPerf_t wf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    cudnnConvolutionBwdDataAlgoPerf_t df[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int got = 0, i;
    CKD(q->fwd(n->h, t->x, n->w1, n->cv1, t->a1, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, f), "conv1 forward algorithm");
    if ((i = pick(f, got)) < 0)
        return cnn_fail(c, "conv1 forward algorithm", "no FP32 algorithm ran");
    n->fwd1 = f[i].algo;
    CKD(q->fwd(n->h, t->p1, n->w2, n->cv2, t->a2, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, f),
        "conv2 forward algorithm");
    if ((i = pick(f, got)) < 0)
        return cnn_fail(c, "conv2 forward algorithm", "no FP32 algorithm ran");
    n->fwd2 = f[i].algo;
    CKD(q->bwf(n->h, t->x, t->a1, n->cv1, n->w1, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, wf),
        "conv1 backward filter algorithm");
    if ((i = pick(wf, got)) < 0)
        return cnn_fail(c, "conv1 backward filter algorithm", "no FP32 algorithm ran");
    n->bwf1 = wf[i].algo;
    CKD(q->bwf(n->h, t->p1, t->a2, n->cv2, n->w2, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, wf),
        "conv2 backward filter algorithm");
    if ((i = pick(wf, got)) < 0)
        return cnn_fail(c, "conv2 backward filter algorithm", "no FP32 algorithm ran");
    n->bwf2 = wf[i].algo;
    CKD(q->bwd(n->h, n->w2, t->a2, n->cv2, t->p1, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, df),
        "conv2 backward data algorithm");
    if ((i = pick(df, got)) < 0)
        return cnn_fail(c, "conv2 backward data algorithm", "no FP32 algorithm ran");
    n->bwd2 = df[i].algo;
    return 0;
}

/* Chooses the algorithms by the backend's queries, timing the choice (the stream drained first and
 * after, so search_s is the search alone: the cost PyTorch's benchmark mode adds to a first epoch), then
 * allocates the workspace they need. */
static int choose_algorithms(cnn_cuda *c)
{
    cnn_dnn *n = c->dnn;
    const dnn_queries *q = c->backend == CNN_CUDA_CUDNN_HEURISTIC ? &heuristic_queries : &find_queries;
    CK(cudaStreamSynchronize(c->s), "cudnn setup");
    double t0 = wall_s();
    if (query_algorithms(c, q))
        return -1;
    CK(cudaDeviceSynchronize(), "cudnn algorithm search");
    n->search_s = wall_s() - t0;
    if (ws_need(c, n->t, &n->ws_bytes) || cnn_dalloc(c, &n->ws, n->ws_bytes, "cudaMalloc cudnn workspace"))
        return -1;
    n->chosen = 1;
    snprintf(n->algos, sizeof n->algos,
             "conv1 fwd %s, conv1 bwd filter %s, conv2 fwd %s, conv2 bwd filter %s, conv2 bwd data %s; "
             "workspace %zu bytes (%s at batch %d, %.3f s)",
             fwd_name(n->fwd1), bwf_name(n->bwf1), fwd_name(n->fwd2), bwf_name(n->bwf2), bwd_name(n->bwd2),
             n->ws_bytes, q->how, c->max_batch, n->search_s);
    return 0;
}

/* ---- the backend ------------------------------------------------------------------------------------ */

static int create_handles(cnn_cuda *c)
{
    cnn_dnn *n = c->dnn;
    CKD(cudnnCreate(&n->h), "cudnnCreate");
    CKD(cudnnSetStream(n->h, c->s), "cudnnSetStream");
    CKB(cublasCreate(&n->blas), "cublasCreate");
    CKB(cublasSetStream(n->blas, c->s), "cublasSetStream"); /* before the workspace: it resets it */
    CKB(cublasSetMathMode(n->blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    if (cnn_dalloc(c, &n->blas_ws, BLAS_WS_BYTES, "cudaMalloc cublas workspace"))
        return -1;
    CKB(cublasSetWorkspace(n->blas, n->blas_ws, BLAS_WS_BYTES), "cublasSetWorkspace");
    for (int i = 0; i < DNN_SHAPES; i++) {
        dnn_shape *t = &n->shape[i];
        cudnnTensorDescriptor_t *d[5] = {&t->x, &t->a1, &t->p1, &t->a2, &t->p2};
        for (int j = 0; j < 5; j++)
            CKD(cudnnCreateTensorDescriptor(d[j]), "cudnnCreateTensorDescriptor");
    }
    CKD(cudnnCreateTensorDescriptor(&n->b1), "cudnnCreateTensorDescriptor");
    CKD(cudnnCreateTensorDescriptor(&n->b2), "cudnnCreateTensorDescriptor");
    CKD(cudnnCreateFilterDescriptor(&n->w1), "cudnnCreateFilterDescriptor");
    CKD(cudnnCreateFilterDescriptor(&n->w2), "cudnnCreateFilterDescriptor");
    CKD(cudnnCreateConvolutionDescriptor(&n->cv1), "cudnnCreateConvolutionDescriptor");
    CKD(cudnnCreateConvolutionDescriptor(&n->cv2), "cudnnCreateConvolutionDescriptor");
    CKD(cudnnCreatePoolingDescriptor(&n->pool), "cudnnCreatePoolingDescriptor");
    CKD(cudnnCreateActivationDescriptor(&n->relu), "cudnnCreateActivationDescriptor");
    return 0;
}

int cnn_dnn_create(cnn_cuda *c)
{
    c->dnn = (cnn_dnn *)calloc(1, sizeof *c->dnn);
    if (!c->dnn)
        return cnn_fail(c, "cudnn", "out of host memory");
    if (create_handles(c) || set_fixed(c) || set_batch(c, c->max_batch) || check_shapes(c) || choose_algorithms(c))
        return -1;
    /* the partial batches an epoch over all rows and the evaluation will meet: set now, not in a step */
    const int partial[2] = {(int)(c->n_train % c->max_batch), (int)(c->n_test % c->max_batch)};
    for (int i = 0; i < 2; i++)
        if (partial[i] > 0 && set_batch(c, partial[i]))
            return -1;
    if (set_batch(c, c->max_batch))
        return -1;
    CK(cudaStreamSynchronize(c->s), "cudnn setup");
    return 0;
}

void cnn_dnn_destroy(cnn_dnn *n)
{
    if (!n)
        return;
    for (int i = 0; i < DNN_SHAPES; i++) {
        const dnn_shape *t = &n->shape[i];
        cudnnTensorDescriptor_t d[5] = {t->x, t->a1, t->p1, t->a2, t->p2};
        for (int j = 0; j < 5; j++)
            if (d[j])
                cudnnDestroyTensorDescriptor(d[j]);
    }
    if (n->b1)
        cudnnDestroyTensorDescriptor(n->b1);
    if (n->b2)
        cudnnDestroyTensorDescriptor(n->b2);
    if (n->w1)
        cudnnDestroyFilterDescriptor(n->w1);
    if (n->w2)
        cudnnDestroyFilterDescriptor(n->w2);
    if (n->cv1)
        cudnnDestroyConvolutionDescriptor(n->cv1);
    if (n->cv2)
        cudnnDestroyConvolutionDescriptor(n->cv2);
    if (n->pool)
        cudnnDestroyPoolingDescriptor(n->pool);
    if (n->relu)
        cudnnDestroyActivationDescriptor(n->relu);
    if (n->blas)
        cublasDestroy(n->blas);
    if (n->h)
        cudnnDestroy(n->h);
    if (n->ws)
        cudaFree(n->ws);
    if (n->blas_ws)
        cudaFree(n->blas_ws);
    free(n);
}

const char *cnn_dnn_algorithms(const cnn_dnn *n) { return n->algos; }
double cnn_dnn_search_s(const cnn_dnn *n) { return n->search_s; }

/* y = relu(conv(x, w) + b) in three calls (top of file: why not the fused one). */
static int conv_forward(cnn_cuda *c, cudnnTensorDescriptor_t xd, const float *x, cudnnFilterDescriptor_t wd,
                        const float *w, cudnnConvolutionDescriptor_t cv, cudnnConvolutionFwdAlgo_t algo,
                        cudnnTensorDescriptor_t bd, const float *b, cudnnTensorDescriptor_t yd, float *y)
{
    cnn_dnn *n = c->dnn;
    DNN(cudnnConvolutionForward(n->h, &one, xd, x, wd, w, cv, algo, n->ws, n->ws_bytes, &zero, yd, y),
        "cudnnConvolutionForward");
    DNN(cudnnAddTensor(n->h, &one, bd, b, &one, yd, y), "cudnnAddTensor (bias)");
    DNN(cudnnActivationForward(n->h, n->relu, &one, yd, y, &zero, yd, y), "cudnnActivationForward");
    return 0;
}

int cnn_dnn_forward(cnn_cuda *c, int B)
{
    cnn_dnn *n = c->dnn;
    const cnn_dims *d = &c->d;
    const cnn_layout *L = &c->L;
    const float *P = c->P;
    const int n1 = d->dense1.nin, n2 = d->dense1.nout, n3 = d->dense2.nout;
    if (set_batch(c, B))
        return -1;
    const dnn_shape *t = n->t;
    if (conv_forward(c, t->x, c->X, n->w1, P + L->c1w, n->cv1, n->fwd1, n->b1, P + L->c1b, t->a1, c->a1))
        return -1;
    DNN(cudnnPoolingForward(n->h, n->pool, &one, t->a1, c->a1, &zero, t->p1, c->p1), "pool1 forward");
    if (conv_forward(c, t->p1, c->p1, n->w2, P + L->c2w, n->cv2, n->fwd2, n->b2, P + L->c2b, t->a2, c->a2))
        return -1;
    DNN(cudnnPoolingForward(n->h, n->pool, &one, t->a2, c->a2, &zero, t->p2, c->p2), "pool2 forward");
    if (sgemm(c, 0, 0, B, n2, n1, c->p2, P + L->d1w, c->a3, "dense1 forward") ||
        bias_act(c, c->a3, P + L->d1b, B, n2, 1) ||
        sgemm(c, 0, 0, B, n3, n2, c->a3, P + L->d2w, c->z4, "dense2 forward") ||
        bias_act(c, c->z4, P + L->d2b, B, n3, 0))
        return -1;
    return 0;
}

/* dx (the pool's input, descriptor ad) = the pool's backward of dy, then ReLU's backward in place:
 * dL/dz of the convolution whose output is a. */
static int pool_relu_backward(cnn_cuda *c, cudnnTensorDescriptor_t pd, const float *p, const float *dp,
                              cudnnTensorDescriptor_t ad, const float *a, float *da, size_t n_a, const char *what)
{
    cnn_dnn *n = c->dnn;
    CK(cudaMemsetAsync(da, 0, n_a * sizeof(float), c->s), what);
    cnn_count_op(c);
    DNN(cudnnPoolingBackward(n->h, n->pool, &one, pd, p, pd, dp, ad, a, &zero, ad, da), what);
    DNN(cudnnActivationBackward(n->h, n->relu, &one, ad, a, ad, da, ad, a, &zero, ad, da), what);
    return 0;
}

int cnn_dnn_backward(cnn_cuda *c, int B)
{
    cnn_dnn *n = c->dnn;
    const cnn_dims *d = &c->d;
    const cnn_layout *L = &c->L;
    const float *P = c->P;
    float *G = c->G;
    const int n1 = d->dense1.nin, n2 = d->dense1.nout, n3 = d->dense2.nout;
    if (set_batch(c, B))
        return -1;
    const dnn_shape *t = n->t;
    if (sgemm(c, 1, 0, n2, n3, B, c->a3, c->d4, G + L->d2w, "dense2 weights") ||
        cnn_colsum(c, c->d4, B, n3, G + L->d2b) ||
        sgemm(c, 0, 1, B, n2, n3, c->d4, P + L->d2w, c->da3, "dense2 delta") ||
        mask(c, c->da3, c->a3, (size_t)B * n2) ||
        sgemm(c, 1, 0, n1, n2, B, c->p2, c->da3, G + L->d1w, "dense1 weights") ||
        cnn_colsum(c, c->da3, B, n2, G + L->d1b) ||
        sgemm(c, 0, 1, B, n1, n2, c->da3, P + L->d1w, c->dp2, "dense1 delta") ||
        pool_relu_backward(c, t->p2, c->p2, c->dp2, t->a2, c->a2, c->da2, (size_t)B * cnn_conv_out(&d->conv2),
                           "pool2 backward"))
        return -1;
    DNN(cudnnConvolutionBackwardBias(n->h, &one, t->a2, c->da2, &zero, n->b2, G + L->c2b), "conv2 bias");
    DNN(cudnnConvolutionBackwardFilter(n->h, &one, t->p1, c->p1, t->a2, c->da2, n->cv2, n->bwf2, n->ws, n->ws_bytes,
                                       &zero, n->w2, G + L->c2w),
        "conv2 weights");
    DNN(cudnnConvolutionBackwardData(n->h, &one, n->w2, P + L->c2w, t->a2, c->da2, n->cv2, n->bwd2, n->ws,
                                     n->ws_bytes, &zero, t->p1, c->dp1),
        "conv2 delta");
    if (pool_relu_backward(c, t->p1, c->p1, c->dp1, t->a1, c->a1, c->da1, (size_t)B * cnn_conv_out(&d->conv1),
                           "pool1 backward"))
        return -1;
    DNN(cudnnConvolutionBackwardBias(n->h, &one, t->a1, c->da1, &zero, n->b1, G + L->c1b), "conv1 bias");
    DNN(cudnnConvolutionBackwardFilter(n->h, &one, t->x, c->X, t->a1, c->da1, n->cv1, n->bwf1, n->ws, n->ws_bytes,
                                       &zero, n->w1, G + L->c1w),
        "conv1 weights");
    return 0;
}

#else /* built without cuDNN or cuBLAS: cnn_cuda_create refuses the backend before calling these */

#define NO_DNN "built without cuDNN and cuBLAS"
int cnn_dnn_create(cnn_cuda *c) { return cnn_fail(c, "cudnn variant", NO_DNN); }
void cnn_dnn_destroy(cnn_dnn *n) { (void)n; }
int cnn_dnn_forward(cnn_cuda *c, int B) { return (void)B, cnn_fail(c, "cudnn variant", NO_DNN); }
int cnn_dnn_backward(cnn_cuda *c, int B) { return (void)B, cnn_fail(c, "cudnn variant", NO_DNN); }
const char *cnn_dnn_algorithms(const cnn_dnn *n) { (void)n; return ""; }
double cnn_dnn_search_s(const cnn_dnn *n) { (void)n; return 0; }

#endif
