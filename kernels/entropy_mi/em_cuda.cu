/*
 * entropy_mi, cuda: one block per batch row, as in the write-up. The block loads the row of X and of Y
 * into shared memory, computes the stable softmax with block reductions, and each thread takes rows i
 * of the D x D sum (sum over j of (p_i q_j)^2, q read from shared memory). Per-row results go to device
 * arrays; copy-out brings them back and reduces them in double on the host, or, after
 * em_cuda_sums_on_device (the pinned rows, which copy as the torch-cuda forms do), two small kernels
 * reduce them on the device and copy-out brings back H and MI alone. The context (em_cuda_impl.h)
 * is cuda_factorized's too (em_cuda_factorized.cu): the same buffers, copies and copy-out.
 */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "em_cuda_impl.h"

/* Block-wide reduction (sum or max) through shared memory; every thread gets the result. */
__device__ float em_block_reduce(float v, float *scratch, bool is_max)
{
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float o = scratch[threadIdx.x + s];
            scratch[threadIdx.x] = is_max ? fmaxf(scratch[threadIdx.x], o) : scratch[threadIdx.x] + o;
        }
        __syncthreads();
    }
    float r = scratch[0];
    __syncthreads();
    return r;
}

/* Softmax of row x (length D) into shared s. */
__device__ void em_softmax_block(const float *x, long D, float *s, float *scratch)
{
    float m = -INFINITY;
    for (long i = threadIdx.x; i < D; i += blockDim.x)
        m = fmaxf(m, x[i]);
    m = em_block_reduce(m, scratch, true);
    float sum = 0.0f;
    for (long i = threadIdx.x; i < D; i += blockDim.x) {
        s[i] = expf(x[i] - m);
        sum += s[i];
    }
    sum = em_block_reduce(sum, scratch, false);
    const float inv = 1.0f / sum;
    for (long i = threadIdx.x; i < D; i += blockDim.x)
        s[i] *= inv;
    __syncthreads();
}

__global__ void em_row_kernel(const float *X, const float *Y, long D, float *h, float *mi)
{
    extern __shared__ float sh[]; /* p[D], q[D], scratch[blockDim.x] */
    float *p = sh, *q = sh + D, *scratch = sh + 2 * D;
    const long b = blockIdx.x;
    em_softmax_block(X + b * D, D, p, scratch);
    em_softmax_block(Y + b * D, D, q, scratch);
    float hp = 0.0f, m = 0.0f;
    for (long i = threadIdx.x; i < D; i += blockDim.x) {
        const float pi = p[i];
        hp += pi * pi;
        for (long j = 0; j < D; j++) { /* the D x D sum, in full */
            const float t = pi * q[j];
            m += t * t;
        }
    }
    hp = em_block_reduce(hp, scratch, false);
    m = em_block_reduce(m, scratch, false);
    if (threadIdx.x == 0) {
        h[b] = hp;
        mi[b] = m;
    }
}

/* Block-wide sums of a and m in double through shared memory (blockDim.x = EM_THREADS, a power of
 * two): a tree in a fixed order; thread 0 gets the results. */
__device__ static void em_block_sum2(double a, double m, double *ra, double *rm)
{
    __shared__ double sh[2][EM_THREADS];
    sh[0][threadIdx.x] = a;
    sh[1][threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            sh[0][threadIdx.x] += sh[0][threadIdx.x + s];
            sh[1][threadIdx.x] += sh[1][threadIdx.x + s];
        }
        __syncthreads();
    }
    *ra = sh[0][0];
    *rm = sh[1][0];
}

/* Pass 1: block g sums its grid-stride share of h and mi in double into part[2 g], part[2 g + 1].
 * Enough blocks to fill the GPU (a single block would wait on its loads one after another). */
__global__ void em_partial_sums_kernel(const float *h, const float *mi, long B, double *part)
{
    double a = 0.0, m = 0.0;
    for (long b = (long)blockIdx.x * blockDim.x + threadIdx.x; b < B; b += (long)gridDim.x * blockDim.x) {
        a += h[b];
        m += mi[b];
    }
    double ra, rm;
    em_block_sum2(a, m, &ra, &rm);
    if (threadIdx.x == 0) {
        part[2 * blockIdx.x] = ra;
        part[2 * blockIdx.x + 1] = rm;
    }
}

/* Pass 2, one block: the n partial sums in order; out[0] = -mean(h), out[1] = mean(mi). */
__global__ void em_final_sums_kernel(const double *part, int n, long B, double *out)
{
    double a = 0.0, m = 0.0;
    for (int g = threadIdx.x; g < n; g += blockDim.x) {
        a += part[2 * g];
        m += part[2 * g + 1];
    }
    double ra, rm;
    em_block_sum2(a, m, &ra, &rm);
    if (threadIdx.x == 0) {
        out[0] = -ra / (double)B;
        out[1] = rm / (double)B;
    }
}

/* The blocks of pass 1 for B rows: one row a thread up to EM_SUM_BLOCKS blocks. */
static int em_sum_blocks(long B)
{
    long g = (B + EM_THREADS - 1) / EM_THREADS;
    return (int)(g < EM_SUM_BLOCKS ? g : EM_SUM_BLOCKS);
}

/* Two passes, each in a fixed order for a given B: the same H and MI on every run (no atomics). */
int em_cuda_launch_sums(em_cuda_ctx *c)
{
    if (!c->dsum)
        return 0;
    const int g = em_sum_blocks(c->B);
    em_partial_sums_kernel<<<g, EM_THREADS>>>(c->dh, c->dmi, c->B, c->dpart);
    em_final_sums_kernel<<<1, EM_THREADS>>>(c->dpart, g, c->B, c->dsum);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int em_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return 0;
    return n;
}

