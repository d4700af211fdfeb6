/*
 * Internal state of the speedlab profiler, shared by the files of profiler/src/.
 *
 * Layout in one paragraph: every thread that opens a region owns a prof_thread (found through a
 * thread-local pointer, so the hot path takes no lock). A prof_thread holds its open-region stack and
 * its own call tree of prof_node (allocated in fixed chunks, so node pointers never move). Readers
 * (prof_get, prof_json, prof_report) walk every thread's tree and merge the nodes by path
 * (merge.c). Thread shells are never freed before the process ends, so a thread's pointer to its own
 * state stays valid across prof_shutdown/prof_init.
 */
#ifndef PROF_INTERNAL_H
#define PROF_INTERNAL_H

#include "speedlab/prof.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#ifndef PROF_HAVE_PAPI
#define PROF_HAVE_PAPI 0
#endif
#ifndef PROF_HAVE_NVTX
#define PROF_HAVE_NVTX 0
#endif
#ifndef PROF_HAVE_CUDA
#define PROF_HAVE_CUDA 0
#endif
#ifndef PROF_HAVE_OPENMP
#define PROF_HAVE_OPENMP 0
#endif

/* Everything declared from here to the end is the library's own (hidden): direct calls and RIP-relative
 * data, no PLT or GOT on the hot path. The public API is prof.h's, declared above with default visibility. */
#pragma GCC visibility push(hidden)

#define PROF_LIKELY(x) __builtin_expect(!!(x), 1)
#define PROF_UNLIKELY(x) __builtin_expect(!!(x), 0)

enum {
    PROF_MAX_DEPTH = 128,   /* deeper begins are counted as errors and ignored */
    PROF_MAX_COUNTERS = 16, /* events counted at once */
    PROF_CHUNK_NODES = 256, /* nodes per allocation chunk of a thread's tree */
    PROF_MAX_ERROR_MESSAGES = 50,
    PROF_KIDS_LINEAR = 8,   /* children searched one by one; more: through the hash index */
};

/* 128-bit unsigned sums (GCC and clang on 64-bit targets). */
#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 prof_u128;
#else
#error "the profiler needs unsigned __int128 (GCC or clang on a 64-bit target)"
#endif

/* A node's children by name (kids.c): filled once a node has PROF_KIDS_LINEAR children. */
typedef struct prof_kids {
    struct prof_kid_slot {
        uint64_t hash;
        void *item; /* a prof_node or prof_mnode: both start with their name */
    } *slot;
    uint32_t cap, n;
} prof_kids;

typedef struct prof_node {
    const char *name; /* the profiler's own copy (first member: kids.c); NULL for a thread's root */
    const char *key;  /* the pointer last passed to prof_begin for it (the fast path compares it first) */
    struct prof_node *parent, *first_child, *last_child, *next_sibling;
    prof_kids kids;
    int nkids;
    struct prof_node *last_hit; /* child found by the last begin under this node (fast path) */
    int depth;                  /* 0 for a top-level region, -1 for the sentinel */
    /* Timing, in clock ticks (converted to ns when read). The sums are exact integers: mean and
     * variance come from them when read (prof_node_moments), exact while the sum of squares stays
     * below 2^128 (an hour-long region is 2^85 ticks squared). */
    uint64_t calls, sum_ticks, min_ticks, max_ticks;
    prof_u128 sumsq_ticks;
    uint64_t last_end_ticks; /* the end that set rss_end (per-region memory) */
    double device_ms;
    int has_device;
    /* Counter deltas: valid when ctr_gen is the current counter set and every call was counted. */
    unsigned ctr_gen;
    uint64_t ctr_calls;
    long long ctr[PROF_MAX_COUNTERS];
    /* Resident memory (only while per-region memory is on). */
    int has_rss;
    size_t rss_peak, rss_end;
    /* NVTX */
    uint32_t color;
    unsigned color_gen;
    void *nvtx_str; /* nvtxStringHandle_t, registered once per name */
    /* Trace (trace.c): the trace's own copy of the name, valid until the trace ends (a node and its
     * name may be freed by prof_reset while the trace still holds events of it) */
    const char *trace_name;
    unsigned trace_gen;
} prof_node;

typedef struct prof_frame {
    prof_node *node;
    const char *name; /* as passed to prof_begin (pointer compared first at prof_end) */
    uint64_t t0;      /* ticks at begin */
    unsigned ctr_gen; /* counter set the frame started with (0: none) */
    size_t rss_peak;  /* max RSS seen in this frame and its children so far */
    uint64_t sample0; /* memory sampler index at begin */
    long long c0[PROF_MAX_COUNTERS];
    int traced;       /* 1: its B event is in the trace buffer, so its end writes an E (trace.c) */
} prof_frame;

