/*
 * tests/data/idx_files.h: a temporary directory of MNIST-format files for the training studies' tests
 * (mlp, cnn), which run the study through sl_study on a small synthetic set: the four uncompressed IDX
 * files (train and t10k, images and labels) that experiments/data/idx.c reads; and the scaffolding of
 * running such a study through sl_study (can_run, in_sweep, study_run, sweep_run); the tests' generator
 * (lcg) and striped synthetic images (idx_files_stripes). Include after cmocka.h.
 */
#ifndef SL_TESTS_IDX_FILES_H
#define SL_TESTS_IDX_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/idx.h"
#include "record.h"
#include "sl_config.h"
#include "study.h"

/* The tests' small generator (an LCG's top 24 bits): deterministic synthetic data. */
static inline uint32_t lcg(uint32_t *s) { return (*s = *s * 1103515245u + 12345u) >> 8; }

/* n images of side x side pixels: a class-dependent stripe (every 10th pixel from the class) of 150 plus
 * noise below `noise`, so there is something to learn (mlp: 100) or something that compresses (pipeline: 8). */
static inline idx_set idx_files_stripes(long n, int side, uint32_t seed, int noise)
{
    idx_set st = {malloc((size_t)n * side * side), malloc((size_t)n), n, side, side};
    for (long i = 0; i < n; i++) {
        int c = (int)(lcg(&seed) % 10);
        st.labels[i] = (uint8_t)c;
        for (int k = 0; k < side * side; k++)
            st.images[i * side * side + k] = (uint8_t)((k % 10 == c ? 150 : 0) + lcg(&seed) % (uint32_t)noise);
    }
    return st;
}

static void idx_files_be32(FILE *f, uint32_t v)
{
    unsigned char b[4] = {v >> 24, v >> 16, v >> 8, v};
    fwrite(b, 1, 4, f);
}

/* dir/PREFIX-images-idx3-ubyte and dir/PREFIX-labels-idx1-ubyte from st (a failed write fails the test). */
static void idx_files_write(const char *dir, const char *prefix, const idx_set *st)
{
    char p[160];
    snprintf(p, sizeof p, "%s/%s-images-idx3-ubyte", dir, prefix);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    idx_files_be32(f, 0x803), idx_files_be32(f, (uint32_t)st->n);
    idx_files_be32(f, (uint32_t)st->rows), idx_files_be32(f, (uint32_t)st->cols);
    size_t px = (size_t)st->n * (size_t)st->rows * (size_t)st->cols;
    assert_int_equal(fwrite(st->images, 1, px, f), px);
    assert_int_equal(fclose(f), 0);
    snprintf(p, sizeof p, "%s/%s-labels-idx1-ubyte", dir, prefix);
    f = fopen(p, "wb");
    assert_non_null(f);
    idx_files_be32(f, 0x801), idx_files_be32(f, (uint32_t)st->n);
    assert_int_equal(fwrite(st->labels, 1, (size_t)st->n, f), (size_t)st->n);
    assert_int_equal(fclose(f), 0);
}

/* Removes the four files idx_files_write made for train and t10k, then dir. */
static void idx_files_remove(const char *dir)
{
    const char *names[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"};
    char p[160];
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

/* The training study `study` given a set of side x side images (both splits) must refuse it in setup,
 * naming the shape found and the network's 28x28 (a 10x10 set once trained a 100-input mlp
 * recorded as the 784-128-128-10 study). */
static inline void idx_files_shape_refused(const char *study, int side)
{
    char d[64];
    snprintf(d, sizeof d, "/tmp/sl_shape_XXXXXX");
    assert_non_null(mkdtemp(d));
    idx_set tr = idx_files_stripes(300, side, 1, 100), te = idx_files_stripes(100, side, 2, 100);
    idx_files_write(d, "train", &tr);
    idx_files_write(d, "t10k", &te);
    idx_set_free(&tr);
    idx_set_free(&te);
    const sl_study *s = sl_find_study(study);
    sl_opts o = {.seed = 1, .threads = 1, .data_dir = d};
    sl_error err = {{0}};
    void *st = s->setup(s->sizes[0] < 64 ? s->sizes[0] : 64, &o, &err);
    idx_files_remove(d);
    if (st) {
        s->teardown(st);
        fail_msg("%s: %dx%d images accepted by a study whose network takes 28x28", study, side, side);
    }
    char found[32];
    snprintf(found, sizeof found, "%dx%d", side, side);
    print_message("# %s\n", err.msg);
    assert_non_null(strstr(err.msg, found));
    assert_non_null(strstr(err.msg, "28x28"));
}

/* Whether this build runs CPU variant v here (the device variants have their own tests). */
static inline int can_run(const sl_variant *v)
{
    if (v->traits & SL_DEVICE)
        return 0;
    if (!v->requires)
        return 1;
    if (!strcmp(v->requires, "openmp"))
        return SL_HAVE_OPENMP;
    if (!strcmp(v->requires, "blas"))
        return SL_HAVE_BLAS;
    return 0;
}

/* Whether batch is one of the study's sweep sizes (what --sizes accepts). */
static inline int in_sweep(const sl_study *s, long batch)
{
    for (int i = 0; i < s->n_sweep_sizes; i++)
        if (s->sweep_sizes[i] == batch)
            return 1;
    return 0;
}

/* Variant v of s on its state st as the runner runs it: prepare, the check (*rel: its error, within the
 * study's tolerance), a warm-up run when warmup, reps timed runs, finish. The record, for the caller to
 * test and free. */
static inline sl_record *study_run(const sl_study *s, void *st, int v, int warmup, int reps, double *rel)
{
    const char *name = s->variants[v].name;
    sl_error err = {{0}};
    assert_int_equal(s->prepare ? s->prepare(st, v, &err) : 0, 0);
    *rel = -1;
    if (s->check(st, v, rel, &err) != 0)
        fail_msg("%s: check: %s", name, err.msg);
    if (!(*rel >= 0 && *rel <= s->tolerance))
        fail_msg("%s: check %g > %g", name, *rel, s->tolerance);
    sl_record *r = sl_record_new();
    if (warmup && s->run(st, v, r, &err) != 0) /* a warm-up: the runner does not time it */
        fail_msg("%s: warm-up: %s", name, err.msg);
    sl_record_timing(r, 1);
    for (int i = 0; i < reps; i++)
        if (s->run(st, v, r, &err) != 0)
            fail_msg("%s: run: %s", name, err.msg);
    sl_record_timing(r, 0);
    s->finish(st, v, r);
    return r;
}

/* Variant v of s on its state st at batch, as the batch-size sweep runs it: prepare, the check within
 * the study's tolerance, one timed run, finish. The record, for the caller to test and free. */
static inline sl_record *sweep_run(const sl_study *s, void *st, int v, long batch)
{
    const char *name = s->variants[v].name;
    sl_error err = {{0}};
    double rel = -1;
    assert_int_equal(s->prepare ? s->prepare(st, v, &err) : 0, 0);
    if (s->check(st, v, &rel, &err) != 0 || !(rel <= s->tolerance))
        fail_msg("%s at batch %ld: check %g: %s", name, batch, rel, err.msg);
    sl_record *r = sl_record_new();
    sl_record_timing(r, 1);
    if (s->run(st, v, r, &err) != 0)
        fail_msg("%s at batch %ld: run: %s", name, batch, err.msg);
    sl_record_timing(r, 0);
    s->finish(st, v, r);
    return r;
}

#endif
