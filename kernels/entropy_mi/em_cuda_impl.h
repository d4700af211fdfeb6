/*
 * kernels/entropy_mi/em_cuda_impl.h: the CUDA context that em_cuda.cu (the cuda and cuda_pinned rows)
 * and em_cuda_factorized.cu share: device buffers, the pinned host copies, the per-row results and,
 * for the pinned rows, their device-side sums.
 */
#ifndef KERNELS_ENTROPY_MI_EM_CUDA_IMPL_H
#define KERNELS_ENTROPY_MI_EM_CUDA_IMPL_H

extern "C" {
#include "entropy_mi_kernels.h"
}

#define EM_THREADS 256
#define EM_SUM_BLOCKS 1024 /* the device sums' first pass, at most */

struct em_cuda_ctx {
    long B, D;
    float *dX, *dY, *dh, *dmi; /* device: inputs, per-row sum p^2 and per-row MI sum */
    float *pX, *pY;            /* pinned host copies of X and Y (em_cuda_pin_inputs), or NULL */
    float *hh, *hmi;           /* host: the per-row results after copy-out */
    double *dsum, *hsum;       /* em_cuda_sums_on_device: device H and MI, their pinned host copy; or NULL */
    double *dpart;             /* and the per-block partial sums of its first pass */
};

/* After a row kernel: the per-row sums into dsum, when em_cuda_sums_on_device made it (em_cuda.cu). */
int em_cuda_launch_sums(em_cuda_ctx *c);

#endif
