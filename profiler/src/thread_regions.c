/*
 * Per-thread shares: the "omp thread N" regions of PROF_THREAD_REGION (speedlab/prof.h). The names are
 * made once, before the regions are first turned on, so a thread opening one only indexes a table.
 */
#include "prof_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROF_THREAD_NAMES 1024 /* threads with a name of their own; the rest share the last one's */

int prof_thread_regions_on;

static char names[PROF_THREAD_NAMES + 1][24];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void make_names(void)
{
    for (int i = 0; i < PROF_THREAD_NAMES; i++)
        snprintf(names[i], sizeof names[i], "omp thread %d", i);
    snprintf(names[PROF_THREAD_NAMES], sizeof names[0], "omp thread %d+", PROF_THREAD_NAMES);
}

int prof_thread_regions(int on)
{
    const char *env = getenv("PROF_THREAD_REGIONS");
    if (env && strcmp(env, "0") == 0)
        on = 0;
    if (on)
        pthread_once(&names_once, make_names);
    prof_thread_regions_on = on ? 1 : 0;
    return prof_thread_regions_on;
}

const char *prof_thread_region_begin(int tid)
{
    const char *name = names[tid >= 0 && tid < PROF_THREAD_NAMES ? tid : PROF_THREAD_NAMES];
    prof_begin(name);
    return name;
}
