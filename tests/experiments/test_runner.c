/*
 * test_runner.c: the speedlab runner driven through sl_main with a fake registry (fake_study.h):
 * records and their schema fields, failed checks, unavailable variants, bad input (exit 2 with the valid
 * names), the memory refusal before setup, new run directories, SIGINT, and the statistics. The variant
 * rows themselves (the toy variant, incomplete rows) are test_registry.c's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "avail.h"
#include "commands.h"
#include "counters.h"
#include "fake_study.h"
#include "gpu.h"
#include "record.h"
#include "runner_test.h"
#include "sl_config.h"
#include "stats.h"

/* `speedlab ARGS...` with the fake registry (fake_study.h). */
#define speedlab(...) rt_speedlab(fake_registry, FAKE_N_REGISTRY, __VA_ARGS__)

/* ---- records ------------------------------------------------------------------------------------ */

static void test_records_schema(void **state)
{
    (void)state;
    int rc = speedlab("run", "fake", "--sizes", "8,16", "--min-time", "0", "--reps", "3", "--out", rt_out_dir,
                      NULL);
    assert_int_equal(rc, 1); /* "bad" failed its check: non-zero at the end, after every case ran */
    json_t *all = rt_read_latest(rt_out_dir);
    assert_int_equal(json_array_size(all), 2 * FAKE_N_VARIANTS); /* every variant x 2 sizes */

    json_t *good = rt_find_case(all, "good", 16);
    assert_string_equal(rt_str(good, "schema"), "speedlab-results");
    assert_int_equal(json_integer_value(json_object_get(good, "schema_version")), 1);
    assert_string_equal(rt_str(good, "kind"), "case");
    assert_true(strncmp(rt_str(good, "run_id"), "run-", 4) == 0);
    assert_string_equal(rt_str(good, "status"), "ok");
    assert_string_equal(rt_str(good, "size_name"), "N");
    assert_string_equal(rt_str(good, "baseline"), "good");
    assert_null(json_object_get(good, "builds_on")); /* a starting point: the field is absent */
    assert_int_equal(json_array_size(json_object_get(good, "traits")), 0); /* declared none */
    json_t *env = json_object_get(good, "env");
    assert_non_null(json_object_get(env, "host"));
    assert_true(json_integer_value(json_object_get(env, "cpu_cores")) >= 1);
    assert_non_null(json_object_get(env, "speedlab_version"));
    assert_non_null(json_object_get(env, "date"));
    assert_int_equal(json_integer_value(json_object_get(good, "reps")), 3);
    assert_int_equal(json_array_size(json_object_get(good, "times_s")), 3);
    assert_int_equal(json_integer_value(json_object_get(good, "threads")), 1);
    json_t *st = json_object_get(good, "stats");
    for (const char *const *k = (const char *const[]){"median_s", "mean_s", "std_s", "min_s", "max_s", "cv", NULL};
         *k; k++)
        assert_true(json_is_number(json_object_get(st, *k)));
    json_t *work = json_object_get(good, "work");
    assert_true(json_number_value(json_object_get(work, "flops")) == 32.0);
    assert_true(json_number_value(json_object_get(work, "bytes")) == 64.0);
    json_t *rates = json_object_get(good, "rates");
    assert_true(json_number_value(json_object_get(rates, "ai")) == 0.5);
    assert_true(json_number_value(json_object_get(rates, "gflops")) > 0);
    assert_true(json_is_true(json_object_get(json_object_get(good, "check"), "passed")));
    assert_string_equal(rt_str(json_object_get(good, "params"), "scale"), "2");
    assert_true(json_number_value(json_object_get(json_object_get(good, "metrics"), "sum")) > 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(good, "notes"), 0)), "fake note");
    assert_true(json_is_object(json_object_get(good, "profile")));
    /* the runner records the case's peak memory for every study, kernel ones included */
    assert_true(json_integer_value(json_object_get(good, "peak_rss_bytes")) > 0);
    const char *scope = rt_str(good, "peak_rss_scope");
    assert_true(strcmp(scope, "case") == 0 || strcmp(scope, "process") == 0);

    /* A failed check: the error and rel_err, and no time of any kind. */
    json_t *bad = rt_find_case(all, "bad", 8);
    assert_string_equal(rt_str(bad, "status"), "failed");
    assert_string_equal(rt_str(bad, "builds_on"), "good");
    assert_non_null(strstr(rt_str(bad, "error"), "tolerance"));
    json_t *chk = json_object_get(bad, "check");
    assert_true(json_number_value(json_object_get(chk, "rel_err")) == 1.0);
    assert_true(json_is_false(json_object_get(chk, "passed")));
    assert_null(json_object_get(bad, "times_s"));
    assert_null(json_object_get(bad, "stats"));
    assert_null(json_object_get(bad, "rates"));

    /* A variant that cannot run here is not a failure. */
    json_t *gpu = rt_find_case(all, "gpu", 8);
    char why[256];
    if (!sl_gpu_available(why, sizeof why)) {
        assert_string_equal(rt_str(gpu, "status"), "unavailable");
        assert_true(strncmp(rt_str(gpu, "error"), "cuda: ", 6) == 0);
        assert_null(json_object_get(gpu, "times_s"));
    }
    assert_string_equal(json_string_value(json_array_get(json_object_get(gpu, "traits"), 0)), "device");
    json_decref(all);
}

