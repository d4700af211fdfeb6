/*
 * tensor_mean kernels (seed 000, sections 4-5; CASE_STUDIES.md section 2).
 *
 * For x_n, y_n, z_n in R^D (rows of N x D row-major float32 matrices X, Y, Z):
 *   A[i][j][k] = (1/N) sum_n tanh(x_ni) tanh(y_nj) tanh(z_nk),  A in R^(D x D x D), row-major.
 * Applying tanh is part of every variant's work. Kernels do no I/O, no timing, no heap allocation:
 * the caller passes a workspace of tm_workspace_floats(variant, N, D) floats (0 means none needed).
 * They return 0, or -1 on bad arguments (N < 1, D < 1, missing workspace).
 */
#ifndef KERNELS_TENSOR_MEAN_H
#define KERNELS_TENSOR_MEAN_H

#include <stddef.h>

enum tm_kind { TM_NAIVE, TM_LOOP, TM_SIMD, TM_OMP, TM_BLAS };
size_t tm_workspace_floats(int kind, long N, long D);

/* naive: per triplet, the D^3 outer product built in a temporary (the workspace), then added. */
int tm_naive(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws);
/* loop: the same sum accumulated directly into A. */
int tm_loop(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws);
/* simd: blocked rank-1 updates, accumulators in registers, A in L2, inputs in L1 chunks. */
int tm_simd(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws);
/* omp: tm_simd's blocks split over i across omp_get_max_threads() threads. */
int tm_omp(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws);
/* blas: A (D^2 x D) = (1/N) KR^T F_z, KR the N x D^2 Khatri-Rao product of tanh(X), tanh(Y), built in
 * the workspace (part of the timed work); one cblas_sgemm. Returns -1 when built without BLAS. */
int tm_blas(const float *X, const float *Y, const float *Z, long N, long D, float *A, float *ws);

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
