/*
 * kernels/kern_blas.h: a BLAS variant's thread count. OpenBLAS has no per-call count, only a library-wide
 * one, so every kernel that calls CBLAS sets it from its own `threads` parameter just before the call
 * (the runner never sets it); cnn's blas sets 1 and splits its work across OpenMP threads instead
 * (kernels/cnn/blas.c says why). Another CBLAS (netlib's, found by meson's `cblas` fallback) has no
 * thread count at all: the call does nothing there.
 */
#ifndef SL_KERNELS_KERN_BLAS_H
#define SL_KERNELS_KERN_BLAS_H

#include "sl_config.h"

#if SL_HAVE_OPENBLAS
#include <cblas.h> /* OpenBLAS's: declares openblas_set_num_threads */
#endif

/* Inside the timed call, which costs about 2 ns when the count does not change (OpenBLAS 0.3.21, Zen 5
 * VM, a loop of 10^6 calls), against a millisecond-scale product. */
static inline void kern_blas_threads(int threads)
{
#if SL_HAVE_OPENBLAS
    openblas_set_num_threads(threads > 0 ? threads : 1);
#else
    (void)threads;
#endif
}

#endif
