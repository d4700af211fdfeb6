/*
 * The trace file: Chrome Trace Event JSON (the "JSON Object Format"), which ui.perfetto.dev,
 * Perfetto's trace_processor and chrome://tracing read. docs/profiler.md, "Trace", lists what is in it.
 *
 *   {"traceEvents": [
 *     {"ph":"M","pid":P,"tid":0,"name":"process_name","args":{"name":"speedlab run ..."}},
 *     {"ph":"M","pid":P,"tid":T,"name":"thread_name","args":{"name":"main"}},      one per thread
 *     {"ph":"B","ts":12.345,"pid":P,"tid":T,"name":"solve"},                        region begins
 *     {"ph":"E","ts":20.001,"pid":P,"tid":T,"name":"solve"},                        and ends
 *     {"ph":"i","ts":..,"pid":P,"tid":0,"name":"case ...","s":"p"},                prof_trace_mark
 *     {"ph":"C","ts":..,"pid":P,"tid":T,"name":"PAPI per region","args":{"ev":N}},  counter deltas
 *     {"ph":"C","ts":..,"pid":P,"tid":0,"name":"rss","args":{"rss_bytes":N}}],      memory sampler
 *    "speedlab": {"schema":"speedlab-trace","schema_version":1,"clock":..,"events_per_thread":N,
 *                 "dropped_events":N,"colors":{"solve":"#rrggbb",...}}}
 *
 * Written for Perfetto's JSON importer as well as for JSON parsers: "traceEvents" comes first (the
 * importer skips everything after a top-level key it does not know, such as "speedlab"); "ts" comes
 * right after "ph" (the importer scans an event's keys in order to find it); no "displayTimeUnit"
 * (Perfetto reads "ns" there as the unit of ts, Chrome as a display setting); and no \uXXXX escapes,
 * which Perfetto's key scanner has rejected: a name's control characters other than \n \t \r \b \f
 * become spaces, and bytes that are not well-formed UTF-8 become U+FFFD written as UTF-8 (utf8.c).
 *
 * ts is microseconds since prof_trace_start, printed to the nanosecond, from the same clock ticks as
 * the profile, so a region's E.ts - B.ts is the duration the profile added for that call. Events of a
 * thread are written in the order they happened, which is also time order. Region names are user
 * strings: they are escaped as above.
 */
#include "prof_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* JSON's two-character escape of a control character, or 0 when it has none. */
static char short_escape(unsigned char c)
{
    switch (c) {
    case '\b': return 'b';
    case '\t': return 't';
    case '\n': return 'n';
    case '\f': return 'f';
    case '\r': return 'r';
    default: return 0;
    }
}

/* A JSON string: quotes and backslashes escaped, control characters as above (top of the file). */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (*p == '"' || *p == '\\') {
            fputc('\\', f);
            fputc(*p++, f);
        } else if (*p < 0x20) {
            char e = short_escape(*p++);
            if (e) {
                fputc('\\', f);
                fputc(e, f);
            } else {
                fputc(' ', f);
            }
        } else if (*p < 0x80) {
            fputc(*p++, f);
        } else {
            int n = prof_utf8_len(p); /* strict: no surrogate, overlong form or > U+10FFFF */
            if (n == 0) {
                fputs("\xef\xbf\xbd", f); /* U+FFFD */
                p++;
            } else {
                fwrite(p, 1, (size_t)n, f);
                p += n;
            }
        }
    }
    fputc('"', f);
}

/* Microseconds since the trace began, to the nanosecond (integer arithmetic: no locale, exact). */
static void put_ts(FILE *f, uint64_t ticks, uint64_t t0)
{
    double ns = ticks > t0 ? prof_ticks_to_ns((double)(ticks - t0)) : 0.0;
    unsigned long long q = (unsigned long long)(ns + 0.5);
    fprintf(f, "%llu.%03llu", q / 1000, q % 1000);
}

/* An event's opening: ph, ts (none for M events: ticks NULL), pid, tid, name. */
static void head(FILE *f, const char *ph, const uint64_t *ticks, uint64_t t0, int pid, long tid, const char *name)
{
    fprintf(f, ",\n{\"ph\":\"%s\"", ph);
    if (ticks) {
        fputs(",\"ts\":", f);
        put_ts(f, *ticks, t0);
    }
    fprintf(f, ",\"pid\":%d,\"tid\":%ld,\"name\":", pid, tid);
    put_str(f, name);
}

static void thread_meta(FILE *f, int pid, const prof_thread *t)
{
    char name[64];
    if (t == prof_g.main)
        snprintf(name, sizeof name, "main");
    else
        snprintf(name, sizeof name, "thread %d", t->id);
    head(f, "M", NULL, 0, pid, t->trace->os_tid, "thread_name");
    fputs(",\"args\":{\"name\":", f);
    put_str(f, name);
    fputs("}}", f);
    head(f, "M", NULL, 0, pid, t->trace->os_tid, "thread_sort_index");
    fprintf(f, ",\"args\":{\"sort_index\":%d}}", t->id);
}

