/*
 * kernels/gpu/gpu_gemm.cuh: the tiled SGEMM with fused epilogues (256 threads, k-slices of GPU_TK in
 * shared memory), shared by mlp_cuda.cu (cuda variant) and cnn_cuda_own.cu; moved here verbatim from
 * kernels/mlp/mlp_cuda.cu so both studies run the same code.
 *
 * Every kernel is `static` (internal linkage): each .cu that includes this header gets its own copy, so
 * no symbol is defined twice and the linker never merges two files' instances of one template.
 * `__attribute__((unused))` keeps nvcc quiet in a file (or a build configuration) that launches fewer.
 * Only the files that launch these kernels include this header: the compiler emits every static
 * kernel it sees, launched or not.
 */
#ifndef SL_KERNELS_GPU_GPU_GEMM_CUH
#define SL_KERNELS_GPU_GPU_GEMM_CUH

#include <cuda_runtime.h>

#define GPU_TK 16 /* SGEMM k-slice (tiles: 16 RM x 16 RN) */
#define GPU_GEMM_THREADS 256

enum { EPI_STORE = 0, EPI_BIAS = 1, EPI_BIAS_RELU = 2, EPI_MASK = 3 };

/* C (M x N, row-major) = op(A) op(B) with the epilogue EPI. op(A) is M x K: A stored M x K, or K x M
 * when TA. op(B) is K x N: B stored K x N, or N x K when TB. aux: the bias (n = N) or the mask (M x N). */
template <int RM, int RN, bool TA, bool TB, int EPI>
static __global__ void __launch_bounds__(GPU_GEMM_THREADS)
k_gpu_gemm(int M, int N, int K, const float *__restrict__ A, const float *__restrict__ Bm, float *__restrict__ C,
           const float *__restrict__ aux)
{
    constexpr int TM = 16 * RM, TN = 16 * RN; /* the block's tile */
    __shared__ float As[GPU_TK][TM + 4];
    __shared__ float Bs[GPU_TK][TN + 4];
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN;
    float acc[RM][RN] = {};

    for (int k0 = 0; k0 < K; k0 += GPU_TK) {
        /* loads: consecutive threads walk the dimension that is contiguous in memory */
#pragma unroll
        for (int i = tid; i < TM * GPU_TK; i += GPU_GEMM_THREADS) {
            int m = TA ? i % TM : i / GPU_TK, k = TA ? i / TM : i % GPU_TK;
            int gm = m0 + m, gk = k0 + k;
            float v = 0.0f;
            if (gm < M && gk < K)
                v = TA ? A[(size_t)gk * M + gm] : A[(size_t)gm * K + gk];
            As[k][m] = v;
        }
#pragma unroll
        for (int i = tid; i < TN * GPU_TK; i += GPU_GEMM_THREADS) {
            int n = TB ? i / GPU_TK : i % TN, k = TB ? i % GPU_TK : i / TN;
            int gn = n0 + n, gk = k0 + k;
            float v = 0.0f;
            if (gn < N && gk < K)
                v = TB ? Bm[(size_t)gn * K + gk] : Bm[(size_t)gk * N + gn];
            Bs[k][n] = v;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < GPU_TK; k++) {
            float a[RM], b[RN];
#pragma unroll
            for (int i = 0; i < RM; i++)
                a[i] = As[k][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < RN; j++)
                b[j] = Bs[k][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < RM; i++)
#pragma unroll
                for (int j = 0; j < RN; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < RM; i++) {
        int gm = m0 + ty + 16 * i;
        if (gm >= M)
            continue;
#pragma unroll
        for (int j = 0; j < RN; j++) {
            int gn = n0 + tx + 16 * j;
            if (gn >= N)
                continue;
            float v = acc[i][j];
            if (EPI == EPI_BIAS || EPI == EPI_BIAS_RELU)
                v += aux[gn];
            if (EPI == EPI_BIAS_RELU)
                v = v < 0.0f ? 0.0f : v;
            if (EPI == EPI_MASK)
                v = aux[(size_t)gm * N + gn] > 0.0f ? v : 0.0f;
            C[(size_t)gm * N + gn] = v;
        }
    }
}

#endif
