/*
 * experiments/train/loader.h: a loader thread that prepares a training job's batches ahead of the
 * training thread, through a bounded ring (seed 003, part 2: overlap). The prefetch study's queue
 * variants use it; the synchronous variant calls the same fill function inline.
 *
 * A ring of depth + 1 batch buffers, allocated once by loader_create (no allocation afterwards): up to
 * `depth` prepared batches wait while the training thread works on the one loader_next gave it last, so
 * depth 1 is double buffering. One mutex and two condition variables (the producer waits for a free
 * slot or a job, the consumer for a batch). The thread lives from create to destroy and idles between
 * jobs, so that a timed repetition creates no thread. Items are delivered exactly once, in order.
 */
#ifndef SL_TRAIN_LOADER_H
#define SL_TRAIN_LOADER_H

#include <stddef.h>
#include <stdint.h>

/* Prepares item i of the current job (0-based, in order) into X and y; returns its row count (> 0), or
 * -1 when it cannot (the consumer then gets -1 from loader_next). Runs on the loader thread. */
typedef int (*loader_fill_fn)(void *ctx, long i, float *X, uint8_t *y);

typedef struct loader loader;

/* A delivered batch: item i, B rows of X (B x the row size) and y. Valid until the next loader_next,
 * loader_start or loader_cancel. */
typedef struct loader_batch {
    const float *X;
    const uint8_t *y;
    int B;
    long i;
} loader_batch;

/* depth >= 1 batches ahead, each buffer x_floats floats (64-byte aligned) and y_bytes bytes. NULL with
 * why (what failed) when out of memory or no thread could be started. */
loader *loader_create(int depth, size_t x_floats, size_t y_bytes, loader_fill_fn fill, void *ctx, char *why,
                      size_t n);
/* Starts a job of n items (0..n-1), first ending any job in progress (loader_cancel). */
void loader_start(loader *q, long n);
/* Releases the batch the last call gave, then waits for the next item: 1 with *out, 0 when the job's
 * items have all been delivered, -1 when the fill failed for it. */
int loader_next(loader *q, loader_batch *out);
/* Ends the current job mid-way: the producer finishes the item it is filling (if any) and stops; the
 * ring is emptied. Returns when the loader thread is idle. */
void loader_cancel(loader *q);
/* Seconds the loader thread spent filling since the last loader_start. */
double loader_busy_s(loader *q);
/* The ring's depth (batches ahead). */
int loader_depth(const loader *q);
/* Cancels, stops and joins the thread, frees the buffers. NULL is ignored. */
void loader_destroy(loader *q);

#endif
