/*
 * kernels/h2d/h2d_cuda.h: host-to-device and device-to-host copies, the curve nvbandwidth and CUDA's
 * bandwidthTest report (seed 003, part 5). One context holds a host buffer (pageable: malloc; or pinned:
 * cudaMallocHost, page-locked, which the GPU's copy engines read by DMA directly, where a pageable buffer
 * is first staged through a pinned bounce buffer by the driver), a device buffer of the same size, a
 * stream and two events. A copy is one cudaMemcpyAsync on the stream between the two events, then a
 * wait for the stream: the host sees the copy finished, and the events give its device-side time.
 * Built only with CUDA; create fails with a message without a device.
 */
#ifndef SL_KERNELS_H2D_CUDA_H
#define SL_KERNELS_H2D_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum h2d_dir { H2D_TO_DEVICE = 0, H2D_TO_HOST = 1 };

typedef struct h2d_ctx h2d_ctx;

/* A context for copies of up to `bytes` bytes; pinned: page-locked host memory. NULL with msg. */
h2d_ctx *h2d_create(size_t bytes, int pinned, char *msg, size_t msg_len);
void h2d_destroy(h2d_ctx *c);
/* The host buffer (bytes long): the source of a copy to the device, the destination of one to the host. */
uint8_t *h2d_host(h2d_ctx *c);
/* One copy of `bytes` bytes in direction dir; *device_ms: the events' time. 0, or -1 with h2d_error. */
int h2d_copy(h2d_ctx *c, enum h2d_dir dir, size_t bytes, double *device_ms);
/* Untimed, for the check: the device buffer's first `bytes` bytes to out, or from in. 0 or -1. */
int h2d_read_device(h2d_ctx *c, uint8_t *out, size_t bytes);
int h2d_write_device(h2d_ctx *c, const uint8_t *in, size_t bytes);
const char *h2d_error(const h2d_ctx *c);
/* CUDA devices (0 without one or without a driver), for tests that skip. */
int h2d_device_count(void);

#ifdef __cplusplus
}
#endif

#endif
