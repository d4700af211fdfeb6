/* tests/reports/test_reliability.c: what the report side guarantees against bad or hostile input and a
 * full disk, each a test: hostile names in results files stay inside --out and apart (3), a full disk makes
 * report and compare exit 1 and leave no empty or cut file (2), records with zero or negative times are
 * rejected (8), and loading is linear in the records (4). A full disk is simulated with RLIMIT_FSIZE in
 * a child, SIGXFSZ ignored, so write() fails with EFBIG at a chosen size on any machine. */
#define _GNU_SOURCE
#include <dirent.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "rep.h"
#include "report.h"

/* A whole case record; %s are host, study, variant, time, params' extra value, times_s. */
static const char rec_fmt[] =
    "{\"schema\":\"speedlab-results\",\"schema_version\":1,\"kind\":\"case\",\"run_id\":\"run-1\","
    "\"time\":\"%s\",\"env\":{\"host\":\"%s\",\"cpu_model\":\"cpu\"},\"study\":\"%s\",\"variant\":\"%s\","
    "\"size\":%ld,\"size_name\":\"N\",\"status\":\"ok\",\"baseline\":\"naive\","
    "\"params\":{\"N\":\"%ld\",\"k\":\"%s\"},\"times_s\":[%s]}\n";

static void put_rec(FILE *f, const char *host, const char *study, const char *variant, long size,
                    const char *time, const char *k, const char *times)
{
    fprintf(f, rec_fmt, time, host, study, variant, size, size, k, times);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static char *made[32];
static int nmade;

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < nmade; i++) {
        nftw(made[i], rm_one, 16, FTW_DEPTH | FTW_PHYS);
        free(made[i]);
    }
    nmade = 0;
    return 0;
}

static char *tmpdir(void)
{
    char tmpl[] = "/tmp/sl-reliab-XXXXXX";
    char *d = mkdtemp(tmpl);
    if (d && nmade < 32)
        made[nmade++] = rep_strdup(d);
    return d ? rep_strdup(d) : NULL;
}

static int report(const char *in, const char *out)
{
    char *argv[] = {"report", (char *)in, "--out", (char *)out, "--no-plots"};
    return rep_report_main(5, argv);
}

/* ---- 3: hostile names ------------------------------------------------------------------------ */

/* Files under root whose path does not start with prefix (the input file is allowed); counts all. */
static int outside;
static const char *allowed_prefix, *allowed_input;
static int check_inside(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (flag == FTW_F && strncmp(p, allowed_prefix, strlen(allowed_prefix)) && strcmp(p, allowed_input)) {
        fprintf(stderr, "# written outside --out: %s\n", p);
        outside++;
    }
    return 0;
}

static void hostile_names_stay_inside_out(void **state)
{
    (void)state;
    char *root = tmpdir(), *in = rep_printf("%s/r.jsonl", root), *out = rep_printf("%s/a/b/c/out", root);
    FILE *f = fopen(in, "w");
    put_rec(f, "devbox", "../../../ESCAPED", "naive", 8, "2026-01-01T00:00:00Z", "x", "0.1");
    put_rec(f, "devbox", "/etc/passwd", "../v", 8, "2026-01-01T00:00:00Z", "x", "0.1");
    put_rec(f, "../../../../host", ".hidden", "naive", 8, "2026-01-01T00:00:00Z", "x", "0.1");
    put_rec(f, "a.b", "s", "naive", 8, "2026-01-01T00:00:00Z", "x", "0.1");
    put_rec(f, "a-b", "s", "naive", 8, "2026-01-01T00:00:00Z", "x", "0.2");
    put_rec(f, "", "", "naive", 8, "2026-01-01T00:00:00Z", "x", "0.1");
    fclose(f);
    assert_int_equal(report(in, out), 0);
    char *prefix = rep_printf("%s/", out);
    allowed_prefix = prefix, allowed_input = in, outside = 0;
    nftw(root, check_inside, 16, FTW_PHYS);
    assert_int_equal(outside, 0);
    /* Hosts a.b and a-b: two machines, two folders, each page its own host's. */
    char *pa = rep_printf("%s/a.b/s.md", out), *pb = rep_printf("%s/a-b/s.md", out);
    char *ta = slurp(pa), *tb = slurp(pb);
    assert_non_null(ta);
    assert_non_null(tb);
    assert_non_null(strstr(ta, "# s on a.b"));
    assert_non_null(strstr(tb, "# s on a-b"));
    free(ta), free(tb), free(pa), free(pb), free(prefix), free(in), free(out), free(root);
}

