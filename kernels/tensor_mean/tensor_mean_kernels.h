/*
 * tensor_mean kernels (seed 000, sections 4-5).
 *
 * For x_n, y_n, z_n in R^D (rows of N x D row-major float32 matrices X, Y, Z):
 *   A[i][j][k] = (1/N) sum_n tanh(x_ni) tanh(y_nj) tanh(z_nk),  A in R^(D x D x D), row-major.
 * Applying tanh is part of every variant's work. Kernels do no I/O, no timing, no heap allocation:
 * the caller passes a workspace of the variant's TM_workspace(N, D) floats (tm_loop: tm_loop_workspace).
 * They return 0, or -1 on bad arguments (N < 1, D < 1, missing workspace).
 */
#ifndef KERNELS_TENSOR_MEAN_KERNELS_H
#define KERNELS_TENSOR_MEAN_KERNELS_H

#include <stddef.h>

/* Every CPU variant is a pair with these signatures (its kernel file defines both), so the study's
 * variant row can hold any of them. `threads` is the thread count for a threaded variant (omp, blas);
 * the one-thread variants ignore it. */
typedef int tm_kernel_fn(const float *X, const float *Y, const float *Z, long N, long D, float *A,
                         float *ws, int threads);
typedef size_t tm_workspace_fn(long N, long D); /* floats */

/* The variant kernels, declared by the build line that builds them: for each NAME of tm_variant_kernels
 * (kernels/tensor_mean/meson.build), tm_NAME.c defines tm_NAME and tm_NAME_workspace, and the generated
 * tm_variant_kernels.h has the line TM_KERNEL(NAME). What each does: its file's first comment (tm_blas
 * returns -1 when built without BLAS). */
#define TM_KERNEL(name)                                                                                  \
    tm_kernel_fn tm_##name;                                                                              \
    tm_workspace_fn tm_##name##_workspace;
#include "tm_variant_kernels.h" /* generated: build tree kernels/ */
#undef TM_KERNEL

/* Shared: tanh of n floats (in == out allowed): libm's tanhf (naive, loop), and a vectorised one
 * (simd, omp, blas; absolute error ~1e-7). */
void tm_tanh(const float *in, long n, float *out);
void tm_tanh_fast(const float *in, long n, float *out);

/* CUDA (kernels/tensor_mean/tm_cuda.cu): one thread per (i,j,k) element. */
typedef struct tm_cuda_ctx tm_cuda_ctx;
tm_cuda_ctx *tm_cuda_alloc(long N, long D);
int tm_cuda_copy_in(tm_cuda_ctx *c, const float *X, const float *Y, const float *Z);
int tm_cuda_compute(tm_cuda_ctx *c);
int tm_cuda_copy_out(tm_cuda_ctx *c, float *A);
void tm_cuda_free(tm_cuda_ctx *c);
int tm_cuda_device_count(void);

#endif
