/*
 * kernels/gpu/gpu_timing.cu: event spans and sampled phase marks (gpu_timing.h). One implementation
 * for the mlp and cnn device variants.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>

#include "gpu_timing.h"

struct gpu_spans {
    cudaEvent_t *ev; /* 2 per pair: begin, end */
    long cap;        /* pairs whose events exist */
    long n;          /* pairs begun since the last take */
    int open;        /* the last pair has a begin and no end yet */
    int overflow;
};

static int grow(gpu_spans *s, long pairs)
{
    if (pairs <= s->cap)
        return 0;
    if (pairs > GPU_SPANS_MAX)
        pairs = GPU_SPANS_MAX;
    cudaEvent_t *ev = (cudaEvent_t *)realloc(s->ev, (size_t)pairs * 2 * sizeof *ev);
    if (!ev)
        return (int)cudaErrorMemoryAllocation;
    s->ev = ev;
    for (; s->cap < pairs; s->cap++) {
        cudaError_t e = cudaEventCreate(&s->ev[2 * s->cap]);
        if (e != cudaSuccess)
            return (int)e;
        e = cudaEventCreate(&s->ev[2 * s->cap + 1]);
        if (e != cudaSuccess) {
            cudaEventDestroy(s->ev[2 * s->cap]);
            return (int)e;
        }
    }
    return 0;
}

extern "C" gpu_spans *gpu_spans_create(long reserve, int *rc)
{
    gpu_spans *s = (gpu_spans *)calloc(1, sizeof *s);
    *rc = s ? grow(s, reserve < 1 ? 1 : reserve) : (int)cudaErrorMemoryAllocation;
    if (*rc) {
        gpu_spans_destroy(s);
        return NULL;
    }
    return s;
}

extern "C" void gpu_spans_destroy(gpu_spans *s)
{
    if (!s)
        return;
    for (long i = 0; i < 2 * s->cap; i++)
        cudaEventDestroy(s->ev[i]);
    free(s->ev);
    free(s);
}

extern "C" int gpu_spans_begin(gpu_spans *s, void *stream)
{
    if (!s) /* spans switched off (the study's spans=0): nothing recorded */
        return 0;
    if (s->open) /* a begin without an end (a failed step): that pair is abandoned, its begin reused */
        s->n--, s->open = 0;
    if (s->n >= GPU_SPANS_MAX) {
        s->overflow = 1;
        return 0;
    }
    if (s->n >= s->cap) { /* more than reserved: create more (a few microseconds each), doubling */
        int rc = grow(s, 2 * s->cap);
        if (rc)
            return rc;
    }
    cudaError_t e = cudaEventRecord(s->ev[2 * s->n], (cudaStream_t)stream);
    if (e != cudaSuccess)
        return (int)e;
    s->n++;
    s->open = 1;
    return 0;
}

extern "C" int gpu_spans_end(gpu_spans *s, void *stream)
{
    if (!s || !s->open)
        return 0;
    cudaError_t e = cudaEventRecord(s->ev[2 * (s->n - 1) + 1], (cudaStream_t)stream);
    if (e != cudaSuccess)
        return (int)e;
    s->open = 0;
    return 0;
}

extern "C" void gpu_spans_drop(gpu_spans *s)
{
    if (!s)
        return;
    s->n = 0, s->open = 0, s->overflow = 0;
}

extern "C" void gpu_spans_drop_all(gpu_spans **s, int n)
{
    for (int i = 0; i < n; i++)
        gpu_spans_drop(s[i]);
}

extern "C" void gpu_spans_destroy_all(gpu_spans **s, int n)
{
    for (int i = 0; i < n; i++) {
        gpu_spans_destroy(s[i]);
        s[i] = NULL;
    }
}

