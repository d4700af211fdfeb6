/*
 * The timeline: every region begin and end of every thread as an event in a bounded per-thread
 * buffer, written at prof_shutdown (or prof_trace_write) as Chrome Trace Event JSON (trace_write.c),
 * which Perfetto and chrome://tracing open. docs/profiler.md, "Trace", says how to use it.
 *
 * Hot path: prof_begin/prof_end call in here only while tracing is on (one predictable branch when
 * off). A push is a bounds check and a 24-byte store into the thread's own buffer: no lock, no
 * allocation. The buffer itself is allocated once per thread, at the first region that thread opens
 * after tracing started (malloc'd, so pages are only touched as they fill).
 *
 * A full buffer drops events and counts them. Begins are kept only while there is room for them, their
 * end and the ends of every begin already kept, so every kept begin has its end and the nesting stays
 * whole: once full, a thread keeps the ends of what it had open and drops everything newer.
 */
#include "prof_internal.h"
#include "safefile.h"

#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum {
    DEFAULT_EVENTS = 1 << 20, /* per thread: 24 MiB of address space, touched only as it fills */
    RSS_SAMPLES = 1 << 16,    /* memory sampler values kept (at 10 ms: about 11 minutes) */
    MAX_MARKS = 1 << 16,      /* prof_trace_mark events kept */
};

static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static char *trace_path;       /* written at shutdown; NULL: none (prof_trace_write only) */
static char *process_name;
static uint64_t trace_t0;
static size_t events_per_thread = DEFAULT_EVENTS;
static prof_trace_rss_sample *rss;
static _Atomic size_t nrss;
static unsigned trace_gen;     /* bumped by every prof_trace_start: nodes' trace_name of older traces are stale */
static char **names;           /* interned region names: an open-addressing set, names_cap a power of 2 */
static size_t nnames, names_cap;
static prof_trace_mark_ev *marks; /* prof_trace_mark: few, so kept apart from the threads' buffers */
static size_t nmarks, marks_cap;
static uint64_t marks_dropped;

/* PROF_TRACE_EVENTS: events per thread (a region is two). */
static size_t env_events(void)
{
    const char *v = getenv("PROF_TRACE_EVENTS");
    if (!v || !*v)
        return DEFAULT_EVENTS;
    char *end;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || x < 16 || x > (1ull << 32)) {
        fprintf(stderr, "prof: PROF_TRACE_EVENTS=\"%s\" is not a number of events from 16 to 2^32; "
                        "using %d\n", v, DEFAULT_EVENTS);
        return DEFAULT_EVENTS;
    }
    return (size_t)x;
}

static void default_process_name(void)
{
    char comm[64] = "";
    FILE *f = fopen("/proc/self/comm", "r");
    if (f) {
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
    }
    free(process_name);
    process_name = strdup(*comm ? comm : "speedlab-prof");
}

int prof_trace_start(const char *path)
{
    if (!atomic_load(&prof_g.active))
        prof_init(NULL);
    pthread_mutex_lock(&tlock);
    free(trace_path);
    trace_path = path && *path ? strdup(path) : NULL;
    if (prof_g.trace_on) { /* already tracing: only the file changes */
        pthread_mutex_unlock(&tlock);
        return 0;
    }
    events_per_thread = env_events();
    if (!rss)
        rss = malloc(RSS_SAMPLES * sizeof *rss);
    atomic_store(&nrss, 0);
    if (!process_name)
        default_process_name();
    trace_t0 = prof_ticks();
    trace_gen++;
    prof_g.trace_on = 1;
    pthread_mutex_unlock(&tlock);
    prof_update_extras(); /* regions take the general path, which traces */
    return 0;
}

void prof_trace_set_process_name(const char *name)
{
    if (!name)
        return;
    pthread_mutex_lock(&tlock);
    free(process_name);
    process_name = strdup(name);
    pthread_mutex_unlock(&tlock);
}

/* The slow part of a push: the thread's first event (allocate its buffer), or a full buffer. */
static prof_trace_buf *buf_create(prof_thread *t)
{
    prof_trace_buf *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->ev = malloc(events_per_thread * sizeof *b->ev);
    b->cap = b->ev ? events_per_thread : 0;
    b->ctr_cap = b->cap / 8 + 1; /* counter deltas: only regions of the thread that counts */
    b->os_tid = (long)syscall(SYS_gettid);
    t->trace = b;
    if (!b->ev)
        prof_note("trace: no memory for %zu events on thread %d; its events are dropped", events_per_thread,
                  t->id);
    return b;
}

