/* reports/findings.c: REPORT.md's "Findings", the first thing a reader sees: per study and machine, one
 * line of sentences a reader can quote, generated from the records:
 *
 *   entropy_mi at B=65536: simd is 2.7× naive; threads add 2.0× (omp over simd); factorized is 26× naive
 *   (10× over simd); omp runs at 70 % of the roofline; the fastest framework, jax, is 3.5× slower than
 *   factorized_omp; inversion: blas is slower than omp (0.80×).
 *
 * At the study's largest size where every compared variant (the C variants that ran somewhere;
 * framework baselines apart) has a time to compare (units.c), else the size where most do. Each
 * variant against the baseline, and what an optimisation bought over the variant it builds on (record
 *  field builds_on: threads when an OpenMP form adds the trait "threaded", the GPU when it runs on one); the best
 * fraction of the roofline only with a calibration; the fastest framework only where framework
 * baselines ran; inversions where an optimisation is slower than what it builds on. Nothing is said
 * where the records hold nothing to say it from. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64

/* A ratio as a reader quotes it: 26×, 2.7×, 0.58×. */
static const char *fx(char *buf, size_t n, double x)
{
    snprintf(buf, n, x >= 10 ? "%.0f×" : x >= 1 ? "%.1f×" : "%.2f×", x);
    return buf;
}

/* A case's name with its mark (naive†). */
static const char *nm(char *buf, size_t n, const rep_case *c)
{
    snprintf(buf, n, "%s%s%s", c->variant, c->reduced ? "†" : "", c->extrapolated ? "‡" : "");
    return buf;
}

static int has_trait(const rep_case *c, const char *trait)
{
    json_t *traits = json_object_get(c->rec, "traits"), *t;
    size_t i;
    json_array_foreach(traits, i, t)
        if (json_is_string(t) && !strcmp(json_string_value(t), trait))
            return 1;
    return 0;
}

/* A study's line being written: its clauses, "; " apart. */
typedef struct line {
    FILE *f;
    int n;
} line;

static void clause(line *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void clause(line *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(L->n++ ? "; " : "", L->f);
    vfprintf(L->f, fmt, ap);
    va_end(ap);
}

/* The study's compared variants: C variants (no framework baseline) with a comparable time at some size. */
static int compared_variants(const rep_set *s, int env, const char *study, const char **out)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS), n = 0;
    for (int vi = 0; vi < nv; vi++) {
        int ran = 0;
        for (int si = 0; si < ns && !ran; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            ran = isfinite(rep_cmp_time(s, env, study, c)) && !rep_case_external(c);
        }
        if (ran)
            out[n++] = vs[vi];
    }
    return n;
}

/* The largest size where every compared variant has a time to compare, else the one where most do (the
 * larger on a tie); -1 when no size has two. */
static long findings_size(const rep_set *s, int env, const char *study, const char **vs, int nv)
{
    long sizes[MAXS], best = -1;
    int ns = rep_sizes(s, env, study, sizes, MAXS), most = 1;
    for (int si = 0; si < ns; si++) {
        int k = 0;
        for (int vi = 0; vi < nv; vi++)
            k += isfinite(rep_cmp_time(s, env, study, rep_find(s, env, study, vs[vi], sizes[si])));
        if (k >= most && k >= 2)
            most = k, best = sizes[si];
    }
    return best;
}

/* What variant c bought: against the baseline, and over the variant it builds on. Inversions (slower than
 * what it builds on) are kept for the end of the line, in inv. */
