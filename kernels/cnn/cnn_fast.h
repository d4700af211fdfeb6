/*
 * kernels/cnn/cnn_fast.h: what the fast variants need of the workspace's scratch, for cnn_scratch_floats
 * (cnn_common.c), and simd's and omp's convolutions (cnn_simd_conv.c). simd and omp: one work area per
 * thread for a convolution layer, in floats (a multiple of 16; cnn_simd.h's cnns_area lists its parts).
 * It depends on the vector width, as the kernels do: in a dispatch build each ISA level's copy of
 * cnn_common.c calls its own level's.
 * blas: per thread, the im2col matrix and the product of one slice of images, and partial gradients.
 */
#ifndef SL_KERNELS_CNN_FAST_H
#define SL_KERNELS_CNN_FAST_H

#include "cnn_kernels.h"

#include <stddef.h>
#include <stdint.h>

size_t cnn_simd_area_floats(const cnn_conv *c); /* cnn_simd_conv.c */

/* simd's and omp's convolutions of images b0..b1-1 of a batch of B in one work area (area:
 * cnn_simd_area_floats(c) floats): as the variants' conv_forward, conv_backward, conv_pool_forward and
 * pool_conv_backward (cnn_kernels.h), except that the backward leaves its partial dw and db at the start of
 * the area (cout x taps, then cout) for cnn_simd_reduce, which sums flat elements i0..i1-1 of (dw, then db)
 * over the nt areas at areas + t stride, in thread order. */
void cnn_simd_conv_forward_range(const cnn_conv *c, int B, const float *x, const float *w, const float *b, float *y,
                                 int b0, int b1, float *area);
void cnn_simd_conv_backward_range(const cnn_conv *c, int B, const float *x, const float *w, const float *y,
                                  float *dy, float *dx, int b0, int b1, float *area);
void cnn_simd_conv_pool_forward_range(const cnn_conv *c, const cnn_pool *pl, int B, const float *x, const float *w,
                                      const float *b, float *p, uint8_t *arg, int b0, int b1, float *area);
void cnn_simd_pool_conv_backward_range(const cnn_conv *c, int B, const float *x, const float *w, const float *p,
                                       const uint8_t *arg, const float *dp, float *dx, int b0, int b1, float *area);
void cnn_simd_reduce(const cnn_conv *c, const float *areas, size_t stride, int nt, float *dw, float *db, size_t i0,
                     size_t i1);

/* The kernels simd's and omp's convolutions take for c's shape at this copy's level, for the tests: the
 * fused forward with the output channels as the lanes (cnn_conv1_simd.h, cnn_conv2_simd.h), the fused
 * weight gradient with pooling windows as the lanes (cnn_conv1_simd.h), the input gradient by scatter
 * (cnn_simd_bwd.h). Where a level lacks one the study's shapes run a position-lanes form, which computes
 * idle lanes and padding (about half the training step's speed at AVX-512 when it did). */
enum { CNN_SIMD_FWD_CHANNELS = 1, CNN_SIMD_WGRAD_WINDOWS = 2, CNN_SIMD_DX_SCATTER = 4 };
int cnn_simd_conv_forms(const cnn_conv *c);

/* blas.c lowers a convolution to products over slices of up to this many images, which its threads take
 * in turn: large enough that a product amortises OpenBLAS's call and packing, small enough that the
 * slice's im2col matrix stays in cache between the pass that writes it and the products that read it. */
#ifndef CNN_BLAS_SLICE
#define CNN_BLAS_SLICE 64
#endif

/* blas's scratch per thread for a convolution at batch B, S = min(B, CNN_BLAS_SLICE): col (cin k k x
 * S ho wo), Y' or dz' (cout x S ho wo), then the thread's partial weight and bias gradients (cout x
 * cin k k + cout), each rounded up to 16 floats (cnn_common.c; the same in every ISA copy). */
size_t cnn_blas_area_floats(const cnn_conv *c, int B);

#endif
