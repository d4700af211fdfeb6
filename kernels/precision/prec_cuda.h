/*
 * kernels/precision/prec_cuda.h: the precision study's GPU rows: the mlp (mlp_kernels.h's layout and
 * maths) on the device with its products by cublasGemmEx, inputs in the row's type (float32, half or
 * bfloat16), compute and accumulation in float32 (CUBLAS_COMPUTE_32F; cuBLAS's default math, so tensor
 * cores for the 16-bit inputs and plain float32 for fp32). As torch.autocast + GradScaler:
 *   - float32 master weights P, converted to the row's type once per step (Pq);
 *   - the batch, the activations a1, a2 and the deltas d3, d2, d1 stored in that type; the logits and
 *     the gradient G in float32 (GemmEx writes float32 C from 16-bit A and B);
 *   - the 16-bit rows scale the loss: d3 = scale (softmax - onehot) / B, scale starting at 2^16; a step
 *     whose scaled gradient has an inf or NaN is skipped and halves the scale; 2000 good steps in a row
 *     double it. The update divides by the scale. fp32 does not scale (scale 1, never changed).
 * The training and test images are uploaded once by prec_cuda_create, which also runs every product
 * shape and kernel of the steps and the evaluation once (untimed: a kernel's first use loads it);
 * the scaler lives on the device, so a step never waits for the host. Calls return 0, or -1 with the
 * reason in prec_cuda_error().
 * Every step's index copy (from the caller's pageable array) and kernels, and the loss and count
 * read-backs (into pinned memory), are timed by CUDA events (the spans: the record's device phases), as
 * mlp's device rows are; set/get_params and the scaler's read-back are not.
 */
#ifndef SL_KERNELS_PREC_CUDA_H
#define SL_KERNELS_PREC_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "mlp/mlp_kernels.h" /* C declarations, also for the .cu file that includes this */

enum { PREC_CUDA_F32 = 0, PREC_CUDA_F16 = 1, PREC_CUDA_BF16 = 2 };
/* The spans (train.h's TRAIN_H2D, TRAIN_KERNEL, TRAIN_D2H): a step's index copy; its kernels, gather to
 * the scaler; the loss and count read-backs. */
enum { PREC_SPAN_H2D = 0, PREC_SPAN_KERNEL = 1, PREC_SPAN_D2H = 2, PREC_SPANS = 3 };

typedef struct prec_cuda prec_cuda;

/* type: PREC_CUDA_*. max_batch: the largest B of any step (the evaluation works in chunks of it).
 * train_batch: the training steps' B (<= max_batch), which sizes the spans' events made here, so that
 * an epoch's steps make none. NULL with msg on failure (no device, no cuBLAS, out of memory, a label
 * out of range). */
prec_cuda *prec_cuda_create(const mlp_dims *d, int type, int max_batch, int train_batch, const uint8_t *train_x,
                            const uint8_t *train_y, long n_train, const uint8_t *test_x, const uint8_t *test_y,
                            long n_test, char *msg, size_t msg_len);
void prec_cuda_destroy(prec_cuda *c);
const char *prec_cuda_error(const prec_cuda *c);

/* The float32 master weights to and from the device (mlp_layout_of(d).n floats). */
int prec_cuda_set_params(prec_cuda *c, const float *P);
int prec_cuda_get_params(prec_cuda *c, float *P);

/* One SGD step on training rows idx[0..B), enqueued: gather, convert, forward, loss, backward, the
 * scaler's inf check, update (skipped on inf), the scaler's update. */
int prec_cuda_step(prec_cuda *c, const int32_t *idx, int B, float lr);
/* Waits for the stream. Then the sum of the batch-mean losses since the last take (and zeroes it). */
int prec_cuda_sync(prec_cuda *c);
int prec_cuda_take_loss(prec_cuda *c, double *loss_sum);
/* Test rows predicted right with the current weights (synchronous). */
int prec_cuda_evaluate(prec_cuda *c, long *correct);
/* The loss scale now and the steps skipped since create (synchronous). */
int prec_cuda_scaler(prec_cuda *c, double *scale, long *skipped);
/* Device memory this context has allocated (bytes). */
size_t prec_cuda_bytes(const prec_cuda *c);
/* *ms = the ms of the completed spans of kind `which` since the last take or drop, summed; call after
 * the stream drained (sync, take_loss, evaluate). 0, or -1 (not measured: *ms NAN, or which out of
 * range) with prec_cuda_error. drop forgets them all (before a repetition). */
int prec_cuda_span_take(prec_cuda *c, int which, double *ms);
void prec_cuda_span_drop(prec_cuda *c);

#ifdef __cplusplus
}
#endif

#endif
