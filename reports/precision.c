/* reports/precision.c: reduced precision (the data path's part 4) for any study whose records carry the
 * metric storage_bits (the precision study): per variant its storage type, epoch time, speed against
 * the baseline (fp32), test accuracy after the same epochs and its difference to the baseline's, and
 * the check's step error; the data of its figure (plots/precision.gp); and the data path section's
 * sentence (pipeline.c's parts[]). GPU rows are in the table when they ran; the sentence compares the
 * CPU rows, which the GPU's would not be comparable with. */
#include <math.h>
#include <string.h>

#include "rep.h"

#define MAXV 32

static double metric(const rep_case *c, const char *name)
{
    return rep_jnum(json_object_get(c->rec, "metrics"), name);
}

static int precision_case(const rep_case *c)
{
    return rep_is_ok(c) && isfinite(metric(c, "storage_bits")) && isfinite(metric(c, "epoch_s_mean")) &&
           isfinite(metric(c, "test_acc"));
}

int rep_is_precision(const rep_set *s, int env, const char *study)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !c->replaced && !strcmp(c->study, study) && precision_case(c))
            return 1;
    }
    return 0;
}

/* The storage type the record names in its note "storage: NAME", else "N-bit" from storage_bits. */
static void storage_of(const rep_case *c, char *buf, size_t n)
{
    json_t *notes = json_object_get(c->rec, "notes");
    for (size_t i = 0; i < json_array_size(notes); i++) {
        const char *t = json_string_value(json_array_get(notes, i));
        if (t && !strncmp(t, "storage: ", 9)) {
            snprintf(buf, n, "%s", t + 9);
            return;
        }
    }
    snprintf(buf, n, "%.0f-bit", metric(c, "storage_bits"));
}

/* The text of c's note "PREFIX...", after the prefix, or NULL. */
static const char *note_after(const rep_case *c, const char *prefix)
{
    json_t *notes = json_object_get(c->rec, "notes");
    for (size_t i = 0; i < json_array_size(notes); i++) {
        const char *t = json_string_value(json_array_get(notes, i));
        if (t && !strncmp(t, prefix, strlen(prefix)))
            return t + strlen(prefix);
    }
    return NULL;
}

/* The study's current case of variant v (any size: the study has one; the first found). */
static const rep_case *find_variant(const rep_set *s, int env, const char *study, const char *v)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !c->replaced && !strcmp(c->study, study) && !strcmp(c->variant, v))
            return c;
    }
    return NULL;
}

/* What a row is compared with: a CPU row with the study's baseline (fp32); a GPU row with the GPU row it
 * builds on (cuda-fp32), or itself when it builds on none, never with a CPU row. NULL when that case has
 * no precision numbers. */
static const rep_case *base_of(const rep_set *s, int env, const rep_case *c)
{
    const char *ref = c->gpu ? c->builds_on : c->baseline;
    const rep_case *b = ref ? find_variant(s, env, c->study, ref) : c->gpu ? c : NULL;
    return precision_case(b) ? b : NULL;
}

static void precision_row(rep_table *t, const rep_set *s, int env, const rep_case *c)
{
    int r = rep_table_row(t, 1); /* one row per variant: every row shows its name */
    char st[64], tm[64], sd[64];
    rep_row_status(t, r, c->status);
    rep_cell_text(t, r, 0, "%s", c->variant);
    if (!precision_case(c)) {
        rep_cell_text(t, r, 2, "%s%s%s", c->status, c->error ? ": " : "", c->error ? c->error : "—");
        return;
    }
    storage_of(c, st, sizeof st);
    const char *path = note_after(c, "path: "); /* how the row computed, where the record says */
    if (path)
        rep_cell_text(t, r, 1, "%s: %s", st, path);
    else
        rep_cell_text(t, r, 1, "%s", st);
    double e = metric(c, "epoch_s_mean"), es = metric(c, "epoch_s_std"), acc = metric(c, "test_acc");
    rep_fmt_time(tm, sizeof tm, e);
    if (isfinite(es)) {
        rep_fmt_time(sd, sizeof sd, es);
        rep_cell_num(t, r, 2, e, "%s ± %s%s", tm, sd, rep_case_mark(t, c));
    } else
        rep_cell_num(t, r, 2, e, "%s%s", tm, rep_case_mark(t, c));
    const rep_case *b = base_of(s, env, c);
    if (b)
        rep_cell_num(t, r, 3, metric(b, "epoch_s_mean") / e, "%.2f×", metric(b, "epoch_s_mean") / e);
    else
        rep_cell_text(t, r, 3, "—");
    rep_cell_num(t, r, 4, metric(c, "epochs"), "%.0f", metric(c, "epochs"));
    rep_cell_num(t, r, 5, acc, "%.2f %%", 100 * acc);
    if (b) {
        double d = 100 * (acc - metric(b, "test_acc"));
        rep_cell_num(t, r, 6, d, "%+.2f", d == 0 ? 0.0 : d);
    } else
        rep_cell_text(t, r, 6, "—");
    double rel = rep_jnum(json_object_get(c->rec, "check"), "rel_err");
    if (isfinite(rel))
        rep_cell_num(t, r, 7, rel, "%.2g", rel);
    else
        rep_cell_text(t, r, 7, "—");
}

