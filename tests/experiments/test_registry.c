/*
 * test_registry.c: a variant is one row of its study's table (docs/developing.md, "Add a variant"):
 * the toy variant of fake_study.h, added as that recipe says, runs with its declared trait, and a row
 * left incomplete is refused at start-up, naming the study and the variant.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "fake_study.h"
#include "runner_test.h"

/* A row someone forgot to finish: its functions are missing. */
static const sl_variant broken_variants[] = {
    {"good", NULL, "sums the inputs", NULL, 0, &(const fake_kernels){fake_sum}},
    {"half", NULL, "a row without its functions", "good", 0, NULL},
};
static const sl_study broken_study = {
    .name = "broken", .title = "an incomplete study", .kind = SL_KERNEL, .size_name = "N",
    .sizes = fake_sizes, .n_sizes = 2, .baseline = "good", .tolerance = 1e-3,
    .variants = broken_variants, .n_variants = 2,
    .flops = fake_flops, .bytes = fake_bytes, .footprint = fake_footprint,
    .setup = fake_setup, .run = fake_run, .check = fake_check, .teardown = fake_teardown,
};
static const sl_study *const broken_registry[] = {&fake_study, &broken_study};

/* `speedlab ARGS...` with the fake registry (fake_study.h). */
#define speedlab(...) rt_speedlab(fake_registry, FAKE_N_REGISTRY, __VA_ARGS__)

/* `speedlab ARGS...` with the fake study and the broken one. */
#define speedlab_broken(...) rt_speedlab(broken_registry, 2, __VA_ARGS__)

/* The recipe of docs/developing.md: the toy variant is one kernel function and one row of fake_study.h.
 * It runs, is checked, records its declared trait, and its kernel gets --threads as a parameter, while
 * a one-thread variant's gets 1. */
static void test_toy_variant_is_one_row(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "fake", "--variants", "good,toy", "--sizes", "16", "--reps", "2",
                              "--min-time", "0", "--threads", "3", "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *toy = rt_find_case(all, "toy", 16), *good = rt_find_case(all, "good", 16);
    assert_string_equal(rt_str(toy, "status"), "ok");
    assert_string_equal(rt_str(toy, "builds_on"), "good");
    json_t *traits = json_object_get(toy, "traits");
    assert_int_equal(json_array_size(traits), 1);
    assert_string_equal(json_string_value(json_array_get(traits, 0)), "threaded");
    assert_int_equal(json_integer_value(json_object_get(toy, "threads")), 3);
    assert_int_equal(json_integer_value(json_object_get(good, "threads")), 1);
    json_t *tm = json_object_get(toy, "metrics"), *gm = json_object_get(good, "metrics");
    assert_true(json_number_value(json_object_get(tm, "threads_seen")) == 3.0);
    assert_true(json_number_value(json_object_get(gm, "threads_seen")) == 1.0);
    assert_true(json_number_value(json_object_get(tm, "sum")) == json_number_value(json_object_get(gm, "sum")));
    json_decref(all);
}

/* An incomplete row is refused at start-up, naming the study and the variant, by list and run alike,
 * before any case runs; the fake studies' rows all pass. */
static void test_incomplete_row_refused(void **state)
{
    (void)state;
    char why[512];
    assert_int_equal(sl_study_validate(&fake_study, why, sizeof why), 0);
    assert_int_equal(sl_study_validate(&slow_study, why, sizeof why), 0);
    assert_int_equal(sl_study_validate(&trainer_study, why, sizeof why), 0);
    assert_int_equal(sl_study_validate(&broken_study, why, sizeof why), -1);
    assert_non_null(strstr(why, "study 'broken', variant 'half'"));
    assert_int_equal(speedlab_broken("list", NULL), 1);
    assert_non_null(strstr(rt_errbuf, "study 'broken', variant 'half'"));
    assert_int_equal(speedlab_broken("run", "fake", "--quick", "--out", rt_out_dir, NULL), 1);
    assert_non_null(strstr(rt_errbuf, "study 'broken', variant 'half'"));

    /* the other ways a row can be incomplete or wrong, each named */
    const fake_kernels k = {fake_sum};
    const struct { sl_variant row; const char *what; } wrong[] = {
        {{"x", NULL, "", NULL, 0, &k}, "no description"},
        {{"x", "cuda", "d", NULL, 0, &k}, "SL_DEVICE"},
        {{"x", NULL, "d", NULL, SL_DEVICE, &k}, "SL_DEVICE"},
        {{"x", NULL, "d", "turbo", 0, &k}, "builds_on 'turbo'"},
        {{"x", "quantum", "d", NULL, 0, &k}, "unknown requirement"},
        {{"good", NULL, "d", NULL, 0, &k}, "name is taken"},
        {{"x", "openmp", "d", NULL, 0, &k}, "SL_THREADED"},
        /* a framework baseline on a GPU (python:MODULE@DEVICE) is a GPU row, and the reverse */
        {{"x", "python:torch@cuda", "d", NULL, SL_EXTERNAL, &k}, "requires a GPU but lacks the SL_DEVICE trait"},
        {{"x", "python:torch", "d", NULL, SL_EXTERNAL | SL_DEVICE, &k}, "python:MODULE@DEVICE"},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        sl_variant rows[2] = {fake_variants[0], wrong[i].row};
        sl_study s = broken_study;
        s.variants = rows;
        assert_int_equal(sl_study_validate(&s, why, sizeof why), -1);
        assert_non_null(strstr(why, "study 'broken', variant '"));
        if (!strstr(why, wrong[i].what))
            fail_msg("row %zu: '%s' does not say '%s'", i, why, wrong[i].what);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_toy_variant_is_one_row),
        cmocka_unit_test(test_incomplete_row_refused),
    };
    return cmocka_run_group_tests_name("registry", tests, rt_setup_dir, rt_remove_dir);
}
