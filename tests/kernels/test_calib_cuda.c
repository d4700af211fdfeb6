/*
 * tests/kernels/test_calib_cuda.c: the device work behind the GPU ceilings (kernels/calib/calib_cuda.h)
 * computes what it claims to, so the ceilings time real work:
 *   - fill and triad: every element of a 20 Mi-element array (more than the 65536-block grid covers
 *     in one pass, so the grid-stride loop runs) and of an odd length;
 *   - the copies the calibration times: bytes of an odd length, host -> device (pageable) -> device ->
 *     host (pinned), equal to the source byte for byte;
 *   - the FMA chains: every thread's sum exactly (a = b = 1: start + iters per chain) and, with a = 0.5,
 *     b = 1, against the same fmaf chains on the CPU; the flop count;
 *   - sgemm and the FP16 and BF16 tensor-core GEMMs (FP32 accumulation) against a CPU product, at n = 256
 *     and n = 100, on inputs that every precision holds exactly (multiples of 1/8 in [-1, 1]), so every
 *     product and partial sum is exact in FP32 and the result must match to the last bit.
 * Plain main, meson's exitcode protocol: 0 pass, 1 fail, 77 skip (no CUDA device).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "calib/calib_cuda.h"

static int failures;

#define CHECK(cond, ...)                                                                                   \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                           \
            fprintf(stderr, __VA_ARGS__);                                                                  \
            fprintf(stderr, "\n");                                                                         \
            failures++;                                                                                    \
        }                                                                                                  \
    } while (0)

#define CUDA_OK(call) CHECK((call) == cudaSuccess, "%s: %s", #call, cudaGetErrorString(cudaGetLastError()))

static void test_triad(size_t n)
{
    double *a, *b, *c, *h = malloc(n * sizeof *h);
    CUDA_OK(cudaMalloc((void **)&a, n * sizeof *a));
    CUDA_OK(cudaMalloc((void **)&b, n * sizeof *b));
    CUDA_OK(cudaMalloc((void **)&c, n * sizeof *c));
    CHECK(sl_gpu_fill(a, -1.0, n, NULL) == 0, "fill a");
    CHECK(sl_gpu_fill(b, 1.0, n, NULL) == 0, "fill b");
    CHECK(sl_gpu_fill(c, 2.0, n, NULL) == 0, "fill c");
    CHECK(sl_gpu_triad(a, b, c, 3.0, n, NULL) == 0, "triad");
    CUDA_OK(cudaMemcpy(h, a, n * sizeof *h, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += h[i] != 7.0;
    CHECK(bad == 0, "triad n=%zu: %zu elements are not 1 + 3 * 2 (a[0] = %g, a[n-1] = %g)", n, bad, h[0], h[n - 1]);
    /* b = a + 0.5 c = 8, from the triad's own output */
    CHECK(sl_gpu_triad(b, a, c, 0.5, n, NULL) == 0, "triad 2");
    CUDA_OK(cudaMemcpy(h, b, n * sizeof *h, cudaMemcpyDeviceToHost));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += h[i] != 8.0;
    CHECK(bad == 0, "second triad n=%zu: %zu elements are not 7 + 0.5 * 2", n, bad);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    free(h);
}

static void test_copies(void)
{
    const size_t bytes = ((size_t)64 << 20) + 3;
    unsigned char *src = malloc(bytes), *pinned, *d1, *d2;
    uint32_t x = 12345;
    for (size_t i = 0; i < bytes; i++) {
        x = x * 1664525u + 1013904223u;
        src[i] = (unsigned char)(x >> 24);
    }
    CUDA_OK(cudaMallocHost((void **)&pinned, bytes));
    CUDA_OK(cudaMalloc((void **)&d1, bytes));
    CUDA_OK(cudaMalloc((void **)&d2, bytes));
    memset(pinned, 0, bytes);
    CUDA_OK(cudaMemcpy(d1, src, bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d2, d1, bytes, cudaMemcpyDeviceToDevice));
    CUDA_OK(cudaMemcpy(pinned, d2, bytes, cudaMemcpyDeviceToHost));
    CHECK(memcmp(src, pinned, bytes) == 0, "pageable -> device -> device -> pinned changed the bytes");
    cudaFree(d1);
    cudaFree(d2);
    cudaFreeHost(pinned);
    free(src);
}

