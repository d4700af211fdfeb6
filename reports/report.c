/* reports/report.c: `speedlab report RESULTS_DIR... [--out DIR] [--format md,csv,tex] [--no-plots] [--pool]`.
 *
 * Output (OUT, default `report`):
 *   OUT/REPORT.md                       what ran, where, how fast, what the bottleneck is; links all
 *   OUT/<machine>/<study>.md            every table and figure of a study on one machine
 *   OUT/<machine>/tables/<table>.{md,csv,tex}
 *   OUT/<machine>/figures/<study>-<kind>.{dat,png,pdf,svg}
 * One <machine> directory per environment (env.host + env.cpu_model + env.isa): never averaged together.
 * Exit status: 0, or 3 when some input was skipped (bad lines, unreadable files), 2 on usage errors,
 * 1 when nothing could be read, or any output file could not be written (a full disk): each file is
 * written to a temporary and renamed into place, so none is left empty or cut (reports/output.c). */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "missing.h"
#include "rep.h"
#include "report.h"

#define MAXT 64
#define MAXST 32
#define MAXF 16

typedef struct ropts {
    char **paths;
    int npaths;
    const char *out;
    int formats;
    int plots;
    int pool;
} ropts;

static void usage(FILE *f)
{
    fputs("usage: speedlab report RESULTS_DIR... [--out DIR] [--format md,csv,tex] [--no-plots] [--pool]\n"
          "  Reads every *.jsonl results file below each RESULTS_DIR (a run directory, a parent of runs,\n"
          "  or a file; the `latest` symlink is not followed twice) and writes, per machine and study,\n"
          "  speedup, crossover, GPU phases, summary, performance (seed 004's Table I), training, batch\n"
          "  sweep, loading, copy bandwidth, cuDNN algorithm search,\n"
          "  agreement, roofline, region roofline, bottleneck, functions and not-run tables\n"
          "  (docs/reports.md), and figures.\n"
          "  --out DIR       output directory (default: report)\n"
          "  --format LIST   table files to write, any of md,csv,tex (default: all three)\n"
          "  --no-plots      write figure data files but do not run gnuplot\n"
          "  --pool          a case measured in several runs is shown with all their repetitions pooled\n"
          "                  (medians over interleaved rounds), not the latest run's alone; the rounds of\n"
          "                  one run (speedlab run --rounds) are pooled without it\n"
          "  Figures use the gnuplot scripts in $SPEEDLAB_PLOTS_DIR (default: an installed speedlab's own\n"
          "  share/speedlab/plots, else the source tree's plots/).\n"
          "  Exit status: 0 ok, 3 some input skipped (see the errors), 2 usage, 1 nothing read or an\n"
          "  output file not written (each is written whole or not at all).\n", f);
}

static int parse_formats(const char *s)
{
    int f = 0;
    char *copy = rep_strdup(s), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "md"))
            f |= REP_MD;
        else if (!strcmp(tok, "csv"))
            f |= REP_CSV;
        else if (!strcmp(tok, "tex"))
            f |= REP_TEX;
        else {
            fprintf(stderr, "speedlab report: unknown format \"%s\" in --format; expected md, csv or tex\n", tok);
            f = -1;
            break;
        }
    }
    free(copy);
    return f;
}

static int parse_args(int argc, char **argv, ropts *o)
{
    o->paths = calloc((size_t)argc, sizeof *o->paths);
    o->out = "report";
    o->formats = REP_MD | REP_CSV | REP_TEX;
    o->plots = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            o->out = argv[++i];
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            if ((o->formats = parse_formats(argv[++i])) <= 0)
                return 2;
        } else if (!strcmp(argv[i], "--no-plots")) {
            o->plots = 0;
        } else if (!strcmp(argv[i], "--pool")) {
            o->pool = 1;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "speedlab report: unknown option %s (or missing value)\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            o->paths[o->npaths++] = argv[i];
        }
    }
    if (o->npaths == 0) {
        fprintf(stderr, "speedlab report: no RESULTS_DIR given\n");
        usage(stderr);
        return 2;
    }
    return -1;
}

/* ---- writing tables ---------------------------------------------------------------------------- */