static void counters_event(FILE *f, int pid, const prof_trace_buf *b, const prof_trace_ev *e, uint64_t t0)
{
    head(f, "C", &e->ticks, t0, pid, b->os_tid, "PAPI per region");
    fputs(",\"args\":{", f);
    for (int i = 0; i < prof_g.ctr_n; i++) {
        fputs(i ? "," : "", f);
        put_str(f, prof_g.ctr_names[i]);
        fprintf(f, ":%lld", b->ctr[e->ctr - 1][i]);
    }
    fputs("}}", f);
}

/* One thread's events in order; an E carries its B's name (a stack replays the nesting). Begins still
 * open when the trace is written (prof_trace_write during a run) are closed at `now`, marked so. */
static void thread_events(FILE *f, int pid, const prof_trace_buf *b, uint64_t t0, uint64_t now)
{
    const char *stack[PROF_MAX_DEPTH];
    int depth = 0;
    for (size_t i = 0; i < b->n; i++) {
        const prof_trace_ev *e = &b->ev[i];
        const char *name = e->name;
        const char *ph = e->kind == PROF_EV_BEGIN ? "B" : "E";
        if (e->kind == PROF_EV_BEGIN && depth < PROF_MAX_DEPTH)
            stack[depth++] = name;
        else if (e->kind == PROF_EV_END)
            name = depth > 0 ? stack[--depth] : "?";
        head(f, ph, &e->ticks, t0, pid, b->os_tid, name);
        fputc('}', f);
        if (e->ctr && b->ctr)
            counters_event(f, pid, b, e, t0);
    }
    while (depth > 0) {
        head(f, "E", &now, t0, pid, b->os_tid, stack[--depth]);
        fputs(",\"args\":{\"unfinished\":true}}", f);
    }
}

/* Marks: process-wide instant events, on tid 0 (no thread of the program) so that each thread's own
 * events stay in time order. */
static void mark_events(FILE *f, int pid, const prof_trace_meta *m)
{
    for (size_t i = 0; i < m->nmarks; i++) {
        head(f, "i", &m->marks[i].ticks, m->t0, pid, 0, m->marks[i].label);
        fputs(",\"s\":\"p\"}", f);
    }
}

static void rss_events(FILE *f, int pid, const prof_trace_meta *m)
{
    for (size_t i = 0; i < m->nrss; i++) {
        if (m->rss[i].ticks < m->t0)
            continue;
        head(f, "C", &m->rss[i].ticks, m->t0, pid, 0, "rss");
        fprintf(f, ",\"args\":{\"rss_bytes\":%zu}}", m->rss[i].rss);
    }
}

/* Whether a region name with the same text was already listed among the colours. */
static int seen_name(const char **names, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (names[i] == s || strcmp(names[i], s) == 0)
            return 1;
    return 0;
}

/* The NVTX colour of every region name (prof_color_of), so viewers and plots/timeline.gp agree. */
static void colors(FILE *f)
{
    size_t cap = 256, n = 0;
    const char **names = malloc(cap * sizeof *names);
    fputs("\"colors\":{", f);
    for (prof_thread *t = prof_g.threads; t && names; t = t->next) {
        const prof_trace_buf *b = t->trace;
        for (size_t i = 0; b && i < b->n; i++) {
            const prof_trace_ev *e = &b->ev[i];
            if (e->kind != PROF_EV_BEGIN || (i > 0 && b->ev[i - 1].name == e->name) ||
                seen_name(names, n, e->name))
                continue;
            if (n == cap) {
                const char **g = realloc(names, (cap *= 2) * sizeof *g);
                if (!g)
                    break;
                names = g;
            }
            names[n++] = e->name;
            fputs(n > 1 ? "," : "", f);
            put_str(f, e->name);
            fprintf(f, ":\"#%06x\"", prof_color_of(e->name) & 0xffffffu);
        }
    }
    fputs("}", f);
    free(names);
}

int prof_trace_write_file(FILE *f, const prof_trace_meta *m)
{
    int pid = (int)getpid();
    uint64_t now = prof_ticks();
    uint64_t dropped = 0;
    fputs("{\"traceEvents\":[\n", f);
    fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":", pid);
    put_str(f, m->process ? m->process : "speedlab-prof");
    fputs("}}", f);
    for (prof_thread *t = prof_g.threads; t; t = t->next)
        if (t->trace)
            thread_meta(f, pid, t);
    for (prof_thread *t = prof_g.threads; t; t = t->next)
        if (t->trace) {
            thread_events(f, pid, t->trace, m->t0, now);
            dropped += t->trace->dropped;
        }
    mark_events(f, pid, m);
    rss_events(f, pid, m);
    dropped += m->marks_dropped;
    fputs("\n],\n\"speedlab\":{\"schema\":\"speedlab-trace\",\"schema_version\":1,"
          "\"clock\":", f);
    put_str(f, prof_clock_name());
    fprintf(f, ",\"events_per_thread\":%zu,\"dropped_events\":%llu,\n", m->cap, (unsigned long long)dropped);
    colors(f);
    fputs("}}\n", f);
    return ferror(f) ? -1 : 0;
}
