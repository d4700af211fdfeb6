/*
 * kernels/calib/calib.h: the loops behind the CPU ceilings of `speedlab calibrate` (experiments/
 * calibrate.c times them). Kernels like any other: built with the kernels' flags and, in a dispatch
 * build, once per x86-64 level, so the peak they measure is the peak of the level the kernels run.
 */
#ifndef SL_KERNELS_CALIB_H
#define SL_KERNELS_CALIB_H

#include <stddef.h>

/* FP32 FMA loop at kernels/simd.h's width: flops done in `iters` passes on this thread. */
double sl_fma_loop(long iters, float *sink);
/* STREAM triad a[i] = b[i] + s * c[i] on [lo, hi). */
void sl_triad(double *restrict a, const double *restrict b, const double *restrict c, double s,
              size_t lo, size_t hi);

#endif
