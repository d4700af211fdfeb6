/*
 * calibrate_gpu.c: the GPU's ceilings (ceilings.gpu of docs/results-schema.md): device memory bandwidth
 * (STREAM triad kernel, device-to-device copy), FP32 FMA peak, cuBLAS sgemm, tensor-core GEMM at FP16 and
 * BF16 (FP32 accumulation), host-device copies pageable and pinned. The device work is kernels/calib/
 * calib_cuda.cu's. Each figure: a warm-up, then the median of several repetitions timed by CUDA events
 * on the device (GPU times are steady: the median says what the device does, without a lucky outlier).
 * Each is validated before it is timed; a figure that could not be measured is absent from the object
 * and its reason is in `missing`, never a zero. Sized for an H100/H200: by datasheet rates, about 2 s
 * of copies and device work in all (the pageable copies the most), plus the runtime's start-up.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "gpu.h"
#include "sl_config.h"

#if !SL_HAVE_CUDA

json_t *sl_calibrate_gpu(char *why, size_t n)
{
    sl_gpu_available(why, n); /* "built without CUDA" */
    return NULL;
}

#else

#include <cuda_runtime.h>
#if SL_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

#include "calib/calib_cuda.h"

#define STREAM_N ((size_t)64 << 20) /* triad: 3 arrays of 64 Mi doubles, 512 MiB each: 10x an H200's L2 */
#define COPY_BYTES ((size_t)256 << 20) /* host-device copies: 256 MiB, past any cache on either side */
#define FMA_ITERS 65536              /* ~4 ms a launch at an H200's 67 TFLOP/s */
#define GEMM_N 8192                  /* 1.1 TFLOP a GEMM: 20 ms of sgemm, ~2 ms on tensor cores */
#define MAX_REPS 32

/* One repetition of the work being timed, enqueued on the default stream: 0 or an error code. */
typedef int (*gpu_op)(void *arg);

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median time of `reps` runs of op (after `warmup` untimed ones), in seconds, each between two
 * events on the default stream; 0, or an error code with why filled. */