static void test_ok_run_exits_zero(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "fake", "--variants", "good,gpu", "--quick", "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    assert_int_equal(json_array_size(all), 2); /* --quick: the quick size 4 only */
    assert_string_equal(rt_str(rt_find_case(all, "good", 4), "status"), "ok");
    assert_null(strstr(rt_errbuf, "case 1 of")); /* no progress output when stderr is not a terminal */
    json_decref(all);
}

/* run --calibrate: the calibration record comes first, with plausible ceilings, and the GPU's or why
 * there are none. */
static void test_calibration_record(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--quick", "--calibrate", "--threads", "2",
                              "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    assert_int_equal(json_array_size(all), 2);
    json_t *cal = json_array_get(all, 0);
    assert_string_equal(rt_str(cal, "kind"), "calibration");
    assert_string_equal(rt_str(cal, "schema"), "speedlab-results");
    assert_non_null(json_object_get(cal, "env"));
    json_t *c = json_object_get(cal, "ceilings");
    /* Loose bounds: any machine that builds this does better, and no memory system does 10 TB/s. */
    double tr1 = json_number_value(json_object_get(c, "triad_gbs_1t"));
    double fma1 = json_number_value(json_object_get(c, "fma_gflops_1t"));
    double fma = json_number_value(json_object_get(c, "fma_gflops"));
    assert_true(tr1 > 0.5 && tr1 < 10000);
    assert_true(json_number_value(json_object_get(c, "triad_gbs")) > 0.5);
    assert_true(fma1 > 1 && fma1 < 100000);
    assert_true(fma > 0.5 * fma1);
    /* The GPU's: on a device every figure is measured (> 0) or absent with its reason in gpu.missing;
     * without one (or without CUDA) no GPU figure at all, and gpu_missing says why. Never a zero. */
    json_t *g = json_object_get(c, "gpu"), *why = json_object_get(c, "gpu_missing");
    assert_true(!g != !why);
    if (why) {
        assert_true(json_is_string(why) && json_string_length(why) > 0);
    } else {
        static const char *keys[] = {"triad_gbs", "d2d_gbs", "fma_gflops", "cublas_sgemm_gflops", "tc_fp16_gflops",
                                     "tc_bf16_gflops", "h2d_pageable_gbs", "h2d_pinned_gbs", "d2h_pageable_gbs",
                                     "d2h_pinned_gbs"};
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
            json_t *v = json_object_get(g, keys[i]);
            if (v)
                assert_true(json_number_value(v) > 0);
            else
                assert_true(json_is_string(json_object_get(json_object_get(g, "missing"), keys[i])));
        }
    }
    assert_string_equal(rt_str(json_array_get(all, 1), "kind"), "case");
    json_decref(all);
}

