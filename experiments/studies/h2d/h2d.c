/*
 * experiments/studies/h2d/h2d.c: the h2d study (seed 003, part 5): host-to-device and device-to-host
 * copies from pageable and from pinned host memory, 4 KiB to 256 MiB, the curve CUDA's bandwidthTest and
 * nvbandwidth report. One repetition is one copy of `bytes` bytes (kernels/h2d/h2d_cuda.h); the runner
 * times it whole (enqueue and wait), the record's phases hold the device's own time of the copy (CUDA
 * events), and the report divides the declared bytes by either (reports/copies.c).
 *
 * Check: after one copy, the bytes at the far end against the pattern the study wrote (a copy to the
 * device is read back, untimed): rel_err is the fraction of bytes that differ, 0 when the copy is right.
 * Every row needs a CUDA device: without one the runner records them unavailable and never calls this.
 */
#include <stdlib.h>
#include <string.h>

#include "sl_config.h"
#include "study.h"
#if SL_HAVE_CUDA
#include "h2d/h2d_cuda.h"
#endif

/* A row: the copy's direction and the host memory it uses. */
typedef struct h2d_row {
    int to_host; /* 0: host to device; 1: device to host */
    int pinned;  /* 1: page-locked (cudaMallocHost); 0: pageable (malloc) */
} h2d_row;

#define KIB 1024L
#define MIB (1024L * KIB)
static const long sizes[] = {4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB, 1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB};
static const long quick_sizes[] = {4 * KIB, 1 * MIB, 16 * MIB};

extern const sl_study sl_study_h2d;

static const h2d_row *row(int v)
{
    return sl_study_h2d.variants[v].kernels;
}

typedef struct h2d_state {
    long bytes;
    uint8_t *pattern; /* what the source end holds before every copy */
    uint8_t *back;    /* the check's read-back of the device buffer */
#if SL_HAVE_CUDA
    h2d_ctx *ctx;
#endif
} h2d_state;

/* Each copy moves `bytes` bytes once: the work the report's GB/s divides. */
static double bytes_of(long size, const sl_opts *o)
{
    (void)o;
    return (double)size;
}

/* The pattern, the read-back and a pageable host buffer (a pinned one is page-locked memory too). */
static double footprint(long size, const sl_opts *o)
{
    (void)o;
    return 3.0 * (double)size;
}

static void teardown(void *vs)
{
    h2d_state *s = vs;
    if (!s)
        return;
#if SL_HAVE_CUDA
    h2d_destroy(s->ctx);
#endif
    free(s->pattern), free(s->back);
    free(s);
}

/* The pattern: a splitmix64 stream from the seed, so that a copy that moved the wrong bytes, or none,
 * differs almost everywhere. */
static void fill(uint8_t *p, long n, uint64_t seed)
{
    uint64_t x = seed;
    for (long i = 0; i < n; i++) {
        uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        p[i] = (uint8_t)(z ^ (z >> 31));
    }
}

static void *setup(long size, const sl_opts *o, sl_error *err)
{
    h2d_state *s = calloc(1, sizeof *s);
    if (!s || !(s->pattern = malloc((size_t)size)) || !(s->back = malloc((size_t)size))) {
        sl_error_set(err, "h2d: out of host memory for two %ld-byte buffers", size);
        teardown(s);
        return NULL;
    }
    s->bytes = size;
    fill(s->pattern, size, o->seed);
    return s;
}

#if SL_HAVE_CUDA
/* The context of the row's memory kind, its source end holding the pattern. */
static int prepare(void *vs, int v, sl_error *err)
{
    h2d_state *s = vs;
    char msg[256];
    if (!(s->ctx = h2d_create((size_t)s->bytes, row(v)->pinned, msg, sizeof msg))) {
        sl_error_set(err, "%s", msg);
        return -1;
    }
    uint8_t *host = h2d_host(s->ctx);
    if (!row(v)->to_host) {
        memcpy(host, s->pattern, (size_t)s->bytes);
        return 0;
    }
    memset(host, 0, (size_t)s->bytes);
    if (h2d_write_device(s->ctx, s->pattern, (size_t)s->bytes)) {
        sl_error_set(err, "%s", h2d_error(s->ctx));
        return -1;
    }
    return 0;
}

