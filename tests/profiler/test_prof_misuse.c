/*
 * The profiler misused (docs/reliability.md, "The profiler misused"): prof_begin(NULL) (once a
 * segfault in child_find), prof_reset while another thread is inside a region (once a heap
 * use-after-free at that thread's prof_end, seen under ASan), 10^5 distinct sibling names (once 74 s
 * to record and 41 s to report: a linear child search), and names built in one reused buffer (once
 * merged into one region silently).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "speedlab/prof.h"

static int setup(void **state)
{
    (void)state;
    prof_options o = {.nvtx = 0, .quiet = 1};
    prof_init(&o);
    prof_reset();
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long calls_of(const char *path)
{
    prof_stats s;
    return prof_get(path, &s) == 0 ? s.calls : 0;
}

static void test_begin_null_refused(void **state)
{
    (void)state;
    prof_reset();
    prof_begin("outer");
    prof_begin(NULL); /* refused: counted, ignored with its end */
    prof_begin("inside_null");
    prof_end("inside_null");
    prof_end(NULL);
    prof_begin("inner");
    prof_end("inner");
    prof_end("outer");
    assert_int_equal(prof_errors(), 1);
    assert_int_equal(calls_of("outer"), 1);
    assert_int_equal(calls_of("outer/inner"), 1); /* the stack is whole after the refused region */
    assert_int_equal(calls_of("outer/inside_null"), 0);
    prof_end(NULL); /* no open region: the existing clear error, no crash */
    assert_int_equal(prof_errors(), 2);
}

/* ---- prof_reset while another thread is inside a region ------------------------------------------ */
static pthread_barrier_t bar;

static void *worker(void *arg)
{
    (void)arg;
    prof_begin("inside");
    pthread_barrier_wait(&bar); /* 1: the region is open */
    pthread_barrier_wait(&bar); /* 2: main has reset */
    prof_end("inside");         /* was a write into a freed node */
    prof_begin("after");
    prof_end("after");
    return NULL;
}

static void test_reset_with_open_region_on_other_thread(void **state)
{
    (void)state;
    prof_reset();
    pthread_t th;
    pthread_barrier_init(&bar, NULL, 2);
    assert_int_equal(pthread_create(&th, NULL, worker, NULL), 0);
    pthread_barrier_wait(&bar);
    prof_reset();
    pthread_barrier_wait(&bar);
    pthread_join(th, NULL);
    pthread_barrier_destroy(&bar);
    assert_int_equal(prof_errors(), 1); /* the dropped end, counted and said */
    assert_int_equal(calls_of("inside"), 0);
    assert_int_equal(calls_of("after"), 1);
}

/* The same while workers begin and end regions without pause: the reset once freed nodes under
 * their feet (a segfault in node_alloc, or a use-after-free under ASan). */
static atomic_int stop;

static void *busy_worker(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        prof_begin("w");
        prof_begin("inner");
        prof_end("inner");
        prof_end("w");
    }
    return NULL;
}

static void test_reset_while_threads_run(void **state)
{
    (void)state;
    pthread_t th[2];
    atomic_store(&stop, 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, busy_worker, NULL), 0);
    for (int r = 0; r < 5000; r++) {
        prof_begin("main"); /* published: workers attach below it */
        prof_end("main");
        prof_reset();
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    prof_reset();
    prof_begin("clean");
    prof_end("clean");
    assert_int_equal(calls_of("clean"), 1);
    assert_int_equal(prof_errors(), 0);
}

/* ---- many siblings ------------------------------------------------------------------------------- */
enum { MANY = 100000, FEW = 10 };

/* Seconds per begin/end pair over names[0..n), `rounds` times, under one parent. */
static double per_pair(char **names, int n, int rounds)
{
    double t0 = now_s();
    prof_begin("parent");
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < n; i++) {
            prof_begin(names[i]);
            prof_end(names[i]);
        }
    prof_end("parent");
    return (now_s() - t0) / ((double)n * rounds);
}

static void test_many_sibling_names(void **state)
{
    (void)state;
    prof_reset();
    char **names = malloc(MANY * sizeof *names);
    for (int i = 0; i < MANY; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "region_%d", i);
        names[i] = strdup(buf);
    }
    double few = per_pair(names, FEW, MANY / FEW); /* warm: every lookup misses the last-hit cache */
    double create = per_pair(names, MANY, 1);      /* new nodes */
    double many = per_pair(names, MANY, 1);        /* found again */
    double t0 = now_s();
    FILE *devnull = fopen("/dev/null", "w");
    prof_report(devnull);
    fclose(devnull);
    double report = now_s() - t0;
    print_message("# per pair: %d names %.0f ns, %d names %.0f ns (first time %.0f ns); report %.2f s\n",
                  FEW, few * 1e9, MANY, many * 1e9, create * 1e9, report);
    assert_int_equal(calls_of("parent/region_99999"), 2);
    assert_int_equal(calls_of("parent/region_0"), 2 + MANY / FEW);
    /* Linear search: ~40000x the cost of 10 names. Hashed: a few cache misses more. */
    assert_true(many < 30 * few + 2e-6);
    assert_true(report < 10.0);
    for (int i = 0; i < MANY; i++)
        free(names[i]);
    free(names);
}

/* ---- names built in one buffer ------------------------------------------------------------------- */
static void test_reused_buffer_names(void **state)
{
    (void)state;
    prof_reset();
    char buf[32];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 3; i++) {
            snprintf(buf, sizeof buf, "step_%d", i);
            prof_begin(buf);
            prof_end(buf);
        }
    snprintf(buf, sizeof buf, "overwritten"); /* the profile keeps its own copy of each name */
    assert_int_equal(calls_of("step_0"), 2);
    assert_int_equal(calls_of("step_1"), 2);
    assert_int_equal(calls_of("step_2"), 2);
    assert_int_equal(calls_of("overwritten"), 0);
    assert_int_equal(prof_errors(), 0);
}

/* ---- counter specs past the limits (both once said only "malformed") ------------------------------- */
static void test_counter_limits_named(void **state)
{
    (void)state;
    size_t n = 200 * 13 + 1;
    char *spec = calloc(1, n > 5001 ? n : 5001);
    for (int i = 0; i < 200; i++)
        strcat(strcat(spec, i ? "," : ""), "PAPI_TOT_INS");
    assert_int_equal(prof_set_counters(spec), -1);
    assert_non_null(strstr(prof_counters_error(), "200 event names"));
    assert_non_null(strstr(prof_counters_error(), "at most 32"));
    memset(spec, 'A', 5000);
    spec[5000] = '\0';
    assert_int_equal(prof_set_counters(spec), -1);
    assert_non_null(strstr(prof_counters_error(), "5000 characters"));
    assert_non_null(strstr(prof_counters_error(), "at most 127"));
    assert_int_equal(prof_set_counters("PAPI_TOT_INS,bad name"), -1);
    assert_non_null(strstr(prof_counters_error(), "bad name"));
    free(spec);
    assert_true(prof_set_counters("") >= 0); /* none: accepted */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_begin_null_refused),
        cmocka_unit_test(test_reset_with_open_region_on_other_thread),
        cmocka_unit_test(test_reset_while_threads_run),
        cmocka_unit_test(test_many_sibling_names),
        cmocka_unit_test(test_reused_buffer_names),
        cmocka_unit_test(test_counter_limits_named),
    };
    return cmocka_run_group_tests_name("prof_misuse", tests, setup, NULL);
}