rep_table *rep_tab_precision(const rep_set *s, int env, const char *study)
{
    if (!rep_is_precision(s, env, study))
        return NULL;
    const char *vs[MAXV], *base = NULL;
    int nv = rep_variants(s, env, study, vs, MAXV);
    const char *cols[] = {"variant", "storage", "epoch time", "× baseline", "epochs", "final test accuracy",
                          "Δ accuracy (pp)", "step error"};
    const char *csv[] = {"variant", "storage", "epoch_s", "speedup_vs_baseline", "epochs", "test_acc",
                         "test_acc_minus_baseline_pp", "check_rel_err"};
    char title[256];
    snprintf(title, sizeof title, "%s: speed and accuracy by precision", study);
    rep_table *t = rep_table_new("", title, 8, cols, csv);
    for (int k = 2; k < 8; k++)
        rep_col_flags(t, k, REP_COL_NUMERIC);
    free(t->id);
    t->id = rep_printf("%s-precision", study);
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *c = find_variant(s, env, study, vs[vi]);
        if (!c || rep_not_run(c))
            continue;
        if (c->baseline)
            base = c->baseline;
        precision_row(t, s, env, c);
    }
    const char *offers = NULL;
    for (int vi = 0; vi < nv && !offers; vi++) {
        const rep_case *c = find_variant(s, env, study, vs[vi]);
        offers = c && !rep_not_run(c) && !c->gpu ? note_after(c, "cpu offers: ") : NULL;
    }
    if (offers)
        rep_table_note(t, "The CPU offered the 16-bit rows: %s (cpuid). After the storage, the path each row took: "
                          "the 16-bit rows choose theirs at run time from what the CPU offers.", offers);
    rep_table_note(t, "storage: the type the weights and activations are stored in (float32 master weights, "
                      "update and accumulation in every row); epoch time: the mean over the epochs and "
                      "repetitions (± the spread over repetitions); × baseline: %s's epoch time over the row's "
                      "(above 1: faster; a GPU row's against the GPU row it builds on); final test accuracy: "
                      "after the last epoch, the same epochs and batches for every row; Δ accuracy: minus "
                      "the same reference's (%s's for the CPU rows), in percentage points; step error: the "
                      "check's relative error of one SGD step against double precision (check.rel_err).",
                   base ? base : "the baseline", base ? base : "the baseline");
    return t;
}

int rep_precision_data(const rep_set *s, int env, const char *study, FILE *f)
{
    if (!rep_is_precision(s, env, study))
        return 0;
    const char *vs[MAXV];
    int nv = rep_variants(s, env, study, vs, MAXV), n = 0;
    fputs("# \"variant\" epoch_s epoch_s_std test_acc_percent \"storage\"\n", f);
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *c = find_variant(s, env, study, vs[vi]);
        if (!precision_case(c))
            continue;
        char st[64];
        storage_of(c, st, sizeof st);
        double es = metric(c, "epoch_s_std");
        fprintf(f, "\"%s\" %.9g %.9g %.9g \"%s\"\n", c->variant, metric(c, "epoch_s_mean"), isfinite(es) ? es : 0.0,
                100 * metric(c, "test_acc"), st);
        n++;
    }
    return n > 0;
}

/* The data path sentence: the fastest reduced-precision CPU row against the baseline, in time and in
 * accuracy, worded so that it holds whichever way the numbers went. */
void rep_precision_sentences(FILE *f, const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    int nv = rep_variants(s, env, study, vs, MAXV);
    const rep_case *best = NULL, *base = NULL;
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *c = find_variant(s, env, study, vs[vi]);
        if (!precision_case(c) || c->gpu)
            continue;
        if (c->baseline && !strcmp(c->variant, c->baseline))
            base = c;
        else if (metric(c, "storage_bits") < 32 &&
                 (!best || metric(c, "epoch_s_mean") < metric(best, "epoch_s_mean")))
            best = c;
    }
    if (!best || !base)
        return;
    char a[64], b[64], st[64];
    storage_of(best, st, sizeof st);
    rep_fmt_time(a, sizeof a, metric(best, "epoch_s_mean"));
    rep_fmt_time(b, sizeof b, metric(base, "epoch_s_mean"));
    double x = metric(base, "epoch_s_mean") / metric(best, "epoch_s_mean");
    double d = 100 * (metric(best, "test_acc") - metric(base, "test_acc"));
    fprintf(f, "- Reduced precision (%s): the fastest 16-bit row, %s (%s storage), took %s per epoch, %.2f× %s "
               "than %s (%s); its test accuracy after %.0f epoch%s was %.2f points %s %s's (%.2f %% against "
               "%.2f %%).\n",
            study, best->variant, st, a, x >= 1 ? x : 1 / x, x >= 1 ? "faster" : "slower", base->variant, b,
            metric(best, "epochs"), metric(best, "epochs") == 1 ? "" : "s", fabs(d), d >= 0 ? "above" : "below", base->variant,
            100 * metric(best, "test_acc"), 100 * metric(base, "test_acc"));
}
