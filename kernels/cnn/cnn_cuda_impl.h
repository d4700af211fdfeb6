/*
 * kernels/cnn/cnn_cuda_impl.h: what the three files of the cnn device variants share (not a public
 * header: cnn_cuda.h is). cnn_cuda.cu holds the step's public calls, the kernels both backends use
 * (gather, softmax cross-entropy, momentum update, evaluation count) and the graph logic;
 * cnn_cuda_setup.cu create and destroy; cnn_cuda_own.cu the cuda backend's layer kernels; cnn_cudnn.cu
 * the cudnn backend (cuDNN + cuBLAS).
 * Each backend is two calls, forward and backward, that enqueue one batch's layers on c->s.
 */
#ifndef SL_KERNELS_CNN_CUDA_IMPL_H
#define SL_KERNELS_CNN_CUDA_IMPL_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

extern "C" {
#include "cnn_cuda.h"
}
#include "gpu/gpu_timing.h"

#define CNN_MAX_GRAPHS 8 /* one per batch size seen; an epoch needs two (full, last partial) */
#define CNN_PHASES 5     /* data, forward, loss, backward, update */
#define CNN_PHASE_EVERY 8 /* the phase marks are recorded on every 8th step (gpu_marks) */

typedef struct cnn_dnn cnn_dnn; /* the cudnn backend's handles and descriptors (cnn_cudnn.cu) */

/* Whether a backend runs on cuDNN (its algorithms found or taken from the heuristic). */
static inline int cnn_backend_is_dnn(int backend)
{
    return backend == CNN_CUDA_CUDNN || backend == CNN_CUDA_CUDNN_HEURISTIC;
}

struct cnn_cuda {
    cnn_dims d;
    cnn_layout L;
    int backend, graph, max_batch, sms;
    long n_train, n_test;
    cudaStream_t s;

    /* device data: images and labels (bytes), parameters, gradients, momentum */
    uint8_t *tr_x, *tr_y, *te_x, *te_y, *y;
    float *P, *G, *V;
    /* one batch's activations and deltas, max_batch rows each (cnn_ws's names) */
    float *X, *a1, *p1, *a2, *p2, *a3, *z4, *d4, *da3, *dp2, *da2, *dp1, *da1;
    uint8_t *arg1, *arg2; /* pooling argmax (cuda backend) */
    float *part;          /* per-slice partial weight gradients (cuda backend) */
    size_t part_floats;
    double *rowloss, *acc;
    unsigned long long *count;
    /* the staged step inputs: lrmu[0] = lr, lrmu[1] = mu, then idx: one device block, so that in graph
     * mode one copy brings the step's indices and rate together (cnn_cuda.cu, "graph") */
    uint32_t *stage_d;
    float *lrmu;
    int32_t *idx;
    uint32_t *h_stage; /* pinned, 2 slots of 2 + max_batch words, each guarded by an event */
    cudaEvent_t staged[2];
    int slot;
    double *h_loss;
    unsigned long long *h_count;

    /* the step in progress: its batch size (0 between steps), whether one of its calls failed (the
     * later ones then keep that message), the ops it enqueued; device time (kernels/gpu/gpu_timing.h):
     * the phase marks of every CNN_PHASE_EVERY-th step without a graph, and the spans of every step's
     * copy and kernels and of the read-backs (cnn_cuda_span_take, CNN_SPAN_*) */
    int step_B, step_failed, step_ops, last_ops;
    gpu_marks *marks;
    gpu_spans *span[CNN_SPANS];
    /* graph mode: one executable graph per batch size, the one to launch, capture in progress */
    int n_graphs, capturing;
    int graph_B[CNN_MAX_GRAPHS];
    cudaGraphExec_t graph_exec[CNN_MAX_GRAPHS];
    cudaGraphExec_t launch;

    cnn_dnn *dnn;
    size_t bytes;
    char err[320];
};

/* ---- shared host helpers (cnn_cuda.cu) ------------------------------------------------------------ */

/* Sets c->err to "cnn cuda: <what>: <why>" and returns -1. */
int cnn_fail(cnn_cuda *c, const char *what, const char *why);
/* One more operation enqueued on the stream for this step (not counted while capturing: the graph
 * launch counts once for all of them). */
void cnn_count_op(cnn_cuda *c);
/* Grid for an elementwise grid-stride kernel of n items and `threads` threads a block. */
unsigned cnn_grid(const cnn_cuda *c, size_t n, unsigned threads);
/* cudaMalloc with the context's byte count; never a zero-byte block. */
int cnn_dalloc(cnn_cuda *c, void **p, size_t n, const char *what);
/* Ends a capture a failure interrupted (no-op when none is open), so the stream is usable again; the
 * message says where. */
void cnn_abort_capture(cnn_cuda *c);
/* db[j] = sum over the B rows of D[b][j] (D is B x N): a dense layer's bias gradient. */
int cnn_colsum(cnn_cuda *c, const float *D, int B, int N, float *db);

#define CK(call, what)                                                                                   \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess)                                                                           \
            return cnn_fail(c, what, cudaGetErrorString(e_));                                            \
    } while (0)
/* A gpu_timing.h call: 0, or cnn_fail with its reason. */
#define TIMED(call, what)                                                                                \
    do {                                                                                                 \
        int r_ = (call);                                                                                 \
        if (r_)                                                                                          \
            return cnn_fail(c, what, gpu_timing_error(r_));                                              \
    } while (0)
/* After a kernel launch: its configuration error, if any, then count it. */
#define LAUNCHED(what)                                                                                   \
    do {                                                                                                 \
        CK(cudaGetLastError(), "launch " what);                                                          \
        cnn_count_op(c);                                                                                 \
    } while (0)

/* ---- the cuda backend (cnn_cuda_own.cu) ----------------------------------------------------------- */

/* 0, or -1 with the reason in msg when the dimensions do not suit its kernels (3x3 only, weights in
 * shared memory). */
int cnn_own_check(const cnn_dims *d, char *msg, size_t msg_len);
/* Floats of c->part the weight-gradient partial sums need (any batch size). */
size_t cnn_own_part_floats(const cnn_dims *d);
int cnn_own_forward(cnn_cuda *c, int B);  /* X -> a1, p1 (arg1), a2, p2 (arg2), a3, z4 */
int cnn_own_backward(cnn_cuda *c, int B); /* d4 -> every block of G */

/* ---- the cudnn backend (cnn_cudnn.cu) ------------------------------------------------------------- */

/* Handles, descriptors, cudnnFind* (at max_batch), workspace: after the buffers are allocated. */
int cnn_dnn_create(cnn_cuda *c);
void cnn_dnn_destroy(cnn_dnn *n);
int cnn_dnn_forward(cnn_cuda *c, int B);
int cnn_dnn_backward(cnn_cuda *c, int B);
const char *cnn_dnn_algorithms(const cnn_dnn *n);
double cnn_dnn_search_s(const cnn_dnn *n);

#endif
