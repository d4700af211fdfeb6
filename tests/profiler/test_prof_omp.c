/*
 * OpenMP: regions opened on worker threads are not lost, merge by path with the main thread's, and
 * count the threads that contributed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <omp.h>

#include "speedlab/prof.h"

enum { THREADS = 4, CALLS = 10000 };

static void test_no_lost_calls(void **state)
{
    (void)state;
    prof_reset();
    prof_begin("par");
#pragma omp parallel num_threads(THREADS)
    {
        for (int i = 0; i < CALLS; i++) {
            prof_begin("work");
            prof_begin("leaf");
            prof_end("leaf");
            prof_end("work");
        }
    }
    prof_end("par");
    prof_stats s;
    assert_int_equal(prof_get("par/work", &s), 0);
    assert_int_equal(s.calls, (long)THREADS * CALLS);
    assert_int_equal(s.threads, THREADS);
    assert_true(s.min_ns <= s.mean_ns && s.mean_ns <= s.max_ns);
    assert_int_equal(prof_get("par/work/leaf", &s), 0);
    assert_int_equal(s.calls, (long)THREADS * CALLS);
    assert_int_equal(prof_get("par", &s), 0);
    assert_int_equal(s.calls, 1);
    assert_int_equal(s.threads, 1);
    assert_int_equal(prof_errors(), 0);
}

/* A worker with an empty stack and no open region on the main thread becomes a root. */
static void test_worker_roots(void **state)
{
    (void)state;
    prof_reset();
#pragma omp parallel for num_threads(THREADS) schedule(static)
    for (int i = 0; i < THREADS * 100; i++) {
        prof_begin("top");
        prof_end("top");
    }
    prof_stats s;
    assert_int_equal(prof_get("top", &s), 0);
    assert_int_equal(s.calls, THREADS * 100);
    assert_true(s.threads >= 1 && s.threads <= THREADS);
}

int main(void)
{
    prof_options o = {.nvtx = 0, .quiet = 1};
    prof_init(&o);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_lost_calls),
        cmocka_unit_test(test_worker_roots),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    prof_shutdown();
    return rc;
}
