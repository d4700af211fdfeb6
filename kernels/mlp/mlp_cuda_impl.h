/*
 * kernels/mlp/mlp_cuda_impl.h: what the two files of the mlp device variants share (not a public header:
 * mlp_cuda.h is). mlp_cuda.cu holds the context, the kernels and the step; mlp_cuda_feed.cu the
 * host-fed steps (mlp_cuda_set_feed, mlp_cuda_data_host). Device time is kernels/gpu/gpu_timing.h's.
 */
#ifndef SL_KERNELS_MLP_CUDA_IMPL_H
#define SL_KERNELS_MLP_CUDA_IMPL_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "sl_config.h"
#if SL_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

extern "C" {
#include "mlp_cuda.h"
}
#include "gpu/gpu_timing.h"

struct mlp_cuda {
    mlp_dims d;
    mlp_layout L;
    int use_cublas, max_batch, slot, sms;
    long n_train, n_test;
    cudaStream_t s;
    cudaEvent_t staged[2];
#if SL_HAVE_CUBLAS
    cublasHandle_t h;
#endif
    uint8_t *tr_x, *tr_y, *te_x, *te_y, *y;                 /* device */
    float *P, *G, *X, *a1, *a2, *z3, *d3, *d2, *d1;          /* device */
    int32_t *idx;                                            /* device */
    double *rowloss, *acc;                                   /* device */
    unsigned long long *count;                               /* device */
    int32_t *h_idx;                                          /* pinned, 2 x max_batch */
    double *h_loss;                                          /* pinned */
    unsigned long long *h_count;                             /* pinned */
    size_t bytes;
    /* host-fed steps (mlp_cuda_set_feed): two slots of max_batch rows then max_batch labels, on the
     * host (pinned for OVERLAP) and on the device; the copy stream and each slot's events */
    int feed, rslot;
    uint8_t *h_rows, *d_rows;
    cudaStream_t cs;
    cudaEvent_t copied[2], consumed[2];
    /* device time (kernels/gpu/gpu_timing.h): the phase marks of every MLP_PHASE_EVERY-th step
     * (mlp_cuda_phase_mark), and the spans of every step's copies and kernels and of the read-backs
     * (mlp_cuda_span_take, MLP_SPAN_*) */
    gpu_marks *marks;
    gpu_spans *span[MLP_SPANS];
    char err[256];
};

/* Sets c->err to "mlp cuda: <what>: <why>" and returns -1. */
int mlp_fail(mlp_cuda *c, const char *what, const char *why);
#define CK(call, what) \
    do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return mlp_fail(c, what, cudaGetErrorString(e_)); } while (0)
#define LAUNCHED(what) CK(cudaGetLastError(), "launch " what)
/* A gpu_timing.h call: 0, or mlp_fail with its reason. */
#define TIMED(call, what) \
    do { int r_ = (call); if (r_) return mlp_fail(c, what, gpu_timing_error(r_)); } while (0)

/* cudaMalloc counted in c->bytes; never a zero-byte block. */
int mlp_dalloc(mlp_cuda *c, void **p, size_t n, const char *what);
/* 0 when 1 <= B <= max_batch, else mlp_fail naming `what`. */
int mlp_check_B(mlp_cuda *c, int B, const char *what);
/* X, y <- rows of (src_x, src_y): by the device indices c->idx, or contiguous from row0 (use_idx 0). */
int mlp_gather(mlp_cuda *c, const uint8_t *src_x, const uint8_t *src_y, int use_idx, long row0, int B);
/* Frees the host feed's slots, stream and events (mlp_cuda_feed.cu); the feed is then resident. */
void mlp_free_feed(mlp_cuda *c);

#endif
