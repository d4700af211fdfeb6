/*
 * speedlab/prof.h: the speedlab instrumentation layer (TimerStats-style regions).
 *
 * One header, plain C, usable from any C program:
 *
 *     #include <speedlab/prof.h>
 *     prof_init(NULL);                    // options from the environment (PROF_* variables)
 *     prof_begin("solve");
 *       PROF_SCOPE("assemble") { ... }    // scoped form: ends when the block ends
 *     prof_end("solve");
 *     prof_report(stdout);                // TimerStats table
 *     prof_write_json("profile.json");    // schema in docs/profile-schema.md
 *
 * Regions nest and the layer keeps the call tree: every node (a path from the root) has calls,
 * inclusive and self time, mean/std/min/max of its inclusive time per call, counter deltas,
 * device milliseconds and resident memory. Regions opened on OpenMP threads are kept per thread and
 * merged by path when read (docs/profiler.md says what inclusive and self mean across threads).
 *
 * Behind the same calls, chosen by configuration and not by #ifdefs in callers:
 *   - PAPI counters (PROF_COUNTERS="cache,perf::TASK-CLOCK" or prof_set_counters()),
 *   - NVTX push/pop in the "speedlab" domain (compiled out when built without NVTX),
 *   - CUDA event timing of device work (prof_gpu_begin/end; no-ops without CUDA),
 *   - a resident-memory sampler thread.
 *
 * The layer copies every name it is given, so a name may be built in a buffer that is reused or freed
 * after the prof_begin (and after its prof_end); names are compared by content, so two different
 * pointers to equal strings are the same region. A NULL name is refused (counted in prof_errors()).
 */
#ifndef SPEEDLAB_PROF_H
#define SPEEDLAB_PROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the JSON written by prof_json()/prof_write_json(); see docs/profile-schema.md. */
#define PROF_SCHEMA_VERSION 1

typedef struct prof_options {
    const char *counters;  /* comma list of PAPI names or groups (cache, branch, ipc); NULL: $PROF_COUNTERS */
    int nvtx;              /* 1 emit NVTX ranges (default), 0 never; $PROF_NVTX=0 turns them off */
    double mem_sample_ms;  /* >0 starts the RSS sampler at this interval; 0: $PROF_MEM_SAMPLE_MS */
    int report_at_exit;    /* 1 prints the TimerStats table on stderr at exit; also $PROF_REPORT=1 */
    const char *json_path; /* written at exit when set; NULL: $PROF_JSON */
    int quiet;             /* 1: no notes on stderr (absent counters are still recorded as absent) */
    const char *trace_path; /* timeline trace written at exit (prof_trace_start); NULL: $PROF_TRACE */
} prof_options;

/* Starts the layer. NULL reads every option from the environment. Idempotent; returns 0 on success.
 * prof_begin() before prof_init() initialises with NULL. */
int prof_init(const prof_options *opt);
/* Writes the exit outputs that were asked for, stops the sampler, frees everything. */
void prof_shutdown(void);
/* Forgets every region and sample (counters and options stay). Call between independent cases, from one
 * thread, while no other thread is inside a region: a region open elsewhere across a reset is dropped
 * at its prof_end and counted in prof_errors() (docs/profiler.md, "Misuse"). */
void prof_reset(void);

/* ---- regions ---------------------------------------------------------------------------------- */
void prof_begin(const char *name);
/* prof_begin for a name that is a string literal, whose text cannot change, so that finding its region
 * again needs only its address. prof_begin("...") calls it by itself with GCC and clang (the macro
 * below); (prof_begin)(name) or PROF_NO_LITERAL_BEGIN before this header calls the function. */
void prof_begin_literal(const char *name);
#if (defined(__GNUC__) || defined(__clang__)) && !defined(PROF_NO_LITERAL_BEGIN)
#define prof_begin(name) (__builtin_constant_p(name) ? prof_begin_literal(name) : (prof_begin)(name))
#endif
/* Ends the innermost open region. A name that does not match it (or an end with no open region) is
 * reported on stderr with both names, counted in prof_errors(), and the stack is left unchanged. */
void prof_end(const char *name);
/* Number of nesting errors seen since prof_init/prof_reset. */
long prof_errors(void);

/* for-loop trick: the region ends when the block ends (do not `break`/`return` out of it). */
#define PROF_SCOPE(name) \
    for (int prof_scope_once_ = (prof_begin(name), 1); prof_scope_once_; prof_scope_once_ = (prof_end(name), 0))

/* ---- per-thread shares (OpenMP kernels) -------------------------------------------------------- */
/* A region around one thread's share of a parallel loop, named "omp thread N" (N = tid, the OpenMP
 * thread number), so the profile keeps each thread's busy time apart (docs/profiler.md, "Per-thread
 * shares"). Off (the default) it is one load of prof_thread_regions_on and a branch, nothing else: no
 * clock read, no call. Put it inside the parallel region around the work only, never around a barrier
 * (an omp for then needs nowait), or the wait counts as work:
 *
 *     #pragma omp parallel
 *     PROF_THREAD_REGION(omp_get_thread_num()) { ...this thread's rows... }
 */
extern int prof_thread_regions_on;
/* Turns the regions on (1) or off (0) for every thread; call it outside parallel regions.
 * $PROF_THREAD_REGIONS=0 in the environment keeps them off whatever is asked. Returns whether they are on. */
