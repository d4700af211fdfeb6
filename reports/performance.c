/* reports/performance.c: seed 004's Table I ("performance summary") for any training study whose
 * records carry its metrics: per variant, a declared list of per-run metrics, each shown as mean ± std
 * where the record has the metric's `_std` (the study's spread over the timed repetitions).
 *
 * The columns are the write-up's, every one of them always, so the table keeps the write-up's shape: a
 * metric a variant lacks prints "—" (peak VRAM of a CPU variant). The table is made for a study whose
 * records carry the first column's metric, i.e. a study that summarises its epochs this way (cnn); a
 * study without it (mlp, galaxy) keeps only its training table. Each std also goes to a CSV-only column
 * beside its mean, so a spreadsheet gets both as numbers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64

typedef enum { SECONDS, RATE, FRACTION, MIB } unit;

/* The write-up's columns: header, the metric (also its CSV name), its std metric, unit, what it is (the
 * note under the table), and whether it carries a reduced run's † (the whole run's time and the test
 * accuracies: what fewer epochs or rows change, e.g. naive's one epoch on 20 000 rows; an epoch's time and
 * throughput stay comparable). */
static const struct pcol {
    const char *head, *metric, *std;
    unit unit;
    const char *what;
    int marked;
} pcols[] = {
    {"average epoch time", "epoch_s_mean", "epoch_s_std", SECONDS, "mean over the epochs of a run", 0},
    {"total training time", "train_time_s", "train_time_s_std", SECONDS, "one whole run", 1},
    {"average throughput (samples/s)", "samples_per_s_mean", "samples_per_s_std", RATE,
     "training samples per second, mean over the epochs", 0},
    {"final test accuracy", "test_acc", "test_acc_std", FRACTION, "after the last epoch", 1},
    {"best test accuracy", "test_acc_best", "test_acc_best_std", FRACTION, "the best epoch's", 1},
    {"average RAM", "avg_rss_bytes", "avg_rss_bytes_std", MIB, "resident memory sampled over the run", 0},
    {"peak VRAM", "peak_gpu_bytes", "peak_gpu_bytes_std", MIB, "device memory high-water mark (GPU variants)", 0},
};
#define NPCOLS (int)(sizeof pcols / sizeof *pcols)
#define FIRST 3 /* columns before the metrics: platform, size and reps (the last two CSV-only) */

static double metric(const rep_case *c, const char *name)
{
    return rep_jnum(json_object_get(c->rec, "metrics"), name);
}

/* The first case of the study whose record carries the table's first metric, or NULL: its presence
 * is the sign of a study that summarises its epochs as the write-up's Table I does. */
static const rep_case *carrier(const rep_set *s, int env, const char *study)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !c->replaced && !strcmp(c->study, study) && isfinite(metric(c, pcols[0].metric)))
            return c;
    }
    return NULL;
}

/* One number in the column's unit, without the unit where it follows the pair ("89.82 ± 0.04 %"). */
static void fmt_value(char *buf, size_t n, unit u, double v, double scale)
{
    if (u == SECONDS)
        rep_fmt_time(buf, n, v);
    else if (u == RATE)
        snprintf(buf, n, fabs(v) >= 100 ? "%.0f" : "%.3g", v);
    else if (u == FRACTION)
        snprintf(buf, n, "%.2f", v * scale);
    else
        snprintf(buf, n, "%.1f", v / (1024.0 * 1024.0));
}

/* "mean ± std unit", or "mean unit" when the record has no std (one repetition); CSV gets the mean in
 * the column and the std in the CSV-only column after it. mark: the case's †/‡, or "". */
static void value_cells(rep_table *t, int r, int col, const struct pcol *p, double m, double sd, const char *mark)
{
    static const char *const suffix[] = {[SECONDS] = "", [RATE] = "", [FRACTION] = " %", [MIB] = " MiB"};
    double scale = p->unit == FRACTION && m <= 1.0 ? 100 : 1; /* accuracies as fractions shown in % */
    char a[64], b[64] = "";
    fmt_value(a, sizeof a, p->unit, m, scale);
    if (isfinite(sd)) {
        fmt_value(b, sizeof b, p->unit, sd, scale);
        rep_cell_num(t, r, col + 1, sd, "%s", b);
    }
    rep_cell_num(t, r, col, m, "%s%s%s%s%s", a, b[0] ? " ± " : "", b, suffix[p->unit], mark);
}

