/*
 * kernels/entropy_mi/em_cuda_impl.h: the CUDA context that em_cuda.cu (the cuda and cuda_pinned rows)
 * and em_cuda_factorized.cu share: device buffers, the pinned host copies, the per-row results.
 */
#ifndef KERNELS_ENTROPY_MI_EM_CUDA_IMPL_H
#define KERNELS_ENTROPY_MI_EM_CUDA_IMPL_H

extern "C" {
#include "entropy_mi_kernels.h"
}

#define EM_THREADS 256

struct em_cuda_ctx {
    long B, D;
    float *dX, *dY, *dh, *dmi; /* device: inputs, per-row sum p^2 and per-row MI sum */
    float *pX, *pY;            /* pinned host copies of X and Y (em_cuda_pin_inputs), or NULL */
    float *hh, *hmi;           /* host: the per-row results after copy-out */
};

#endif
