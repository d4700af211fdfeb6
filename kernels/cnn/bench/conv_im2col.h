/* kernels/cnn/bench/conv_im2col.h: the im2col forward experiment (conv_im2col.c), for the bench. */
#ifndef SL_KERNELS_CNN_BENCH_CONV_IM2COL_H
#define SL_KERNELS_CNN_BENCH_CONV_IM2COL_H

#include "../cnn_kernels.h"

#include <stddef.h>

size_t conv_im2col_floats(const cnn_conv *c);
void conv_forward_im2col(const cnn_conv *c, int B, const float *x, const float *W, const float *bias, float *y,
                         float *work);

#endif
