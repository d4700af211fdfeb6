/*
 * avail.c: which variants can run here.
 * The only place outside gpu.c that looks at the build's optional features (sl_config.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "avail.h"
#include "external.h"
#include "gpu.h"
#include "isa.h"
#include "sl_config.h"

static int cuda_feature(const char *feature, int built, const char *lib, char *why, size_t n)
{
    char gpu[128];
    if (!sl_gpu_available(gpu, sizeof gpu)) {
        snprintf(why, n, "cuda: %s", gpu);
        return 0;
    }
    if (!built) {
        snprintf(why, n, "%s: built without %s", feature, lib);
        return 0;
    }
    return 1;
}

int sl_avx512bf16_available(int cpu_has, int kernels_have, const char *isa, char *why, size_t n)
{
    if (!cpu_has) {
        snprintf(why, n, "avx512bf16: this CPU has no AVX512_BF16 (vdpbf16ps)");
        return 0;
    }
    if (!kernels_have) { /* below AVX-512 (SPEEDLAB_ISA=v3, a -march=x86-64-v3 build) */
        snprintf(why, n, "avx512bf16: the kernels run at %s, built without AVX512_BF16 (the AVX-512 kernels "
                 "have it: a native or dispatch build unforced on this CPU)", isa);
        return 0;
    }
    return 1;
}

static int cpu_has_avx512bf16(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16");
#else
    return 0;
#endif
}

int sl_variant_available(const sl_variant *v, char *why, size_t n)
{
    const char *r = v->requires;
    if (n)
        why[0] = '\0';
    if (!r || !*r)
        return 1;
    if (strcmp(r, "openmp") == 0) {
        if (!SL_HAVE_OPENMP)
            snprintf(why, n, "openmp: built without OpenMP");
        return SL_HAVE_OPENMP;
    }
    if (strcmp(r, "blas") == 0) {
        if (!SL_HAVE_BLAS)
            snprintf(why, n, "blas: built without BLAS");
        return SL_HAVE_BLAS;
    }
    if (strcmp(r, "onednn") == 0) {
        if (!SL_HAVE_ONEDNN)
            snprintf(why, n, "onednn: built without oneDNN (install libdnnl-dev, e.g. sh scripts/setup.sh "
                     "BUILDDIR, and configure again)");
        return SL_HAVE_ONEDNN;
    }
    if (strcmp(r, "cuda") == 0)
        return cuda_feature("cuda", 1, "CUDA", why, n);
    if (strcmp(r, "cublas") == 0)
        return cuda_feature("cublas", SL_HAVE_CUBLAS, "cuBLAS", why, n);
    if (strcmp(r, "cudnn") == 0)
        return cuda_feature("cudnn", SL_HAVE_CUDNN, "cuDNN", why, n);
    if (strcmp(r, "avx512bf16") == 0)
        return sl_avx512bf16_available(cpu_has_avx512bf16(), kern_isa_avx512bf16(), kern_isa(), why, n);
    if (strncmp(r, "python:", 7) == 0) /* a framework baseline: the interpreter and its module */
        return sl_external_available(r + 7, why, n);
    snprintf(why, n, "%s: unknown requirement (study.h lists openmp, blas, onednn, cuda, cublas, cudnn, avx512bf16, "
             "python:MODULE)", r);
    return 0;
}

int sl_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
