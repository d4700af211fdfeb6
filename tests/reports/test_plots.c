/* tests/reports/test_plots.c: every gnuplot script in plots/ runs on its own on a figure data file
 * (the golden copies written by `speedlab report` from the fixtures; the cnn study's Figure 1 too) and
 * makes non-empty PNG, PDF and SVG files. A TAP skip plan (1..0 # SKIP) when gnuplot is not installed. */
#define _GNU_SOURCE
#include <ftw.h>
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

#include "rep.h"
#include "report.h"
#include "sl_config.h"

static char gold[1200], out[64];

/* data: a golden figure data file, relative to golden/ */
static const struct {
    const char *script, *data, *extra;
} figs[] = {
    {"time_size.gp", "report/devbox/figures/entropy_mi-time.dat", "xlab='B'"},
    {"speedup.gp", "report/devbox/figures/entropy_mi-speedup.dat", "xlab='B'; baseline='naive'"},
    {"bars.gp", "report/devbox/figures/galaxy-bars.dat", "subtitle='N=2700'"},
    {"roofline.gp", "report/devbox/figures/entropy_mi-roofline.dat", "nroofs=2"},
    {"epochs.gp", "report/devbox/figures/mlp-epochs.dat", NULL},
    {"throughput.gp", "report/devbox/figures/mlp-throughput.dat", NULL},
    {"memory.gp", "report/devbox/figures/galaxy-memory.dat", NULL},
    {"series.gp", "report/devbox/figures/galaxy-cost.dat", "xlab='iteration'; ylab='cost J'"},
    /* seed 004's Figure 1 from the cnn fixture: a-b (time and throughput per epoch), c (test accuracy
     * per epoch, under the loss), d (average throughput, bars with error bars) */
    {"throughput.gp", "cnn/devbox/figures/cnn-throughput.dat", NULL},
    {"epochs.gp", "cnn/devbox/figures/cnn-epochs.dat", NULL},
    {"bars.gp", "cnn/devbox/figures/cnn-throughput-bars.dat",
     "subtitle='batch=512'; ylab='samples/s (mean over epochs)'; labfmt='%.0f'"},
    /* the data path's part 3: throughput and accuracy against the batch (two variants, one with a gap) */
    {"batch.gp", "batch/devbox/figures/mlp-sweep.dat", "xlab='batch'"},
    /* part 1: images/s per method and cache state, warm and cold apart */
    {"bars.gp", "pipeline/devbox/figures/pipeline-loading.dat", "ylab='images/s'; labfmt='%.3g'"},
    /* part 2: epoch time and wait fraction against the prefetch depth, two cases */
    {"overlap.gp", "overlap/devbox/figures/prefetch-overlap.dat", NULL},
    {"bandwidth.gp", "gpu_path/gpubox/figures/h2d-bandwidth.dat", NULL},
    /* part 4: epoch time and accuracy per storage type */
    {"precision.gp", "precision/devbox/figures/precision-precision.dat", NULL},
    /* a reduced run beside full ones: time per sample, the reduced bar labelled with its mark */
    {"bars.gp", "fresh/laptop/figures/cnn-bars.dat",
     "subtitle='batch=512, per sample, † reduced'; ylab='time per sample (µs)'"},
};

static void one_script(int i)
{
    char *data = rep_printf("%s/%s", gold, figs[i].data);
    char *base = rep_printf("%s/fig%d", out, i);
    assert_int_equal(access(data, R_OK), 0);
    assert_int_equal(rep_run_gnuplot(figs[i].script, data, base, figs[i].extra), 0);
    static const char *ext[] = {"png", "pdf", "svg"};
    for (int k = 0; k < 3; k++) {
        char *p = rep_printf("%s.%s", base, ext[k]);
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        assert_true(st.st_size > 1000); /* a real figure, not an empty page */
        free(p);
    }
    free(data);
    free(base);
}

