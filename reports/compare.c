/* reports/compare.c: `speedlab compare A B [--format md|csv|tex] [--out FILE]`.
 *
 * For every case (study, variant, size) present in both A and B: the ratio of medians B/A, a two-sided
 * Mann-Whitney U test over the repetition times, and flags for noise (either side's CV above 5 %) and
 * for too few repetitions (fewer than 9 on either side; the test has little power there). Modelled on
 * Google Benchmark's compare.py (U test, alpha 0.05) and nanobench's noise warnings. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"
#include "report.h"

#define ALPHA 0.05
#define CV_NOISY 0.05
#define MIN_REPS 9

static void usage(FILE *f)
{
    fputs("usage: speedlab compare A B [--format md|csv|tex] [--out FILE] [--pool]\n"
          "  A, B: results directories or files (as for `speedlab report`). For each case in both: the\n"
          "  ratio of medians B/A, a two-sided Mann-Whitney U test over the repetitions (p < 0.05 is a\n"
          "  difference), a noise flag when either side's CV exceeds 5 %, and a warning when either side\n"
          "  has fewer than 9 repetitions. --pool: a case measured in several runs on a side counts all\n"
          "  their repetitions (rounds), not the latest run's (as speedlab report --pool). Exit status: 0,\n"
          "  3 when input was skipped, 2 usage, 1 nothing to compare or the output not written.\n", f);
}

/* Compare matches a case by study, variant and size, on any machine (it says when machines differ). */
static char *match_key(const rep_case *c)
{
    return rep_printf("%ld\x1f%s\x1f%s", c->size, c->study, c->variant);
}

/* The first case of each match key in s: one hash lookup per case, so compare is linear too. */
static void index_cases(const rep_set *s, rep_hash *h)
{
    for (int i = 0; i < s->ncases; i++) {
        char *k = match_key(&s->cases[i]);
        if (k && rep_hash_get(h, k) < 0)
            rep_hash_put(h, k, i);
        free(k);
    }
}

static const rep_case *find_any(const rep_set *s, const rep_hash *h, const rep_case *k)
{
    char *key = match_key(k);
    int i = key ? rep_hash_get(h, key) : -1;
    free(key);
    return i < 0 ? NULL : &s->cases[i];
}

typedef struct tally {
    int slower, faster, same, few, noisy, envdiff, isadiff, verdiff;
} tally;

/* A framework baseline's versions (external.versions: numpy, torch ...) or form (baseline_form) that
 * differ between A and B, as "numpy 1.24.2 / 2.4.6" into buf; 0 when they agree or do not say. */
