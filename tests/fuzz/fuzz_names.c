/*
 * libFuzzer harness: any bytes as profiler region names, into the JSON profile, the trace and Markdown.
 * The input split at NUL bytes is a nest of up to 8 region names. Aborts (a crash to libFuzzer) when the
 * profile or the trace is not JSON that jansson reads (it refuses invalid UTF-8), when a region is
 * dropped or its path is not as deep as it is, when an escaper of reports/escape.c lets a name break a
 * line or a table cell, or when the profile in a results record breaks REPORT.md's "top region" line.
 */
#include <jansson.h>
#include <stdlib.h>

#include "fuzz_file.h"
#include "rep.h"
#include "report.h"
#include "speedlab/prof.h"

#define MAXN 8

static char out[64], trace[80];

static void remove_out(void)
{
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", out);
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_names: %s\n", what);
        abort();
    }
}

/* What an escaper writes for s. */
static char *escaped(void (*esc)(const char *, FILE *), const char *s)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    esc(s, f);
    fclose(f);
    return buf;
}

static void check_escapers(const char *name)
{
    void (*one_line[])(const char *, FILE *) = {rep_md_cell, rep_md_text, rep_md_code};
    for (size_t k = 0; k < sizeof one_line / sizeof *one_line; k++) {
        char *e = escaped(one_line[k], name);
        check(!strpbrk(e, "\n\r"), "a Markdown escaper let a line break through");
        for (const char *p = e; k < 2 && (p = strchr(p, '|')); p++)
            check(p > e && p[-1] == '\\', "a Markdown escaper let an unescaped | split a cell");
        free(e);
    }
    char *d = escaped(rep_data_name, name);
    check(strchr(d, '\n') == d + strlen(d) - 1, "a data block title is not one line");
    free(d);
}

/* The profile in a case record, through `speedlab report`: the top region's line stays one line. */
static void check_report(const char *profile)
{
    char *path = (char *)fuzz_file_write((const uint8_t *)"", 0);
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"schema\":\"speedlab-results\",\"schema_version\":1,\"kind\":\"case\",\"run_id\":\"r\","
               "\"time\":\"t\",\"env\":{\"host\":\"h\",\"cpu_model\":\"c\"},\"study\":\"s\",\"variant\":\"v\","
               "\"size\":8,\"size_name\":\"N\",\"status\":\"ok\",\"baseline\":\"v\",\"params\":{},"
               "\"times_s\":[0.1],\"profile\":%s}\n", profile);
    fclose(f);
    char *argv[] = {"report", path, "--out", out, "--no-plots", "--format", "md", NULL};
    FILE *saved = stdout, *saved_err = stderr;
    stdout = fopen("/dev/null", "w");
    stderr = fopen("/dev/null", "w");
    rep_report_main(7, argv);
    fclose(stdout), fclose(stderr);
    stdout = saved, stderr = saved_err;
    char md[96];
    snprintf(md, sizeof md, "%s/REPORT.md", out);
    f = fopen(md, "r");
    char line[65536];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "- top region by self time: ", 27))
            check(strlen(line) >= 3 && !strcmp(line + strlen(line) - 3, ")*\n"), "a region name broke a line");
    if (f)
        fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_file_init(".jsonl");
    if (!out[0]) {
        snprintf(out, sizeof out, "/tmp/sl-fuzz-names-XXXXXX");
        if (!mkdtemp(out))
            abort();
        snprintf(trace, sizeof trace, "%s/trace.json", out);
        atexit(remove_out);
    }
    char *buf = malloc(n + 1), *names[MAXN];
    memcpy(buf, data, n);
    buf[n] = 0;
    int k = 0;
    for (char *p = buf; p < buf + n && k < MAXN; p += strlen(p) + 1)
        if (*p)
            names[k++] = p;
    prof_options o = {.nvtx = 0, .quiet = 1, .json_path = ""};
    prof_init(&o);
    prof_trace_start("");
    prof_begin("s"), prof_begin("v"), prof_begin("N=8");
    for (int i = 0; i < k; i++)
        prof_begin(names[i]);
    for (int i = k - 1; i >= 0; i--)
        prof_end(names[i]);
    prof_end("N=8"), prof_end("v"), prof_end("s");
    char *s = prof_json();
    json_error_t e;
    json_t *p = json_loads(s, 0, &e);
    check(p != NULL, "the profile is not JSON (UTF-8)");
    json_t *regions = json_object_get(p, "regions"), *r;
    size_t i;
    check(json_array_size(regions) == (size_t)k + 3, "a region was dropped");
    json_array_foreach(regions, i, r) {
        const char *name = json_string_value(json_object_get(r, "name"));
        check(name != NULL, "a region lost its name");
        check(json_array_size(json_object_get(r, "path")) == (size_t)json_integer_value(json_object_get(r, "depth")) + 1,
              "a region's path is not as deep as the region");
        check_escapers(name);
    }
    check(prof_trace_write(trace) == 0, "the trace was not written");
    json_t *t = json_load_file(trace, 0, &e);
    check(t != NULL, "the trace is not JSON (UTF-8)");
    json_decref(t);
    check_report(s);
    json_decref(p);
    free(s);
    prof_shutdown();
    free(buf);
    return 0;
}
