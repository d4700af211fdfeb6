/*
 * reports/agreement.c: do the variants of a training study follow the same trajectory? For a study
 * whose records carry a per-iteration objective series (`cost`, galaxy; `train_loss`, per epoch),
 * each variant's series against the baseline variant's at the same size: the first iteration where
 * they differ by more than AGREE_REL (relative), the final values' relative difference, and whether
 * the series are identical (the same bits, as far as the record's 12 digits show), agree (final values
 * within AGREE_REL, some earlier point possibly not) or differ.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64
#define AGREE_REL 1e-6
#define STR_(x) #x
#define STR(x) STR_(x) /* AGREE_REL as the text the table prints */

static const char *const objectives[][2] = {{"cost", "iteration"}, {"train_loss", "epoch"}};

/* The objective series of a case and which of `objectives` it is (*kind), NULL when none. */
static const json_t *objective(const rep_case *c, int *kind)
{
    const json_t *series = json_object_get(c->rec, "series");
    for (size_t i = 0; i < sizeof objectives / sizeof *objectives; i++) {
        const json_t *a = json_object_get(series, objectives[i][0]);
        if (json_array_size(a) > 0) {
            *kind = (int)i;
            return a;
        }
    }
    return NULL;
}

static double at(const json_t *a, size_t i) { return json_number_value(json_array_get(a, i)); }

/* One variant's row against the baseline's series b (index series bi, for the iteration numbers). */
static void agreement_row(rep_table *t, const rep_case *c, const json_t *a, const json_t *b, const json_t *bi)
{
    int r = rep_table_row(t, 1);
    rep_cell_text(t, r, 0, "%s", c->variant);
    rep_cell_num(t, r, 1, (double)c->size, "%ld", c->size);
    size_t na = json_array_size(a), nb = json_array_size(b), n = na < nb ? na : nb;
    double fa = at(a, na - 1), fb = at(b, nb - 1), rel = fabs(fa - fb) / fabs(fb);
    rep_cell_num(t, r, 2, (double)na, "%zu", na);
    rep_cell_num(t, r, 3, fa, "%.10g%s", fa, rep_case_mark(t, c));
    rep_cell_num(t, r, 4, rel, rel == 0 ? "0" : "%.2g", rel);
    size_t first = n;
    int same = na == nb;
    for (size_t i = 0; i < n; i++) {
        double x = at(a, i), y = at(b, i);
        same &= x == y;
        if (first == n && fabs(x - y) > AGREE_REL * fabs(y))
            first = i;
    }
    if (first == n)
        rep_cell_text(t, r, 5, "all %zu", n);
    else { /* the index series holds the iteration numbers (1-based for galaxy) */
        double it = json_array_size(bi) > first ? at(bi, first) : (double)(first + 1);
        rep_cell_num(t, r, 5, it, "%.0f", it);
    }
    rep_cell_text(t, r, 6, "%s", same ? "identical" : (rel <= AGREE_REL ? "agree" : "differ"));
}

rep_table *rep_tab_agreement(const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    rep_table *t = NULL;
    const char *base = NULL;
    int kind = 0;
    for (int si = 0; si < ns; si++) {
        const rep_case *b = NULL;
        for (int vi = 0; vi < nv && !b; vi++) {   /* the baseline variant the records name */
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (c && c->baseline && !strcmp(c->variant, c->baseline))
                b = c;
        }
        int bk, ck;
        const json_t *bs = b && rep_is_ok(b) ? objective(b, &bk) : NULL;
        if (!bs || (t && bk != kind))
            continue;
        const json_t *bi = json_object_get(json_object_get(b->rec, "series"), objectives[bk][1]);
        for (int vi = 0; vi < nv; vi++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            const json_t *a = c && rep_is_ok(c) ? objective(c, &ck) : NULL;
            if (!a || ck != bk)
                continue;
            if (!t) {
                char title[256];
                const char *cols[] = {"variant", b->size_name, "points", "final", "final vs baseline",
                                      "first point off by > " STR(AGREE_REL), "trajectory"};
                const char *csv[] = {"variant", "size", "points", "final", "final_rel_diff", "first_off",
                                     "trajectory"};
                kind = bk;
                base = b->baseline;
                snprintf(title, sizeof title, "%s: do the variants follow the baseline's %s trajectory?", study,
                         objectives[kind][0]);
                t = rep_table_new("", title, 7, cols, csv);
                free(t->id);
                t->id = rep_printf("%s-agreement", study);
            }
            agreement_row(t, c, a, bs, bi);
        }
    }
    if (t)
        rep_table_note(t, "Each variant's %s per %s against the baseline's (%s) at the same size; final vs "
                          "baseline = |final − baseline's| ÷ baseline's; first point off = the first %s whose "
                          "values differ by more than " STR(AGREE_REL) " relative (all N: none); identical = every value "
                          "equal as recorded (12 significant digits). Variants that round differently "
                          "diverge in a chaotic optimisation even when each call agrees to 1e-15.",
                       objectives[kind][0], objectives[kind][1], base, objectives[kind][1]);
    return t;
}
