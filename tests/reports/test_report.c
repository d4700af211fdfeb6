/* tests/reports/test_report.c: `speedlab report` and `speedlab compare` on the committed fixtures
 * (tests/reports/fixtures/, hand-chosen numbers) against golden files (tests/reports/golden/).
 *
 * Every file the report writes (REPORT.md, study pages, every table as md/csv/tex, figure data) is
 * compared with its golden copy after replacing the source root by @SRC@. To accept new output:
 *   ninja -C BUILD update-goldens     (runs this program with --update-golden)
 * then review `git diff tests/reports/golden`. A test run never writes a golden file. */
#define _GNU_SOURCE
#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "rep.h"
#include "report.h"
#include "sl_config.h"

static char src[1024], fix[1200], gold[1200];

static const char *source_root(void)
{
    const char *e = getenv("SPEEDLAB_SOURCE_ROOT");
    return e && *e ? e : SL_SOURCE_ROOT;
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

/* Replaces every occurrence of the source root with @SRC@ so golden files do not depend on where the
 * tree is checked out. */
static char *normalise(const char *text)
{
    size_t n = strlen(src), cap = strlen(text) + 1;
    char *out = malloc(cap), *o = out;
    for (const char *p = text; *p;) {
        if (n && strncmp(p, src, n) == 0) {
            memcpy(o, "@SRC@", 5);
            o += 5;
            p += n;
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
    return out;
}

/* Set by --update-golden on the command line, which only `ninja -C BUILD update-goldens` passes: a test
 * run (meson test, CI) compares and never writes, whatever its environment holds. */
static int updating;

static int update_golden(void)
{
    return updating;
}

/* Compares one produced file with golden/<rel>; returns 1 when they match (or golden was updated). */
static int check_file(const char *produced, const char *rel)
{
    char *raw = slurp(produced);
    if (!raw) {
        fprintf(stderr, "# cannot read %s\n", produced);
        return 0;
    }
    char *got = normalise(raw);
    free(raw);
    char *gp = rep_printf("%s/%s", gold, rel);
    int ok = 1;
    if (update_golden()) {
        char *dir = rep_strdup(gp);
        *strrchr(dir, '/') = 0;
        rep_mkdirs(dir);
        free(dir);
        FILE *f = fopen(gp, "w");
        ok = f && fputs(got, f) >= 0;
        if (f)
            fclose(f);
    } else {
        char *want = slurp(gp);
        if (!want) {
            fprintf(stderr, "# no golden file %s (ninja -C BUILD update-goldens, then review the diff)\n", gp);
            ok = 0;
        } else if (strcmp(want, got)) {
            const char *a = want, *b = got;
            int line = 1;
            while (*a && *a == *b) {
                line += *a == '\n';
                a++;
                b++;
            }
            fprintf(stderr, "# %s differs from %s at line %d\n", produced, gp, line);
            ok = 0;
        }
        free(want);
    }
    free(gp);
    free(got);
    return ok;
}

/* Walks produced/ and checks every file against golden/<prefix>/...; returns the number of mismatches
 * and counts the files checked. */
static int check_tree(const char *dir, const char *rel, int *nfiles)
{
    DIR *d = opendir(dir);
    if (!d)
        return 1;
    int bad = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char *p = rep_printf("%s/%s", dir, de->d_name), *r = rep_printf("%s/%s", rel, de->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            bad += check_tree(p, r, nfiles);
        else {
            bad += !check_file(p, r);
            (*nfiles)++;
        }
        free(p);
        free(r);
    }
    closedir(d);
    return bad;
}

/* Every golden file under golden/<rel> must have been produced (a table that disappeared fails). */
static int missing_from(const char *gdir, const char *outdir)
{
    DIR *d = opendir(gdir);
    if (!d)
        return 0;
    int miss = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char *g = rep_printf("%s/%s", gdir, de->d_name), *o = rep_printf("%s/%s", outdir, de->d_name);
        struct stat st;
        if (stat(g, &st) == 0 && S_ISDIR(st.st_mode))
            miss += missing_from(g, o);
        else if (access(o, R_OK) != 0) {
            fprintf(stderr, "# golden %s was not produced\n", g);
            miss++;
        }
        free(g);
        free(o);
    }
    closedir(d);
    return miss;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

/* Temporary directories made by this test, removed at the end. */
static char *made[64]; /* every directory tmpdir() made, removed at the group's teardown */
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

/* A new directory under $TMPDIR (default /tmp); fails the test when the teardown could not remove it. */
static char *tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    char *d = rep_printf("%s/sl-reports-XXXXXX", t && *t ? t : "/tmp");
    assert_non_null(mkdtemp(d));
    assert_true(nmade < (int)(sizeof made / sizeof *made));
    made[nmade++] = rep_strdup(d);
    return d;
}

static int run_report(const char *out, int nin, const char *const *in)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = "report";
    for (int i = 0; i < nin; i++)
        argv[argc++] = rep_printf("%s/%s", fix, in[i]);
    argv[argc++] = "--out";
    argv[argc++] = (char *)out;
    argv[argc++] = "--no-plots";
    int rc = rep_report_main(argc, argv);
    for (int i = 1; i <= nin; i++)
        free(argv[i]);
    return rc;
}

/* The report written to `out` against golden/NAME, file by file, none missing; with
 * --update-golden the golden folder is first removed, so that tables no longer written do not
 * linger, and rewritten. Returns the number of files compared. */
/* REPORT.md of `speedlab report` on one fixture, into a new directory. */
static char *report_md(const char *fixture)
{
    char *out = tmpdir(), *rp = rep_printf("%s/REPORT.md", out);
    const char *in[] = {fixture};
    assert_int_equal(run_report(out, 1, in), 0);
    char *r = slurp(rp);
    assert_non_null(r);
    free(rp), free(out);
    return r;
}

static int golden_tree(const char *out, const char *name)
{
    char *g = rep_printf("%s/%s", gold, name);
    if (update_golden())
        nftw(g, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    int n = 0;
    assert_int_equal(check_tree(out, name, &n), 0);
    assert_int_equal(missing_from(g, out), 0);
    free(g);
    return n;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* ---- tests ------------------------------------------------------------------------------------ */

static int has_line(const char *text, const char *line);

/* The kernel study (with cuda, a failed and an unavailable variant and a calibration record, read
 * through `latest` and its run directory), a training study, a galaxy-like profile and a second
 * machine: every file written matches its golden copy. */
static void report_matches_golden(void **state)
{
    (void)state;
    char *out = tmpdir();
    assert_non_null(out);
    const char *in[] = {"kernel", "training", "galaxy", "other"};
    assert_int_equal(run_report(out, 4, in), 0);
    /* REPORT.md, 4 study pages, ~20 tables x 3 formats, figure data */
    assert_true(golden_tree(out, "report") >= 60);
    /* a kernel study's summary is its speedup table, even when it records metrics (entropy_mi's H, MI) */
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(strstr(r, "**entropy_mi: median time per repetition and speedup**"));
    assert_null(strstr(r, "**entropy_mi: results"));
    /* CSV: a case's state goes to the status column, numeric columns stay numeric or empty */
    char *cp = rep_printf("%s/devbox/tables/entropy_mi-speedup.csv", out), *c = slurp(cp);
    assert_non_null(strstr(c, ",note,status\n"));
    assert_null(strstr(c, ",omp,")); /* unavailable: in the not-run table, not a row at every size */
    assert_non_null(strstr(c, "\n4096,factorized,,,,,,failed: check failed: rel_err 2.4e-03 > tolerance "
                              "1.0e-03,failed\n")); /* a failed case is a result: its row stays */
    /* naive at B=4096 is a reduced run beside full ones, and a kernel study records no time per sample:
     * it is left out of the × columns, with a note, rather than compared by its total time */
    char *sp = rep_printf("%s/devbox/tables/entropy_mi-speedup.md", out), *sm = slurp(sp);
    assert_true(has_line(sm, "| B=4096 | naive | 320 ms† | 6.4 ms | — | — | 5 | not compared: reduced run, no time "
                             "per sample or epoch |"));
    assert_true(has_line(sm, "|  | simd | 32 ms | 640 µs | — | 1× | 5 | best CPU |"));
    /* the findings, first in REPORT.md: at B=1024, the largest size where every variant compared ran */
    assert_non_null(strstr(r, "## Findings\n"));
    assert_true(strstr(r, "## Findings") < strstr(r, "Contents:"));
    assert_true(has_line(r, "- [**entropy_mi**](devbox/entropy_mi.md) on devbox at B=1024: simd is 10× naive; cuda "
                            "is 13× naive; factorized is 200× naive; simd runs at 29 % of the roofline."));
    free(rp), free(r), free(cp), free(c), free(sp), free(sm);
    free(out);
}

/* One CPU measured at two ISA levels (fixtures/isa: avx512, then forced to avx2) is two machines, each
 * with its ISA rows in the machine table; at avx2 the planted inversions (simd slower than naive, omp a
 * hair slower than simd) are flagged under the speedup table and in REPORT.md's summary, and none at
 * avx512. Every file written matches golden/isa/. */
static void isa_levels_and_inversions(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"isa"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "isa");
    const char *inv = "inversion: simd is 0.58× naive at B=16384 on avx2: an optimisation that does not pay here";
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(r);
    assert_non_null(strstr(r, "- machine **devbox (avx512)**"));
    assert_non_null(strstr(r, "- machine **devbox (avx2)**"));
    assert_non_null(strstr(r, "| isa | avx2 |\n| isa_mode | dispatch |\n| isa_march | x86-64-v2,x86-64-v3,"
                              "x86-64-v4 |\n| isa_forced | v3 |\n| cpu_flags | avx2 fma avx512f"));
    char line[256];
    snprintf(line, sizeof line, "- %s\n", inv);
    assert_non_null(strstr(r, line)); /* the summary's bullet */
    assert_int_equal(count(r, "- inversion: "), 3);
    char *ap = rep_printf("%s/devbox-avx2/tables/entropy_mi-speedup.md", out), *a = slurp(ap);
    char *bp = rep_printf("%s/devbox-avx512/tables/entropy_mi-speedup.md", out), *b = slurp(bp);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(strstr(a, inv)); /* the table's note */
    assert_non_null(strstr(a, "omp is 0.99× simd at B=1024 on avx2: an optimisation that does not pay here "
                              "(the IQRs overlap: may be noise)"));
    assert_null(strstr(a, "factorized is")); /* failed at B=1024, faster at B=16384 */
    assert_null(strstr(a, "cuda is"));       /* unavailable: no time */
    assert_null(strstr(b, "inversion"));
    free(rp), free(r), free(ap), free(a), free(bp), free(b), free(out);
}

/* One CPU at two levels, each calibrated (fixtures/levels): REPORT.md's ISA levels table sets each CPU
 * variant side by side at the largest size where it ran at both (naive only at N=1024 there), with its
 * fraction of bound at each level and their ratio; blas (one level only) and cuda (a GPU row) have no
 * row; OUT/tables/isa-levels.* are written. Without a calibration (fixtures/isa) the fractions are
 * dashes; a set with one level (fixtures/kernel) has no such section. Matches golden/levels/. */
static void isa_levels_table(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"levels"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "levels");
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(r);
    assert_non_null(strstr(r, "## ISA levels\n"));
    assert_true(has_line(r, "|  | tensor_mean | simd | N=4096 | avx512 / avx2 | 25 ms | 40 ms | 1.6× | 80.0 % | 50.0 % "
                            "| 0.625 |"));
    assert_true(has_line(r, "|  | tensor_mean | omp | N=4096 | avx512 / avx2 | 12.5 ms | 14 ms | 1.12× | 80.0 % | "
                            "71.4 % | 0.893 |"));
    assert_non_null(strstr(r, "| devbox | tensor_mean | naive | N=1024 |"));
    assert_null(strstr(r, "| blas | N="));
    assert_null(strstr(r, "| cuda | N="));
    char *cp = rep_printf("%s/tables/isa-levels.csv", out), *c = slurp(cp);
    assert_non_null(c);
    assert_non_null(strstr(c, "devbox,tensor_mean,simd,4096,avx512 / avx2,0.025,0.04,1.6,0.8,0.5,0.625\n"));
    free(rp), free(r), free(cp), free(c), free(out);
    r = report_md("isa");
    assert_true(has_line(r, "|  | entropy_mi | simd | B=16384 | avx512 / avx2 | 40 ms | 500 ms | 12.5× | — | — | — |"));
    free(r);
    r = report_md("kernel");
    assert_null(strstr(r, "## ISA levels"));
    free(r);
}

/* fixtures/levels' two runs written again under out, each as RUN + suffix, each run's whole text passed
 * through rewrite(f, text, k) into its results.jsonl (k 0: the avx512 run, 1: the avx2 one). */
static void rewrite_levels(const char *out, const char *suffix, void (*rewrite)(FILE *f, char *text, int k))
{
    const char *runs[] = {"run-20261129-090000", "run-20261129-091000"};
    for (int k = 0; k < 2; k++) {
        char *p = rep_printf("%s/levels/%s/results.jsonl", fix, runs[k]), *text = slurp(p);
        char *d = rep_printf("%s/%s%s", out, runs[k], suffix), *q = rep_printf("%s/results.jsonl", d);
        assert_non_null(text);
        assert_int_equal(rep_mkdirs(d), 0);
        FILE *f = fopen(q, "w");
        assert_non_null(f);
        rewrite(f, text, k);
        fclose(f);
        free(p), free(text), free(d), free(q);
    }
}

/* The same runs on another CPU model. */
static void other_model(FILE *f, char *text, int k)
{
    (void)k;
    const char *model = "AMD EPYC 9R14 (2 vCPU, fixture)";
    for (const char *at = text, *m; *at; at = m + strlen(model)) {
        if (!(m = strstr(at, model))) {
            fputs(at, f);
            break;
        }
        fprintf(f, "%.*sOther CPU", (int)(m - at), at);
    }
}

/* Two CPU models under one host name (two VMs both called vm): the ISA levels table names each CPU by
 * host and model, so that its rows can be told apart; with one model per host, by host alone. */
static void isa_levels_two_cpus_one_host(void **state)
{
    (void)state;
    char *out = tmpdir();
    rewrite_levels(out, "-b", other_model);
    rep_set set = {0};
    char *paths[] = {out, rep_printf("%s/levels", fix)};
    rep_load(&set, 2, paths, stderr);
    rep_table *t = rep_tab_isa_levels(&set);
    assert_non_null(t);
    int other = 0, epyc = 0;
    for (int r = 0; r < t->nrows; r++) {
        const char *cpu = t->cells[r * t->ncols].text;
        other += !strcmp(cpu, "devbox (Other CPU)");
        epyc += !strcmp(cpu, "devbox (AMD EPYC 9R14 (2 vCPU, fixture))");
    }
    assert_int_equal(other, 3);
    assert_int_equal(epyc, 3);
    rep_table_free(t);
    rep_set_free(&set);
    free(paths[1]), free(out);
}

/* fixtures/levels with each CPU case's impl, as `speedlab run` writes it with the planner on: at avx512,
 * omp ran at avx2 by the wisdom and simd at avx512; at avx2, everything forced. */
static void add_impl(FILE *f, char *text, int k)
{
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *r = json_loads(line, 0, NULL);
        assert_non_null(r);
        const char *v = json_string_value(json_object_get(r, "variant"));
        if (v && strcmp(v, "cuda")) {
            int moved = k == 0 && !strcmp(v, "omp");
            json_t *im = json_pack("{s:s, s:s, s:s, s:s}", "level", k || moved ? "v3" : "v4", "isa",
                                   k || moved ? "avx2" : "avx512", "chosen_by",
                                   k ? "forced" : !strcmp(v, "blas") ? "library" : "wisdom", "why",
                                   k ? "SPEEDLAB_ISA=v3" : "speedlab tune: v3=0.001,v4=0.0012 s at N=64");
            json_object_set_new(r, "impl", im);
        }
        char *dump = json_dumps(r, JSON_COMPACT);
        fprintf(f, "%s\n", dump);
        free(dump);
        json_decref(r);
    }
}

