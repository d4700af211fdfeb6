/*
 * kernels/pipeline/pipeline_kernels.h: the pipeline study's compute (seed 003, part 1, loading).
 *
 * The study's loading variants are I/O (experiments/studies/pipeline/); what is pure compute is here:
 * the decode of a set's bytes to float32 in [0, 1] and the two checksums used to touch and check the
 * loaded bytes. No I/O, no allocation, no timing.
 */
#ifndef KERNELS_PIPELINE_KERNELS_H
#define KERNELS_PIPELINE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* dst[i] = src[i] * (1/255) for i < n, in one pass: the same expression as the training studies' batch
 * gather (experiments/train/train.c), so the floats are the bits training would see. */
void pl_decode_u8_f32(const uint8_t *src, size_t n, float *dst);

/* The sum of the n bytes read as native-endian 64-bit words (a short tail zero-padded), modulo 2^64:
 * reads every byte at memory speed, so an mmap'ed file is faulted in and read whole, as read() would
 * copy it whole. A cheap fingerprint, not a hash: the check uses pl_fnv1a. */
uint64_t pl_sum64(const uint8_t *p, size_t n);

/* 64-bit FNV-1a of the n bytes: the correctness check's fingerprint (byte-serial, about 1 GB/s; never
 * timed). */
uint64_t pl_fnv1a(const uint8_t *p, size_t n);

#endif
