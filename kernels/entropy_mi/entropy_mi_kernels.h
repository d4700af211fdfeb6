/*
 * entropy_mi kernels (seed 000, sections 2-3).
 *
 * For X, Y in R^(B x D) (row-major float32), p = softmax(X row), q = softmax(Y row), computed stably:
 *   H  = -(1/B) sum_b sum_i p_bi^2
 *   MI =  (1/B) sum_b sum_i sum_j (p_bi q_bj)^2      (the D x D double sum per row)
 * Every variant writes H and MI (double: the mean over rows is accumulated in double; each row's sums
 * are float). naive, simd and omp really compute the D x D sum; em_factorized uses the identity
 * sum_ij (p_i q_j)^2 = (sum_i p_i^2)(sum_j q_j^2), an algorithmic change and its own variant.
 *
 * Kernels do no I/O, no timing and no heap allocation: per-row scratch lives on the stack, so D is
 * limited to EM_MAX_D. They return 0, or -1 on bad arguments (B < 1, D < 1 or D > EM_MAX_D).
 */
#ifndef KERNELS_ENTROPY_MI_KERNELS_H
#define KERNELS_ENTROPY_MI_KERNELS_H

#define EM_MAX_D 4096

/* Every CPU variant has this signature, so the study's variant row can hold any of them. `threads` is the
 * thread count for a threaded variant (omp); the one-thread variants ignore it. */
typedef int em_kernel_fn(const float *X, const float *Y, long B, long D, double *H, double *MI, int threads);

/* The variant kernels, declared by the build line that builds them: for each NAME of em_variant_kernels
 * (kernels/entropy_mi/meson.build), em_NAME.c defines em_NAME, and the generated em_variant_kernels.h
 * has the line EM_KERNEL(NAME). What each does: its file's first comment (em_omp uses `threads` OpenMP
 * threads; without OpenMP it compiles to em_simd). */
#define EM_KERNEL(name) em_kernel_fn em_##name;
#include "em_variant_kernels.h" /* generated: build tree kernels/ */
#undef EM_KERNEL

/* Shared by the CPU variants: the stable softmax of one row (vectorisable). */
void em_softmax_row(const float *x, long D, float *p);

/* CUDA (kernels/entropy_mi/em_cuda.cu, built only with CUDA): one block per batch row. The phases are
 * separate so the caller can time host-to-device, kernel and device-to-host apart. */
typedef struct em_cuda_ctx em_cuda_ctx;
em_cuda_ctx *em_cuda_alloc(long B, long D);             /* NULL when allocation fails */
/* Copies X and Y into pinned host memory (cudaMallocHost) owned by c, once, outside the timed runs;
 * copy_in then copies from there. 0, or -1 when pinning fails (c is then as before: unpinned) or was
 * done already. em_cuda_alloc fills the device buffers with NaN, so nothing stale passes a check. */
int em_cuda_pin_inputs(em_cuda_ctx *c, const float *X, const float *Y);
/* X and Y to the device: from their pinned copies if em_cuda_pin_inputs made them, else from X and Y */
int em_cuda_copy_in(em_cuda_ctx *c, const float *X, const float *Y);
int em_cuda_compute(em_cuda_ctx *c);                    /* launches; does not synchronise */
/* factorized's O(D) rows on the device (em_cuda_factorized.cu), a warp per row; same results and
 * copy-out as em_cuda_compute; launches, does not synchronise */
int em_cuda_compute_factorized(em_cuda_ctx *c);
/* Makes compute finish on the device: the per-row sums reduced into H and MI in double (two passes,
 * each in a fixed order), so copy_out brings back 2 doubles into pinned memory instead of 2 B floats into
 * pageable memory: the copies of the torch-cuda forms (softmax and means on the device, .item()).
 * Once, outside the timed runs: 0, or -1 when allocation fails (c is then as before) or was done. */
int em_cuda_sums_on_device(em_cuda_ctx *c);
/* H and MI to the host: the 2 device sums (em_cuda_sums_on_device), else the 2 B row sums, reduced in
 * double on the host. */
int em_cuda_copy_out(em_cuda_ctx *c, double *H, double *MI);
void em_cuda_free(em_cuda_ctx *c);
int em_cuda_device_count(void);                         /* 0 when no device or no driver */

#endif
