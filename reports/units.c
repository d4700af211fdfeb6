/* reports/units.c: how the cases of a study at one size are compared with each other.
 *
 * Cases that did the same work (the same reduction, or none, and the same extrapolation) are compared
 * by their median time per repetition. A reduced run (record field `reduced`, with `reduced_reason`) or
 * an extrapolated one did other work than a full run, so its total time never stands beside a full
 * run's: when every ok case at the size records a time per unit of work, all of them are compared by it
 * (per sample: 1 ÷ samples/s; else per epoch, when their epochs are of the same rows), and where none
 * exists, only the cases that did the reference's work are compared (the reference: the first full
 * run, in variant order). The speedup table, the crossover, the best CPU variant, the inversions, the
 * bar figures, REPORT.md's headline and its findings all compare through rep_cmp_time. */
#include <math.h>
#include <string.h>

#include "rep.h"

#define MAXV 32

int rep_same_work(const rep_case *a, const rep_case *b)
{
    return a->reduced == b->reduced && a->extrapolated == b->extrapolated &&
           rep_same_opt(a->reduced ? a->reduced_reason : NULL, b->reduced ? b->reduced_reason : NULL);
}

/* Mean of a record's series (NAN when it has none). */
static double series_mean(const rep_case *c, const char *name)
{
    json_t *a = json_object_get(json_object_get(c->rec, "series"), name);
    size_t n = json_array_size(a), k = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(a, i);
        if (json_is_number(x))
            sum += json_number_value(x), k++;
    }
    return k ? sum / (double)k : NAN;
}

/* Samples per second: the metric samples_per_s_mean, else the mean of the series samples_per_s. */
static double samples_per_s(const rep_case *c)
{
    double r = rep_metric(c, "samples_per_s_mean");
    return isfinite(r) ? r : series_mean(c, "samples_per_s");
}

double rep_unit_time(const rep_case *c, rep_unit u)
{
    if (!rep_is_ok(c))
        return NAN;
    if (u == REP_UNIT_SAMPLE) {
        double r = samples_per_s(c);
        return r > 0 ? 1.0 / r : NAN;
    }
    if (u == REP_UNIT_EPOCH) {
        double e = rep_metric(c, "epoch_s_mean");
        return isfinite(e) ? e : series_mean(c, "epoch_s");
    }
    return c->median;
}

/* The spread of a case's time per unit: the std of the metric it comes from (per sample: propagated
 * from samples_per_s_std, sd ÷ rate²), its time's std per repetition, or 0 when not recorded. */
double rep_unit_std(const rep_case *c, rep_unit u)
{
    double sd = NAN;
    if (u == REP_UNIT_SAMPLE) {
        double r = samples_per_s(c);
        sd = rep_metric(c, "samples_per_s_std") / (r * r);
    } else if (u == REP_UNIT_EPOCH) {
        sd = rep_metric(c, "epoch_s_std");
    } else if (c) {
        sd = c->std;
    }
    return isfinite(sd) ? sd : 0.0;
}

const char *rep_unit_name(rep_unit u)
{
    return u == REP_UNIT_SAMPLE ? "sample" : u == REP_UNIT_EPOCH ? "epoch" : NULL;
}

/* The ok cases of a study at a size, in variant order; returns how many. */
static int ok_cases(const rep_set *s, int env, const char *study, long size, const rep_case **out)
{
    const char *vs[MAXV];
    int nv = rep_variants(s, env, study, vs, MAXV), n = 0;
    for (int i = 0; i < nv; i++) {
        const rep_case *c = rep_find(s, env, study, vs[i], size);
        if (rep_is_ok(c))
            out[n++] = c;
    }
    return n;
}

/* Whether every case has a time per unit u, and (per epoch) their epochs are of the same rows. */
static int all_have(const rep_case *const *cs, int n, rep_unit u)
{
    double rows = NAN;
    for (int i = 0; i < n; i++) {
        if (!isfinite(rep_unit_time(cs[i], u)))
            return 0;
        double r = rep_metric(cs[i], "train_rows");
        if (u == REP_UNIT_EPOCH && isfinite(r) && isfinite(rows) && r != rows)
            return 0;
        rows = isfinite(r) ? r : rows;
    }
    return 1;
}

rep_unit rep_size_unit(const rep_set *s, int env, const char *study, long size)
{
    const rep_case *cs[MAXV];
    int n = ok_cases(s, env, study, size, cs), same = 1;
    for (int i = 1; i < n && same; i++)
        same = rep_same_work(cs[0], cs[i]);
    if (same)
        return REP_UNIT_RUN;
    if (all_have(cs, n, REP_UNIT_SAMPLE))
        return REP_UNIT_SAMPLE;
    return all_have(cs, n, REP_UNIT_EPOCH) ? REP_UNIT_EPOCH : REP_UNIT_NONE;
}

const rep_case *rep_cmp_ref(const rep_set *s, int env, const char *study, long size)
{
    const rep_case *cs[MAXV];
    int n = ok_cases(s, env, study, size, cs);
    for (int i = 0; i < n; i++)
        if (!cs[i]->reduced && !cs[i]->extrapolated)
            return cs[i];
    for (int i = 0; i < n; i++)
        if (!strcmp(cs[i]->variant, cs[i]->baseline))
            return cs[i];
    return n ? cs[0] : NULL;
}

double rep_cmp_time(const rep_set *s, int env, const char *study, const rep_case *c)
{
    if (!rep_is_ok(c))
        return NAN;
    rep_unit u = rep_size_unit(s, env, study, c->size);
    if (u != REP_UNIT_NONE)
        return rep_unit_time(c, u);
    const rep_case *ref = rep_cmp_ref(s, env, study, c->size);
    return ref && rep_same_work(c, ref) ? c->median : NAN;
}
