/* reports/frameworks.c: framework baselines (records whose traits hold "external", docs/baselines.md)
 * beside the C variants: which case is one, the best framework at a size, and REPORT.md's line per
 * study comparing the best C variant with the best framework measured in the same run. */
#include <math.h>
#include <string.h>

#include "rep.h"

int rep_case_external(const rep_case *c)
{
    json_t *traits = c && c->rec ? json_object_get(c->rec, "traits") : NULL, *t;
    size_t i;
    json_array_foreach(traits, i, t)
        if (json_is_string(t) && strcmp(json_string_value(t), "external") == 0)
            return 1;
    return 0;
}

/* "torch 2.15.0, khatri-rao form": the framework's version and the form that ran (baseline_form), as
 * much as the record says; "" for a record with neither. */
const char *rep_framework_desc(char *buf, size_t n, const rep_case *c)
{
    json_t *e = json_object_get(c->rec, "external");
    const char *fw = json_string_value(json_object_get(e, "framework"));
    const char *ver = json_string_value(json_object_get(e, "version"));
    const char *form = json_string_value(json_object_get(c->rec, "baseline_form"));
    const char *by = json_string_value(json_object_get(e, "form_chosen_by"));
    int len = fw && ver ? snprintf(buf, n, "%s %s", fw, ver) : snprintf(buf, n, "%s", "");
    if (form && len >= 0 && (size_t)len < n) /* a form --param form= forced is not the fastest one */
        snprintf(buf + len, n - (size_t)len, "%s%s form%s", len ? ", " : "", form,
                 by && strcmp(by, "fastest") ? " (forced)" : "");
    return buf;
}

/* "numpy 1.24.2, torch 2.15.0": each framework's version among the study's ok baseline cases, first seen
 * first ("" when none says); a framework seen at two versions is named twice. */
const char *rep_framework_versions(char *buf, size_t n, const rep_set *s, int env, const char *study)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || strcmp(c->study, study) != 0 || !rep_case_external(c) || !rep_is_ok(c))
            continue;
        json_t *e = json_object_get(c->rec, "external");
        const char *fw = json_string_value(json_object_get(e, "framework"));
        const char *ver = json_string_value(json_object_get(e, "version"));
        char one[128];
        snprintf(one, sizeof one, "%s %s", fw ? fw : "?", ver ? ver : "?");
        if (!fw || !ver || strstr(buf, one)) /* a short list: a substring search is enough */
            continue;
        int w = snprintf(buf + len, n - len, "%s%s", len ? ", " : "", one);
        if (w < 0 || (size_t)w >= n - len)
            break;
        len += (size_t)w;
    }
    return buf;
}

/* The fastest ok case at `size` that is (want_external = 1) or is not (0) a framework baseline, on the
 * GPU (want_gpu = 1) or the CPU (0); compared as units.c says (per unit of work where a reduced run
 * stands beside full ones). NULL when there is none. */
static const rep_case *best_of(const rep_set *s, int env, const char *study, long size, int want_external,
                               int want_gpu)
{
    const char *vs[64];
    int nv = rep_variants(s, env, study, vs, 64);
    const rep_case *best = NULL;
    double tb = NAN;
    for (int i = 0; i < nv; i++) {
        const rep_case *c = rep_find(s, env, study, vs[i], size);
        if (!rep_is_ok(c) || !c->gpu != !want_gpu || rep_case_external(c) != want_external)
            continue;
        double tc = rep_cmp_time(s, env, study, c); /* NAN: did other work, not comparable (units.c) */
        if (isfinite(tc) && (!best || tc < tb))
            best = c, tb = tc;
    }
    return best;
}

/* CPU only: a GPU variant is compared in the crossover table, and with the GPU frameworks by gpu_line */
const rep_case *rep_best_framework(const rep_set *s, int env, const char *study, long size)
{
    return best_of(s, env, study, size, 1, 0);
}

const rep_case *rep_best_c(const rep_set *s, int env, const char *study, long size)
{
    return best_of(s, env, study, size, 0, 0);
}

int rep_has_frameworks(const rep_set *s, int env, const char *study)
{
    for (int i = 0; i < s->ncases; i++)
        if (s->cases[i].env == env && !s->cases[i].replaced && strcmp(s->cases[i].study, study) == 0 &&
            rep_case_external(&s->cases[i]) && rep_is_ok(&s->cases[i]))
            return 1;
    return 0;
}

/* "- framework ISA above the kernels' level: numpy at B=256: above the kernels' sse4.2: openblas
 * SkylakeX (avx512)": one line per framework row whose record's external.isa has a mismatch (the program
 * reported running above the level the kernels were held at, docs/baselines.md "Instruction-set level"). */
