/*
 * kernels/kern_onednn.h: the oneDNN primitives the `onednn` variants call (kern_onednn.c), made once per
 * shape and thread count and kept for the process.
 *
 * oneDNN picks its own code at run time (its JIT chooses the widest ISA the CPU has: AVX-512, AVX-512
 * BF16, AMX; kern_onednn_isa names it), so these files are compiled once, outside the per-level copies of
 * a dispatch build (kernels/meson.build's `once` lists): a copy per level would run the same library
 * code, and the primitive cache below is data, which the per-level copies may not hold.
 *
 * A kernel's first call with a shape creates its primitive (a JIT compilation, milliseconds); the
 * runner's check and warm-up calls come before the timed repetitions, so the timed calls only execute.
 * Every function here works on plain row-major float32 arrays (no blocked layouts, no reorders) and
 * runs on `threads` OpenMP threads (Debian's oneDNN uses the OpenMP runtime). A primitive that oneDNN
 * refuses (it never should for these shapes) leaves its output NaN, so the variant fails its check.
 */
#ifndef SL_KERNELS_KERN_ONEDNN_H
#define SL_KERNELS_KERN_ONEDNN_H

#include <stdint.h>

/* C = act(op(A) op(Bm) + bias), all float32 row-major: op(A) is M x K (A stored K x M, leading
 * dimension lda, when ta), op(Bm) K x N (stored N x K when tb), C M x N with leading dimension ldc.
 * bias: N floats or NULL. relu: 1 applies max(0, .) as a post-op of the same primitive. */
void kern_onednn_matmul(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *Bm,
                        int ldb, const float *bias, float *C, int ldc, int relu, int threads);

/* The same product with A and Bm in bf16 (uint16_t bit patterns), accumulated in float32, C in bf16
 * (c_bf16: rounded to nearest even after bias and ReLU) or float32: oneDNN's bf16 matmul (AVX512_BF16
 * dot products or AMX where the CPU has them, else its emulation). accumulate: C += the product. */
void kern_onednn_matmul_bf16(int ta, int tb, int M, int N, int K, const uint16_t *A, int lda, const uint16_t *Bm,
                             int ldb, const float *bias, void *C, int c_bf16, int ldc, int relu, int accumulate,
                             int threads);

/* A valid k x k convolution, stride 1, NCHW: x B x cin x h x w, w cout x cin x k x k, b cout,
 * y B x cout x (h-k+1) x (w-k+1). forward: y = relu(conv(x, w) + b) (relu 0: no ReLU). */
void kern_onednn_conv_forward(int B, int cin, int h, int w, int cout, int k, const float *x,
                              const float *wt, const float *b, float *y, int relu, int threads);
/* dw, db = the weights' and bias' gradients of dz (written, not accumulated). */
void kern_onednn_conv_backward_weights(int B, int cin, int h, int w, int cout, int k, const float *x,
                                       const float *dz, float *dw, float *db, int threads);
/* dx = the input gradient of dz. */
void kern_onednn_conv_backward_data(int B, int cin, int h, int w, int cout, int k, const float *wt,
                                    const float *dz, float *dx, int threads);

/* 2x2 max pooling, stride 2, of x (B x c x h x w) into y (B x c x h/2 x w/2; an odd last row and
 * column unused) with arg = each window's winner (0-3, row-major, the first on ties: cnn_pool_forward's),
 * and its backward: dx = dy scattered through arg, zero elsewhere. */
void kern_onednn_pool_forward(int B, int c, int h, int w, const float *x, float *y, uint8_t *arg, int threads);
void kern_onednn_pool_backward(int B, int c, int h, int w, const float *dy, const uint8_t *arg, float *dx,
                               int threads);

/* What the build's oneDNN is and chose on this CPU, as its verbose output (ONEDNN_VERBOSE=1) names
 * them: "2.6.3 (commit N/A)" and e.g. "Intel AVX-512 with Intel DL Boost and bfloat16 support". */
void kern_onednn_version(char *out, int n);
const char *kern_onednn_isa(void);

#endif
