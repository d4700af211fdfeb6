/* reports/bottleneck.c: the bottleneck table from a case's profile (the profiler's JSON embedded as
 * `profile` in the record), in the shape of seed 002's Table 2.1 (cProfile): per region path, calls,
 * self and inclusive time, percent of the run, mean and std per call, sorted by self time; with the
 * counters that counted and metrics derived from them. Counters that could not be read print as
 * "absent", never as zero. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64
#define MAXC 16
#define MAXROWS 40

/* A string from the profile, or "?" when the profiler wrote something else (never NULL). */
static const char *sv(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "?";
}

typedef struct region {
    json_t *r;
    double self;
} region;

static int cmp_self(const void *a, const void *b)
{
    double x = ((const region *)a)->self, y = ((const region *)b)->self;
    return (x < y) - (x > y);
}

/* Derived metrics: name, numerator counter, denominator counter (NULL: per second of inclusive time). */
static const struct derived {
    const char *name, *num, *den;
    double scale;
} derived[] = {
    {"IPC", "PAPI_TOT_INS", "PAPI_TOT_CYC", 1},
    {"L1D miss rate", "PAPI_L1_DCM", "PAPI_LD_INS", 1},
    {"L2 miss rate", "PAPI_L2_TCM", "PAPI_L2_TCA", 1},
    {"L3 miss rate", "PAPI_L3_TCM", "PAPI_L3_TCA", 1},
    {"GFLOP/s (SP)", "PAPI_SP_OPS", NULL, 1},
    {"GFLOP/s", "PAPI_FP_OPS", NULL, 1},
    {"GB/s (DRAM)", "BYTES_DRAM", NULL, 1},
};
#define NDERIVED (int)(sizeof derived / sizeof *derived)

static int has_counter(const json_t *names, const char *c)
{
    for (size_t i = 0; i < json_array_size(names); i++)
        if (strcmp(sv(json_array_get(names, i)), c) == 0)
            return 1;
    return 0;
}

/* How many leading path components are the runner's repetition regions (study / variant / size). */
static size_t rep_prefix(const json_t *p, const rep_case *c)
{
    if (json_array_size(p) >= 3 && !strcmp(sv(json_array_get(p, 0)), c->study) &&
        !strcmp(sv(json_array_get(p, 1)), c->variant))
        return 3;
    return 0;
}

/* The region's path below the repetition regions; "(repetition)" for those themselves. */
static void path_text(const json_t *r, const rep_case *c, char *buf, size_t n)
{
    json_t *p = json_object_get(r, "path");
    size_t skip = rep_prefix(p, c);
    buf[0] = 0;
    for (size_t i = skip; i < json_array_size(p); i++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i > skip ? " / " : "",
                 sv(json_array_get(p, i)));
    if (!buf[0] && skip && json_array_size(p) == skip)
        snprintf(buf, n, "(repetition: %s)", sv(json_array_get(p, skip - 1)));
    else if (!buf[0] && skip)
        snprintf(buf, n, "(%s)", sv(json_array_get(p, json_array_size(p) - 1)));
    else if (!buf[0])
        snprintf(buf, n, "%s", json_is_string(json_object_get(r, "name")) ?
                 json_string_value(json_object_get(r, "name")) : "?");
}

/* The case of a variant whose profile is shown: the largest ok size that has regions. */
static const rep_case *profiled_case(const rep_set *s, int env, const char *study, const char *variant)
{
    long sizes[MAXS];
    int ns = rep_sizes(s, env, study, sizes, MAXS);
    for (int si = ns - 1; si >= 0; si--) {
        const rep_case *c = rep_find(s, env, study, variant, sizes[si]);
        json_t *p = c ? json_object_get(c->rec, "profile") : NULL;
        if (rep_is_ok(c) && json_array_size(json_object_get(p, "regions")) > 0)
            return c;
    }
    return NULL;
}

static void time_cell(rep_table *t, int r, int col, double ns)
{
    char buf[64];
    if (!isfinite(ns)) {
        rep_cell_text(t, r, col, "—");
        return;
    }
    rep_fmt_time(buf, sizeof buf, ns * 1e-9);
    rep_cell_num(t, r, col, ns * 1e-9, "%s", buf);
}

