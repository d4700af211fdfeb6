/* trace_check.c: see trace_check.h. */
#include "trace_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TIDS = 256, MAX_DEPTH = 256 };

void tc_add(tc_totals *t, const char *name, long calls, double ns)
{
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, name) == 0) {
            t->v[i].calls += calls;
            t->v[i].ns += ns;
            return;
        }
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->v = realloc(t->v, (size_t)t->cap * sizeof *t->v);
    }
    t->v[t->n++] = (tc_name){strdup(name), calls, ns};
}

void tc_free(tc_totals *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->v[i].name);
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* One thread's replay state. */
typedef struct tstate {
    json_int_t tid;
    double last_ts;
    int depth;
    const char *name[MAX_DEPTH];
    double ts[MAX_DEPTH];
} tstate;

typedef struct span {
    json_int_t tid;
    const char *name;
    double b, e; /* microseconds */
    int depth;
} span;

typedef struct replay {
    tstate *th;
    int nth;
    span *sp;
    size_t nsp, cap;
    json_int_t main_tid;
} replay;

static tstate *thread_of(replay *r, json_int_t tid)
{
    for (int i = 0; i < r->nth; i++)
        if (r->th[i].tid == tid)
            return &r->th[i];
    if (r->nth == MAX_TIDS)
        return NULL;
    tstate *t = &r->th[r->nth++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->last_ts = -1;
    return t;
}

static int fail(char *why, size_t n, const char *msg, size_t i, const char *name)
{
    snprintf(why, n, "event %zu (%s): %s", i, name ? name : "?", msg);
    return -1;
}

/* One B, E or i event on its thread. */
static int step(replay *r, json_t *ev, size_t i, const char *ph, const char *name, char *why, size_t n)
{
    json_t *ts = json_object_get(ev, "ts");
    if (!json_is_number(ts))
        return fail(why, n, "no numeric ts", i, name);
    tstate *t = thread_of(r, json_integer_value(json_object_get(ev, "tid")));
    if (!t)
        return fail(why, n, "too many threads", i, name);
    double x = json_number_value(ts);
    if (x < t->last_ts)
        return fail(why, n, "timestamp goes back on its thread", i, name);
    t->last_ts = x;
    if (strcmp(ph, "B") == 0) {
        if (t->depth == MAX_DEPTH)
            return fail(why, n, "nesting too deep", i, name);
        t->name[t->depth] = name;
        t->ts[t->depth++] = x;
    } else if (strcmp(ph, "E") == 0) {
        if (t->depth == 0 || strcmp(t->name[t->depth - 1], name) != 0)
            return fail(why, n, "E does not close the innermost open B of that name", i, name);
        t->depth--;
        if (r->nsp == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 1024;
            r->sp = realloc(r->sp, r->cap * sizeof *r->sp);
        }
        r->sp[r->nsp++] = (span){t->tid, name, t->ts[t->depth], x, t->depth};
    }
    return 0;
}

static int replay_events(replay *r, json_t *evs, char *why, size_t n)
{
    for (size_t i = 0; i < json_array_size(evs); i++) {
        json_t *ev = json_array_get(evs, i);
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        if (!ph || !name || !json_is_integer(json_object_get(ev, "pid")) ||
            !json_is_integer(json_object_get(ev, "tid")))
            return fail(why, n, "ph, name, pid or tid missing", i, name);
        if (strcmp(ph, "M") == 0) {
            const char *tn = json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
            if (strcmp(name, "thread_name") == 0 && tn && strcmp(tn, "main") == 0)
                r->main_tid = json_integer_value(json_object_get(ev, "tid"));
            continue;
        }
        if (strcmp(ph, "C") == 0)
            continue;
        if (strcmp(ph, "B") && strcmp(ph, "E") && strcmp(ph, "i"))
            return fail(why, n, "unexpected ph", i, name);
        if (step(r, ev, i, ph, name, why, n) != 0)
            return -1;
    }
    for (int k = 0; k < r->nth; k++)
        if (r->th[k].depth != 0) {
            snprintf(why, n, "thread %lld ends with %d regions open", (long long)r->th[k].tid, r->th[k].depth);
            return -1;
        }
    return 0;
}

/* Whether span s lies inside a top-level `root` span of the main thread. */
static int in_root(const replay *r, const span *s, const char *root)
{
    for (size_t k = 0; k < r->nsp; k++) {
        const span *w = &r->sp[k];
        if (w->tid == r->main_tid && w->depth == 0 && strcmp(w->name, root) == 0 && s->b >= w->b && s->e <= w->e)
            return 1;
    }
    return 0;
}

int tc_check_trace(json_t *trace, const char *root, tc_totals *out, long *dropped, char *why, size_t n)
{
    json_t *evs = json_object_get(trace, "traceEvents");
    json_t *meta = json_object_get(trace, "speedlab");
    if (!json_is_array(evs) || !json_is_object(meta)) {
        snprintf(why, n, "no traceEvents array or speedlab object");
        return -1;
    }
    *dropped = (long)json_integer_value(json_object_get(meta, "dropped_events"));
    replay r = {.th = calloc(MAX_TIDS, sizeof(tstate)), .main_tid = -1};
    int rc = replay_events(&r, evs, why, n);
    for (size_t k = 0; rc == 0 && k < r.nsp; k++)
        if (!root || in_root(&r, &r.sp[k], root))
            tc_add(out, r.sp[k].name, 1, (r.sp[k].e - r.sp[k].b) * 1e3);
    free(r.th);
    free(r.sp);
    return rc;
}

void tc_profile_totals(json_t *profile, const char *root, tc_totals *out)
{
    json_t *regions = json_object_get(profile, "regions"), *reg;
    size_t i;
    json_array_foreach(regions, i, reg) {
        const char *first = json_string_value(json_array_get(json_object_get(reg, "path"), 0));
        if (root && (!first || strcmp(first, root) != 0))
            continue;
        tc_add(out, json_string_value(json_object_get(reg, "name")),
               (long)json_integer_value(json_object_get(reg, "calls")),
               json_number_value(json_object_get(reg, "incl_ns")));
    }
}

int tc_compare(const tc_totals *trace, const tc_totals *profile, char *why, size_t n)
{
    for (int i = 0; i < profile->n; i++) {
        const tc_name *p = &profile->v[i], *t = NULL;
        for (int k = 0; k < trace->n && !t; k++)
            if (strcmp(trace->v[k].name, p->name) == 0)
                t = &trace->v[k];
        if (p->calls == 0)
            continue; /* a path node on a worker thread with no calls of its own */
        if (!t || t->calls != p->calls) {
            snprintf(why, n, "region %s: %ld calls in the profile, %ld in the trace", p->name, p->calls,
                     t ? t->calls : 0);
            return -1;
        }
        if (fabs(t->ns - p->ns) > 2.0 * (double)p->calls + 1e-9 * p->ns + 1.0) {
            snprintf(why, n, "region %s: %.0f ns in the profile, %.0f ns in the trace", p->name, p->ns, t->ns);
            return -1;
        }
    }
    for (int k = 0; k < trace->n; k++) { /* every traced name must be in the profile too */
        int found = 0;
        for (int i = 0; i < profile->n && !found; i++)
            found = strcmp(trace->v[k].name, profile->v[i].name) == 0;
        if (!found) {
            snprintf(why, n, "region %s is in the trace only", trace->v[k].name);
            return -1;
        }
    }
    return 0;
}
