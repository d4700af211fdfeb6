/*
 * `speedlab run entropy_mi --quick --trace FILE` (the real command, path as argv[1]): the trace must
 * be valid JSON with per-thread B/E nesting and non-decreasing timestamps, no event dropped, a mark per
 * case that ran, RUNDIR/trace.json beside the records, and the calls and total time per region name
 * inside the timed repetitions (the top-level "entropy_mi" regions) equal to the sum of the records'
 * profiles.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace_check.h"

static const char *speedlab;
static char dir[256];

static void run_speedlab(const char *trace)
{
    char out[300];
    snprintf(out, sizeof out, "%s/out", dir);
    pid_t pid = fork();
    if (pid == 0) {
        freopen("/dev/null", "w", stdout);
        execl(speedlab, speedlab, "run", "entropy_mi", "--quick", "--trace", trace, "--out", out, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
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