static int median_s(gpu_op op, void *arg, int warmup, int reps, double *sec, char *why, size_t n)
{
    cudaEvent_t ev[MAX_REPS + 1];
    double t[MAX_REPS];
    int rc = 0, made = 0;
    for (; made <= reps && rc == 0; made++)
        rc = (int)cudaEventCreate(&ev[made]);
    for (int i = 0; i < warmup && rc == 0; i++)
        rc = op(arg);
    /* back to back: each rep's end event is the next one's start, so nothing is left out or counted twice */
    if (rc == 0)
        rc = (int)cudaEventRecord(ev[0], 0);
    for (int r = 0; r < reps && rc == 0; r++)
        if ((rc = op(arg)) == 0)
            rc = (int)cudaEventRecord(ev[r + 1], 0);
    if (rc == 0)
        rc = (int)cudaEventSynchronize(ev[reps]);
    for (int r = 0; r < reps && rc == 0; r++) {
        float ms = 0;
        rc = (int)cudaEventElapsedTime(&ms, ev[r], ev[r + 1]);
        t[r] = ms * 1e-3;
    }
    for (int i = 0; i < made; i++)
        cudaEventDestroy(ev[i]);
    if (rc != 0) {
        /* rc is a cudaError_t, or a cublasStatus_t from a GEMM: say both what it was and CUDA's last error */
        snprintf(why, n, "a timed repetition failed with status %d (last CUDA error: %s)", rc,
                 cudaGetErrorString(cudaGetLastError()));
        return rc;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    *sec = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    return 0;
}

/* Sets gpu[key] = units / median time, or missing[key] = why; prints the figure. */
static void put_rate(json_t *gpu, json_t *missing, const char *key, const char *label, double units,
                     const char *unit, gpu_op op, void *arg, int warmup, int reps)
{
    char why[200] = "";
    double sec = 0;
    if (median_s(op, arg, warmup, reps, &sec, why, sizeof why) != 0 || !(sec > 0)) {
        if (!why[0])
            snprintf(why, sizeof why, "the median repetition took no measurable time");
        json_object_set_new(missing, key, json_string(why));
        printf("calibrate: GPU %s: not measured: %s\n", label, why);
        return;
    }
    json_object_set_new(gpu, key, json_real(units / sec / 1e9));
    printf("calibrate: GPU %s %.0f %s\n", label, units / sec / 1e9, unit);
    fflush(stdout);
}

static void put_missing(json_t *missing, const char *key, const char *label, const char *why)
{
    json_object_set_new(missing, key, json_string(why));
    printf("calibrate: GPU %s: not measured: %s\n", label, why);
}

/* ---- the operations ---------------------------------------------------------------------------- */
typedef struct {
    double *a, *b, *c;
} triad_arg;
static int op_triad(void *p)
{
    triad_arg *t = p;
    return sl_gpu_triad(t->a, t->b, t->c, 3.0, STREAM_N, NULL);
}

typedef struct {
    void *dst;
    const void *src;
    size_t bytes;
    enum cudaMemcpyKind kind;
} copy_arg;
static int op_copy(void *p)
{
    copy_arg *c = p;
    /* cudaMemcpy, not Async: a pageable copy is staged through the driver's pinned buffer either way,
     * and this is how a study's pageable rows copy */
    return (int)cudaMemcpy(c->dst, c->src, c->bytes, c->kind);
}

typedef struct {
    float *out;
    int blocks;
} fma_arg;
static int op_fma(void *p)
{
    fma_arg *f = p;
    return sl_gpu_fma(f->out, f->blocks, FMA_ITERS, 1.0f, 1.0f, NULL);
}

/* Whether p[i] (a device pointer) equals want. */
static int device_equals(const double *p, size_t i, double want)
{
    double got = 0;
    return cudaMemcpy(&got, p + i, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess && got == want;
}

/* Device bandwidth: the triad kernel (checked first: a[i] = 1 + 3 * 2 = 7 at both ends and the middle)
 * and a device-to-device copy of one array (counted as read + write, as STREAM's copy). */
static void device_bandwidth(json_t *gpu, json_t *missing)
{
    size_t bytes = STREAM_N * sizeof(double);
    triad_arg t = {0};
    if (cudaMalloc((void **)&t.a, bytes) != cudaSuccess || cudaMalloc((void **)&t.b, bytes) != cudaSuccess ||
        cudaMalloc((void **)&t.c, bytes) != cudaSuccess) {
        cudaGetLastError();
        put_missing(missing, "triad_gbs", "triad", "cannot allocate 3 x 512 MiB on the device");
        put_missing(missing, "d2d_gbs", "device copy", "cannot allocate 3 x 512 MiB on the device");
        goto out;
    }
    sl_gpu_fill(t.b, 1.0, STREAM_N, NULL);
    sl_gpu_fill(t.c, 2.0, STREAM_N, NULL);
    sl_gpu_fill(t.a, 0.0, STREAM_N, NULL);
    op_triad(&t);
    if (!device_equals(t.a, 0, 7.0) || !device_equals(t.a, STREAM_N / 2, 7.0) ||
        !device_equals(t.a, STREAM_N - 1, 7.0))
        put_missing(missing, "triad_gbs", "triad", "the triad kernel's result is wrong (a[i] != 7)");
    else
        put_rate(gpu, missing, "triad_gbs", "triad (3 x 512 MiB)", 3.0 * (double)bytes, "GB/s", op_triad, &t, 1, 20);
    copy_arg c = {t.c, t.a, bytes, cudaMemcpyDeviceToDevice};
    put_rate(gpu, missing, "d2d_gbs", "device-to-device copy (512 MiB, read + write)", 2.0 * (double)bytes, "GB/s",
             op_copy, &c, 1, 20);
out:
    cudaFree(t.a);
    cudaFree(t.b);
    cudaFree(t.c);
}

/* FP32 FMA peak: every SM filled to its thread limit with 256-thread blocks of eight chains; the chain's
 * arithmetic checked first (a = b = 1: each chain ends at its start + FMA_ITERS, exactly). */
static void fma_peak(json_t *gpu, json_t *missing, const struct cudaDeviceProp *p)
{
    int per_sm = p->maxThreadsPerMultiProcessor / SL_GPU_FMA_THREADS;
    fma_arg f = {NULL, p->multiProcessorCount * (per_sm > 0 ? per_sm : 1)};
    float got[4] = {0};
    size_t n = (size_t)f.blocks * SL_GPU_FMA_THREADS;
    if (cudaMalloc((void **)&f.out, n * sizeof(float)) != cudaSuccess) {
        cudaGetLastError();
        put_missing(missing, "fma_gflops", "FP32 FMA", "cannot allocate its output on the device");
        return;
    }
    int ok = op_fma(&f) == 0 && cudaMemcpy(got, f.out, sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess;
    for (int t = 0; t < 4 && ok; t++) { /* sum over chains j of (j + t + iters) */
        double want = SL_GPU_FMA_CHAINS * (SL_GPU_FMA_CHAINS - 1) / 2.0 + SL_GPU_FMA_CHAINS * (double)(t + FMA_ITERS);
        ok = got[t] == (float)want;
    }
    if (!ok)
        put_missing(missing, "fma_gflops", "FP32 FMA", "the FMA chains' result is wrong");
    else
        put_rate(gpu, missing, "fma_gflops", "FP32 FMA", sl_gpu_fma_flops(f.blocks, FMA_ITERS), "GFLOP/s", op_fma,
                 &f, 1, 10);
    cudaFree(f.out);
}

/* Host-device copies of 256 MiB from and to pageable (malloc) and pinned (cudaMallocHost) memory. */
static void host_copies(json_t *gpu, json_t *missing)
{
    static const char *keys[] = {"h2d_pageable_gbs", "h2d_pinned_gbs", "d2h_pageable_gbs", "d2h_pinned_gbs"};
    static const char *labels[] = {"host-to-device pageable", "host-to-device pinned", "device-to-host pageable",
                                   "device-to-host pinned"};
    void *dev = NULL, *pinned = NULL, *pageable = malloc(COPY_BYTES);
    if (!pageable || cudaMalloc(&dev, COPY_BYTES) != cudaSuccess || cudaMallocHost(&pinned, COPY_BYTES) != cudaSuccess) {
        cudaGetLastError();
        for (int i = 0; i < 4; i++)
            put_missing(missing, keys[i], labels[i], "cannot allocate 256 MiB on the host (pageable and pinned) "
                                                     "and on the device");
        goto out;
    }
    memset(pageable, 1, COPY_BYTES); /* touched: the copy measures the transfer, not page faults */
    memset(pinned, 1, COPY_BYTES);
    copy_arg c[4] = {{dev, pageable, COPY_BYTES, cudaMemcpyHostToDevice},
                     {dev, pinned, COPY_BYTES, cudaMemcpyHostToDevice},
                     {pageable, dev, COPY_BYTES, cudaMemcpyDeviceToHost},
                     {pinned, dev, COPY_BYTES, cudaMemcpyDeviceToHost}};
    for (int i = 0; i < 4; i++) {
        char label[96];
        snprintf(label, sizeof label, "%s (256 MiB)", labels[i]);
        put_rate(gpu, missing, keys[i], label, (double)COPY_BYTES, "GB/s", op_copy, &c[i], 1, 10);
    }
out:
    free(pageable);
    cudaFree(dev);
    cudaFreeHost(pinned);
}

#if SL_HAVE_CUBLAS
typedef struct {
    cublasHandle_t h;
    int prec;
    void *A, *B;
    float *C;
} gemm_arg;
static int op_gemm(void *p)
{
    gemm_arg *g = p;
    return sl_gpu_gemm(g->h, g->prec, GEMM_N, g->A, g->B, g->C);
}

/* The value of every input element (bytes 0x3c: not zero, as all-zero data draws less power and can
 * clock higher): 0x3c3c3c3c as a float, 0x3c3c as a half (1 + 60/1024) and as a bfloat16. */
static double input_value(int prec)
{
    uint32_t bits = prec == SL_GEMM_FP32 ? 0x3c3c3c3cu : 0x3c3c0000u;
    float f;
    memcpy(&f, &bits, sizeof f);
    return prec == SL_GEMM_FP16 ? 1.0 + 60.0 / 1024.0 : (double)f;
}

/* cuBLAS sgemm and the tensor-core GEMMs at n = GEMM_N, each checked first: every C element is
 * n v^2 (within FP32 accumulation's rounding), read at both corners. */
static void gemms(json_t *gpu, json_t *missing)
{
    static const char *keys[] = {"cublas_sgemm_gflops", "tc_fp16_gflops", "tc_bf16_gflops"};
    static const char *labels[] = {"cuBLAS sgemm", "tensor-core GEMM FP16 (FP32 accumulation)",
                                   "tensor-core GEMM BF16 (FP32 accumulation)"};
    size_t nn = (size_t)GEMM_N * GEMM_N;
    gemm_arg g = {0};
    if (cublasCreate(&g.h) != CUBLAS_STATUS_SUCCESS) {
        for (int i = 0; i < 3; i++)
            put_missing(missing, keys[i], labels[i], "cuBLAS could not be initialised");
        return;
    }
    if (cudaMalloc(&g.A, nn * 4) != cudaSuccess || cudaMalloc(&g.B, nn * 4) != cudaSuccess ||
        cudaMalloc((void **)&g.C, nn * 4) != cudaSuccess) {
        cudaGetLastError();
        for (int i = 0; i < 3; i++)
            put_missing(missing, keys[i], labels[i], "cannot allocate 3 x 256 MiB on the device");
        goto out;
    }
    cudaMemset(g.A, 0x3c, nn * 4);
    cudaMemset(g.B, 0x3c, nn * 4);
    for (g.prec = SL_GEMM_FP32; g.prec <= SL_GEMM_BF16; g.prec++) {
        char why[128];
        double v = input_value(g.prec), want = GEMM_N * v * v;
        float got[2] = {NAN, NAN};
        cudaMemset(g.C, 0, nn * 4);
        int rc = op_gemm(&g);
        if (rc == 0) {
            cudaMemcpy(&got[0], g.C, 4, cudaMemcpyDeviceToHost);
            cudaMemcpy(&got[1], g.C + nn - 1, 4, cudaMemcpyDeviceToHost);
        }
        if (rc != 0)
            snprintf(why, sizeof why, "cuBLAS: %s", cublasGetStatusString((cublasStatus_t)rc));
        else if (!(fabs(got[0] - want) <= 1e-3 * want && fabs(got[1] - want) <= 1e-3 * want))
            snprintf(why, sizeof why, "the GEMM's result is wrong (C[0] = %g, want %g)", got[0], want);
        else
            why[0] = 0;
        if (why[0])
            put_missing(missing, keys[g.prec], labels[g.prec], why);
        else /* the check was the warm-up: cuBLAS has picked and loaded its kernel */
            put_rate(gpu, missing, keys[g.prec], labels[g.prec], 2.0 * GEMM_N * (double)GEMM_N * GEMM_N, "GFLOP/s",
                     op_gemm, &g, 0, g.prec == SL_GEMM_FP32 ? 5 : 10);
    }
out:
    cudaFree(g.A);
    cudaFree(g.B);
    cudaFree(g.C);
    cublasDestroy(g.h);
}
#endif

json_t *sl_calibrate_gpu(char *why, size_t n)
{
    struct cudaDeviceProp p;
    int dev = 0;
    if (!sl_gpu_available(why, n))
        return NULL;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
        snprintf(why, n, "cannot read the device's properties: %s", cudaGetErrorString(cudaGetLastError()));
        return NULL;
    }
    json_t *gpu = json_object(), *missing = json_object();
    json_object_set_new(gpu, "name", json_string(p.name));
    json_object_set_new(gpu, "sms", json_integer(p.multiProcessorCount));
    printf("calibrate: GPU %s (%d SMs)\n", p.name, p.multiProcessorCount);
    fflush(stdout);
    device_bandwidth(gpu, missing);
    fma_peak(gpu, missing, &p);
#if SL_HAVE_CUBLAS
    gemms(gpu, missing);
#else
    const char *gk[] = {"cublas_sgemm_gflops", "tc_fp16_gflops", "tc_bf16_gflops"};
    for (int i = 0; i < 3; i++)
        put_missing(missing, gk[i], gk[i], "built without cuBLAS");
#endif
    host_copies(gpu, missing);
    if (json_object_size(missing))
        json_object_set_new(gpu, "missing", missing);
    else
        json_decref(missing);
    cudaGetLastError(); /* leave no sticky error behind */
    return gpu;
}

#endif
