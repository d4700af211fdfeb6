/* reports/inversions.c: variants slower than the variant they build on.
 *
 * A study declares which variant each one is an optimisation of (study.h's builds_on, the record field
 * builds_on): simd of naive, omp of simd. When such a variant's median is slower than its base's at the
 * same size on the same machine, the optimisation does not pay there: an AVX-512 kernel lowered
 * piecewise on an AVX2 machine, threads that cost more to start than the work they share. The report
 * says so beside the speedup table and in REPORT.md's summary, so that a reader sees it at once. Pairs
 * are compared as units.c says: a reduced run beside a full one per sample or epoch, or not at all. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64

const char rep_inversion_legend[] =
    "inversions: each variant against the variant it builds on (record field builds_on), median against "
    "median (per sample or epoch where a reduced run stands beside full ones), at the same size on this "
    "machine; at small sizes starting threads or copying to a GPU can cost more than the work shared: an "
    "observation about this machine and size, like any other.";

/* One sentence for variant c, slower than base b; tc and tb their comparison times (units.c). */
static char *inversion_line(const rep_set *s, const rep_case *c, const rep_case *b, double tc, double tb)
{
    const rep_env *e = &s->envs[c->env];
    const char *unit = rep_unit_name(rep_size_unit(s, c->env, c->study, c->size));
    /* overlapping interquartile ranges of the times compared: the order may be the noise's */
    int overlap = !unit && c->p25 <= b->p75;
    return rep_printf("inversion: %s is %.3g× %s%s%s at %s=%ld on %s: an optimisation that does not pay here%s",
                      c->variant, tb / tc, b->variant, unit ? " per " : "", unit ? unit : "", c->size_name, c->size,
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
            double tc = rep_cmp_time(s, env, study, c), tb = rep_cmp_time(s, env, study, b);
            if (isfinite(tc) && isfinite(tb) && tc > tb)
                lines[n++] = inversion_line(s, c, b, tc, tb);
        }
    return n;
}
