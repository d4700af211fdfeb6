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

#endif
