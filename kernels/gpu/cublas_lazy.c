/*
 * kernels/gpu/cublas_lazy.c: the eight cuBLAS functions the suite calls, loaded from libcublas on first
 * use instead of linked. Why: linking libcublas loads libcublasLt at start-up, whose relocated tables
 * made about 150 MB resident in every speedlab process (checked: `speedlab list`'s maxrss 225 MB
 * linked, with cuBLAS 13 on the Zen 5 VM), GPU or not, so every CPU case's peak_rss_bytes carried it and
 * the cnn study's memory figure (its goal: under 200 MiB) measured the toolkit rather than the study.
 * Loaded lazily, only a process that creates a cuBLAS handle pays for it.
 *
 * These definitions have the cublas_api.h prototypes (the compiler checks them) and the library's own
 * names, so the .cu files and experiments/gpu.c call cuBLAS as usual. The library is the major version
 * of the headers built against: SL_CUDA_LIBDIR/libcublas.so.MAJOR, then the soname on the loader's path.
 * If it cannot be loaded, cublasCreate fails (CUBLAS_STATUS_NOT_INITIALIZED) and lazy_error says why; no
 * other function is reachable without a handle. Not a kernel: built once, outside the ISA copies.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include <cublas_v2.h>

#include "sl_config.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define CUBLAS_SONAME "libcublas.so." STR(CUBLAS_VER_MAJOR)

static struct {
    void *lib;
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*set_workspace)(cublasHandle_t, void *, size_t);
    cublasStatus_t (*set_math_mode)(cublasHandle_t, cublasMath_t);
    cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const float *, const float *, int, const float *, int, const float *, float *, int);
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                              const void *, cudaDataType, int, const void *, cudaDataType, int, const void *, void *,
                              cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
    const char *(*status_string)(cublasStatus_t);
} cb;
static char lazy_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *lib = dlopen(SL_CUDA_LIBDIR "/" CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen(CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(lazy_error, sizeof lazy_error, "cannot load %s: %s", CUBLAS_SONAME, dlerror());
        return;
    }
    *(void **)&cb.create = dlsym(lib, "cublasCreate_v2");
    *(void **)&cb.destroy = dlsym(lib, "cublasDestroy_v2");
    *(void **)&cb.set_stream = dlsym(lib, "cublasSetStream_v2");
    *(void **)&cb.set_workspace = dlsym(lib, "cublasSetWorkspace_v2");
    *(void **)&cb.set_math_mode = dlsym(lib, "cublasSetMathMode");
    *(void **)&cb.sgemm = dlsym(lib, "cublasSgemm_v2");
    *(void **)&cb.gemm_ex = dlsym(lib, "cublasGemmEx");
    *(void **)&cb.status_string = dlsym(lib, "cublasGetStatusString");
    if (!cb.create || !cb.destroy || !cb.set_stream || !cb.set_workspace || !cb.set_math_mode || !cb.sgemm ||
        !cb.gemm_ex || !cb.status_string) {
        snprintf(lazy_error, sizeof lazy_error, "%s lacks a cuBLAS function the suite calls", CUBLAS_SONAME);
        dlclose(lib);
        return;
    }
    cb.lib = lib;
}

cublasStatus_t CUBLASWINAPI cublasCreate_v2(cublasHandle_t *handle)
{
    pthread_once(&once, load);
    if (!cb.lib) {
        fprintf(stderr, "speedlab: cuBLAS unavailable: %s\n", lazy_error);
        return CUBLAS_STATUS_NOT_INITIALIZED;
    }
    return cb.create(handle);
}

/* The rest are reached only through a handle, so the library is loaded. */
cublasStatus_t CUBLASWINAPI cublasDestroy_v2(cublasHandle_t handle) { return cb.destroy(handle); }

cublasStatus_t CUBLASWINAPI cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    return cb.set_stream(handle, stream);
}

cublasStatus_t CUBLASWINAPI cublasSetWorkspace_v2(cublasHandle_t handle, void *ws, size_t bytes)
{
    return cb.set_workspace(handle, ws, bytes);
}

cublasStatus_t CUBLASWINAPI cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    return cb.set_math_mode(handle, mode);
}

cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                                           int m, int n, int k, const float *alpha, const float *A, int lda,
                                           const float *B, int ldb, const float *beta, float *C, int ldc)
{
    return cb.sgemm(handle, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* The precision study's GPU rows: 16-bit (or float32) inputs, float32 compute (kernels/precision/prec_cuda.cu). */
cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                                         int n, int k, const void *alpha, const void *A, cudaDataType at, int lda,
                                         const void *B, cudaDataType bt, int ldb, const void *beta, void *C,
                                         cudaDataType ct, int ldc, cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    return cb.gemm_ex(handle, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, compute, algo);
}

/* Called on error paths, possibly before any handle exists. */
const char *CUBLASWINAPI cublasGetStatusString(cublasStatus_t status)
{
    pthread_once(&once, load);
    return cb.lib ? cb.status_string(status) : "cuBLAS not loaded";
}