/* Strings of a results file reach Markdown as text only: a newline in a host, study, variant or error
 * cannot start a heading or end a table row, and a name's < and | cannot start HTML or split a cell.
 * Every .md file written is read back line by line. */
static int md_injected;
static int check_md(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    size_t n = strlen(p);
    if (flag != FTW_F || n < 3 || strcmp(p + n - 3, ".md"))
        return 0;
    char *t = slurp(p);
    for (char *line = t; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        if (!strncmp(line, "# INJECTED", 10) || strstr(line, "<script>|")) { /* the names' form */
            fprintf(stderr, "# %s: '%s'\n", p, line);
            md_injected++;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(t);
    return 0;
}

static void hostile_strings_stay_text(void **state)
{
    (void)state;
    char *root = tmpdir(), *in = rep_printf("%s/r.jsonl", root), *out = rep_printf("%s/out", root);
    FILE *f = fopen(in, "w");
    const char *evil = "x\\n# INJECTED <script>|";
    for (long n = 8; n <= 16; n *= 2) {
        put_rec(f, evil, evil, "naive", n, "2026-01-01T00:00:00Z", "x", "0.1,0.2");
        put_rec(f, evil, evil, evil, n, "2026-01-01T00:00:00Z", "x", "0.3,0.2");
    }
    fprintf(f, "{\"schema\":\"speedlab-results\",\"schema_version\":1,\"kind\":\"case\",\"run_id\":\"r\\n# INJECTED\","
               "\"time\":\"t\",\"env\":{\"host\":\"h\",\"cpu_model\":\"c\"},\"study\":\"s\",\"variant\":\"f\",\"size\":8,"
               "\"size_name\":\"N\",\"baseline\":\"naive\",\"status\":\"failed\",\"error\":\"boom\\n# INJECTED <script>\"}\n");
    fclose(f);
    assert_int_equal(report(in, out), 0);
    md_injected = 0;
    nftw(out, check_md, 16, FTW_PHYS);
    assert_int_equal(md_injected, 0);
    free(out), free(in), free(root);
}

/* The escape is injective and never yields a path separator, a dot in front or an empty name. */
static void path_names_are_injective_and_safe(void **state)
{
    (void)state;
    const char *in[] = {"a.b", "a-b", "a_b", "a/b", "a~2fb", "a~b", "", "~", ".", "..", "../x", ".x", "x.",
                        "a b", "A", "a", "\xc3\xa9", "~2e", "~~", "a\nb"};
    enum { N = sizeof in / sizeof *in };
    char *out[N];
    for (int i = 0; i < N; i++) {
        out[i] = rep_path_name(in[i]);
        assert_non_null(out[i]);
        assert_true(out[i][0] != 0 && out[i][0] != '.');
        assert_null(strchr(out[i], '/'));
        for (int j = 0; j < i; j++)
            assert_string_not_equal(out[i], out[j]);
    }
    assert_string_equal(out[0], "a.b"); /* ordinary names are left as they were */
    assert_string_equal(out[1], "a-b");
    for (int i = 0; i < N; i++)
        free(out[i]);
}

/* A size name or baseline with a quote reaches gnuplot's -e commands only escaped: it cannot run one.
 * Needs gnuplot (skipped without). */
static void hostile_strings_do_not_reach_gnuplot(void **state)
{
    (void)state;
    if (!rep_gnuplot())
        skip();
    char *root = tmpdir(), *in = rep_printf("%s/r.jsonl", root), *out = rep_printf("%s/out", root);
    char *pwned = rep_printf("%s/PWNED", root);
    char *evil = rep_printf("N'; system('touch %s'); x='", pwned);
    FILE *f = fopen(in, "w");
    for (long n = 8; n <= 16; n *= 2)
        for (int v = 0; v < 2; v++) {
            json_t *r = json_loads("{\"schema\":\"speedlab-results\",\"schema_version\":1,\"kind\":\"case\","
                                   "\"run_id\":\"r\",\"time\":\"t\",\"env\":{\"host\":\"h\",\"cpu_model\":\"c\"},"
                                   "\"study\":\"s\",\"status\":\"ok\",\"times_s\":[0.1]}", 0, NULL);
            json_object_set_new(r, "variant", json_string(v ? evil : "naive"));
            json_object_set_new(r, "baseline", json_string(evil));
            json_object_set_new(r, "size_name", json_string(evil));
            json_object_set_new(r, "size", json_integer(n));
            char *line = json_dumps(r, JSON_COMPACT);
            fprintf(f, "%s\n", line);
            free(line);
            json_decref(r);
        }
    fclose(f);
    char *argv[] = {"report", in, "--out", out};
    rep_report_main(4, argv);
    assert_int_not_equal(access(pwned, F_OK), 0);
    free(evil), free(pwned), free(out), free(in), free(root);
}

/* ---- 2: a full disk --------------------------------------------------------------------------- */

/* How run_limited runs: report without figures, compare A with itself, report with figures. */
enum { REPORT_NO_PLOTS, COMPARE_SELF, REPORT_PLOTS };

/* Runs report or compare in a child whose files may not grow past limit bytes; its exit status. */
static int run_limited(rlim_t limit, int mode, const char *a, const char *b)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {limit, limit};
        setrlimit(RLIMIT_FSIZE, &rl);
        char *cmp[] = {"compare", (char *)a, (char *)a, "--out", (char *)b};
        char *rep[] = {"report", (char *)a, "--out", (char *)b};
        _exit(mode == COMPARE_SELF ? rep_compare_main(5, cmp)
              : mode == REPORT_PLOTS ? rep_report_main(4, rep) : report(a, b));
    }
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int empty_or_temp;
static int check_whole(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag == FTW_F && (st->st_size == 0 || strstr(p, ".tmp-") || strstr(p, ".speedlab-tmp-"))) {
        fprintf(stderr, "# empty or temporary file left: %s\n", p);
        empty_or_temp++;
    }
    return 0;
}