static void write_table_files(const rep_table *t, const char *dir, int formats)
{
    static const struct {
        int flag;
        const char *ext;
        void (*fn)(const rep_table *, FILE *);
    } fm[] = {{REP_MD, "md", rep_write_md}, {REP_CSV, "csv", rep_write_csv}, {REP_TEX, "tex", rep_write_tex}};
    for (size_t i = 0; i < 3; i++) {
        if (!(formats & fm[i].flag))
            continue;
        char *name = rep_path_name(t->id);
        char *p = rep_printf("%s/tables/%s.%s", dir, name, fm[i].ext);
        FILE *f = rep_out_open(p);
        if (f) {
            fm[i].fn(t, f);
            rep_out_close(f);
        }
        free(p);
        free(name);
    }
}

static void table_links(FILE *f, const rep_table *t, int formats)
{
    char *name = rep_path_name(t->id);
    fputs("Files:", f);
    if (formats & REP_MD)
        fprintf(f, " [md](tables/%s.md)", name);
    if (formats & REP_CSV)
        fprintf(f, " [csv](tables/%s.csv)", name);
    if (formats & REP_TEX)
        fprintf(f, " [tex](tables/%s.tex)", name);
    fputs("\n\n", f);
    free(name);
}

/* ---- headline for REPORT.md -------------------------------------------------------------------- */

/* The study's cases by status: ok, failed, not run (unavailable or skipped). */
static void count_cases(const rep_set *s, int env, const char *study, int *nok, int *nfail, int *nna)
{
    *nok = *nfail = *nna = 0;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || c->replaced || strcmp(c->study, study))
            continue;
        *nok += rep_is_ok(c);
        *nfail += !strcmp(c->status, "failed");
        *nna += rep_not_run(c);
    }
}

/* "- fastest at B=4096: **cuda**, median 10 ms, 32× the baseline `naive`": compared as the speedup
 * table compares (units.c), per sample or epoch where a reduced run stands beside full ones. */
static void fastest_line(FILE *f, const rep_set *s, int env, const char *study, long size)
{
    const char *vs[32];
    int nv = rep_variants(s, env, study, vs, 32);
    const rep_case *best = NULL, *base = NULL;
    double tbest = NAN;
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *c = rep_find(s, env, study, vs[vi], size);
        double tc = rep_cmp_time(s, env, study, c);
        if (isfinite(tc) && (!best || tc < tbest))
            best = c, tbest = tc;
        if (c && !strcmp(vs[vi], c->baseline))
            base = c;
    }
    if (!best)
        return;
    const char *unit = rep_unit_name(rep_size_unit(s, env, study, size));
    double tbase = rep_cmp_time(s, env, study, base);
    char t[64], u[64];
    rep_fmt_time(t, sizeof t, best->median);
    rep_fmt_time(u, sizeof u, tbest);
    fprintf(f, "- fastest at %s=%ld%s%s: **", best->size_name, best->size, unit ? ", per " : "", unit ? unit : "");
    rep_md_text(best->variant, f);
    fprintf(f, "**, median %s", t);
    if (unit)
        fprintf(f, " (%s per %s)", u, unit);
    if (isfinite(tbase) && isfinite(tbase / tbest) && base != best) {
        fprintf(f, ", %.3g× the baseline ", tbase / tbest);
        rep_md_code(base->variant, f);
        fputs(base->reduced && unit ? " (a reduced run)" : "", f);
    }
    fputs(best->reduced ? " (reduced run)\n" : "\n", f);
}

/* One line per study: its cases, the fastest variant at the largest size and its speedup over the
 * baseline, the framework line, the inversions. */
static void headline(FILE *f, const rep_set *s, int env, const char *study)
{
    long sizes[64];
    int ns = rep_sizes(s, env, study, sizes, 64), nok, nfail, nna;
    if (!ns)
        return;
    count_cases(s, env, study, &nok, &nfail, &nna);
    fprintf(f, "- cases: %d ok, %d failed, %d not run (unavailable or skipped)\n", nok, nfail, nna);
    int last = ns - 1; /* the largest size where a variant ran: a larger one may hold only skipped cases */
    while (last > 0 && !rep_cmp_ref(s, env, study, sizes[last]))
        last--;
    fastest_line(f, s, env, study, sizes[last]);
    rep_framework_line(f, s, env, study); /* only where framework baselines ran */
    char *inv[REP_MAX_INVERSIONS];
    int ni = rep_inversions(s, env, study, inv, REP_MAX_INVERSIONS);
    for (int i = 0; i < ni; i++) {
        fprintf(f, "- %s\n", inv[i]);
        free(inv[i]);
    }
}

