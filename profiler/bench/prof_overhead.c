/*
 * prof_overhead: what one prof_begin/prof_end pair costs the caller (docs/profiler.md, "Overhead").
 *
 *     prof_overhead [PAIRS [REPS]]      defaults: 1000000 pairs, 11 repetitions
 *
 * The pair is the common case: the same name, nested under an open parent, called again and again.
 * Each repetition times PAIRS pairs with CLOCK_MONOTONIC around the whole loop (so the profiler's own
 * clock is not trusted to time itself); the table gives the median over repetitions, and min/max to
 * show the spread. The loop itself (about 1 ns) is included, so the figures are slight overestimates.
 * The first rows give the cost of one read of the profiler's clock (prof_now_ns: rdtsc where it is
 * invariant, else CLOCK_MONOTONIC) and of clock_gettime itself: a pair reads the clock twice.
 * The tracing row (prof_trace_start) starts a fresh trace for every repetition, with room for all its
 * events (none dropped, which it checks), so it includes what a traced program pays: two 24-byte events
 * per pair, written into memory touched for the first time (page faults included).
 */
#include <speedlab/prof.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PROF_HAVE_NVTX
#define PROF_HAVE_NVTX 0
#endif

enum { MAX_REPS = 101 };

static double mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void start(int nvtx);

/* A fresh trace with room for every event of one repetition; no file is written. */
static void trace_fresh(long pairs)
{
    char n[32];
    snprintf(n, sizeof n, "%ld", 2 * pairs + 16);
    setenv("PROF_TRACE_EVENTS", n, 1);
    start(0);
    prof_trace_start(NULL);
}

/* Times `pairs` begin/end pairs under "parent", `reps` times (plus one warm-up); fills sorted ns/pair.
 * trace: every repetition in a fresh trace (see the top of the file). */
static void measure(long pairs, int reps, double *ns, int trace)
{
    for (int r = -1; r < reps; r++) {
        if (trace)
            trace_fresh(pairs);
        prof_reset();
        prof_begin("parent");
        double t0 = mono_ns();
        for (long i = 0; i < pairs; i++) {
            prof_begin("pair");
            prof_end("pair");
        }
        double t1 = mono_ns();
        prof_end("parent");
        if (r >= 0)
            ns[r] = (t1 - t0) / (double)pairs;
    }
    qsort(ns, (size_t)reps, sizeof *ns, cmp_double);
    prof_stats s;
    if (prof_get("parent/pair", &s) != 0 || s.calls != pairs || prof_errors() != 0) {
        fprintf(stderr, "prof_overhead: the profiler lost calls (%ld of %ld recorded, %ld errors); "
                        "the figures below are not valid\n", s.calls, pairs, prof_errors());
        exit(1);
    }
    if (trace && prof_trace_dropped() != 0) {
        fprintf(stderr, "prof_overhead: the trace dropped %ld events; the tracing row is not valid\n",
                prof_trace_dropped());
        exit(1);
    }
}

static void row(const char *what, long pairs, int reps, int trace)
{
    double ns[MAX_REPS];
    measure(pairs, reps, ns, trace);
    printf("%-44s %10.1f %8.1f %8.1f\n", what, ns[reps / 2], ns[0], ns[reps - 1]);
}

/* ns per call of a clock, timed as the pairs are; the sum keeps the calls from being optimised away. */
static volatile double clock_sink;
static void clock_row(const char *what, int use_prof, long calls, int reps)
{
    double ns[MAX_REPS];
    for (int r = -1; r < reps; r++) {
        double sum = 0, t0 = mono_ns();
        for (long i = 0; i < calls; i++)
            sum += use_prof ? (double)prof_now_ns() : mono_ns();
        double t1 = mono_ns();
        clock_sink = sum;
        if (r >= 0)
            ns[r] = (t1 - t0) / (double)calls;
    }
    qsort(ns, (size_t)reps, sizeof *ns, cmp_double);
    printf("%-44s %10.1f %8.1f %8.1f\n", what, ns[reps / 2], ns[0], ns[reps - 1]);
}

/* Starts the layer with the given NVTX setting and nothing else optional (no JSON or table at exit). */
static void start(int nvtx)
{
    prof_shutdown();
    prof_options o = {.nvtx = nvtx, .quiet = 1, .json_path = ""};
    prof_init(&o);
}

int main(int argc, char **argv)
{
    long pairs = argc > 1 ? atol(argv[1]) : 1000000;
    int reps = argc > 2 ? atoi(argv[2]) : 11;
    if (pairs < 1 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "usage: %s [PAIRS>=1 [REPS 1..%d]]\n", argv[0], MAX_REPS);
        return 2;
    }
    /* The environment must not switch on extras behind our back: the rows below set them. */
    unsetenv("PROF_MEM");
    unsetenv("PROF_MEM_SAMPLE_MS");
    unsetenv("PROF_COUNTERS");
    unsetenv("PROF_NVTX");
    unsetenv("PROF_REPORT");
    unsetenv("PROF_TRACE");

    start(1);
    printf("prof_overhead: one prof_begin/prof_end pair under a parent, same name, %ld pairs x %d reps\n",
           pairs, reps);
    printf("clock: %s; NVTX compiled in: %s\n", prof_clock_name(), PROF_HAVE_NVTX ? "yes" : "no");
    printf("%-44s %10s %8s %8s\n", "configuration", "median ns", "min", "max");
    clock_row("one read of the profiler's clock", 1, pairs, reps);
    clock_row("one clock_gettime(CLOCK_MONOTONIC)", 0, pairs, reps);

    start(0);
    row("counters off, NVTX off (PROF_NVTX=0)", pairs, reps, 0);
    start(1);
    row(PROF_HAVE_NVTX ? "counters off, NVTX on, no tool attached" : "counters off, NVTX on (compiled out)",
        pairs, reps, 0);
    row("tracing on (PROF_TRACE), NVTX off", pairs, reps, 1);
    unsetenv("PROF_TRACE_EVENTS");

    /* Counters: only a row when at least one event counts; an absent counter is never shown as 0. */
    start(0);
    const char *ev = "perf::TASK-CLOCK";
    if (prof_set_counters(ev) > 0) {
        row("counters perf::TASK-CLOCK, NVTX off", pairs, reps, 0);
    } else {
        const char *why = prof_counter_absent_count() > 0 ? prof_counter_absent_why(0) : "unknown";
        printf("%-44s absent: %s\n", "counters perf::TASK-CLOCK, NVTX off", why);
    }
    prof_set_counters("");
    prof_shutdown();
    return 0;
}
