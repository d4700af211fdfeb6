/*
 * test_progress.c: the status line inside a case (experiments/progress.c): its format and throttle with
 * fake times, the cost of sl_record_progress per call, and that it shows on a terminal (a pty) and
 * nowhere else (stderr to a file) while a study that reports progress runs (fake_study.h's trainer).
 */
#include <pty.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <speedlab/prof.h>

#include "commands.h"
#include "fake_study.h"
#include "progress.h"
#include "record.h"
#include "runner_test.h"

#define SEC 1000000000ull

#define speedlab(...) rt_speedlab(fake_registry, FAKE_N_REGISTRY, __VA_ARGS__)

/* Case 3 of 12, timed rep 2 of 3 begun at t = 100 s. */
static sl_progress case_at_rep2(void)
{
    sl_progress p = {0};
    sl_progress_case(&p, 3, 12, "mlp", "omp", "batch", 64, 90 * SEC);
    sl_progress_rep(&p, "rep", 2, 3, 1, 100 * SEC);
    return p;
}

static void test_format(void **state)
{
    (void)state;
    sl_progress p = case_at_rep2();
    char buf[128];
    /* 7 of 20 epochs in 7 s: 1 s an epoch, 13 s for this rep's rest, 20 s for the one after */
    sl_progress_format(&p, 7, 20, "epoch", 107 * SEC, buf, sizeof buf);
    assert_string_equal(buf, "[3/12] mlp omp batch=64  rep 2/3  epoch 7/20  ~33 s left");
    /* nothing done yet: no estimate */
    sl_progress_format(&p, 0, 20, "epoch", 100 * SEC, buf, sizeof buf);
    assert_string_equal(buf, "[3/12] mlp omp batch=64  rep 2/3  epoch 0/20");
    /* warm-up says so; minutes once past one */
    sl_progress_rep(&p, "warm-up", 1, 1, 3, 100 * SEC);
    sl_progress_format(&p, 1, 300, "iteration", 101 * SEC, buf, sizeof buf);
    assert_string_equal(buf, "[3/12] mlp omp batch=64  warm-up 1/1  iteration 1/300  ~19m59s left");
    /* never wider than the terminal's 79 columns, nor than the buffer */
    sl_progress_case(&p, 1, 1, "a_study_with_a_very_long_name", "a_variant_with_a_long_name_too", "size",
                     123456789, 0);
    assert_int_equal(sl_progress_format(&p, 1, 2, "epoch", SEC, buf, sizeof buf), 79);
    assert_int_equal(strlen(buf), 79);
    assert_int_equal(sl_progress_format(&p, 1, 2, "epoch", SEC, buf, 10), 9);
    assert_string_equal(buf, "[1/1] a_s");
}

static void test_throttle(void **state)
{
    (void)state;
    sl_progress p = case_at_rep2(); /* the case began at 90 s: first redraw due at 90.25 s */
    char buf[128] = "untouched";
    assert_int_equal(sl_progress_tick(&p, 1, 20, "epoch", 90 * SEC + SEC / 5, buf, sizeof buf), 0);
    assert_string_equal(buf, "untouched");
    assert_int_equal(sl_progress_tick(&p, 1, 20, "epoch", 101 * SEC, buf, sizeof buf), 1);
    assert_string_equal(buf, "[3/12] mlp omp batch=64  rep 2/3  epoch 1/20  ~39 s left");
    /* 4 a second at most: 100 calls 10 ms apart over a second redraw 4 times */
    int draws = 0;
    for (int i = 1; i <= 100; i++)
        draws += sl_progress_tick(&p, 1, 20, "epoch", 101 * SEC + (uint64_t)i * SEC / 100, buf, sizeof buf);
    assert_int_equal(draws, 4);
}

/* The cost of a call between redraws, per call (printed as a TAP comment): off a terminal (no progress: one compare) and on one (a
 * clock read and a compare). A training step is a millisecond or more; a CG iteration too. */
static void test_overhead(void **state)
{
    (void)state;
    enum { CALLS = 1000000 };
    sl_record *r = sl_record_new();
    assert_non_null(r);
    FILE *drawn = tmpfile(); /* the status line's stream: nothing may reach it between redraws */
    assert_non_null(drawn);
    sl_progress p = {.out = drawn};
    sl_progress_case(&p, 1, 1, "s", "v", "n", 1, prof_now_ns() + 3600 * SEC); /* no redraw for an hour */
    double ns[2];
    for (int on = 0; on < 2; on++) {
        r->progress = on ? &p : NULL;
        uint64_t t0 = prof_now_ns();
        for (int i = 0; i < CALLS; i++)
            sl_record_progress(r, i, CALLS, "step");
        ns[on] = (double)(prof_now_ns() - t0) / CALLS;
    }
    printf("# sl_record_progress per call: %.1f ns off a terminal, %.1f ns on one between redraws\n",
           ns[0], ns[1]);
    /* the cost is reported, not asserted (a timed assertion fails on a loaded machine); what is asserted
     * is that two million calls inside the throttle drew nothing */
    fflush(drawn);
    assert_int_equal(ftell(drawn), 0);
    fclose(drawn);
    sl_record_free(r);
}

/* Off a terminal (stderr to a file): nothing extra while the trainer reports its epochs. */
static void test_silent_off_terminal(void **state)
{
    (void)state;
    assert_int_equal(speedlab("run", "trainer", "--out", rt_out_dir, NULL), 0);
    assert_null(strchr(rt_errbuf, '\r'));
    assert_null(strstr(rt_errbuf, "epoch"));
    json_t *all = rt_read_latest(rt_out_dir);
    assert_string_equal(rt_str(rt_find_case(all, "sgd", 4), "status"), "ok");
    json_decref(all);
}

/* On a terminal (stderr a pty): the trainer's 0.4 s repetition draws the line, and the case clears it. */
static void test_shown_on_terminal(void **state)
{
    (void)state;
    int master, slave;
    if (openpty(&master, &slave, NULL, NULL, NULL) != 0)
        skip(); /* no ptys in this sandbox */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(master);
        dup2(slave, STDERR_FILENO);
        freopen("/dev/null", "w", stdout);
        char *argv[] = {"speedlab", "run", "trainer", "--out", rt_out_dir, NULL};
        int rc = sl_main(5, argv, fake_registry, FAKE_N_REGISTRY);
        fflush(NULL);
        _exit(rc);
    }
    close(slave);
    static char seen[16384];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof seen - 1 && (got = read(master, seen + n, sizeof seen - 1 - n)) > 0)
        n += (size_t)got; /* EIO once the child has exited and the slave is closed */
    seen[n] = '\0';
    close(master);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *line = strstr(seen, "\r\033[K[1/1] trainer sgd batch=4  rep 1/1  epoch ");
    if (!line)
        fail_msg("no status line on the terminal; it got: %s", seen);
    assert_non_null(strstr(line, " left\r\033[K")); /* cleared when the case ended */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_throttle),
        cmocka_unit_test(test_overhead),
        cmocka_unit_test(test_silent_off_terminal),
        cmocka_unit_test(test_shown_on_terminal),
    };
    return cmocka_run_group_tests_name("progress", tests, rt_setup_dir, rt_remove_dir);
}
