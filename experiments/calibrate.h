/* calibrate.h: the machine's ceilings and the calibration record (calibrate.c). */
#ifndef SL_CALIBRATE_H
#define SL_CALIBRATE_H

#include <jansson.h>
#include <stddef.h>

/* The ceilings object of a calibration record; prints a summary on stdout. */
json_t *sl_calibrate_ceilings(int threads);
/* The GPU's ceilings (ceilings.gpu; calibrate_gpu.c), printing each; NULL with why ("no CUDA device",
 * "built without CUDA") when there is no device to measure. */
json_t *sl_calibrate_gpu(char *why, size_t n);
/* Calibrates and appends the calibration record to fd; 0 or -1 after a message. */
int sl_write_calibration(int fd, const char *run_id, json_t *env, int threads);

#endif