static void isa_mismatch_lines(FILE *f, const rep_set *s, int env, const char *study)
{
    const char *seen[64];
    int nseen = 0;
    for (int i = 0; i < s->ncases && nseen < 64; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || c->replaced || strcmp(c->study, study) != 0 || !rep_case_external(c))
            continue;
        const char *m = json_string_value(
            json_object_get(json_object_get(json_object_get(c->rec, "external"), "isa"), "mismatch"));
        int dup = 0;
        for (int k = 0; k < nseen; k++)
            dup |= strcmp(seen[k], c->variant) == 0;
        if (!m || dup)
            continue;
        seen[nseen++] = c->variant;
        fprintf(f, "- framework ISA above the kernels' level: **%s** at %s=%ld: %s\n", c->variant,
                c->size_name, c->size, m);
    }
}

/* "- best C variant against the best framework at B=65536: simd 1.2 ms, torch 3.4 ms (1 thread): 2.8×
 * faster", at the largest size where both ran, on the CPU; with gpu = 1 "- best GPU variant against the
 * best GPU framework ...", the suite's GPU rows against torch-cuda and jax-gpu. Where no size has both:
 * the CPU line says so, the GPU line is left out. */
static void framework_line(FILE *f, const rep_set *s, int env, const char *study, int gpu)
{
    long sizes[64];
    int ns = rep_sizes(s, env, study, sizes, 64);
    for (int i = ns - 1; i >= 0; i--) {
        const rep_case *c = best_of(s, env, study, sizes[i], 0, gpu), *fw = best_of(s, env, study, sizes[i], 1, gpu);
        if (!c || !fw)
            continue;
        char tc[64], tf[64], desc[160];
        double xc = rep_cmp_time(s, env, study, c), xf = rep_cmp_time(s, env, study, fw), r = xf / xc;
        const char *unit = rep_unit_name(rep_size_unit(s, env, study, sizes[i]));
        rep_fmt_time(tc, sizeof tc, xc);
        rep_fmt_time(tf, sizeof tf, xf);
        rep_framework_desc(desc, sizeof desc, fw);
        if (gpu)
            fprintf(f, "- best GPU variant against the best GPU framework on this machine at %s=%ld%s%s: **%s** %s, "
                    "**%s** %s (%s): the suite's is %.3g× %s\n",
                    c->size_name, c->size, unit ? ", per " : "", unit ? unit : "", c->variant, tc, fw->variant, tf,
                    desc, r >= 1 ? r : 1 / r, r >= 1 ? "faster" : "slower");
        else
            fprintf(f, "- best C variant against the best framework on this machine at %s=%ld%s%s: **%s** %s (%d "
                    "thread%s), **%s** %s (%s%s%d thread%s, its fastest setting): the C variant is %.3g× %s\n",
                    c->size_name, c->size, unit ? ", per " : "", unit ? unit : "", c->variant, tc, c->threads,
                    c->threads == 1 ? "" : "s", fw->variant, tf, desc, desc[0] ? ", " : "", fw->threads,
                    fw->threads == 1 ? "" : "s", r >= 1 ? r : 1 / r, r >= 1 ? "faster" : "slower");
        return;
    }
    if (!gpu)
        fprintf(f, "- frameworks on the CPU: no size where a C variant and a framework baseline both ran ok\n");
}

/* "- frameworks held at the kernels' level (v3), as each reported: numpy avx2, openblas avx2, torch
 * avx2, jax capped at avx2": what the baselines reported running at (jax: the cap it was given), each framework once, where the run held them at a level
 * (external.isa.level); nothing where it did not. */
static void isa_held_line(FILE *f, const rep_set *s, int env, const char *study)
{
    char list[512] = "";
    const char *level = NULL;
    size_t len = 0;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || strcmp(c->study, study) != 0 || !rep_case_external(c) || !rep_is_ok(c))
            continue;
        json_t *isa = json_object_get(json_object_get(c->rec, "external"), "isa"), *fw;
        const char *lv = json_string_value(json_object_get(isa, "level")), *name;
        if (!lv)
            continue;
        level = lv;
        json_object_foreach(isa, name, fw) {
            const char *at = json_string_value(json_object_get(fw, "isa"));
            char one[96];
            /* XLA does not say what it generated: its entry is the cap it was given */
            snprintf(one, sizeof one, "%s %s%s", name, json_object_get(fw, "max_isa") ? "capped at " : "",
                     at ? at : "");
            if (!at || strstr(list, one) || len >= sizeof list)
                continue;
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", one);
        }
    }
    if (level)
        fprintf(f, "- frameworks held at the kernels' level (%s), as each reported: %s\n", level,
                list[0] ? list : "(none reported a level)");
}

void rep_framework_line(FILE *f, const rep_set *s, int env, const char *study)
{
    if (!rep_has_frameworks(s, env, study))
        return;
    framework_line(f, s, env, study, 0);
    framework_line(f, s, env, study, 1);
    isa_held_line(f, s, env, study);
    isa_mismatch_lines(f, s, env, study);
}
