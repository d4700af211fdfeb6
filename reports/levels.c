/* reports/levels.c: one CPU measured at several ISA levels (a dispatch build run with SPEEDLAB_ISA),
 * side by side. The report keeps the levels apart as two machines (envs.c); this table is where they
 * meet: per variant, at the largest size where it ran at both, the median and the fraction of its
 * roofline bound at each level's own calibration, and the lower level's against the higher one's. It is
 * how to check a claim that an optimisation holds at AVX2 as at AVX-512 (docs/isa-levels.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 64
#define MAXS 256

/* Higher is wider: the x86 levels env.isa names (kernels/isa.h, docs/results-schema.md). 0: unknown, or not
 * given. */
static int isa_rank(const char *isa)
{
    static const char *const order[] = {"sse2", "sse4.2", "avx", "avx2", "avx512"};
    for (int i = 0; isa && i < (int)(sizeof order / sizeof *order); i++)
        if (!strcmp(isa, order[i]))
            return i + 1;
    return 0;
}

static int same_cpu(const rep_env *a, const rep_env *b)
{
    return !strcmp(a->host, b->host) && !strcmp(a->cpu_model, b->cpu_model);
}

/* Whether env hi is env lo's CPU at a wider level. */
static int wider_of_cpu(const rep_set *s, int hi, int lo)
{
    return hi != lo && same_cpu(&s->envs[hi], &s->envs[lo]) && isa_rank(s->envs[lo].isa) &&
           isa_rank(s->envs[hi].isa) > isa_rank(s->envs[lo].isa);
}

/* The largest size where the variant ran ok, on the CPU, at both levels, in the same configuration: the
 * same work, thread count and params (rep_case.pkey), as pool.c pools records. */
static long shared_size(const rep_set *s, int hi, int lo, const char *study, const char *variant)
{
    long sizes[MAXS];
    int ns = rep_sizes(s, hi, study, sizes, MAXS);
    for (int i = ns - 1; i >= 0; i--) {
        const rep_case *a = rep_find(s, hi, study, variant, sizes[i]), *b = rep_find(s, lo, study, variant, sizes[i]);
        if (rep_is_ok(a) && rep_is_ok(b) && !a->gpu && !b->gpu && rep_same_work(a, b) && a->threads == b->threads &&
            !strcmp(a->pkey, b->pkey))
            return sizes[i];
    }
    return -1;
}

static void add_row(rep_table *t, const rep_set *s, const rep_case *a, const rep_case *b, int first)
{
    char ta[32], tb[32];
    int r = rep_table_row(t, first);
    const rep_env *e = &s->envs[a->env];
    int shared_host = 0; /* two CPU models under one host name (two VMs both called vm): say which */
    for (int k = 0; k < s->nenvs; k++)
        shared_host |= !strcmp(s->envs[k].host, e->host) && strcmp(s->envs[k].cpu_model, e->cpu_model);
    if (shared_host)
        rep_cell_text(t, r, 0, "%s (%s)", e->host, e->cpu_model);
    else
        rep_cell_text(t, r, 0, "%s", e->host);
    rep_cell_text(t, r, 1, "%s", a->study);
    rep_cell_text(t, r, 2, "%s", a->variant);
    rep_cell_num(t, r, 3, (double)a->size, "%s=%ld", a->size_name, a->size);
    if (rep_impl_moved(s, a)) /* the wider run's case ran at a narrower level: the planner's choice */
        rep_cell_text(t, r, 4, "%s (ran %s: %s) / %s", s->envs[a->env].isa, rep_impl(a, "isa"),
                      rep_impl(a, "chosen_by"), s->envs[b->env].isa);
    else
        rep_cell_text(t, r, 4, "%s / %s", s->envs[a->env].isa, s->envs[b->env].isa);
    rep_fmt_time(ta, sizeof ta, a->median);
    rep_fmt_time(tb, sizeof tb, b->median);
    rep_cell_num(t, r, 5, a->median, "%s%s", ta, rep_case_mark(t, a));
    rep_cell_num(t, r, 6, b->median, "%s%s", tb, rep_case_mark(t, b));
    rep_cell_num(t, r, 7, b->median / a->median, "%.3g×", b->median / a->median);
    double fa = rep_fraction_of_bound(s, a), fb = rep_fraction_of_bound(s, b);
    int over = 0;
    if (isfinite(fa))
        over |= rep_fraction_cell(t, r, 8, fa, 1);
    else
        rep_cell_text(t, r, 8, "—");
    if (isfinite(fb))
        over |= rep_fraction_cell(t, r, 9, fb, 1);
    else
        rep_cell_text(t, r, 9, "—");
    rep_cell_num_or_dash(t, r, 10, over ? NAN : fb / fa, "%.3g"); /* no ratio of an error */
}