/* The planner's choice in the report: the ISA levels table names the level a case of the wider run ran at
 * when it is not its run's, the avx512 study page lists each CPU variant's level and who chose it (the
 * forced avx2 run has no such table: no choice was made), and the findings say which variants moved. */
static void planner_in_report(void **state)
{
    (void)state;
    char *in = tmpdir();
    rewrite_levels(in, "", add_impl);
    rep_set set = {0};
    char *paths[] = {in};
    rep_load(&set, 1, paths, stderr);
    rep_table *t = rep_tab_isa_levels(&set);
    assert_non_null(t);
    int omp = 0, simd = 0;
    for (int r = 0; r < t->nrows; r++) {
        const char *v = t->cells[r * t->ncols + 2].text, *lv = t->cells[r * t->ncols + 4].text;
        omp += !strcmp(v, "omp") && !strcmp(lv, "avx512 (ran avx2: wisdom) / avx2");
        simd += !strcmp(v, "simd") && !strcmp(lv, "avx512 / avx2");
    }
    assert_int_equal(omp, 1);
    assert_int_equal(simd, 1);
    rep_table_free(t);
    int wide = -1, narrow = -1;
    for (int e = 0; e < set.nenvs; e++)
        *(strcmp(set.envs[e].isa, "avx512") ? &narrow : &wide) = e;
    assert_null(rep_tab_planner(&set, narrow, "tensor_mean"));
    t = rep_tab_planner(&set, wide, "tensor_mean");
    assert_non_null(t);
    int rows = 0;
    for (int r = 0; r < t->nrows; r++) {
        const char *v = t->cells[r * t->ncols].text, *at = t->cells[r * t->ncols + 1].text,
                   *by = t->cells[r * t->ncols + 2].text;
        rows += !strcmp(v, "omp") && !strcmp(at, "v3 (avx2) *") && !strcmp(by, "wisdom");
        rows += !strcmp(v, "simd") && !strcmp(at, "v4 (avx512)") && !strcmp(by, "wisdom");
        rows += !strcmp(v, "blas") && !strcmp(at, "v4 (avx512)") && !strcmp(by, "library");
        assert_string_not_equal(v, "cuda"); /* a GPU row has no impl */
    }
    assert_int_equal(rows, 3);
    rep_table_free(t);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    rep_findings_section(m, &set);
    fclose(m);
    assert_non_null(strstr(text, "the planner ran omp (avx2) at a narrower level than avx512"));
    free(text);
    rep_set_free(&set);
    free(in);
}