static void test_param_flag(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--sizes", "8", "--param", "scale=7",
                              "--min-time", "0", "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    assert_string_equal(rt_str(json_object_get(rt_find_case(all, "good", 8), "params"), "scale"), "7");
    json_decref(all);
}

/* Whether name is in the array arr (of strings, or of objects with "name"). */
static int listed(json_t *arr, const char *name)
{
    size_t i;
    json_t *a;
    json_array_foreach(arr, i, a) {
        const char *s = json_is_object(a) ? json_string_value(json_object_get(a, "name")) : json_string_value(a);
        if (s && strcmp(s, name) == 0)
            return 1;
    }
    return 0;
}

/* --counters with a software event: when the profile's regions counted it, the record has it per
 * repetition and positive, and does not call it absent. Where PAPI cannot count it (no PAPI, or
 * perf_event disabled), the record must list it absent: never a zero stand-in. */
static void test_counters_counted_in_record(void **state)
{
    (void)state;
    const char *ev = "perf::TASK-CLOCK";
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--sizes", "16", "--min-time", "0",
                              "--counters", ev, "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, "good", 16);
    json_t *profile = json_object_get(r, "profile");
    int absent = listed(json_object_get(r, "counters_absent"), ev);
    if (!SL_HAVE_PAPI || !listed(json_object_get(profile, "counters"), ev)) {
        /* meson's TAP reads cmocka's skip as a failure: say why and pass */
        print_message("# SKIP record counters: %s cannot count %s here\n",
                      SL_HAVE_PAPI ? "PAPI" : "a build without PAPI", ev);
        assert_true(absent);
        json_decref(all);
        return;
    }
    json_t *v = json_object_get(json_object_get(r, "counters"), ev);
    if (!v)
        fail_msg("the profile counted %s but the record lists it %s", ev, absent ? "absent" : "nowhere");
    assert_true(json_number_value(v) > 0);
    assert_false(absent);
    json_decref(all);
}

/* The profile's regions are a flat list with array paths (docs/profile-schema.md): the case's region
 * is found by its whole path, not by a sibling or a parent sharing a name. */
static void test_profile_region_by_path(void **state)
{
    (void)state;
    json_t *profile = json_loads(
        "{\"regions\": ["
        "{\"path\": [\"s\"], \"name\": \"s\", \"depth\": 0},"
        "{\"path\": [\"s\", \"v\"], \"name\": \"v\", \"depth\": 1},"
        "{\"path\": [\"s\", \"v\", \"N=8\"], \"name\": \"N=8\", \"depth\": 2, \"counters\": {\"e\": 1}},"
        "{\"path\": [\"s\", \"v\", \"N=16\"], \"name\": \"N=16\", \"depth\": 2, \"counters\": {\"e\": 2}}]}",
        0, NULL);
    assert_non_null(profile);
    const char *path[3] = {"s", "v", "N=16"};
    json_t *node = sl_profile_region(profile, path, 3);
    assert_non_null(node);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(node, "counters"), "e")), 2);
    assert_non_null(sl_profile_region(profile, path, 2));
    const char *none[3] = {"s", "w", "N=16"};
    assert_null(sl_profile_region(profile, none, 3));
    json_decref(profile);
}

/* ---- bad input ---------------------------------------------------------------------------------- */

