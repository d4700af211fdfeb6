/*
 * test_external.c: framework baselines (SL_EXTERNAL rows, experiments/external.c) with the real studies.
 * `test_external FRAMEWORK` (Meson's external_numpy, _torch, _numba, _jax): one small case of entropy_mi
 * (and tensor_mean for numpy) checked against the study's reference, exit 77 (skipped) where the
 * interpreter lacks the framework, as the case is "unavailable" in a run. `test_external`: the mechanism,
 * with NumPy: galaxy's and mlp's baselines in a --quick run; a planted wrong result
 * (SPEEDLAB_BASELINE_CORRUPT) recorded as failed with no times; a program that raises, and one that
 * hangs, recorded as failed with the reason; a missing interpreter "unavailable" with the command that
 * installs the baselines (that one runs without NumPy too).
 */
#include <dirent.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "external.h"
#include "runner_test.h"

extern const sl_study sl_study_entropy_mi, sl_study_tensor_mean, sl_study_galaxy, sl_study_mlp;
static const sl_study *const reg[] = {&sl_study_entropy_mi, &sl_study_tensor_mean, &sl_study_galaxy,
                                      &sl_study_mlp};

static int speedlab(const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    int rc = rt_speedlab_va(reg, 4, first, ap);
    va_end(ap);
    return rc;
}

/* Whether the interpreter imports numpy and `module` (otherwise says why on stderr). */
static int have(const char *module)
{
    char why[512];
    if (sl_external_available(module, why, sizeof why))
        return 1;
    fprintf(stderr, "skipped: %s\n", why);
    return 0;
}

/* One case of `variant` at the smallest quick size: ok, checked, with the external fields. */
static void expect_ok(const char *study, const char *variant, const char *size)
{
    assert_int_equal(speedlab("run", study, "--variants", variant, "--sizes", size, "--reps", "2",
                              "--min-time", "0", "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, variant, atol(size));
    assert_string_equal(rt_str(r, "status"), "ok");
    json_t *traits = json_object_get(r, "traits"); /* ["external"], or ["device", "external"] */
    assert_string_equal(json_string_value(json_array_get(traits, json_array_size(traits) - 1)), "external");
    assert_true(json_is_true(json_object_get(json_object_get(r, "check"), "passed")));
    json_t *e = json_object_get(r, "external");
    assert_int_equal(strncmp(rt_str(e, "framework"), variant, strlen(rt_str(e, "framework"))), 0); /* torch-cuda */
    assert_true(strlen(rt_str(e, "version")) > 0);
    assert_true(json_number_value(json_object_get(e, "first_call_s")) > 0);
    assert_true(json_integer_value(json_object_get(r, "threads")) >= 1);
    assert_int_equal(json_array_size(json_object_get(r, "times_s")), 2);
    if (!strcmp(study, "entropy_mi")) { /* the forms factorise: charged factorized's B (16 D + 2) flops */
        json_t *w = json_object_get(r, "work");
        double B = (double)atol(size);
        assert_true(fabs(json_number_value(json_object_get(w, "flops")) - B * (16.0 * 256 + 2)) < 0.5);
        assert_true(json_number_value(json_object_get(w, "scale")) < 0.1);
    }
    json_decref(all);
}

/* `test_external FRAMEWORK`: that framework's small cases (main runs it, or exits 77 without it). */
static const char *framework;

static void test_framework(void **state)
{
    (void)state;
    expect_ok("entropy_mi", framework, "256");
    if (strcmp(framework, "numpy") == 0) /* an array output as well (the others' imports take seconds) */
        expect_ok("tensor_mean", framework, "64");
}

/* The training studies' NumPy baselines (--quick): galaxy under SciPy's fmin_cg, the NumPy MLP on the
 * suite's batches; each checked, with the study's metrics taken back from the program. A data set that
 * is missing makes the case unavailable: then skipped. */
static void test_training_baselines(void **state)
{
    (void)state;
    const char *studies[] = {"galaxy", "mlp"}, *metric[] = {"final_cost", "test_acc"};
    const long size[] = {20, 64};
    if (!have("scipy")) /* Meson's TAP reader counts cmocka's skip() as a failure: say why and pass */
        return;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(speedlab("run", studies[i], "--variants", "numpy", "--quick", "--out", rt_out_dir, NULL), 0);
        json_t *all = rt_read_latest(rt_out_dir);
        json_t *r = rt_find_case(all, "numpy", size[i]);
        if (strcmp(rt_str(r, "status"), "unavailable") == 0) {
            print_message("skipped %s: %s\n", studies[i], rt_str(r, "error"));
            json_decref(all);
            continue;
        }
        assert_string_equal(rt_str(r, "status"), "ok");
        assert_true(json_is_true(json_object_get(json_object_get(r, "check"), "passed")));
        assert_true(json_is_number(json_object_get(json_object_get(r, "metrics"), metric[i])));
        json_decref(all);
    }
}

/* The one failed case of a run of `variant` (exit 1), with no times and an error containing `want`. */
static void expect_failed(const char *study, const char *variant, const char *size, const char *want)
{
    assert_int_equal(speedlab("run", study, "--variants", variant, "--sizes", size, "--reps", "1",
                              "--min-time", "0", "--out", rt_out_dir, NULL), 1);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, variant, atol(size));
    assert_string_equal(rt_str(r, "status"), "failed");
    assert_null(json_object_get(r, "times_s"));
    if (!strstr(rt_str(r, "error"), want))
        fail_msg("error '%s' does not say '%s'", rt_str(r, "error"), want);
    json_decref(all);
}

