/*
 * experiments/studies/pipeline/pipeline_study.h: what pipeline.c (the study) and load.c (its I/O) share.
 *
 * Seed 003, part 1: one repetition loads the whole training-image file of an MNIST-format set
 * (Fashion-MNIST by default) by one method: gzip (zlib's gzread of the .gz), read (read() of the raw
 * file), mmap (the raw file mapped and every byte read), or decode (bytes already in memory to float32).
 */
#ifndef SL_PIPELINE_STUDY_H
#define SL_PIPELINE_STUDY_H

#include <stddef.h>
#include <stdint.h>

#include "study.h"

#define PL_PATH 4096
#define PL_MAX_TIMES 4096 /* timed loads kept for the metrics' median (the runner keeps every time) */

/* Where a variant's bytes come from. */
enum pl_source { PL_GZ, PL_RAW, PL_MEMORY };

typedef struct pl_state {
    char dir[PL_PATH];            /* the data directory */
    char gz_path[PL_PATH];        /* the .gz the gzip variant reads (the data's, or the copy in tmpdir) */
    char raw_path[PL_PATH];       /* the raw file read and mmap read */
    char tmpdir[PL_PATH];         /* our run-time copies, "" when none was needed */
    int gz_copied, raw_copied;    /* which file is a copy made in setup */
    size_t gz_bytes, raw_bytes;   /* the two files' sizes (raw: 16-byte header + payload) */
    long n;                       /* images */
    int rows, cols;
    size_t px;                    /* payload bytes: n * rows * cols */
    uint8_t *ref;                 /* the IDX reader's images (experiments/data/idx.c): the reference */
    uint64_t ref_fnv, ref_sum;    /* their FNV-1a and pl_sum64 */
    uint8_t header[16];           /* the raw file's expected header */
    uint8_t *buf;                 /* raw_bytes: what gzip and read load */
    float *out;                   /* px floats: decode's output (its prepare) */
    uint8_t *map;                 /* mmap's mapping, kept for the check until the next before_rep */
    uint64_t touched;             /* mmap's pl_sum64 of the mapped payload */
    int cold;                     /* --param cache=cold */
    int drop_caches;              /* cold: 1 when /proc/sys/vm/drop_caches was written too */
    double resident_sum;          /* fraction of the file in the page cache at each timed load's start */
    int resident_n;
    double times[PL_MAX_TIMES];   /* the timed loads, seconds */
    int n_times, times_dropped;
} pl_state;

/* Per-row functions (the variant table's `kernels`). */
typedef struct pl_kernels {
    enum pl_source source;
    int (*load)(pl_state *s, sl_error *err);
} pl_kernels;

/* load.c: the loaders (one whole file each; 0, or -1 with err naming the file). */
int pl_load_gzip(pl_state *s, sl_error *err);
int pl_load_read(pl_state *s, sl_error *err);
int pl_load_mmap(pl_state *s, sl_error *err);
int pl_load_decode(pl_state *s, sl_error *err);

/* load.c: setup's files. Finds DIR/train-images-idx3-ubyte[.gz], loads the reference with the IDX
 * reader, and writes (once, fsync'ed, into a new temp dir) a raw copy when there is only the .gz and a
 * .gz copy when there is only the raw file. 0, or -1 with err. */
int pl_files_setup(pl_state *s, const char *dir, sl_error *err);
/* Removes the copies and the temp dir. */
void pl_files_remove(pl_state *s);
/* The payload bytes (n * rows * cols) of DIR's training images from the header alone, or 0. */
size_t pl_payload_bytes(const char *dir);

/* load.c: the page cache. Drops path's pages (posix_fadvise DONTNEED; with drop_caches too, when
 * `drop` and allowed: *dropped says whether it was done). 0, or -1 with err. */
int pl_evict(const char *path, int drop, int *dropped, sl_error *err);
/* The fraction of path's pages in the page cache now (mincore), or -1 when it cannot be told. */
double pl_resident(const char *path);
/* Whether this process may write /proc/sys/vm/drop_caches (root and writable). */
int pl_can_drop_caches(void);
/* Whether path is on tmpfs (a cold read from there is still a read from memory). */
int pl_on_tmpfs(const char *path);

#endif
