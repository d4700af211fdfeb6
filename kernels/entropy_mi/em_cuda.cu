/*
 * entropy_mi, cuda: one block per batch row, as in the write-up. The block loads the row of X and of Y
 * into shared memory, computes the stable softmax with block reductions, and each thread takes rows i
 * of the D x D sum (sum over j of (p_i q_j)^2, q read from shared memory). Per-row results go to device
 * arrays; copy-out brings them back and reduces them in double on the host. The context (em_cuda_impl.h)
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
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int em_cuda_copy_out(em_cuda_ctx *c, double *H, double *MI)
{
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
    free(c->hh);
    free(c->hmi);
    free(c);
}
