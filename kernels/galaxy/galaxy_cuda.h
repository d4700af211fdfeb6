/*
 * kernels/galaxy/galaxy_cuda.h: the cuda variant (kernels/galaxy/cuda.cu, built only with CUDA).
 * X and y go to the device once (galaxy_cuda_create: the study's prepare, not timed); each cost or
 * gradient call then copies theta in (66 KB), runs the kernels and copies the gradient (or the cost
 * sum) back, and scales and regularises on the host with canon.h's galaxy_grad_finish and
 * galaxy_cost_reg. Its sums follow the GPU's order, not canon.h's: it agrees with default to rounding.
 * Supports n_hid <= 16 and n_out <= 8 (the study uses 8 and 3). Returns NULL / -1 with a message on any CUDA error.
 */
#ifndef SL_KERNELS_GALAXY_CUDA_H
#define SL_KERNELS_GALAXY_CUDA_H

#include <stddef.h>

#include "galaxy_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct galaxy_cuda galaxy_cuda;

int galaxy_cuda_device_count(void);   /* 0 when no device or no driver */
galaxy_cuda *galaxy_cuda_create(const galaxy_problem *p, char *err, size_t errlen);
/* 0 and *J, or -1 (CUDA error; message in galaxy_cuda_error). */
int galaxy_cost_cuda(galaxy_cuda *c, const double *theta, double *J);
int galaxy_grad_cuda(galaxy_cuda *c, const double *theta, double *grad);
const char *galaxy_cuda_error(const galaxy_cuda *c);
/* Device milliseconds of the phases of every cost/gradient call since the last call of this function
 * (ms[0] theta copy in with the sums zeroed, ms[1] the kernels, ms[2] the result copy out; CUDA events),
 * then zeroed: 0, or -1 when the events could not be made. */
int galaxy_cuda_phase_ms(galaxy_cuda *c, double ms[3]);
/* The three phases of the last call together (ms), or -1 without events. */
double galaxy_cuda_last_ms(const galaxy_cuda *c);
/* Device memory the context allocated (bytes; fixed at create, so also its high-water mark). */
size_t galaxy_cuda_bytes(const galaxy_cuda *c);
void galaxy_cuda_destroy(galaxy_cuda *c);

#ifdef __cplusplus
}
#endif

#endif
