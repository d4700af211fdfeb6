/*
 * tensor_mean, cuda: one thread per element (i,j,k) of A, as in the write-up; each sums over n.
 * tanh is applied first by an elementwise kernel into separate buffers, so compute can be repeated on
 * one copy of the inputs.
 */
#include <cuda_runtime.h>
#include <stdlib.h>

extern "C" {
#include "tensor_mean_kernels.h"
}

struct tm_cuda_ctx {
    long N, D;
    float *dX, *dY, *dZ, *dA; /* inputs as copied in, the result */
    float *da, *db, *dc;      /* tanh of the inputs */
};

__global__ void tm_tanh_kernel(const float *in, float *out, long n)
{
    long e = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < n)
        out[e] = tanhf(in[e]);
}

__global__ void tm_element_kernel(const float *a, const float *b, const float *c, long N, long D, float *A)
{
    long e = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= D * D * D)
        return;
    const long i = e / (D * D), j = e / D % D, k = e % D;
    float s = 0.0f;
    for (long n = 0; n < N; n++)
        s += a[n * D + i] * b[n * D + j] * c[n * D + k];
    A[e] = s / (float)N;
}

extern "C" int tm_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return 0;
    return n;
}

extern "C" tm_cuda_ctx *tm_cuda_alloc(long N, long D)
{
    if (N < 1 || D < 1)
        return NULL;
    tm_cuda_ctx *c = (tm_cuda_ctx *)calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->N = N;
    c->D = D;
    size_t in = (size_t)(N * D) * sizeof(float), out = (size_t)(D * D * D) * sizeof(float);
    if (cudaMalloc((void **)&c->dX, in) != cudaSuccess || cudaMalloc((void **)&c->dY, in) != cudaSuccess ||
        cudaMalloc((void **)&c->dZ, in) != cudaSuccess || cudaMalloc((void **)&c->dA, out) != cudaSuccess ||
        cudaMalloc((void **)&c->da, in) != cudaSuccess || cudaMalloc((void **)&c->db, in) != cudaSuccess ||
        cudaMalloc((void **)&c->dc, in) != cudaSuccess) {
        tm_cuda_free(c);
        return NULL;
    }
    return c;
}

extern "C" int tm_cuda_copy_in(tm_cuda_ctx *c, const float *X, const float *Y, const float *Z)
{
    size_t in = (size_t)(c->N * c->D) * sizeof(float);
    if (cudaMemcpy(c->dX, X, in, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(c->dY, Y, in, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(c->dZ, Z, in, cudaMemcpyHostToDevice) != cudaSuccess)
        return -1;
    return 0;
}

extern "C" int tm_cuda_compute(tm_cuda_ctx *c)
{
    const long n = c->N * c->D, d3 = c->D * c->D * c->D;
    const unsigned tb = 256, gn = (unsigned)((n + tb - 1) / tb), g3 = (unsigned)((d3 + tb - 1) / tb);
    tm_tanh_kernel<<<gn, tb>>>(c->dX, c->da, n);
    tm_tanh_kernel<<<gn, tb>>>(c->dY, c->db, n);
    tm_tanh_kernel<<<gn, tb>>>(c->dZ, c->dc, n);
    tm_element_kernel<<<g3, tb>>>(c->da, c->db, c->dc, c->N, c->D, c->dA);
    return cudaGetLastError() == cudaSuccess ? 0 : -1;
}

extern "C" int tm_cuda_copy_out(tm_cuda_ctx *c, float *A)
{
    size_t out = (size_t)(c->D * c->D * c->D) * sizeof(float);
    return cudaMemcpy(A, c->dA, out, cudaMemcpyDeviceToHost) == cudaSuccess ? 0 : -1;
}

extern "C" void tm_cuda_free(tm_cuda_ctx *c)
{
    if (!c)
        return;
    cudaFree(c->dX);
    cudaFree(c->dY);
    cudaFree(c->dZ);
    cudaFree(c->dA);
    cudaFree(c->da);
    cudaFree(c->db);
    cudaFree(c->dc);
    free(c);
}
