/* reports/inversions.c: variants slower than the variant they build on.
 *
 * A study declares which variant each one is an optimisation of (study.h's builds_on, the record field
 * builds_on): simd of naive, omp of simd. When such a variant's median is slower than its base's at the
 * same size on the same machine, the optimisation does not pay there: an AVX-512 kernel lowered
 * piecewise on an AVX2 machine, threads that cost more to start than the work they share. The report
 * says so beside the speedup table and in REPORT.md's summary, so that a reader sees it at once. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64

const char rep_inversion_legend[] =
    "inversions: each variant against the variant it builds on (record field builds_on), median against "
    "median, at the same size on this machine, when both did the same work; at small sizes starting "
    "threads or copying to a GPU can cost more than the work shared: an observation about this machine "
    "and size, like any other.";

/* work.scale, 1 when absent: the share of the study's declared work the case did. */
static double work_scale(const rep_case *c)
{
    double x = rep_jnum(json_object_get(c->rec, "work"), "scale");
    return isfinite(x) ? x : 1.0;
}

/* Two cases are compared only when they did the same work: the same reduction (quick mode shrinks every
 * variant alike) and the same scale. mlp's naive trains 1 of 20 epochs: its time is not a whole run's,
 * and the report does not extrapolate it. */
static int same_work(const rep_case *a, const rep_case *b)
{
    return a->reduced == b->reduced && rep_same_opt(a->reduced_reason, b->reduced_reason) &&
           work_scale(a) == work_scale(b);
}

/* One sentence for variant c, slower than base b. */
static char *inversion_line(const rep_set *s, const rep_case *c, const rep_case *b)
{
    const rep_env *e = &s->envs[c->env];
    /* overlapping interquartile ranges: the medians' order may be the noise's */
    int overlap = c->p25 <= b->p75;
    return rep_printf("inversion: %s is %.3g× %s at %s=%ld on %s: an optimisation that does not pay here%s",
                      c->variant, b->median / c->median, b->variant, c->size_name, c->size,
                      e->isa ? e->isa : e->name, overlap ? " (the IQRs overlap: may be noise)" : "");
}

int rep_inversions(const rep_set *s, int env, const char *study, char **lines, int max)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS), n = 0;
    for (int si = 0; si < ns; si++)
        for (int vi = 0; vi < nv && n < max; vi++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (!rep_is_ok(c) || !c->builds_on)
                continue;
            const rep_case *b = rep_find(s, env, study, c->builds_on, sizes[si]);
            if (rep_is_ok(b) && same_work(b, c) && c->median > b->median)
                lines[n++] = inversion_line(s, c, b);
        }
    return n;
}