static char *some_records(const char *root)
{
    char *in = rep_printf("%s/r.jsonl", root);
    FILE *f = fopen(in, "w");
    const char *vs[] = {"naive", "simd", "omp"};
    for (int v = 0; v < 3; v++)
        for (long n = 8; n <= 64; n *= 2)
            put_rec(f, "devbox", "entropy_mi", vs[v], n, "2026-01-01T00:00:00Z", "x", "0.3,0.2,0.25");
    fclose(f);
    return in;
}

static void full_disk_fails_report_and_compare(void **state)
{
    (void)state;
    char *root = tmpdir(), *in = some_records(root), *out = rep_printf("%s/out", root);
    char *cmp = rep_printf("%s/cmp.md", root);
    assert_int_equal(run_limited(RLIM_INFINITY, REPORT_NO_PLOTS, in, out), 0); /* the report fits without a limit */
    char *out2 = rep_printf("%s/out2", root);
    assert_int_equal(run_limited(1024, REPORT_NO_PLOTS, in, out2), 1);
    empty_or_temp = 0;
    nftw(out2, check_whole, 16, FTW_PHYS);
    assert_int_equal(empty_or_temp, 0);
    char *rp = rep_printf("%s/REPORT.md", out2);
    assert_int_not_equal(access(rp, F_OK), 0); /* REPORT.md is over 1 KiB: not written, not cut */
    assert_int_equal(run_limited(100, COMPARE_SELF, in, cmp), 1);
    assert_int_not_equal(access(cmp, F_OK), 0);
    assert_int_equal(run_limited(RLIM_INFINITY, COMPARE_SELF, in, cmp), 0);
    free(rp), free(out2), free(cmp), free(out), free(in), free(root);
}

/* Figures are outputs like any other: gnuplot writes each image to a temporary, which is checked whole
 * (a PNG ends with IEND) and renamed. A file size limit that cuts the larger PNGs, or a gnuplot that
 * fails, is an error (exit 1) and leaves no cut, empty or temporary image. Needs gnuplot. */
static int whole_png, cut_png;
static int check_png(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    size_t n = strlen(p);
    if (flag != FTW_F || n < 4 || strcmp(p + n - 4, ".png"))
        return 0;
    unsigned char tail[12] = {0};
    FILE *f = fopen(p, "rb");
    int whole = f && fseek(f, -12, SEEK_END) == 0 && fread(tail, 1, 12, f) == 12 && !memcmp(tail + 4, "IEND", 4);
    if (f)
        fclose(f);
    if (!whole)
        fprintf(stderr, "# a cut PNG: %s\n", p);
    whole ? whole_png++ : cut_png++;
    return 0;
}