#define SCRIPT_TEST(n) static void script_##n(void **s) { (void)s; one_script(n); }
SCRIPT_TEST(0) SCRIPT_TEST(1) SCRIPT_TEST(2) SCRIPT_TEST(3)
SCRIPT_TEST(4) SCRIPT_TEST(5) SCRIPT_TEST(6) SCRIPT_TEST(7)
SCRIPT_TEST(8) SCRIPT_TEST(9) SCRIPT_TEST(10) SCRIPT_TEST(11)
SCRIPT_TEST(12) SCRIPT_TEST(13) SCRIPT_TEST(14) SCRIPT_TEST(15)
SCRIPT_TEST(16)
/* one test per figure above: a figure added there needs its SCRIPT_TEST and its line in main */
_Static_assert(sizeof figs / sizeof *figs == 17, "a SCRIPT_TEST per entry of figs");

/* A script that does not exist fails instead of silently making nothing. */
static void missing_script_fails(void **s)
{
    (void)s;
    char *data = rep_printf("%s/%s", gold, figs[0].data);
    char *base = rep_printf("%s/none", out);
    assert_int_not_equal(rep_run_gnuplot("no-such-script.gp", data, base, NULL), 0);
    free(data);
    free(base);
}

/* Every figure DIR/devbox/figures/STUDY-KIND.EXT of kinds x ext exists and is over min_size bytes. */
static void assert_figures(const char *dir, const char *study, const char *const *kinds, int nk,
                           const char *const *ext, int ne, long min_size)
{
    for (int k = 0; k < nk; k++)
        for (int e = 0; e < ne; e++) {
            char *p = rep_printf("%s/devbox/figures/%s-%s.%s", dir, study, kinds[k], ext[e]);
            struct stat st;
            assert_int_equal(stat(p, &st), 0);
            assert_true(st.st_size > min_size);
            free(p);
        }
}

/* The file at path into buf (at most n - 1 bytes, NUL-terminated). */
static void read_page(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = 0;
    fclose(f);
}

/* `speedlab report` with plots: every figure is rendered in three formats and shown on the study page. */
static void report_renders_figures(void **s)
{
    (void)s;
    char *root = rep_printf("%s/../fixtures/galaxy", gold), *dir = rep_printf("%s/report", out);
    char *argv[] = {"report", root, "--out", dir, "--format", "csv"};
    assert_int_equal(rep_report_main(6, argv), 0);
    static const char *kinds[] = {"bars", "cost", "memory"}, *ext[] = {"png", "pdf", "svg", "dat"};
    assert_figures(dir, "galaxy", kinds, 3, ext, 4, 100);
    char *page = rep_printf("%s/devbox/galaxy.md", dir);
    char buf[65536];
    read_page(page, buf, sizeof buf);
    assert_non_null(strstr(buf, "![Resident memory over time (seed 002's Figure 2.1)](figures/galaxy-memory.png)"));
    char *md = rep_printf("%s/devbox/tables/galaxy-summary.md", dir);
    assert_int_not_equal(access(md, R_OK), 0); /* --format csv: no md table files */
    free(md), free(page), free(root), free(dir);
}

/* `speedlab report` draws the cnn study's Figure 1 (a-b throughput, c epochs, d throughput bars) in
 * three formats and shows each on the study page. */
static void report_renders_figure_one(void **s)
{
    (void)s;
    char *root = rep_printf("%s/../fixtures/cnn", gold), *dir = rep_printf("%s/cnn", out);
    char *argv[] = {"report", root, "--out", dir, "--format", "csv"};
    assert_int_equal(rep_report_main(6, argv), 0);
    static const char *kinds[] = {"throughput", "epochs", "throughput-bars"}, *ext[] = {"png", "pdf", "svg"};
    assert_figures(dir, "cnn", kinds, 3, ext, 3, 1000);
    char *page = rep_printf("%s/devbox/cnn.md", dir);
    static char buf[1 << 17];
    read_page(page, buf, sizeof buf);
    assert_non_null(strstr(buf, "![Average throughput per variant at batch=512, mean ± std over repetitions "
                                "(seed 004's Figure 1 d) († reduced run: compared per sample, not by total time)]"
                                "(figures/cnn-throughput-bars.png)"));
    free(page), free(root), free(dir);
}