/* Which levels are paired (fixtures/levels rewritten): omp at two threads at avx512 and at one at avx2 has
 * no row (another configuration); simd at sse4.2 and sse2 is against avx512, and simd2, which ran at avx2
 * and sse4.2 only, is against avx2, the widest level where it ran. */
static void isa_levels_pairing(void **state)
{
    (void)state;
    char *out = tmpdir(), *path = rep_printf("%s/results.jsonl", out);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    const char *runs[] = {"run-20261129-090000", "run-20261129-091000"};
    for (int k = 0; k < 2; k++) {
        char *p = rep_printf("%s/levels/%s/results.jsonl", fix, runs[k]), *text = slurp(p);
        assert_non_null(text);
        for (char *line = text, *nl; *line; line = nl + 1) {
            nl = strchr(line, '\n');
            json_t *r = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
            assert_non_null(r);
            const char *v = json_string_value(json_object_get(r, "variant"));
            if (k == 1 && v && !strcmp(v, "omp"))
                json_object_set_new(r, "threads", json_integer(1));
            int copies = k == 1 && v && !strcmp(v, "simd") ? 4 : 1;
            for (int c = 0; c < copies; c++) {
                json_t *w = json_deep_copy(r);
                json_t *we = json_object_get(w, "env");
                if (c == 1 || c == 3)
                    json_object_set_new(we, "isa", json_string("sse4.2"));
                if (c == 2)
                    json_object_set_new(we, "isa", json_string("sse2"));
                if (c >= 2)
                    json_object_set_new(w, "variant", json_string(c == 2 ? "simd" : "simd2"));
                if (c == 3) { /* simd2 at avx2 too */
                    json_t *a = json_deep_copy(r);
                    json_object_set_new(a, "variant", json_string("simd2"));
                    char *al = json_dumps(a, JSON_COMPACT);
                    fprintf(f, "%s\n", al);
                    free(al);
                    json_decref(a);
                }
                char *wl = json_dumps(w, JSON_COMPACT);
                fprintf(f, "%s\n", wl);
                free(wl);
                json_decref(w);
            }
            json_decref(r);
            if (!nl)
                break;
        }
        free(p), free(text);
    }
    fclose(f);
    rep_set set = {0};
    char *paths[] = {out};
    rep_load(&set, 1, paths, stderr);
    assert_int_equal(set.nerrors, 0);
    rep_table *t = rep_tab_isa_levels(&set);
    assert_non_null(t);
    int omp = 0, sse42 = 0, sse2 = 0, simd2 = 0;
    for (int r = 0; r < t->nrows; r++) {
        const char *v = t->cells[r * t->ncols + 2].text, *lv = t->cells[r * t->ncols + 4].text;
        omp += !strcmp(v, "omp");
        sse42 += !strcmp(v, "simd") && !strcmp(lv, "avx512 / sse4.2");
        sse2 += !strcmp(v, "simd") && !strcmp(lv, "avx512 / sse2");
        simd2 += !strcmp(v, "simd2") && !strcmp(lv, "avx2 / sse4.2");
    }
    assert_int_equal(omp, 0);
    assert_int_equal(sse42, 1);
    assert_int_equal(sse2, 1);
    assert_int_equal(simd2, 1);
    rep_table_free(t);
    rep_set_free(&set);
    free(out), free(path);
}

/* A line of a text, to compare whole rows of a table. */
static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)); p += n)
        if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
            return 1;
    return 0;
}

/* The cnn study (fixtures/cnn: simd on the CPU and cudnn on the GPU with two repetitions, naive with
 * one and reduced, omp failed, blas unavailable) gets seed 004's Table I as its performance table, in
 * REPORT.md in place of the training table, the write-up's placeholder table beside it, Figure 1 d's
 * data, the roofline's fraction of the peak, and per-layer bottleneck tables. Every file written matches
 * golden/cnn/; the numbers asserted here are the fixture's, worked out in make_fixtures.py. */
static void cnn_table_one(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"cnn"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "cnn");
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(strstr(r, "**cnn: performance summary at batch=512, mean ± std over the repetitions "
                              "(seed 004's Table I)**"));
    assert_null(strstr(r, "**cnn: training runs")); /* Table I is the summary, not the training table */
    assert_non_null(strstr(r, "| PyTorch_MPS | [Value] | [Value] | [Value] | [Value] | [Value] |"));
    char *tp = rep_printf("%s/devbox/tables/cnn-performance.md", out), *t = slurp(tp);
    assert_true(has_line(t, "| platform | average epoch time | total training time | average throughput "
                            "(samples/s) | final test accuracy | best test accuracy | average RAM | peak VRAM |"));
    /* naive is reduced: its total time and its accuracies carry the †, its epoch time does not */
    assert_true(has_line(t, "| naive | 58 s | 60 s† | 1034 | 84.20 %† | 84.20 %† | 95.0 MiB | — |"));
    assert_true(has_line(t, "| simd | 1.95 s ± 40 ms | 20 s ± 566 ms | 30769 ± 630 | 89.82 ± 0.00 % | "
                            "90.11 ± 0.00 % | 120.0 MiB | — |"));
    assert_true(has_line(t, "| cudnn | 240 ms ± 4 ms | 2.5 s ± 70.7 ms | 250000 ± 4000 | 89.90 ± 0.04 % | "
                            "90.20 ± 0.03 % | 310.0 MiB | 220.0 MiB |"));
    assert_non_null(strstr(t, "| omp | failed: check failed"));
    assert_null(strstr(t, "blas")); /* unavailable: in the not-run table, once */
    char *np = rep_printf("%s/devbox/tables/cnn-not-run.md", out), *nr = slurp(np);
    assert_true(has_line(nr, "| blas | unavailable: built without CBLAS (meson -Dblas=disabled) | built without "
                             "CBLAS (meson -Dblas=disabled) |"));
    free(np), free(nr);
    char *cp = rep_printf("%s/devbox/tables/cnn-performance.csv", out), *c = slurp(cp);
    assert_true(has_line(c, "simd,512,2,1.95,0.04,20,0.566,30769.231,630,0.8982,0,0.9011,0,125829120,,,,ok"));
    assert_true(has_line(c, "omp,512,0,,,,,,,,,,,,,,,failed")); /* numbers only: the reason is in md */
    char *fp = rep_printf("%s/devbox/tables/cnn-roofline.md", out), *f = slurp(fp);
    assert_true(has_line(f, "| simd | 512 | 1 | 46 | 2 | 23 | 1 thread, compute-bound | 115 | 40.0 % |"));
    assert_true(has_line(f, "| naive | 512 | 1 | 1.53† |  |  | 1 thread, peak (no bytes recorded) | 115 | 1.3 % |"));
    char *bp = rep_printf("%s/devbox/tables/cnn-bottleneck-simd.md", out), *b = slurp(bp);
    assert_non_null(strstr(b, "|\n| epoch / backward / conv2 | 2360 | 14 s | 14 s | 35.0 % |")); /* first row */
    static const char *layers[] = {"conv1", "pool1", "conv2", "pool2", "dense1", "dense2"};
    for (int i = 0; i < 6; i++) {
        char row[64];
        snprintf(row, sizeof row, "| epoch / forward / %s | 2360 |", layers[i]);
        assert_non_null(strstr(b, row));
        snprintf(row, sizeof row, "| epoch / backward / %s | 2360 |", layers[i]);
        assert_non_null(strstr(b, row));
    }
    char *up = rep_printf("%s/devbox/tables/cnn-functions-simd.md", out), *u = slurp(up);
    assert_true(has_line(u, "| conv2 | 4720 | 20 s | 20 s | 50.0 % | 4.24 ms |")); /* a layer: both passes */
    char *dp = rep_printf("%s/devbox/figures/cnn-throughput-bars.dat", out), *d = slurp(dp);
    assert_true(has_line(d, "\"simd\" 30769.231 630"));
    assert_true(has_line(d, "\"naive†\" 1034.483 0")); /* one repetition: no std; reduced: its mark */
    assert_null(strstr(d, "omp"));
    free(rp), free(r), free(tp), free(t), free(cp), free(c), free(fp), free(f), free(bp), free(b);
    free(up), free(u), free(dp), free(d), free(out);
}