static void test_unknown_names_exit_2(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "nosuch", "--out", rt_out_dir, NULL), 2);
    assert_non_null(strstr(rt_errbuf, "nosuch"));
    assert_non_null(strstr(rt_errbuf, "fake"));
    assert_non_null(strstr(rt_errbuf, "slow"));

    assert_int_equal(speedlab("run", "fake", "--variants", "good,turbo", "--out", rt_out_dir, NULL), 2);
    assert_non_null(strstr(rt_errbuf, "turbo"));
    assert_non_null(strstr(rt_errbuf, "good bad gpu"));

    assert_int_equal(speedlab("run", "fake", "--sizes", "7", "--out", rt_out_dir, NULL), 2);
    assert_non_null(strstr(rt_errbuf, "unknown size 7"));
    assert_non_null(strstr(rt_errbuf, "8 16 99"));
    assert_non_null(strstr(rt_errbuf, "sweep: 32 8")); /* the sizes --sizes also takes */

    assert_int_equal(speedlab("run", "fake", "--param", "nope=1", "--out", rt_out_dir, NULL), 2);
    assert_non_null(strstr(rt_errbuf, "scale"));

    assert_int_equal(speedlab("list", "nosuch", NULL), 2);
    assert_int_equal(speedlab("frobnicate", NULL), 2);
    assert_non_null(strstr(rt_errbuf, "run"));
}

static void test_bad_flag_values_exit_2(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "fake", "--reps", "0", NULL), 2);
    assert_non_null(strstr(rt_errbuf, "--reps"));
    assert_int_equal(speedlab("run", "fake", "--min-time", "-1", NULL), 2);
    assert_non_null(strstr(rt_errbuf, "--min-time"));
    assert_int_equal(speedlab("run", "fake", "--threads", "two", NULL), 2);
    assert_non_null(strstr(rt_errbuf, "--threads"));
    assert_int_equal(speedlab("run", "fake", "--sizes", "8,,16", NULL), 2);
    assert_int_equal(speedlab("run", "fake", "--frob", NULL), 2);
    assert_non_null(strstr(rt_errbuf, "--frob"));
    assert_int_equal(speedlab("run", NULL), 2);
    assert_int_equal(speedlab("run", "fake", "--data", "/nonexistent/speedlab", NULL), 2);
    assert_non_null(strstr(rt_errbuf, "--data"));
    assert_int_equal(speedlab("calibrate", "--threads", "0", NULL), 2);
}

static void test_help_everywhere(void **state)
{
    (void)state;
    assert_int_equal(speedlab("--help", NULL), 0);
    assert_int_equal(speedlab("help", "run", NULL), 0);
    assert_int_equal(speedlab("run", "--help", NULL), 0);
    assert_int_equal(speedlab("list", "--help", NULL), 0);
    assert_int_equal(speedlab("calibrate", "--help", NULL), 0);
    assert_int_equal(speedlab("list", NULL), 0);
}

/* A sweep size runs when --sizes names it, in the order given, each size once; a plain run leaves it
 * out (fake's sizes 8, 16, 99 and quick 4 only). */
static void test_sweep_sizes_only_when_named(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--sizes", "32,8", "--reps", "1", "--min-time",
                              "0", "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    assert_int_equal(json_array_size(all), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(all, 0), "size")), 32);
    assert_string_equal(rt_str(rt_find_case(all, "good", 32), "status"), "ok");
    assert_non_null(rt_find_case(all, "good", 8));
    json_decref(all);
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--quick", "--out", rt_out_dir, NULL), 0);
    all = rt_read_latest(rt_out_dir);
    for (size_t i = 0; i < json_array_size(all); i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(all, i), "size")), 4);
    json_decref(all);
}

/* --rounds 2: the whole list twice, round 1's cases before round 2's, each record saying its round;
 * a run without it writes neither field; plan refuses it (a plan runs each case once). */
