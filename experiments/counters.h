/*
 * counters.h: a case record's counters, read from the profile of its timed repetitions.
 */
#ifndef SL_COUNTERS_H
#define SL_COUNTERS_H

#include <jansson.h>

/* The region at path (depth names from the root) in a profile (docs/profile-schema.md), or NULL. */
json_t *sl_profile_region(json_t *profile, const char *const *path, int depth);
/* counters (per repetition) from the region at path's totals; counters_absent for the events the
 * profiler was asked for but that region did not count. */
void sl_add_counters(json_t *rec, json_t *profile, const char *const *path, int reps);
/* threads_busy_s and thread_imbalance (docs/results-schema.md) from the "omp thread N" regions below
 * path (the shares the omp kernels mark, PROF_THREAD_REGION): thread N's inclusive time summed over
 * every such region under path, per repetition. Nothing when there is none. */
void sl_add_thread_busy(json_t *rec, json_t *profile, const char *const *path, int reps);

#endif
