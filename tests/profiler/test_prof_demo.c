/*
 * The demo program (profiler/demo/prof_demo.c, path in argv[1]) run as a user would run it, with
 * PROF_JSON and PROF_REPORT set: its JSON profile must be consistent (self <= inclusive, children
 * within their parent), have the call counts the demo makes, and the TimerStats table must be printed
 * at exit. An unwritable PROF_JSON must give a clear message on stderr, not a crash.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, posix_spawn */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <jansson.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "speedlab/prof.h"

extern char **environ;

static const char *demo;
static char dir[] = "/tmp/prof_demo_XXXXXX";

/* What the demo does (see the table at the top of prof_demo.c). */
static const struct { const char *path, *name; int depth; long calls; } want[] = {
    {"demo", "demo", 0, 1},
    {"demo/load", "load", 1, 1},
    {"demo/iterate", "iterate", 1, 3},
    {"demo/iterate/smooth", "smooth", 2, 3},
    {"demo/iterate/reduce", "reduce", 2, 3},
    {"demo/iterate/reduce/chunk", "chunk", 3, 24},
};
enum { NWANT = sizeof want / sizeof want[0] };

typedef struct run {
    int status; /* from waitpid */
    char *out, *err;
} run;

static run good;     /* PROF_JSON in a writable place, PROF_REPORT=1 */
static json_t *prof; /* its JSON */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    size_t k;
    while (s && (k = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (n + 1 == cap)
            s = realloc(s, cap *= 2);
    }
    fclose(f);
    if (s)
        s[n] = '\0';
    return s;
}

/* Runs the demo with PROF_JSON=json and PROF_REPORT=1 (every other PROF_* variable removed), stdout
 * and stderr captured. Returns 0 when it could be started. */
static int run_demo(const char *json, run *r)
{
    char out[64], err[64], json_env[512];
    snprintf(out, sizeof out, "%s/stdout", dir);
    snprintf(err, sizeof err, "%s/stderr", dir);
    snprintf(json_env, sizeof json_env, "PROF_JSON=%s", json);
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 3, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "PROF_", 5) != 0)
            env[k++] = environ[i];
    env[k++] = json_env;
    env[k++] = "PROF_REPORT=1";
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    char *argv[] = {(char *)demo, NULL};
    int rc = posix_spawn(&pid, demo, &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    if (rc != 0) {
        fprintf(stderr, "cannot start %s: %s\n", demo, strerror(rc));
        return -1;
    }
    if (waitpid(pid, &r->status, 0) != pid)
        return -1;
    r->out = slurp(out);
    r->err = slurp(err);
    return r->out && r->err ? 0 : -1;
}

static int setup(void **state)
{
    (void)state;
    char json[128];
    snprintf(json, sizeof json, "%s/profile.json", dir);
    if (run_demo(json, &good) != 0)
        return -1;
    json_error_t e;
    prof = json_load_file(json, 0, &e);
    if (!prof)
        fprintf(stderr, "%s: %s (line %d); demo stderr:\n%s\n", json, e.text, e.line, good.err);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(prof);
    free(good.out);
    free(good.err);
    return 0;
}

static json_t *regions(void)
{
    assert_non_null(prof);
    json_t *r = json_object_get(prof, "regions");
    assert_true(json_is_array(r));
    return r;
}

static long jint(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v))
        fail_msg("region field \"%s\" is missing or not an integer", key);
    return (long)json_integer_value(v);
}

/* The path of region r joined by '/'. */
static void path_of(json_t *r, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(r, "path"), i, p) {
        if (i)
            strncat(buf, "/", len - strlen(buf) - 1);
        strncat(buf, json_string_value(p), len - strlen(buf) - 1);
    }
}

static void test_exits_cleanly(void **state)
{
    (void)state;
    assert_true(WIFEXITED(good.status));
    assert_int_equal(WEXITSTATUS(good.status), 0);
    assert_null(strstr(good.err, "prof: error"));
    assert_null(strstr(good.err, "runtime error")); /* UBSan reports and goes on: catch it here */
    assert_non_null(strstr(good.out, "sum after 3 sweeps"));
}

static void test_schema(void **state)
{
    (void)state;
    assert_non_null(prof);
    assert_string_equal(json_string_value(json_object_get(prof, "schema")), "speedlab-profile");
    json_t *v = json_object_get(prof, "schema_version");
    assert_true(json_is_integer(v));
    assert_int_equal(json_integer_value(v), PROF_SCHEMA_VERSION);
    assert_int_equal(json_integer_value(json_object_get(prof, "errors")), 0);
}

static void test_self_within_inclusive(void **state)
{
    (void)state;
    size_t i;
    json_t *r;
    json_array_foreach(regions(), i, r) {
        long self = jint(r, "self_ns"), incl = jint(r, "incl_ns");
        if (self < 0 || self > incl)
            fail_msg("%s: self %ld ns not within 0..incl %ld ns", json_string_value(json_object_get(r, "name")),
                     self, incl);
    }
}

/* Children run inside their parent, so their inclusive times add up to at most the parent's. A child
 * opened on several threads adds per-thread times (docs/profiler.md), so its bound is the parent's
 * time times its thread count. Every figure is rounded to 1 ns in the JSON: epsilon 1 ns per term. */