static void test_rounds(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "fake", "--variants", "good,toy", "--sizes", "8,16", "--reps", "1",
                              "--min-time", "0", "--rounds", "2", "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    assert_int_equal(json_array_size(all), 2 * 2 * 2);
    for (size_t i = 0; i < json_array_size(all); i++) {
        json_t *r = json_array_get(all, i);
        assert_int_equal(json_integer_value(json_object_get(r, "round")), i < 4 ? 1 : 2);
        assert_int_equal(json_integer_value(json_object_get(r, "rounds")), 2);
        assert_string_equal(rt_str(r, "status"), "ok");
    }
    const char *order[] = {"good", "toy", "good", "toy"}; /* each round: sizes, then variants */
    for (size_t i = 0; i < 8; i++)
        assert_string_equal(rt_str(json_array_get(all, i), "variant"), order[i % 4]);
    json_decref(all);
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--sizes", "8", "--reps", "1", "--min-time",
                              "0", "--out", rt_out_dir, NULL), 0);
    all = rt_read_latest(rt_out_dir);
    assert_null(json_object_get(json_array_get(all, 0), "round"));
    json_decref(all);
    assert_int_equal(speedlab("run", "fake", "--rounds", "0", NULL), 2);
    assert_non_null(strstr(rt_errbuf, "--rounds"));
    assert_int_equal(speedlab("plan", "fake", "--rounds", "2", NULL), 2);
    assert_non_null(strstr(rt_errbuf, "--pool"));
}

/* The 1 EB footprint of size 99 is refused before setup (whose call would abort the child). */
static void test_footprint_refused_before_setup(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--sizes", "99", "--out", rt_out_dir, NULL), 0);
    assert_non_null(strstr(rt_errbuf, "MemAvailable"));
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, "good", 99);
    assert_string_equal(rt_str(r, "status"), "skipped");
    assert_non_null(strstr(rt_str(r, "error"), "1000000000000000000 bytes"));
    assert_null(json_object_get(r, "times_s"));
    json_decref(all);
}

/* No --data and the default data set missing: every variant unavailable with the reason, exit 0
 * (a missing GPU is treated the same); with --data the study runs (its setup would report bad data). */
static void test_missing_data_unavailable(void **state)
{
    (void)state;
    /* both runs first, then unset, so a failed assertion cannot leave the variable set for later tests */
    setenv("SL_FAKE_NO_DATA", "1", 1);
    int rc = speedlab("run", "fake", "--sizes", "8", "--out", rt_out_dir, NULL);
    json_t *all = rt_read_latest(rt_out_dir);
    int rc_data = speedlab("run", "fake", "--variants", "good", "--sizes", "8", "--reps", "3",
                           "--min-time", "0", "--data", rt_tmpdir, "--out", rt_out_dir, NULL);
    json_t *with_data = rt_read_latest(rt_out_dir);
    unsetenv("SL_FAKE_NO_DATA");
    assert_int_equal(rc, 0);
    assert_int_equal(json_array_size(all), FAKE_N_VARIANTS);
    for (int i = 0; i < FAKE_N_VARIANTS; i++) {
        json_t *r = rt_find_case(all, fake_variants[i].name, 8);
        assert_string_equal(rt_str(r, "status"), "unavailable");
        assert_non_null(strstr(rt_str(r, "error"), "pass --data DIR"));
    }
    json_decref(all);
    assert_int_equal(rc_data, 0);
    assert_string_equal(rt_str(rt_find_case(with_data, "good", 8), "status"), "ok");
    json_decref(with_data);
}

/* ---- run directories ---------------------------------------------------------------------------- */

static int count_run_dirs(const char *out)
{
    DIR *d = opendir(out);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, "run-", 4) == 0;
    closedir(d);
    return n;
}

static void test_new_run_dir_each_time(void **state)
{
    (void)state;
    char out[PATH_MAX + 32];
    snprintf(out, sizeof out, "%s/dirs", rt_tmpdir);
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--quick", "--out", out, NULL), 0);
    char first[PATH_MAX];
    char link[PATH_MAX + 40];
    snprintf(link, sizeof link, "%s/latest", out);
    ssize_t n = readlink(link, first, sizeof first - 1);
    assert_true(n > 0);
    first[n] = '\0';
    /* The same second, most likely: the second run must get run-...-1, never the first's directory. */
    assert_int_equal(speedlab("run", "fake", "--variants", "good", "--quick", "--out", out, NULL), 0);
    char second[PATH_MAX];
    n = readlink(link, second, sizeof second - 1);
    assert_true(n > 0);
    second[n] = '\0';
    assert_string_not_equal(first, second);
    assert_int_equal(count_run_dirs(out), 2);
    char path[PATH_MAX * 3];
    snprintf(path, sizeof path, "%s/%s/results.jsonl", out, first);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_true(sb.st_size > 0); /* the first run's records are still there */
}