/* The columns a profile needs: counters that counted, derived metrics whose counters are there. */
typedef struct bcols {
    json_t *counters;
    int nc, nd, has_dev;
    int dsel[NDERIVED];
} bcols;

static rep_table *bottleneck_table(const rep_case *c, json_t *prof, bcols *b)
{
    json_t *regions = json_object_get(prof, "regions");
    b->counters = json_object_get(prof, "counters");
    b->nc = (int)json_array_size(b->counters) > MAXC ? MAXC : (int)json_array_size(b->counters);
    b->nd = 0;
    for (int i = 0; i < NDERIVED; i++)
        if (has_counter(b->counters, derived[i].num) && (!derived[i].den || has_counter(b->counters, derived[i].den)))
            b->dsel[b->nd++] = i;
    b->has_dev = 0;
    for (size_t i = 0; i < json_array_size(regions); i++)
        b->has_dev |= json_is_number(json_object_get(json_array_get(regions, i), "device_ms"));

    const char *cols[8 + MAXC + NDERIVED] = {"region", "calls", "self", "inclusive", "% of run", "mean", "std"};
    const char *csv[8 + MAXC + NDERIVED] = {"region", "calls", "self_s", "incl_s", "percent_of_run", "mean_s",
                                            "std_s"};
    int ncol = 7;
    if (b->has_dev) {
        cols[ncol] = "device time";
        csv[ncol++] = "device_s";
    }
    for (int i = 0; i < b->nc; i++, ncol++)
        cols[ncol] = csv[ncol] = sv(json_array_get(b->counters, (size_t)i));
    for (int i = 0; i < b->nd; i++, ncol++)
        cols[ncol] = csv[ncol] = derived[b->dsel[i]].name;
    char title[256];
    snprintf(title, sizeof title, "%s, %s, %s=%ld: where the time goes (profile regions, by self time)",
             c->study, c->variant, c->size_name, c->size);
    rep_table *t = rep_table_new("", title, ncol, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-bottleneck-%s", c->study, c->variant);
    return t;
}

static void bottleneck_row(rep_table *t, const rep_case *c, const bcols *b, const region *rg, double wall)
{
    json_t *r = rg->r;
    char buf[512];
    int row = rep_table_row(t, 1);
    path_text(r, c, buf, sizeof buf);
    rep_cell_text(t, row, 0, "%s", buf);
    double calls = rep_jnum(r, "calls"), incl = rep_jnum(r, "incl_ns");
    rep_cell_num(t, row, 1, calls, "%.0f", calls);
    time_cell(t, row, 2, rg->self);
    time_cell(t, row, 3, incl);
    if (wall > 0)
        rep_cell_num(t, row, 4, rg->self / wall, "%.1f %%", 100 * rg->self / wall);
    time_cell(t, row, 5, rep_jnum(r, "mean_ns"));
    time_cell(t, row, 6, rep_jnum(r, "std_ns"));
    int col = 7;
    if (b->has_dev)
        time_cell(t, row, col++, rep_jnum(r, "device_ms") * 1e6);
    json_t *rc = json_object_get(r, "counters");
    for (int k = 0; k < b->nc; k++, col++) {
        double v = rep_jnum(rc, sv(json_array_get(b->counters, (size_t)k)));
        if (isfinite(v))
            rep_cell_num(t, row, col, v, "%.4g", v);
        else
            rep_cell_text(t, row, col, "absent");
    }
    for (int k = 0; k < b->nd; k++, col++) {
        const struct derived *d = &derived[b->dsel[k]];
        double num = rep_jnum(rc, d->num);
        double den = d->den ? rep_jnum(rc, d->den) : incl; /* per ns = G per s */
        if (isfinite(num) && isfinite(den) && den > 0)
            rep_cell_num(t, row, col, num / den, "%.3g", num / den);
        else
            rep_cell_text(t, row, col, "absent");
    }
}

static void bottleneck_notes(rep_table *t, const rep_case *c, json_t *prof, const bcols *b)
{
    json_t *absent = json_object_get(prof, "counters_absent");
    if (json_array_size(absent) > 0) {
        char list[1024] = "";
        for (size_t i = 0; i < json_array_size(absent); i++) {
            json_t *a = json_array_get(absent, i); /* {"name", "why"}, or a bare name */
            const char *name = json_is_string(a) ? json_string_value(a) : json_string_value(json_object_get(a, "name"));
            const char *why = json_string_value(json_object_get(a, "why"));
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s%s%s%s", i ? "; " : "",
                     name ? name : "?", why ? " (" : "", why ? why : "", why ? ")" : "");
        }
        rep_table_note(t, "Counters absent (could not be counted on this machine, not zero): %s.", list);
    } else if (b->nc == 0) {
        rep_table_note(t, "No hardware counters were recorded for this case.");
    }
    double errors = rep_jnum(prof, "errors");
    if (isfinite(errors) && errors > 0)
        rep_table_note(t, "The profiler reported %.0f errors (unbalanced regions?): treat with care.", errors);
    rep_table_note(t, "self = inclusive minus child regions; %% of run = self ÷ the profile's wall time "
                      "(%s); mean and std per call.", isfinite(rep_jnum(prof, "wall_ns")) ? "wall_ns" : "sum of top regions");
    if (c->reduced || c->extrapolated)
        rep_table_note(t, "This case is marked %s.", rep_case_mark(t, c));
}

