/*
 * Counters (PAPI). One event set, created and read on the thread that called prof_set_counters()
 * (usually the main thread): regions on that thread get inclusive per-region deltas; regions on other
 * threads get none (they are then listed without "counters", never with zeros). An event that cannot
 * be added is noted once on stderr and recorded as absent with the reason.
 */
#include "prof_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#if PROF_HAVE_PAPI
#include <papi.h>
#endif

enum { MAX_ABSENT = 32, MAX_NOTED = 64 };
static struct { char *name, *why; } absent[MAX_ABSENT];
static int nabsent;
static char *noted[MAX_NOTED]; /* events already reported on stderr */
static int nnoted;
static prof_thread *owner;     /* thread that holds the event set */

static const struct { const char *group, *events; } groups[] = {
    {"cache", "PAPI_L1_DCM,PAPI_L2_DCM,PAPI_L3_TCM"},
    {"branch", "PAPI_BR_INS,PAPI_BR_MSP"},
    {"ipc", "PAPI_TOT_INS,PAPI_TOT_CYC"},
};

static void note_absent(const char *name, const char *why)
{
    for (int i = 0; i < nabsent; i++)
        if (strcmp(absent[i].name, name) == 0)
            return;
    if (nabsent < MAX_ABSENT) {
        absent[nabsent].name = strdup(name);
        absent[nabsent].why = strdup(why);
        nabsent++;
    }
    for (int i = 0; i < nnoted; i++)
        if (strcmp(noted[i], name) == 0)
            return;
    if (nnoted < MAX_NOTED)
        noted[nnoted++] = strdup(name);
    prof_note("counter %s is not counted: %s", name, why);
}

static void clear_sets(void)
{
    for (int i = 0; i < nabsent; i++) {
        free(absent[i].name);
        free(absent[i].why);
    }
    nabsent = 0;
    for (int i = 0; i < prof_g.ctr_n; i++) {
        free(prof_g.ctr_names[i]);
        prof_g.ctr_names[i] = NULL;
    }
    prof_g.ctr_n = 0;
}

/* Token check: a name is letters, digits and _ : . = - only. */
static int name_ok(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_:.=-", *s))
            return 0;
    return 1;
}

enum { MAX_NAMES = PROF_MAX_COUNTERS * 2, NAME_LEN = 127 };
static char spec_why[256]; /* why the last spec was refused (prof_counters_error) */

__attribute__((format(printf, 1, 2))) static int refuse(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(spec_why, sizeof spec_why, fmt, ap);
    va_end(ap);
    return -1;
}

/* One name (trimmed) into names[*n] (or only counted past max), groups expanded; 0 or -1 with spec_why. */
static int add_name(char *tok, char names[][NAME_LEN + 1], int max, int *n)
{
    while (isspace((unsigned char)*tok))
        tok++;
    char *e = tok + strlen(tok);
    while (e > tok && isspace((unsigned char)e[-1]))
        *--e = '\0';
    size_t len = strlen(tok);
    if (len > NAME_LEN)
        return refuse("event name \"%.24s...\" is %zu characters long; at most %d", tok, len, NAME_LEN);
    if (!name_ok(tok))
        return refuse("\"%.40s\": an event name is letters, digits and _ : . = - only", tok);
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
        if (strcmp(tok, groups[g].group) == 0) {
            char expand[128];
            snprintf(expand, sizeof expand, "%s", groups[g].events);
            char *save = NULL;
            for (char *t = strtok_r(expand, ",", &save); t; t = strtok_r(NULL, ",", &save))
                add_name(t, names, max, n);
            return 0;
        }
    if (*n < max)
        strcpy(names[*n], tok);
    (*n)++;
    return 0;
}

/* Splits spec into names (groups expanded) in names[]; the count, or -1 with the reason in spec_why:
 * which limit (names, length) or which character, never just "malformed". */
static int parse_spec(const char *spec, char names[][NAME_LEN + 1], int max)
{
    /* a spec like "a,,b" or ",": strtok_r would skip the empty names */
    if (strstr(spec, ",,") || spec[0] == ',' || (*spec && spec[strlen(spec) - 1] == ','))
        return refuse("an empty event name (\",,\" or a comma at either end)");
    char *buf = strdup(spec);
    if (!buf)
        return refuse("out of memory");
    int n = 0, rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save))
        rc = add_name(tok, names, max, &n);
    free(buf);
    if (rc == 0 && n > max)
        rc = refuse("%d event names (the groups cache, branch, ipc expanded); at most %d, of which %d "
                    "count at once", n, max, PROF_MAX_COUNTERS);
    return rc ? -1 : n;
}

const char *prof_counters_error(void) { return spec_why; }

#if PROF_HAVE_PAPI
static int papi_ready(void)
{
    static int state; /* 0 untried, 1 ok, -1 failed */
    if (state == 0) {
        int v = PAPI_library_init(PAPI_VER_CURRENT);
        state = v == PAPI_VER_CURRENT && PAPI_thread_init(pthread_self) == PAPI_OK ? 1 : -1;
    }
    return state == 1;
}

static void stop_owner(void)
{
    prof_thread *t = owner;
    if (!t || !t->ctr_ok)
        return;
    if (t == prof_thread_self()) {
        long long v[PROF_MAX_COUNTERS];
        PAPI_stop(t->eventset, v);
        PAPI_cleanup_eventset(t->eventset);
        PAPI_destroy_eventset(&t->eventset);
    }
    t->ctr_ok = 0;
    owner = NULL;
}