static void bottleneck_line(FILE *f, const rep_table *t)
{
    if (t->nrows == 0)
        return;
    fputs("- top region by self time: ", f); /* a region name is anyone's text: escaped (escape.c) */
    rep_md_code(t->cells[0].text, f);
    fprintf(f, " (%s self, %s of the run) in *", t->cells[2].text ? t->cells[2].text : "?",
            t->cells[4].text ? t->cells[4].text : "?");
    rep_md_text(t->title, f);
    fputs("*\n", f);
}

/* ---- one study --------------------------------------------------------------------------------- */

/* Every table of a study, in page order: timing (the not-run table after the speedup table), bottlenecks,
 * the write-up's. */
typedef struct study_tables {
    rep_table *ts[MAXT];
    int n, first_bottleneck, nb, first_pub;
    const rep_table *not_run;
} study_tables;

static void collect_tables(const rep_set *s, int env, const char *study, study_tables *st)
{
    rep_table *(*const timing[])(const rep_set *, int, const char *) = {
        rep_tab_speedup, rep_tab_not_run, rep_tab_crossover, rep_tab_phases, rep_tab_summary, rep_tab_performance,
        rep_tab_training, rep_tab_batch, rep_tab_loading, rep_tab_overlap, rep_tab_precision, rep_tab_copies,
        rep_tab_thread_busy, rep_tab_algo_search, rep_tab_agreement, rep_tab_roofline, rep_tab_region_roofline,
        rep_tab_planner};
    st->not_run = NULL;
    st->n = 0;
    for (size_t i = 0; i < sizeof timing / sizeof *timing; i++) {
        rep_table *t = timing[i](s, env, study);
        if (t && timing[i] == rep_tab_not_run)
            st->not_run = t;
        if (t)
            st->ts[st->n++] = t;
    }
    st->first_bottleneck = st->n;
    st->nb = rep_tab_bottleneck(s, env, study, st->ts + st->n, MAXT / 2);
    st->nb += rep_tab_functions(s, env, study, st->ts + st->n + st->nb, MAXT / 4);
    st->n += st->nb;
    st->first_pub = st->n;
    st->n += rep_tab_published(study, st->ts + st->n, MAXT - st->n);
}

static void write_page(const rep_set *s, int env, const char *study, const char *dir, const ropts *o,
                       const study_tables *st, const rep_figure *figs, int nf)
{
    char *name = rep_path_name(study);
    char *page = rep_printf("%s/%s.md", dir, name);
    free(name);
    FILE *f = rep_out_open(page);
    if (!f) {
        free(page);
        return;
    }
    fprintf(f, "# %s on %s\n\n", study, s->envs[env].name);
    fputs("Times are per repetition (one kernel call, or one whole training run). "
          "Marks: † reduced run, ‡ extrapolated. [Back to the report](../REPORT.md)\n\n", f);
    for (int i = 0; i < st->n; i++) {
        if (i == st->first_pub)
            fputs("## The write-up's own figures (another machine)\n\n", f);
        else if (i == st->first_bottleneck && st->nb)
            fputs("## Bottlenecks\n\n", f);
        rep_write_md(st->ts[i], f);
        if (i < st->first_pub)
            table_links(f, st->ts[i], o->formats);
    }
    if (nf)
        fputs("## Figures\n\n", f);
    for (int i = 0; i < nf; i++) {
        if (figs[i].rendered)
            fprintf(f, "![%s](%s.png)\n\n*%s* ([pdf](%s.pdf), [svg](%s.svg), [data](%s.dat))\n\n",
                    figs[i].caption, figs[i].path, figs[i].caption, figs[i].path, figs[i].path, figs[i].path);
        else
            fprintf(f, "*%s*: not rendered; data in [%s.dat](%s.dat)\n\n", figs[i].caption, figs[i].path,
                    figs[i].path);
    }
    rep_out_close(f);
    free(page);
}

/* Which table sums a study up in REPORT.md, lower preferred, -1 none: for a training study seed 004's
 * Table I when its records carry the metrics, else its training table; for the others (a kernel study's
 * metrics table is not its summary), and a training study with neither, the speedup table. */
