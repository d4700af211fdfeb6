/* reports/speedup.c: the speedup table (seed 000's Tables 1-2): a block of rows per size, a row per
 * variant that ran (ok, or failed with its error; the variants not run are in the not-run table), its
 * median time per repetition and IQR, and the × columns against the baseline, the best CPU variant and,
 * where framework baselines ran, the best framework.
 *
 * The × columns compare what units.c says is comparable: the median time per repetition where every
 * case at the size did the same work; the time per sample (or per epoch) where a reduced or
 * extrapolated run stands beside full ones and every case records it, in a column of its own; else the
 * run that did other work has no × cells, with a note. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64

/* The table's columns: the optional per-unit and framework columns move the ones after them. */
typedef struct sp_cols {
    int unit, fw;             /* whether the time-per-unit and × best framework columns are there */
    int mixed;                /* sizes compared per sample and per epoch: the unit goes into each cell */
    int c_unit, c_base, c_cpu, c_fw, c_n, c_note, n;
} sp_cols;

static const char *study_field(const rep_set *s, int env, const char *study, int baseline)
{
    for (int i = 0; i < s->ncases; i++)
        if (s->cases[i].env == env && strcmp(s->cases[i].study, study) == 0)
            return baseline ? s->cases[i].baseline : s->cases[i].size_name;
    return baseline ? "" : "size";
}

static void layout(sp_cols *L, const rep_unit *units, int ns, int fw)
{
    int sample = 0, epoch = 0;
    for (int i = 0; i < ns; i++)
        sample |= units[i] == REP_UNIT_SAMPLE, epoch |= units[i] == REP_UNIT_EPOCH;
    L->unit = sample || epoch;
    L->mixed = sample && epoch;
    L->fw = fw;
    L->c_unit = 4;
    L->c_base = 4 + L->unit;
    L->c_cpu = L->c_base + 1;
    L->c_fw = L->c_cpu + 1;
    L->c_n = L->c_cpu + 1 + fw;
    L->c_note = L->c_n + 1;
    L->n = L->c_note + 1;
}

