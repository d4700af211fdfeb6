/*
 * experiments/studies/pipeline/pipeline.c: the pipeline study (seed 003, part 1: loading). Each
 * repetition loads the whole training-image file of an MNIST-format set (Fashion-MNIST from Debian's
 * package by default, --data DIR otherwise) by one method, with the page cache warm or cold
 * (--param cache). Part 2 (prefetching) is the prefetch study; Part 3 (batch size) is mlp's and cnn's
 * size sweep (--sizes); Part 5 (host-device copies) the h2d study; Part 6 (cuDNN benchmark mode) cnn's
 * cudnn-heuristic row; Part 4 (precision) is not built yet.
 * docs/study-pipeline.md has what is measured and the figures.
 *
 * Checks: every variant's loaded bytes against the IDX reader's (experiments/data/idx.c), by FNV-1a of
 * the image bytes, before timing; decode's floats against byte / 255 in double.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <speedlab/prof.h>

#include "pipeline/pipeline_kernels.h"
#include "pipeline_study.h"
#include "sl_config.h"
#include "train/train.h"

/* One training epoch of the fastest CPU variant on a 2-vCPU Zen 5 machine (AVX-512 build): mlp omp
 * 0.157 s (docs/study-mlp.md, 20 epochs, batch 64), cnn omp 0.692 s (docs/study-cnn.md, 10 epochs,
 * batch 64). Quoted, not measured here: this study never trains, and a fixed scale keeps the ratios
 * comparable between machines. */
#define MLP_EPOCH_S 0.157
#define CNN_EPOCH_S 0.692
#define EPOCH_SOURCE "mlp omp 0.157 s (docs/study-mlp.md) and cnn omp 0.692 s (docs/study-cnn.md), " \
                     "on a 2-vCPU Zen 5 machine, not measured in this run"

#define FASHION_PX ((size_t)60000 * 28 * 28) /* footprint's guess when the header cannot be read */

static const sl_param params[] = {
    {"cache", "warm", "page cache before each load: warm (as left by the last load) or cold (the file "
                      "evicted: posix_fadvise DONTNEED, plus drop_caches as root)",
     SL_TEXT("warm|cold")},
};
static const long sizes[] = {1};
static const long quick_sizes[] = {1};

extern const sl_study sl_study_pipeline;

static const pl_kernels *row(int v)
{
    return sl_study_pipeline.variants[v].kernels;
}

static const char *data_dir(const sl_opts *o)
{
    return train_mnist_dir(o);
}

static size_t payload_or_guess(const sl_opts *o)
{
    size_t px = pl_payload_bytes(data_dir(o));
    return px ? px : FASHION_PX;
}

/* Declared work: the raw IDX file's bytes, what every loader delivers into memory (gzip and decode
 * record their own: finish). No flops: loading is not arithmetic. */
static double bytes(long size, const sl_opts *o)
{
    (void)size;
    return 16.0 + (double)payload_or_guess(o);
}

/* The reference images, the loaded file, decode's floats (4 per byte), and the copies' write buffers. */
static double footprint(long size, const sl_opts *o)
{
    (void)size;
    return 7.0 * (double)payload_or_guess(o);
}

static int data_missing(const sl_opts *o, char *why, size_t n)
{
    (void)o;
    return train_mnist_missing("pipeline", why, n);
}

static void teardown(void *vs)
{
    pl_state *s = vs;
    if (!s)
        return;
    if (s->map)
        munmap(s->map, s->raw_bytes);
    pl_files_remove(s);
    free(s->ref), free(s->buf), free(s->out);
    free(s);
}

static int read_params(pl_state *s, const sl_opts *o, sl_error *err)
{
    const char *c = sl_param_str(o, &sl_study_pipeline, "cache");
    if (strcmp(c, "warm") != 0 && strcmp(c, "cold") != 0) {
        sl_error_set(err, "pipeline: --param cache=%s: expected warm or cold", c);
        return -1;
    }
    s->cold = strcmp(c, "cold") == 0;
    return 0;
}

static void *setup(long size, const sl_opts *o, sl_error *err)
{
    (void)size;
    pl_state *s = calloc(1, sizeof *s);
    if (!s) {
        sl_error_set(err, "pipeline: out of memory for the state");
        return NULL;
    }
    if (read_params(s, o, err) || pl_files_setup(s, data_dir(o), err)) {
        teardown(s);
        return NULL;
    }
    s->buf = malloc(s->raw_bytes);
    if (!s->buf) {
        sl_error_set(err, "pipeline: out of memory for the %zu-byte load buffer", s->raw_bytes);
        teardown(s);
        return NULL;
    }
    s->ref_fnv = pl_fnv1a(s->ref, s->px);
    s->ref_sum = pl_sum64(s->ref, s->px);
    return s;
}