/* A fresh machine (fixtures/fresh: no GPU, no Python baselines, every CPU variant skipped for memory at
 * B=65536): the tables and figures hold measured rows only, and each variant not run is listed once in
 * its study's not-run table (page and REPORT.md) with what to install or pass. cnn's naive is a reduced
 * run (1 of 10 epochs on 20000 of 60000 rows): 16.8 s in all, less than simd's full 20 s, so by total
 * time it would stand as 1.19× simd; the speedup table and the bar figure compare it per sample, its †
 * in the figure's data. REPORT.md opens with the findings. Every file written matches golden/fresh/. */
static void fresh_machine(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"fresh"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "fresh");
    char *sp = rep_printf("%s/laptop/tables/entropy_mi-speedup.md", out), *sm = slurp(sp);
    assert_non_null(sm);
    assert_null(strstr(sm, "unavailable"));
    assert_null(strstr(sm, "skipped"));
    assert_null(strstr(sm, "65536"));
    assert_null(strstr(sm, "× best framework")); /* no framework ran: no column */
    char *up = rep_printf("%s/laptop/tables/entropy_mi-summary.md", out), *um = slurp(up);
    assert_null(strstr(um, "unavailable"));
    char *np = rep_printf("%s/laptop/tables/entropy_mi-not-run.md", out), *nr = slurp(np);
    assert_int_equal(count(nr, "| torch |"), 1);
    assert_true(has_line(nr, "| torch | unavailable: python:torch: /usr/bin/python3 cannot import numpy and torch | "
                             "install the baselines with `sh scripts/setup.sh build --baselines` (or set "
                             "SPEEDLAB_PYTHON to an interpreter that has them) |"));
    assert_non_null(strstr(nr, "| naive | skipped: does not fit in memory: setup needs 8589934592 bytes (at B=65536) |"));
    char *cp = rep_printf("%s/laptop/tables/cnn-speedup.md", out), *cm = slurp(cp);
    assert_true(has_line(cm, "| batch | variant | median | IQR | per sample | × naive | × best CPU | n | note |"));
    assert_true(has_line(cm, "| batch=512 | naive | 16.8 s† | 0 s | 825 µs | 1× | 0.0152× | 1 |  |"));
    assert_true(has_line(cm, "|  | simd | 20 s | 400 ms | 32.5 µs | 25.4× | 0.385× | 2 |  |"));
    assert_null(strstr(cm, "0.84×")); /* simd's total against naive's: never */
    char *bp = rep_printf("%s/laptop/figures/cnn-bars.dat", out), *bd = slurp(bp);
    assert_true(has_line(bd, "# variant us_per_sample std_us (size batch=512; † reduced, ‡ extrapolated)"));
    assert_true(has_line(bd, "\"naive†\" 825.000144 0")); /* not 16.8 s against simd's 20 s */
    assert_true(has_line(bd, "\"simd\" 32.4999998 0.650000396"));
    char *tp = rep_printf("%s/laptop/figures/cnn-throughput-bars.dat", out), *td = slurp(tp);
    assert_true(has_line(td, "\"naive†\" 1212.121 0"));
    char *pp = rep_printf("%s/laptop/cnn.md", out), *pm = slurp(pp);
    assert_non_null(strstr(pm, "*Time per sample per variant at batch=512, mean ± std (seed 002's Figure 2.6) († "
                               "reduced run: compared per sample, not by total time)*"));
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_true(strstr(r, "Read: ") < strstr(r, "## Findings") && strstr(r, "## Findings") < strstr(r, "Contents:"));
    assert_true(has_line(r, "- [**entropy_mi**](laptop/entropy_mi.md) at B=16384: simd is 2.7× naive; threads add "
                            "2.0× (omp over simd); factorized is 27× naive (10× over simd); simd runs at 75 % of the "
                            "roofline; inversion: factorized_omp is slower than factorized (0.91×)."));
    assert_true(has_line(r, "- [**cnn**](laptop/cnn.md) at batch=512, per sample: simd is 25× naive†; threads add "
                            "1.9× (omp over simd); blas is 66× naive†; simd runs at 38 % of the roofline."));
    assert_int_equal(count(r, "| cuda | unavailable: cuda: no CUDA device |"), 2); /* once per study */
    assert_null(strstr(r, "| cuda | unavailable |"));
    free(sp), free(sm), free(up), free(um), free(np), free(nr), free(cp), free(cm), free(bp), free(bd);
    free(tp), free(td), free(pp), free(pm), free(rp), free(r), free(out);
}

/* Results of different machines go to separate directories, never into one table. */
static void machines_are_grouped(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"kernel", "other"};
    assert_int_equal(run_report(out, 2, in), 0);
    char *a = rep_printf("%s/devbox/tables/entropy_mi-speedup.csv", out);
    char *b = rep_printf("%s/gpubox/tables/entropy_mi-speedup.csv", out);
    char *ta = slurp(a), *tb = slurp(b);
    assert_non_null(ta);
    assert_non_null(tb);
    assert_non_null(strstr(ta, "1024,naive,0.08,")); /* devbox: 80 ms */
    assert_non_null(strstr(tb, "1024,naive,0.05,")); /* gpubox: 50 ms, not pooled with devbox */
    assert_null(strstr(tb, "cuda"));
    /* the kernel run is read once although `latest` points at it: 16 records, not 32 */
    char *rp = rep_printf("%s/REPORT.md", out);
    char *r = slurp(rp);
    assert_non_null(strstr(r, "2 results files, 17 case records, 2 machines."));
    free(a), free(b), free(ta), free(tb), free(rp), free(r), free(out);
}

/* Bad input: each bad line is reported with file:line and what is wrong, the good records of the same
 * file and the other directories are still reported, and the exit status is 3. */
static void bad_input_is_reported_and_skipped(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"bad", "training"};
    assert_int_equal(run_report(out, 2, in), 3);
    char *rp = rep_printf("%s/REPORT.md", out);
    char *r = slurp(rp);
    assert_non_null(r);
    assert_non_null(strstr(r, "3 records or files were skipped"));
    assert_non_null(strstr(r, "results.jsonl:2: schema_version 2 found, this reader reads version 1"));
    assert_non_null(strstr(r, "results.jsonl:3: record is missing field `study`"));
    assert_non_null(strstr(r, "results.jsonl:5: truncated line"));
    char *sp = rep_printf("%s/devbox/tables/entropy_mi-speedup.csv", out);
    char *s = slurp(sp);
    assert_non_null(s);
    assert_non_null(strstr(s, "256,naive,0.02,"));  /* line 1 */
    assert_non_null(strstr(s, "1024,simd,0.008,")); /* line 4, after the bad lines */
    char *mp = rep_printf("%s/devbox/mlp.md", out);
    assert_int_equal(access(mp, R_OK), 0); /* the other directory is still reported */
    free(rp), free(r), free(sp), free(s), free(mp), free(out);
}

/* GPU or CPU comes from a record's traits, never its name; only a record without traits (written
 * before they were recorded) falls back to the old rule by name. */
static void gpu_read_from_traits(void **state)
{
    (void)state;
    char *kp = rep_printf("%s/kernel/run-20261122-100000/results.jsonl", fix), *text = slurp(kp);
    assert_non_null(text);
    json_t *base = json_loads(strchr(text, '\n') + 1, JSON_DISABLE_EOF_CHECK, NULL); /* line 2: a case */
    assert_non_null(base);
    char *out = tmpdir(), *path = rep_printf("%s/results.jsonl", out);
    FILE *f = fopen(path, "w");
    const struct { const char *variant, *traits; } recs[] = {
        {"tiled", "[\"device\"]"}, {"cuda", "[]"}, {"cublas", NULL}, {"omp", "[\"threaded\"]"}};
    for (int i = 0; i < 4; i++) {
        json_t *r = json_deep_copy(base);
        json_object_set_new(r, "variant", json_string(recs[i].variant));
        if (recs[i].traits)
            json_object_set_new(r, "traits", json_loads(recs[i].traits, 0, NULL));
        char *line = json_dumps(r, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
        json_decref(r);
    }
    fclose(f);
    rep_set set = {0};
    char *paths[] = {out};
    rep_load(&set, 1, paths, stderr);
    assert_int_equal(set.nerrors, 0);
    const int want[] = {1, 0, 1, 0};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(rep_is_gpu(&set, 0, "entropy_mi", recs[i].variant), want[i]);
        assert_int_equal(rep_find(&set, 0, "entropy_mi", recs[i].variant, 256)->gpu, want[i]);
    }
    rep_set_free(&set);
    json_decref(base);
    free(kp), free(text), free(out), free(path);
}