/* ---- SIGINT -------------------------------------------------------------------------------------- */

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

static void test_sigint_keeps_finished_records(void **state)
{
    (void)state;
    char out[PATH_MAX + 32], results[PATH_MAX + 64];
    snprintf(out, sizeof out, "%s/sigint", rt_tmpdir);
    snprintf(results, sizeof results, "%s/latest/results.jsonl", out);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open("/dev/null", O_WRONLY);
        dup2(o, STDOUT_FILENO);
        dup2(o, STDERR_FILENO);
        char *argv[] = {"speedlab", "run", "slow", "--min-time", "0", "--out", out, NULL};
        _exit(sl_main(7, argv, fake_registry, FAKE_N_REGISTRY));
    }
    /* Wait for two finished cases (each takes about 4 x 30 ms), then interrupt mid-run. */
    for (int i = 0; i < 1000 && count_lines(results) < 2; i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_true(count_lines(results) >= 2);
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 130);
    json_t *all = rt_read_latest(out); /* every line parses */
    size_t n = json_array_size(all);
    assert_true(n >= 2 && n < 20);
    size_t i;
    json_t *r;
    json_array_foreach(all, i, r)
        assert_string_equal(rt_str(r, "status"), "ok");
    json_decref(all);
}

/* ---- availability and threads ------------------------------------------------------------------- */

static void expect_avail(const char *requires, int built, const char *why_built_without)
{
    sl_variant v = {"x", requires, "", NULL, 0, NULL};
    char why[256];
    int ok = sl_variant_available(&v, why, sizeof why);
    if (!built) {
        assert_false(ok);
        assert_string_equal(why, why_built_without);
    } else {
        assert_true(ok);
    }
}

static void test_availability_reasons(void **state)
{
    (void)state;
    expect_avail(NULL, 1, "");
    expect_avail("openmp", SL_HAVE_OPENMP, "openmp: built without OpenMP");
    expect_avail("blas", SL_HAVE_BLAS, "blas: built without BLAS");
    char gpu[256];
    int have_gpu = sl_gpu_available(gpu, sizeof gpu);
    if (!SL_HAVE_CUDA)
        assert_string_equal(gpu, "built without CUDA");
    else if (!have_gpu)
        assert_string_equal(gpu, "no CUDA device");
    char cuda_why[300];
    snprintf(cuda_why, sizeof cuda_why, "cuda: %s", gpu);
    expect_avail("cuda", have_gpu, cuda_why);
    expect_avail("cublas", have_gpu && SL_HAVE_CUBLAS, have_gpu ? "cublas: built without cuBLAS" : cuda_why);
    expect_avail("cudnn", have_gpu && SL_HAVE_CUDNN, have_gpu ? "cudnn: built without cuDNN" : cuda_why);
    sl_variant odd = {"x", "quantum", "", NULL, 0, NULL};
    char why[256];
    assert_false(sl_variant_available(&odd, why, sizeof why));
    assert_non_null(strstr(why, "unknown requirement"));

    /* The thread count a variant gets is its declared trait's, whatever its name: a cuda* variant is
     * not threaded unless its row says so. */
    const sl_variant th = {"layout", NULL, "", NULL, SL_THREADED, NULL};
    const sl_variant one[] = {{"omp", "openmp", "", NULL, 0, NULL}, {"cuda", "cuda", "", NULL, SL_DEVICE, NULL}};
    assert_int_equal(sl_variant_threads(&th, 4), 4);
    assert_int_equal(sl_variant_threads(&th, 0), 1);
    for (size_t i = 0; i < sizeof one / sizeof *one; i++)
        assert_int_equal(sl_variant_threads(&one[i], 4), 1);
}