static int prepare(void *vs, int v, sl_error *err)
{
    pl_state *s = vs;
    s->n_times = s->times_dropped = 0;
    s->resident_sum = 0, s->resident_n = 0, s->drop_caches = 0;
    if (row(v)->source != PL_MEMORY)
        return 0;
    s->out = malloc(s->px * sizeof *s->out);
    if (!s->out) {
        sl_error_set(err, "pipeline decode: out of memory for %zu floats", s->px);
        return -1;
    }
    return 0;
}

static void release(void *vs, int v)
{
    pl_state *s = vs;
    (void)v;
    if (s->map)
        munmap(s->map, s->raw_bytes);
    s->map = NULL;
    free(s->out);
    s->out = NULL;
}

static const char *path_of(const pl_state *s, int v)
{
    return row(v)->source == PL_GZ ? s->gz_path : row(v)->source == PL_RAW ? s->raw_path : NULL;
}

/* Before every load, untimed: the last mapping goes, and with cache=cold the file leaves the page
 * cache; how much of it is still cached is measured either way (resident_fraction). */
static int before_rep(void *vs, int v, sl_error *err)
{
    pl_state *s = vs;
    if (s->map)
        munmap(s->map, s->raw_bytes);
    s->map = NULL;
    const char *p = path_of(s, v);
    if (!p)
        return 0;
    int dropped = 0;
    if (s->cold && pl_evict(p, pl_can_drop_caches(), &dropped, err))
        return -1;
    s->drop_caches |= dropped;
    double r = pl_resident(p);
    if (r >= 0) /* also before the untimed loads: run() drops their share, so timed loads count alone */
        s->resident_sum += r, s->resident_n++;
    return 0;
}

static int run(void *vs, int v, sl_record *rec, sl_error *err)
{
    pl_state *s = vs;
    /* The study's own clock around the same call the runner times, for the metrics' median (finish
     * sees no runner times); the runner's record times stay the reference. */
    uint64_t t0 = prof_now_ns();
    int rc = row(v)->load(s, err);
    uint64_t t1 = prof_now_ns();
    if (rc == 0 && sl_record_is_timed(rec)) {
        if (s->n_times < PL_MAX_TIMES)
            s->times[s->n_times++] = (double)(t1 - t0) * 1e-9;
        else
            s->times_dropped++;
    } else if (rc == 0 && s->resident_n > 0) {
        s->resident_sum = 0, s->resident_n = 0; /* an untimed load: its residency is not a timed one's */
    }
    return rc;
}

/* 0 with *rel_err = 0 when the loaded image bytes are the IDX reader's, else -1 saying what differs. */
static int check_bytes(const pl_state *s, const char *name, const char *path, const uint8_t *file,
                       double *rel_err, sl_error *err)
{
    if (memcmp(file, s->header, 16) != 0) {
        sl_error_set(err, "pipeline %s: %s: the loaded header is not the IDX header of %ld images of %dx%d",
                     name, path, s->n, s->rows, s->cols);
        return -1;
    }
    uint64_t h = pl_fnv1a(file + 16, s->px);
    if (h != s->ref_fnv) {
        sl_error_set(err, "pipeline %s: %s: FNV-1a of the loaded images %016llx, the IDX reader's %016llx",
                     name, path, (unsigned long long)h, (unsigned long long)s->ref_fnv);
        return -1;
    }
    *rel_err = 0;
    return 0;
}

/* decode: the largest |out - byte / 255| over the largest value, 1: float rounding, about 6e-8. */
static double decode_error(const pl_state *s)
{
    double worst = 0;
    for (size_t i = 0; i < s->px; i++) {
        double d = fabs((double)s->out[i] - s->ref[i] / 255.0);
        worst = d > worst || isnan(d) ? (isnan(d) ? INFINITY : d) : worst;
    }
    return worst;
}

