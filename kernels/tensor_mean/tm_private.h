/* Private to the tensor_mean CPU kernels. */
#ifndef KERNELS_TENSOR_MEAN_PRIVATE_H
#define KERNELS_TENSOR_MEAN_PRIVATE_H

/* Rows i0 <= i < i1 of A from already-tanh'd a, b, c (N x D each), scaled by 1/N (tm_simd.c). */
void tm_simd_rows(const float *a, const float *b, const float *c, long N, long D, long i0, long i1,
                  float *A);

#endif
