/*
 * prof_pairs: the workload whose instructions tests/profiler/prof_cost.sh counts under callgrind
 * (docs/profiler.md, "Overhead").
 *
 *     prof_pairs PAIRS [off|trace|counters|nvtx|text]
 *
 * Opens a region "parent" and, inside it, runs PAIRS begin/end pairs of the child "pair" in
 * pairs_loop(), the one function callgrind counts (--toggle-collect='pairs_loop*'): instructions per pair
 * are its inclusive count over PAIRS (the loop's own increment, compare and branch included). One pair
 * runs first outside it, so the child's node exists and the count is of the steady state.
 *   off       tracing, counters, NVTX and per-region memory all off
 *   trace     tracing on (prof_trace_start, no file), room for every event
 *   counters  PAPI counter perf::TASK-CLOCK (a software event); exit 77 when it does not count here
 *   nvtx      NVTX asked for (prof_options.nvtx = 1) with no tool attached
 *   text      as off, the name in a char array rather than a string literal (pairs_loop_text)
 * Prints the clock in use and "pairs N"; exits 1 if the profile lost calls or counted errors.
 */
#include <speedlab/prof.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline, noclone)) static void pairs_loop(long pairs)
{
    for (long i = 0; i < pairs; i++) {
        prof_begin("pair");
        prof_end("pair");
    }
    __asm__ volatile("" ::: "memory"); /* the call is kept and not merged into main */
}

/* The same with a name that is not a string literal (a buffer): prof_begin compares its text too. */
__attribute__((noinline, noclone)) static void pairs_loop_text(long pairs, const char *name)
{
    for (long i = 0; i < pairs; i++) {
        prof_begin(name);
        prof_end(name);
    }
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    long pairs = argc > 1 ? atol(argv[1]) : 100000;
    const char *mode = argc > 2 ? argv[2] : "off";
    if (pairs < 0 || (strcmp(mode, "off") && strcmp(mode, "trace") && strcmp(mode, "counters") &&
                      strcmp(mode, "nvtx") && strcmp(mode, "text"))) {
        fprintf(stderr, "usage: %s [PAIRS [off|trace|counters|nvtx|text]]\n", argv[0]);
        return 2;
    }
    /* nothing optional from the environment: the mode says what is on */
    static const char *env[] = {"PROF_MEM", "PROF_MEM_SAMPLE_MS", "PROF_COUNTERS", "PROF_NVTX",
                                "PROF_REPORT", "PROF_TRACE", "PROF_JSON"};
    for (size_t i = 0; i < sizeof env / sizeof *env; i++)
        unsetenv(env[i]);
    char events[32];
    snprintf(events, sizeof events, "%ld", 2 * pairs + 16);
    setenv("PROF_TRACE_EVENTS", events, 1);

    prof_options o = {.nvtx = strcmp(mode, "nvtx") == 0, .quiet = 1, .json_path = ""};
    if (prof_init(&o) != 0)
        return 1;
    if (strcmp(mode, "trace") == 0)
        prof_trace_start(NULL);
    if (strcmp(mode, "counters") == 0 && prof_set_counters("perf::TASK-CLOCK") < 1) {
        printf("counters: perf::TASK-CLOCK does not count here (%s): skipped\n",
               prof_counter_absent_count() > 0 ? prof_counter_absent_why(0) : "no event");
        return 77;
    }
    printf("clock: %s\n", prof_clock_name());

    static char text[] = "pair";
    prof_begin("parent");
    prof_begin("pair"); /* the child's node is made here, not in the counted loop */
    prof_end("pair");
    if (strcmp(mode, "text") == 0) {
        prof_begin(text);
        prof_end(text);
        pairs_loop_text(pairs, text);
    } else {
        pairs_loop(pairs);
    }
    prof_end("parent");

    prof_stats s = {0};
    long want = strcmp(mode, "text") == 0 ? pairs + 2 : pairs + 1;
    if (prof_get("parent/pair", &s) != 0 || s.calls != want || prof_errors() != 0) {
        fprintf(stderr, "prof_pairs: the profile lost calls (%ld of %ld, %ld errors)\n", s.calls, want,
                prof_errors());
        return 1;
    }
    if (strcmp(mode, "trace") == 0 && prof_trace_dropped() != 0) {
        fprintf(stderr, "prof_pairs: the trace dropped %ld events\n", prof_trace_dropped());
        return 1;
    }
    printf("pairs %ld, mode %s\n", pairs, mode);
    prof_shutdown();
    return 0;
}