/* The GPU's ceilings (fixtures/gpu_roofline): each GPU row's fraction of the device's bound, by precision
 * (the FP32 FMA peak, the FP16 and BF16 tensor-core peaks; the device triad for bandwidth), the framework
 * rows (torch-cuda, jax-gpu) included; a row above its bound (jax-gpu) an error and never a fraction, in
 * the table and in the findings; the machine table's GPU ceilings row, with a figure not measured and, for a
 * machine calibrated without a device, the reason. Fractions from make_fixtures.py. Matches
 * golden/gpu_roofline/. */
static void gpu_roofline(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"gpu_roofline"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "gpu_roofline");

    rep_set set = {0};
    char *path = rep_printf("%s/gpu_roofline", fix), *paths[] = {path};
    rep_load(&set, 1, paths, stderr);
    assert_int_equal(set.nerrors, 0);
    int env = strcmp(set.envs[0].host, "h200node") ? 1 : 0;
    const struct { const char *study, *variant; long size; double want; } rows[] = {
        {"entropy_mi", "simd", 4096, 1.073741824e9 / 0.016 / 1e9 / 100.0}, /* CPU, 1 thread: its own ceilings */
        {"entropy_mi", "cuda", 4096, 1.073741824e9 / 1e-4 / 1e9 / 60000.0},
        {"entropy_mi", "torch-cuda", 4096, 1.073741824e9 / 5e-5 / 1e9 / 60000.0},
        {"precision", "cuda-fp32", 64, 1.965826048e9 / 4e-5 / 1e9 / 60000.0},
        {"precision", "cuda-fp16", 64, 1.965826048e9 / 1e-5 / 1e9 / 600000.0},
        {"precision", "cuda-bf16", 64, 1.965826048e9 / 8e-6 / 1e9 / 620000.0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const rep_case *c = rep_find(&set, env, rows[i].study, rows[i].variant, rows[i].size);
        assert_non_null(c);
        double fr = rep_fraction_of_bound(&set, c);
        if (!(fabs(fr - rows[i].want) <= 1e-9 * rows[i].want))
            fail_msg("%s %s: fraction of bound %.6g, want %.6g", rows[i].study, rows[i].variant, fr, rows[i].want);
    }
    /* jax-gpu's work count puts it above the FP32 FMA bound: the fraction exceeds 1 (never printed) */
    assert_true(rep_fraction_of_bound(&set, rep_find(&set, env, "entropy_mi", "jax-gpu", 4096)) > 1);
    rep_set_free(&set);

    char *tp = rep_printf("%s/h200node/tables/entropy_mi-roofline.md", out), *t = slurp(tp);
    assert_non_null(t);
    assert_true(has_line(t, "| cuda | 4096 | 1 | 1.07e+04 | 83.9 | 128 | GPU (FP32 FMA, triad), compute-bound | 6e+04 | "
                            "17.9 % |"));
    assert_true(has_line(t, "| torch-cuda | 4096 | 1 | 2.15e+04 | 168 | 128 | GPU (FP32 FMA, triad), compute-bound | "
                            "6e+04 | 35.8 % |"));
    assert_true(has_line(t, "| jax-gpu | 4096 | 1 | 7.16e+04 | 559 | 128 | GPU (FP32 FMA, triad), compute-bound | "
                            "6e+04 | error: 119 % > 100 % |"));
    assert_null(strstr(t, "119.3 %"));
    char *pp = rep_printf("%s/h200node/tables/precision-roofline.md", out), *p = slurp(pp);
    assert_true(has_line(p, "| cuda-fp16 | 64 | 1 | 1.97e+05 | 1e+03 | 197 | GPU (FP16 tensor cores, triad), fp16, "
                            "compute-bound | 6e+05 | 32.8 % |"));
    assert_true(has_line(p, "| cuda-bf16 | 64 | 1 | 2.46e+05 | 1.25e+03 | 197 | GPU (BF16 tensor cores, triad), bf16, "
                            "compute-bound | 6.2e+05 | 39.6 % |"));
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(strstr(r, "simd runs at 67 % of the roofline; torch-cuda runs at 36 % of the GPU's roofline; "
                              "error: a case above its roofline bound (jax-gpu at B=4096 (119 %)): a work count or "
                              "a ceiling is wrong, not a measurement."));
    assert_true(has_line(r, "| GPU ceilings (NVIDIA H200) | triad 4000 GB/s, device copy 3600 GB/s, FP32 FMA 60000 "
                            "GFLOP/s, cuBLAS sgemm 50000 GFLOP/s, FP16 tensor cores 600000 GFLOP/s, BF16 tensor "
                            "cores 620000 GFLOP/s, H2D pageable 10 GB/s, H2D pinned 50 GB/s, D2H pageable not "
                            "measured (error 2 (out of memory)), D2H pinned 52 GB/s |"));
    assert_true(has_line(r, "| GPU ceilings | none: no CUDA device |"));
    free(path), free(tp), free(t), free(pp), free(p), free(rp), free(r), free(out);
}

/* A repetition whose device time could not be read has null phases (mlp's and cnn's device variants,
 * experiments/train/train.c): the phases table averages the measured repetitions only, and a case with
 * none measured gets dashes, not a mean that counts the nulls as 0. */
static void phases_skip_nulls(void **state)
{
    (void)state;
    char *kp = rep_printf("%s/kernel/run-20261122-100000/results.jsonl", fix), *text = slurp(kp);
    assert_non_null(text);
    const char *line5 = text;
    for (int i = 0; i < 4; i++) /* line 5: entropy_mi cuda at 256, with phases */
        line5 = strchr(line5, '\n') + 1;
    json_t *base = json_loads(line5, JSON_DISABLE_EOF_CHECK, NULL);
    assert_non_null(base);
    assert_non_null(json_object_get(base, "phases"));
    char *out = tmpdir(), *path = rep_printf("%s/results.jsonl", out);
    FILE *f = fopen(path, "w");
    const char *phases[2] = {
        "{\"h2d_ms\": [1, null, 3, 1, 1], \"kernel_ms\": [4, null, 4, 4, 4], \"d2h_ms\": [1, null, 1, 1, 1]}",
        "{\"h2d_ms\": [null, null, null, null, null], \"kernel_ms\": [null, null, null, null, null], "
        "\"d2h_ms\": [null, null, null, null, null]}"};
    for (int i = 0; i < 2; i++) {
        json_t *r = json_deep_copy(base);
        json_object_set_new(r, "size", json_integer(i == 0 ? 256 : 1024));
        json_object_set_new(r, "phases", json_loads(phases[i], 0, NULL));
        char *line = json_dumps(r, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
        json_decref(r);
    }
    fclose(f);
    rep_set set = {0};
    char *paths[] = {out};
    rep_load(&set, 1, paths, stderr);
    assert_int_equal(set.nerrors, 0);
    rep_table *t = rep_tab_phases(&set, 0, "entropy_mi");
    assert_non_null(t);
    assert_int_equal(t->nrows, 2);
    const rep_cell *h = &t->cells[0 * t->ncols + 2], *k = &t->cells[0 * t->ncols + 3];
    assert_true(h->has_num && fabs(h->num - 1.5) < 1e-12); /* (1 + 3 + 1 + 1) / 4, not / 5 */
    assert_true(k->has_num && fabs(k->num - 4.0) < 1e-12);
    assert_string_equal(t->cells[1 * t->ncols + 3].text, "—"); /* none measured */
    rep_table_free(t);
    rep_set_free(&set);
    json_decref(base);
    free(kp), free(text), free(out), free(path);
}

static void usage_errors(void **state)
{
    (void)state;
    char *a1[] = {"report"};
    assert_int_equal(rep_report_main(1, a1), 2);
    char *a2[] = {"report", "x", "--format", "docx"};
    assert_int_equal(rep_report_main(4, a2), 2);
    char *a3[] = {"compare", "only-one"};
    assert_int_equal(rep_compare_main(2, a3), 2);
    char *out = tmpdir();
    char *a4[] = {"report", "/nonexistent/results", "--out", out, "--no-plots"};
    assert_int_not_equal(rep_report_main(5, a4), 0);
    free(out);
}

/* Runs compare A B in a format into a temporary file; returns its text. */
static char *run_compare(const char *a, const char *b, const char *fmt, int *rc)
{
    char *out = tmpdir(), *file = rep_printf("%s/compare.%s", out, fmt);
    char *pa = rep_printf("%s/compare/%s", fix, a), *pb = rep_printf("%s/compare/%s", fix, b);
    char *argv[] = {"compare", pa, pb, "--format", (char *)fmt, "--out", file};
    *rc = rep_compare_main(7, argv);
    char *text = slurp(file);
    char *rel = rep_printf("compare/%s%s.%s", a, b, fmt);
    assert_true(check_file(file, rel));
    free(rel), free(pa), free(pb), free(file), free(out);
    return text;
}

/* Two runs of the same build: no significant difference for most cases. */
static void compare_same_build(void **state)
{
    (void)state;
    int rc;
    char *t = run_compare("a", "b", "csv", &rc);
    assert_int_equal(rc, 0);
    assert_true(count(t, "no significant difference") >= 5); /* of 6 cases */
    free(t);
    free(run_compare("a", "b", "md", &rc));
    free(run_compare("a", "b", "tex", &rc));
}

/* A planted 2x slowdown of one case is found, with ratio about 2 and p < 0.05; the rest are not flagged. */
static void compare_finds_slowdown(void **state)
{
    (void)state;
    int rc;
    char *t = run_compare("a", "c", "csv", &rc);
    assert_int_equal(rc, 0);
    const char *row = strstr(t, "tensor_mean,simd,1024,");
    assert_non_null(row);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(row, "\n"), row);
    assert_non_null(strstr(line, "B slower"));
    double ratio = 0, p = 1;
    /* study,variant,size,reps_a,reps_b,median_a,median_b,ratio,u,p,... */
    int fields = sscanf(line, "%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%*[^,],%lf,%*[^,],%lf", &ratio, &p);
    assert_int_equal(fields, 2);
    assert_true(ratio > 1.9 && ratio < 2.1);
    assert_true(p < 1e-4); /* complete separation, 10 vs 10: exact p = 2 / C(20,10) */
    assert_int_equal(count(t, "B slower"), 1);
    free(t);
    free(run_compare("a", "c", "md", &rc));
    free(run_compare("a", "c", "tex", &rc));
}