static void add_events(prof_thread *t, char names[][128], int n)
{
    t->eventset = PAPI_NULL;
    if (PAPI_create_eventset(&t->eventset) != PAPI_OK) {
        for (int i = 0; i < n; i++)
            note_absent(names[i], "PAPI_create_eventset failed");
        return;
    }
    for (int i = 0; i < n; i++) {
        int code, rc = PAPI_event_name_to_code(names[i], &code);
        if (rc == PAPI_OK)
            rc = PAPI_add_event(t->eventset, code);
        if (rc != PAPI_OK) {
            note_absent(names[i], PAPI_strerror(rc));
        } else if (prof_g.ctr_n < PROF_MAX_COUNTERS) {
            prof_g.ctr_names[prof_g.ctr_n++] = strdup(names[i]);
        } else {
            note_absent(names[i], "more events than the profiler counts at once");
        }
    }
    if (prof_g.ctr_n > 0 && PAPI_start(t->eventset) != PAPI_OK) {
        for (int i = 0; i < prof_g.ctr_n; i++)
            note_absent(prof_g.ctr_names[i], "PAPI_start failed for the event set");
        for (int i = 0; i < prof_g.ctr_n; i++)
            free(prof_g.ctr_names[i]);
        prof_g.ctr_n = 0;
    }
    t->ctr_ok = prof_g.ctr_n > 0;
    owner = t->ctr_ok ? t : NULL;
}
#endif

int prof_set_counters(const char *spec)
{
    if (!atomic_load(&prof_g.active))
        prof_init(NULL);
    char names[MAX_NAMES][NAME_LEN + 1];
    spec_why[0] = '\0';
    int n = spec ? parse_spec(spec, names, MAX_NAMES) : 0;
    if (n < 0) {
        fprintf(stderr, "prof: counter spec \"%.60s%s\" refused: %s (want comma-separated PAPI event names "
                        "or the groups cache, branch, ipc)\n", spec, strlen(spec) > 60 ? "..." : "", spec_why);
        return -1;
    }
    prof_thread *t = prof_thread_self();
#if PROF_HAVE_PAPI
    stop_owner();
#endif
    clear_sets();
    prof_g.ctr_gen++;
    t->ctr_gen = prof_g.ctr_gen;
#if PROF_HAVE_PAPI
    if (n > 0 && papi_ready())
        add_events(t, names, n);
    else
        for (int i = 0; i < n; i++)
            note_absent(names[i], "PAPI_library_init failed");
#else
    for (int i = 0; i < n; i++)
        note_absent(names[i], "built without PAPI");
#endif
    prof_update_extras();
    return prof_g.ctr_n;
}

int prof_counter_count(void) { return prof_g.ctr_n; }
const char *prof_counter_name(int i) { return i >= 0 && i < prof_g.ctr_n ? prof_g.ctr_names[i] : NULL; }
int prof_counter_absent_count(void) { return nabsent; }
const char *prof_counter_absent_name(int i) { return i >= 0 && i < nabsent ? absent[i].name : NULL; }
const char *prof_counter_absent_why(int i) { return i >= 0 && i < nabsent ? absent[i].why : NULL; }

void prof_counters_thread_begin(prof_thread *t, prof_frame *f)
{
    f->ctr_gen = 0;
#if PROF_HAVE_PAPI
    if (t == owner && t->ctr_ok && PAPI_read(t->eventset, f->c0) == PAPI_OK)
        f->ctr_gen = prof_g.ctr_gen;
#else
    (void)t;
#endif
}

void prof_counters_thread_end(prof_thread *t, prof_frame *f, prof_node *n)
{
#if PROF_HAVE_PAPI
    long long c1[PROF_MAX_COUNTERS];
    if (t != owner || f->ctr_gen != prof_g.ctr_gen || PAPI_read(t->eventset, c1) != PAPI_OK)
        return;
    if (n->ctr_gen != f->ctr_gen) {
        memset(n->ctr, 0, sizeof n->ctr);
        n->ctr_calls = 0;
        n->ctr_gen = f->ctr_gen;
    }
    for (int i = 0; i < prof_g.ctr_n; i++)
        n->ctr[i] += c1[i] - f->c0[i];
    n->ctr_calls++;
    if (f->traced) /* its end event carries the deltas (trace.c); an untraced frame's must not linger */
        prof_trace_counters(t, c1, f->c0);
#else
    (void)t, (void)f, (void)n;
#endif
}

/* A node's counters are valid when every one of its calls was counted with the current set. Called
 * after record(), so calls includes the last one. */
int prof_counter_valid(const prof_node *n)
{
    return prof_g.ctr_n > 0 && n->ctr_gen == prof_g.ctr_gen && n->ctr_calls == n->calls && n->calls > 0;
}

void prof_counters_thread_exit(prof_thread *t)
{
#if PROF_HAVE_PAPI
    if (t == owner && t->ctr_ok) {
        long long v[PROF_MAX_COUNTERS];
        PAPI_stop(t->eventset, v);
        t->ctr_ok = 0;
        owner = NULL; /* later regions on other threads read no counters */
    }
#else
    (void)t;
#endif
}

void prof_counters_shutdown(void)
{
#if PROF_HAVE_PAPI
    if (owner && owner == prof_thread_self())
        stop_owner();
#endif
    clear_sets();
    for (int i = 0; i < nnoted; i++)
        free(noted[i]);
    nnoted = 0;
    owner = NULL;
    prof_update_extras();
}
