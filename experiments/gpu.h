/* gpu.h: the GPU probe and the GPU part of the environment (gpu.c). */
#ifndef SL_GPU_H
#define SL_GPU_H

#include <jansson.h>
#include <stddef.h>

/* GPU probe: 1 with a usable CUDA device; else 0 and why ("no CUDA device", "built without CUDA"). */
int sl_gpu_available(char *why, size_t n);
/* Adds cuda_device, cuda_driver and cuda_runtime to env when a device exists. */
void sl_gpu_env(json_t *env);
/* Device memory in use (total - free, cudaMemGetInfo: every allocation on the device, this process's
 * context included, and other processes') and the total, in bytes: 0, or -1 without a device. */
int sl_gpu_mem_used(double *used, double *total);

#endif
