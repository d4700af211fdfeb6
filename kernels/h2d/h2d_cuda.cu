/*
 * kernels/h2d/h2d_cuda.cu: the copies of h2d_cuda.h. Nothing here is timed by the host: the study's
 * runner times h2d_copy as a whole (enqueue + wait), and the events inside give the device's view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "h2d_cuda.h"

struct h2d_ctx {
    size_t bytes;
    int pinned;
    uint8_t *host, *dev;
    cudaStream_t s;
    cudaEvent_t start, stop;
    char err[256];
};

static int fail(h2d_ctx *c, const char *what, cudaError_t e)
{
    snprintf(c->err, sizeof c->err, "h2d: %s: %s", what, cudaGetErrorString(e));
    return -1;
}

#define CK(call, what)                                                                                   \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess)                                                                           \
            return fail(c, what, e_);                                                                    \
    } while (0)

static int alloc(h2d_ctx *c)
{
    if (c->pinned)
        CK(cudaMallocHost((void **)&c->host, c->bytes), "cudaMallocHost (pinned host buffer)");
    else if (!(c->host = (uint8_t *)malloc(c->bytes)))
        return snprintf(c->err, sizeof c->err, "h2d: out of host memory for %zu bytes", c->bytes), -1;
    CK(cudaMalloc((void **)&c->dev, c->bytes), "cudaMalloc (device buffer)");
    CK(cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking), "cudaStreamCreate");
    CK(cudaEventCreate(&c->start), "cudaEventCreate");
    CK(cudaEventCreate(&c->stop), "cudaEventCreate");
    /* Touch every host page once, so that the first timed copy does not pay the page faults. */
    memset(c->host, 0, c->bytes);
    return 0;
}

extern "C" h2d_ctx *h2d_create(size_t bytes, int pinned, char *msg, size_t msg_len)
{
    h2d_ctx *c = (h2d_ctx *)calloc(1, sizeof *c);
    if (!c) {
        snprintf(msg, msg_len, "h2d: out of host memory");
        return NULL;
    }
    c->bytes = bytes ? bytes : 1;
    c->pinned = pinned;
    if (h2d_device_count() == 0) {
        snprintf(msg, msg_len, "h2d: no CUDA device");
        h2d_destroy(c);
        return NULL;
    }
    if (alloc(c)) {
        snprintf(msg, msg_len, "%s", c->err);
        h2d_destroy(c);
        return NULL;
    }
    return c;
}

extern "C" void h2d_destroy(h2d_ctx *c)
{
    if (!c)
        return;
    if (c->start)
        cudaEventDestroy(c->start);
    if (c->stop)
        cudaEventDestroy(c->stop);
    if (c->s)
        cudaStreamDestroy(c->s);
    if (c->dev)
        cudaFree(c->dev);
    if (c->host && c->pinned)
        cudaFreeHost(c->host);
    else
        free(c->host);
    free(c);
}

extern "C" uint8_t *h2d_host(h2d_ctx *c) { return c->host; }
extern "C" const char *h2d_error(const h2d_ctx *c) { return c ? c->err : "h2d: no context"; }

extern "C" int h2d_copy(h2d_ctx *c, enum h2d_dir dir, size_t bytes, double *device_ms)
{
    if (bytes > c->bytes)
        return snprintf(c->err, sizeof c->err, "h2d: a copy of %zu bytes in a %zu-byte context", bytes, c->bytes),
               -1;
    CK(cudaEventRecord(c->start, c->s), "cudaEventRecord");
    if (dir == H2D_TO_DEVICE)
        CK(cudaMemcpyAsync(c->dev, c->host, bytes, cudaMemcpyHostToDevice, c->s), "cudaMemcpyAsync to the device");
    else
        CK(cudaMemcpyAsync(c->host, c->dev, bytes, cudaMemcpyDeviceToHost, c->s), "cudaMemcpyAsync to the host");
    CK(cudaEventRecord(c->stop, c->s), "cudaEventRecord");
    CK(cudaStreamSynchronize(c->s), "the copy");
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, c->start, c->stop), "cudaEventElapsedTime");
    *device_ms = ms;
    return 0;
}

extern "C" int h2d_read_device(h2d_ctx *c, uint8_t *out, size_t bytes)
{
    CK(cudaMemcpy(out, c->dev, bytes, cudaMemcpyDeviceToHost), "reading the device buffer back");
    return 0;
}

extern "C" int h2d_write_device(h2d_ctx *c, const uint8_t *in, size_t bytes)
{
    CK(cudaMemcpy(c->dev, in, bytes, cudaMemcpyHostToDevice), "writing the device buffer");
    return 0;
}

extern "C" int h2d_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n;
}
