/*
 * kernels/gpu/gpu_batch.cuh: the per-batch kernels (gather, softmax cross-entropy, loss sum, column
 * sums, accuracy count), shared by mlp_cuda.cu and cnn_cuda.cu; moved here verbatim from
 * kernels/mlp/mlp_cuda.cu so both studies run the same code.
 *
 * Every kernel is `static` (internal linkage): each .cu that includes this header gets its own copy, so
 * no symbol is defined twice and the linker never merges two files' instances of one template.
 * `__attribute__((unused))` keeps nvcc quiet in a file (or a build configuration) that launches fewer.
 * Only the files that launch these kernels include this header: the compiler emits every static
 * kernel it sees, launched or not.
 */
#ifndef SL_KERNELS_GPU_GPU_BATCH_CUH
#define SL_KERNELS_GPU_GPU_BATCH_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#define GPU_ROWS_PER_BLOCK 8 /* warps (rows) per softmax block */

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

#endif
