/* tests/reports/test_pool.c: a case measured several times (reports/pool.c), on fixtures/rounds
 * (make_fixtures.py, rounds()): one run of three rounds of tensor_mean at N=1024 (naive, simd, omp; omp
 * failed in round 2), then a later run of simd alone. Asserts what the loader makes of them, with and
 * without --pool, what it refuses to pool (other thread counts, a reduced run), compare --pool, and
 * what REPORT.md and the speedup table say of it. */
#define _GNU_SOURCE
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "rep.h"
#include "report.h"
#include "sl_config.h"

static char fix[1200];

static const char *source_root(void)
{
    const char *e = getenv("SPEEDLAB_SOURCE_ROOT");
    return e && *e ? e : SL_SOURCE_ROOT;
}

static void load(rep_set *s, int pool, const char *path)
{
    memset(s, 0, sizeof *s);
    s->pool = pool;
    char *p = (char *)path;
    FILE *err = fopen("/dev/null", "w");
    rep_load(s, 1, &p, err);
    fclose(err);
    assert_int_equal(s->nerrors, 0);
    assert_int_equal(s->nenvs, 1);
}

static const rep_case *find(const rep_set *s, const char *variant)
{
    const rep_case *c = rep_find(s, 0, "tensor_mean", variant, 1024);
    assert_non_null(c);
    return c;
}

/* around(med, 0.01) of make_fixtures.py: the five repetitions of a round with median med. */
static int around(double med, double *out)
{
    const double f[] = {1.01, 0.98, 1.0, 1.03, 0.99};
    for (int i = 0; i < 5; i++)
        out[i] = med * f[i];
    return 5;
}

static double median_of(const double *meds, int nmeds)
{
    double x[64];
    int n = 0;
    for (int i = 0; i < nmeds; i++)
        n += around(meds[i], x + n);
    rep_sort(x, n);
    return rep_quantile(x, n, 0.5);
}

/* Without --pool: the rounds of one run are pooled (naive: 15 repetitions, the metric the median of
 * 1, 3, 2), a later separate run supersedes them (simd), and a failed round shows the case failed. */
static void rounds_of_a_run(void **state)
{
    (void)state;
    rep_set s;
    char *dir = rep_printf("%s/rounds", fix);
    load(&s, 0, dir);
    const rep_case *naive = find(&s, "naive");
    const double nm[] = {0.40, 0.44, 0.41};
    assert_int_equal(naive->pooled, 3);
    assert_int_equal(naive->ntimes, 15);
    assert_true(fabs(naive->median - median_of(nm, 3)) < 1e-12);
    assert_true(fabs(rep_jnum(json_object_get(naive->rec, "metrics"), "x") - 2.0) < 1e-12);
    assert_true(fabs(naive->gflops - 1.0 / naive->median) < 1e-9); /* 1e9 flops at the pooled median */
    assert_int_equal((int)json_integer_value(json_object_get(naive->rec, "reps")), 15);
    const rep_case *simd = find(&s, "simd");
    assert_int_equal(simd->pooled, 1);
    assert_int_equal(simd->ntimes, 5);
    assert_true(fabs(simd->median - 0.070) < 1e-12);
    assert_string_equal(simd->run_id, "run-20261128-110000");
    const rep_case *omp = find(&s, "omp");
    assert_string_equal(omp->status, "failed");
    assert_int_equal(omp->ntimes, 0);
    assert_int_equal(s.envs[0].npooled_cases, 1);
    assert_int_equal(s.envs[0].npooled_records, 3);
    assert_int_equal(s.envs[0].npool_failed, 1);
    assert_int_equal(s.envs[0].nreplaced, 5); /* simd's 3 rounds, omp's 2 others */
    rep_set_free(&s);
    free(dir);
}

