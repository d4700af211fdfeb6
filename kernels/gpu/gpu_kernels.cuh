/*
 * kernels/gpu/gpu_kernels.cuh: CUDA kernels the mlp (kernels/mlp/mlp_cuda.cu) and cnn (kernels/cnn/ .cu files)
 * studies share, moved here verbatim from mlp_cuda.cu so both run the same code.
 *
 * Every kernel is `static` (internal linkage): each .cu that includes this header gets its own copy, so
 * two translation units never define one symbol twice and the linker never merges two templates of one
 * name. `__attribute__((unused))` keeps nvcc quiet about the ones a file does not launch.
 */
#ifndef SL_KERNELS_GPU_GPU_KERNELS_CUH
#define SL_KERNELS_GPU_GPU_KERNELS_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#define GPU_ROWS_PER_BLOCK 8 /* warps (rows) per softmax block */

/* ---- data and loss ---------------------------------------------------------------------------------- */

/* X[b][:] = src_x[r][:] * (1/255), y[b] = src_y[r], r = idx[b] (or row0 + b when idx is NULL). */
static __global__ __attribute__((unused))
void k_gpu_gather(const uint8_t *__restrict__ src_x, const uint8_t *__restrict__ src_y,
                  const int32_t *__restrict__ idx, long row0, int B, int n0, float *__restrict__ X,
                  uint8_t *__restrict__ y)
{
    for (long b = blockIdx.x; b < B; b += gridDim.x) {
        long r = idx ? (long)idx[b] : row0 + b;
        const uint8_t *s = src_x + (size_t)r * n0;
        float *x = X + (size_t)b * n0;
        for (int k = threadIdx.x; k < n0; k += blockDim.x)
            x[k] = __fmul_rn((float)s[k], 1.0f / 255.0f);
        if (threadIdx.x == 0)
            y[b] = src_y[r];
    }
}

/* One warp per row: softmax of z3, d3 = (p - onehot(y)) / B, rowloss = -log max(p_y, 1e-30). */
static __global__ __attribute__((unused))
void k_gpu_softmax_ce(const float *__restrict__ z3, const uint8_t *__restrict__ y, int B, int K,
                      float *__restrict__ d3, double *__restrict__ rowloss)
{
    const int lane = threadIdx.x & 31;
    const long b = (long)blockIdx.x * GPU_ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (b >= B) /* the whole warp leaves together: b is per warp */
        return;
    const float *z = z3 + (size_t)b * K;
    float *g = d3 + (size_t)b * K;
    float mx = -INFINITY;
    for (int j = lane; j < K; j += 32)
        mx = fmaxf(mx, z[j]);
    for (int off = 16; off > 0; off >>= 1)
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
    float sum = 0.0f;
    for (int j = lane; j < K; j += 32)
        sum += expf(z[j] - mx);
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_xor_sync(0xffffffffu, sum, off);
    const int lab = y[b];
    const float invB = 1.0f / (float)B;
    for (int j = lane; j < K; j += 32) {
        float p = expf(z[j] - mx) / sum;
        g[j] = (p - (j == lab ? 1.0f : 0.0f)) * invB;
        if (j == lab)
            rowloss[b] = -log(fmax((double)p, 1e-30));
    }
}

/* *acc += mean(rowloss[0..B)), in a fixed order (one block). */
static __global__ __attribute__((unused))
void k_gpu_loss_sum(const double *__restrict__ rowloss, int B, double *acc)
{
    __shared__ double sh[256];
    double s = 0.0;
    for (int i = threadIdx.x; i < B; i += 256)
        s += rowloss[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w)
            sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *acc += sh[0] / (double)B;
}

/* db[j] = sum_b D[b][j]; blocks of 32 columns x 8 row lanes. */
static __global__ __attribute__((unused))
void k_gpu_colsum(const float *__restrict__ D, int B, int N, float *__restrict__ db)
{
    __shared__ float sh[8][33];
    const int col = blockIdx.x * 32 + threadIdx.x;
    float s = 0.0f;
    if (col < N)
        for (int b = threadIdx.y; b < B; b += 8)
            s += D[(size_t)b * N + col];
    sh[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && col < N) {
        float t = 0.0f;
        for (int r = 0; r < 8; r++)
            t += sh[r][threadIdx.x];
        db[col] = t;
    }
}