static void figures_written_whole_or_not_at_all(void **state)
{
    (void)state;
    if (!rep_gnuplot())
        skip();
    char *root = tmpdir(), *in = some_records(root);
    char *ok = rep_printf("%s/ok", root), *cut = rep_printf("%s/cut", root), *bad = rep_printf("%s/bad", root);
    whole_png = cut_png = 0;
    assert_int_equal(run_limited(RLIM_INFINITY, REPORT_PLOTS, in, ok), 0);
    nftw(ok, check_png, 16, FTW_PHYS);
    assert_true(whole_png > 0);                     /* the check knows a whole PNG */
    assert_int_equal(cut_png, 0);
    whole_png = cut_png = empty_or_temp = 0;
    assert_int_equal(run_limited(40960, REPORT_PLOTS, in, cut), 1); /* 40 KiB: the larger PNGs do not fit */
    nftw(cut, check_png, 16, FTW_PHYS);
    nftw(cut, check_whole, 16, FTW_PHYS);
    assert_int_equal(cut_png, 0);
    assert_int_equal(empty_or_temp, 0);
    /* gnuplot failing on every script: exit 1, and no image at all */
    char *plots = rep_printf("%s/plots", root);
    mkdir(plots, 0777);
    DIR *d = opendir(rep_plots_dir());
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strstr(e->d_name, ".gp")) {
            char *gp = rep_printf("%s/%s", plots, e->d_name);
            FILE *f = fopen(gp, "w");
            fputs("this is not gnuplot\n", f);
            fclose(f);
            free(gp);
        }
    closedir(d);
    setenv("SPEEDLAB_PLOTS_DIR", plots, 1);
    whole_png = cut_png = empty_or_temp = 0;
    int rc = run_limited(RLIM_INFINITY, REPORT_PLOTS, in, bad);
    unsetenv("SPEEDLAB_PLOTS_DIR");
    assert_int_equal(rc, 1);
    nftw(bad, check_png, 16, FTW_PHYS);
    nftw(bad, check_whole, 16, FTW_PHYS);
    assert_int_equal(whole_png + cut_png, 0);
    assert_int_equal(empty_or_temp, 0);
    free(plots), free(bad), free(cut), free(ok), free(in), free(root);
}

/* ---- 8: zero or negative times ---------------------------------------------------------------- */

static void bad_times_are_rejected(void **state)
{
    (void)state;
    char *root = tmpdir(), *a = rep_printf("%s/a.jsonl", root), *b = rep_printf("%s/b.jsonl", root);
    FILE *f = fopen(a, "w");
    put_rec(f, "devbox", "s", "naive", 8, "2026-01-01T00:00:00Z", "x", "0.2,0.2,0.2");
    put_rec(f, "devbox", "s", "simd", 8, "2026-01-01T00:00:00Z", "x", "0.1,0.1,0.1");
    fclose(f);
    f = fopen(b, "w");
    put_rec(f, "devbox", "s", "naive", 8, "2026-01-01T00:00:00Z", "x", "0,0,0");
    put_rec(f, "devbox", "s", "simd", 8, "2026-01-01T00:00:00Z", "x", "-0.1,-0.1,-0.1");
    fclose(f);
    rep_set s = {0};
    char *err = NULL;
    size_t len = 0;
    FILE *ef = open_memstream(&err, &len);
    rep_load(&s, 1, &b, ef);
    fclose(ef);
    assert_int_equal(s.nerrors, 2);
    assert_int_equal(s.ncases, 0);
    assert_non_null(strstr(err, "b.jsonl:1: times_s[0] is 0; a repetition's time is a positive number"));
    assert_non_null(strstr(err, "b.jsonl:2: times_s[0] is -0.1"));
    rep_set_free(&s);
    free(err);
    /* compare: nothing of B is comparable, so no "B faster"; the skipped input says 3... */
    char *cmp = rep_printf("%s/cmp.md", root);
    char *argv[] = {"compare", a, b, "--out", cmp};
    assert_int_equal(rep_compare_main(5, argv), 3);
    char *t = slurp(cmp);
    assert_non_null(t);
    assert_null(strstr(t, "| B faster |")); /* the verdict column; the note counts "0 B faster" */
    assert_non_null(strstr(t, "0 cases in both"));
    /* ...and report shows no -nan and no negative speedup. */
    char *out = rep_printf("%s/out", root), *both = rep_printf("%s", root);
    assert_int_equal(report(both, out), 3);
    char *sp = rep_printf("%s/devbox/tables/s-speedup.md", out), *st = slurp(sp);
    assert_non_null(st);
    assert_null(strstr(st, "nan"));
    for (const char *p = st; (p = strstr(p, "| -")); p++)
        assert_false(p[3] >= '0' && p[3] <= '9'); /* no negative number in any cell */
    assert_non_null(strstr(st, "| 2× |")); /* A's simd over naive, B's records skipped */
    free(sp), free(st), free(out), free(both), free(t), free(cmp), free(a), free(b), free(root);
}

/* ---- 4: linear in the records ------------------------------------------------------------------ */

/* 40000 records of distinct cases that differ only in a parameter (the worst for the old pairwise
 * superseding: 8e8 pairs, each three string compares, about a minute), then 40000 that supersede them:
 * each must load in seconds, and the latest record must win. */
