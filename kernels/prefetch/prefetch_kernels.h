/*
 * kernels/prefetch/prefetch_kernels.h: the prefetch study's compute (seed 003, part 2, overlap).
 *
 * The study trains mlp or cnn with the batch prepared either inline or by a loader thread; what is pure
 * compute here is the preparation's augmentation: a random horizontal flip and a shift of up to
 * PF_MAX_SHIFT pixels each way, fused with the gather (bytes -> floats / 255), drawn per (seed, epoch,
 * row of the data set), so that every variant, and the loader and the training thread alike, make the
 * same batch. No I/O, no allocation, no timing.
 */
#ifndef KERNELS_PREFETCH_KERNELS_H
#define KERNELS_PREFETCH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define PF_MAX_SHIFT 2

/* One image's augmentation: mirror left-right first (flip), then move the picture by dx columns and dy
 * rows (positive: right and down); pixels that come from outside the image are 0. */
typedef struct pf_aug {
    int flip, dx, dy;
} pf_aug;

/* The augmentation of data-set row `row` in epoch `epoch` under `seed`: a pure function of the three
 * (a splitmix64 hash), so it does not depend on which thread asks or in which order. */
pf_aug pf_aug_of(uint64_t seed, int epoch, int32_t row);

/* X (B x rows*cols floats) = the images idx[b] of `images` (rows*cols bytes each), each flipped and
 * shifted by pf_aug_of(seed, epoch, idx[b]), scaled by 1/255 (train_gather's expression, so an
 * unmoved pixel has its bits); y[b] = labels[idx[b]]. One thread. */
void pf_gather_flipshift(const uint8_t *images, const uint8_t *labels, int rows, int cols, const int32_t *idx,
                         int B, uint64_t seed, int epoch, float *X, uint8_t *y);

/* The same batch in double, written from the definition one output pixel at a time: the check's
 * reference (never timed). */
void pf_ref_flipshift(const uint8_t *images, int rows, int cols, const int32_t *idx, int B, uint64_t seed,
                      int epoch, double *X);

#endif
