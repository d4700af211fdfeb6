/*
 * kernels/mlp/mlp_cuda.h: the mlp network on the GPU (variants cuda: own kernels; cublas: the products
 * by cublasSgemm, the rest by the same small kernels). Same parameter layout and maths as mlp_kernels.h.
 *
 * The training and test images (bytes, n x n0) and labels are uploaded once by mlp_cuda_create (outside
 * the timed path, as the write-up's CuPy code keeps its arrays on the device). A step then takes the
 * batch's row indices from the host: mlp_cuda_data uploads them and gathers + scales the rows on the
 * device, and the other calls enqueue work on the context's stream. Calls return 0, or -1 with the
 * reason in mlp_cuda_error(). Host timing of a call measures its enqueue only; mlp_cuda_sync waits.
 */
#ifndef SL_KERNELS_MLP_CUDA_H
#define SL_KERNELS_MLP_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "mlp_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlp_cuda mlp_cuda;

/* use_cublas: 0 = cuda variant, 1 = cublas variant. max_batch: the largest B of any later call
 * (mlp_cuda_evaluate works in chunks of max_batch). NULL with msg on failure (no device, out of memory). */
mlp_cuda *mlp_cuda_create(const mlp_dims *d, int use_cublas, int max_batch,
                          const uint8_t *train_x, const uint8_t *train_y, long n_train,
                          const uint8_t *test_x, const uint8_t *test_y, long n_test,
                          char *msg, size_t msg_len);
void mlp_cuda_destroy(mlp_cuda *c);
const char *mlp_cuda_error(const mlp_cuda *c);

/* Parameters to and from the device (P in mlp_kernels.h's layout, mlp_layout_of(d).n floats). */
int mlp_cuda_set_params(mlp_cuda *c, const float *P);
int mlp_cuda_get_params(mlp_cuda *c, float *P);

/* One SGD step, in the study's regions: data (indices up, gather rows of the training set, scale to
 * [0,1]), forward, loss (softmax, cross-entropy added to a device accumulator, d3), backward, update. */
int mlp_cuda_data(mlp_cuda *c, const int32_t *idx, int B);
int mlp_cuda_forward(mlp_cuda *c, int B);
int mlp_cuda_loss(mlp_cuda *c, int B);
int mlp_cuda_backward(mlp_cuda *c, int B);
int mlp_cuda_update(mlp_cuda *c, float lr);
/* Host-fed steps (seed 003, part 5): the batch's rows come from host memory each step, as a framework's
 * DataLoader hands them over, instead of from the resident training set.
 *   MLP_FEED_SYNC: gathered on the host into pageable memory and copied on the compute stream: a copy
 *     from pageable memory waits for the stream's earlier work and the step waits for the copy, the
 *     synchronous loop;
 *   MLP_FEED_OVERLAP: gathered into one of two pinned slots and copied on a second stream, so that the
 *     copy of step k+1 runs while step k computes (events order the streams; the host waits only for the
 *     slot it is about to overwrite).
 * set_feed allocates the slots and the stream (call it outside timing; MLP_FEED_RESIDENT frees them);
 * data_host then replaces mlp_cuda_data: rows idx[0..B) of images (n0 bytes each) and of labels, the
 * caller's indices within its arrays. 0, or -1 with mlp_cuda_error. */
enum { MLP_FEED_RESIDENT = 0, MLP_FEED_SYNC = 1, MLP_FEED_OVERLAP = 2 };
int mlp_cuda_set_feed(mlp_cuda *c, int feed);
int mlp_cuda_data_host(mlp_cuda *c, const uint8_t *images, const uint8_t *labels, const int32_t *idx, int B);

/* Device time of each phase, CUDA events on the stream (kernels/gpu/gpu_timing.h): call
 * with i = 0 before data, then i = 1..5 after data, forward, loss, backward and update. Every
 * MLP_PHASE_EVERY-th step (from the first) records them. mlp_cuda_phase_poll gives a sampled step's five
 * phases in ms once it has ended on the device, without waiting: 1, else 0 (or -1 with mlp_cuda_error);
 * mlp_cuda_phase_ms the last sampled step's, waiting for it: 0, or -1 when none ended yet (ms NAN). */
enum { MLP_PHASES = 5, MLP_PHASE_EVERY = 64 };
int mlp_cuda_phase_mark(mlp_cuda *c, int i);
int mlp_cuda_phase_poll(mlp_cuda *c, double ms[5]);
int mlp_cuda_phase_ms(mlp_cuda *c, double ms[5]);

/* The record's phases: every step's work is timed by an event pair on its stream, nothing
 * sampled. MLP_SPAN_H2D: the step's host-to-device copies (the batch's indices; with a host feed its rows
 * and labels instead, on the copy stream with MLP_FEED_OVERLAP); MLP_SPAN_KERNEL: the step's device work
 * after them, from the gather (after the copy, or after the wait for it) to the update's end;
 * MLP_SPAN_D2H: the read-backs (take_loss's sum, evaluate's count). span_take: the spans' ms summed
 * since the last take or drop, which it empties; it waits for the last one, so call it after a sync
 * (then it waits for nothing). 0, or -1 with mlp_cuda_error (a span left open: a step that failed).
 * span_drop forgets them (before a repetition). */
enum { MLP_SPAN_H2D = 0, MLP_SPAN_KERNEL = 1, MLP_SPAN_D2H = 2, MLP_SPANS = 3 };
int mlp_cuda_span_take(mlp_cuda *c, int which, double *ms);
void mlp_cuda_span_drop(mlp_cuda *c);
/* No spans from now on (the study's spans=0): the steps record no events but the sampled phase marks,
 * so their time is free of the events' cost; span_take then gives -1. */
void mlp_cuda_spans_off(mlp_cuda *c);

/* Waits for the stream. Then: the sum of the batch-mean losses added since the last take (and zeroes it). */
int mlp_cuda_sync(mlp_cuda *c);
int mlp_cuda_take_loss(mlp_cuda *c, double *loss_sum);

/* Test-set accuracy count with the current parameters (synchronous). */
int mlp_cuda_evaluate(mlp_cuda *c, long *correct);
/* Device memory this context has allocated (bytes). */
size_t mlp_cuda_bytes(const mlp_cuda *c);

/* The number of CUDA devices (0 without one, or without a usable driver), for tests that skip. */
int mlp_cuda_device_count(void);

#ifdef __cplusplus
}
#endif

#endif