static int main_rank(const char *kind, int training)
{
    if (training && !strcmp(kind, "-performance"))
        return 0;
    if (training && !strcmp(kind, "-training"))
        return 1;
    return strcmp(kind, "-speedup") ? -1 : 2;
}

/* The study's section of REPORT.md: headline, crossover, top bottleneck, our main table and the
 * write-up's own numbers beside it. */
static void write_summary(FILE *summary, const rep_set *s, int env, const char *study, const study_tables *st)
{
    char *name = rep_path_name(study);
    fprintf(summary, "### [%s](%s/%s.md)\n\n", study, s->envs[env].slug, name);
    free(name);
    headline(summary, s, env, study);
    const rep_table *main_table = NULL;
    int training = rep_is_training(s, env, study), best = 3;
    for (int i = 0; i < st->first_bottleneck; i++) {
        const rep_table *t = st->ts[i];
        const char *kind = t->id + strlen(study);
        if (!strcmp(kind, "-crossover"))
            for (int r = 0; r < t->nrows; r++) {
                fputs("- crossover of ", summary);
                rep_md_code(t->cells[r * 4].text, summary);
                fputs(" against the best CPU variant: ", summary);
                rep_md_text(t->cells[r * 4 + 1].text, summary);
                fputc('\n', summary);
            }
        int rank = main_rank(kind, training);
        if (rank >= 0 && rank < best) {
            best = rank;
            main_table = t;
        }
    }
    if (st->nb)
        bottleneck_line(summary, st->ts[st->first_bottleneck]);
    fputc('\n', summary);
    if (main_table)
        rep_write_md(main_table, summary);
    if (st->not_run) /* once per study, as on its page */
        rep_write_md(st->not_run, summary);
    for (int i = st->first_pub; i < st->n; i++)
        rep_write_md(st->ts[i], summary);
}

static void study_page(const rep_set *s, int env, const char *study, const char *dir, const ropts *o,
                       FILE *summary)
{
    study_tables st;
    collect_tables(s, env, study, &st);
    rep_figure figs[MAXF];
    int nf = rep_figures(s, env, study, dir, o->plots, figs, MAXF);
    write_page(s, env, study, dir, o, &st, figs, nf);
    write_summary(summary, s, env, study, &st);
    for (int i = 0; i < st.n; i++) {
        write_table_files(st.ts[i], dir, o->formats);
        rep_table_free(st.ts[i]);
    }
}

/* The machine table's GPU ceilings row (calibrate_gpu.c): each figure measured, or why it was not; where
 * the calibration found no device, the reason. Nothing for calibrations that say nothing of a GPU. */
static void gpu_ceilings_row(FILE *f, const json_t *ceil)
{
    static const struct {
        const char *key, *label, *unit;
    } g[] = {{"triad_gbs", "triad", "GB/s"}, {"d2d_gbs", "device copy", "GB/s"},
             {"fma_gflops", "FP32 FMA", "GFLOP/s"}, {"cublas_sgemm_gflops", "cuBLAS sgemm", "GFLOP/s"},
             {"tc_fp16_gflops", "FP16 tensor cores", "GFLOP/s"}, {"tc_bf16_gflops", "BF16 tensor cores", "GFLOP/s"},
             {"h2d_pageable_gbs", "H2D pageable", "GB/s"}, {"h2d_pinned_gbs", "H2D pinned", "GB/s"},
             {"d2h_pageable_gbs", "D2H pageable", "GB/s"}, {"d2h_pinned_gbs", "D2H pinned", "GB/s"}};
    const json_t *gpu = json_object_get(ceil, "gpu"), *why = json_object_get(ceil, "gpu_missing");
    if (!gpu) {
        if (json_is_string(why))
            fprintf(f, "| GPU ceilings | none: %s |\n", json_string_value(why));
        return;
    }
    const json_t *name = json_object_get(gpu, "name"), *missing = json_object_get(gpu, "missing");
    fprintf(f, "| GPU ceilings (%s) |", json_is_string(name) ? json_string_value(name) : "unnamed device");
    const char *sep = " ";
    for (size_t i = 0; i < sizeof g / sizeof *g; i++) {
        double v = rep_jnum(gpu, g[i].key);
        const json_t *w = json_object_get(missing, g[i].key);
        if (isfinite(v)) /* whole units from 10 000 up: 60000 GFLOP/s, not 6e+04 */
            fprintf(f, v >= 1e4 ? "%s%s %.0f %s" : "%s%s %.4g %s", sep, g[i].label, v, g[i].unit);
        else if (json_is_string(w))
            fprintf(f, "%s%s not measured (%s)", sep, g[i].label, json_string_value(w));
        else
            continue;
        sep = ", ";
    }
    fputs(" |\n", f);
}