static uint32_t name_hash(const char *s) /* FNV-1a */
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The trace's copy of a region name, shared by every node of that name (slow path: once per node). */
static const char *intern(const char *s)
{
    uint32_t h = name_hash(s);
    pthread_mutex_lock(&tlock);
    if (2 * (nnames + 1) > names_cap) { /* grow to keep the set at most half full */
        size_t cap = names_cap ? 2 * names_cap : 256;
        char **g = calloc(cap, sizeof *g);
        if (!g) {
            pthread_mutex_unlock(&tlock);
            return NULL;
        }
        for (size_t i = 0; i < names_cap; i++)
            if (names[i]) {
                size_t j = name_hash(names[i]) & (cap - 1);
                while (g[j])
                    j = (j + 1) & (cap - 1);
                g[j] = names[i];
            }
        free(names);
        names = g;
        names_cap = cap;
    }
    size_t j = h & (names_cap - 1);
    while (names[j] && strcmp(names[j], s) != 0)
        j = (j + 1) & (names_cap - 1);
    if (!names[j] && (names[j] = strdup(s)) != NULL)
        nnames++;
    const char *r = names[j];
    pthread_mutex_unlock(&tlock);
    return r;
}

static inline void push(prof_trace_buf *b, const char *name, uint64_t ticks, uint32_t kind)
{
    b->ev[b->n++] = (prof_trace_ev){name, ticks, kind, 0};
}

int prof_trace_begin(prof_thread *t, prof_frame *f)
{
    prof_trace_buf *b = t->trace;
    if (PROF_UNLIKELY(!b) && !(b = buf_create(t)))
        return 0;
    if (PROF_UNLIKELY(b->n + b->open + 2 > b->cap)) { /* room for it, its end and the ends owed */
        b->dropped += 2;
        return 0;
    }
    prof_node *n = f->node;
    if (PROF_UNLIKELY(n->trace_gen != trace_gen)) {
        n->trace_name = intern(n->name);
        n->trace_gen = trace_gen;
    }
    if (PROF_UNLIKELY(!n->trace_name)) { /* no memory for the copy */
        b->dropped += 2;
        return 0;
    }
    push(b, n->trace_name, f->t0, PROF_EV_BEGIN);
    b->open++;
    return 1;
}

void prof_trace_end(prof_thread *t, uint64_t t1)
{
    prof_trace_buf *b = t->trace;
    if (PROF_UNLIKELY(!b || b->open == 0)) /* tracing stopped (prof_shutdown) with the region open */
        return;
    b->open--;
    push(b, NULL, t1, PROF_EV_END);
    if (PROF_UNLIKELY(b->has_pending)) {
        b->has_pending = 0;
        if (!b->ctr && b->ctr_cap)
            b->ctr = malloc(b->ctr_cap * sizeof *b->ctr);
        if (b->ctr && b->nctr < b->ctr_cap) {
            memcpy(b->ctr[b->nctr], b->pending, sizeof b->pending);
            b->ev[b->n - 1].ctr = (uint32_t)++b->nctr;
        }
    }
}

/* counters.c: the deltas of the region that is ending, attached to its end event by prof_trace_end. */
void prof_trace_counters(prof_thread *t, const long long *c1, const long long *c0)
{
    prof_trace_buf *b = t->trace;
    if (!b || !prof_g.trace_on)
        return;
    for (int i = 0; i < prof_g.ctr_n; i++)
        b->pending[i] = c1[i] - c0[i];
    b->has_pending = 1;
}

/* The memory sampler thread is the only writer; the count is published after the value. */
void prof_trace_rss(size_t bytes)
{
    if (!prof_g.trace_on || !rss)
        return;
    size_t k = atomic_load_explicit(&nrss, memory_order_relaxed);
    if (k >= RSS_SAMPLES)
        return;
    rss[k] = (prof_trace_rss_sample){prof_ticks(), bytes};
    atomic_store_explicit(&nrss, k + 1, memory_order_release);
}

