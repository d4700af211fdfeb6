/* tests/reports/test_names.c: names that cannot inject and numbers that cannot be (docs/reliability.md,
 * "Names survive and cannot inject", "Numbers that cannot be are refused"). A profile region named with
 * a newline and Markdown reaches REPORT.md only inside a code span, on one line; the escapers of
 * reports/escape.c keep any name one line and one cell; times below a nanosecond, thread counts that
 * cannot be and reps that disagree with times_s are refused with file:line and the reason, and no
 * "inf×" reaches a table. */
#define _GNU_SOURCE
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "rep.h"
#include "report.h"

/* A case record; %s: variant, times_s, extra fields (each with a leading comma, or ""). */
static const char rec_fmt[] =
    "{\"schema\":\"speedlab-results\",\"schema_version\":1,\"kind\":\"case\",\"run_id\":\"run-1\","
    "\"time\":\"2026-01-01T00:00:00Z\",\"env\":{\"host\":\"devbox\",\"cpu_model\":\"cpu\"},\"study\":\"s\","
    "\"variant\":\"%s\",\"size\":8,\"size_name\":\"N\",\"status\":\"ok\",\"baseline\":\"naive\","
    "\"params\":{\"N\":\"8\"},\"times_s\":[%s]%s}\n";

/* A profile of one repetition region and two inside it, the larger named `name` (JSON text). */
static char *profile(const char *name)
{
    return rep_printf(",\"profile\":{\"wall_ns\":1000000,\"regions\":["
                      "{\"path\":[\"s\",\"naive\",\"N=8\"],\"name\":\"N=8\",\"depth\":2,\"calls\":1,"
                      "\"incl_ns\":1000000,\"self_ns\":100000},"
                      "{\"path\":[\"s\",\"naive\",\"N=8\",\"%s\"],\"name\":\"%s\",\"depth\":3,\"calls\":1,"
                      "\"incl_ns\":600000,\"self_ns\":600000},"
                      "{\"path\":[\"s\",\"naive\",\"N=8\",\"small\"],\"name\":\"small\",\"depth\":3,\"calls\":1,"
                      "\"incl_ns\":300000,\"self_ns\":300000}]}", name, name);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *s = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&s, &n);
    int c;
    while ((c = fgetc(f)) != EOF)
        fputc(c, m);
    fclose(m);
    fclose(f);
    return s;
}

static char root[64];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "%s/sl-names-XXXXXX", getenv("TMPDIR") ? "/tmp" : "/tmp");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (!getenv("KEEP")) nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static int report(const char *in, const char *out)
{
    char *argv[] = {"report", (char *)in, "--out", (char *)out, "--no-plots"};
    return rep_report_main(5, argv);
}

/* Loads `text` as file x.jsonl; returns what the loader said, and the cases loaded in *ncases. */
static char *load(const char *text, int *ncases)
{
    char *in = rep_printf("%s/x.jsonl", root), *err = NULL;
    FILE *f = fopen(in, "w");
    fputs(text, f);
    fclose(f);
    size_t len = 0;
    FILE *ef = open_memstream(&err, &len);
    rep_set s = {0};
    rep_load(&s, 1, &in, ef);
    fclose(ef);
    *ncases = s.ncases;
    rep_set_free(&s);
    free(in);
    return err;
}

/* ---- names ------------------------------------------------------------------------------------ */

static void region_name_stays_in_its_code_span(void **state)
{
    (void)state;
    const char *evil = "hot`x\\n# INJECTED heading\\n| a | b |";
    char *p = profile(evil), *in = rep_printf("%s/r.jsonl", root), *out = rep_printf("%s/out", root);
    FILE *f = fopen(in, "w");
    fprintf(f, rec_fmt, "naive", "0.002,0.002", p);
    fprintf(f, rec_fmt, "simd", "0.001,0.001", "");
    fclose(f);
    assert_int_equal(report(in, out), 0);
    char *md = rep_printf("%s/REPORT.md", out), *t = slurp(md), *page = rep_printf("%s/devbox/s.md", out);
    char *pt = slurp(page);
    assert_non_null(t);
    assert_non_null(pt);
    for (int i = 0; i < 2; i++) {
        assert_null(strstr(i ? pt : t, "\n# INJECTED"));
        assert_null(strstr(i ? pt : t, "\n| a | b |"));
    }
    /* the whole name on the line, in a code span whose fence outnumbers its backtick */
    assert_non_null(strstr(t, "- top region by self time: ``hot`x # INJECTED heading | a | b |`` ("));
    assert_non_null(strstr(pt, "| hot`x # INJECTED heading \\| a \\| b \\| |")); /* one cell */
    free(t), free(pt), free(page), free(md), free(out), free(in), free(p);
}

static char *escaped(void (*esc)(const char *, FILE *), const char *s)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    esc(s, f);
    fclose(f);
    return buf;
}