static int check(void *vs, int v, double *rel_err, sl_error *err)
{
    pl_state *s = vs;
    const char *name = sl_study_pipeline.variants[v].name;
    switch (row(v)->source) {
    case PL_GZ:
        return check_bytes(s, name, s->gz_path, s->buf, rel_err, err);
    case PL_RAW:
        if (s->map && s->touched != s->ref_sum) {
            sl_error_set(err, "pipeline %s: %s: the word sum of the mapped images %016llx, expected %016llx",
                         name, s->raw_path, (unsigned long long)s->touched, (unsigned long long)s->ref_sum);
            return -1;
        }
        return check_bytes(s, name, s->raw_path, s->map ? s->map : s->buf, rel_err, err);
    case PL_MEMORY:
        *rel_err = decode_error(s);
        return 0;
    }
    return -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/* The notes: where the bytes came from, what cold meant, what the epoch figures are. */
static void notes(const pl_state *s, int v, sl_record *rec)
{
    char b[2 * PL_PATH + 256];
    const char *p = path_of(s, v);
    if (row(v)->source == PL_RAW && s->raw_copied) {
        snprintf(b, sizeof b, "%s has only the .gz: setup wrote a raw copy once to %s (untimed), which read "
                 "and mmap load", s->dir, s->raw_path);
        sl_record_note(rec, b);
    }
    if (row(v)->source == PL_GZ && s->gz_copied) {
        snprintf(b, sizeof b, "%s has only the raw file: setup wrote a gzip copy (zlib level 6) once to %s "
                 "(untimed), which gzip loads", s->dir, s->gz_path);
        sl_record_note(rec, b);
    }
    if (!p)
        sl_record_note(rec, "cold_method: none (decode reads the images from memory; --param cache does not "
                            "apply)");
    else if (!s->cold)
        sl_record_note(rec, "cold_method: none (cache=warm: each load finds the file as the last one left it)");
    else
        sl_record_note(rec, s->drop_caches
                                ? "cold_method: posix_fadvise(POSIX_FADV_DONTNEED) on the file and "
                                  "/proc/sys/vm/drop_caches (1), before each load, untimed"
                                : "cold_method: posix_fadvise(POSIX_FADV_DONTNEED) on the file before each "
                                  "load, untimed (not root, or drop_caches not writable)");
    if (p && pl_on_tmpfs(p))
        sl_record_note(rec, "the file is on tmpfs: it lives in memory, and cold cannot evict it");
    sl_record_note(rec, "epoch ratios against one training epoch of " EPOCH_SOURCE);
    if (s->times_dropped) {
        snprintf(b, sizeof b, "metrics from the first %d timed loads of %d", PL_MAX_TIMES,
                 PL_MAX_TIMES + s->times_dropped);
        sl_record_note(rec, b);
    }
}

static void finish(void *vs, int v, sl_record *rec)
{
    pl_state *s = vs;
    notes(s, v, rec);
    sl_record_metric(rec, "cold", s->cold && path_of(s, v));
    sl_record_metric(rec, "cold_drop_caches", s->drop_caches);
    if (s->resident_n > 0)
        sl_record_metric(rec, "resident_fraction", s->resident_sum / s->resident_n);
    if (s->n_times == 0)
        return;
    double t = median(s->times, s->n_times);
    double file = row(v)->source == PL_GZ ? (double)s->gz_bytes : row(v)->source == PL_RAW ? (double)s->raw_bytes : 0;
    sl_record_metric(rec, "load_s", t);
    sl_record_metric(rec, "images_per_s", (double)s->n / t);
    sl_record_metric(rec, "data_mb_per_s", (file ? (double)s->raw_bytes : (double)s->px) / t / 1e6);
    if (file > 0) {
        sl_record_metric(rec, "file_bytes", file);
        sl_record_metric(rec, "file_mb_per_s", file / t / 1e6);
    }
    sl_record_metric(rec, "mlp_epoch_ratio", t / MLP_EPOCH_S);
    sl_record_metric(rec, "cnn_epoch_ratio", t / CNN_EPOCH_S);
    /* The work the report's bandwidth column divides: bytes read from the file (compressed for gzip);
     * decode's memory traffic, a byte in and a float out per pixel. */
    if (row(v)->source == PL_GZ)
        sl_record_work(rec, 0, (double)s->gz_bytes);
    else if (row(v)->source == PL_MEMORY)
        sl_record_work(rec, 0, 5.0 * (double)s->px);
}

static const char *incomplete(const sl_variant *v)
{
    const pl_kernels *k = v->kernels;
    return k->load ? NULL : "a row needs .load";
}

static const sl_variant variants[] = {
    {"gzip", NULL, "zlib gzread of train-images-idx3-ubyte.gz into a buffer (what mlp and cnn do)", NULL, 0,
     &(const pl_kernels){PL_GZ, pl_load_gzip}},
    {"read", NULL, "read() of the raw IDX file into a buffer", "gzip", 0, &(const pl_kernels){PL_RAW, pl_load_read}},
    {"mmap", NULL, "the raw IDX file mmap'ed and every byte read (a word sum)", "read", 0,
     &(const pl_kernels){PL_RAW, pl_load_mmap}},
    {"decode", NULL, "the images' bytes in memory to float32 / 255 in one pass (the compute part)", NULL, 0,
     &(const pl_kernels){PL_MEMORY, pl_load_decode}},
};

const sl_study sl_study_pipeline = {
    .name = "pipeline",
    .title = "data pipeline, part 1: loading the training images (gzip, read, mmap; decode to float32)",
    .source = "seed 003, part 1",
    .kind = SL_KERNEL,
    .size_name = "files",
    .sizes = sizes,
    .n_sizes = 1,
    .quick_sizes = quick_sizes,
    .n_quick_sizes = 1,
    .baseline = "gzip",
    .tolerance = 1e-6,
    .variants = variants,
    .n_variants = sizeof variants / sizeof variants[0],
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .default_reps = 5,
    .incomplete = incomplete,
    .bytes = bytes,
    .footprint = footprint,
    .data_missing = data_missing,
    .setup = setup,
    .prepare = prepare,
    .run = run,
    .check = check,
    .before_rep = before_rep,
    .finish = finish,
    .release = release,
    .teardown = teardown,
};