typedef struct prof_thread {
    /* The thread's gate: 1 when its begins and ends may take the fast path (regions.c); 0 sends them to
     * the general path: something optional is on (prof_g.slow), the profile was reset since the thread
     * last synced (epoch), a begin was ignored (overflow), or the thread is new. Any thread closes every
     * gate (prof_gates_raise_locked); only its own thread opens one. */
    atomic_int fast;
    int id;       /* registration order since process start; the main thread is the first */
    unsigned epoch; /* matches prof_g.epoch while the state belongs to the current epoch (since the last prof_reset) */
    struct prof_frame *top; /* the innermost open frame, stack[depth] (prof_depth), or the sentinel */
    int overflow; /* begins ignored beyond PROF_MAX_DEPTH, awaiting their ends */
    struct prof_frame *pub_top; /* main thread: the frame whose node prof_g.attach holds (regions.c, publish) */
    prof_node root;
    prof_node **chunks;
    int nchunks, chunk_cap, chunk_used; /* chunk_used: nodes used in the last chunk */
    prof_node *attach_src, *attach_dst; /* cache: main-thread node -> this thread's copy of its path */
    /* PAPI (counters.c) */
    unsigned ctr_gen;
    int ctr_ok, eventset;
    /* CUDA events (gpu.c) */
    void *gpu_ev[2];
    void *gpu_stream;
    int gpu_pending;
    struct prof_trace_buf *trace; /* timeline events (trace.c); NULL until the thread's first traced region */
    struct prof_thread *next;
    /* stack[k] is the frame of the open region at depth k (1..depth). stack[0] is a sentinel: its node
     * is the parent of a top-level region where the fast path may open one (the main thread's root),
     * else a node with no children; its name is no caller's pointer (prof_end at depth 0 is refused). */
    prof_frame stack[PROF_MAX_DEPTH + 1];
} prof_thread;

/* Open regions of a thread. */
static inline int prof_depth(const prof_thread *t) { return (int)(t->top - t->stack); }

/* Global state. Hot-path readers use relaxed loads of plain ints; writers change them only from
 * prof_init/prof_reset/prof_set_* (documented as calls made while no other thread is in a region). */
typedef struct prof_global {
    pthread_mutex_t lock; /* thread registry, init/shutdown */
    atomic_int active;
    unsigned epoch;
    prof_thread *threads, *threads_tail, *main;
    int nthreads;
    _Atomic(prof_node *) attach; /* main thread's open node, published outside parallel regions */
    atomic_long errors;
    atomic_int error_messages;
    uint64_t start_ticks; /* prof_init/prof_reset */
    int extras;           /* nvtx_on || counters || memory: the slow part of begin/end runs */
    int slow;             /* extras || trace_on || a clock other than rdtsc: every gate stays closed */
    int nvtx_on, mem_on, quiet, report_at_exit;
    int trace_on; /* timeline events go into per-thread buffers (trace.c) */
    char *json_path;
    unsigned color_gen;
    unsigned ctr_gen; /* bumped by every prof_set_counters */
    int ctr_n;        /* events that count in the current set */
    char *ctr_names[PROF_MAX_COUNTERS];
} prof_global;

extern prof_global prof_g;

/* ---- clock.c ---- */
typedef struct prof_clock {
    int tsc;             /* 1: rdtsc, 0: clock_gettime */
    double ns_per_tick;
    uint64_t tick0, ns0; /* calibration origin */
    uint64_t (*fake)(void); /* test hook: ticks are ns from this function */
} prof_clock;
extern prof_clock prof_clk;
void prof_clock_init(void);
uint64_t prof_mono_ns(void);
static inline uint64_t prof_ticks(void)
{
    if (PROF_UNLIKELY(prof_clk.fake != NULL))
        return prof_clk.fake();
#if defined(__x86_64__)
    if (PROF_LIKELY(prof_clk.tsc))
        return __builtin_ia32_rdtsc();
#endif
    return prof_mono_ns();
}
/* The clock read of the fast path (regions.c): rdtsc on x86-64. A test's fake clock or clock_gettime
 * (prof_clock_slow) keeps every gate closed, so regions then read prof_ticks() on the general path. */
static inline uint64_t prof_ticks_fast(void)
{
#if defined(__x86_64__)
    return __builtin_ia32_rdtsc();
#else
    return prof_ticks();
#endif
}
static inline int prof_clock_slow(void)
{
#if defined(__x86_64__)
    return prof_clk.fake != NULL || !prof_clk.tsc;
#else
    return 0;
#endif
}
double prof_ticks_to_ns(double ticks);

/* Mean and sum of squared deviations (Welford's M2) of a node's per-call ticks, from its exact sums. */
void prof_node_moments(const struct prof_node *n, double *mean, double *m2);

/* ---- core.c ---- */
/* Recomputes prof_g.extras and prof_g.slow and closes every thread's gate; takes prof_g.lock. */
void prof_update_extras(void);
void prof_set_sampler_on(int on);
void prof_set_region_memory(int on);

/* ---- regions.c ---- */
prof_thread *prof_thread_self(void); /* registers the calling thread when needed */
void prof_gates_raise_locked(void);  /* closes every thread's gate (general path next); holds prof_g.lock */
void prof_thread_clear(prof_thread *t); /* forgets the tree and the stack */
void prof_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void prof_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- kids.c ---- */
uint64_t prof_name_hash(const char *s);
void *prof_kids_find(const prof_kids *k, const char *name, uint64_t h);
void prof_kids_add(prof_kids *k, void *item, uint64_t h);
void prof_kids_free(prof_kids *k);