/* The same CPU at two ISA levels: every case is flagged "different ISA", none "different machines". */
static void compare_flags_isa(void **state)
{
    (void)state;
    char *out = tmpdir(), *file = rep_printf("%s/isa.md", out);
    char *a = rep_printf("%s/isa/run-20261123-090000", fix), *b = rep_printf("%s/isa/run-20261123-091000", fix);
    char *argv[] = {"compare", a, b, "--format", "md", "--out", file};
    assert_int_equal(rep_compare_main(7, argv), 0);
    char *t = slurp(file);
    assert_non_null(t);
    assert_int_equal(count(t, "different ISA (avx512 / avx2)"), 7); /* the cases with times on both sides */
    assert_int_equal(count(t, "different machines"), 0);
    assert_non_null(strstr(t, "7 cases ran at different ISA levels in A and B"));
    free(t), free(a), free(b), free(file), free(out);
}

/* Framework baselines (fixtures/frameworks): the report of the PyPI run names each row's version and
 * form and the framework column's versions (golden/frameworks/); compare with the Debian run flags each
 * baseline whose versions or form changed, and no C variant. The GPU rows (cuda_factorized, torch-cuda)
 * get their own line in REPORT.md and their timed copies in the speedup table's notes. */
static void framework_versions(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"frameworks/pypi"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "frameworks");
    char *sp = rep_printf("%s/devbox/tables/entropy_mi-speedup.md", out), *sm = slurp(sp);
    assert_non_null(sm);
    assert_non_null(strstr(sm, "× best framework (numpy 2.4.6, torch 2.15.0)"));
    assert_non_null(strstr(sm, "best framework, numpy 2.4.6, square-sum form, 1 thread"));
    assert_non_null(strstr(sm, "framework, torch 2.15.0, bmm form, 1 thread"));
    /* the GPU rows say what their timed region copies (the records' `copies`), so like meets like */
    assert_non_null(strstr(sm, "| cuda_factorized | 1.6 ms | 32 µs | 800× | 150× | 5× | 5 | timed copies: in: X, Y "
                               "from pinned memory (2 B D floats); out: H, MI (2 doubles, pinned) |"));
    assert_non_null(strstr(sm, "bmm form, 1 thread; timed copies: in: X, Y from pinned memory"));
    free(sm), free(sp);
    char *rp = rep_printf("%s/REPORT.md", out), *rm = slurp(rp);
    assert_non_null(strstr(rm, "- frameworks held at the kernels' level (v3), as each reported: "
                               "openblas avx2, numpy avx2\n"));
    /* the GPU rows against each other, not against the CPU's best */
    assert_non_null(strstr(rm, "- best GPU variant against the best GPU framework on this machine at B=16384: "
                               "**cuda_factorized** 1.6 ms, **torch-cuda** 2 ms (torch 2.15.0, bmm form): "
                               "the suite's is 1.25× faster\n"));
    assert_non_null(strstr(rm, "- best C variant against the best framework on this machine at B=16384: **omp**"));
    free(rm), free(rp);

    char *file = rep_printf("%s/compare.md", out);
    char *a = rep_printf("%s/frameworks/debian", fix), *b = rep_printf("%s/frameworks/pypi", fix);
    char *argv[] = {"compare", a, b, "--format", "md", "--out", file};
    assert_int_equal(rep_compare_main(7, argv), 0);
    char *t = slurp(file);
    assert_non_null(t);
    assert_int_equal(count(t, "different framework (numpy 1.24.2 / 2.4.6, form einsum / square-sum)"), 2);
    assert_int_equal(count(t, "different framework (numpy 1.24.2 / 2.4.6, torch 1.13.1 / 2.15.0)"), 2);
    assert_int_equal(count(t, "different framework"), 4); /* the C variants are not flagged */
    assert_non_null(strstr(t, "4 framework baselines ran another framework version or form in A and B"));
    free(t), free(a), free(b), free(file), free(out);
}

/* A batch sweep (fixtures/batch, the data path's part 3: mlp simd and omp with series only, omp failed at 1024;
 * cnn omp with its metrics) gets a table and a figure of throughput and final accuracy against the batch;
 * a study at one size (every other fixture) gets neither. Every file written matches golden/batch/. */
static void batch_sweep(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"batch"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "batch");
    char *tp = rep_printf("%s/devbox/tables/mlp-sweep.md", out), *t = slurp(tp);
    assert_non_null(t);
    assert_true(has_line(t, "| variant | batch | epochs | samples/s | × smallest | epoch time | final test accuracy "
                            "| Δ accuracy (pp) |"));
    assert_true(has_line(t, "| omp | 16 | 2 | 25010 | 1.00× | 2.4 s | 86.00 % | 0.00 |")); /* mean of 2 epochs' */
    assert_true(has_line(t, "|  | 256 | 2 | 180072 | 7.20× | 333 ms | 83.00 % | -3.00 |"));
    assert_non_null(strstr(t, "|  | 1024 |  | failed: check failed"));
    char *cp = rep_printf("%s/devbox/tables/cnn-sweep.md", out), *c = slurp(cp);
    assert_true(has_line(c, "| omp | 16 | 2 | 5000 | 1.00× | 12 s | 86.70 % | 0.00 |")); /* its metrics */
    char *fp = rep_printf("%s/devbox/figures/mlp-sweep.dat", out), *f = slurp(fp);
    assert_non_null(strstr(f, "\"omp\"\n16 25010.004 0.86 2.4\n64 100040.016 0.85 0.6\n256 180072.029 0.83 0.333333333\n"));
    char *ap = rep_printf("%s/devbox/mlp.md", out), *a = slurp(ap);
    assert_non_null(strstr(a, "[figures/mlp-sweep.dat](figures/mlp-sweep.dat)")); /* rendered only with gnuplot */
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(strstr(r, "- Batch size (mlp simd): samples/s were highest at batch 1024 (120048/s), 6.00× batch 16's; "
                              "test accuracy at batch 1024 was 9.00 points below the best"));
    assert_non_null(strstr(r, "Parts of the data-path study not in these results: loading (part 1), overlap"));
    free(rp), free(r);
    free(tp), free(t), free(cp), free(c), free(fp), free(f), free(ap), free(a), free(out);
}

/* The main job's layout (fixtures/mainjob): `run all` in a run directory and the batch sweep in its extra/,
 * read through the run directory. omp has two cases at batch 64, the main run's 20 epochs and the sweep's
 * 2: the speedup table shows the main run's (the params with the most variants there), the sweep table
 * and REPORT.md's sentence the sweep's only, without naive and simd (one batch each). */