static int version_diff(const rep_case *a, const rep_case *b, char *buf, size_t n)
{
    json_t *va = json_object_get(json_object_get(a->rec, "external"), "versions");
    json_t *vb = json_object_get(json_object_get(b->rec, "external"), "versions"), *x;
    const char *m, *fa = json_string_value(json_object_get(a->rec, "baseline_form"));
    const char *fb = json_string_value(json_object_get(b->rec, "baseline_form"));
    size_t len = 0;
    buf[0] = '\0';
    json_object_foreach(va, m, x) {
        const char *sa = json_string_value(x), *sb = json_string_value(json_object_get(vb, m));
        if (sa && sb && strcmp(sa, sb) && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s %s / %s", len ? ", " : "", m, sa, sb);
    }
    if (fa && fb && strcmp(fa, fb) && len < n)
        len += (size_t)snprintf(buf + len, n - len, "%sform %s / %s", len ? ", " : "", fa, fb);
    return buf[0] != '\0';
}

static void compare_case(rep_table *t, const rep_case *a, const rep_case *b, const rep_set *sa,
                         const rep_set *sb, tally *n)
{
    int r = rep_table_row(t, 1);
    char ma[64], mb[64], flags[448] = "", vd[192];
    rep_cell_text(t, r, 0, "%s", a->study);
    rep_cell_text(t, r, 1, "%s", a->variant);
    rep_cell_num(t, r, 2, (double)a->size, "%ld", a->size);
    rep_cell_num(t, r, 3, a->ntimes, "%d", a->ntimes);
    rep_cell_num(t, r, 4, b->ntimes, "%d", b->ntimes);
    rep_fmt_time(ma, sizeof ma, a->median);
    rep_fmt_time(mb, sizeof mb, b->median);
    rep_cell_num(t, r, 5, a->median, "%s%s", ma, rep_case_mark(t, a));
    rep_cell_num(t, r, 6, b->median, "%s%s", mb, rep_case_mark(t, b));
    double ratio = b->median / a->median, u;
    int exact = 0;
    double p = rep_mann_whitney(a->times, a->ntimes, b->times, b->ntimes, &u, &exact);
    rep_cell_num(t, r, 7, ratio, "%.3f", ratio);
    rep_cell_num(t, r, 8, u, "%.1f", u);
    if (p < 0.001)
        rep_cell_num(t, r, 9, p, "%.1e%s", p, exact ? "" : " (approx.)");
    else
        rep_cell_num(t, r, 9, p, "%.3f%s", p, exact ? "" : " (approx.)");
    if (p >= ALPHA) {
        rep_cell_text(t, r, 10, "no significant difference");
        n->same++;
    } else if (ratio > 1) {
        rep_cell_text(t, r, 10, "B slower");
        n->slower++;
    } else {
        rep_cell_text(t, r, 10, "B faster");
        n->faster++;
    }
    if ((isfinite(a->cv) && a->cv > CV_NOISY) || (isfinite(b->cv) && b->cv > CV_NOISY)) {
        snprintf(flags, sizeof flags, "noisy (CV %.0f %% / %.0f %%)", 100 * a->cv, 100 * b->cv);
        n->noisy++;
    }
    if (a->ntimes < MIN_REPS || b->ntimes < MIN_REPS) {
        snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%sfew reps (< %d)", flags[0] ? "; " : "",
                 MIN_REPS);
        n->few++;
    }
    if (strcmp(sa->envs[a->env].host, sb->envs[b->env].host) ||
        strcmp(sa->envs[a->env].cpu_model, sb->envs[b->env].cpu_model)) {
        snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%sdifferent machines", flags[0] ? "; " : "");
        n->envdiff++;
    }
    /* Two ISA levels are two machines (envs.c), even on one CPU; a side that does not say is unknown. The
     * level a case ran at is its impl's where the planner chose it, else its run's. */
    const char *ia = rep_impl(a, "isa") ? rep_impl(a, "isa") : sa->envs[a->env].isa;
    const char *ib = rep_impl(b, "isa") ? rep_impl(b, "isa") : sb->envs[b->env].isa;
    if (ia && ib && strcmp(ia, ib)) {
        snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%sdifferent ISA (%s / %s)",
                 flags[0] ? "; " : "", ia, ib);
        n->isadiff++;
    }
    if (version_diff(a, b, vd, sizeof vd)) {
        snprintf(flags + strlen(flags), sizeof flags - strlen(flags), "%sdifferent framework (%s)",
                 flags[0] ? "; " : "", vd);
        n->verdiff++;
    }
    rep_cell_text(t, r, 11, "%s", flags);
}

