/*
 * tests/pipeline/test_pipeline.c: the pipeline study (seed 003, part 1) through the sl_study interface,
 * on small MNIST-format files the test writes (tests/data/idx_files.h):
 *  - raw files only: every variant passes its check, records its metrics and notes, gzip reads a gzip
 *    copy setup wrote and says so, and the record's work is the bytes the variant read;
 *  - a .gz only: read and mmap load a raw copy setup wrote, and say so;
 *  - cache=cold: the file is evicted before each load and the record says how (cold_method);
 *  - a bad --param cache value, a missing directory and a truncated file: clear errors.
 */
#define _GNU_SOURCE /* mkdtemp, truncate */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

#include "record.h"
#include "study.h"

#include "../data/idx_files.h"

static char raw_dir[64], gz_dir[64], bad_dir[64];


static idx_set synthetic(long n, int side, uint32_t seed) { return idx_files_stripes(n, side, seed, 8); }

/* dir/train-images-idx3-ubyte.gz from dir's raw file, then the raw file removed: a .gz-only set. */
static void gzip_images(const char *dir)
{
    char raw[128], gz[136];
    snprintf(raw, sizeof raw, "%s/train-images-idx3-ubyte", dir);
    snprintf(gz, sizeof gz, "%s.gz", raw);
    FILE *in = fopen(raw, "rb");
    gzFile out = gzopen(gz, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char b[4096];
    size_t k;
    while ((k = fread(b, 1, sizeof b, in)) > 0)
        assert_int_equal(gzwrite(out, b, (unsigned)k), (int)k);
    fclose(in);
    assert_int_equal(gzclose(out), Z_OK);
    unlink(raw);
}

static void make_dir(char *dir, const char *tmpl, uint32_t seed)
{
    snprintf(dir, 64, "%s", tmpl);
    assert_non_null(mkdtemp(dir));
    idx_set tr = synthetic(300, 28, seed), te = synthetic(50, 28, seed + 1);
    idx_files_write(dir, "train", &tr);
    idx_files_write(dir, "t10k", &te);
    idx_set_free(&tr), idx_set_free(&te);
}

static int make_data(void **state)
{
    (void)state;
    make_dir(raw_dir, "/tmp/sl_pl_raw_XXXXXX", 1);
    make_dir(gz_dir, "/tmp/sl_pl_gz_XXXXXX", 2);
    gzip_images(gz_dir);
    make_dir(bad_dir, "/tmp/sl_pl_bad_XXXXXX", 3);
    char p[128]; /* cut the image file short: the header promises 300 images */
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte", bad_dir);
    assert_int_equal(truncate(p, 16 + 100 * 28 * 28), 0);
    return 0;
}

static int drop_data(void **state)
{
    (void)state;
    char p[128];
    snprintf(p, sizeof p, "%s/train-images-idx3-ubyte.gz", gz_dir);
    unlink(p);
    idx_files_remove(raw_dir), idx_files_remove(gz_dir), idx_files_remove(bad_dir);
    return 0;
}

static sl_opts opts(const char *dir, const char **names, const char **values, int n)
{
    return (sl_opts){.seed = 1, .threads = 1, .data_dir = dir, .n_params = n, .param_names = names,
                     .param_values = values};
}

static int has_note(const sl_record *r, const char *text)
{
    for (size_t i = 0; i < json_array_size(r->notes); i++)
        if (strstr(json_string_value(json_array_get(r->notes, i)), text))
            return 1;
    return 0;
}

static double metric(const sl_record *r, const char *name)
{
    json_t *m = json_object_get(r->metrics, name);
    if (!m)
        fail_msg("no metric %s", name);
    return json_number_value(m);
}

/* One case as the runner drives it: prepare, the check after an untimed load, two timed loads, finish. */
static sl_record *run_case(const sl_study *s, void *st, int v)
{
    sl_error err = {{0}};
    const char *name = s->variants[v].name;
    if (s->prepare(st, v, &err))
        fail_msg("%s: prepare: %s", name, err.msg);
    sl_record *r = sl_record_new();
    double rel = -1;
    if (s->before_rep(st, v, &err) || s->run(st, v, r, &err) || s->check(st, v, &rel, &err))
        fail_msg("%s: check: %s", name, err.msg);
    if (!(rel >= 0 && rel <= s->tolerance))
        fail_msg("%s: check %g > %g", name, rel, s->tolerance);
    sl_record_timing(r, 1);
    for (int k = 0; k < 2; k++)
        if (s->before_rep(st, v, &err) || s->run(st, v, r, &err))
            fail_msg("%s: timed load: %s", name, err.msg);
    sl_record_timing(r, 0);
    s->finish(st, v, r);
    s->release(st, v);
    return r;
}

/* The record's work after the runner's merge: the declared bytes, or the variant's own. */
static double merged_bytes(const sl_study *s, const sl_opts *o, const sl_record *r)
{
    json_t *out = json_pack("{s:{s:f}}", "work", "bytes", s->bytes(1, o));
    sl_record_merge(r, out);
    double b = json_number_value(json_object_get(json_object_get(out, "work"), "bytes"));
    assert_null(json_object_get(json_object_get(out, "work"), "scale"));
    json_decref(out);
    return b;
}

static void test_every_variant(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("pipeline");
    assert_non_null(s);
    sl_opts o = opts(raw_dir, NULL, NULL, 0);
    sl_error err = {{0}};
    void *st = s->setup(1, &o, &err);
    if (!st)
        fail_msg("setup: %s", err.msg);
    const double raw = 16 + 300 * 28 * 28;
    assert_true(s->bytes(1, &o) == raw);
    for (int v = 0; v < s->n_variants; v++) {
        const char *name = s->variants[v].name;
        sl_record *r = run_case(s, st, v);
        assert_true(metric(r, "load_s") > 0 && metric(r, "images_per_s") > 0 && metric(r, "data_mb_per_s") > 0);
        assert_true(metric(r, "mlp_epoch_ratio") > 0 && metric(r, "cnn_epoch_ratio") > 0);
        assert_true(metric(r, "cold") == 0);
        assert_true(has_note(r, "cold_method: none"));
        double work = merged_bytes(s, &o, r);
        if (!strcmp(name, "decode")) {
            assert_null(json_object_get(r->metrics, "file_mb_per_s"));
            assert_true(work == 5.0 * 300 * 28 * 28); /* a byte in, a float out */
        } else {
            assert_true(metric(r, "file_mb_per_s") > 0);
            assert_true(metric(r, "resident_fraction") >= 0);
            if (!strcmp(name, "gzip")) {
                assert_true(has_note(r, "setup wrote a gzip copy"));
                assert_true(work == metric(r, "file_bytes") && work < raw); /* the compressed bytes */
            } else {
                assert_true(work == raw && metric(r, "file_bytes") == raw);
            }
        }
        print_message("# %-6s %.3g MB/s of the file, %.3g images/s\n", name,
                      json_number_value(json_object_get(r->metrics, "file_mb_per_s")), metric(r, "images_per_s"));
        sl_record_free(r);
    }
    s->teardown(st);
}

static void test_gz_only_gets_a_raw_copy(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("pipeline");
    sl_opts o = opts(gz_dir, NULL, NULL, 0);
    sl_error err = {{0}};
    void *st = s->setup(1, &o, &err);
    if (!st)
        fail_msg("setup: %s", err.msg);
    for (int v = 0; v < s->n_variants; v++) {
        sl_record *r = run_case(s, st, v);
        const char *name = s->variants[v].name;
        int raw_reader = !strcmp(name, "read") || !strcmp(name, "mmap");
        assert_int_equal(has_note(r, "has only the .gz: setup wrote a raw copy once"), raw_reader);
        assert_false(has_note(r, "gzip copy"));
        sl_record_free(r);
    }
    s->teardown(st);
}

static void test_cold(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("pipeline");
    const char *names[] = {"cache"}, *values[] = {"cold"};
    sl_opts o = opts(raw_dir, names, values, 1);
    sl_error err = {{0}};
    void *st = s->setup(1, &o, &err);
    if (!st)
        fail_msg("setup: %s", err.msg);
    for (int v = 0; v < s->n_variants; v++) {
        sl_record *r = run_case(s, st, v);
        int file = strcmp(s->variants[v].name, "decode") != 0;
        assert_true(metric(r, "cold") == file);
        assert_true(has_note(r, file ? "cold_method: posix_fadvise(POSIX_FADV_DONTNEED)" : "cold_method: none"));
        if (file)
            print_message("# cold %-5s: %.2f of the file cached at the start of a load, drop_caches %s\n",
                          s->variants[v].name, metric(r, "resident_fraction"),
                          metric(r, "cold_drop_caches") ? "written" : "not written");
        sl_record_free(r);
    }
    s->teardown(st);
}

static void test_bad_param(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("pipeline");
    const char *names[] = {"cache"}, *values[] = {"lukewarm"};
    sl_opts o = opts(raw_dir, names, values, 1);
    sl_error err = {{0}};
    assert_null(s->setup(1, &o, &err));
    print_message("# %s\n", err.msg);
    assert_non_null(strstr(err.msg, "--param cache=lukewarm"));
    assert_non_null(strstr(err.msg, "warm or cold"));
}

static void test_missing_and_broken(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("pipeline");
    sl_opts o = opts("/nonexistent/fashion", NULL, NULL, 0);
    sl_error err = {{0}};
    assert_null(s->setup(1, &o, &err));
    print_message("# %s\n", err.msg);
    assert_non_null(strstr(err.msg, "/nonexistent/fashion/train-images-idx3-ubyte"));
    assert_non_null(strstr(err.msg, "--data"));
    o = opts(bad_dir, NULL, NULL, 0);
    assert_null(s->setup(1, &o, &err));
    print_message("# %s\n", err.msg);
    assert_non_null(strstr(err.msg, bad_dir));
    assert_non_null(strstr(err.msg, "truncated"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_variant),
        cmocka_unit_test(test_gz_only_gets_a_raw_copy),
        cmocka_unit_test(test_cold),
        cmocka_unit_test(test_bad_param),
        cmocka_unit_test(test_missing_and_broken),
    };
    return cmocka_run_group_tests(tests, make_data, drop_data);
}