/* ---- the environment of a machine ---------------------------------------------------------------- */

/* What `speedlab run` warned of as it started (env.quiet, docs/quiet-machine.md); nothing for records
 * made before it was read. */
static void quiet_row(FILE *f, const json_t *quiet)
{
    json_t *w = json_object_get(quiet, "warnings");
    if (!json_is_array(w))
        return;
    fputs("| noisy-machine warnings | ", f);
    if (json_array_size(w) == 0)
        fputs("none (docs/quiet-machine.md)", f);
    for (size_t i = 0; i < json_array_size(w); i++)
        fprintf(f, "%s%s", i ? "; " : "", json_is_string(json_array_get(w, i)) ?
                json_string_value(json_array_get(w, i)) : "?");
    fputs(" |\n", f);
}

static void env_section(FILE *f, const rep_set *s, int env)
{
    /* The ISA fields (after cflags) are shown only when present: records written before they existed
     * do not say which level ran, and "absent" there would read as "none". So are oneDNN's (the library
     * and the ISA its JIT chose), which builds without it do not write. */
    static const struct {
        const char *key;
        int optional;
    } keys[] = {{"host", 0}, {"cpu_model", 0}, {"cpu_cores", 0}, {"os", 0}, {"compiler", 0}, {"cflags", 0},
                {"isa", 1}, {"isa_mode", 1}, {"isa_march", 1}, {"isa_forced", 1}, {"cpu_flags", 1},
                {"commit", 1}, {"commit_dirty", 1}, {"commit_note", 1},
                {"git_describe", 0}, {"speedlab_version", 0}, {"threads", 0}, {"papi_version", 0}, {"blas", 0},
                {"onednn", 1}, {"onednn_isa", 1}, {"cuda_device", 0}, {"cuda_driver", 0}, {"cuda_runtime", 0}};
    const rep_env *e = &s->envs[env];
    fprintf(f, "## Machine: %s (%s)\n\n| environment | value |\n| --- | --- |\n", e->name, e->cpu_model);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_t *v = json_object_get(e->env, keys[i].key);
        if (json_is_string(v))
            fprintf(f, "| %s | %s |\n", keys[i].key, json_string_value(v));
        else if (json_is_integer(v))
            fprintf(f, "| %s | %lld |\n", keys[i].key, (long long)json_integer_value(v));
        else if (json_is_boolean(v))
            fprintf(f, "| %s | %s |\n", keys[i].key, json_is_true(v) ? "yes" : "no");
        else if (!keys[i].optional)
            fprintf(f, "| %s | absent |\n", keys[i].key);
    }
    quiet_row(f, json_object_get(e->env, "quiet"));
    if (e->ceilings) {
        fprintf(f, "| ceilings (calibration %s) | FMA %.4g GFLOP/s (1 thread %.4g), triad %.4g GB/s (1 thread %.4g)",
                e->calib_time, rep_jnum(e->ceilings, "fma_gflops"), rep_jnum(e->ceilings, "fma_gflops_1t"),
                rep_jnum(e->ceilings, "triad_gbs"), rep_jnum(e->ceilings, "triad_gbs_1t"));
        if (isfinite(rep_jnum(e->ceilings, "sgemm_gflops")))
            fprintf(f, ", sgemm %.4g GFLOP/s", rep_jnum(e->ceilings, "sgemm_gflops"));
        fputs(" |\n", f);
        gpu_ceilings_row(f, e->ceilings);
    } else {
        fputs("| ceilings | no calibration record (run `speedlab calibrate`) |\n", f);
    }
    /* the runs of this machine, and any case that failed */
    fputs("\nRuns:", f);
    for (int i = 0; i < e->nruns; i++)
        fputc(' ', f), rep_md_code(e->runs[i], f);
    if (e->nruns == 0)
        fputs(" none with case records (calibration only)", f);
    if (e->nreplaced)
        fprintf(f, " (%d older records of cases measured again later are not shown)", e->nreplaced);
    if (e->npooled_cases)
        fprintf(f, "\n\n**Pooled**: %d case%s show%s the repetitions of %d records together (rounds of a run, "
                "or `--pool`): medians and spreads over all of them", e->npooled_cases,
                e->npooled_cases == 1 ? "" : "s", e->npooled_cases == 1 ? "s" : "", e->npooled_records);
    if (e->npool_failed)
        fprintf(f, "\n\n**%d case%s failed in one of %s pooled runs** and %s shown failed (the latest failure): "
                "a time measured beside a failed check is not shown", e->npool_failed,
                e->npool_failed == 1 ? "" : "s", e->npool_failed == 1 ? "its" : "their",
                e->npool_failed == 1 ? "is" : "are");
    if (e->nthreads_replaced)
        fprintf(f, "\n\n**%d of them ran at another thread count** (%s): a report shows one record per case, "
                "so report runs at different `--threads` from separate results directories to see both",
                e->nthreads_replaced, e->threads_example);
    fputs("\n\n", f);
    int header = 0;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || c->replaced || strcmp(c->status, "failed"))
            continue;
        if (!header++)
            fputs("Failed cases (no time is reported for them):\n\n", f);
        fprintf(f, "- %s / %s / %s=%ld: %s (%s:%d)\n", c->study, c->variant, c->size_name, c->size,
                c->error ? c->error : "no error text", c->file, c->line);
    }
    if (header)
        fputc('\n', f);
}