int prof_thread_regions(int on);
/* Opens the region of thread `tid` and returns its name (what PROF_THREAD_REGION ends). */
const char *prof_thread_region_begin(int tid);
#define PROF_THREAD_REGION(tid)                                                                          \
    for (const char *prof_tr_name_ = prof_thread_regions_on ? prof_thread_region_begin(tid) : NULL,   \
                    *prof_tr_once_ = "";                                                             \
         prof_tr_once_; prof_tr_once_ = (prof_tr_name_ ? (prof_end(prof_tr_name_), (const char *)0) : (const char *)0))

/* NVTX colour (0xAARRGGBB) for a region name; otherwise a stable colour hashed from the name. */
void prof_set_color(const char *name, uint32_t argb);
uint32_t prof_color_of(const char *name);

/* ---- counters (PAPI) -------------------------------------------------------------------------- */
/* Replaces the counter set: PAPI preset or native names and the groups cache, branch, ipc.
 * Events that cannot be added are noted once on stderr and recorded as absent (never as zero).
 * Returns the number of events that count; -1 when the spec itself is refused: an empty name, a
 * character other than letters, digits and _ : . = -, a name over 127 characters, or more than 32
 * names once the groups are expanded (16 count at once); prof_counters_error() then says which. */
int prof_set_counters(const char *spec);
const char *prof_counters_error(void);      /* why the last prof_set_counters returned -1 */
int prof_counter_count(void);               /* events that count */
const char *prof_counter_name(int i);
int prof_counter_absent_count(void);        /* events asked for that could not be counted */
const char *prof_counter_absent_name(int i);
const char *prof_counter_absent_why(int i);

/* ---- device time (CUDA events) ---------------------------------------------------------------- */
/* Records a CUDA event on `stream` (a cudaStream_t, NULL for the default stream) and, at the matching
 * prof_gpu_end(), records a second one, synchronises on it, adds the elapsed device milliseconds to the
 * innermost open region and returns them. Without CUDA (or with no device) both are no-ops and
 * prof_gpu_end() returns -1.0. */
void prof_gpu_begin(void *stream);
double prof_gpu_end(void);
/* Adds device milliseconds measured elsewhere to the innermost open region. */
void prof_add_device_ms(double ms);

/* ---- memory ----------------------------------------------------------------------------------- */
size_t prof_rss_bytes(void);      /* current resident set size of the process */
size_t prof_peak_rss_bytes(void); /* peak resident set size (VmHWM) */
/* Starts a new peak: VmHWM := current RSS (Linux >= 4.0, /proc/self/clear_refs). 0, or -1 where the
 * kernel does not allow it (the peak then stays the process's since it started). */
int prof_peak_rss_reset(void);
/* Samples RSS every interval_ms on a background thread until stopped (memory_profiler's view). */
int prof_mem_sampler_start(double interval_ms);
void prof_mem_sampler_stop(void);

/* ---- reading results -------------------------------------------------------------------------- */
typedef struct prof_stats {
    long calls;
    double incl_ns;   /* sum over calls (and threads) of inclusive time */
    double self_ns;   /* incl_ns minus the children's incl_ns */
    double mean_ns, std_ns, min_ns, max_ns; /* per call, of inclusive time */
    double device_ms; /* sum of device time added inside this region */
    int threads;      /* how many threads opened this path */
} prof_stats;

/* Merged statistics of the region at `path`: names joined by '/' from the root, e.g. "run/solve".
 * Returns 0 when found, -1 otherwise. */
int prof_get(const char *path, prof_stats *out);

/* The whole profile as JSON text (malloc'd; free() it). Schema: docs/profile-schema.md. */
char *prof_json(void);
int prof_write_json(const char *path);
/* The TimerStats table: region (indented by depth), calls, total, self, mean, std, min, max, % of run. */
void prof_report(FILE *out);

/* ---- timeline trace (Chrome Trace Event JSON: Perfetto, chrome://tracing; docs/profiler.md) ---- */
/* From now on every region begin and end of every thread is kept as an event in a bounded per-thread
 * buffer ($PROF_TRACE_EVENTS events per thread, default 1048576; a region is two), with no lock or
 * allocation on the hot path; a full buffer drops the newest events and counts them. At prof_shutdown
 * the trace goes to `path` (NULL or "": only prof_trace_write writes it). $PROF_TRACE=path at prof_init
 * does the same. Tracing survives prof_reset. Returns 0. A process killed by a signal writes none. */
int prof_trace_start(const char *path);
/* Writes the trace so far (NULL: the start path); regions still open are closed at the time of the
 * write and marked "unfinished". 0, or -1 after a message. Same rules as prof_json: no other thread
 * inside a region. */
int prof_trace_write(const char *path);
/* An instant event (a vertical line across the process in Perfetto) labelled `label` (copied), e.g. the
 * start of a benchmark case. */
void prof_trace_mark(const char *label);
/* The process's name in the trace (default: the program's name). */
void prof_trace_set_process_name(const char *name);
/* Events dropped so far because a thread's buffer was full. */
long prof_trace_dropped(void);

/* ---- clock ------------------------------------------------------------------------------------ */
uint64_t prof_now_ns(void);         /* the layer's clock, ns */
const char *prof_clock_name(void);  /* e.g. "rdtsc (calibrated)" or "clock_gettime(CLOCK_MONOTONIC)" */

#ifdef __cplusplus
}
#endif
#endif /* SPEEDLAB_PROF_H */
