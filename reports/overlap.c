/* reports/overlap.c: the data path's part 2, overlap (the prefetch study, or any study whose records carry the
 * metrics wait_fraction and epoch_s_mean): a table of epoch time, the compute's wait per epoch and as a
 * fraction of the epoch, compute utilisation (1 - the fraction: MLPerf Storage's accelerator
 * utilisation) and the loader thread's busy fraction, by variant (prefetch depth) within each case:
 * the record's params other than the size (rep_case.pkey: model=mlp augment=none ...) and the size,
 * never mixed in one cell; the data of its figure (overlap.gp: epoch time and wait fraction against the
 * depth); and the data path section's sentences (pipeline.c's parts[]). */
#include <math.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXG 32

static int overlap_case(const rep_case *c)
{
    return c && rep_is_ok(c) && isfinite(rep_metric(c, "wait_fraction")) && isfinite(rep_metric(c, "epoch_s_mean"));
}

static int in_study(const rep_case *c, int env, const char *study)
{
    return c->env == env && !c->replaced && !strcmp(c->study, study);
}

int rep_is_overlap(const rep_set *s, int env, const char *study)
{
    return rep_study_has(s, env, study, overlap_case);
}

/* A case of the study: its params (pkey) and size, which every variant of it shares. */
typedef struct group {
    const char *pkey, *size_name;
    long size;
} group;

/* The study's groups, first-seen order. */
static int groups_of(const rep_set *s, int env, const char *study, group *g, int max)
{
    int n = 0;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (!in_study(c, env, study))
            continue;
        int k = 0;
        while (k < n && (strcmp(g[k].pkey, c->pkey) || g[k].size != c->size))
            k++;
        if (k == n && n < max)
            g[n++] = (group){c->pkey, c->size_name, c->size};
    }
    return n;
}

static const rep_case *find_in(const rep_set *s, int env, const char *study, const char *v, const group *g)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (in_study(c, env, study) && !strcmp(c->variant, v) && !strcmp(c->pkey, g->pkey) && c->size == g->size)
            return c;
    }
    return NULL;
}

/* "model=mlp augment=none, batch=64" */
static void group_name(char *buf, size_t n, const group *g)
{
    snprintf(buf, n, "%s%s%s=%ld", g->pkey, g->pkey[0] ? ", " : "", g->size_name ? g->size_name : "size", g->size);
}

/* A fraction shown as a percentage (the CSV keeps the fraction), or — when the record has none. */
static void pct_or_dash(rep_table *t, int r, int col, double v)
{
    if (isfinite(v))
        rep_cell_num(t, r, col, v, "%.1f %%", 100 * v);
    else
        rep_cell_text(t, r, col, "—");
}

/* A time cell, or — when the record has no such metric. */
static void time_or_dash(rep_table *t, int r, int col, double v, const char *mark)
{
    char tm[64];
    rep_fmt_time(tm, sizeof tm, v);
    if (isfinite(v))
        rep_cell_num(t, r, col, v, "%s%s", tm, mark);
    else
        rep_cell_text(t, r, col, "—");
}

/* One variant's row of a group: base is the group's baseline case (may be NULL). */
static void overlap_row(rep_table *t, const rep_case *c, const rep_case *base, const group *g, int first)
{
    int r = rep_table_row(t, first);
    char name[256];
    group_name(name, sizeof name, g);
    rep_row_status(t, r, c->status);
    rep_cell_text(t, r, 0, "%s", name);
    rep_cell_text(t, r, 1, "%s", c->variant);
    if (!overlap_case(c)) {
        rep_cell_text(t, r, 3, "%s%s%s", c->status, c->error ? ": " : "", c->error ? c->error : "—");
        return;
    }
    double e = rep_metric(c, "epoch_s_mean"), wf = rep_metric(c, "wait_fraction");
    rep_cell_num_or_dash(t, r, 2, rep_metric(c, "depth"), "%.0f");
    time_or_dash(t, r, 3, e, rep_case_mark(t, c));
    time_or_dash(t, r, 4, rep_metric(c, "wait_s_per_epoch"), "");
    time_or_dash(t, r, 5, rep_metric(c, "compute_s_per_epoch"), "");
    pct_or_dash(t, r, 6, wf);
    pct_or_dash(t, r, 7, rep_metric(c, "compute_utilisation"));
    pct_or_dash(t, r, 8, rep_metric(c, "loader_busy_fraction"));
    rep_cell_num_or_dash(t, r, 9, overlap_case(base) ? rep_metric(base, "epoch_s_mean") / e : NAN, "%.2f×");
}