static void test_fma(void)
{
    const int blocks = 7, iters = 65536;
    const size_t n = (size_t)blocks * SL_GPU_FMA_THREADS;
    float *d, *h = malloc(n * sizeof *h);
    CUDA_OK(cudaMalloc((void **)&d, n * sizeof *d));
    CHECK(sl_gpu_fma(d, blocks, iters, 1.0f, 1.0f, NULL) == 0, "fma launch");
    CUDA_OK(cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t t = 0; t < n; t++) {
        double want = 0;
        for (int j = 0; j < SL_GPU_FMA_CHAINS; j++)
            want += (double)(j + (int)(t % 4) + iters);
        bad += h[t] != (float)want;
    }
    CHECK(bad == 0, "FMA chains with a = b = 1: %zu of %zu threads wrong (out[0] = %.1f)", bad, n, h[0]);
    /* a contraction: the same fmaf chains on the CPU, in the same order */
    CHECK(sl_gpu_fma(d, blocks, 100, 0.5f, 1.0f, NULL) == 0, "fma launch 2");
    CUDA_OK(cudaMemcpy(h, d, n * sizeof *h, cudaMemcpyDeviceToHost));
    bad = 0;
    for (size_t t = 0; t < n; t++) {
        float sum = 0;
        for (int j = 0; j < SL_GPU_FMA_CHAINS; j++) {
            float x = (float)(j + (int)(t % 4));
            for (int i = 0; i < 100; i++)
                x = fmaf(x, 0.5f, 1.0f);
            sum += x;
        }
        bad += fabsf(h[t] - sum) > 1e-6f * fabsf(sum);
    }
    CHECK(bad == 0, "FMA chains with a = 0.5, b = 1: %zu threads differ from the CPU's", bad);
    CHECK(sl_gpu_fma_flops(blocks, iters) == 2.0 * SL_GPU_FMA_CHAINS * SL_GPU_FMA_THREADS * blocks * (double)iters,
          "flop count");
    cudaFree(d);
    free(h);
}

/* Exact conversions of values with few significant bits (the test's inputs) to FP16 and BF16 bits. */
static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

static uint16_t to_fp16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) == 0)
        return (uint16_t)(u >> 16);
    uint32_t sign = (u >> 16) & 0x8000u, e = ((u >> 23) & 0xff) - 127 + 15, m = (u >> 13) & 0x3ffu;
    return (uint16_t)(sign | e << 10 | m);
}

static void test_gemm(cublasHandle_t h, int prec, int n)
{
    static const char *names[] = {"sgemm", "FP16 GemmEx", "BF16 GemmEx"};
    size_t nn = (size_t)n * n, esz = sl_gpu_gemm_elem(prec);
    float *A = malloc(nn * sizeof *A), *B = malloc(nn * sizeof *B), *C = malloc(nn * sizeof *C), *dC;
    unsigned char *hA = malloc(nn * esz), *hB = malloc(nn * esz);
    void *dA, *dB;
    for (size_t i = 0; i < nn; i++) {
        A[i] = (float)((int)(i * 7 % 17) - 8) / 8.0f;
        B[i] = (float)((int)(i * 5 % 13) - 6) / 8.0f;
        if (prec == SL_GEMM_FP32) {
            memcpy(hA + 4 * i, &A[i], 4);
            memcpy(hB + 4 * i, &B[i], 4);
        } else {
            uint16_t a = prec == SL_GEMM_FP16 ? to_fp16(A[i]) : to_bf16(A[i]);
            uint16_t b = prec == SL_GEMM_FP16 ? to_fp16(B[i]) : to_bf16(B[i]);
            memcpy(hA + 2 * i, &a, 2);
            memcpy(hB + 2 * i, &b, 2);
        }
    }
    CUDA_OK(cudaMalloc(&dA, nn * esz));
    CUDA_OK(cudaMalloc(&dB, nn * esz));
    CUDA_OK(cudaMalloc((void **)&dC, nn * sizeof *dC));
    CUDA_OK(cudaMemcpy(dA, hA, nn * esz, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dB, hB, nn * esz, cudaMemcpyHostToDevice));
    int rc = sl_gpu_gemm(h, prec, n, dA, dB, dC);
    CHECK(rc == 0, "%s n=%d: cuBLAS status %d", names[prec], n, rc);
    CUDA_OK(cudaMemcpy(C, dC, nn * sizeof *C, cudaMemcpyDeviceToHost));
    size_t bad = 0;
    double worst = 0;
    for (int j = 0; j < n; j++) /* column-major: C(i, j) = sum_k A(i, k) B(k, j) */
        for (int i = 0; i < n; i++) {
            double ref = 0;
            for (int k = 0; k < n; k++)
                ref += (double)A[(size_t)k * n + i] * B[(size_t)j * n + k];
            double d = fabs(C[(size_t)j * n + i] - ref);
            worst = d > worst ? d : worst;
            bad += d != 0;
        }
    CHECK(bad == 0, "%s n=%d: %zu of %zu elements differ from the CPU product (worst by %g)", names[prec], n, bad,
          nn, worst);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dC);
    free(A);
    free(B);
    free(C);
    free(hA);
    free(hB);
}

int main(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        fprintf(stderr, "no CUDA device: skipping\n");
        return 77;
    }
    test_triad((size_t)20 << 20);
    test_triad(1001);
    test_copies();
    test_fma();
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        CHECK(0, "cublasCreate failed");
    } else {
        for (int prec = SL_GEMM_FP32; prec <= SL_GEMM_BF16; prec++) {
            test_gemm(h, prec, 256);
            test_gemm(h, prec, 100);
        }
        cublasDestroy(h);
    }
    if (failures)
        fprintf(stderr, "%d checks failed\n", failures);
    else
        printf("calibration kernels: triad, copies, FMA chains, sgemm, FP16 and BF16 GEMMs all match\n");
    return failures ? 1 : 0;
}
