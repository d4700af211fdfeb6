/* reports/batch.c: the batch-size trade-off (the data path's part 3) for any training study run at several
 * sizes whose swept size is the batch or anything else: throughput (samples/s) and the final test
 * accuracy after the same number of epochs, against the size, per variant. The table is here; the
 * figure (figures.c, plots/batch.gp) reads the same numbers through rep_batch_point.
 *
 * Only a study whose records carry both a throughput and an accuracy qualifies (mlp, cnn): galaxy's
 * CG iterations have neither, and a study run at one size has no trade-off to show, so every other
 * report keeps its tables. */
#include <math.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64

/* A metric of the record, else NAN. */
static double metric(const rep_case *c, const char *name)
{
    return rep_jnum(json_object_get(c->rec, "metrics"), name);
}

/* The mean of a per-epoch series, or its last value (last = 1); NAN when the record has none. */
static double series_of(const rep_case *c, const char *name, int last)
{
    json_t *a = json_object_get(json_object_get(c->rec, "series"), name);
    size_t n = json_array_size(a);
    if (!n)
        return NAN;
    if (last)
        return json_number_value(json_array_get(a, n - 1));
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += json_number_value(json_array_get(a, i));
    return sum / (double)n;
}

/* The study's own summary when it records one (cnn: the mean over repetitions), else the last
 * repetition's series, so that mlp (series only) and cnn read alike. */
static double metric_or_series(const rep_case *c, const char *m, const char *series, int last)
{
    double v = metric(c, m);
    return isfinite(v) ? v : series_of(c, series, last);
}

int rep_batch_point(const rep_case *c, rep_batch *p)
{
    if (!rep_is_ok(c))
        return 0;
    p->samples_per_s = metric_or_series(c, "samples_per_s_mean", "samples_per_s", 0);
    p->epoch_s = metric_or_series(c, "epoch_s_mean", "epoch_s", 0);
    p->test_acc = metric_or_series(c, "test_acc", "test_acc", 1);
    json_t *ep = json_object_get(json_object_get(c->rec, "series"), "test_acc");
    p->epochs = metric(c, "epochs");
    if (!isfinite(p->epochs))
        p->epochs = json_array_size(ep) ? (double)json_array_size(ep) : NAN;
    return isfinite(p->samples_per_s) && isfinite(p->test_acc);
}

/* The variant's sweep: the param set (rep_case.pkey) of its cases at the most sizes, unavailable ones not
 * counted, when that is at least two; else NULL. A main run beside a sweep (mlp at batch 64 for 20 epochs,
 * the sweep's omp at 16-1024 for 2) is a set of one size: a sweep compares one number of epochs. The
 * first MAXSETS sets are counted, so that any number of records is read in linear time. */
const char *rep_batch_set(const rep_set *s, int env, const char *study, const char *variant)
{
    enum { MAXSETS = 16 };
    const char *set[MAXSETS];
    int count[MAXSETS], nsets = 0, best = -1;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || c->replaced || strcmp(c->study, study) || strcmp(c->variant, variant) ||
            rep_not_run(c))
            continue;
        int k = 0;
        while (k < nsets && strcmp(set[k], c->pkey))
            k++;
        if (k == nsets && nsets < MAXSETS)
            set[nsets] = c->pkey, count[nsets++] = 0;
        if (k < nsets && ++count[k] >= 2 && (best < 0 || count[k] > count[best]))
            best = k;
    }
    return best < 0 ? NULL : set[best];
}

const rep_case *rep_batch_case(const rep_set *s, int env, const char *study, const char *variant, long size,
                               const char *set)
{
    for (int i = 0; set && i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !c->replaced && c->size == size && !strcmp(c->study, study) &&
            !strcmp(c->variant, variant) && !strcmp(c->pkey, set) && !rep_not_run(c))
            return c;
    }
    return NULL;
}

int rep_batch_sweep(const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    for (int vi = 0; vi < nv; vi++) {
        const char *set = rep_batch_set(s, env, study, vs[vi]);
        for (int si = 0; set && si < ns; si++) {
            rep_batch p;
            if (rep_batch_point(rep_batch_case(s, env, study, vs[vi], sizes[si], set), &p))
                return 1;
        }
    }
    return 0;
}