static void release(void *vs, int v)
{
    h2d_state *s = vs;
    (void)v;
    h2d_destroy(s->ctx);
    s->ctx = NULL;
}

static int run(void *vs, int v, sl_record *rec, sl_error *err)
{
    h2d_state *s = vs;
    double ms = 0;
    if (h2d_copy(s->ctx, row(v)->to_host ? H2D_TO_HOST : H2D_TO_DEVICE, (size_t)s->bytes, &ms)) {
        sl_error_set(err, "%s", h2d_error(s->ctx));
        return -1;
    }
    sl_record_phases(rec, row(v)->to_host ? 0 : ms, 0, row(v)->to_host ? ms : 0);
    return 0;
}

static int check(void *vs, int v, double *rel_err, sl_error *err)
{
    h2d_state *s = vs;
    const uint8_t *got = h2d_host(s->ctx);
    if (!row(v)->to_host) {
        if (h2d_read_device(s->ctx, s->back, (size_t)s->bytes)) {
            sl_error_set(err, "%s", h2d_error(s->ctx));
            return -1;
        }
        got = s->back;
    }
    long wrong = 0;
    for (long i = 0; i < s->bytes; i++)
        wrong += got[i] != s->pattern[i];
    *rel_err = (double)wrong / (double)s->bytes;
    return 0;
}
#else
/* Built without CUDA: every row requires it, so the runner records them unavailable and never gets
 * here; these only keep the table complete. */
static int prepare(void *vs, int v, sl_error *err)
{
    (void)vs, (void)v;
    sl_error_set(err, "h2d: built without CUDA");
    return -1;
}
static void release(void *vs, int v) { (void)vs, (void)v; }
static int run(void *vs, int v, sl_record *rec, sl_error *err)
{
    (void)vs, (void)v, (void)rec;
    sl_error_set(err, "h2d: built without CUDA");
    return -1;
}
static int check(void *vs, int v, double *rel_err, sl_error *err)
{
    (void)vs, (void)v, (void)rel_err;
    sl_error_set(err, "h2d: built without CUDA");
    return -1;
}
#endif

static void finish(void *vs, int v, sl_record *rec)
{
    (void)vs;
    sl_record_note(rec, row(v)->pinned ? "host memory: pinned (cudaMallocHost, page-locked: DMA reads it directly)"
                                       : "host memory: pageable (malloc: the driver stages it through a pinned "
                                         "bounce buffer)");
    sl_record_metric(rec, "pinned", row(v)->pinned);
    sl_record_metric(rec, "to_host", row(v)->to_host);
}

/* One row per variant: name, requirement, description, the variant it builds on, traits, its copy. */
static const sl_variant variants[] = {
    {"h2d-pageable", "cuda", "host to device from malloc'ed (pageable) memory", NULL, SL_DEVICE,
     &(const h2d_row){0, 0}},
    {"h2d-pinned", "cuda", "host to device from cudaMallocHost'ed (pinned) memory", "h2d-pageable", SL_DEVICE,
     &(const h2d_row){0, 1}},
    {"d2h-pageable", "cuda", "device to host into pageable memory", NULL, SL_DEVICE, &(const h2d_row){1, 0}},
    {"d2h-pinned", "cuda", "device to host into pinned memory", "d2h-pageable", SL_DEVICE, &(const h2d_row){1, 1}},
};

const sl_study sl_study_h2d = {
    .name = "h2d",
    .title = "host-device copies, pageable and pinned, 4 KiB to 256 MiB (GB/s against size)",
    .source = "seed 003, part 5",
    .kind = SL_KERNEL,
    .size_name = "bytes",
    .sizes = sizes,
    .n_sizes = (int)(sizeof sizes / sizeof *sizes),
    .quick_sizes = quick_sizes,
    .n_quick_sizes = (int)(sizeof quick_sizes / sizeof *quick_sizes),
    .baseline = "h2d-pageable",
    .tolerance = 0, /* a copy is exact */
    .variants = variants,
    .n_variants = (int)(sizeof variants / sizeof *variants),
    .default_reps = 20,
    .bytes = bytes_of,
    .footprint = footprint,
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .check = check,
    .finish = finish,
    .release = release,
    .teardown = teardown,
};