int rep_compare_main(int argc, char **argv)
{
    rep_out_cleanup_on_signals();
    char *paths[2];
    int np = 0, fmt = REP_MD, pool = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
            const char *f = argv[++i];
            fmt = !strcmp(f, "md") ? REP_MD : !strcmp(f, "csv") ? REP_CSV : !strcmp(f, "tex") ? REP_TEX : 0;
            if (!fmt) {
                fprintf(stderr, "speedlab compare: unknown format \"%s\"; expected md, csv or tex\n", f);
                return 2;
            }
        } else if (!strcmp(argv[i], "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--pool")) {
            pool = 1;
        } else if (argv[i][0] == '-' || np == 2) {
            fprintf(stderr, "speedlab compare: unexpected argument %s\n", argv[i]);
            usage(stderr);
            return 2;
        } else {
            paths[np++] = argv[i];
        }
    }
    if (np != 2) {
        fprintf(stderr, "speedlab compare: need two results directories or files, A and B\n");
        usage(stderr);
        return 2;
    }
    rep_set sa = {.pool = pool}, sb = {.pool = pool};
    rep_load(&sa, 1, &paths[0], stderr);
    rep_load(&sb, 1, &paths[1], stderr);
    int status = (sa.nerrors || sb.nerrors) ? 3 : 0;

    const char *cols[] = {"study", "variant", "size", "n A", "n B", "median A", "median B", "B/A", "U", "p",
                          "verdict", "flags"};
    const char *csv[] = {"study", "variant", "size", "reps_a", "reps_b", "median_a_s", "median_b_s", "ratio",
                         "u", "p", "verdict", "flags"};
    rep_table *t = rep_table_new("compare", "", 12, cols, csv);
    free(t->title);
    t->title = rep_printf("compare: B = %s against A = %s", paths[1], paths[0]);
    tally n = {0};
    rep_hash ha = {0}, hb = {0};
    index_cases(&sa, &ha);
    index_cases(&sb, &hb);
    for (int i = 0; i < sa.ncases; i++) {
        const rep_case *a = &sa.cases[i];
        if (!rep_is_ok(a) || find_any(&sa, &ha, a) != a)
            continue;
        const rep_case *b = find_any(&sb, &hb, a);
        if (rep_is_ok(b))
            compare_case(t, a, b, &sa, &sb, &n);
    }
    rep_hash_free(&ha);
    rep_hash_free(&hb);
    rep_table_note(t, "%d cases in both: %d B slower, %d B faster, %d no significant difference "
                      "(two-sided Mann-Whitney U, alpha %.2f; exact p for small samples without ties).",
                   t->nrows, n.slower, n.faster, n.same, ALPHA);
    if (n.noisy)
        rep_table_note(t, "%d cases are noisy (coefficient of variation above 5 %% on a side): re-run on a "
                          "quiet machine before trusting a difference.", n.noisy);
    if (n.isadiff)
        rep_table_note(t, "%d cases ran at different ISA levels in A and B (env.isa): the kernels were not "
                          "the same code, so a difference may be the ISA's, not the change's.", n.isadiff);
    if (n.verdiff)
        rep_table_note(t, "%d framework baselines ran another framework version or form in A and B "
                          "(external.versions, baseline_form): a difference may be the version's, not the "
                          "change's.", n.verdiff);
    if (n.few) {
        rep_table_note(t, "%d cases have fewer than %d repetitions on a side: the test can hardly detect "
                          "a difference (use --reps 9 or more).", n.few, MIN_REPS);
        fprintf(stderr, "speedlab compare: warning: %d cases have fewer than %d repetitions on a side\n", n.few,
                MIN_REPS);
    }
    /* --out: written whole or not at all (output.c); stdout: checked, so a full disk is an error too. */
    FILE *f = out ? rep_out_open(out) : stdout;
    if (f) {
        if (fmt == REP_MD)
            rep_write_md(t, f);
        else if (fmt == REP_CSV)
            rep_write_csv(t, f);
        else
            rep_write_tex(t, f);
    }
    if (!f || rep_out_close(f) != 0) {
        if (!out)
            fprintf(stderr, "speedlab compare: cannot write the table to standard output (disk full?)\n");
        status = 1;
    }
    if (t->nrows == 0) {
        fprintf(stderr, "speedlab compare: no case with times is in both A and B\n");
        if (!status)
            status = 1;
    }
    rep_table_free(t);
    rep_set_free(&sa);
    rep_set_free(&sb);
    return status;
}
