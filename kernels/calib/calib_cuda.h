/*
 * kernels/calib/calib_cuda.h: the device work behind the GPU ceilings of `speedlab calibrate`
 * (experiments/calibrate_gpu.c allocates, times with CUDA events and takes medians; tests/kernels/
 * test_calib_cuda.c checks every result). Built only with CUDA. Each call enqueues on a stream and
 * returns 0 or a cudaError_t / cublasStatus_t value (> 0); none waits or allocates.
 */
#ifndef SL_KERNELS_CALIB_CUDA_H
#define SL_KERNELS_CALIB_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SL_GPU_FMA_CHAINS 8   /* independent FMA chains per thread */
#define SL_GPU_FMA_THREADS 256 /* threads per block of the FMA kernel */

/* p[i] = v for i < n: the triad's inputs. */
int sl_gpu_fill(double *p, double v, size_t n, void *stream);
/* STREAM triad a[i] = b[i] + s * c[i], i < n (doubles, as STREAM): 24 bytes moved per element. */
int sl_gpu_triad(double *a, const double *b, const double *c, double s, size_t n, void *stream);

/* FP32 FMA chains: blocks x SL_GPU_FMA_THREADS threads, each SL_GPU_FMA_CHAINS chains x_j <- x_j * a + b
 * for iters steps from x_j = j + (thread % 4); out[thread] = the sum of its chains. With a = b = 1 every
 * step is exact: out[t] = sum_j (j + t % 4 + iters) while that stays below 2^24. */
int sl_gpu_fma(float *out, int blocks, int iters, float a, float b, void *stream);
/* The flops one sl_gpu_fma launch does (2 per FMA). */
double sl_gpu_fma_flops(int blocks, int iters);

/* The GEMM precisions: cublasSgemm, and cublasGemmEx with 16-bit inputs on tensor cores. */
enum { SL_GEMM_FP32, SL_GEMM_FP16, SL_GEMM_BF16 };
/* C = A B for n x n column-major matrices on cuBLAS handle h (a cublasHandle_t, its stream set by the
 * caller): A and B of the precision's element type (float, __half, __nv_bfloat16), C float, FP32
 * accumulation (CUBLAS_COMPUTE_32F) for every precision. Returns 0 or a cublasStatus_t. */
int sl_gpu_gemm(void *h, int prec, int n, const void *A, const void *B, float *C);
/* Bytes per element of A and B at a precision (4 or 2). */
size_t sl_gpu_gemm_elem(int prec);

#ifdef __cplusplus
}
#endif

#endif
