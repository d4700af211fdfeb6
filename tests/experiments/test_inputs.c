/*
 * test_inputs.c: values given to `speedlab run`: every --param parsed into its
 * declared type and range before the first case of any chosen study, so a bad one leaves no run
 * directory; records hold the value that ran; seeds take all of 0..2^64-1, digits only, and are stored
 * exactly; a row whose default does not parse is refused by the registry self-check.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "fake_study.h"
#include "params.h"
#include "runner_test.h"

#define speedlab(...) rt_speedlab(fake_registry, FAKE_N_REGISTRY, __VA_ARGS__)

/* A fresh --out directory per call (the group shares one temporary directory). */
static const char *fresh_out(void)
{
    static char dir[PATH_MAX + 32];
    static int k;
    snprintf(dir, sizeof dir, "%s/inputs-%d", rt_tmpdir, k++);
    return dir;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Refused with exit 2 before anything ran: stderr names every piece of want[], no run directory. */
static void refused(const char *const *argv, const char *const *want)
{
    const char *out = fresh_out();
    const char *a[16] = {0};
    int n = 0;
    while (argv[n])
        a[n] = argv[n], n++;
    a[n++] = "--out", a[n++] = out, a[n] = NULL;
    int rc = speedlab(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], NULL);
    if (rc != 2)
        fail_msg("%s %s %s: exit %d, want 2 (stderr: %s)", a[1], a[2], a[3], rc, rt_errbuf);
    for (int i = 0; want[i]; i++)
        if (!strstr(rt_errbuf, want[i]))
            fail_msg("stderr does not say '%s': %s", want[i], rt_errbuf);
    if (exists(out))
        fail_msg("a run directory was made in %s although the value was refused", out);
}

static void test_param_out_of_range_refused(void **state)
{
    (void)state;
    /* 4294967304 = 2^32 + 8: an int cast once made it 8 */
    refused((const char *[]){"run", "fake", "--param", "scale=4294967304", NULL},
            (const char *[]){"--param scale=4294967304", "study fake", "from 0 to 1000", NULL});
    refused((const char *[]){"run", "fake", "--param", "scale= 5", NULL}, (const char *[]){"scale= 5", NULL});
    refused((const char *[]){"run", "fake", "--param", "scale=+5", NULL}, (const char *[]){"scale=+5", NULL});
    refused((const char *[]){"run", "fake", "--param", "scale=-1", NULL}, (const char *[]){"scale=-1", NULL});
    refused((const char *[]){"run", "fake", "--param", "scale=5x", NULL}, (const char *[]){"scale=5x", NULL});
}

/* The bad value belongs to the second study: refused before the first study's cases run. */
static void test_param_checked_before_first_case(void **state)
{
    (void)state;
    refused((const char *[]){"run", "fake", "trainer", "--param", "scale=2000", NULL},
            (const char *[]){"scale=2000", NULL});
    refused((const char *[]){"run", "slow", "fake", "--param", "scale=2000", NULL},
            (const char *[]){"study fake", NULL});
}

static void test_record_holds_parsed_value(void **state)
{
    (void)state;
    const char *out = fresh_out();
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--sizes", "8", "--param", "scale=007",
                              "--min-time", "0", "--out", out, NULL), 0);
    json_t *all = rt_read_latest(out);
    assert_string_equal(rt_str(json_object_get(rt_find_case(all, "good", 8), "params"), "scale"), "7");
    json_decref(all);
}

/* The record's seed for `--seed text`. */
static json_t *seed_of(const char *text)
{
    const char *out = fresh_out();
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--sizes", "8", "--seed", text,
                              "--min-time", "0", "--out", out, NULL), 0);
    json_t *all = rt_read_latest(out);
    json_t *seed = json_incref(json_object_get(rt_find_case(all, "good", 8), "seed"));
    json_decref(all);
    return seed;
}

static void test_seed_full_range_exact(void **state)
{
    (void)state;
    json_t *s = seed_of("9223372036854775807"); /* 2^63-1: still an integer */
    assert_true(json_is_integer(s));
    assert_true(json_integer_value(s) == INT64_MAX);
    json_decref(s);
    s = seed_of("18446744073709551615"); /* 2^64-1: was stored as -1 */
    assert_true(json_is_string(s));
    assert_string_equal(json_string_value(s), "18446744073709551615");
    json_decref(s);
    s = seed_of("9223372036854775808"); /* 2^63: was negative */
    assert_string_equal(json_string_value(s), "9223372036854775808");
    json_decref(s);
}

