/*
 * counters.c: a case record's counters, from the profile's region of its timed repetitions.
 */
#include <stdlib.h>
#include <string.h>

#include <speedlab/prof.h>

#include "counters.h"

/* Whether a region's "path" (an array of names from the root) begins with path[0..depth): `exact`, and
 * is no longer; or not, and is longer (a region below it). */
static int path_match(json_t *p, const char *const *path, int depth, int exact)
{
    size_t n = json_array_size(p);
    if (!json_is_array(p) || (exact ? n != (size_t)depth : n <= (size_t)depth))
        return 0;
    for (int i = 0; i < depth; i++) {
        const char *name = json_string_value(json_array_get(p, (size_t)i));
        if (!name || strcmp(name, path[i]) != 0)
            return 0;
    }
    return 1;
}

static int path_is(json_t *p, const char *const *path, int depth)
{
    return path_match(p, path, depth, 1);
}

/* The profile's regions are one flat list, each with its full path (profiler/src/output.c), so a
 * region is found by comparing paths, not by walking names down a tree. */
json_t *sl_profile_region(json_t *profile, const char *const *path, int depth)
{
    size_t i;
    json_t *node;
    json_array_foreach(json_object_get(profile, "regions"), i, node) {
        if (path_is(json_object_get(node, "path"), path, depth))
            return node;
    }
    return NULL;
}

/* A counter's total: a number, or an object holding it as "total" (or "value"). */
static int counter_total(json_t *v, double *out)
{
    if (json_is_object(v))
        v = json_object_get(v, "total") ? json_object_get(v, "total") : json_object_get(v, "value");
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return 0;
}

void sl_add_counters(json_t *rec, json_t *profile, const char *const *path, int reps)
{
    json_t *node = profile ? sl_profile_region(profile, path, 3) : NULL;
    json_t *totals = node ? json_object_get(node, "counters") : NULL;
    json_t *counters = json_object(), *absent = json_array();
    for (int i = 0; i < prof_counter_count(); i++) {
        const char *name = prof_counter_name(i);
        double total;
        if (reps > 0 && counter_total(json_object_get(totals, name), &total) == 0)
            json_object_set_new(counters, name, json_real(total / reps));
        else
            json_array_append_new(absent, json_string(name)); /* could not be read: absent, not 0 */
    }
    for (int i = 0; i < prof_counter_absent_count(); i++)
        json_array_append_new(absent, json_string(prof_counter_absent_name(i)));
    if (json_object_size(counters))
        json_object_set_new(rec, "counters", counters);
    else
        json_decref(counters);
    if (json_array_size(absent))
        json_object_set_new(rec, "counters_absent", absent);
    else
        json_decref(absent);
}

/* Whether a region lies below path[0..depth). */
static int path_starts(json_t *p, const char *const *path, int depth)
{
    return path_match(p, path, depth, 0);
}

#define SL_MAX_BUSY_THREADS 1024 /* the profiler's named threads (profiler/src/thread_regions.c) */

void sl_add_thread_busy(json_t *rec, json_t *profile, const char *const *path, int reps)
{
    static const char prefix[] = "omp thread ";
    double *busy = calloc(SL_MAX_BUSY_THREADS, sizeof *busy);
    int n = 0;
    size_t i;
    json_t *node;
    if (!busy || !profile || reps < 1) {
        free(busy);
        return;
    }
    json_array_foreach(json_object_get(profile, "regions"), i, node) {
        const char *name = json_string_value(json_object_get(node, "name"));
        if (!name || strncmp(name, prefix, sizeof prefix - 1) != 0 ||
            !path_starts(json_object_get(node, "path"), path, 3))
            continue;
        char *end;
        long tid = strtol(name + sizeof prefix - 1, &end, 10);
        if (*end || tid < 0 || tid >= SL_MAX_BUSY_THREADS) /* "omp thread 1024+": threads not told apart */
            continue;
        busy[tid] += json_number_value(json_object_get(node, "incl_ns"));
        if (tid + 1 > n)
            n = (int)tid + 1;
    }
    if (n > 0) {
        json_t *arr = json_array();
        double sum = 0, max = 0;
        for (int t = 0; t < n; t++) {
            double s = busy[t] * 1e-9 / reps;
            json_array_append_new(arr, json_real(s));
            sum += s;
            if (s > max)
                max = s;
        }
        json_object_set_new(rec, "threads_busy_s", arr);
        if (sum > 0)
            json_object_set_new(rec, "thread_imbalance", json_real(max / (sum / n)));
    }
    free(busy);
}