static void case_row(rep_table *t, const rep_case *c, int several_sizes)
{
    int r = rep_table_row(t, 1);
    rep_row_status(t, r, c->status);
    if (several_sizes)
        rep_cell_text(t, r, 0, "%s (%s=%ld)", c->variant, c->size_name, c->size);
    else
        rep_cell_text(t, r, 0, "%s", c->variant);
    rep_cell_num(t, r, 1, (double)c->size, "%ld", c->size);
    rep_cell_num(t, r, 2, c->ntimes, "%d", c->ntimes);
    if (!rep_is_ok(c)) { /* no time, no metrics: the reason where the first number would be */
        rep_cell_text(t, r, FIRST, "%s%s%s", c->status, c->error ? ": " : "", c->error ? c->error : "");
        return;
    }
    const char *mark = rep_case_mark(t, c);
    for (int k = 0; k < NPCOLS; k++) {
        int col = FIRST + 2 * k;
        double m = metric(c, pcols[k].metric);
        if (!isfinite(m)) {
            rep_cell_text(t, r, col, "—");
            continue;
        }
        value_cells(t, r, col, &pcols[k], m, metric(c, pcols[k].std), pcols[k].marked ? mark : "");
    }
}

static rep_table *new_table(const char *study, const char *size_text)
{
    const char *cols[FIRST + 2 * NPCOLS] = {"platform", "size", "n"};
    const char *csv[FIRST + 2 * NPCOLS] = {"variant", "size", "reps"};
    for (int k = 0; k < NPCOLS; k++) {
        cols[FIRST + 2 * k] = pcols[k].head;
        csv[FIRST + 2 * k] = pcols[k].metric;
        cols[FIRST + 2 * k + 1] = "std";
        csv[FIRST + 2 * k + 1] = pcols[k].std;
    }
    char title[256];
    snprintf(title, sizeof title, "%s: performance summary%s, mean ± std over the repetitions (seed 004's Table I)",
             study, size_text);
    rep_table *t = rep_table_new("", title, FIRST + 2 * NPCOLS, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-performance", study);
    rep_col_flags(t, 1, REP_COL_CSV_ONLY);
    rep_col_flags(t, 2, REP_COL_CSV_ONLY);
    for (int k = 0; k < NPCOLS; k++) {
        rep_col_flags(t, FIRST + 2 * k, REP_COL_NUMERIC);
        rep_col_flags(t, FIRST + 2 * k + 1, REP_COL_NUMERIC | REP_COL_CSV_ONLY);
    }
    return t;
}

static void notes(rep_table *t, const rep_set *s, int env, const char *study)
{
    rep_table_note(t, "mean ± sample std over the timed repetitions: the study's metrics and their `_std` "
                      "(no ± where a variant ran one repetition); — = not recorded for that variant.");
    char what[1024] = "";
    for (int k = 0; k < NPCOLS; k++)
        snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s: %s", k ? "; " : "", pcols[k].head,
                 pcols[k].what);
    rep_table_note(t, "%s.", what);
    int rated = 0;
    for (int i = 0; i < s->ncases; i++)
        rated |= s->cases[i].env == env && !strcmp(s->cases[i].study, study) && isfinite(s->cases[i].gflops);
    if (rated)
        rep_table_note(t, "Each variant's GFLOP/s and its fraction of the calibrated peak: table %s-roofline.",
                       study);
}

rep_table *rep_tab_performance(const rep_set *s, int env, const char *study)
{
    const rep_case *any = carrier(s, env, study);
    if (!any)
        return NULL;
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    char size_text[96] = "";
    if (ns == 1) /* one size: named once in the title, as the write-up's batch is */
        snprintf(size_text, sizeof size_text, " at %s=%ld", any->size_name, sizes[0]);
    rep_table *t = new_table(study, size_text);
    for (int si = 0; si < ns; si++)
        for (int vi = 0; vi < nv; vi++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (c && !rep_not_run(c)) /* the variants not run are in the not-run table */
                case_row(t, c, ns > 1);
        }
    notes(t, s, env, study);
    return t;
}