/* Whether the variant has a row with narrower level lo against a level of its CPU wider than hi. */
static int paired_wider(const rep_set *s, int hi, int lo, const char *study, const char *variant)
{
    for (int k = 0; k < s->nenvs; k++)
        if (wider_of_cpu(s, k, hi) && shared_size(s, k, lo, study, variant) >= 0)
            return 1;
    return 0;
}

/* The rows of one (wider, narrower) pair of levels of a CPU: each variant against the widest level where
 * it ran with lo; returns how many. */
static int level_pair(rep_table *t, const rep_set *s, int hi, int lo)
{
    const char *studies[MAXV], *variants[MAXV];
    int n = 0, nst = rep_studies(s, hi, studies, MAXV);
    for (int i = 0; i < nst; i++) {
        int nv = rep_variants(s, hi, studies[i], variants, MAXV);
        for (int v = 0; v < nv; v++) {
            long size = shared_size(s, hi, lo, studies[i], variants[v]);
            if (size < 0 || paired_wider(s, hi, lo, studies[i], variants[v]))
                continue;
            add_row(t, s, rep_find(s, hi, studies[i], variants[v], size), rep_find(s, lo, studies[i], variants[v], size),
                    n == 0);
            n++;
        }
    }
    return n;
}

rep_table *rep_tab_isa_levels(const rep_set *s)
{
    const char *cols[] = {"CPU", "study", "variant", "size", "levels", "median (wider)", "median (narrower)",
                          "time ×", "of bound (wider)", "of bound (narrower)", "fraction ×"};
    const char *csv[] = {"host", "study", "variant", "size", "levels", "median_wide_s", "median_narrow_s",
                         "time_ratio", "fraction_wide", "fraction_narrow", "fraction_ratio"};
    rep_table *t = rep_table_new("isa-levels", "One CPU at several ISA levels: each variant at both", 11, cols, csv);
    int rows = 0;
    for (int e = 0; e < s->nenvs; e++) /* each narrower level, against its CPU's wider ones, widest first */
        for (int r = 5; r > 0; r--)
            for (int hi = 0; hi < s->nenvs; hi++)
                if (isa_rank(s->envs[hi].isa) == r && wider_of_cpu(s, hi, e))
                    rows += level_pair(t, s, hi, e);
    if (!rows) {
        rep_table_free(t);
        return NULL;
    }
    for (int c = 5; c <= 10; c++)
        rep_col_flags(t, c, REP_COL_NUMERIC);
    rep_table_note(t, "Each variant at the largest size where it ran at both levels of its CPU (a dispatch build, "
                      "`SPEEDLAB_ISA`; CPU variants only), doing the same work at the same thread count and "
                      "params at both, against the widest level where it ran so. `time ×`: the narrower level's "
                      "median ÷ the wider one's (above 1 = slower at the narrower level). `of bound`: "
                      "the fraction of the roofline bound at that level's own calibration (the roofline table's); "
                      "`fraction ×`: narrower ÷ wider, 1 when the narrower level's code uses as much of its "
                      "machine as the wider one's (on a CPU whose FMA peak is the same at both levels, as Zen 4's, "
                      "the two ratios say the same thing). — where a level has no calibration record, or the "
                      "case no rates.");
    int moved = 0;
    for (int i = 0; i < s->ncases && !moved; i++)
        moved = rep_impl_moved(s, &s->cases[i]);
    if (moved)
        rep_table_note(t, "`ran avx2: wisdom`: the planner ran that variant at a narrower level in the wider run, "
                          "because `speedlab tune` found it faster there (the study page's planner table has the "
                          "times).");
    return t;
}