/* ---- counters.c ---- */
void prof_counters_thread_begin(prof_thread *t, prof_frame *f);
void prof_counters_thread_end(prof_thread *t, prof_frame *f, prof_node *n);
void prof_counters_thread_exit(prof_thread *t);
void prof_counters_shutdown(void);
int prof_counter_valid(const prof_node *n);

/* ---- nvtx.c ---- */
void prof_nvtx_init(int want);
void prof_nvtx_node(prof_node *n);
void prof_nvtx_push(prof_node *n);
void prof_nvtx_pop(void);
void prof_colors_clear(void);

/* ---- memory.c ---- */
size_t prof_rss_fast(void); /* current RSS through a kept-open /proc/self/statm */
uint64_t prof_samples_count(void);
size_t prof_samples_max(uint64_t from, uint64_t to);
void prof_samples_clear(void); /* restarts a running sampler with an empty series */
int prof_sampler_ran(void);
double prof_sampler_interval(void);
size_t prof_samples_get(uint64_t i, double *t_s);
void prof_memory_shutdown(void);

/* ---- trace.c, trace_write.c: the timeline (Chrome Trace Event JSON) ---- */
enum { PROF_EV_BEGIN = 1, PROF_EV_END = 2 };
typedef struct prof_trace_ev {
    const char *name; /* region name; NULL for an end */
    uint64_t ticks;
    uint32_t kind;    /* PROF_EV_* */
    uint32_t ctr;     /* an end's counter deltas: index + 1 into prof_trace_buf.ctr, 0 for none */
} prof_trace_ev;
typedef struct prof_trace_buf {
    prof_trace_ev *ev;
    size_t n, cap;   /* n events kept out of cap */
    size_t open;     /* begins kept whose end has not come yet: their ends have room reserved */
    uint64_t dropped;
    long os_tid;
    long long (*ctr)[PROF_MAX_COUNTERS];
    size_t nctr, ctr_cap;
    long long pending[PROF_MAX_COUNTERS]; /* deltas of the region now ending (counters.c) */
    int has_pending;
} prof_trace_buf;
int prof_trace_begin(prof_thread *t, prof_frame *f); /* returns f->traced */
void prof_trace_end(prof_thread *t, uint64_t t1);
void prof_trace_counters(prof_thread *t, const long long *c1, const long long *c0);
void prof_trace_rss(size_t rss); /* the memory sampler's value now */
void prof_trace_shutdown(void);  /* writes the file when one was asked for, frees the buffers */
/* trace_write.c: the whole trace as JSON into f; 0 or -1 */
typedef struct prof_trace_rss_sample { uint64_t ticks; size_t rss; } prof_trace_rss_sample;
typedef struct prof_trace_mark_ev { char *label; uint64_t ticks; } prof_trace_mark_ev;
typedef struct prof_trace_meta {
    uint64_t t0;            /* ticks at prof_trace_start: ts 0 */
    const char *process;    /* process_name */
    size_t cap;             /* events per thread */
    const prof_trace_rss_sample *rss;
    size_t nrss;
    const prof_trace_mark_ev *marks; /* prof_trace_mark, in time order */
    size_t nmarks;
    uint64_t marks_dropped;
} prof_trace_meta;
int prof_trace_write_file(FILE *f, const prof_trace_meta *m);

/* ---- gpu.c ---- */
void prof_gpu_thread_free(prof_thread *t);

/* ---- merge.c ---- */
typedef struct prof_mnode {
    const char *name; /* first member: kids.c */
    int depth;
    struct prof_mnode *parent, *first_child, *last_child, *next_sibling;
    prof_kids kids;
    int nkids;
    prof_stats st;
    double m2;   /* Welford combination, in ns^2 */
    int has_device, ctr_valid, ctr_seen, has_rss;
    long long ctr[PROF_MAX_COUNTERS];
    size_t rss_peak, rss_end;
    uint64_t rss_end_at;
} prof_mnode;
typedef struct prof_merged {
    prof_mnode root;
    prof_mnode **all; /* depth-first order, parents before children */
    int n, cap;
    int threads; /* threads that completed at least one region */
} prof_merged;
prof_merged *prof_merge(void);
void prof_merged_free(prof_merged *m);
prof_mnode *prof_merged_find(prof_merged *m, const char *path);
double prof_wall_ns(void);

#pragma GCC visibility pop
/* ---- names in outputs (utf8.c) ---- */
/* Length of the well-formed UTF-8 sequence at s (1 for ASCII), or 0 at the end or where it is not one. */
int prof_utf8_len(const unsigned char *s);
/* A malloc'd copy of s that is valid UTF-8: every byte that starts no well-formed sequence becomes
 * U+FFFD; with controls_to_space, ASCII control characters become spaces. NULL when out of memory. */
char *prof_utf8_clean(const char *s, int controls_to_space);

#endif /* PROF_INTERNAL_H */
