/*
 * Regions: prof_begin/prof_end on thread-local state (no lock on the hot path), the per-thread call
 * tree, and the attachment of regions opened on worker threads.
 *
 * Hot path of a begin/end pair, once a node exists (begin_fast, prof_end): one thread-local load, the
 * thread's gate (an int), one pointer compare against the parent's last child, two rdtsc, integer sums (calls, ticks, ticks²), min, max;
 * docs/profiler.md, "Overhead", has its instruction count. Everything else (NVTX, counters, memory,
 * tracing, another clock, a reset, misuse, a new child) closes the thread's gate or misses the parent's
 * last child and runs on the general path (begin_general, end_general): the same steps with the
 * optional ones.
 *
 * Worker threads: a region opened on a thread whose own stack is empty attaches under the path the
 * main thread (the one that called prof_init) had open the last time it began or ended a region
 * outside an OpenMP parallel region, i.e. under the path open where the parallel region started.
 * With no such path it becomes a top-level region. Built without OpenMP the main thread publishes at
 * every begin/end, so another thread attaches under whatever the main thread has open at that moment.
 */
#include "prof_internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#if PROF_HAVE_OPENMP
#include <omp.h>
#endif

prof_global prof_g = {.lock = PTHREAD_MUTEX_INITIALIZER, .epoch = 1};

/* A thread with no state of its own points at no_thread, whose gate is closed: the fast path tests the
 * gate only, and the general path registers the thread (tls_self). */
static prof_thread no_thread;
static __thread prof_thread *tls_thread __attribute__((tls_model("initial-exec"))) = &no_thread;
static prof_node no_parent;          /* a worker's sentinel node: no children, so no fast top-level begin */
static const char sentinel_name[1];  /* no caller passes this pointer */

static inline prof_thread *tls_self(void)
{
    prof_thread *t = tls_thread;
    return t == &no_thread ? NULL : t;
}

static inline void set_depth(prof_thread *t, int depth) { t->top = &t->stack[depth]; }

/* The sentinel frame (prof_internal.h): the main thread's top-level regions take the fast path. */
static void sentinel_init(prof_thread *t)
{
    t->stack[0].node = t == prof_g.main ? &t->root : &no_parent;
    t->stack[0].name = sentinel_name;
}
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

