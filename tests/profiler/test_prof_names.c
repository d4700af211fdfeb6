/*
 * Region names are any bytes (profiler/src/utf8.c): each one is kept in the JSON profile (as a string,
 * escaped, never dropped or merged into its parent), every output is valid UTF-8 (jansson, which refuses
 * surrogates, overlong forms and code points above U+10FFFF, must read the profile and the trace), and
 * a byte that starts no well-formed sequence is U+FFFD. Then the same for 300 names of random bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "speedlab/prof.h"

#define FFFD "\xef\xbf\xbd"

static char trace_path[256];

static int setup(void **state)
{
    (void)state;
    snprintf(trace_path, sizeof trace_path, "%s/speedlab-names-test-%d.json",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    prof_options o = {.nvtx = 0, .quiet = 1, .json_path = ""};
    prof_init(&o);
    prof_trace_start("");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    prof_shutdown();
    unlink(trace_path);
    return 0;
}

static json_t *profile(void)
{
    char *s = prof_json();
    assert_non_null(s);
    json_error_t e;
    json_t *p = json_loads(s, 0, &e);
    if (!p)
        fail_msg("the profile is not valid JSON (UTF-8): %s", e.text);
    free(s);
    return p;
}

static json_t *trace(void)
{
    assert_int_equal(prof_trace_write(trace_path), 0);
    json_error_t e;
    json_t *t = json_load_file(trace_path, 0, &e);
    if (!t)
        fail_msg("the trace is not valid JSON (UTF-8): %s (line %d)", e.text, e.line);
    return t;
}

/* The region whose path is the n names given, or NULL. */
static json_t *region(json_t *prof, int n, const char *const *names)
{
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(prof, "regions"), i, r) {
        json_t *p = json_object_get(r, "path");
        if ((int)json_array_size(p) != n)
            continue;
        int k = 0;
        while (k < n && json_string_value(json_array_get(p, (size_t)k)) &&
               strcmp(json_string_value(json_array_get(p, (size_t)k)), names[k]) == 0)
            k++;
        if (k == n)
            return r;
    }
    return NULL;
}

static int count_begins(json_t *t, const char *name)
{
    int k = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(t, "traceEvents"), i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *n = json_string_value(json_object_get(ev, "name"));
        k += ph && n && !strcmp(ph, "B") && !strcmp(n, name);
    }
    return k;
}

/* A newline, a quote and a backslash are kept as they are, escaped by JSON. */
static void test_control_characters_kept(void **state)
{
    (void)state;
    const char *name = "top\n# heading \"q\" \\ end";
    PROF_SCOPE(name) { }
    json_t *p = profile();
    json_t *r = region(p, 1, &name);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "name")), name);
    json_decref(p);
}

/* Not UTF-8: the name is U+FFFD where the bytes were, and the child's path is [parent, child] (it was
 * [] for the parent, and the child got its parent's path). */
static void test_invalid_utf8_keeps_the_path(void **state)
{
    (void)state;
    prof_begin("p\xff");
    prof_begin("c\xc0\xaf"); /* an overlong '/' */
    prof_end("c\xc0\xaf");
    prof_end("p\xff");
    json_t *p = profile();
    const char *path[] = {"p" FFFD, "c" FFFD FFFD};
    json_t *parent = region(p, 1, path), *child = region(p, 2, path);
    assert_non_null(parent);
    assert_non_null(child);
    assert_string_equal(json_string_value(json_object_get(child, "name")), path[1]);
    assert_int_equal(json_integer_value(json_object_get(child, "depth")), 1);
    json_decref(p);
}

/* Surrogates and code points above U+10FFFF are not UTF-8: U+FFFD in the profile and in the trace. */
static void test_surrogates_and_beyond(void **state)
{
    (void)state;
    PROF_SCOPE("s\xed\xa0\x80") { }        /* U+D800 */
    PROF_SCOPE("big\xf4\x90\x80\x80") { } /* U+110000 */
    PROF_SCOPE("ok\xf0\x9f\x98\x80") { }  /* U+1F600 stays */
    json_t *p = profile();
    const char *s[] = {"s" FFFD FFFD FFFD}, *b[] = {"big" FFFD FFFD FFFD FFFD}, *ok[] = {"ok\xf0\x9f\x98\x80"};
    assert_non_null(region(p, 1, s));
    assert_non_null(region(p, 1, b));
    assert_non_null(region(p, 1, ok));
    json_decref(p);
    json_t *t = trace();
    assert_int_equal(count_begins(t, s[0]), 1);
    assert_int_equal(count_begins(t, b[0]), 1);
    assert_int_equal(count_begins(t, ok[0]), 1);
    json_decref(t);
}

/* The TimerStats table: a name's newline is a space, and a long name of two-byte characters is cut to
 * its column between characters, never inside one. */
static void test_timerstats_table(void **state)
{
    (void)state;
    char longname[200] = "";
    for (int i = 0; i < 60; i++)
        strcat(longname, "\xc3\xa9");
    PROF_SCOPE("a\nb") { }
    PROF_SCOPE(longname) { }
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    prof_report(f);
    fclose(f);
    assert_non_null(strstr(text, "\na b "));
    json_t *s = json_string(text); /* jansson refuses a string that is not valid UTF-8 */
    assert_non_null(s);
    json_decref(s);
    free(text);
}

/* 300 names of random bytes, nested three deep: every region is in the profile with a path as long as
 * its depth, and both outputs parse. */
static void test_random_bytes(void **state)
{
    (void)state;
    unsigned long long x = 0x9e3779b97f4a7c15ull;
    char names[3][40];
    int regions = 0;
    for (int i = 0; i < 100; i++) {
        for (int d = 0; d < 3; d++) {
            int len = 1 + (int)((x >> 33) % 30);
            for (int k = 0; k < len; k++) {
                x = x * 6364136223846793005ull + 1442695040888963407ull;
                names[d][k] = (char)(1 + (x >> 56) % 255);
            }
            names[d][len] = 0;
            prof_begin(names[d]);
        }
        for (int d = 2; d >= 0; d--)
            prof_end(names[d]);
        regions += 3;
    }
    assert_int_equal(prof_errors(), 0);
    json_t *p = profile();
    json_t *all = json_object_get(p, "regions"), *r;
    size_t i;
    assert_int_equal(json_array_size(all), (size_t)regions);
    json_array_foreach(all, i, r) {
        assert_non_null(json_string_value(json_object_get(r, "name")));
        assert_int_equal(json_array_size(json_object_get(r, "path")),
                         (size_t)json_integer_value(json_object_get(r, "depth")) + 1);
    }
    json_decref(p);
    json_t *t = trace();
    json_decref(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_control_characters_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_utf8_keeps_the_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_surrogates_and_beyond, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timerstats_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_bytes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
