/*
 * The profiler's clock. On x86-64 with an invariant TSC it is rdtsc, calibrated once against
 * CLOCK_MONOTONIC (about 10 ns per read here, against about 24 ns for clock_gettime): regions store
 * raw ticks and convert to ns only when read. Elsewhere, or with PROF_CLOCK=monotonic, it is
 * clock_gettime(CLOCK_MONOTONIC) and a tick is a nanosecond.
 */
#include "prof_internal.h"
#include "prof_testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

prof_clock prof_clk = {.tsc = 0, .ns_per_tick = 1.0};
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

uint64_t prof_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in every P/C-state. */
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1u;
}

/* One (tsc, ns) pair, taken with the TSC read bracketing clock_gettime as tightly as possible. */
static void tsc_pair(uint64_t *tick, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = __builtin_ia32_rdtsc();
        uint64_t t = prof_mono_ns();
        uint64_t b = __builtin_ia32_rdtsc();
        if (b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = t;
        }
    }
}
#endif

static void clock_calibrate(void)
{
    const char *env = getenv("PROF_CLOCK");
    int want_tsc = !(env && strcmp(env, "monotonic") == 0);
    prof_clk.ns0 = prof_mono_ns();
    prof_clk.tick0 = prof_clk.ns0;
#if defined(__x86_64__)
    if (want_tsc && tsc_invariant()) {
        /* 10 ms of spinning: the ratio's error is then about (50 ns jitter)/(10 ms) = 5e-6. */
        uint64_t k0 = 0, n0 = 0, k1 = 0, n1 = 0;
        tsc_pair(&k0, &n0);
        do
            tsc_pair(&k1, &n1);
        while (n1 - n0 < 10000000u);
        if (k1 > k0) {
            prof_clk.ns_per_tick = (double)(n1 - n0) / (double)(k1 - k0);
            prof_clk.tick0 = k1;
            prof_clk.ns0 = n1;
            prof_clk.tsc = 1;
        }
    }
#else
    (void)want_tsc;
#endif
}

void prof_clock_init(void) { pthread_once(&clock_once, clock_calibrate); }

double prof_ticks_to_ns(double ticks)
{
    return prof_clk.fake ? ticks : ticks * prof_clk.ns_per_tick;
}

uint64_t prof_now_ns(void)
{
    prof_clock_init();
    if (prof_clk.fake)
        return prof_clk.fake();
    if (!prof_clk.tsc)
        return prof_mono_ns();
    int64_t dt = (int64_t)(prof_ticks() - prof_clk.tick0);
    return prof_clk.ns0 + (uint64_t)llround((double)dt * prof_clk.ns_per_tick);
}

const char *prof_clock_name(void)
{
    prof_clock_init();
    if (prof_clk.fake)
        return "fake (test hook)";
    return prof_clk.tsc ? "rdtsc (calibrated against CLOCK_MONOTONIC)" : "clock_gettime(CLOCK_MONOTONIC)";
}

double prof_clock_ns_per_tick(void)
{
    prof_clock_init();
    return prof_clk.fake ? 1.0 : prof_clk.ns_per_tick;
}

void prof_test_set_clock(uint64_t (*now_ns)(void))
{
    prof_clock_init();
    prof_clk.fake = now_ns;
    prof_update_extras(); /* a fake clock is read on the general path */
}