static void bought(line *L, FILE *inv, const rep_set *s, const rep_case *c, const rep_case *base)
{
    char a[64], b[64], x[32], y[32];
    const rep_case *on = c->builds_on ? rep_find(s, c->env, c->study, c->builds_on, c->size) : NULL;
    double tc = rep_cmp_time(s, c->env, c->study, c), tb = rep_cmp_time(s, c->env, c->study, base);
    double to = rep_cmp_time(s, c->env, c->study, on);
    if (!isfinite(to))
        on = NULL;
    if (on && to < tc)
        fprintf(inv, "; inversion: %s is slower than %s (%s)", nm(a, sizeof a, c), nm(b, sizeof b, on),
                fx(x, sizeof x, to / tc));
    else if ((!on || on == base) && isfinite(tb))
        clause(L, "%s is %s %s", nm(a, sizeof a, c), fx(x, sizeof x, tb / tc), nm(b, sizeof b, base));
    else if (on && has_trait(c, "threaded") && !has_trait(on, "threaded") && strstr(c->variant, "omp"))
        /* an OpenMP form of what it builds on: threads are all it adds (blas, also threaded, changes the
         * algorithm's code too, so it gets the general clause) */
        clause(L, "threads add %s (%s over %s)", fx(x, sizeof x, to / tc), nm(a, sizeof a, c), nm(b, sizeof b, on));
    else if (on && c->gpu && !on->gpu)
        clause(L, "the GPU adds %s (%s over %s)", fx(x, sizeof x, to / tc), nm(a, sizeof a, c), nm(b, sizeof b, on));
    else if (on && isfinite(tb))
        clause(L, "%s is %s %s (%s over %s)", nm(a, sizeof a, c), fx(x, sizeof x, tb / tc), base->variant,
               fx(y, sizeof y, to / tc), on->variant);
    else if (on)
        clause(L, "%s is %s %s", nm(a, sizeof a, c), fx(x, sizeof x, to / tc), nm(b, sizeof b, on));
}

/* The case closest to its roofline bound on the CPU, and on the GPU (its C variants and framework rows,
 * against the device's ceilings), where the machine has a calibration. A case above its bound is never
 * quoted as a fraction (over_bound names it as an error). */
static void roofline(line *L, const rep_set *s, const rep_case *const *cs, int n, int env, const char *study,
                     long size)
{
    const rep_case *all[2 * MAXV], *best[2] = {NULL, NULL};
    const char *vs[MAXV];
    double top[2] = {NAN, NAN};
    int na = 0, nv = rep_variants(s, env, study, vs, MAXV);
    for (int i = 0; i < n; i++)
        all[na++] = cs[i];
    for (int vi = 0; vi < nv; vi++) { /* torch-cuda, jax-gpu: compared with the suite's GPU rows here */
        const rep_case *c = rep_find(s, env, study, vs[vi], size);
        if (c && c->gpu && rep_case_external(c) && rep_is_ok(c))
            all[na++] = c;
    }
    for (int i = 0; i < na; i++) {
        double fr = rep_fraction_of_bound(s, all[i]);
        int g = all[i]->gpu != 0;
        if (fr <= 1 && (!best[g] || fr > top[g]))
            best[g] = all[i], top[g] = fr;
    }
    char a[64];
    if (best[0])
        clause(L, "%s runs at %.0f %% of the roofline", nm(a, sizeof a, best[0]), 100 * top[0]);
    if (best[1])
        clause(L, "%s runs at %.0f %% of the GPU's roofline", nm(a, sizeof a, best[1]), 100 * top[1]);
}

/* Every case of the study on this machine (framework rows, every size) above its roofline bound, in one
 * clause: an error of its work count or of the ceiling, said as such. */
static void over_bound(line *L, const rep_set *s, int env, const char *study)
{
    char a[64], *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    int n = 0;
    for (int i = 0; i < s->ncases && m; i++) {
        const rep_case *c = &s->cases[i];
        double fr = c->env == env && !strcmp(c->study, study) ? rep_fraction_of_bound(s, c) : NAN;
        if (fr > 1.0)
            fprintf(m, "%s%s at %s=%ld (%.*f %%)", n++ ? ", " : "", nm(a, sizeof a, c), c->size_name, c->size,
                    fr < 1.01 ? 2 : 0, 100 * fr);
    }
    if (m)
        fclose(m);
    if (n)
        clause(L, "error: %s above %s roofline bound (%s): a work count or a ceiling is wrong, not a measurement",
               n > 1 ? "cases" : "a case", n > 1 ? "their" : "its", text);
    free(text);
}

