/*
 * The timeline trace (profiler/src/trace.c, trace_write.c): a nested, multi-threaded program writes its
 * trace at prof_shutdown; the file must be valid JSON whose per-thread B/E events nest, whose timestamps
 * never go back on a thread, and whose calls and total time per region name equal the profile's. Also:
 * user strings are escaped, a full buffer drops events without breaking the nesting and says how many,
 * marks are instant events, and the trace survives prof_reset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "speedlab/prof.h"
#include "trace_check.h"

/* A user string with everything a JSON writer must escape, and a two-byte UTF-8 character. */
static const char odd_name[] = "say \"hi\" \\ tab\t new\nline caf\xc3\xa9";
static char path[256];

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/speedlab-trace-test-%d.json", (int)getpid());
    unsetenv("PROF_TRACE_EVENTS");
    prof_options o = {.nvtx = 0, .quiet = 1, .json_path = ""};
    prof_init(&o);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    prof_shutdown();
    unlink(path);
    unsetenv("PROF_TRACE_EVENTS");
    return 0;
}

static volatile double sink;
static void spin(int n)
{
    double x = 0;
    for (int i = 0; i < n; i++)
        x += i * 0.5;
    sink = x;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        prof_begin("work");
        prof_begin(odd_name);
        spin(200);
        prof_end(odd_name);
        prof_begin("inner");
        spin(100);
        prof_end("inner");
        prof_end("work");
    }
    return NULL;
}

static json_t *load(void)
{
    json_error_t e;
    json_t *t = json_load_file(path, 0, &e);
    if (!t)
        fail_msg("trace %s is not valid JSON: %s (line %d)", path, e.text, e.line);
    return t;
}

/* Checks the trace against the profile by name; returns the trace for further checks. */
static json_t *check_against(json_t *profile)
{
    json_t *trace = load();
    tc_totals tt = {0}, pt = {0};
    char why[512] = "";
    long dropped = -1;
    if (tc_check_trace(trace, NULL, &tt, &dropped, why, sizeof why) != 0)
        fail_msg("trace structure: %s", why);
    assert_int_equal(dropped, 0);
    tc_profile_totals(profile, NULL, &pt);
    if (tc_compare(&tt, &pt, why, sizeof why) != 0)
        fail_msg("trace vs profile: %s", why);
    tc_free(&tt);
    tc_free(&pt);
    return trace;
}

static int count_ph(json_t *trace, const char *ph, const char *name)
{
    int k = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(trace, "traceEvents"), i, ev) {
        const char *p = json_string_value(json_object_get(ev, "ph"));
        const char *n = json_string_value(json_object_get(ev, "name"));
        k += p && n && strcmp(p, ph) == 0 && (!name || strcmp(n, name) == 0);
    }
    return k;
}

static void test_nested_threads(void **state)
{
    (void)state;
    assert_int_equal(prof_trace_start(path), 0);
    prof_begin("run");
    for (int p = 0; p < 3; p++) {
        prof_begin("phase");
        for (int s = 0; s < 5; s++)
            PROF_SCOPE("step") spin(100);
        prof_end("phase");
    }
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, worker, NULL);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    prof_end("run");
    char *text = prof_json();
    json_t *profile = json_loads(text, 0, NULL);
    free(text);
    prof_shutdown(); /* writes the trace */

    json_t *trace = check_against(profile);
    assert_int_equal(count_ph(trace, "B", "step"), 15);
    assert_int_equal(count_ph(trace, "E", "work"), 150);
    assert_int_equal(count_ph(trace, "M", "thread_name"), 4);
    assert_int_equal(count_ph(trace, "M", "process_name"), 1);
    assert_int_equal(count_ph(trace, "B", odd_name), 150); /* came back as written */
    json_t *colors = json_object_get(json_object_get(trace, "speedlab"), "colors");
    char want[16];
    snprintf(want, sizeof want, "#%06x", prof_color_of("phase") & 0xffffffu);
    assert_string_equal(json_string_value(json_object_get(colors, "phase")), want);
    json_decref(trace);
    json_decref(profile);
}

static void test_full_buffer_drops(void **state)
{
    (void)state;
    setenv("PROF_TRACE_EVENTS", "16", 1);
    prof_trace_start(path);
    prof_begin("parent");
    for (int i = 0; i < 100; i++) {
        prof_begin("child");
        prof_end("child");
    }
    prof_end("parent");
    long dropped = prof_trace_dropped();
    assert_true(dropped > 0);
    prof_shutdown();
    json_t *trace = load();
    tc_totals tt = {0};
    char why[512] = "";
    long written = -1;
    if (tc_check_trace(trace, NULL, &tt, &written, why, sizeof why) != 0)
        fail_msg("a full buffer broke the trace: %s", why);
    assert_int_equal(written, dropped);
    assert_int_equal(count_ph(trace, "E", "parent"), 1); /* its end had room kept for it */
    assert_int_equal(count_ph(trace, "B", "child"), 7);  /* 16 events: parent's pair and 7 child pairs */
    tc_free(&tt);
    json_decref(trace);
}

static void test_marks_and_reset(void **state)
{
    (void)state;
    prof_trace_start(path);
    prof_trace_set_process_name("trace test");
    prof_trace_mark("case 1");
    PROF_SCOPE("before_reset") spin(10);
    prof_reset(); /* the profile forgets; the trace keeps */
    prof_trace_mark("case 2");
    PROF_SCOPE("after_reset") spin(10);
    PROF_SCOPE("bad \xff byte") spin(10); /* not UTF-8: the trace must stay valid JSON */
    PROF_SCOPE("bell\a") spin(10);         /* no short JSON escape: a space (no \\u escapes, Perfetto) */
    prof_shutdown();
    json_t *trace = load();
    assert_int_equal(count_ph(trace, "i", "case 1"), 1);
    assert_int_equal(count_ph(trace, "i", "case 2"), 1);
    assert_int_equal(count_ph(trace, "B", "before_reset"), 1);
    assert_int_equal(count_ph(trace, "B", "after_reset"), 1);
    assert_int_equal(count_ph(trace, "B", "bad \xef\xbf\xbd byte"), 1); /* the stray byte as U+FFFD */
    assert_int_equal(count_ph(trace, "B", "bell "), 1);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    int c, prev = 0, u_escapes = 0;
    while ((c = fgetc(f)) != EOF) {
        u_escapes += prev == '\\' && c == 'u';
        prev = prev == '\\' ? 0 : c; /* an escaped backslash does not escape the next character */
    }
    fclose(f);
    assert_int_equal(u_escapes, 0);
    json_t *first = json_array_get(json_object_get(trace, "traceEvents"), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(first, "args"), "name")), "trace test");
    json_decref(trace);
}

/* PROF_TRACE at prof_init: written at prof_shutdown without any call in the program; with the memory
 * sampler on, its values are an "rss" counter track. */
static void test_env_variable(void **state)
{
    (void)state;
    prof_shutdown();
    setenv("PROF_TRACE", path, 1);
    prof_options o = {.nvtx = 0, .quiet = 1, .json_path = ""};
    prof_init(&o);
    unsetenv("PROF_TRACE");
    prof_mem_sampler_start(1.0);
    PROF_SCOPE("from_env") usleep(20000); /* a few sampler periods */
    prof_mem_sampler_stop();
    prof_shutdown();
    json_t *trace = load();
    assert_int_equal(count_ph(trace, "E", "from_env"), 1);
    assert_true(count_ph(trace, "C", "rss") >= 2);
    json_decref(trace);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_nested_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_buffer_drops, setup, teardown),
        cmocka_unit_test_setup_teardown(test_marks_and_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_variable, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
