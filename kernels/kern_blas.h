/*
 * kernels/kern_blas.h: a BLAS variant's thread count. OpenBLAS has no per-call count, only a library-wide
 * one, so the kernel that makes the call sets it from its own `threads` parameter just before: the
 * thread count reaches every kernel as a parameter, never through a global the runner set.
 */
#ifndef SL_KERNELS_KERN_BLAS_H
#define SL_KERNELS_KERN_BLAS_H

#include "sl_config.h"

#if SL_HAVE_BLAS
#include <cblas.h> /* OpenBLAS's: declares openblas_set_num_threads */
#endif

static inline void kern_blas_threads(int threads)
{
#if SL_HAVE_BLAS
    openblas_set_num_threads(threads > 0 ? threads : 1);
#else
    (void)threads;
#endif
}

#endif
