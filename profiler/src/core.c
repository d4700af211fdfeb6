/*
 * Life cycle of the layer: options (prof_options or PROF_* environment variables), init, reset,
 * shutdown and the outputs written at exit.
 */
#include "prof_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t atexit_once = PTHREAD_ONCE_INIT;
static int region_memory; /* prof_set_region_memory / PROF_MEM=1 */
static int sampler_on;

static void at_exit(void)
{
    if (atomic_load(&prof_g.active))
        prof_shutdown();
}
static void register_atexit(void) { atexit(at_exit); }

static int env_true(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* Recomputes the flags of the general path (regions.c) and sends every thread there at its next
 * begin or end, where it sees them. */
void prof_update_extras(void)
{
    pthread_mutex_lock(&prof_g.lock);
    prof_g.mem_on = region_memory || sampler_on;
    prof_g.extras = prof_g.nvtx_on || prof_g.ctr_n > 0 || prof_g.mem_on;
    prof_g.slow = prof_g.extras || prof_g.trace_on || prof_clock_slow();
    prof_gates_raise_locked();
    pthread_mutex_unlock(&prof_g.lock);
}

void prof_set_sampler_on(int on)
{
    sampler_on = on;
    prof_update_extras();
}

void prof_set_region_memory(int on)
{
    region_memory = on != 0;
    prof_update_extras();
}

static double env_double(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0.0;
    char *end;
    double x = strtod(v, &end);
    if (*end != '\0' || x < 0) {
        fprintf(stderr, "prof: %s=\"%s\" is not a non-negative number of milliseconds; ignored\n", name, v);
        return 0.0;
    }
    return x;
}

int prof_init(const prof_options *opt)
{
    prof_clock_init();
    prof_options o = {.nvtx = 1};
    if (opt)
        o = *opt;
    pthread_mutex_lock(&prof_g.lock);
    if (atomic_load(&prof_g.active)) {
        pthread_mutex_unlock(&prof_g.lock);
        return 0;
    }
    const char *counters = o.counters ? o.counters : getenv("PROF_COUNTERS");
    const char *json = o.json_path ? o.json_path : getenv("PROF_JSON");
    const char *trace = o.trace_path ? o.trace_path : getenv("PROF_TRACE");
    double mem_ms = o.mem_sample_ms > 0 ? o.mem_sample_ms : env_double("PROF_MEM_SAMPLE_MS");
    const char *nv = getenv("PROF_NVTX");
    int nvtx = o.nvtx && !(nv && strcmp(nv, "0") == 0);
    prof_g.quiet = o.quiet || env_true("PROF_QUIET");
    prof_g.report_at_exit = o.report_at_exit || env_true("PROF_REPORT");
    free(prof_g.json_path);
    prof_g.json_path = json && *json ? strdup(json) : NULL;
    region_memory = env_true("PROF_MEM");
    atomic_store(&prof_g.errors, 0);
    atomic_store(&prof_g.error_messages, 0);
    atomic_store(&prof_g.attach, NULL);
    prof_g.start_ticks = prof_ticks();
    atomic_store(&prof_g.active, 1);
    pthread_mutex_unlock(&prof_g.lock);

    prof_thread_self(); /* the calling thread is the main thread */
    prof_nvtx_init(nvtx);
    int rc = 0;
    if (counters && *counters && prof_set_counters(counters) < 0) {
        fprintf(stderr, "prof: %s: %s; no counters\n", o.counters ? "the counters option" : "PROF_COUNTERS",
                prof_counters_error()); /* (prof_set_counters has shown the spec) */
        rc = -1;
    }
    if (mem_ms > 0 && prof_mem_sampler_start(mem_ms) != 0)
        rc = -1;
    if (trace && *trace)
        prof_trace_start(trace);
    prof_update_extras();
    pthread_once(&atexit_once, register_atexit);
    return rc;
}

/* prof_write_json has said that the write failed; add the likely cause and what to do about it. */
static void json_failed(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK) != 0)
        fprintf(stderr, "prof: no profile written: directory \"%s\": %s; set PROF_JSON (or json_path) to a "
                        "file in an existing directory you can write to\n", dir, strerror(errno));
    else
        fprintf(stderr, "prof: no profile written: check that \"%s\" is a writable file and the disk is not "
                        "full, or set PROF_JSON (or json_path) to another path\n", path);
}

void prof_reset(void)
{
    if (!atomic_load(&prof_g.active)) {
        prof_init(NULL);
        return;
    }
    /* A new epoch rather than freeing every thread's tree: a thread inside a region still holds its
     * nodes (clearing them was a heap use-after-free at its prof_end). Each thread forgets its own tree
     * at its next prof_begin; readers skip threads of an older epoch; an end of a region opened before
     * the reset is dropped and counted (regions.c, end_after_reset). */
    pthread_mutex_lock(&prof_g.lock);
    prof_g.epoch++;
    prof_gates_raise_locked();
    atomic_store(&prof_g.attach, NULL);
    atomic_store(&prof_g.errors, 0);
    atomic_store(&prof_g.error_messages, 0);
    prof_g.start_ticks = prof_ticks();
    pthread_mutex_unlock(&prof_g.lock);
    prof_samples_clear();
}

void prof_shutdown(void)
{
    if (!atomic_load(&prof_g.active))
        return;
    if (prof_g.report_at_exit)
        prof_report(stderr);
    if (prof_g.json_path && prof_write_json(prof_g.json_path) != 0)
        json_failed(prof_g.json_path);
    prof_trace_shutdown();
    prof_mem_sampler_stop();
    prof_memory_shutdown();
    prof_counters_shutdown();
    pthread_mutex_lock(&prof_g.lock);
    for (prof_thread *t = prof_g.threads; t; t = t->next) {
        prof_thread_clear(t);
        prof_gpu_thread_free(t);
    }
    prof_g.main = NULL;
    prof_g.epoch++;
    atomic_store(&prof_g.attach, NULL);
    free(prof_g.json_path);
    prof_g.json_path = NULL;
    prof_g.report_at_exit = 0;
    prof_g.nvtx_on = 0;
    region_memory = 0;
    atomic_store(&prof_g.active, 0);
    pthread_mutex_unlock(&prof_g.lock);
    prof_update_extras(); /* closes the gates: the epoch changed */
    prof_colors_clear();
}

double prof_wall_ns(void)
{
    return prof_ticks_to_ns((double)(prof_ticks() - prof_g.start_ticks));
}
