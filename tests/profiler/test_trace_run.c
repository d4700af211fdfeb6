/*
 * `speedlab run entropy_mi --quick --trace FILE` (the real command, path as argv[1]): the trace must
 * be valid JSON with per-thread B/E nesting and non-decreasing timestamps, no event dropped, a mark per
 * case that ran, RUNDIR/trace.json beside the records, and the calls and total time per region name
 * inside the timed repetitions (the top-level "entropy_mi" regions) equal to the sum of the records'
 * profiles. Then `speedlab report` of that run has a Timelines section and the figure's data file, with a
 * block per region name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_check.h"

static const char *speedlab;
static char dir[256];

/* Runs speedlab with the arguments (NULL-terminated); its exit status. stdout to /dev/null. */
static int run_args(char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(126);
        execv(speedlab, argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void run_speedlab(const char *trace)
{
    char out[300];
    snprintf(out, sizeof out, "%s/out", dir);
    char *const argv[] = {(char *)speedlab, "run", "entropy_mi", "--quick", "--trace", (char *)trace, "--out",
                          out, NULL};
    assert_int_equal(run_args(argv), 0);
}

/* Whether the file at path contains the text. */
static int file_has(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, text) != NULL;
}

/* The records' profiles summed by region name, under "entropy_mi"; *ran counts the cases with one. */
static void record_totals(tc_totals *out, int *ran)
{
    char path[400], line[1 << 17];
    snprintf(path, sizeof path, "%s/out/latest/results.jsonl", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    *ran = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *rec = json_loads(line, 0, NULL);
        assert_non_null(rec);
        json_t *profile = json_object_get(rec, "profile");
        if (profile) {
            tc_profile_totals(profile, "entropy_mi", out);
            ++*ran;
        }
        json_decref(rec);
    }
    fclose(f);
}

static int count_marks(json_t *trace)
{
    int k = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(trace, "traceEvents"), i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        k += ph && name && strcmp(ph, "i") == 0 && strncmp(name, "case entropy_mi ", 16) == 0;
    }
    return k;
}

static void test_run_trace_matches_records(void **state)
{
    (void)state;
    char trace_path[300], link_path[400];
    snprintf(trace_path, sizeof trace_path, "%s/t.json", dir);
    run_speedlab(trace_path);
    json_error_t e;
    json_t *trace = json_load_file(trace_path, 0, &e);
    if (!trace)
        fail_msg("%s is not valid JSON: %s (line %d)", trace_path, e.text, e.line);
    snprintf(link_path, sizeof link_path, "%s/out/latest/trace.json", dir);
    assert_int_equal(access(link_path, R_OK), 0);

    tc_totals tt = {0}, pt = {0};
    char why[512] = "";
    long dropped = -1;
    if (tc_check_trace(trace, "entropy_mi", &tt, &dropped, why, sizeof why) != 0)
        fail_msg("trace structure: %s", why);
    assert_int_equal(dropped, 0);
    int ran = 0;
    record_totals(&pt, &ran);
    assert_true(ran > 0);
    assert_true(pt.n >= 3); /* entropy_mi, variants, B=... */
    if (tc_compare(&tt, &pt, why, sizeof why) != 0)
        fail_msg("trace vs the records' profiles: %s", why);
    assert_int_equal(count_marks(trace), ran); /* every case that ran has its mark (all passed here) */
    tc_free(&tt);
    tc_free(&pt);
    json_decref(trace);

    /* the report draws the traced run's timeline (data only here: --no-plots) */
    char run[300], rep[300], path[400];
    snprintf(run, sizeof run, "%s/out/latest", dir);
    snprintf(rep, sizeof rep, "%s/rep", dir);
    char *const argv[] = {(char *)speedlab, "report", run, "--out", rep, "--no-plots", NULL};
    assert_int_equal(run_args(argv), 0);
    snprintf(path, sizeof path, "%s/REPORT.md", rep);
    assert_true(file_has(path, "## Timelines (runs made with --trace)"));
    char real[4096];
    assert_non_null(realpath(run, real));
    snprintf(path, sizeof path, "%s/timelines/%s-timeline.dat", rep, strrchr(real, '/') + 1);
    assert_true(file_has(path, "\n\"entropy_mi\"\n")); /* a block per region name, its name first, quoted */
    assert_true(file_has(path, "\n\"factorized\"\n"));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-speedlab\n", argv[0]);
        return 2;
    }
    speedlab = argv[1];
    snprintf(dir, sizeof dir, "/tmp/speedlab-trace-run-XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_run_trace_matches_records)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (!getenv("SPEEDLAB_TEST_KEEP")) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    }
    return rc;
}
