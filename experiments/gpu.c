/*
 * gpu.c: the GPU probe and the GPU part of the environment (cudart C calls); the GPU ceilings are
 * calibrate_gpu.c's.
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

int sl_gpu_mem_used(double *used, double *total)
{
    (void)used, (void)total;
    return -1;
}

#else

#include <cuda_runtime.h>
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

#endif