/* Whether a region is inside a repetition: below the runner's study / variant / size regions (a
 * profile without them holds the study's own regions only). */
static int inside_repetition(const json_t *r, const rep_case *c)
{
    json_t *p = json_object_get(r, "path");
    size_t n = json_array_size(p);
    int under_study = n >= 1 && !strcmp(sv(json_array_get(p, 0)), c->study);
    int runner = under_study && (n == 1 || (n <= 3 && !strcmp(sv(json_array_get(p, 1)), c->variant)));
    return !runner; /* "study", "study / variant" and the size's region are the runner's own */
}

/* The profile's regions to show, sorted by self time, into rs (room for every region); their count.
 * inside: only the regions inside a repetition (a kernel study's). *top gets the top-level inclusive sum. */
static size_t pick_regions(json_t *regions, const rep_case *c, int inside, region *rs, double *top)
{
    size_t n = 0;
    *top = 0;
    for (size_t i = 0; i < json_array_size(regions); i++) {
        json_t *r = json_array_get(regions, i);
        if (rep_jnum(r, "depth") == 0)
            *top += rep_jnum(r, "incl_ns");
        if (inside && !inside_repetition(r, c))
            continue;
        rs[n].r = r;
        rs[n++].self = rep_jnum(r, "self_ns");
    }
    qsort(rs, n, sizeof *rs, cmp_self);
    return n;
}

/* The table of case c's profile, or NULL when a kernel study's (inside) has one region or none to show. */
static rep_table *bottleneck_for(const rep_case *c, int inside)
{
    json_t *prof = json_object_get(c->rec, "profile");
    json_t *regions = json_object_get(prof, "regions");
    size_t all = json_array_size(regions);
    region *rs = malloc(sizeof *rs * (all ? all : 1));
    double top, wall = rep_jnum(prof, "wall_ns");
    size_t nr = pick_regions(regions, c, inside, rs, &top);
    if (inside && nr <= 1) {
        free(rs);
        return NULL;
    }
    if (!isfinite(wall) || wall <= 0)
        wall = top;
    bcols b;
    rep_table *t = bottleneck_table(c, prof, &b);
    for (size_t i = 0; i < nr && i < MAXROWS; i++)
        bottleneck_row(t, c, &b, &rs[i], wall);
    if (nr > MAXROWS)
        rep_table_note(t, "%zu more regions with less self time not shown.", nr - MAXROWS);
    if (inside)
        rep_table_note(t, "The regions inside a repetition (the runner's own repetition region is left out).");
    free(rs);
    bottleneck_notes(t, c, prof, &b);
    return t;
}

/* A kernel study's tables show the regions inside a repetition, and none when there is only one such
 * region (the kernel itself: the speedup table already says how long it took); a training study's show
 * every region, its runner's repetition included. */
int rep_tab_bottleneck(const rep_set *s, int env, const char *study, rep_table **out, int max)
{
    const char *vs[MAXV];
    int nv = rep_variants(s, env, study, vs, MAXV), n = 0, inside = !rep_is_training(s, env, study);
    for (int vi = 0; vi < nv && n < max; vi++) {
        const rep_case *c = profiled_case(s, env, study, vs[vi]);
        rep_table *t = c ? bottleneck_for(c, inside) : NULL;
        if (t)
            out[n++] = t;
    }
    return n;
}