rep_table *rep_tab_overlap(const rep_set *s, int env, const char *study)
{
    if (!rep_is_overlap(s, env, study))
        return NULL;
    const char *vs[MAXV], *base = NULL;
    group g[MAXG];
    int nv = rep_variants(s, env, study, vs, MAXV), ng = groups_of(s, env, study, g, MAXG);
    const char *cols[] = {"case", "variant", "depth", "epoch time", "wait per epoch", "compute per epoch",
                          "wait fraction", "compute utilisation", "loader busy", "× baseline"};
    const char *csv[] = {"case", "variant", "depth", "epoch_s_mean", "wait_s_per_epoch", "compute_s_per_epoch",
                         "wait_fraction", "compute_utilisation", "loader_busy_fraction", "speedup_vs_baseline"};
    char title[256];
    snprintf(title, sizeof title, "%s: epoch time and the compute's wait for data by prefetch depth", study);
    rep_table *t = rep_table_new("", title, 10, cols, csv);
    for (int k = 2; k < 10; k++)
        rep_col_flags(t, k, REP_COL_NUMERIC);
    free(t->id);
    t->id = rep_printf("%s-overlap", study);
    for (int gi = 0; gi < ng; gi++) {
        int first = 1;
        for (int vi = 0; vi < nv; vi++) {
            const rep_case *c = find_in(s, env, study, vs[vi], &g[gi]);
            if (!c || rep_not_run(c))
                continue;
            base = c->baseline ? c->baseline : base;
            overlap_row(t, c, c->baseline ? find_in(s, env, study, c->baseline, &g[gi]) : NULL, &g[gi], first);
            first = 0;
        }
    }
    rep_table_note(t, "depth: batches the loader thread may prepare ahead (0: none, the training thread makes "
                      "each batch itself); epoch time: the training steps of an epoch, mean over the "
                      "repetitions (metric epoch_s_mean); wait: the time the training thread waited for its "
                      "batch (or made it, at depth 0), summed per epoch, and as a fraction of the epoch; compute "
                      "per epoch: the epoch less the wait (the steps themselves: where a loader thread that "
                      "takes a core from the compute threads shows); compute "
                      "utilisation: 1 - the wait fraction (MLPerf Storage's accelerator utilisation); loader "
                      "busy: the loader thread's time preparing batches over the epochs' time; × baseline: "
                      "%s's epoch time over the row's, in the same case (params and size).",
                   base ? base : "the baseline");
    return t;
}

int rep_overlap_data(const rep_set *s, int env, const char *study, FILE *f)
{
    if (!rep_is_overlap(s, env, study))
        return 0;
    const char *vs[MAXV];
    group g[MAXG];
    int nv = rep_variants(s, env, study, vs, MAXV), ng = groups_of(s, env, study, g, MAXG), blocks = 0;
    fputs("# blocks per case (params, size): depth epoch_s_mean wait_fraction \"variant\"\n", f);
    for (int gi = 0; gi < ng; gi++) {
        int first = 1;
        for (int vi = 0; vi < nv; vi++) {
            const rep_case *c = find_in(s, env, study, vs[vi], &g[gi]);
            if (!overlap_case(c) || !isfinite(rep_metric(c, "depth")))
                continue;
            if (first) {
                char name[256];
                group_name(name, sizeof name, &g[gi]);
                fprintf(f, "%s\"%s\"\n", blocks++ ? "\n\n" : "", name);
                first = 0;
            }
            fprintf(f, "%.9g %.9g %.9g \"%s\"\n", rep_metric(c, "depth"), rep_metric(c, "epoch_s_mean"),
                    rep_metric(c, "wait_fraction"), c->variant);
        }
    }
    return blocks > 0;
}

/* "; the steps themselves took 180 ms per epoch with sync and 190 ms with queue2", when both say. */
static void compute_clause(FILE *f, const rep_case *base, const rep_case *best)
{
    double a = rep_metric(base, "compute_s_per_epoch"), b = rep_metric(best, "compute_s_per_epoch");
    if (!isfinite(a) || !isfinite(b))
        return;
    char ta[64], tb[64];
    rep_fmt_time(ta, sizeof ta, a);
    rep_fmt_time(tb, sizeof tb, b);
    fprintf(f, "; the steps themselves took %s per epoch with %s and %s with %s", ta, base->variant, tb, best->variant);
}

/* One sentence per case: the fastest variant against the baseline, and the wait fractions of both;
 * worded to hold whichever way the numbers went. */
void rep_overlap_sentences(FILE *f, const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    group g[MAXG];
    int nv = rep_variants(s, env, study, vs, MAXV), ng = groups_of(s, env, study, g, MAXG);
    for (int gi = 0; gi < ng; gi++) {
        const rep_case *best = NULL, *base = NULL;
        for (int vi = 0; vi < nv; vi++) {
            const rep_case *c = find_in(s, env, study, vs[vi], &g[gi]);
            if (!overlap_case(c))
                continue;
            if (c->baseline && !strcmp(c->variant, c->baseline))
                base = c;
            else if (!best || rep_metric(c, "epoch_s_mean") < rep_metric(best, "epoch_s_mean"))
                best = c;
        }
        if (!best)
            continue;
        char name[256], a[64], b[64];
        group_name(name, sizeof name, &g[gi]);
        rep_fmt_time(a, sizeof a, rep_metric(best, "epoch_s_mean"));
        fprintf(f, "- Overlap (%s, %s): %s's epoch took %s", study, name, best->variant, a);
        if (base) {
            rep_fmt_time(b, sizeof b, rep_metric(base, "epoch_s_mean"));
            double x = rep_metric(base, "epoch_s_mean") / rep_metric(best, "epoch_s_mean");
            fprintf(f, ", %.2f× %s than %s (%s); the compute waited %.1f %% of the epoch with %s and %.1f %% with %s",
                    x >= 1 ? x : 1 / x, x >= 1 ? "faster" : "slower", base->variant, b,
                    100 * rep_metric(base, "wait_fraction"), base->variant, 100 * rep_metric(best, "wait_fraction"),
                    best->variant);
            compute_clause(f, base, best);
            fputs(".\n", f);
        } else
            fprintf(f, "; the compute waited %.1f %% of the epoch.\n", 100 * rep_metric(best, "wait_fraction"));
    }
}