/* Renders script on data (written to a file) to SVG and returns the SVG's text (to free). */
static char *render_svg(const char *script, const char *data, const char *extra)
{
    char *dat = rep_printf("%s/names.dat", out), *base = rep_printf("%s/names", out);
    FILE *f = fopen(dat, "w");
    assert_non_null(f);
    fputs(data, f);
    fclose(f);
    assert_int_equal(rep_run_gnuplot(script, dat, base, extra), 0);
    char *svg = rep_printf("%s.svg", base);
    f = fopen(svg, "r");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    free(dat), free(base), free(svg);
    return strdup(buf);
}

/* Names from the data (variants, galaxy's size name max_iter) are plain text: in gnuplot's enhanced
 * text "max_iter" would set "iter" as a subscript, which the SVG shows as text split at the '_'. */
static void names_not_enhanced_text(void **s)
{
    (void)s;
    char *svg = render_svg("bars.gp", "\"cg_fused\" 2 0.1\n\"simd\" 1 0.1\n", "subtitle='max_iter=300'");
    assert_non_null(strstr(svg, "cg_fused"));         /* the x tic */
    assert_non_null(strstr(svg, "max_iter=300"));     /* the x label */
    free(svg);
    svg = render_svg("series.gp", "\"cg_fused\"\n0 2\n1 1\n\n\n\"simd\"\n0 2\n1 1.5\n",
                     "xlab='max_iter'; ylab='cost_J'");
    assert_non_null(strstr(svg, "cg_fused"));         /* the key */
    assert_non_null(strstr(svg, "max_iter"));
    assert_non_null(strstr(svg, "cost_J"));
    free(svg);
    svg = render_svg("memory.gp", "\"cg_fused\"\n0 40\n1 42\n", NULL);
    assert_non_null(strstr(svg, "cg_fused"));
    free(svg);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

int main(void)
{
    if (!rep_gnuplot()) {
        /* TAP's skip plan: meson counts a TAP test that exits 77 as an error */
        printf("1..0 # SKIP gnuplot not found on PATH\n");
        return 0;
    }
    const char *root = getenv("SPEEDLAB_SOURCE_ROOT");
    root = root && *root ? root : SL_SOURCE_ROOT;
    snprintf(gold, sizeof gold, "%s/tests/reports/golden", root);
    /* the scripts of this source tree, whatever SPEEDLAB_PLOTS_DIR says */
    char *plots = rep_printf("%s/plots", root);
    setenv("SPEEDLAB_PLOTS_DIR", plots, 1);
    free(plots);
    snprintf(out, sizeof out, "/tmp/sl-plots-XXXXXX");
    if (!mkdtemp(out))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(script_0), cmocka_unit_test(script_1), cmocka_unit_test(script_2),
        cmocka_unit_test(script_3), cmocka_unit_test(script_4), cmocka_unit_test(script_5),
        cmocka_unit_test(script_6), cmocka_unit_test(script_7), cmocka_unit_test(script_8),
        cmocka_unit_test(script_9), cmocka_unit_test(script_10), cmocka_unit_test(script_11),
        cmocka_unit_test(script_12), cmocka_unit_test(script_13), cmocka_unit_test(script_14),
        cmocka_unit_test(script_15), cmocka_unit_test(script_16),
        cmocka_unit_test(missing_script_fails),
        cmocka_unit_test(report_renders_figures), cmocka_unit_test(report_renders_figure_one),
        cmocka_unit_test(names_not_enhanced_text),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    nftw(out, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