static rep_table *new_table(const rep_set *s, int env, const char *study, const sp_cols *L, rep_unit u)
{
    char title[256], col_base[64], col_unit[64], versions[256], col_fw[300];
    const char *base = study_field(s, env, study, 1);
    snprintf(title, sizeof title, "%s: median time per repetition and speedup", study);
    snprintf(col_base, sizeof col_base, "× %s", base);
    snprintf(col_unit, sizeof col_unit, "per %s", L->mixed ? "unit of work" : rep_unit_name(u) ? rep_unit_name(u) : "");
    const char *cols[10] = {study_field(s, env, study, 0), "variant", "median", "IQR"};
    const char *csv[10] = {"size", "variant", "median_s", "iqr_s"};
    if (L->unit)
        cols[L->c_unit] = col_unit, csv[L->c_unit] = "time_per_unit_s";
    cols[L->c_base] = col_base, csv[L->c_base] = "speedup_vs_baseline";
    cols[L->c_cpu] = "× best CPU", csv[L->c_cpu] = "speedup_vs_best_cpu";
    if (L->fw)
        cols[L->c_fw] = col_fw, csv[L->c_fw] = "speedup_vs_best_framework";
    /* a ratio against a framework depends on its version: the header names them */
    rep_framework_versions(versions, sizeof versions, s, env, study);
    snprintf(col_fw, sizeof col_fw, "× best framework%s%s%s", versions[0] ? " (" : "", versions,
             versions[0] ? ")" : "");
    cols[L->c_n] = "n", csv[L->c_n] = "reps";
    cols[L->c_note] = "note", csv[L->c_note] = "note";
    rep_table *t = rep_table_new("", title, L->n, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-speedup", study);
    return t;
}

/* A "× reference" cell: the reference's comparison time over the row's, or "—" when either has none. */
static void ratio_cell(rep_table *t, int r, int col, double ref, double row)
{
    if (isfinite(ref) && isfinite(row))
        rep_cell_num(t, r, col, ref / row, "%.3g×", ref / row);
    else
        rep_cell_text(t, r, col, "—");
}

/* What one size's rows are compared against (their comparison times, units.c). */
typedef struct sp_refs {
    rep_unit unit;
    double base, cpu, fw;
    const rep_case *best_cpu, *best_fw;
} sp_refs;

static void refs_at(sp_refs *R, const rep_set *s, int env, const char *study, long size, rep_unit u)
{
    const rep_case *b = rep_find(s, env, study, study_field(s, env, study, 1), size);
    R->unit = u;
    R->best_cpu = rep_best_c(s, env, study, size);
    R->best_fw = rep_best_framework(s, env, study, size);
    R->base = rep_cmp_time(s, env, study, b);
    R->cpu = rep_cmp_time(s, env, study, R->best_cpu);
    R->fw = rep_cmp_time(s, env, study, R->best_fw);
}

static void note_cell(rep_table *t, int r, const sp_cols *L, const rep_case *c, const sp_refs *R, double tc)
{
    const char *th = c->threads == 1 ? "" : "s";
    char note[512] = "", desc[160];
    if (!isfinite(tc))
        snprintf(note, sizeof note, "not compared: %s run, no time per sample or epoch",
                 c->reduced ? "reduced" : "extrapolated");
    else if (c == R->best_cpu)
        snprintf(note, sizeof note, "best CPU");
    else if (rep_case_external(c)) {
        rep_framework_desc(desc, sizeof desc, c);
        snprintf(note, sizeof note, "%sframework, %s%s%d thread%s", c == R->best_fw ? "best " : "", desc,
                 desc[0] ? ", " : "", c->threads, th);
    }
    const char *copies = json_string_value(json_object_get(c->rec, "copies")); /* a GPU row's timed copies */
    if (copies)
        snprintf(note + strlen(note), sizeof note - strlen(note), "%stimed copies: %s", note[0] ? "; " : "",
                 copies);
    json_t *nr = json_object_get(c->rec, "rounds");
    int rounds = json_is_integer(nr) ? (int)json_integer_value(nr) : 0;
    int short_run = rounds > 1 && c->pooled_rounds < rounds; /* a run stopped early, or a round set aside */
    if (short_run) /* of the latest record's run only: --pool may add other runs' records (pool.c) */
        snprintf(note + strlen(note), sizeof note - strlen(note), "%s%d of %d rounds", note[0] ? "; " : "",
                 c->pooled_rounds, rounds);
    if (c->pooled > (short_run ? c->pooled_rounds : 1)) /* n is then every record's repetitions together */
        snprintf(note + strlen(note), sizeof note - strlen(note), "%s%d records pooled", note[0] ? "; " : "",
                 c->pooled);
    if (note[0])
        rep_cell_text(t, r, L->c_note, "%s", note);
}

static void ok_row(rep_table *t, int r, const sp_cols *L, const rep_set *s, const rep_case *c, const sp_refs *R)
{
    char buf[64];
    const char *mark = rep_case_mark(t, c);
    rep_fmt_time(buf, sizeof buf, c->median);
    rep_cell_num(t, r, 2, c->median, "%s%s", buf, mark);
    rep_fmt_time(buf, sizeof buf, c->p75 - c->p25);
    rep_cell_num(t, r, 3, c->p75 - c->p25, "%s", buf);
    double tc = rep_cmp_time(s, c->env, c->study, c);
    if (L->unit && rep_unit_name(R->unit)) {
        rep_fmt_time(buf, sizeof buf, tc);
        rep_cell_num(t, r, L->c_unit, tc, "%s%s%s", buf, L->mixed ? "/" : "", L->mixed ? rep_unit_name(R->unit) : "");
    }
    ratio_cell(t, r, L->c_base, R->base, tc);
    ratio_cell(t, r, L->c_cpu, R->cpu, tc);
    if (L->fw)
        ratio_cell(t, r, L->c_fw, R->best_fw ? R->fw : NAN, tc);
    rep_cell_num(t, r, L->c_n, c->ntimes, "%d", c->ntimes);
    note_cell(t, r, L, c, R, tc);
}

static void size_block(rep_table *t, const sp_cols *L, const rep_set *s, int env, const char *study, long size,
                       rep_unit u)
{
    const char *vs[MAXV], *sn = study_field(s, env, study, 0);
    int nv = rep_variants(s, env, study, vs, MAXV), first = 1;
    sp_refs R;
    refs_at(&R, s, env, study, size, u);
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *c = rep_find(s, env, study, vs[vi], size);
        if (!c || rep_not_run(c))
            continue;
        int r = rep_table_row(t, first);
        first = 0;
        rep_row_status(t, r, c->status);
        rep_cell_num(t, r, 0, (double)c->size, "%s=%ld", sn, c->size);
        rep_cell_text(t, r, 1, "%s", c->variant);
        if (rep_is_ok(c)) {
            ok_row(t, r, L, s, c, &R);
            continue;
        }
        rep_cell_text(t, r, 2, "%s", c->status);
        rep_cell_text(t, r, L->c_note, "%s%s%s", c->status, c->error ? ": " : "", c->error ? c->error : "");
    }
}