/* The variant's best final accuracy and its throughput at its smallest size, over its ok cases. */
static void variant_refs(const rep_set *s, int env, const char *study, const char *v, const char *set,
                         const long *sizes, int ns, double *best_acc, double *first_sps)
{
    *best_acc = NAN, *first_sps = NAN;
    for (int si = 0; si < ns; si++) {
        rep_batch p;
        if (!rep_batch_point(rep_batch_case(s, env, study, v, sizes[si], set), &p))
            continue;
        if (!isfinite(*first_sps))
            *first_sps = p.samples_per_s;
        if (!(p.test_acc <= *best_acc))
            *best_acc = p.test_acc;
    }
}

/* One row; group: the variant's first (a rule above it, its name shown). */
static void batch_row(rep_table *t, const rep_case *c, double best_acc, double first_sps, int group)
{
    int r = rep_table_row(t, group);
    rep_row_status(t, r, c->status);
    rep_cell_text(t, r, 0, "%s", c->variant);
    rep_cell_num(t, r, 1, (double)c->size, "%ld", c->size);
    rep_batch p;
    if (!rep_batch_point(c, &p)) {
        rep_cell_text(t, r, 3, "%s%s%s", c->status, c->error ? ": " : "", c->error ? c->error : "—");
        return;
    }
    if (isfinite(p.epochs))
        rep_cell_num(t, r, 2, p.epochs, "%.0f", p.epochs);
    rep_cell_num(t, r, 3, p.samples_per_s, "%.0f%s", p.samples_per_s, rep_case_mark(t, c));
    rep_cell_num(t, r, 4, p.samples_per_s / first_sps, "%.2f×", p.samples_per_s / first_sps);
    if (isfinite(p.epoch_s)) {
        char e[64];
        rep_fmt_time(e, sizeof e, p.epoch_s);
        rep_cell_num(t, r, 5, p.epoch_s, "%s", e);
    } else
        rep_cell_text(t, r, 5, "—");
    rep_cell_num(t, r, 6, p.test_acc, "%.2f %%", 100 * p.test_acc);
    double d = 100 * (p.test_acc - best_acc);
    rep_cell_num(t, r, 7, d, "%.2f", d == 0 ? 0.0 : d); /* no "-0.00" for the best row */
}

rep_table *rep_tab_batch(const rep_set *s, int env, const char *study)
{
    if (!rep_batch_sweep(s, env, study))
        return NULL;
    const char *vs[MAXV], *sn = "size";
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    for (int i = 0; i < s->ncases; i++)
        if (s->cases[i].env == env && !strcmp(s->cases[i].study, study))
            sn = s->cases[i].size_name;
    const char *cols[] = {"variant", sn, "epochs", "samples/s", "× smallest", "epoch time",
                          "final test accuracy", "Δ accuracy (pp)"};
    const char *csv[] = {"variant", "size", "epochs", "samples_per_s", "samples_per_s_rel", "epoch_s",
                         "test_acc", "test_acc_minus_best_pp"};
    char title[256];
    snprintf(title, sizeof title, "%s: throughput and final test accuracy against %s", study, sn);
    rep_table *t = rep_table_new("", title, 8, cols, csv);
    for (int k = 2; k < 8; k++) /* numbers, also where a case failed: CSV leaves those cells empty */
        rep_col_flags(t, k, REP_COL_NUMERIC);
    free(t->id);
    t->id = rep_printf("%s-sweep", study);
    for (int vi = 0; vi < nv; vi++) {
        double best, first;
        const char *set = rep_batch_set(s, env, study, vs[vi]);
        variant_refs(s, env, study, vs[vi], set, sizes, ns, &best, &first);
        int group = 1;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_batch_case(s, env, study, vs[vi], sizes[si], set);
            if (!c)
                continue;
            batch_row(t, c, best, first, group);
            group = 0;
        }
    }
    rep_table_note(t, "samples/s: training samples per second, the mean over the epochs (the study's "
                      "samples_per_s_mean where it records one, else the last repetition's series); × smallest: "
                      "against the variant's smallest %s; final test accuracy: after the last epoch, the same "
                      "epochs at every %s and the learning rate unchanged (no scaling rule); Δ accuracy: "
                      "minus the variant's best final accuracy, in percentage points.",
                   sn, sn);
    return t;
}
