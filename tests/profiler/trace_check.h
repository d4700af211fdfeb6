/*
 * trace_check.h: checks a speedlab trace (Chrome Trace Event JSON, profiler/src/trace_write.c) against
 * the rules a viewer relies on and against a profile. Shared by test_prof_trace.c (the profiler's own
 * program) and test_trace_run.c (`speedlab run --trace`).
 */
#ifndef TRACE_CHECK_H
#define TRACE_CHECK_H

#include <stddef.h>

#include <jansson.h>

/* Calls and summed duration (ns) per region name. */
typedef struct tc_name {
    char *name;
    long calls;
    double ns;
} tc_name;
typedef struct tc_totals {
    tc_name *v;
    int n, cap;
} tc_totals;

void tc_add(tc_totals *t, const char *name, long calls, double ns);
void tc_free(tc_totals *t);

/* Checks the structure: every event has ph, name, pid, tid (ts unless M); per thread, timestamps never
 * go back, every E closes the innermost open B of the same name, nothing is left open; the "speedlab"
 * object is there. Adds every B/E pair to *out: all of them (root NULL), or only those inside a region
 * named `root` that is top-level on the main thread, by time (the cases of a speedlab run). Returns 0,
 * or -1 with the first problem in why. *dropped gets speedlab.dropped_events. */
int tc_check_trace(json_t *trace, const char *root, tc_totals *out, long *dropped, char *why, size_t n);

/* Adds a profile's regions (docs/profile-schema.md) to *out by name: all, or those under `root`. */
void tc_profile_totals(json_t *profile, const char *root, tc_totals *out);

/* 0 when both have the same names with the same calls and times within 2 ns a call; else -1 and why. */
int tc_compare(const tc_totals *trace, const tc_totals *profile, char *why, size_t n);

#endif