/* The machines and their studies, linked, so that a reader sees the whole report at once. */
static void contents(FILE *f, const rep_set *s)
{
    fputs("Contents:\n\n", f);
    for (int e = 0; e < s->nenvs; e++) {
        fprintf(f, "- machine **%s** (%s):", s->envs[e].name, s->envs[e].cpu_model);
        const char *studies[MAXST];
        int nst = rep_studies(s, e, studies, MAXST);
        for (int i = 0; i < nst; i++) {
            char *name = rep_path_name(studies[i]);
            fprintf(f, "%s [%s](%s/%s.md)", i ? "," : "", studies[i], s->envs[e].slug, name);
            free(name);
        }
        fputs(nst ? "\n" : " calibration only\n", f);
    }
    fputc('\n', f);
}

/* A CPU measured at two ISA levels (levels.c): the one table that sets two machines side by side, in
 * REPORT.md and as OUT/tables/isa-levels.*; nothing when no CPU has two levels. */
static void levels_section(FILE *f, const rep_set *s, const ropts *o)
{
    rep_table *t = rep_tab_isa_levels(s);
    if (!t)
        return;
    fputs("## ISA levels\n\n", f);
    rep_write_md(t, f);
    char *tdir = rep_printf("%s/tables", o->out);
    if (rep_mkdirs(tdir) != 0)
        fprintf(stderr, "speedlab report: cannot create %s: %s\n", tdir, strerror(errno));
    write_table_files(t, o->out, o->formats);
    table_links(f, t, o->formats);
    free(tdir);
    rep_table_free(t);
}