/* Under the table: for each size compared per unit, which unit and why; for each size where a run that
 * did other work has no unit to be compared by, which runs are left out. */
static void unit_notes(rep_table *t, const rep_set *s, int env, const char *study, const long *sizes,
                       const rep_unit *units, int ns)
{
    const char *vs[MAXV], *sn = study_field(s, env, study, 0);
    int nv = rep_variants(s, env, study, vs, MAXV);
    for (int si = 0; si < ns; si++) {
        if (units[si] == REP_UNIT_SAMPLE || units[si] == REP_UNIT_EPOCH) {
            rep_table_note(t, "%s=%ld: a reduced (†) or extrapolated (‡) run did other work than a full run, so "
                           "the × columns there compare the time per %s (%s), not the time per repetition.",
                           sn, sizes[si], rep_unit_name(units[si]),
                           units[si] == REP_UNIT_SAMPLE ? "1 ÷ samples/s, the mean over the epochs"
                                                        : "the mean epoch, its rows the same in every run");
            continue;
        }
        if (units[si] != REP_UNIT_NONE)
            continue;
        char list[512] = "";
        for (int vi = 0; vi < nv; vi++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (rep_is_ok(c) && !isfinite(rep_cmp_time(s, env, study, c)))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s%s", list[0] ? ", " : "",
                         c->variant, c->reduced ? "†" : "‡");
        }
        rep_table_note(t, "%s=%ld: %s did other work than the full runs and records no time per sample or "
                       "epoch: left out of the × columns (a total time is never compared with a full run's).",
                       sn, sizes[si], list);
    }
}

rep_table *rep_tab_speedup(const rep_set *s, int env, const char *study)
{
    long sizes[MAXS];
    rep_unit units[MAXS], u = REP_UNIT_RUN;
    int ns = rep_sizes(s, env, study, sizes, MAXS);
    for (int si = 0; si < ns; si++) {
        units[si] = rep_size_unit(s, env, study, sizes[si]);
        u = rep_unit_name(units[si]) ? units[si] : u;
    }
    sp_cols L;
    layout(&L, units, ns, rep_has_frameworks(s, env, study));
    rep_table *t = new_table(s, env, study, &L, u);
    for (int si = 0; si < ns; si++)
        size_block(t, &L, s, env, study, sizes[si], units[si]);
    int per_run = 1;
    for (int si = 0; si < ns; si++)
        per_run &= !rep_unit_name(units[si]); /* NONE compares medians too, of the runs it compares */
    rep_table_note(t, "median and IQR (interquartile range) over the timed repetitions; × columns: %s "
                      "(above 1 = faster).", per_run ? "median of the reference ÷ median of the row"
                                                      : "the reference's time ÷ the row's");
    unit_notes(t, s, env, study, sizes, units, ns);
    if (L.fw)
        rep_table_note(t, "framework rows are baselines (docs/baselines.md) run by Python in the same run, "
                          "each in its fastest form at its fastest thread count, with its framework's version "
                          "(in the note; a ratio holds for that version); best CPU = the fastest C variant.");
    char *lines[REP_MAX_INVERSIONS];
    int n = rep_inversions(s, env, study, lines, REP_MAX_INVERSIONS);
    for (int i = 0; i < n; i++) {
        rep_table_note(t, "%s", lines[i]);
        free(lines[i]);
    }
    if (n)
        rep_table_note(t, "%s", rep_inversion_legend);
    return t;
}