/* The same with --param PARAM. */
static void expect_failed_with(const char *study, const char *variant, const char *size, const char *param,
                               const char *want)
{
    assert_int_equal(speedlab("run", study, "--variants", variant, "--sizes", size, "--reps", "1",
                              "--min-time", "0", "--param", param, "--out", rt_out_dir, NULL), 1);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, variant, atol(size));
    assert_string_equal(rt_str(r, "status"), "failed");
    if (!strstr(rt_str(r, "error"), want))
        fail_msg("error '%s' does not say '%s'", rt_str(r, "error"), want);
    json_decref(all);
}

/* A wrong result is a failed case: the check runs before any time counts. */
static void test_planted_wrong_result(void **state)
{
    (void)state;
    setenv("SPEEDLAB_BASELINE_CORRUPT", "1", 1);
    expect_failed("entropy_mi", "numpy", "256", "check failed");
    expect_failed("tensor_mean", "numpy", "64", "check failed");
    unsetenv("SPEEDLAB_BASELINE_CORRUPT");
}

/* A program of our own in place of baselines/entropy_mi.py (SPEEDLAB_BASELINES). */
static void plant_program(const char *body)
{
    char dir[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/planted", rt_tmpdir);
    snprintf(path, sizeof path, "%s/entropy_mi.py", dir);
    mkdir(dir, 0777);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    setenv("SPEEDLAB_BASELINES", dir, 1);
}

/* The files in the latest run's CASE_DIR/arrays of entropy_mi's numpy row at 256 (-1: no such folder). */
static int latest_case_arrays(void)
{
    char path[PATH_MAX + 96];
    snprintf(path, sizeof path, "%s/latest/baselines/entropy_mi-numpy-256/arrays", rt_out_dir);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* A program that raises: the record says what its stderr ended with; the case keeps its input arrays
 * (in their own folder, which a pack can leave out) for a rerun by hand, and an ok case removes them. */
static void test_program_error_recorded(void **state)
{
    (void)state;
    plant_program("import sys\nsys.stdin.readline()\nraise ValueError('planted failure 42')\n");
    expect_failed("entropy_mi", "numpy", "256", "ValueError: planted failure 42");
    assert_true(latest_case_arrays() >= 2); /* X and Y at least, with the manifest beside the folder */
    unsetenv("SPEEDLAB_BASELINES");
    expect_ok("entropy_mi", "numpy", "256");
    assert_int_equal(latest_case_arrays(), -1);
    /* one that hangs: ended at the time limit */
    setenv("SPEEDLAB_BASELINE_TIMEOUT", "1", 1);
    plant_program("import time\ntime.sleep(60)\n");
    expect_failed("entropy_mi", "numpy", "256", "timed out after 1 s");
    unsetenv("SPEEDLAB_BASELINE_TIMEOUT");
    unsetenv("SPEEDLAB_BASELINES");
}

/* No interpreter: unavailable (not failed), with the command that installs the baselines. */
static void test_missing_python_unavailable(void **state)
{
    (void)state;
    setenv("SPEEDLAB_PYTHON", "/nonexistent/python3", 1);
    assert_int_equal(speedlab("run", "entropy_mi", "--variants", "numpy,torch", "--sizes", "256", "--out",
                              rt_out_dir, NULL), 0);
    unsetenv("SPEEDLAB_PYTHON");
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, "torch", 256);
    assert_string_equal(rt_str(r, "status"), "unavailable");
    assert_non_null(strstr(rt_str(r, "error"), "scripts/setup.sh build --baselines"));
    json_decref(all);
}

/* An executable script at rt_tmpdir/NAME. */
static void plant_script(const char *name, const char *body, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", rt_tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(body, f);
    fclose(f);
    chmod(path, 0755);
}

/* An interpreter that never finishes its import probe: each baseline unavailable, said so, within the
 * limit (SPEEDLAB_BASELINE_TIMEOUT=1 here), and the probe not repeated for the next module. */
static void test_hanging_interpreter(void **state)
{
    (void)state;
    char py[PATH_MAX + 32];
    plant_script("hangs.sh", "#!/bin/sh\nsleep 60\n", py, sizeof py);
    setenv("SPEEDLAB_PYTHON", py, 1);
    setenv("SPEEDLAB_BASELINE_TIMEOUT", "1", 1);
    time_t t0 = time(NULL);
    assert_int_equal(speedlab("run", "entropy_mi", "--variants", "numpy,torch", "--sizes", "256", "--out",
                              rt_out_dir, NULL), 0);
    assert_true(time(NULL) - t0 < 20);
    unsetenv("SPEEDLAB_BASELINE_TIMEOUT");
    unsetenv("SPEEDLAB_PYTHON");
    json_t *all = rt_read_latest(rt_out_dir);
    for (int k = 0; k < 2; k++) {
        json_t *r = rt_find_case(all, k ? "torch" : "numpy", 256);
        assert_string_equal(rt_str(r, "status"), "unavailable");
        assert_non_null(strstr(rt_str(r, "error"), "did not finish importing"));
    }
    json_decref(all);
}

/* A report line of 300 MB with no newline: refused at the bound, in linear time (no rescan of the
 * buffer after every read). The interpreter is a wrapper that passes the import probe without numpy. */
static void test_endless_line(void **state)
{
    (void)state;
    char py[PATH_MAX + 32];
    plant_script("py.sh", "#!/bin/sh\n[ \"$1\" = -c ] && exit 0\nexec /usr/bin/python3 \"$@\"\n", py, sizeof py);
    if (access("/usr/bin/python3", X_OK) != 0)
        skip();
    setenv("SPEEDLAB_PYTHON", py, 1);
    plant_program("import sys, time\nsys.stdin.readline()\nsys.stdout.write('x' * (300 << 20))\n"
                  "sys.stdout.flush()\ntime.sleep(60)\n");
    time_t t0 = time(NULL);
    expect_failed("entropy_mi", "numpy", "256", "longer than 256 MiB without a newline");
    assert_true(time(NULL) - t0 < 30);
    unsetenv("SPEEDLAB_BASELINES");
    unsetenv("SPEEDLAB_PYTHON");
}

/* Times no program could have measured ([1e308, 1e308]: more than it ran) are a failed case, not a
 * record with a median. The real baseline, its repetition line rewritten on the way out. */
static void test_absurd_times(void **state)
{
    (void)state;
    char body[2 * PATH_MAX + 1024];
    snprintf(body, sizeof body,
             "import runpy, sys\n"
             "sys.path.insert(0, '%s')\n"
             "import harness\n"
             "real = harness.send\n"
             "def send(o):\n"
             "    if 'times_s' in o:\n"
             "        o['times_s'] = [1e308, 1e308]\n"
             "    real(o)\n"
             "harness.send = send\n"
             "runpy.run_path('%s/entropy_mi.py', run_name='__main__')\n",
             sl_external_dir(), sl_external_dir());
    plant_program(body);
    expect_failed("entropy_mi", "numpy", "256", "but the program ran");
    unsetenv("SPEEDLAB_BASELINES");
}

/* A repetition report that says what cannot be: times of 5e-324 s (once recorded, then "inf×" in the
 * report), a thread count of -7 (once recorded as given) and fewer times than the repetitions asked
 * fail the case, naming the field. */
static void test_impossible_report(void **state)
{
    (void)state;
    static const struct {
        const char *edit, *want;
    } bad[] = {
        {"o['times_s'] = [5e-324 for t in o['times_s']]", "times_s[0] = 4.94066e-324; a time is a finite number"},
        {"o['threads'] = -7", "\"threads\": -7; a thread count is a whole number from 1 to 4096"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char body[2 * PATH_MAX + 1024];
        snprintf(body, sizeof body,
                 "import runpy, sys\n"
                 "sys.path.insert(0, '%s')\n"
                 "import harness\n"
                 "real = harness.send\n"
                 "def send(o):\n"
                 "    if 'times_s' in o:\n"
                 "        %s\n"
                 "    real(o)\n"
                 "harness.send = send\n"
                 "runpy.run_path('%s/entropy_mi.py', run_name='__main__')\n",
                 sl_external_dir(), bad[i].edit, sl_external_dir());
        plant_program(body);
        expect_failed("entropy_mi", "numpy", "256", bad[i].want);
        unsetenv("SPEEDLAB_BASELINES");
    }
    /* one time where three repetitions were asked */
    char body[2 * PATH_MAX + 1024];
    snprintf(body, sizeof body,
             "import runpy, sys\n"
             "sys.path.insert(0, '%s')\n"
             "import harness\n"
             "real = harness.send\n"
             "def send(o):\n"
             "    if 'times_s' in o:\n"
             "        o['times_s'] = o['times_s'][:1]\n"
             "    real(o)\n"
             "harness.send = send\n"
             "runpy.run_path('%s/entropy_mi.py', run_name='__main__')\n",
             sl_external_dir(), sl_external_dir());
    plant_program(body);
    assert_int_equal(speedlab("run", "entropy_mi", "--variants", "numpy", "--sizes", "256", "--reps", "3",
                              "--min-time", "0", "--out", rt_out_dir, NULL), 1);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, "numpy", 256);
    assert_string_equal(rt_str(r, "status"), "failed");
    if (!strstr(rt_str(r, "error"), "holds 1 times, fewer than the 3 repetitions asked"))
        fail_msg("error '%s'", rt_str(r, "error"));
    json_decref(all);
    unsetenv("SPEEDLAB_BASELINES");
}

/* Seven forms of the numpy row: "wrong" is the fastest but fails the check, "broken" raises, "scribble"
 * writes into its inputs, "slow", "fast" (neither first nor last) and "slower" pass, "drift" passes at
 * its first call only. The row runs
 * "fast" and records every form's outcome; --param form= runs the form it names, a wrong one fails the
 * case, a drifting one fails on its timed calls' outputs, and an unknown one lists the row's forms. */
static void test_fastest_form(void **state)
{
    (void)state;
    char body[PATH_MAX + 2048];
    snprintf(body, sizeof body,
             "import sys, time\n"
             "sys.path.insert(0, '%s')\n"
             "from harness import main\n"
             "import numpy as np\n"
             "def form(delay, scale=1.0):\n"
             "    def make(inp, settings):\n"
             "        def sums(Z):\n"
             "            e = np.exp(Z - Z.max(axis=1, keepdims=True))\n"
             "            p = e / e.sum(axis=1, keepdims=True)\n"
             "            return (p * p).sum(axis=1).astype(np.float64)\n"
             "        def call():\n"
             "            time.sleep(delay)\n"
             "            sp, sq = sums(inp['X']), sums(inp['Y'])\n"
             "            return -sp.mean() * scale, (sp * sq).mean() * scale\n"
             "        return call, lambda r: {'H': r[0], 'MI': r[1]}\n"
             "    return make\n"
             "def broken(inp, settings):\n"
             "    raise RuntimeError('planted: no such backend')\n"
             "def scribble(inp, settings):\n"
             "    call, outputs = form(0)(inp, settings)\n"
             "    def scribbling():\n"
             "        inp['X'][0, 0] = 1e3\n"
             "        return call()\n"
             "    return scribbling, outputs\n"
             "def drift(inp, settings):\n"
             "    call, outputs = form(0.1)(inp, settings)\n"
             "    calls = []\n"
             "    def drifting():\n"
             "        calls.append(1)\n"
             "        h, mi = call()\n"
             "        return (h, mi) if len(calls) == 1 else (2 * h, 2 * mi)\n"
             "    return drifting, outputs\n"
             "main({'numpy': {'slow': form(0.05), 'wrong': form(0, 2.0), 'fast': form(0.005), 'broken': broken,\n"
             "                'slower': form(0.08), 'drift': drift, 'scribble': scribble}})\n",
             sl_external_dir());
    plant_program(body);
    assert_int_equal(speedlab("run", "entropy_mi", "--variants", "numpy", "--sizes", "256", "--reps", "2",
                              "--min-time", "0", "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, "numpy", 256), *e = json_object_get(r, "external");
    json_t *forms = json_object_get(e, "forms"), *probe = json_object_get(e, "form_probe_s");
    assert_string_equal(rt_str(r, "status"), "ok");
    assert_string_equal(rt_str(r, "baseline_form"), "fast");
    assert_string_equal(rt_str(e, "form"), "fast");
    assert_string_equal(rt_str(e, "form_chosen_by"), "fastest");
    assert_true(json_is_true(json_object_get(json_object_get(r, "check"), "passed")));
    assert_non_null(strstr(rt_str(json_object_get(forms, "broken"), "error"), "planted: no such backend"));
    /* the inputs are read-only: a form writing into them fails, and the others' inputs stay as they were */
    assert_non_null(strstr(rt_str(json_object_get(forms, "scribble"), "error"), "read-only"));
    assert_true(json_is_false(json_object_get(json_object_get(json_object_get(forms, "wrong"), "check"),
                                              "passed")));
    assert_true(json_is_true(json_object_get(json_object_get(json_object_get(forms, "slow"), "check"),
                                             "passed")));
    assert_non_null(json_object_get(probe, "slow")); /* the passing forms were timed, the others not */
    assert_non_null(json_object_get(probe, "fast"));
    assert_null(json_object_get(probe, "wrong"));
    assert_null(json_object_get(probe, "broken"));
    json_decref(all);

    assert_int_equal(speedlab("run", "entropy_mi", "--variants", "numpy", "--sizes", "256", "--reps", "2",
                              "--min-time", "0", "--param", "form=slow", "--out", rt_out_dir, NULL), 0);
    all = rt_read_latest(rt_out_dir);
    r = rt_find_case(all, "numpy", 256), e = json_object_get(r, "external");
    assert_string_equal(rt_str(r, "baseline_form"), "slow");
    assert_string_equal(rt_str(e, "form_chosen_by"), "--param form");
    assert_int_equal(json_object_size(json_object_get(e, "forms")), 1);
    assert_null(json_object_get(json_object_get(r, "params"), "form")); /* not a study parameter */
    json_decref(all);

    expect_failed_with("entropy_mi", "numpy", "256", "form=wrong", "check failed");

    expect_failed_with("entropy_mi", "numpy", "256", "form=nosuch",
                       "row numpy has no form 'nosuch' (its forms: slow, wrong, fast, broken, slower, drift, scribble)");
    /* right at its first call, wrong afterwards: the timed calls' outputs are checked too */
    expect_failed_with("entropy_mi", "numpy", "256", "form=drift", "the last repetition's outputs: check failed");
    unsetenv("SPEEDLAB_BASELINES");
}

/* A GPU row whose framework sees no device (a stand-in torch whose cuda.is_available() is False, on
 * PYTHONPATH) is unavailable and says so; with SPEEDLAB_BASELINE_DEVICE=cpu its forms run on the CPU, and
 * the record says which device ran (needs the real torch: skipped without it). */
static void test_gpu_row(void **state)
{
    (void)state;
    char dir[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/faketorch/torch", rt_tmpdir);
    snprintf(path, sizeof path, "%s/faketorch", rt_tmpdir);
    mkdir(path, 0777);
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/__init__.py", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("__version__ = '0.0-fake'\nclass cuda:\n    @staticmethod\n    def is_available():\n"
          "        return False\n", f);
    fclose(f);
    const char *old = getenv("PYTHONPATH");
    char *saved = old ? strdup(old) : NULL;
    snprintf(path, sizeof path, "%s/faketorch", rt_tmpdir);
    setenv("PYTHONPATH", path, 1);
    assert_int_equal(speedlab("run", "entropy_mi", "--variants", "torch-cuda", "--sizes", "256", "--out",
                              rt_out_dir, NULL), 0);
    saved ? setenv("PYTHONPATH", saved, 1) : unsetenv("PYTHONPATH");
    free(saved);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, "torch-cuda", 256);
    assert_string_equal(rt_str(r, "status"), "unavailable");
    if (!strstr(rt_str(r, "error"), "python:torch@cuda:") || !strstr(rt_str(r, "error"), "sees no cuda device"))
        fail_msg("error '%s'", rt_str(r, "error"));
    json_decref(all);

    setenv("SPEEDLAB_BASELINE_DEVICE", "cpu", 1);
    if (have("torch")) {
        expect_ok("entropy_mi", "torch-cuda", "256");
        all = rt_read_latest(rt_out_dir);
        r = rt_find_case(all, "torch-cuda", 256);
        assert_string_equal(rt_str(json_object_get(r, "external"), "device"), "cpu");
        json_decref(all);
    }
    unsetenv("SPEEDLAB_BASELINE_DEVICE");
}

/* With no argument: the mechanism (without numpy, only the missing interpreter's case). With a
 * framework's name: that framework's cases, exit 77 (Meson: skipped) when it is not installed. */
int main(int argc, char **argv)
{
    if (argc > 1) {
        framework = argv[1];
        if (!have(framework))
            return 77;
        const struct CMUnitTest one[] = {cmocka_unit_test(test_framework)};
        return cmocka_run_group_tests_name("external framework", one, rt_setup_dir, rt_remove_dir);
    }
    const struct CMUnitTest without_numpy[] = {cmocka_unit_test(test_missing_python_unavailable),
                                               cmocka_unit_test(test_hanging_interpreter),
                                               cmocka_unit_test(test_endless_line)};
    if (!have("numpy"))
        return cmocka_run_group_tests_name("external", without_numpy, rt_setup_dir, rt_remove_dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_training_baselines),
        cmocka_unit_test(test_planted_wrong_result),
        cmocka_unit_test(test_program_error_recorded),
        cmocka_unit_test(test_missing_python_unavailable),
        cmocka_unit_test(test_hanging_interpreter),
        cmocka_unit_test(test_endless_line),
        cmocka_unit_test(test_absurd_times),
        cmocka_unit_test(test_impossible_report),
        cmocka_unit_test(test_fastest_form),
        cmocka_unit_test(test_gpu_row),
    };
    return cmocka_run_group_tests_name("external", tests, rt_setup_dir, rt_remove_dir);
}
