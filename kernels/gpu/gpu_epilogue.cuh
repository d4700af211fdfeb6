/*
 * kernels/gpu/gpu_epilogue.cuh: the elementwise epilogues for a library GEMM (+ bias then ReLU, the
 * ReLU' mask), shared by mlp_cuda.cu (cublas variant) and cnn_cudnn.cu; moved here verbatim from
 * kernels/mlp/mlp_cuda.cu so both studies run the same code.
 *
 * Every kernel is `static` (internal linkage): each .cu that includes this header gets its own copy, so
 * no symbol is defined twice and the linker never merges two files' instances of one template.
 * `__attribute__((unused))` keeps nvcc quiet in a file (or a build configuration) that launches fewer.
 * Only the files that launch these kernels include this header: the compiler emits every static
 * kernel it sees, launched or not.
 */
#ifndef SL_KERNELS_GPU_GPU_EPILOGUE_CUH
#define SL_KERNELS_GPU_GPU_EPILOGUE_CUH

#include <cuda_runtime.h>

/* Z[b][j] += bias[j], then ReLU when relu. */
static __global__ __attribute__((unused))
void k_gpu_bias_act(float *Z, const float *bias, int M, int N, int relu)
{
    size_t n = (size_t)M * N;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = Z[i] + bias[i % N];
        Z[i] = relu && v < 0.0f ? 0.0f : v;
    }
}

/* D[i] = A[i] > 0 ? D[i] : 0: the ReLU' mask of the layer whose output is A. */
static __global__ __attribute__((unused))
void k_gpu_mask(float *D, const float *A, size_t n)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        D[i] = A[i] > 0.0f ? D[i] : 0.0f;
}

#endif