/* The fastest framework baseline against the fastest C variant, where framework baselines ran. */
static void frameworks(line *L, const rep_set *s, int env, const char *study, long size)
{
    const rep_case *fw = rep_best_framework(s, env, study, size), *c = rep_best_c(s, env, study, size);
    if (!fw || !c)
        return;
    char a[64], b[64], x[32], d[160];
    double r = rep_cmp_time(s, env, study, fw) / rep_cmp_time(s, env, study, c);
    rep_framework_desc(d, sizeof d, fw);
    clause(L, "the fastest framework, %s%s%s%s, is %s %s than %s", nm(a, sizeof a, fw), d[0] ? " (" : "", d,
           d[0] ? ")" : "", fx(x, sizeof x, r >= 1 ? r : 1 / r), r >= 1 ? "slower" : "faster", nm(b, sizeof b, c));
}

/* The study's clauses at a size into L (inversions last). */
/* The variants the planner ran at another level than their run's (the record's impl), named with it. */
static void planner_moved(line *L, const rep_set *s, const rep_case *const *cs, int n)
{
    char names[512] = "";
    int k = 0, len = 0;
    for (int i = 0; i < n; i++)
        if (rep_impl_moved(s, cs[i]) && len < (int)sizeof names)
            len += snprintf(names + len, sizeof names - (size_t)len, "%s%s (%s)", k++ ? ", " : "", cs[i]->variant,
                            rep_impl(cs[i], "isa"));
    if (k)
        clause(L, "the planner ran %s at a narrower level than %s, where `speedlab tune` timed %s faster", names,
               s->envs[cs[0]->env].isa, k == 1 ? "it" : "them");
}

static void study_clauses(line *L, const rep_set *s, int env, const char *study, const char **vs, int nv,
                          long size)
{
    const rep_case *cs[MAXV], *base = NULL;
    int n = 0;
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *c = rep_find(s, env, study, vs[vi], size);
        if (isfinite(rep_cmp_time(s, env, study, c)))
            cs[n++] = c;
    }
    base = n ? rep_find(s, env, study, cs[0]->baseline, size) : NULL;
    char *inv = NULL;
    size_t len = 0;
    FILE *fi = open_memstream(&inv, &len);
    for (int i = 0; i < n && fi; i++)
        if (!base || cs[i] != base)
            bought(L, fi, s, cs[i], base);
    roofline(L, s, cs, n, env, study, size);
    over_bound(L, s, env, study);
    frameworks(L, s, env, study, size);
    planner_moved(L, s, cs, n);
    if (fi)
        fclose(fi);
    if (inv && len)
        fputs(L->n ? inv : inv + 2, L->f), L->n++;
    free(inv);
}

/* One study's line; 1 when written. */
static int study_line(FILE *f, const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    int nv = compared_variants(s, env, study, vs);
    long size = findings_size(s, env, study, vs, nv);
    if (size < 0)
        return 0;
    char *text = NULL;
    size_t len = 0;
    line L = {open_memstream(&text, &len), 0};
    if (!L.f)
        return 0;
    study_clauses(&L, s, env, study, vs, nv, size);
    fclose(L.f);
    if (L.n) {
        const rep_case *any = rep_cmp_ref(s, env, study, size);
        const char *unit = rep_unit_name(rep_size_unit(s, env, study, size));
        char *page = rep_path_name(study);
        fprintf(f, "- [**%s**](%s/%s.md)%s%s at %s=%ld%s%s: %s.\n", study, s->envs[env].slug, page,
                s->nenvs > 1 ? " on " : "", s->nenvs > 1 ? s->envs[env].name : "", any->size_name, size,
                unit ? ", per " : "", unit ? unit : "", text);
        free(page);
    }
    free(text);
    return L.n > 0;
}

void rep_findings_section(FILE *f, const rep_set *s)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    int n = 0;
    for (int e = 0; e < s->nenvs && m; e++) {
        const char *studies[64];
        int nst = rep_studies(s, e, studies, 64);
        for (int i = 0; i < nst; i++)
            n += study_line(m, s, e, studies[i]);
    }
    if (m)
        fclose(m);
    if (n)
        fprintf(f, "## Findings\n\n"
                   "Per study, at its largest size where every variant compared ran: each variant against the "
                   "baseline, and what an optimisation bought over the variant it builds on (threads, the GPU); "
                   "the fraction of the roofline reached where the machine is calibrated; the fastest framework "
                   "where framework baselines ran; inversions. † reduced run, ‡ extrapolated: compared per "
                   "sample or per epoch where the records allow, never by total time with a full run.\n\n%s\n",
                text);
    free(text);
}