static void escapers(void **state)
{
    (void)state;
    char *c = escaped(rep_md_code, "a\nb");
    assert_string_equal(c, "`a b`");
    free(c);
    c = escaped(rep_md_code, "``x`");
    assert_string_equal(c, "``` ``x` ```");
    free(c);
    c = escaped(rep_md_text, "*b* [l](u) <i>|#\n_x_");
    assert_string_equal(c, "\\*b\\* \\[l\\](u) &lt;i>\\|\\# _x_");
    free(c);
    c = escaped(rep_md_cell, "a|b\n<c>");
    assert_string_equal(c, "a\\|b &lt;c>");
    free(c);
    c = escaped(rep_data_name, "r\"1\n2 3");
    assert_string_equal(c, "\"r'1 2 3\"\n");
    free(c);
}

static char *written(void (*w)(const rep_table *, FILE *), const rep_table *t)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    w(t, f);
    fclose(f);
    return buf;
}

/* A table whose id and cell hold names: CSV quotes a carriage return, LaTeX keeps a \label to its
 * characters and a cell to one line (a blank line would end the tabular). */
static void tables_keep_names_in_their_cells(void **state)
{
    (void)state;
    const char *cols[] = {"region", "n"};
    rep_table *t = rep_table_new("s}\\input{/etc/passwd}-x", "t", 2, cols, cols);
    int r = rep_table_row(t, 1);
    rep_cell_text(t, r, 0, "a\n\nb\rc,d");
    rep_cell_num(t, r, 1, 1.0, "1");
    char *tex = written(rep_write_tex, t), *csv = written(rep_write_csv, t), *md = written(rep_write_md, t);
    assert_null(strstr(tex, "\\input{"));
    assert_non_null(strstr(tex, "\\label{tab:s--input--etc-passwd--x}"));
    assert_null(strstr(tex, "\n\n"));
    assert_non_null(strstr(tex, "a  b c,d"));
    assert_non_null(strstr(csv, "\"a\n\nb\rc,d\",1"));
    assert_non_null(strstr(md, "| a  b c,d | 1 |"));
    free(tex), free(csv), free(md);
    rep_table_free(t);
}

/* ---- numbers ---------------------------------------------------------------------------------- */

static void impossible_numbers_are_refused(void **state)
{
    (void)state;
    static const struct {
        const char *times, *extra, *said;
    } bad[] = {
        {"5e-324,5e-324", "", "x.jsonl:1: times_s[0] is 4.94066e-324; a repetition's time is a positive number"},
        {"0.1,1e-10", "", "x.jsonl:1: times_s[1] is 1e-10"},
        {"0.1", ",\"threads\":-7", "x.jsonl:1: threads is -7; a thread count is a whole number from 1 to"},
        {"0.1", ",\"threads\":0", "x.jsonl:1: threads is 0;"},
        {"0.1", ",\"threads\":100000000", "x.jsonl:1: threads is 100000000;"},
        {"0.1", ",\"threads\":2.5", "x.jsonl:1: threads is 2.5"},
        {"0.1,0.2", ",\"reps\":5", "x.jsonl:1: reps is 5 but times_s holds 2 times"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *text = rep_printf(rec_fmt, "naive", bad[i].times, bad[i].extra);
        int n = -1;
        char *err = load(text, &n);
        if (n != 0 || !strstr(err, bad[i].said))
            fail_msg("%s %s: %d cases loaded, said: %s", bad[i].times, bad[i].extra, n, err);
        free(err), free(text);
    }
    char *text = rep_printf(rec_fmt, "naive", "1e-9,0.5", ",\"threads\":4,\"reps\":2");
    int n = -1;
    char *err = load(text, &n);
    assert_int_equal(n, 1); /* the limits themselves are fine */
    free(err), free(text);
}

/* A baseline of 5e-324 s once made "inf×" in the speedup table: its record is refused, and no table of
 * the report holds "inf". */
static void no_inf_reaches_a_table(void **state)
{
    (void)state;
    char *in = rep_printf("%s/r.jsonl", root), *out = rep_printf("%s/out", root);
    FILE *f = fopen(in, "w");
    fprintf(f, rec_fmt, "naive", "5e-324,5e-324", "");
    fprintf(f, rec_fmt, "simd", "0.001,0.001", "");
    fprintf(f, rec_fmt, "omp", "0.002,0.002", "");
    fclose(f);
    assert_int_equal(report(in, out), 3); /* a record was skipped */
    char *md = rep_printf("%s/devbox/s.md", out), *t = slurp(md);
    assert_non_null(t);
    assert_null(strstr(t, "inf"));
    free(t), free(md), free(out), free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(region_name_stays_in_its_code_span, setup, teardown),
        cmocka_unit_test(escapers),
        cmocka_unit_test(tables_keep_names_in_their_cells),
        cmocka_unit_test_setup_teardown(impossible_numbers_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(no_inf_reaches_a_table, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