extern "C" em_cuda_ctx *em_cuda_alloc(long B, long D)
{
    if (B < 1 || D < 1 || D > EM_MAX_D)
        return NULL;
    em_cuda_ctx *c = (em_cuda_ctx *)calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->B = B;
    c->D = D;
    size_t in = (size_t)(B * D) * sizeof(float), out = (size_t)B * sizeof(float);
    c->hh = (float *)malloc(out);
    c->hmi = (float *)malloc(out);
    if (!c->hh || !c->hmi || cudaMalloc((void **)&c->dX, in) != cudaSuccess ||
        cudaMalloc((void **)&c->dY, in) != cudaSuccess || cudaMalloc((void **)&c->dh, out) != cudaSuccess ||
        cudaMalloc((void **)&c->dmi, out) != cudaSuccess) {
        em_cuda_free(c);
        (void)cudaGetLastError(); /* not left for a later launch's check to find */
        return NULL;
    }
    /* NaN everywhere (0xff bytes): a copy or kernel that writes nothing gives NaN, which the checks
     * reject, never another call's results left in reused memory */
    if (cudaMemset(c->dX, 0xff, in) != cudaSuccess || cudaMemset(c->dY, 0xff, in) != cudaSuccess ||
        cudaMemset(c->dh, 0xff, out) != cudaSuccess || cudaMemset(c->dmi, 0xff, out) != cudaSuccess) {
        em_cuda_free(c);
        return NULL;
    }
    return c;
}

/* Pinned copies of X and Y, made once: a copy from pinned memory goes straight to the copy engine, one
 * from pageable memory through the driver's staging buffers at a fraction of the rate (the h2d study). */
extern "C" int em_cuda_pin_inputs(em_cuda_ctx *c, const float *X, const float *Y)
{
    size_t in = (size_t)(c->B * c->D) * sizeof(float);
    if (c->pX)
        return -1;
    if (cudaMallocHost((void **)&c->pX, in) != cudaSuccess || cudaMallocHost((void **)&c->pY, in) != cudaSuccess) {
        if (c->pX)
            cudaFreeHost(c->pX);
        c->pX = c->pY = NULL; /* the context stays whole: copy_in copies from X and Y */
        (void)cudaGetLastError();
        return -1;
    }
    memcpy(c->pX, X, in);
    memcpy(c->pY, Y, in);
    return 0;
}

extern "C" int em_cuda_sums_on_device(em_cuda_ctx *c)
{
    if (c->dsum)
        return -1;
    if (cudaMalloc((void **)&c->dsum, 2 * sizeof(double)) != cudaSuccess ||
        cudaMemset(c->dsum, 0xff, 2 * sizeof(double)) != cudaSuccess || /* NaN until a compute writes it */
        cudaMalloc((void **)&c->dpart, 2 * (size_t)em_sum_blocks(c->B) * sizeof(double)) != cudaSuccess ||
        cudaMallocHost((void **)&c->hsum, 2 * sizeof(double)) != cudaSuccess) {
        cudaFree(c->dsum); /* the context stays whole: copy_out reduces on the host */
        cudaFree(c->dpart);
        c->dsum = c->dpart = NULL;
        c->hsum = NULL;
        (void)cudaGetLastError();
        return -1;
    }
    return 0;
}

extern "C" int em_cuda_copy_in(em_cuda_ctx *c, const float *X, const float *Y)
{
    size_t in = (size_t)(c->B * c->D) * sizeof(float);
    if (c->pX) /* em_cuda_pin_inputs's copies of the same X and Y */
        X = c->pX, Y = c->pY;
    if (cudaMemcpy(c->dX, X, in, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(c->dY, Y, in, cudaMemcpyHostToDevice) != cudaSuccess)
        return -1;
    return 0;
}

extern "C" int em_cuda_compute(em_cuda_ctx *c)
{
    size_t shmem = (size_t)(2 * c->D + EM_THREADS) * sizeof(float);
    em_row_kernel<<<(unsigned)c->B, EM_THREADS, shmem>>>(c->dX, c->dY, c->D, c->dh, c->dmi);
    if (cudaGetLastError() != cudaSuccess)
        return -1;
    return em_cuda_launch_sums(c);
}

extern "C" int em_cuda_copy_out(em_cuda_ctx *c, double *H, double *MI)
{
    if (c->dsum) { /* 16 bytes into pinned memory */
        if (cudaMemcpy(c->hsum, c->dsum, 2 * sizeof(double), cudaMemcpyDeviceToHost) != cudaSuccess)
            return -1;
        *H = c->hsum[0];
        *MI = c->hsum[1];
        return 0;
    }
    size_t out = (size_t)c->B * sizeof(float);
    if (cudaMemcpy(c->hh, c->dh, out, cudaMemcpyDeviceToHost) != cudaSuccess ||
        cudaMemcpy(c->hmi, c->dmi, out, cudaMemcpyDeviceToHost) != cudaSuccess)
        return -1;
    double h = 0.0, mi = 0.0;
    for (long b = 0; b < c->B; b++) {
        h += c->hh[b];
        mi += c->hmi[b];
    }
    *H = -h / (double)c->B;
    *MI = mi / (double)c->B;
    return 0;
}

extern "C" void em_cuda_free(em_cuda_ctx *c)
{
    if (!c)
        return;
    cudaFree(c->dX);
    cudaFree(c->dY);
    cudaFree(c->dh);
    cudaFree(c->dmi);
    if (c->pX)
        cudaFreeHost(c->pX);
    if (c->pY)
        cudaFreeHost(c->pY);
    cudaFree(c->dsum);
    cudaFree(c->dpart);
    if (c->hsum)
        cudaFreeHost(c->hsum);
    free(c->hh);
    free(c->hmi);
    free(c);
}