/* ---- per function (cProfile's shape, seed 002's Table 2.1) ------------------------------------ */

typedef struct func {
    const char *name;
    double calls, self, incl;
} func;

static int cmp_func(const void *a, const void *b)
{
    double x = ((const func *)a)->self, y = ((const func *)b)->self;
    return (x < y) - (x > y);
}

/* Sums the study's regions by name over every path they occur at (predict called from two places is
 * one row); inclusive time counts only outermost occurrences, so recursion is not counted twice. */
static rep_table *functions_for(const rep_case *c)
{
    json_t *prof = json_object_get(c->rec, "profile");
    json_t *regions = json_object_get(prof, "regions");
    size_t nr = json_array_size(regions);
    func *fs = calloc(nr ? nr : 1, sizeof *fs);
    int nf = 0;
    for (size_t i = 0; i < nr; i++) {
        json_t *r = json_array_get(regions, i), *p = json_object_get(r, "path");
        size_t skip = rep_prefix(p, c), len = json_array_size(p);
        if (!skip || len <= skip)
            continue; /* the runner's own regions are not functions of the study */
        const char *name = sv(json_array_get(p, len - 1));
        int k = 0;
        while (k < nf && strcmp(fs[k].name, name))
            k++;
        if (k == nf)
            fs[nf++].name = name;
        int nested = 0;
        for (size_t j = skip; j + 1 < len; j++)
            nested |= !strcmp(sv(json_array_get(p, j)), name);
        fs[k].calls += rep_jnum(r, "calls");
        fs[k].self += rep_jnum(r, "self_ns");
        if (!nested)
            fs[k].incl += rep_jnum(r, "incl_ns");
    }
    if (nf == 0) {
        free(fs);
        return NULL;
    }
    qsort(fs, (size_t)nf, sizeof *fs, cmp_func);
    const char *cols[] = {"function", "calls", "self (tot)", "inclusive (cum)", "% of run", "inclusive per call"};
    const char *csv[] = {"function", "calls", "self_s", "incl_s", "percent_of_run", "incl_per_call_s"};
    char title[256];
    snprintf(title, sizeof title, "%s, %s, %s=%ld: time per function (all call sites summed)", c->study,
             c->variant, c->size_name, c->size);
    rep_table *t = rep_table_new("", title, 6, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-functions-%s", c->study, c->variant);
    double wall = rep_jnum(prof, "wall_ns");
    for (int i = 0; i < nf; i++) {
        int r = rep_table_row(t, 1);
        rep_cell_text(t, r, 0, "%s", fs[i].name);
        rep_cell_num(t, r, 1, fs[i].calls, "%.0f", fs[i].calls);
        time_cell(t, r, 2, fs[i].self);
        time_cell(t, r, 3, fs[i].incl);
        if (isfinite(wall) && wall > 0)
            rep_cell_num(t, r, 4, fs[i].self / wall, "%.1f %%", 100 * fs[i].self / wall);
        else
            rep_cell_text(t, r, 4, "—");
        time_cell(t, r, 5, fs[i].calls > 0 ? fs[i].incl / fs[i].calls : NAN);
    }
    rep_table_note(t, "Summed over every repetition of the profile; compare with cProfile's tottime/cumtime.");
    if (c->reduced || c->extrapolated)
        rep_table_note(t, "This case is marked %s.", rep_case_mark(t, c));
    free(fs);
    return t;
}

int rep_tab_functions(const rep_set *s, int env, const char *study, rep_table **out, int max)
{
    const char *vs[MAXV];
    int nv = rep_variants(s, env, study, vs, MAXV), n = 0, kernel = !rep_is_training(s, env, study);
    for (int vi = 0; vi < nv && n < max; vi++) {
        const rep_case *c = profiled_case(s, env, study, vs[vi]);
        rep_table *t = c ? functions_for(c) : NULL;
        if (t && kernel && t->nrows <= 1) { /* as the bottleneck table: one function is the kernel itself */
            rep_table_free(t);
            t = NULL;
        }
        if (t)
            out[n++] = t;
    }
    return n;
}
