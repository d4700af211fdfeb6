/*
 * kernels/cnn/cnn_fast.h: what the simd and omp variants need of the workspace's scratch, for
 * cnn_scratch_floats (cnn_common.c): one work area per thread for a convolution layer, in floats (a
 * multiple of 16; cnn_simd.h's cnns_area lists its parts). It depends on the vector width, as the
 * kernels do: in a dispatch build each ISA level's copy of cnn_common.c calls its own level's.
 */
#ifndef SL_KERNELS_CNN_FAST_H
#define SL_KERNELS_CNN_FAST_H

#include "cnn_kernels.h"

#include <stddef.h>

size_t cnn_simd_area_floats(const cnn_conv *c); /* simd.c */

#endif