/* --pool: the later run's simd joins the rounds' (20 repetitions; x the median of 1, 3, 2, 10). */
static void pool_across_runs(void **state)
{
    (void)state;
    rep_set s;
    char *dir = rep_printf("%s/rounds", fix);
    load(&s, 1, dir);
    const rep_case *simd = find(&s, "simd");
    const double sm[] = {0.050, 0.060, 0.052, 0.070};
    assert_int_equal(simd->pooled, 4);
    assert_int_equal(simd->ntimes, 20);
    assert_true(fabs(simd->median - median_of(sm, 4)) < 1e-12);
    assert_true(fabs(rep_jnum(json_object_get(simd->rec, "metrics"), "x") - 2.5) < 1e-12);
    assert_string_equal(simd->run_id, "run-20261128-110000"); /* the latest record's fields */
    assert_string_equal(find(&s, "omp")->status, "failed");
    assert_int_equal(s.envs[0].npooled_cases, 2);
    assert_int_equal(s.envs[0].nreplaced, 2);
    rep_set_free(&s);
    free(dir);
}

/* A new scratch directory under $TMPDIR (default /tmp), and its removal with all it holds. */
static char *scratch_dir(void)
{
    const char *t = getenv("TMPDIR");
    char *tmpl = rep_printf("%s/sl-pool-XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(tmpl));
    return tmpl;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static void remove_dir(char *dir)
{
    assert_int_equal(nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
    free(dir);
}

/* Writes a run of one tensor_mean simd record at N=1024 into dir/NAME/results.jsonl. */
static void write_run(const char *dir, const char *name, const char *time, int threads, const char *reduced,
                      double t)
{
    char *d = rep_printf("%s/%s", dir, name), *p = rep_printf("%s/results.jsonl", d);
    assert_int_equal(rep_mkdirs(d), 0);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fprintf(f, "{\"schema\": \"speedlab-results\", \"schema_version\": 1, \"kind\": \"case\", \"run_id\": \"%s\", "
               "\"time\": \"%s\", \"env\": {\"host\": \"h\", \"cpu_model\": \"c\"}, \"study\": \"tensor_mean\", "
               "\"variant\": \"simd\", \"size\": 1024, \"size_name\": \"N\", \"status\": \"ok\", "
               "\"baseline\": \"naive\", \"threads\": %d, \"reduced\": %s, \"times_s\": [%g, %g]}\n",
            name, time, threads, reduced, t, t);
    fclose(f);
    free(p), free(d);
}

/* Records that did not do the same work are not pooled, even with --pool: the latest one is shown. */
static void not_the_same_work(void **state)
{
    (void)state;
    char *dir = scratch_dir();
    write_run(dir, "run-1", "2026-11-28T10:00:00Z", 1, "false", 0.5);
    write_run(dir, "run-2", "2026-11-28T11:00:00Z", 2, "false", 0.3);
    rep_set s;
    load(&s, 1, dir);
    const rep_case *c = find(&s, "simd");
    assert_int_equal(c->pooled, 1);
    assert_true(fabs(c->median - 0.3) < 1e-12);
    assert_int_equal(s.envs[0].nthreads_replaced, 1);
    assert_int_equal(s.envs[0].npooled_cases, 0);
    rep_set_free(&s);
    write_run(dir, "run-2", "2026-11-28T11:00:00Z", 1, "true", 0.3); /* a reduced run beside a full one */
    load(&s, 1, dir);
    c = find(&s, "simd");
    assert_int_equal(c->pooled, 1);
    assert_true(c->reduced);
    rep_set_free(&s);
    remove_dir(dir);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = calloc(1, 1 << 20);
    size_t n = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
    (void)n;
    fclose(f);
    return s;
}

/* One record line of tensor_mean simd at N=1024 into f: run, time, status, env fields and extra members. */
static void put(FILE *f, const char *run, const char *time, const char *status, const char *env_extra,
                const char *extra)
{
    fprintf(f, "{\"schema\": \"speedlab-results\", \"schema_version\": 1, \"kind\": \"case\", \"run_id\": \"%s\", "
               "\"time\": \"%s\", \"env\": {\"host\": \"h\", \"cpu_model\": \"c\"%s}, \"study\": \"tensor_mean\", "
               "\"variant\": \"simd\", \"size\": 1024, \"size_name\": \"N\", \"status\": \"%s\", "
               "\"baseline\": \"naive\", \"threads\": 1%s}\n",
            run, time, env_extra, status, extra);
}

/* What may not be pooled even with --pool, and what is: two builds (the latest build's alone), a
 * framework row's two forms, two reductions; a skipped round beside ok ones (the ok ones pooled); a copy
 * of a results file (counted once); a mean and its _std (over every repetition, not a median). */
static void pools_only_one_configuration(void **state)
{
    (void)state;
    char *dir = scratch_dir();
    char *p = rep_printf("%s/results.jsonl", dir);
    rep_set s;
    const char *pairs[][2] = {{", \"git_describe\": \"v1\"", ", \"git_describe\": \"v2\""},
                              {"", ""},
                              {"", ""}};
    const char *extras[][2] = {{"", ""},
                               {", \"baseline_form\": \"einsum\"", ", \"baseline_form\": \"khatri-rao\""},
                               {", \"reduced\": true, \"reduced_reason\": \"a\"",
                                ", \"reduced\": true, \"reduced_reason\": \"b\""}};
    for (int k = 0; k < 3; k++) {
        FILE *f = fopen(p, "w");
        assert_non_null(f);
        char a[256], b[256];
        snprintf(a, sizeof a, "%s, \"times_s\": [1.0, 1.0]", extras[k][0]);
        snprintf(b, sizeof b, "%s, \"times_s\": [0.5, 0.5]", extras[k][1]);
        put(f, "run-1", "2026-11-28T10:00:00Z", "ok", pairs[k][0], a);
        put(f, "run-2", "2026-11-28T11:00:00Z", "ok", pairs[k][1], b);
        fclose(f);
        load(&s, 1, dir);
        assert_int_equal(find(&s, "simd")->pooled, 1);
        assert_true(fabs(find(&s, "simd")->median - 0.5) < 1e-12);
        rep_set_free(&s);
    }
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    const char *ms = ", \"metrics\": {\"epoch_s_mean\": %g, \"epoch_s_std\": 0}, \"times_s\": [%g, %g, %g]";
    char e[256];
    for (int r = 1; r <= 3; r++) {
        char t[32], rd[64];
        snprintf(t, sizeof t, "2026-11-28T10:0%d:00Z", r);
        snprintf(e, sizeof e, ms, (double)r, (double)r, (double)r, (double)r);
        snprintf(rd, sizeof rd, ", \"round\": %d, \"rounds\": 4", r);
        char all[512];
        snprintf(all, sizeof all, "%s%s", rd, e);
        put(f, "run-3", t, "ok", "", all);
    }
    put(f, "run-3", "2026-11-28T10:04:00Z", "skipped", "", ", \"round\": 4, \"rounds\": 4, \"error\": \"memory\"");
    fclose(f);
    char *copy = rep_printf("%s/copy.jsonl", dir), *text = slurp(p); /* a results file copied beside it */
    FILE *cf = fopen(copy, "w");
    assert_non_null(text);
    assert_non_null(cf);
    fputs(text, cf);
    fclose(cf);
    free(text);
    load(&s, 0, dir);
    const rep_case *c = find(&s, "simd");
    assert_string_equal(c->status, "ok");
    assert_int_equal(c->pooled, 3);
    assert_int_equal(c->ntimes, 9);
    json_t *m = json_object_get(c->rec, "metrics");
    assert_true(fabs(rep_jnum(m, "epoch_s_mean") - 2.0) < 1e-12);
    assert_true(fabs(rep_jnum(m, "epoch_s_std") - sqrt(6.0 / 8.0)) < 1e-12); /* 3 * (1 + 0 + 1) / (9 - 1) */
    rep_set_free(&s);
    char *out = rep_printf("%s/report", dir), *tp = rep_printf("%s/h/tables/tensor_mean-speedup.md", out);
    char *argv[] = {"report", dir, "--out", out, "--no-plots"};
    rep_report_main(5, argv);
    char *t = slurp(tp); /* the skipped fourth round: the note says how many rounds are in the median */
    assert_non_null(t);
    assert_non_null(strstr(t, "| 9 | best CPU; 3 of 4 rounds |"));
    free(t);
    /* --pool with another run's record: still 3 of run-3's 4 rounds, and 4 records in the median */
    f = fopen(p, "a");
    assert_non_null(f);
    put(f, "run-0", "2026-11-28T09:00:00Z", "ok", "", ", \"metrics\": {\"epoch_s_mean\": 2, \"epoch_s_std\": 0}, "
                                                      "\"times_s\": [2.0, 2.0, 2.0]");
    fclose(f);
    char *pargv[] = {"report", dir, "--out", out, "--no-plots", "--pool"};
    rep_report_main(6, pargv);
    t = slurp(tp);
    assert_non_null(t);
    assert_non_null(strstr(t, "| 12 | best CPU; 3 of 4 rounds; 4 records pooled |"));
    free(t), free(tp), free(out);
    remove_dir(dir);
    free(copy), free(p);
}

/* compare --pool counts every round's repetitions on a side; without it a side's latest run. */
static void compare_pools(void **state)
{
    (void)state;
    char *dir = scratch_dir();
    char *a = rep_printf("%s/rounds", fix), *b = rep_printf("%s/rounds/run-20261128-110000", fix);
    char *out = rep_printf("%s/c.csv", dir);
    for (int pool = 0; pool <= 1; pool++) {
        char *argv[] = {"compare", a, b, "--format", "csv", "--out", out, "--pool"};
        assert_int_equal(rep_compare_main(pool ? 8 : 7, argv), 0);
        FILE *f = fopen(out, "r");
        assert_non_null(f);
        char line[1024];
        int found = 0;
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "tensor_mean,simd,1024,", 22)) {
                found = 1;
                assert_int_equal(atoi(line + 22), pool ? 20 : 5); /* reps_a */
            }
        fclose(f);
        assert_true(found);
    }
    remove_dir(dir);
    free(out), free(a), free(b);
}

/* What a reader of report --pool sees: the Runs line's counts and the speedup table's note. */
static void report_says_so(void **state)
{
    (void)state;
    char *dir = scratch_dir();
    char *in = rep_printf("%s/rounds", fix);
    char *argv[] = {"report", in, "--out", dir, "--no-plots", "--pool"};
    assert_int_equal(rep_report_main(6, argv), 0);
    char *rp = rep_printf("%s/REPORT.md", dir), *tp = rep_printf("%s/devbox/tables/tensor_mean-speedup.md", dir);
    char *r = slurp(rp), *t = slurp(tp);
    assert_non_null(r);
    assert_non_null(t);
    assert_non_null(strstr(r, "**Pooled**: 2 cases show the repetitions of 7 records together"));
    assert_non_null(strstr(r, "**1 case failed in one of its pooled runs** and is shown failed"));
    assert_non_null(strstr(r, "(2 older records of cases measured again later are not shown)"));
    assert_non_null(strstr(t, "| 20 | best CPU; 4 records pooled |"));
    assert_non_null(strstr(t, "| 15 | 3 records pooled |"));
    remove_dir(dir);
    free(r), free(t), free(rp), free(tp), free(in);
}

int main(void)
{
    snprintf(fix, sizeof fix, "%s/tests/reports/fixtures", source_root());
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rounds_of_a_run),
        cmocka_unit_test(pool_across_runs),
        cmocka_unit_test(not_the_same_work),
        cmocka_unit_test(pools_only_one_configuration),
        cmocka_unit_test(compare_pools),
        cmocka_unit_test(report_says_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