static void test_seed_digits_only(void **state)
{
    (void)state;
    const char *bad[] = {" -5", "-5", "+5", " 5", "18446744073709551616", "", "5 ", "0x10"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        refused((const char *[]){"run", "fake", "--seed", bad[i], NULL},
                (const char *[]){"--seed", "18446744073709551615", NULL});
}

/* The parser itself, on values that once crashed a run or were taken as something else. */
static void test_parse_types(void **state)
{
    (void)state;
    sl_param i = {"n", "1", "", SL_INT(1, 64)}, r = {"x", "1", "", SL_REAL(0, 10)};
    sl_param t = {"c", "warm", "", SL_TEXT("warm|cold")};
    sl_param_value v;
    char why[160];
    assert_int_equal(sl_param_parse(&i, "8", &v, why, sizeof why), 0);
    assert_int_equal(v.i, 8);
    const char *bad_int[] = {"4294967304", "4294967316", "99999999999999999999", "8.0", "", "1e1", "0", "65"};
    for (size_t k = 0; k < sizeof bad_int / sizeof *bad_int; k++) {
        assert_int_equal(sl_param_parse(&i, bad_int[k], &v, why, sizeof why), -1);
        assert_non_null(strstr(why, "from 1 to 64"));
    }
    assert_int_equal(sl_param_parse(&r, "1e-1", &v, why, sizeof why), 0);
    assert_true(v.d == 0.1);
    const char *bad_real[] = {"-1", "nan", "inf", "1e400", "10.5", "1,5"};
    for (size_t k = 0; k < sizeof bad_real / sizeof *bad_real; k++)
        assert_int_equal(sl_param_parse(&r, bad_real[k], &v, why, sizeof why), -1);
    assert_int_equal(sl_param_parse(&t, "cold", &v, why, sizeof why), 0);
    assert_int_equal(sl_param_parse(&t, "hot", &v, why, sizeof why), -1);
    assert_non_null(strstr(why, "warm|cold"));
}

/* One value, one text: the form the record holds and the plan's cases file writes, whatever was typed
 * (a planned case whose text differs from its record's is never found, and is run again forever). */
static void test_canonical_forms(void **state)
{
    (void)state;
    sl_param rows[] = {{"n", "1", "", SL_INT(0, 64)}, {"x", "1", "", SL_REAL(-10, 20)},
                       {"c", "warm", "", SL_TEXT("warm|cold")}};
    sl_study s = fake_study;
    s.params = rows;
    s.n_params = 3;
    const struct { int row; const char *given, *want; } cases[] = {
        {0, "08", "8"}, {0, "-0", "0"}, {1, "1.0", "1"}, {1, "0x10", "16"}, {1, "-0", "0"},
        {1, "1e-2", "0.01"}, {1, "0.10", "0.1"}, {2, "cold", "cold"}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *name = rows[cases[k].row].name, *val = cases[k].given;
        sl_opts o = {.n_params = 1, .param_names = &name, .param_values = &val};
        char out[64];
        sl_param_canonical(&o, &s, &rows[cases[k].row], out, sizeof out);
        assert_string_equal(out, cases[k].want);
    }
}

/* A study whose declared default does not parse would fail every case: the self-check says so. */
static void test_bad_default_refused(void **state)
{
    (void)state;
    sl_param rows[] = {{"scale", "100000", "too large a default", SL_INT(0, 1000)}};
    sl_study s = fake_study;
    s.params = rows;
    s.n_params = 1;
    char why[512];
    assert_int_equal(sl_study_validate(&s, why, sizeof why), -1);
    assert_non_null(strstr(why, "scale"));
    assert_non_null(strstr(why, "100000"));
    assert_int_equal(sl_study_validate(&fake_study, why, sizeof why), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_out_of_range_refused),
        cmocka_unit_test(test_param_checked_before_first_case),
        cmocka_unit_test(test_record_holds_parsed_value),
        cmocka_unit_test(test_seed_full_range_exact),
        cmocka_unit_test(test_seed_digits_only),
        cmocka_unit_test(test_parse_types),
        cmocka_unit_test(test_bad_default_refused),
        cmocka_unit_test(test_canonical_forms),
    };
    return cmocka_run_group_tests_name("inputs", tests, rt_setup_dir, rt_remove_dir);
}