/* ---- statistics ---------------------------------------------------------------------------------- */

static void test_stats(void **state)
{
    (void)state;
    sl_stats st;
    const double even[] = {4, 1, 3, 2};
    sl_stats_compute(even, 4, &st);
    assert_true(st.median == 2.5);
    assert_true(st.min == 1 && st.max == 4);
    assert_true(st.mean == 2.5);
    const double odd[] = {5, 1, 3};
    sl_stats_compute(odd, 3, &st);
    assert_true(st.median == 3);
    const double x[] = {2, 4, 4, 4, 5, 5, 7, 9}; /* mean 5, sum of squares 32: sample std sqrt(32/7) */
    sl_stats_compute(x, 8, &st);
    assert_true(st.mean == 5);
    assert_true(st.median == 4.5);
    assert_true(fabs(st.std - 2.138089935299395) < 1e-12);
    assert_true(fabs(st.cv - 2.138089935299395 / 5) < 1e-12);
    const double one[] = {0.25};
    sl_stats_compute(one, 1, &st);
    assert_true(st.median == 0.25 && st.std == 0 && st.cv == 0);
}

/* ---- study-recorded work -------------------------------------------------------------------------- */

/* A variant that did other work than declared: the record carries its flops and bytes and the scale;
 * one that did the declared work leaves it alone; region work is kept per region. */
static void test_record_work(void **state)
{
    (void)state;
    json_t *out = json_pack("{s:{s:f,s:f}}", "work", "flops", 100.0, "bytes", 50.0);
    sl_record *r = sl_record_new();
    sl_record_work(r, 5.0, 4.0);              /* bytes not in proportion to flops */
    sl_record_region_work(r, "gradient", 8.0, 2.0, "fp64");
    sl_record_merge(r, out);
    json_t *w = json_object_get(out, "work");
    assert_true(json_number_value(json_object_get(w, "flops")) == 5.0);
    assert_true(json_number_value(json_object_get(w, "bytes")) == 4.0);
    assert_true(json_number_value(json_object_get(w, "scale")) == 0.05);
    json_t *g = json_object_get(json_object_get(out, "region_work"), "gradient");
    assert_string_equal(json_string_value(json_object_get(g, "precision")), "fp64");
    assert_true(json_number_value(json_object_get(g, "flops")) == 8.0);
    sl_record_free(r);
    json_decref(out);
    out = json_pack("{s:{s:f,s:f}}", "work", "flops", 100.0, "bytes", 50.0);
    r = sl_record_new();
    sl_record_work(r, 100.0, 50.0);           /* the declared work: no scale */
    sl_record_merge(r, out);
    assert_null(json_object_get(json_object_get(out, "work"), "scale"));
    assert_null(json_object_get(out, "region_work"));
    sl_record_free(r);
    json_decref(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_work),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_availability_reasons),
        cmocka_unit_test(test_records_schema),
        cmocka_unit_test(test_ok_run_exits_zero),
        cmocka_unit_test(test_param_flag),
        cmocka_unit_test(test_calibration_record),
        cmocka_unit_test(test_counters_counted_in_record),
        cmocka_unit_test(test_profile_region_by_path),
        cmocka_unit_test(test_unknown_names_exit_2),
        cmocka_unit_test(test_bad_flag_values_exit_2),
        cmocka_unit_test(test_help_everywhere),
        cmocka_unit_test(test_sweep_sizes_only_when_named),
        cmocka_unit_test(test_rounds),
        cmocka_unit_test(test_footprint_refused_before_setup),
        cmocka_unit_test(test_missing_data_unavailable),
        cmocka_unit_test(test_new_run_dir_each_time),
        cmocka_unit_test(test_sigint_keeps_finished_records),
    };
    return cmocka_run_group_tests_name("experiments", tests, rt_setup_dir, rt_remove_dir);
}
