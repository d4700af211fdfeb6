/*
 * gpu.c: the GPU probe, the GPU part of the environment and the GPU ceilings (cudart and cuBLAS C calls).
 * Built in every configuration; without CUDA (SL_HAVE_CUDA 0) it is the stub that says so.
 */
#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "sl_config.h"

#if !SL_HAVE_CUDA

int sl_gpu_available(char *why, size_t n)
{
    snprintf(why, n, "built without CUDA");
    return 0;
}

void sl_gpu_env(json_t *env)
{
    (void)env;
}

json_t *sl_gpu_calibrate(void)
{
    return NULL;
}

int sl_gpu_mem_used(double *used, double *total)
{
    (void)used, (void)total;
    return -1;
}

#else

#include <cuda_runtime.h>
#include <stdlib.h>
#if SL_HAVE_CUBLAS
#include <cublas_v2.h>
#endif
#if SL_HAVE_CUDNN
#include <cudnn.h>
#endif

int sl_gpu_available(char *why, size_t n)
{
    /* Probed once: cudaGetDeviceCount initialises the runtime, which takes a while. */
    static int probed = 0, count = 0;
    static char reason[160];
    if (!probed) {
        cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess || count <= 0) {
            /* No device, no driver, or a driver too old for this runtime: all say the same to the user
             * (the exact reason is what `nvidia-smi` is for). */
            count = 0;
            snprintf(reason, sizeof reason, "no CUDA device");
        }
        probed = 1;
    }
    if (count <= 0)
        snprintf(why, n, "%s", reason);
    return count > 0;
}

int sl_gpu_mem_used(double *used, double *total)
{
    char why[160];
    size_t f = 0, t = 0;
    if (!sl_gpu_available(why, sizeof why) || cudaMemGetInfo(&f, &t) != cudaSuccess) {
        cudaGetLastError(); /* leave no sticky error for the study's next call */
        return -1;
    }
    *used = (double)(t - f);
    *total = (double)t;
    return 0;
}

static void version_string(char *buf, size_t n, int v)
{
    snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

void sl_gpu_env(json_t *env)
{
    char why[160], buf[32];
    if (!sl_gpu_available(why, sizeof why))
        return;
    struct cudaDeviceProp p;
    int dev = 0, drv = 0, rt = 0;
    cudaGetDevice(&dev);
    if (cudaGetDeviceProperties(&p, dev) == cudaSuccess)
        json_object_set_new(env, "cuda_device", json_string(p.name));
    if (cudaDriverGetVersion(&drv) == cudaSuccess) {
        version_string(buf, sizeof buf, drv);
        json_object_set_new(env, "cuda_driver", json_string(buf));
    }
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess) {
        version_string(buf, sizeof buf, rt);
        json_object_set_new(env, "cuda_runtime", json_string(buf));
    }
#if SL_HAVE_CUDNN
    /* the library loaded, which may differ from the headers built with (the node's own cuDNN 9) */
    size_t v = cudnnGetVersion(); /* cuDNN 9: major * 10000 + minor * 100 + patch */
    snprintf(buf, sizeof buf, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
    json_object_set_new(env, "cudnn_version", json_string(buf));
#endif
}

/* Best of `reps` copies of `bytes` from src to dst, in GB/s (10^9 bytes per second). */
static double copy_gbs(void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, int reps)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    double best = 0;
    cudaMemcpy(dst, src, bytes, kind); /* warm-up: first-touch and lazy mappings */
    for (int r = 0; r < reps; r++) {
        float ms = 0;
        cudaEventRecord(a, 0);
        cudaMemcpy(dst, src, bytes, kind);
        cudaEventRecord(b, 0);
        cudaEventSynchronize(b);
        cudaEventElapsedTime(&ms, a, b);
        double gbs = ms > 0 ? (double)bytes / (ms * 1e-3) / 1e9 : 0;
        if (gbs > best)
            best = gbs;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return best;
}

#if SL_HAVE_CUBLAS
/* cuBLAS sgemm rate on n x n matrices, best of a few, GFLOP/s. */
static double cublas_sgemm_gflops(int n)
{
    float *A, *B, *C;
    size_t bytes = (size_t)n * n * sizeof(float);
    if (cudaMalloc((void **)&A, bytes) != cudaSuccess)
        return 0;
    cudaMalloc((void **)&B, bytes);
    cudaMalloc((void **)&C, bytes);
    /* Bytes 0x3c: every float is 0.0115, not zero (all-zero data draws less power and can clock higher). */
    cudaMemset(A, 0x3c, bytes);
    cudaMemset(B, 0x3c, bytes);
    cublasHandle_t h;
    double best = 0;
    if (cublasCreate(&h) == CUBLAS_STATUS_SUCCESS) {
        const float one = 1.0f, zero = 0.0f;
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n);
        for (int r = 0; r < 5; r++) {
            float ms = 0;
            cudaEventRecord(a, 0);
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n);
            cudaEventRecord(b, 0);
            cudaEventSynchronize(b);
            cudaEventElapsedTime(&ms, a, b);
            double g = ms > 0 ? 2.0 * n * (double)n * n / (ms * 1e-3) / 1e9 : 0;
            if (g > best)
                best = g;
        }
        cudaEventDestroy(a);
        cudaEventDestroy(b);
        cublasDestroy(h);
    }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    return best;
}
#endif

json_t *sl_gpu_calibrate(void)
{
    char why[160];
    if (!sl_gpu_available(why, sizeof why))
        return NULL;
    const size_t bytes = (size_t)256 << 20; /* 256 MiB: far past any cache on either side */
    void *d1 = NULL, *d2 = NULL, *pinned = NULL;
    void *pageable = malloc(bytes);
    if (!pageable || cudaMalloc(&d1, bytes) != cudaSuccess || cudaMalloc(&d2, bytes) != cudaSuccess ||
        cudaMallocHost(&pinned, bytes) != cudaSuccess) {
        fprintf(stderr, "speedlab: GPU calibration: cannot allocate 3 x 256 MiB; GPU ceilings skipped\n");
        free(pageable);
        cudaFree(d1);
        cudaFree(d2);
        cudaFreeHost(pinned);
        return NULL;
    }
    memset(pageable, 1, bytes);
    memset(pinned, 1, bytes);
    json_t *g = json_object();
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
        json_object_set_new(g, "name", json_string(p.name));
    json_object_set_new(g, "h2d_pageable_gbs", json_real(copy_gbs(d1, pageable, bytes, cudaMemcpyHostToDevice, 5)));
    json_object_set_new(g, "h2d_pinned_gbs", json_real(copy_gbs(d1, pinned, bytes, cudaMemcpyHostToDevice, 5)));
    json_object_set_new(g, "d2h_pageable_gbs", json_real(copy_gbs(pageable, d1, bytes, cudaMemcpyDeviceToHost, 5)));
    json_object_set_new(g, "d2h_pinned_gbs", json_real(copy_gbs(pinned, d1, bytes, cudaMemcpyDeviceToHost, 5)));
    /* A device-to-device copy reads and writes every byte: count both, as STREAM's copy does. */
    json_object_set_new(g, "d2d_gbs", json_real(2.0 * copy_gbs(d2, d1, bytes, cudaMemcpyDeviceToDevice, 10)));
#if SL_HAVE_CUBLAS
    json_object_set_new(g, "cublas_sgemm_gflops", json_real(cublas_sgemm_gflops(8192)));
#endif
    free(pageable);
    cudaFree(d1);
    cudaFree(d2);
    cudaFreeHost(pinned);
    return g;
}

#endif