extern "C" int gpu_spans_take(gpu_spans *s, double *ms)
{
    *ms = NAN;
    if (!s)
        return -1;
    int bad = s->overflow || s->open;
    long n = s->n;
    gpu_spans_drop(s);
    if (bad)
        return -1;
    double sum = 0;
    if (n > 0) {
        cudaError_t e = cudaEventSynchronize(s->ev[2 * (n - 1) + 1]);
        if (e != cudaSuccess)
            return (int)e;
    }
    for (long i = 0; i < n; i++) {
        float t = 0.0f;
        cudaError_t e = cudaEventElapsedTime(&t, s->ev[2 * i], s->ev[2 * i + 1]);
        if (e == cudaErrorNotReady) { /* a pair on another stream than the last one: wait for it too */
            (void)cudaGetLastError();
            e = cudaEventSynchronize(s->ev[2 * i + 1]);
            if (e == cudaSuccess)
                e = cudaEventElapsedTime(&t, s->ev[2 * i], s->ev[2 * i + 1]);
        }
        if (e != cudaSuccess)
            return (int)e;
        sum += t;
    }
    *ms = sum;
    return 0;
}

struct gpu_marks {
    cudaEvent_t ev[GPU_MARKS_MAX + 1];
    int n, every;
    long steps;
    int sampled;   /* the step in progress records its marks */
    int complete;  /* the last sampled step recorded all n + 1 */
    int polled;    /* and poll has given it */
};

extern "C" gpu_marks *gpu_marks_create(int n, int every, int *rc)
{
    gpu_marks *m = (gpu_marks *)calloc(1, sizeof *m);
    if (!m || n < 1 || n > GPU_MARKS_MAX) {
        free(m);
        *rc = (int)(m ? cudaErrorInvalidValue : cudaErrorMemoryAllocation);
        return NULL;
    }
    m->n = n, m->every = every < 1 ? 1 : every;
    for (int i = 0; i <= n; i++) {
        cudaError_t e = cudaEventCreate(&m->ev[i]);
        if (e != cudaSuccess) {
            gpu_marks_destroy(m);
            *rc = (int)e;
            return NULL;
        }
    }
    *rc = 0;
    return m;
}

extern "C" void gpu_marks_destroy(gpu_marks *m)
{
    if (!m)
        return;
    for (int i = 0; i <= m->n; i++)
        if (m->ev[i])
            cudaEventDestroy(m->ev[i]);
    free(m);
}

extern "C" int gpu_marks_mark(gpu_marks *m, int i, void *stream)
{
    if (i == 0)
        m->sampled = m->steps++ % m->every == 0;
    if (!m->sampled || i < 0 || i > m->n)
        return 0;
    if (i == 0) /* the events are about to be overwritten: no complete sample until this one ends */
        m->complete = 0;
    cudaError_t e = cudaEventRecord(m->ev[i], (cudaStream_t)stream);
    if (e != cudaSuccess)
        return (int)e;
    if (i == m->n)
        m->complete = 1, m->polled = 0;
    return 0;
}

static int read_ms(gpu_marks *m, double *ms)
{
    for (int i = 0; i < m->n; i++) {
        float t = 0.0f;
        cudaError_t e = cudaEventElapsedTime(&t, m->ev[i], m->ev[i + 1]);
        if (e != cudaSuccess)
            return (int)e;
        ms[i] = t;
    }
    return 0;
}

extern "C" int gpu_marks_poll(gpu_marks *m, double *ms)
{
    if (!m->complete || m->polled)
        return 0;
    cudaError_t e = cudaEventQuery(m->ev[m->n]);
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError(); /* so that a later launch check does not read "not ready" */
        return 0;
    }
    if (e != cudaSuccess)
        return (int)e;
    int rc = read_ms(m, ms);
    if (rc)
        return rc;
    m->polled = 1;
    return 1;
}

extern "C" int gpu_marks_last(gpu_marks *m, double *ms)
{
    for (int i = 0; i < m->n; i++)
        ms[i] = NAN;
    if (!m->complete)
        return -1;
    cudaError_t e = cudaEventSynchronize(m->ev[m->n]);
    if (e != cudaSuccess)
        return (int)e;
    return read_ms(m, ms);
}

extern "C" const char *gpu_timing_error(int rc)
{
    if (rc == -1)
        return "no complete measurement (a span left open, the log overflowed, or no sampled step)";
    return cudaGetErrorString((cudaError_t)rc);
}
