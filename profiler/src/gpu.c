/*
 * Device time with CUDA events (cudart C API). Whether a device exists is checked once
 * (cudaGetDeviceCount); without one, or built without CUDA, prof_gpu_begin/end are no-ops and
 * prof_gpu_end returns -1. Events are per thread, created on first use.
 */
#include "prof_internal.h"

#if PROF_HAVE_CUDA
#include <cuda_runtime_api.h>

static pthread_once_t dev_once = PTHREAD_ONCE_INIT;
static int have_device;

static void check_device(void)
{
    int n = 0;
    have_device = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    if (!have_device)
        cudaGetLastError(); /* clear the sticky "no device" error for the caller */
}

void prof_gpu_begin(void *stream)
{
    pthread_once(&dev_once, check_device);
    if (!have_device)
        return;
    prof_thread *t = prof_thread_self();
    if (!t->gpu_ev[0]) {
        cudaEvent_t a, b;
        if (cudaEventCreate(&a) != cudaSuccess)
            return;
        if (cudaEventCreate(&b) != cudaSuccess) {
            cudaEventDestroy(a);
            return;
        }
        t->gpu_ev[0] = a;
        t->gpu_ev[1] = b;
    }
    t->gpu_pending = cudaEventRecord((cudaEvent_t)t->gpu_ev[0], (cudaStream_t)stream) == cudaSuccess;
    t->gpu_stream = stream;
}

double prof_gpu_end(void)
{
    pthread_once(&dev_once, check_device);
    if (!have_device)
        return -1.0;
    prof_thread *t = prof_thread_self();
    if (!t->gpu_pending) {
        prof_note("prof_gpu_end() without a matching prof_gpu_begin() on this thread");
        return -1.0;
    }
    t->gpu_pending = 0;
    float ms = 0;
    cudaEvent_t a = (cudaEvent_t)t->gpu_ev[0], b = (cudaEvent_t)t->gpu_ev[1];
    if (cudaEventRecord(b, (cudaStream_t)t->gpu_stream) != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess ||
        cudaEventElapsedTime(&ms, a, b) != cudaSuccess)
        return -1.0;
    if (prof_depth(t) > 0)
        prof_add_device_ms(ms);
    return ms;
}

void prof_gpu_thread_free(prof_thread *t)
{
    if (t->gpu_ev[0]) {
        cudaEventDestroy((cudaEvent_t)t->gpu_ev[0]);
        cudaEventDestroy((cudaEvent_t)t->gpu_ev[1]);
    }
    t->gpu_ev[0] = t->gpu_ev[1] = NULL;
    t->gpu_pending = 0;
}

#else

void prof_gpu_begin(void *stream) { (void)stream; }
double prof_gpu_end(void) { return -1.0; }
void prof_gpu_thread_free(prof_thread *t) { (void)t; }

#endif