/* REPORT.md, and below it every machine's pages, tables and figures. */
/* Returns the traces refused or not readable (an input skipped: exit 3). */
static int write_report(FILE *f, const rep_set *s, const ropts *o, const char *errbuf)
{
    fputs("# speedlab report\n\nRead:", f);
    for (int i = 0; i < o->npaths; i++)
        fputc(' ', f), rep_md_code(o->paths[i], f); /* paths as given: any bytes */
    int nrecords = s->ncases; /* every case record read: the kept ones and those a later one replaced */
    for (int e = 0; e < s->nenvs; e++)
        nrecords += s->envs[e].nreplaced;
    fprintf(f, "\n\n%d results files, %d case records, %d machines.", s->nfiles, nrecords, s->nenvs);
    if (s->nerrors)
        fprintf(f, " **%d records or files were skipped** because of bad input:\n\n```\n%s```\n", s->nerrors,
                errbuf);
    fputs("\n\n", f);
    rep_findings_section(f, s);
    if (!o->plots)
        fputs("Figures: data files only (--no-plots).\n\n", f);
    else if (!rep_gnuplot())
        fputs("Figures: gnuplot not found on PATH; data files written, no images. "
              "Install gnuplot and re-run, or run the scripts in plots/ by hand.\n\n", f);
    fputs("Results from different machines (host, CPU model and ISA level) are reported separately, "
          "never averaged together. "
          "Each study page has the speedup, crossover, summary, roofline and bottleneck tables, the "
          "figures, and the write-up's own numbers (from another machine) for comparison.\n\n", f);
    contents(f, s);
    rep_missing_section(f, s, o->npaths, o->paths); /* a plan's cases without a record */
    fputs("How to read the tables: times are per repetition (one kernel call, or one whole training "
          "run), the median over the repetitions with its interquartile range (IQR) as the spread; "
          "`× naive` is the baseline's median divided by the row's (above 1 = faster), `× best CPU` "
          "the same against the fastest CPU variant at that size; the crossover is the size where a "
          "GPU variant becomes faster than the best CPU variant; the roofline compares GFLOP/s with "
          "what the calibrated peak and bandwidth allow at the case's arithmetic intensity; the "
          "bottleneck tables list the profiled regions by self time. † marks a reduced run (less "
          "work than the study defines), ‡ an extrapolated one: beside full runs they are compared per "
          "sample or per epoch (the speedup table's column says which), or left out of the × columns "
          "where the records have neither; failed cases show their error and no time; the variants not "
          "run are listed once per study, with what to install or pass.\n\n", f);
    levels_section(f, s, o);
    for (int e = 0; e < s->nenvs; e++) {
        env_section(f, s, e);
        char *dir = rep_printf("%s/%s", o->out, s->envs[e].slug);
        char *tdir = rep_printf("%s/tables", dir);
        if (rep_mkdirs(tdir) != 0) /* each file below says so too, and is counted */
            fprintf(stderr, "speedlab report: cannot create %s: %s\n", tdir, strerror(errno));
        const char *studies[MAXST];
        int nst = rep_studies(s, e, studies, MAXST);
        for (int i = 0; i < nst; i++)
            study_page(s, e, studies[i], dir, o, f);
        rep_data_path_section(f, s, e);
        free(tdir);
        free(dir);
    }
    return rep_timelines(f, o->out, o->npaths, o->paths, o->plots);
}

int rep_report_main(int argc, char **argv)
{
    ropts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) {
        free(o.paths);
        return rc;
    }
    rep_out_cleanup_on_signals();
    rep_out_root(o.out, 1); /* every file below it stays below it */
    int failed_before = rep_out_failures(); /* the count is the process's: a test calls this many times */
    char *errbuf = NULL;
    size_t errlen = 0;
    FILE *err = open_memstream(&errbuf, &errlen);
    rep_set s = {.pool = o.pool};
    rep_load(&s, o.npaths, o.paths, err);
    fclose(err);
    if (errlen)
        fputs(errbuf, stderr);

    int status = s.nerrors ? 3 : 0;
    char *rp = rep_printf("%s/REPORT.md", o.out);
    FILE *f = NULL;
    if (rep_mkdirs(o.out) != 0) {
        fprintf(stderr, "speedlab report: cannot create %s: %s\n", o.out, strerror(errno));
        status = 1;
    } else if ((f = rep_out_open(rp))) {
        if (write_report(f, &s, &o, errbuf) && !status)
            status = 3; /* a trace that is not a regular file of the run, or not JSON, was skipped */
        rep_out_close(f);
    }
    int failed = rep_out_failures() - failed_before;
    if (failed) {
        /* A report with a page missing or cut short must not pass for a whole one. */
        fprintf(stderr, "speedlab report: %d output files could not be written; the report in %s is "
                        "incomplete\n", failed, o.out);
        status = 1;
    } else if (s.ncases == 0 && s.nenvs == 0) {
        fprintf(stderr, "speedlab report: no results records found\n");
        status = 1;
    } else if (f) {
        fprintf(stderr, "speedlab report: wrote %s\n", rp);
        if (o.plots && rep_gnuplot()) /* which scripts drew the figures: a restyled copy, or not */
            fprintf(stderr, "speedlab report: figures drawn with the gnuplot scripts in %s\n", rep_plots_dir());
    }
    free(rp);
    free(errbuf);
    rep_set_free(&s);
    free(o.paths);
    rep_out_root(NULL, 1);
    return status;
}
