/*
 * test_counted.c busy|papi: what a record says a case's threads and counters did, against work whose
 * amounts are known, through the same path a case takes (the profile of the case's region, then
 * sl_add_thread_busy / sl_add_counters of experiments/counters.c).
 *
 *   busy  four OpenMP threads, thread t sleeping (t + 1) x 20 ms inside its PROF_THREAD_REGION, three
 *         repetitions: threads_busy_s must be 20, 40, 60 and 80 ms per repetition (each within 8 ms
 *         above), thread_imbalance max / mean of them (1.6 with exact sleeps).
 *   papi  PAPI's perf_event software events (the kernel counts them without a hardware PMU): each of four
 *         repetitions spins 20 ms of this thread's CPU time and first-touches 64 fresh pages, so
 *         counters."perf::TASK-CLOCK" must be 20 ms per repetition (within 5 ms above, in ns) and
 *         counters."perf::PAGE-FAULTS" 64 (within 16 above). Exit 77, saying why, where the build has no
 *         PAPI or PAPI cannot count them here.
 * Plain output (not TAP): exit 0 pass, 1 fail, 77 skipped.
 */

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <speedlab/prof.h>

#include "counters.h"
#include "sl_config.h"

#if SL_HAVE_OPENMP
#include <omp.h>
#endif

static const char *const path[3] = {"study", "variant", "64"};
static int failures;

static void expect(int ok, const char *fmt, double got, double lo, double hi)
{
    printf("%s: ", ok ? "ok" : "FAIL");
    printf(fmt, got, lo, hi);
    printf("\n");
    failures += !ok;
}

static void within(const char *what, double got, double lo, double hi)
{
    char fmt[256];
    snprintf(fmt, sizeof fmt, "%s = %%.6g, want [%%.6g, %%.6g]", what);
    expect(got >= lo && got <= hi, fmt, got, lo, hi);
}

static json_t *profile(void)
{
    char *text = prof_json();
    json_t *p = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    return p;
}

static void open_case(void)
{
    for (int i = 0; i < 3; i++)
        prof_begin(path[i]);
}

static void close_case(void)
{
    for (int i = 2; i >= 0; i--)
        prof_end(path[i]);
}

static int busy(void)
{
#if !SL_HAVE_OPENMP
    printf("skipped: built without OpenMP: no per-thread busy time to collect\n");
    return 77;
#else
    enum { THREADS = 4, REPS = 3 };
    const double step = 0.020;
    prof_reset();
    prof_thread_regions(1);
    for (int r = 0; r < REPS; r++) {
        open_case();
#pragma omp parallel num_threads(THREADS)
        PROF_THREAD_REGION(omp_get_thread_num())
        {
            double s = step * (omp_get_thread_num() + 1);
            struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
            while (nanosleep(&ts, &ts) != 0)
                ;
        }
        close_case();
    }
    prof_thread_regions(0);
    json_t *p = profile(), *rec = json_object();
    sl_add_thread_busy(rec, p, path, REPS);
    json_t *b = json_object_get(rec, "threads_busy_s");
    if (json_array_size(b) != THREADS) {
        printf("FAIL: threads_busy_s has %zu entries, want %d\n", json_array_size(b), THREADS);
        return 1;
    }
    double sum = 0, max = 0;
    for (int t = 0; t < THREADS; t++) {
        double v = json_number_value(json_array_get(b, (size_t)t)), want = step * (t + 1);
        char what[64];
        snprintf(what, sizeof what, "threads_busy_s[%d] (s per repetition)", t);
        within(what, v, want, want + 0.008);
        sum += v;
        max = v > max ? v : max;
    }
    within("thread_imbalance (max / mean)", json_number_value(json_object_get(rec, "thread_imbalance")),
           max / (sum / THREADS) - 1e-9, max / (sum / THREADS) + 1e-9);
    within("thread_imbalance against the sleeps' 1.6", json_number_value(json_object_get(rec, "thread_imbalance")),
           1.4, 1.65);
    json_decref(rec);
    json_decref(p);
    return failures ? 1 : 0;
#endif
}

/* Spins until this thread has used `s` seconds of CPU time. */
static void spin_cpu(double s)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < s);
}

static int papi(void)
{
    enum { REPS = 4, PAGES = 64 };
    if (!SL_HAVE_PAPI) {
        printf("skipped: built without PAPI (meson setup -Dpapi=enabled with libpapi-dev)\n");
        return 77;
    }
    int n = prof_set_counters("perf::TASK-CLOCK,perf::PAGE-FAULTS");
    if (n != 2) {
        printf("skipped: PAPI cannot count perf::TASK-CLOCK and perf::PAGE-FAULTS here (%d of 2 count%s%s; "
               "/proc/sys/kernel/perf_event_paranoid above 2 or no perf_event component)\n", n,
               prof_counter_absent_count() ? ": " : "",
               prof_counter_absent_count() ? prof_counter_absent_why(0) : "");
        return 77;
    }
    long page = sysconf(_SC_PAGESIZE);
    prof_reset();
    for (int r = 0; r < REPS; r++) {
        char *m = mmap(NULL, (size_t)(PAGES * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            printf("FAIL: mmap of %d pages\n", PAGES);
            return 1;
        }
        madvise(m, (size_t)(PAGES * page), MADV_NOHUGEPAGE); /* one fault a page, not one a huge page */
        open_case();
        spin_cpu(0.020);
        for (int i = 0; i < PAGES; i++)
            ((volatile char *)m)[(long)i * page] = 1; /* first touch: one minor fault each */
        close_case();
        munmap(m, (size_t)(PAGES * page));
    }
    json_t *p = profile(), *rec = json_object();
    sl_add_counters(rec, p, path, REPS);
    json_t *c = json_object_get(rec, "counters");
    if (!json_object_get(c, "perf::TASK-CLOCK") || !json_object_get(c, "perf::PAGE-FAULTS")) {
        char *s = json_dumps(rec, JSON_COMPACT);
        printf("FAIL: the record lacks the counters: %s\n", s);
        free(s);
        return 1;
    }
    within("counters.perf::TASK-CLOCK (ns per repetition)", json_number_value(json_object_get(c, "perf::TASK-CLOCK")),
           20e6, 25e6);
    within("counters.perf::PAGE-FAULTS (per repetition)", json_number_value(json_object_get(c, "perf::PAGE-FAULTS")),
           PAGES, PAGES + 16);
    if (json_object_get(rec, "counters_absent"))
        printf("FAIL: counters_absent present although both events count\n"), failures++;
    json_decref(rec);
    json_decref(p);
    prof_set_counters("");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "busy") && strcmp(argv[1], "papi"))) {
        fprintf(stderr, "usage: %s busy|papi\n", argv[0]);
        return 2;
    }
    prof_options o = {.nvtx = 0, .quiet = 1};
    prof_init(&o);
    int rc = !strcmp(argv[1], "busy") ? busy() : papi();
    prof_shutdown();
    return rc;
}
