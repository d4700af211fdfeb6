/*
 * kernels/calib/calib_cuda.cu: the device work behind the GPU ceilings (calib_cuda.h). Plain kernels
 * with grid-stride loops; the GEMMs are cuBLAS's own (the ceiling a GEMM-bound row can hope for).
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "calib_cuda.h"

#define TRIAD_THREADS 256

__global__ void triad_kernel(double *__restrict__ a, const double *__restrict__ b, const double *__restrict__ c,
                             double s, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        a[i] = b[i] + s * c[i];
}

__global__ void fill_kernel(double *p, double v, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        p[i] = v;
}

/* Enough blocks to keep every SM's memory pipe busy (up to 65536 x 256 threads), few enough that each
 * thread of a large array streams several elements. */
static unsigned stream_blocks(size_t n)
{
    size_t blocks = (n + TRIAD_THREADS - 1) / TRIAD_THREADS;
    return (unsigned)(blocks > 65536 ? 65536 : blocks < 1 ? 1 : blocks);
}

int sl_gpu_fill(double *p, double v, size_t n, void *stream)
{
    fill_kernel<<<stream_blocks(n), TRIAD_THREADS, 0, (cudaStream_t)stream>>>(p, v, n);
    return (int)cudaGetLastError();
}

int sl_gpu_triad(double *a, const double *b, const double *c, double s, size_t n, void *stream)
{
    triad_kernel<<<stream_blocks(n), TRIAD_THREADS, 0, (cudaStream_t)stream>>>(a, b, c, s, n);
    return (int)cudaGetLastError();
}

/* Eight chains per thread: each FMA waits only on its own chain, so a warp issues one every cycle even
 * at low occupancy; a and b are arguments, so the compiler cannot fold the chain into a closed form. */
__global__ void fma_kernel(float *out, int iters, float a, float b)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float x[SL_GPU_FMA_CHAINS];
#pragma unroll
    for (int j = 0; j < SL_GPU_FMA_CHAINS; j++)
        x[j] = (float)(j + t % 4);
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < SL_GPU_FMA_CHAINS; j++)
            x[j] = fmaf(x[j], a, b);
    }
    float sum = 0;
#pragma unroll
    for (int j = 0; j < SL_GPU_FMA_CHAINS; j++)
        sum += x[j];
    out[t] = sum;
}

int sl_gpu_fma(float *out, int blocks, int iters, float a, float b, void *stream)
{
    fma_kernel<<<blocks, SL_GPU_FMA_THREADS, 0, (cudaStream_t)stream>>>(out, iters, a, b);
    return (int)cudaGetLastError();
}

double sl_gpu_fma_flops(int blocks, int iters)
{
    return 2.0 * SL_GPU_FMA_CHAINS * SL_GPU_FMA_THREADS * (double)blocks * (double)iters;
}

size_t sl_gpu_gemm_elem(int prec)
{
    return prec == SL_GEMM_FP32 ? 4 : 2;
}

int sl_gpu_gemm(void *h, int prec, int n, const void *A, const void *B, float *C)
{
    const float one = 1.0f, zero = 0.0f;
    cublasHandle_t hd = (cublasHandle_t)h;
    if (prec == SL_GEMM_FP32)
        return (int)cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, (const float *)A, n, (const float *)B, n,
                                &zero, C, n);
    cudaDataType t = prec == SL_GEMM_FP16 ? CUDA_R_16F : CUDA_R_16BF;
    return (int)cublasGemmEx(hd, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, t, n, B, t, n, &zero, C, CUDA_R_32F, n,
                             CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