static void main_job_with_sweep(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"mainjob/run-20261127-100000"};
    assert_int_equal(run_report(out, 1, in), 0);
    char *sp = rep_printf("%s/devbox/tables/mlp-speedup.md", out), *sd = slurp(sp);
    assert_non_null(sd);
    assert_true(has_line(sd, "| batch=64 | omp | 12.1 s | 60 ms | 15× | 1× | 2 | best CPU |"));
    char *tp = rep_printf("%s/devbox/tables/mlp-sweep.md", out), *t = slurp(tp);
    assert_non_null(t);
    assert_true(has_line(t, "| omp | 16 | 2 | 30000 | 1.00× | 2 s | 86.00 % | 0.00 |"));
    assert_true(has_line(t, "|  | 64 | 2 | 85714 | 2.86× | 700 ms | 85.00 % | -1.00 |"));
    assert_int_equal(count(t, "| naive |"), 0);
    assert_int_equal(count(t, "| simd |"), 0);
    assert_int_equal(count(t, "| 20 |"), 0);
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(strstr(r, "- Batch size (mlp omp): samples/s were highest at batch 256 (150000/s), 5.00× batch 16's"));
    free(sp), free(sd), free(tp), free(t), free(rp), free(r), free(out);
}

/* The pipeline study (fixtures/pipeline, the data path's part 1): a warm run and a later cold run of the same four
 * variants are eight cases, not four (the cold run does not supersede the warm one); the loading table and
 * figure show each apart, and REPORT.md's data path section says what paid. Matches golden/pipeline/. */
static void pipeline_loading(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"pipeline"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "pipeline");
    char *tp = rep_printf("%s/devbox/tables/pipeline-loading.md", out), *t = slurp(tp);
    assert_non_null(t);
    assert_true(has_line(t, "| mmap | warm | 10 ms | 4704.0 | 6000000 | 20.00× | 0.005 | 0.0005 | 1.00 |"));
    /* the fixture's cold loads were evicted by posix_fadvise alone (cold_drop_caches 0): the cell says so */
    assert_true(has_line(t, "|  | cold (fadvise only, no drop_caches) | 100 ms | 470.4 | 600000 | 2.50× | 0.050 | "
                            "0.0050 | 0.00 |"));
    char *fp = rep_printf("%s/devbox/figures/pipeline-loading.dat", out), *f = slurp(fp);
    assert_non_null(strstr(f, "\"gzip warm\" 300000 0 132.1094 0.2 0.1\n\"gzip cold\" 240000 0"));
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(strstr(r, "- Loading (pipeline, cache=warm): mmap of the file took 10 ms, 20.00× faster than "
                              "gzip (200 ms); a gzip load is 0.100× one mlp epoch"));
    assert_non_null(strstr(r, "- Loading (pipeline, cache=cold (fadvise only, no drop_caches)): read of the file took 80 ms, 3.12× faster"));
    assert_non_null(strstr(r, "Parts of the data-path study not in these results: overlap (prefetching, part 2), batch size"));
    free(tp), free(t), free(fp), free(f), free(rp), free(r), free(out);
}

/* The data path's GPU parts (fixtures/gpu_path): the h2d study's copies (part 5: GB/s against size, pinned
 * against the pageable row it builds on) and cnn's cudnnFind against the heuristic (part 6: search cost,
 * steady epochs, the epochs it takes to pay back); their tables, the bandwidth figure's data and the data
 * path sentences. Matches golden/gpu_path/. */
static void gpu_data_path(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"gpu_path"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "gpu_path");
    char *tp = rep_printf("%s/gpubox/tables/h2d-bandwidth.md", out), *t = slurp(tp);
    assert_non_null(t);
    assert_true(has_line(t, "| h2d-pinned | 4 KiB | 4 | 4.99 | 2.00× | 1.02 µs |"));
    assert_true(has_line(t, "|  | 256 MiB | 12.5 | 15.6 | — | 21.5 ms |"));
    char *ap = rep_printf("%s/gpubox/tables/cnn-algo-search.md", out), *a = slurp(ap);
    assert_true(has_line(a, "| cudnn | batch=512 | cudnnFind (benchmark) | 1.5 s | 2.1 s | 500 ms | 1.20× |"));
    char *fp = rep_printf("%s/gpubox/figures/h2d-bandwidth.dat", out), *f = slurp(fp);
    assert_non_null(strstr(f, "\"h2d-pinned\"\n4096 4 4.99"));
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(strstr(r, "- Host-device copies (h2d): h2d-pinned reached 25 GB/s at 256 MiB, 2.00× "
                              "h2d-pageable's 12.5 GB/s; at 4 KiB, 4 against 2 GB/s (2.00×)."));
    assert_non_null(strstr(r, "- cuDNN benchmark mode (cnn cudnn, batch=512): cudnnFind* took 1.5 s once; a steady "
                              "epoch took 500 ms against the heuristic's 600 ms (1.20× faster), so the search paid "
                              "for itself after 15 epochs."));
    assert_non_null(strstr(r, "- Copy/compute overlap (mlp cuda, batch=64): fed from the host, an epoch took 1.2 s "
                              "with two streams and pinned slots against 1.5 s copying synchronously (1.25× "
                              "faster); with the training set resident on the GPU, 1 s."));
    assert_non_null(strstr(r, "Parts of the data-path study not in these results: loading (part 1), overlap (prefetching, part 2), batch size "
                              "(part 3), reduced precision (part 4)."));
    free(tp), free(t), free(ap), free(a), free(fp), free(f), free(rp), free(r), free(out);
}

/* The prefetch study (fixtures/overlap, the data path's part 2): two cases (model and augment params) of sync and
 * three loader depths, one failed. The overlap table keeps the cases apart, the figure has one block per
 * case, and REPORT.md's data path section says per case whether prefetching paid (mlp: faster; cnn:
 * slower although its wait dropped). Matches golden/overlap/. */
static void overlap_prefetch(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"overlap"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "overlap");
    char *tp = rep_printf("%s/devbox/tables/prefetch-overlap.md", out), *t = slurp(tp);
    assert_non_null(t);
    assert_true(has_line(t, "| model=mlp augment=none, batch=64 | sync | 0 | 200 ms | 22 ms | 178 ms | 11.0 % | 89.0 % "
                            "| — | 1.00× |"));
    assert_true(has_line(t, "|  | queue2 | 2 | 175 ms | 1.4 ms | 174 ms | 0.8 % | 99.2 % | 25.0 % | 1.14× |"));
    /* cnn: the wait fell, the steps themselves got slower (a loader beside two compute threads on 2 CPUs) */
    assert_true(has_line(t, "|  | queue1 | 1 | 1.05 s | 52.5 ms | 997 ms | 5.0 % | 95.0 % | 25.0 % | 0.95× |"));
    assert_non_null(strstr(t, "|  | queue4 |  | failed: check failed"));
    char *fp = rep_printf("%s/devbox/figures/prefetch-overlap.dat", out), *f = slurp(fp);
    assert_non_null(strstr(f, "\"model=mlp augment=none, batch=64\"\n0 0.2 0.11 \"sync\"\n1 0.18 0.02 \"queue1\"\n"));
    assert_non_null(strstr(f, "\n\n\n\"model=cnn augment=flipshift, batch=64\"\n0 1 0.2 \"sync\"\n"));
    size_t len = strlen(f), tail = strlen("2 1.1 0.04 \"queue2\"\n"); /* cnn's failed queue4 has no point */
    assert_true(len > tail && !strcmp(f + len - tail, "2 1.1 0.04 \"queue2\"\n"));
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(strstr(r, "- Overlap (prefetch, model=mlp augment=none, batch=64): queue2's epoch took 175 ms, "
                              "1.14× faster than sync (200 ms); the compute waited 11.0 % of the epoch with sync and "
                              "0.8 % with queue2; the steps themselves took 178 ms per epoch with sync and 174 ms with queue2.\n"));
    assert_non_null(strstr(r, "- Overlap (prefetch, model=cnn augment=flipshift, batch=64): queue1's epoch took 1.05 s, "
                              "1.05× slower than sync (1 s); the compute waited 20.0 % of the epoch with sync and 5.0 % "
                              "with queue1; the steps themselves took 800 ms per epoch with sync and 997 ms with "
                              "queue1.\n"));
    assert_non_null(strstr(r, "Parts of the data-path study not in these results: loading (part 1), batch size (part 3)"));
    assert_null(strstr(r, "Parts of the data-path study not in these results: loading (part 1), overlap"));
    free(tp), free(t), free(fp), free(f), free(rp), free(r), free(out);
}

/* A planted work count: fixtures/kernel with factorized at B=1024 charged the study's O(D^2) work (and the
 * rates that follow from it), as a framework row was before it declared its own. Its fraction of the
 * roofline, 584 %, is shown as an error of the work count or the ceiling in the roofline table and in the
 * findings, never as a percentage reached; the fractions of the other rows stay as they were. */