/* Marks are not on the hot path: a copy of the label in a list of their own (up to MAX_MARKS), so a
 * thread whose buffer is full still gets its case marks. */
void prof_trace_mark(const char *label)
{
    if (!prof_g.trace_on || !label)
        return;
    uint64_t now = prof_ticks();
    pthread_mutex_lock(&tlock);
    if (nmarks == marks_cap && marks_cap < MAX_MARKS) {
        size_t cap = marks_cap ? 2 * marks_cap : 64;
        prof_trace_mark_ev *g = realloc(marks, cap * sizeof *g);
        if (g) {
            marks = g;
            marks_cap = cap;
        }
    }
    char *copy = nmarks < marks_cap ? strdup(label) : NULL;
    if (copy)
        marks[nmarks++] = (prof_trace_mark_ev){copy, now};
    else
        marks_dropped++;
    pthread_mutex_unlock(&tlock);
}

long prof_trace_dropped(void)
{
    long d = (long)marks_dropped;
    pthread_mutex_lock(&prof_g.lock);
    for (prof_thread *t = prof_g.threads; t; t = t->next)
        if (t->trace)
            d += (long)t->trace->dropped;
    pthread_mutex_unlock(&prof_g.lock);
    return d;
}

int prof_trace_write(const char *path)
{
    if (!path)
        path = trace_path;
    if (!path || !prof_g.trace_on)
        return -1;
    /* Written to a temporary beside it, flushed and renamed (common/safefile.h): a full disk or a kill
     * mid-write leaves the last whole trace (a checkpoint's), never a cut one, and a path that is a link,
     * FIFO or device is refused, not written through. */
    char tmp[4200];
    const char *why = NULL;
    FILE *f = sf_create(path, tmp, sizeof tmp, &why);
    if (!f) {
        fprintf(stderr, "prof: cannot write the trace to \"%s\": %s; set PROF_TRACE (or speedlab run --trace) "
                        "to a file in an existing directory you can write to\n", path, why);
        return -1;
    }
    static char iobuf[1 << 16];
    setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
    pthread_mutex_lock(&tlock);
    prof_trace_meta m = {trace_t0, process_name, events_per_thread, rss,
                         atomic_load_explicit(&nrss, memory_order_acquire), marks, nmarks, marks_dropped};
    int rc = prof_trace_write_file(f, &m);
    pthread_mutex_unlock(&tlock);
    if (rc != 0) { /* not committed: closed and removed here */
        fclose(f);
        unlink(tmp);
    }
    if (rc != 0 || sf_commit(f, tmp, path, &why) != 0) {
        fprintf(stderr, "prof: writing the trace \"%s\" failed (%s); %s\n", path, rc ? "disk full?" : why,
                access(path, F_OK) == 0 ? "the copy there is the last one written whole" : "no trace written");
        return -1;
    }
    long dropped = prof_trace_dropped();
    if (dropped > 0)
        fprintf(stderr, "prof: trace \"%s\": %ld events dropped (buffers full at %zu events per thread); "
                        "raise PROF_TRACE_EVENTS\n", path, dropped, events_per_thread);
    return 0;
}

void prof_trace_shutdown(void)
{
    if (!prof_g.trace_on)
        return;
    if (trace_path)
        prof_trace_write(trace_path);
    pthread_mutex_lock(&prof_g.lock);
    for (prof_thread *t = prof_g.threads; t; t = t->next) {
        if (!t->trace)
            continue;
        free(t->trace->ev);
        free(t->trace->ctr);
        free(t->trace);
        t->trace = NULL;
    }
    prof_g.trace_on = 0;
    pthread_mutex_unlock(&prof_g.lock);
    prof_update_extras();
    pthread_mutex_lock(&tlock);
    for (size_t i = 0; i < names_cap; i++)
        free(names[i]);
    free(names);
    names = NULL;
    nnames = names_cap = 0;
    for (size_t i = 0; i < nmarks; i++)
        free(marks[i].label);
    free(marks);
    marks = NULL;
    nmarks = marks_cap = 0;
    marks_dropped = 0;
    free(trace_path);
    trace_path = NULL;
    free(rss);
    rss = NULL;
    atomic_store(&nrss, 0);
    pthread_mutex_unlock(&tlock);
}