static void loading_is_linear(void **state)
{
    (void)state;
    enum { N = 40000 };
    char *root = tmpdir(), *in = rep_printf("%s/big.jsonl", root);
    FILE *f = fopen(in, "w");
    char k[32];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < N; i++) {
            snprintf(k, sizeof k, "k%d", i);
            put_rec(f, "devbox", "s", "naive", 8, pass ? "2026-01-02T00:00:00Z" : "2026-01-01T00:00:00Z", k,
                    pass ? "0.5" : "0.25");
        }
    fclose(f);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rep_set s = {0};
    rep_load(&s, 1, &in, stderr);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    fprintf(stderr, "# loaded %d records in %.2f s\n", 2 * N, secs);
    assert_int_equal(s.ncases, N);
    assert_int_equal(s.envs[0].nreplaced, N);
    for (int i = 0; i < N; i++)
        assert_true(s.cases[i].median == 0.5); /* the later record of each case */
    assert_true(secs < 20); /* about 0.3 s here; ASan several times that */
    rep_set_free(&s);
    free(in), free(root);
}

/* A tie in time: the record read later wins, as before. */
static void later_read_wins_a_tie(void **state)
{
    (void)state;
    char *root = tmpdir(), *in = rep_printf("%s/r.jsonl", root);
    FILE *f = fopen(in, "w");
    put_rec(f, "devbox", "s", "naive", 8, "2026-01-02T00:00:00Z", "x", "0.3");
    put_rec(f, "devbox", "s", "naive", 8, "2026-01-01T00:00:00Z", "x", "0.1"); /* older: dropped */
    put_rec(f, "devbox", "s", "naive", 8, "2026-01-02T00:00:00Z", "x", "0.2"); /* tie, read later: wins */
    fclose(f);
    rep_set s = {0};
    rep_load(&s, 1, &in, stderr);
    assert_int_equal(s.ncases, 1);
    assert_true(s.cases[0].median == 0.2);
    assert_int_equal(s.envs[0].nreplaced, 2);
    rep_set_free(&s);
    free(in), free(root);
}

/* Two runs of one case at 1 and 2 threads: the later wins, as for any case, and the report says that a
 * record of another thread count is hidden (a user reading it must not take one for the other). */
static void other_thread_count_is_said(void **state)
{
    (void)state;
    char *root = tmpdir(), *in = rep_printf("%s/r.jsonl", root), *out = rep_printf("%s/rep", root);
    FILE *f = fopen(in, "w");
    char line[1024];
    put_rec(f, "devbox", "s", "naive", 8, "2026-01-01T00:00:00Z", "x", "0.3");
    snprintf(line, sizeof line, rec_fmt, "2026-01-01T00:00:00Z", "devbox", "s", "omp", 8L, 8L, "x", "0.2");
    fputs(line, f);
    /* the same case again, a later run at 2 threads */
    char *two = strstr(line, "\"times_s\"");
    assert_non_null(two);
    char *rec2 = rep_printf("%.*s\"threads\":2,%s", (int)(two - line), line, two);
    char *late = strstr(rec2, "2026-01-01T");
    memcpy(late, "2026-01-02T", 11);
    fputs(rec2, f);
    fclose(f);
    rep_set s = {0};
    rep_load(&s, 1, &in, stderr);
    assert_int_equal(s.ncases, 2);
    assert_int_equal(s.envs[0].nreplaced, 1);
    assert_int_equal(s.envs[0].nthreads_replaced, 1);
    assert_string_equal(s.envs[0].threads_example, "s omp: 1 -> 2 threads");
    rep_set_free(&s);
    assert_int_equal(report(in, out), 0);
    char *md = rep_printf("%s/REPORT.md", out), *text = slurp(md);
    assert_non_null(text);
    assert_non_null(strstr(text, "**1 of them ran at another thread count** (s omp: 1 -> 2 threads)"));
    free(text), free(md), free(rec2), free(in), free(out), free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hostile_names_stay_inside_out),
        cmocka_unit_test(hostile_strings_stay_text),
        cmocka_unit_test(other_thread_count_is_said),
        cmocka_unit_test(path_names_are_injective_and_safe),
        cmocka_unit_test(hostile_strings_do_not_reach_gnuplot),
        cmocka_unit_test(full_disk_fails_report_and_compare),
        cmocka_unit_test(figures_written_whole_or_not_at_all),
        cmocka_unit_test(bad_times_are_rejected),
        cmocka_unit_test(loading_is_linear),
        cmocka_unit_test(later_read_wins_a_tie),
    };
    return cmocka_run_group_tests(tests, NULL, teardown);
}
