/*
 * Private hooks of the speedlab profiler for its own tests and benchmark (not installed).
 */
#ifndef PROF_TESTING_H
#define PROF_TESTING_H

#include <stdint.h>

/* Replaces the clock by now_ns (ticks are then nanoseconds); NULL restores the real clock.
 * Call prof_reset() after switching so that no region mixes the two clocks. */
void prof_test_set_clock(uint64_t (*now_ns)(void));
/* Nanoseconds per tick of the clock in use (1 for clock_gettime and the fake clock). */
double prof_clock_ns_per_tick(void);

#endif
