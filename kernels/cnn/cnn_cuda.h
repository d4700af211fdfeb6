/*
 * kernels/cnn/cnn_cuda.h: the cnn network on the GPU. Variants: cuda (own kernels for every layer) and
 * cudnn (convolutions, pooling and activations by cuDNN 9, algorithms chosen once by cudnnFind*; the
 * dense layers by cuBLAS). Same parameter layout and maths as cnn_kernels.h, SGD with momentum.
 *
 * The training and test images (bytes) and labels are uploaded once by cnn_cuda_create (outside the
 * timed path). A step then takes the batch's row indices from the host: cnn_cuda_data uploads them and
 * gathers + scales the rows on the device, and the other calls enqueue work on the context's stream:
 * no host round-trip per step. With graph = 1 the first step of each batch size is captured as a CUDA
 * graph (data's index upload stays outside it) and later steps launch the graph. Calls return 0, or -1
 * with the reason in cnn_cuda_error(). Host timing of a call measures its enqueue only; cnn_cuda_sync
 * waits. Built only with CUDA (the cudnn variant also needs cuDNN and cuBLAS: cnn_cuda_create says so).
 */
#ifndef SL_KERNELS_CNN_CUDA_H
#define SL_KERNELS_CNN_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "cnn_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cnn_cuda cnn_cuda;

/* The backends. CNN_CUDA_CUDNN picks cuDNN's convolution algorithms by cudnnFind* (cuDNN runs every
 * candidate once and keeps the fastest: PyTorch's torch.backends.cudnn.benchmark = True);
 * CNN_CUDA_CUDNN_HEURISTIC takes the first FP32 choice of cudnnGet*Algorithm_v7 (cuDNN's heuristics, no
 * trial runs: PyTorch's default). The cnn study's cudnn and cudnn-heuristic rows compare the two. */
enum { CNN_CUDA_OWN = 0, CNN_CUDA_CUDNN = 1, CNN_CUDA_CUDNN_HEURISTIC = 2 };

/* backend: one of the three above. max_batch: the largest B of any later call (evaluation works
 * in chunks of max_batch). graph: capture each step as a CUDA graph. NULL with msg on failure (no device,
 * out of memory, a backend this build lacks). */
cnn_cuda *cnn_cuda_create(const cnn_dims *d, int backend, int graph, int max_batch,
                          const uint8_t *train_x, const uint8_t *train_y, long n_train,
                          const uint8_t *test_x, const uint8_t *test_y, long n_test,
                          char *msg, size_t msg_len);
void cnn_cuda_destroy(cnn_cuda *c);
const char *cnn_cuda_error(const cnn_cuda *c);

/* Parameters to and from the device (cnn_layout_of(d).n floats); set also zeroes the momentum. */
int cnn_cuda_set_params(cnn_cuda *c, const float *P);
int cnn_cuda_get_params(cnn_cuda *c, float *P);

/* One SGD step in the study's regions: data (indices up, gather + scale on the device), forward, loss
 * (softmax, cross-entropy into a device accumulator), backward, update (momentum mu, rate lr). With
 * graph = 1, forward..update are recorded on the first step of a batch size and replayed by update
 * afterwards (forward, loss and backward then enqueue nothing; lr is read from device memory). */
int cnn_cuda_data(cnn_cuda *c, const int32_t *idx, int B);
int cnn_cuda_forward(cnn_cuda *c, int B);
int cnn_cuda_loss(cnn_cuda *c, int B);
int cnn_cuda_backward(cnn_cuda *c, int B);
int cnn_cuda_update(cnn_cuda *c, int B, float lr, float mu);
/* Waits for the stream. Then: the sum of the batch-mean losses added since the last take (and zeroes it). */
int cnn_cuda_sync(cnn_cuda *c);
int cnn_cuda_take_loss(cnn_cuda *c, double *loss_sum);

/* Test-set accuracy count with the current parameters (synchronous). */
int cnn_cuda_evaluate(cnn_cuda *c, long *correct);

/* What the records report: device memory this context allocated (bytes, the high-water mark), the
 * operations (launches, copies, library calls) the last training step enqueued (graph: the copy of rate
 * and indices + 1 graph launch), and the device time
 * of each phase of the last sampled step (every 8th), from CUDA events (ms: data, forward, loss, backward,
 * update; NAN when not measured, e.g. inside a graph); it waits for that step. */
size_t cnn_cuda_bytes(const cnn_cuda *c);
double cnn_cuda_launches_per_step(const cnn_cuda *c);
int cnn_cuda_phase_ms(cnn_cuda *c, double ms[5]);
/* A sampled step's phases (ms, as phase_ms) once it has ended on the device, without waiting: 1, else 0
 * (or -1 with cnn_cuda_error). Every 8th step without a graph is sampled (the last sampled step is then
 * what phase_ms reads); none with a graph. */
int cnn_cuda_phase_poll(cnn_cuda *c, double ms[5]);
/* The record's phases: every step's work is timed by an event pair on the stream, nothing
 * sampled. CNN_SPAN_H2D: the step's host-to-device copy (its indices; with a graph the [lr, mu,
 * indices] copy before the launch); CNN_SPAN_KERNEL: the step's device work after it (without a graph
 * from the gather to the update's end; with one the graph launch, the gather included); CNN_SPAN_D2H:
 * the read-backs (take_loss's sum, evaluate's count). span_take: the spans' ms summed since the last take
 * or drop, which it empties; it waits for the last one, so call it after a sync. 0, or -1 with
 * cnn_cuda_error (a span left open: a step that failed). span_drop forgets them (before a repetition). */
enum { CNN_SPAN_H2D = 0, CNN_SPAN_KERNEL = 1, CNN_SPAN_D2H = 2, CNN_SPANS = 3 };
int cnn_cuda_span_take(cnn_cuda *c, int which, double *ms);
void cnn_cuda_span_drop(cnn_cuda *c);
/* No spans from now on (the study's spans=0): the steps record no events but the sampled phase marks,
 * so their time is free of the events' cost; span_take then gives -1. */
void cnn_cuda_spans_off(cnn_cuda *c);
/* cudnn: the algorithms cudnnFind* (or the heuristic) chose, e.g. "conv1 fwd IMPLICIT_PRECOMP_GEMM, ..."
 * ("" for cuda). */
const char *cnn_cuda_algorithms(const cnn_cuda *c);
/* cudnn: the wall seconds create spent choosing the five convolutions' algorithms (cudnnFind*'s trial
 * runs, or the heuristic's queries), synchronised; NAN for the cuda backend. The cost a first epoch pays
 * in PyTorch's benchmark mode, paid here once before timing. */
double cnn_cuda_algo_search_s(const cnn_cuda *c);

/* The number of CUDA devices (0 without one, or without a usable driver), for tests that skip. */
int cnn_cuda_device_count(void);

#ifdef __cplusplus
}
#endif

#endif