/* count += rows whose first maximal logit is at y (one thread per row, one atomic per block). */
static __global__ __attribute__((unused))
void k_gpu_count(const float *__restrict__ z3, const uint8_t *__restrict__ y, int B, int K,
                 unsigned long long *count)
{
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    int ok = 0;
    if (b < B) {
        const float *z = z3 + (size_t)b * K;
        int best = 0;
        for (int j = 1; j < K; j++)
            if (z[j] > z[best])
                best = j;
        ok = best == y[b];
    }
    int n = __syncthreads_count(ok);
    if (threadIdx.x == 0 && n)
        atomicAdd(count, (unsigned long long)n);
}

/* ---- dense layers: the tiled SGEMM (256 threads, k-slices of GPU_TK in shared memory) -------------- */

#define GPU_TK 16 /* SGEMM k-slice (tiles: 16 RM x 16 RN) */
#define GPU_GEMM_THREADS 256

enum { EPI_STORE = 0, EPI_BIAS = 1, EPI_BIAS_RELU = 2, EPI_MASK = 3 };

/* C (M x N, row-major) = op(A) op(B) with the epilogue EPI. op(A) is M x K: A stored M x K, or K x M
 * when TA. op(B) is K x N: B stored K x N, or N x K when TB. aux: the bias (n = N) or the mask (M x N). */
template <int RM, int RN, bool TA, bool TB, int EPI>
static __global__ void __launch_bounds__(GPU_GEMM_THREADS)
k_gpu_gemm(int M, int N, int K, const float *__restrict__ A, const float *__restrict__ Bm, float *__restrict__ C,
           const float *__restrict__ aux)
{
    constexpr int TM = 16 * RM, TN = 16 * RN; /* the block's tile */
    __shared__ float As[GPU_TK][TM + 4];
    __shared__ float Bs[GPU_TK][TN + 4];
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN;
    float acc[RM][RN] = {};

    for (int k0 = 0; k0 < K; k0 += GPU_TK) {
        /* loads: consecutive threads walk the dimension that is contiguous in memory */
#pragma unroll
        for (int i = tid; i < TM * GPU_TK; i += GPU_GEMM_THREADS) {
            int m = TA ? i % TM : i / GPU_TK, k = TA ? i / TM : i % GPU_TK;
            int gm = m0 + m, gk = k0 + k;
            float v = 0.0f;
            if (gm < M && gk < K)
                v = TA ? A[(size_t)gk * M + gm] : A[(size_t)gm * K + gk];
            As[k][m] = v;
        }
#pragma unroll
        for (int i = tid; i < TN * GPU_TK; i += GPU_GEMM_THREADS) {
            int n = TB ? i / GPU_TK : i % TN, k = TB ? i % GPU_TK : i / TN;
            int gn = n0 + n, gk = k0 + k;
            float v = 0.0f;
            if (gn < N && gk < K)
                v = TB ? Bm[(size_t)gn * K + gk] : Bm[(size_t)gk * N + gn];
            Bs[k][n] = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < GPU_TK; k++) {
            float a[RM], b[RN];
#pragma unroll
            for (int i = 0; i < RM; i++)
                a[i] = As[k][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < RN; j++)
                b[j] = Bs[k][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < RM; i++)
#pragma unroll
                for (int j = 0; j < RN; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < RM; i++) {
        int gm = m0 + ty + 16 * i;
        if (gm >= M)
            continue;
#pragma unroll
        for (int j = 0; j < RN; j++) {
            int gn = n0 + tx + 16 * j;
            if (gn >= N)
                continue;
            float v = acc[i][j];
            if (EPI == EPI_BIAS || EPI == EPI_BIAS_RELU)
                v += aux[gn];
            if (EPI == EPI_BIAS_RELU)
                v = v < 0.0f ? 0.0f : v;
            if (EPI == EPI_MASK)
                v = aux[(size_t)gm * N + gn] > 0.0f ? v : 0.0f;
            C[(size_t)gm * N + gn] = v;
        }
    }
}

/* ---- elementwise epilogues (for a library GEMM without fused ones) -------------------------------- */

/* Z[b][j] += bias[j], then ReLU when relu. */
static __global__ __attribute__((unused))
void k_gpu_bias_act(float *Z, const float *bias, int M, int N, int relu)
{
    size_t n = (size_t)M * N;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = Z[i] + bias[i % N];
        Z[i] = relu && v < 0.0f ? 0.0f : v;
    }
}

/* D[i] = A[i] > 0 ? D[i] : 0: the ReLU' mask of the layer whose output is A. */
static __global__ __attribute__((unused))
void k_gpu_mask(float *D, const float *A, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        D[i] = A[i] > 0.0f ? D[i] : 0.0f;
}

#endif