static void test_children_within_parent(void **state)
{
    (void)state;
    json_t *all = regions();
    size_t i, j;
    json_t *p, *c;
    json_array_foreach(all, i, p) {
        char pp[256], cp[256];
        path_of(p, pp, sizeof pp);
        double incl = (double)jint(p, "incl_ns"), sum = 0;
        int k = 0, threads = 1;
        json_array_foreach(all, j, c) {
            path_of(c, cp, sizeof cp);
            size_t n = strlen(pp);
            if (strncmp(cp, pp, n) != 0 || cp[n] != '/' || strchr(cp + n + 1, '/'))
                continue; /* not a direct child */
            sum += (double)jint(c, "incl_ns");
            int t = (int)jint(c, "threads");
            threads = t > threads ? t : threads;
            k++;
        }
        double bound = incl * threads + (k + 1) * 1.0;
        if (k > 0 && sum > bound)
            fail_msg("%s: children's inclusive times add up to %.0f ns, above the parent's %.0f ns (x%d threads)",
                     pp, sum, incl, threads);
    }
}

static void test_call_counts(void **state)
{
    (void)state;
    json_t *all = regions();
    assert_int_equal(json_array_size(all), NWANT);
    for (int w = 0; w < NWANT; w++) {
        size_t i;
        json_t *r, *found = NULL;
        char p[256];
        json_array_foreach(all, i, r) {
            path_of(r, p, sizeof p);
            if (strcmp(p, want[w].path) == 0)
                found = r;
        }
        if (!found)
            fail_msg("region %s missing from the JSON", want[w].path);
        if (jint(found, "calls") != want[w].calls)
            fail_msg("%s: %ld calls, the demo makes %ld", want[w].path, jint(found, "calls"), want[w].calls);
        assert_int_equal(jint(found, "depth"), want[w].depth);
    }
}

/* The demo allocates and touches 32 MiB in "load" with the memory sampler on. */
static void test_memory(void **state)
{
    (void)state;
    json_t *load = json_array_get(regions(), 1);
    char p[256];
    path_of(load, p, sizeof p);
    assert_string_equal(p, "demo/load");
    assert_true(jint(load, "rss_peak_bytes") >= 32L << 20);
    json_t *mem = json_object_get(prof, "memory");
    assert_non_null(mem);
    assert_true(json_array_size(json_object_get(mem, "rss_bytes")) >= 1);
}

/* Calls in the report row of `name` at `depth` (indented 2 per level, " *" when several threads);
 * -1 when there is no such row. */
static long report_calls(const char *text, const char *name, int depth)
{
    char label[80];
    snprintf(label, sizeof label, "%*s%s ", 2 * depth, "", name);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, label, strlen(label)) != 0)
            continue;
        const char *q = l + strlen(label);
        while (*q == ' ' || *q == '*')
            q++;
        return strtol(q, NULL, 10);
    }
    return -1;
}

static void test_report_at_exit(void **state)
{
    (void)state;
    const char *t = strstr(good.err, "TimerStats (clock: ");
    assert_non_null(t);
    const char *cols[] = {"region", "calls", "total", "self", "mean", "std", "min", "max", "% run"};
    const char *h = strstr(t, "\nregion ");
    assert_non_null(h);
    for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++) {
        const char *c = strstr(h, cols[i]);
        if (!c || (strchr(h + 1, '\n') && c > strchr(h + 1, '\n')))
            fail_msg("report header has no column \"%s\" in order", cols[i]);
        h = c;
    }
    for (int w = 0; w < NWANT; w++) {
        long calls = report_calls(t, want[w].name, want[w].depth);
        if (calls != want[w].calls)
            fail_msg("report row \"%s\" (depth %d): calls %ld, want %ld", want[w].name, want[w].depth, calls,
                     want[w].calls);
    }
}

static void test_unwritable_json(void **state)
{
    (void)state;
    char json[128];
    snprintf(json, sizeof json, "%s/no-such-dir/profile.json", dir); /* unwritable even for root */
    run r = {0};
    assert_int_equal(run_demo(json, &r), 0);
    assert_true(WIFEXITED(r.status)); /* not killed by a signal */
    assert_int_equal(WEXITSTATUS(r.status), 0);
    /* what is wrong (the path, and that it could not be written) and what to do (PROF_JSON) */
    if (!strstr(r.err, json) || !strstr(r.err, "write") || !strstr(r.err, "set PROF_JSON"))
        fail_msg("stderr does not say that the profile could not be written to %s and what to do:\n%s", json,
                 r.err);
    assert_non_null(strstr(r.err, "TimerStats")); /* the other output still happens */
    assert_int_equal(access(json, F_OK), -1);
    free(r.out);
    free(r.err);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH_TO_prof_demo\n", argv[0]);
        return 2;
    }
    demo = argv[1];
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exits_cleanly),          cmocka_unit_test(test_schema),
        cmocka_unit_test(test_self_within_inclusive),  cmocka_unit_test(test_children_within_parent),
        cmocka_unit_test(test_call_counts),            cmocka_unit_test(test_memory),
        cmocka_unit_test(test_report_at_exit),         cmocka_unit_test(test_unwritable_json),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    const char *files[] = {"stdout", "stderr", "profile.json"};
    for (int i = 0; i < 3; i++) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    rmdir(dir);
    return rc;
}