static void over_bound_is_an_error(void **state)
{
    (void)state;
    char *dir = tmpdir(), *run = rep_printf("%s/run-20261122-100000", dir), *path = rep_printf("%s/results.jsonl", run);
    char *src_path = rep_printf("%s/kernel/run-20261122-100000/results.jsonl", fix), *text = slurp(src_path);
    assert_non_null(text);
    assert_int_equal(rep_mkdirs(run), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    int planted = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *r = json_loads(line, 0, NULL);
        assert_non_null(r);
        const char *v = json_string_value(json_object_get(r, "variant"));
        if (v && !strcmp(v, "factorized") && json_integer_value(json_object_get(r, "size")) == 1024) {
            json_t *w = json_object_get(r, "work"), *rt = json_object_get(r, "rates");
            double scale = 268435456.0 / json_number_value(json_object_get(w, "flops"));
            json_object_set_new(w, "flops", json_real(268435456.0));
            json_object_set_new(rt, "gflops", json_real(json_number_value(json_object_get(rt, "gflops")) * scale));
            json_object_set_new(rt, "ai", json_real(128.0));
            planted++;
        }
        char *out = json_dumps(r, JSON_COMPACT);
        fprintf(f, "%s\n", out);
        free(out);
        json_decref(r);
    }
    fclose(f);
    assert_int_equal(planted, 1);
    char *out = tmpdir();
    char *argv[] = {"report", dir, "--out", out, "--no-plots"};
    assert_int_equal(rep_report_main(5, argv), 0);
    char *tp = rep_printf("%s/devbox/tables/entropy_mi-roofline.md", out), *t = slurp(tp);
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(t);
    assert_non_null(r);
    assert_non_null(strstr(t, "|  | 1024 | 1 | 671 |"));
    assert_non_null(strstr(t, "| error: 584 % > 100 % |"));
    assert_non_null(strstr(t, "is not a measurement: the work it is charged"));
    assert_null(strstr(t, "583.6")); /* never as a fraction reached */
    assert_non_null(strstr(t, "| 25.5 % |")); /* factorized at 256: its own work, its fraction */
    assert_non_null(strstr(r, "error: a case above its roofline bound (factorized at B=1024 (584 %)): a work "
                              "count or a ceiling is wrong, not a measurement"));
    assert_null(strstr(r, "factorized runs at"));
    free(text), free(src_path), free(path), free(run), free(dir), free(tp), free(t), free(rp), free(r), free(out);
}

/* OpenMP attribution (fixtures/threads): tensor_mean's omp rows carry threads_busy_s; the table shows each
 * thread's busy time, the busiest against the median and the imbalance; simd (one thread) and blas
 * (threaded, no per-thread shares) are not in it. Matches golden/threads/. */
static void omp_thread_busy(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"threads"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "threads");
    char *tp = rep_printf("%s/devbox/tables/tensor_mean-thread-busy.md", out), *t = slurp(tp);
    assert_non_null(t);
    assert_true(has_line(t, "| omp | N=4096 | 2 | 2 ms | 1.9 ms, 1.9 ms | 0.95 | 1.000 |"));
    assert_true(has_line(t, "|  | N=8192 | 2 | 8 ms | 7.5 ms, 4.5 ms | 0.94 | 1.250 |"));
    assert_null(strstr(t, "| simd |"));
    assert_null(strstr(t, "| blas |"));
    free(tp), free(t), free(out);
}

/* The precision study (fixtures/precision, the data path's part 4): four CPU rows with their storage, and three
 * GPU rows unavailable (in the not-run table, not in the precision table); the table, the figure's
 * data and REPORT.md's data path sentence. Matches golden/precision/. */
static void precision_table(void **state)
{
    (void)state;
    char *out = tmpdir();
    const char *in[] = {"precision"};
    assert_int_equal(run_report(out, 1, in), 0);
    golden_tree(out, "precision");
    char *tp = rep_printf("%s/devbox/tables/precision-precision.md", out), *t = slurp(tp);
    assert_non_null(t);
    assert_true(has_line(t, "| variant | storage | epoch time | × baseline | epochs | final test accuracy "
                            "| Δ accuracy (pp) | step error |"));
    assert_true(has_line(t, "| fp32 | fp32 | 200 ms ± 4 ms | 1.00× | 5 | 86.00 % | +0.00 | 2.1e-06 |"));
    assert_true(has_line(t, "| bf16 | bf16 | 250 ms ± 5 ms | 0.80× | 5 | 85.70 % | -0.30 | 0.032 |"));
    assert_true(has_line(t, "| bf16dp | bf16 | 160 ms ± 3.2 ms | 1.25× | 5 | 85.60 % | -0.40 | 0.032 |"));
    assert_null(strstr(t, "cuda-fp16")); /* unavailable: listed in the not-run table instead */
    char *fp = rep_printf("%s/devbox/figures/precision-precision.dat", out), *f = slurp(fp);
    assert_non_null(strstr(f, "\"fp32\" 0.2 0.004 86 \"fp32\"\n\"bf16\" 0.25 0.005 85.7 \"bf16\"\n"));
    char *rp = rep_printf("%s/REPORT.md", out), *r = slurp(rp);
    assert_non_null(strstr(r, "- Reduced precision (precision): the fastest 16-bit row, bf16dp (bf16 storage), took "
                              "160 ms per epoch, 1.25× faster than fp32 (200 ms); its test accuracy after 5 epochs "
                              "was 0.40 points below fp32's (85.60 % against 86.00 %).\n"));
    assert_non_null(strstr(r, "batch size (part 3), host-to-device copies (part 5)")); /* part 4 is present */
    free(tp), free(t), free(fp), free(f), free(rp), free(r), free(out);
}

/* Identical samples: p = 1; fewer than 9 repetitions and CV above 5 % are flagged. */
static void compare_flags_noise_and_few_reps(void **state)
{
    (void)state;
    char *out = tmpdir(), *file = rep_printf("%s/c.csv", out);
    char *g = rep_printf("%s/galaxy", fix);
    char *argv[] = {"compare", g, g, "--format", "csv", "--out", file};
    assert_int_equal(rep_compare_main(7, argv), 0);
    char *t = slurp(file);
    assert_non_null(t);
    assert_int_equal(count(t, "no significant difference"), 3);
    assert_int_equal(count(t, "few reps (< 9)"), 3);
    assert_int_equal(count(t, "noisy (CV"), 2); /* default (CV 6 %) and simd (8 %), not layout (4 %) */
    assert_non_null(strstr(t, "galaxy,layout,2700,5,5,4,4,1,12.5,1,"));
    free(t), free(g), free(file), free(out);
}

static int setup(void **state)
{
    (void)state;
    snprintf(src, sizeof src, "%s", source_root());
    snprintf(fix, sizeof fix, "%s/tests/reports/fixtures", src);
    snprintf(gold, sizeof gold, "%s/tests/reports/golden", src);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--update-golden"))
        updating = 1;
    else if (argc > 1) {
        fprintf(stderr, "usage: %s [--update-golden]\n", argv[0]);
        return 2;
    }
    if (!updating && getenv("SPEEDLAB_UPDATE_GOLDEN"))
        printf("# SPEEDLAB_UPDATE_GOLDEN is ignored: a test never writes its golden files "
               "(ninja -C BUILD update-goldens does, for a person to review)\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(report_matches_golden),
        cmocka_unit_test(machines_are_grouped),
        cmocka_unit_test(isa_levels_and_inversions),
        cmocka_unit_test(isa_levels_table),
        cmocka_unit_test(isa_levels_two_cpus_one_host),
        cmocka_unit_test(isa_levels_pairing),
        cmocka_unit_test(planner_in_report),
        cmocka_unit_test(cnn_table_one),
        cmocka_unit_test(fresh_machine),
        cmocka_unit_test(framework_versions),
        cmocka_unit_test(batch_sweep),
        cmocka_unit_test(main_job_with_sweep),
        cmocka_unit_test(pipeline_loading),
        cmocka_unit_test(gpu_data_path),
        cmocka_unit_test(precision_table),
        cmocka_unit_test(overlap_prefetch),
        cmocka_unit_test(omp_thread_busy),
        cmocka_unit_test(over_bound_is_an_error),
        cmocka_unit_test(bad_input_is_reported_and_skipped),
        cmocka_unit_test(usage_errors),
        cmocka_unit_test(gpu_read_from_traits),
        cmocka_unit_test(phases_skip_nulls),
        cmocka_unit_test(compare_same_build),
        cmocka_unit_test(compare_finds_slowdown),
        cmocka_unit_test(compare_flags_noise_and_few_reps),
        cmocka_unit_test(compare_flags_isa),
        cmocka_unit_test(gpu_roofline),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