void prof_note(const char *fmt, ...)
{
    if (prof_g.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("prof: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* Counts a nesting error and reports the first PROF_MAX_ERROR_MESSAGES of them on stderr. */
void prof_error(const char *fmt, ...)
{
    atomic_fetch_add(&prof_g.errors, 1);
    int k = atomic_fetch_add(&prof_g.error_messages, 1);
    if (k >= PROF_MAX_ERROR_MESSAGES)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("prof: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    if (k == PROF_MAX_ERROR_MESSAGES - 1)
        fputs("prof: further nesting errors are counted (prof_errors) but not printed\n", stderr);
    va_end(ap);
}

long prof_errors(void) { return atomic_load(&prof_g.errors); }

/* ---- thread registry ---------------------------------------------------------------------------- */

static void thread_exit(void *p) { prof_counters_thread_exit(p); }
static void make_exit_key(void) { pthread_key_create(&exit_key, thread_exit); }

static void root_init(prof_node *r)
{
    memset(r, 0, sizeof *r);
    r->depth = -1;
}

void prof_thread_clear(prof_thread *t)
{
    for (int i = 0; i < t->nchunks; i++) {
        int used = i == t->nchunks - 1 ? t->chunk_used : PROF_CHUNK_NODES;
        for (int j = 0; j < used; j++) {
            free((char *)t->chunks[i][j].name);
            prof_kids_free(&t->chunks[i][j].kids);
        }
        free(t->chunks[i]);
    }
    prof_kids_free(&t->root.kids);
    free(t->chunks);
    t->chunks = NULL;
    t->nchunks = t->chunk_cap = t->chunk_used = 0;
    root_init(&t->root);
    t->overflow = 0;
    set_depth(t, 0);
    t->pub_top = t->stack;
    t->attach_src = t->attach_dst = NULL;
    t->stack[0].node = &no_parent;
    t->stack[0].name = sentinel_name;
    atomic_store(&t->fast, 0); /* the next begin syncs on the general path */
}

/* Slow path of a thread's first region since start-up or prof_shutdown: initialise the layer if needed and
 * register the thread (or revive its shell after prof_shutdown). */
static prof_thread *thread_register(void)
{
    if (!atomic_load(&prof_g.active))
        prof_init(NULL);
    pthread_once(&exit_key_once, make_exit_key);
    prof_thread *t = tls_self();
    pthread_mutex_lock(&prof_g.lock);
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t) {
            pthread_mutex_unlock(&prof_g.lock);
            fputs("prof: out of memory registering a thread\n", stderr);
            abort();
        }
        t->id = prof_g.nthreads++;
        if (prof_g.threads_tail)
            prof_g.threads_tail->next = t;
        else
            prof_g.threads = t;
        prof_g.threads_tail = t;
        root_init(&t->root);
        set_depth(t, 0);
        t->pub_top = t->stack;
        tls_thread = t;
        pthread_setspecific(exit_key, t);
    } else {
        prof_thread_clear(t);
    }
    if (!prof_g.main)
        prof_g.main = t;
    sentinel_init(t);
    t->epoch = prof_g.epoch;
    pthread_mutex_unlock(&prof_g.lock);
    return t;
}

static inline prof_thread *thread_self(void)
{
    prof_thread *t = tls_self();
    if (PROF_UNLIKELY(!t || t->epoch != prof_g.epoch))
        t = thread_register();
    return t;
}

prof_thread *prof_thread_self(void) { return thread_self(); }

/* ---- the tree ----------------------------------------------------------------------------------- */

static prof_node *node_alloc(prof_thread *t)
{
    if (t->nchunks == 0 || t->chunk_used == PROF_CHUNK_NODES) {
        if (t->nchunks == t->chunk_cap) {
            int cap = t->chunk_cap ? 2 * t->chunk_cap : 8;
            prof_node **c = realloc(t->chunks, (size_t)cap * sizeof *c);
            if (!c)
                goto oom;
            t->chunks = c;
            t->chunk_cap = cap;
        }
        prof_node *chunk = malloc(PROF_CHUNK_NODES * sizeof *chunk);
        if (!chunk)
            goto oom;
        t->chunks[t->nchunks++] = chunk;
        t->chunk_used = 0;
    }
    prof_node *n = &t->chunks[t->nchunks - 1][t->chunk_used++];
    memset(n, 0, sizeof *n);
    return n;
oom:
    fputs("prof: out of memory growing the region tree\n", stderr);
    abort();
}

/* Enters child n in its parent's hash index once the parent has more than PROF_KIDS_LINEAR children
 * (all of them, the first time). */
static void index_child(prof_node *parent, prof_node *n)
{
    if (parent->nkids <= PROF_KIDS_LINEAR)
        return;
    if (parent->kids.n == 0)
        for (prof_node *c = parent->first_child; c; c = c->next_sibling)
            prof_kids_add(&parent->kids, c, prof_name_hash(c->name));
    else
        prof_kids_add(&parent->kids, n, prof_name_hash(n->name));
}

/* A new child with its own copy of the name: the caller's buffer may change or go away (a name built
 * in one reused buffer once renamed, and merged, every region made from it). */
static prof_node *child_new(prof_thread *t, prof_node *parent, const char *name)
{
    prof_node *n = node_alloc(t);
    n->name = strdup(name);
    if (!n->name) {
        fputs("prof: out of memory copying a region name\n", stderr);
        abort();
    }
    n->key = name;
    n->parent = parent;
    n->depth = parent->depth + 1;
    n->min_ticks = UINT64_MAX;
    if (parent->last_child)
        parent->last_child->next_sibling = n;
    else
        parent->first_child = n;
    parent->last_child = n;
    parent->nkids++;
    index_child(parent, n);
    prof_nvtx_node(n);
    return n;
}

/* The child of `parent` called `name` (by content), else a new node. A few children: the same pointer
 * first, then the same text; many: the hash index, so 10^5 siblings cost what 10 do. */
static prof_node *child_find(prof_thread *t, prof_node *parent, const char *name)
{
    prof_node *c = NULL;
    if (parent->kids.n) {
        c = prof_kids_find(&parent->kids, name, prof_name_hash(name));
    } else {
        /* the child last begun with this pointer (a compare each), then any child with this text */
        for (c = parent->first_child; c && c->key != name; c = c->next_sibling) {}
        if (!c || strcmp(c->name, name) != 0)
            for (c = parent->first_child; c && strcmp(c->name, name) != 0; c = c->next_sibling) {}
    }
    if (!c)
        c = child_new(t, parent, name);
    c->key = name;
    parent->last_hit = c;
    return c;
}

/* This thread's copy of the path of the main thread's node published in prof_g.attach, created with zero
 * calls where missing. The main thread frees its own tree at its first prof_begin after a prof_reset
 * (under prof_g.lock, with prof_g.attach already NULL), so the path is read under that lock, from the
 * value prof_g.attach has then: NULL or a live node. (Read without it, a worker copied names out of
 * freed nodes: a heap use-after-free under ASan when another thread reset.) Nodes never change
 * while they live. */
static prof_node *attach_point(prof_thread *t, prof_node *seen)
{
    if (seen == t->attach_src)
        return t->attach_dst;
    pthread_mutex_lock(&prof_g.lock);
    prof_node *src = atomic_load_explicit(&prof_g.attach, memory_order_acquire);
    const char *names[PROF_MAX_DEPTH];
    int k = 0;
    for (prof_node *p = src; p && p->name && k < PROF_MAX_DEPTH; p = p->parent)
        names[k++] = p->name;
    prof_node *dst = &t->root;
    while (k > 0)
        dst = child_find(t, dst, names[--k]);
    pthread_mutex_unlock(&prof_g.lock);
    t->attach_src = src;
    t->attach_dst = dst;
    return dst;
}

static inline prof_node *parent_of_next(prof_thread *t)
{
    if (prof_depth(t) > 0)
        return t->top->node;
    if (t == prof_g.main)
        return &t->root;
    prof_node *src = atomic_load_explicit(&prof_g.attach, memory_order_acquire);
    return src ? attach_point(t, src) : &t->root;
}

/* The main thread tells workers where a parallel region would attach (see the top of this file):
 * prof_g.attach holds its innermost open node (NULL or its root at depth 0) and t->pub_top that
 * node's frame, as of its last begin or end outside a parallel region. */
static inline int outside_parallel(void)
{
#if PROF_HAVE_OPENMP
    return omp_get_level() == 0; /* omp_in_parallel, also 0 in a parallel region of one thread: fewer steps */
#else
    return 1;
#endif
}

static inline void publish(prof_thread *t)
{
    if (t != prof_g.main || !outside_parallel())
        return;
    t->pub_top = t->top;
    prof_node *top = prof_depth(t) > 0 ? t->top->node : NULL;
    atomic_store_explicit(&prof_g.attach, top, memory_order_release);
}

/* ---- gates --------------------------------------------------------------------------------------- */

/* A thread's gate (prof_internal.h, `fast`) lets its begins and ends take the fast path. Any thread
 * closes them all after changing what the general path reads (prof_update_extras, prof_reset); a thread
 * opens its own only when nothing needs the general path, and checks again after opening it, so a change
 * made meanwhile closes it again (the fences order each side's store before its loads). */
void prof_gates_raise_locked(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    for (prof_thread *t = prof_g.threads; t; t = t->next)
        atomic_store_explicit(&t->fast, 0, memory_order_relaxed);
}

static inline int needs_general(const prof_thread *t)
{
    return prof_g.slow || t->overflow || t->epoch != prof_g.epoch;
}

/* What the general path keeps in a frame for the optional parts: a fast begin leaves it as it finds it,
 * so while a gate is open every frame has none (end_general clears a frame it pops), and a frame the
 * fast path opened is taken as traced by nobody, counted by no counter set, with no memory peak. */
static inline void frame_clear_extras(prof_frame *f)
{
    f->traced = 0;
    f->ctr_gen = 0;
    f->rss_peak = 0;
}

static void gate_sync(prof_thread *t)
{
    if (needs_general(t))
        return;
    if (!atomic_load_explicit(&t->fast, memory_order_relaxed)) /* opening: the frames lose their extras */
        for (int i = 1; i <= PROF_MAX_DEPTH; i++)
            frame_clear_extras(&t->stack[i]);
    atomic_store_explicit(&t->fast, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (needs_general(t))
        atomic_store_explicit(&t->fast, 0, memory_order_relaxed);
}

/* ---- begin/end: the general path ----------------------------------------------------------------- */

static void extras_begin(prof_thread *t, prof_frame *f, prof_node *n)
{
    if (prof_g.nvtx_on)
        prof_nvtx_push(n);
    if (prof_g.ctr_n > 0)
        prof_counters_thread_begin(t, f);
    else
        f->ctr_gen = 0;
    if (prof_g.mem_on) {
        f->rss_peak = prof_rss_fast();
        f->sample0 = prof_samples_count();
    } else {
        f->rss_peak = 0;
    }
}

static void extras_end(prof_thread *t, prof_frame *f, prof_node *n, uint64_t t1)
{
    if (f->ctr_gen)
        prof_counters_thread_end(t, f, n);
    if (prof_g.mem_on && f->rss_peak) {
        size_t now = prof_rss_fast();
        size_t peak = f->rss_peak > now ? f->rss_peak : now;
        size_t sampled = prof_samples_max(f->sample0, prof_samples_count());
        if (sampled > peak)
            peak = sampled;
        if (peak > n->rss_peak)
            n->rss_peak = peak;
        n->rss_end = now;
        n->last_end_ticks = t1;
        n->has_rss = 1;
        if (prof_depth(t) > 1 && t->top[-1].rss_peak < peak)
            t->top[-1].rss_peak = peak;
    }
    if (prof_g.nvtx_on)
        prof_nvtx_pop();
}

/* prof_begin(NULL) once crashed in child_find. It is ignored with everything up to its prof_end, as a
 * region past PROF_MAX_DEPTH is, and said once per thread. */
static void null_name(prof_thread *t)
{
    if (t->overflow++ == 0)
        prof_error("prof_begin(NULL) on thread %d: a region needs a name (a string); ignored with its "
                   "prof_end", t->id);
}

static void trace_begin(prof_thread *t, prof_frame *f)
{
    f->traced = prof_g.trace_on ? prof_trace_begin(t, f) : 0;
}

/* Every begin the fast path (below) does not take: the thread's first region or first since a reset,
 * anything optional on, another clock, a top-level region of a worker thread, a new child or a changed
 * name, a NULL name, nesting too deep. */
__attribute__((noinline)) static void begin_general(const char *name, int lit)
{
    prof_thread *t = thread_self();
    if (PROF_UNLIKELY(prof_depth(t) >= PROF_MAX_DEPTH || t->overflow)) {
        if (t->overflow++ == 0)
            prof_error("prof_begin(\"%s\") nests deeper than %d regions (thread %d); ignored with its end",
                       name, PROF_MAX_DEPTH, t->id);
        gate_sync(t);
        return;
    }
    prof_node *parent = parent_of_next(t);
    prof_node *n = parent->last_hit;
    /* the pointer, then the text: one buffer reused for several names must not be taken for one */
    if (!n || n->key != name || !name || (!lit && strcmp(n->name, name) != 0)) {
        if (PROF_UNLIKELY(!name)) {
            null_name(t);
            gate_sync(t);
            return;
        }
        n = child_find(t, parent, name);
    }
    t->top++;
    prof_frame *f = t->top;
    f->node = n;
    f->name = name;
    frame_clear_extras(f);
    publish(t);
    if (prof_g.extras)
        extras_begin(t, f, n);
    f->t0 = prof_ticks();
    trace_begin(t, f);
    gate_sync(t);
}

static inline void record(prof_node *n, uint64_t dt)
{
    n->calls++;
    n->sum_ticks += dt;
    n->sumsq_ticks += (prof_u128)dt * dt;
    if (dt < n->min_ticks)
        n->min_ticks = dt;
    if (dt > n->max_ticks)
        n->max_ticks = dt;
}

static int end_mismatch(prof_thread *t, const char *name)
{
    if (t->overflow) {
        t->overflow--;
        return 1;
    }
    if (prof_depth(t) == 0) {
        prof_error("prof_end(\"%s\") with no open region (open: none, thread %d); stack unchanged",
                   name ? name : "(null)", t->id);
        return 1;
    }
    prof_frame *f = t->top;
    if (name && (f->name == name || strcmp(f->node->name, name) == 0))
        return 0;
    prof_error("prof_end(\"%s\") does not match the innermost open region \"%s\" (thread %d); "
               "stack unchanged", name ? name : "(null)", f->node->name, t->id);
    return 1;
}

/* The end of a region opened before a prof_reset or prof_shutdown on another thread: the node it would
 * update belongs to the profile the reset discarded (freed by a reset that cleared every thread:
 * updating it would be a heap use-after-free). The frame is dropped and the misuse counted; the
 * region's time is lost. */
static int end_after_reset(prof_thread *t, const char *name)
{
    if (!t || prof_depth(t) == 0)
        return 0;
    prof_error("prof_end(\"%s\") on thread %d: the profile was reset (prof_reset or prof_shutdown) while "
               "this region was open; its time is dropped (reset between regions: docs/profiler.md)",
               name ? name : "(null)", t->id);
    if (prof_g.nvtx_on)
        prof_nvtx_pop();
    frame_clear_extras(t->top--);
    return 1;
}

/* Every end the fast path does not take (see begin_general); t1 is the fast path's clock read. */
__attribute__((noinline)) static void end_general(const char *name, uint64_t t1)
{
    if (prof_clock_slow())
        t1 = prof_ticks();
    prof_thread *self = tls_self();
    if (PROF_UNLIKELY(self && self->epoch != prof_g.epoch) && end_after_reset(self, name)) {
        gate_sync(self);
        return;
    }
    prof_thread *t = thread_self();
    if (PROF_UNLIKELY(t->overflow || prof_depth(t) == 0 || t->top->name != name)) {
        if (end_mismatch(t, name)) {
            gate_sync(t);
            return;
        }
    }
    prof_frame *f = t->top;
    prof_node *n = f->node;
    if (prof_g.extras)
        extras_end(t, f, n, t1);
    record(n, t1 - f->t0);
    if (f->traced)
        prof_trace_end(t, t1);
    frame_clear_extras(f);
    t->top = --f;
    if (f < t->pub_top) /* as the fast path's end publishes */
        publish(t);
    gate_sync(t);
}

/* ---- begin/end: the fast path -------------------------------------------------------------------- */

/* The frame of a fast begin: its node is the parent's last child begun, by the same pointer (lit: the
 * name is a string literal, prof_begin_literal, so the same pointer is the same text; otherwise the text
 * is compared too). NULL: the general path must run. A worker's top-level region misses here (its
 * sentinel's node has no children) and attaches on the general path (parent_of_next). */
static inline __attribute__((always_inline)) prof_frame *fast_push(prof_thread *t, const char *name, int lit)
{
    prof_frame *f = t->top;
    prof_node *n = f->node->last_hit;
    if (PROF_UNLIKELY(!n || n->key != name || (!lit && strcmp(n->name, name) != 0)))
        return NULL;
    f++;
    f->node = n;
    f->name = name;
    t->top = f;
    return f;
}

/* The main thread's fast begin: also publishes the region outside a parallel region (publish). Asked
 * first, so that only the name lives across the OpenMP call; out of line, so that the other threads'
 * fast path saves no registers. */
static inline __attribute__((always_inline)) void begin_main(const char *name, int lit)
{
    int outside = outside_parallel();
    prof_thread *t = tls_thread;
    prof_frame *f = fast_push(t, name, lit);
    if (PROF_UNLIKELY(!f))
        return begin_general(name, lit);
    if (outside) {
        t->pub_top = f;
        atomic_store_explicit(&prof_g.attach, f->node, memory_order_release);
    }
    f->t0 = prof_ticks_fast();
}
__attribute__((noinline)) static void begin_main_text(const char *name) { begin_main(name, 0); }
__attribute__((noinline)) static void begin_main_literal(const char *name) { begin_main(name, 1); }

/* A fast begin, gate open: a thread-local load, the gate, the parent's last child and its pointer, the
 * frame, one rdtsc. */
static inline __attribute__((always_inline)) void begin_fast(const char *name, int lit)
{
    prof_thread *t = tls_thread;
    if (PROF_UNLIKELY(!atomic_load_explicit(&t->fast, memory_order_relaxed) || t->top >= &t->stack[PROF_MAX_DEPTH]))
        return begin_general(name, lit);
    if (t == prof_g.main)
        return lit ? begin_main_literal(name) : begin_main_text(name);
    prof_frame *f = fast_push(t, name, lit);
    if (PROF_UNLIKELY(!f))
        return begin_general(name, lit);
    f->t0 = prof_ticks_fast();
}

void (prof_begin)(const char *name) { begin_fast(name, 0); }
void prof_begin_literal(const char *name) { begin_fast(name, 1); }

/* An end of the innermost region by the pointer it began with, gate open: record, pop, and on the main
 * thread (outside a parallel region) publish the parent. Inside a parallel region the main thread's
 * top frame stays at or above pub_top (its regions there nest inside the one open at the fork), so the
 * compare alone keeps what was published then. A main-thread node's parent is the node below it,
 * or its root at depth 0 (attach_point takes the root as no region). At depth 0 the frame is the
 * sentinel, whose name no caller passes. */
void prof_end(const char *name)
{
    uint64_t t1 = prof_ticks_fast();
    prof_thread *t = tls_thread;
    prof_frame *f = t->top;
    if (PROF_UNLIKELY(!atomic_load_explicit(&t->fast, memory_order_relaxed) || f->name != name))
        return end_general(name, t1);
    prof_node *n = f->node;
    record(n, t1 - f->t0);
    t->top = --f;
    if (f < t->pub_top) {
        t->pub_top = f;
        atomic_store_explicit(&prof_g.attach, n->parent, memory_order_release);
    }
}

/* Adds device time to the innermost open region of the calling thread. */
void prof_add_device_ms(double ms)
{
    prof_thread *t = prof_thread_self();
    if (prof_depth(t) == 0) {
        prof_note("prof_add_device_ms(%g): no open region on this thread; ignored", ms);
        return;
    }
    prof_node *n = t->top->node;
    n->device_ms += ms;
    n->has_device = 1;
}
