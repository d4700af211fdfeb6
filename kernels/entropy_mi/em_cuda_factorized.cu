/*
 * entropy_mi, cuda_factorized: factorized on the GPU. sum_ij (p_i q_j)^2 = (sum_i p_i^2)(sum_j q_j^2),
 * and sum_i p_i^2 = sum_i e_i^2 / (sum_i e_i)^2 with e_i = exp(x_i - max x), so a row needs its max and
 * two sums: O(D) work, memory-bound. One warp per row (8 rows per 256-thread block): lanes read
 * consecutive floats (coalesced), the reductions are warp shuffles with no shared memory and no block
 * barrier. Writes the same per-row results as em_cuda.cu's kernel (sum p^2 and sum p^2 * sum q^2), so
 * the device sums and copy-out are shared.
 */
#include <cuda_runtime.h>

#include "em_cuda_impl.h"

#define EM_WARP 32

__device__ static float em_warp_sum(float v)
{
    for (int o = EM_WARP / 2; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ static float em_warp_max(float v)
{
    for (int o = EM_WARP / 2; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* sum_i p_i^2 of the softmax of row x, every lane of the warp taking D / 32 of its elements. */
__device__ static float em_warp_sum_sq_softmax(const float *x, long D, int lane)
{
    float m = -INFINITY;
    for (long i = lane; i < D; i += EM_WARP)
        m = fmaxf(m, x[i]);
    m = em_warp_max(m);
    float s = 0.0f, s2 = 0.0f;
    for (long i = lane; i < D; i += EM_WARP) {
        const float e = expf(x[i] - m);
        s += e;
        s2 += e * e;
    }
    s = em_warp_sum(s);
    s2 = em_warp_sum(s2);
    return s2 / (s * s);
}

__global__ static void em_factorized_kernel(const float *X, const float *Y, long B, long D, float *h, float *mi)
{
    const long b = (long)blockIdx.x * (blockDim.x / EM_WARP) + threadIdx.x / EM_WARP;
    const int lane = threadIdx.x % EM_WARP;
    if (b >= B) /* the whole warp leaves: the shuffles below see full warps only */
        return;
    const float sp = em_warp_sum_sq_softmax(X + b * D, D, lane);
    const float sq = em_warp_sum_sq_softmax(Y + b * D, D, lane);
    if (lane == 0) {
        h[b] = sp;
        mi[b] = sp * sq;
    }
}

extern "C" int em_cuda_compute_factorized(em_cuda_ctx *c)
{
    const long rows_per_block = EM_THREADS / EM_WARP;
    const unsigned blocks = (unsigned)((c->B + rows_per_block - 1) / rows_per_block);
    em_factorized_kernel<<<blocks, EM_THREADS>>>(c->dX, c->dY, c->B, c->D, c->dh, c->dmi);
    if (cudaGetLastError() != cudaSuccess)
        return -1;
    return em_cuda_launch_sums(c);
}
