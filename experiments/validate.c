/*
 * validate.c: the registry self-check. A variant is one row of its study's table; a row left incomplete
 * (no functions, a builds_on that names nothing, a GPU variant not marked SL_DEVICE, an OpenMP one not
 * marked SL_THREADED) is refused here, at
 * start-up, with the study's and the variant's names, rather than crashing in a case later.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "params.h"
#include "study.h"
#include "validate.h"

/* The requirements study.h documents; those starting "cu" need a GPU. */
static const char *const known_requires[] = {"openmp", "blas", "onednn", "cuda", "cublas", "cudnn", "avx512bf16"};

static int requires_known(const char *r)
{
    if (strncmp(r, "python:", 7) == 0 && r[7]) /* an external baseline's module (docs/baselines.md) */
        return 1;
    for (size_t i = 0; i < sizeof known_requires / sizeof *known_requires; i++)
        if (strcmp(r, known_requires[i]) == 0)
            return 1;
    return 0;
}

static int find_row(const sl_study *s, const char *name)
{
    for (int v = 0; v < s->n_variants; v++)
        if (s->variants[v].name && strcmp(s->variants[v].name, name) == 0)
            return v;
    return -1;
}

__attribute__((format(printf, 4, 5))) static int refuse(char *why, size_t n, const sl_study *s,
                                                         const char *fmt, ...)
{
    int len = snprintf(why, n, "study '%s', ", s->name ? s->name : "(unnamed)");
    if (len >= 0 && (size_t)len < n) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why + len, n - (size_t)len, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* What is wrong with row v, or NULL. */
static const char *row_problem(const sl_study *s, int v, char *buf, size_t n)
{
    const sl_variant *r = &s->variants[v];
    /* a GPU row: a cuda* requirement, or a framework baseline on its device (python:torch@cuda) */
    int gpu = r->requires && (strncmp(r->requires, "cu", 2) == 0 ||
                              (strncmp(r->requires, "python:", 7) == 0 && strchr(r->requires, '@')));
    if (!r->description || !*r->description)
        return "no description";
    if (!r->kernels)
        return "no functions (the row's .kernels is NULL)";
    if (r->requires && !requires_known(r->requires)) {
        snprintf(buf, n, "unknown requirement '%s' (study.h lists openmp, blas, cuda, cublas, cudnn, "
                 "avx512bf16, python:MODULE)",
                 r->requires);
        return buf;
    }
    if (gpu != !!(r->traits & SL_DEVICE))
        return gpu ? "requires a GPU but lacks the SL_DEVICE trait" : "SL_DEVICE but requires no cuda* nor python:MODULE@DEVICE";
    /* an external baseline is run by the program, never by the study's run: the kind must be declared */
    int python = r->requires && strncmp(r->requires, "python:", 7) == 0;
    if (python != !!(r->traits & SL_EXTERNAL))
        return python ? "requires python:* but lacks the SL_EXTERNAL trait"
                      : "SL_EXTERNAL but does not require python:MODULE";
    if (python && (!s->external_inputs || !s->external_outputs))
        return "SL_EXTERNAL but the study has no external_inputs or external_outputs callback";
    /* an OpenMP variant without the trait would run, and be recorded, on one thread */
    if (r->requires && strcmp(r->requires, "openmp") == 0 && !(r->traits & SL_THREADED))
        return "requires openmp but lacks the SL_THREADED trait (it would get one thread)";
    if (r->builds_on && (find_row(s, r->builds_on) < 0 || strcmp(r->builds_on, r->name) == 0)) {
        snprintf(buf, n, "builds_on '%s' names no other variant of the study", r->builds_on);
        return buf;
    }
    if (find_row(s, r->name) != v)
        return "its name is taken by an earlier row";
    return s->incomplete ? s->incomplete(r) : NULL;
}

/* Every parameter row named, once, with a default that parses as its type and lies in its range (a
 * default that did not would fail every case that does not give the parameter). */
static int params_problem(const sl_study *s, char *why, size_t n)
{
    for (int i = 0; i < s->n_params; i++) {
        const sl_param *p = &s->params[i];
        char buf[160];
        sl_param_value v;
        if (!p->name || !*p->name)
            return refuse(why, n, s, "parameter row %d: no name", i);
        if (sl_param_row(s, p->name) != p)
            return refuse(why, n, s, "parameter '%s': declared twice", p->name);
        if (!p->default_value)
            return refuse(why, n, s, "parameter '%s': no default", p->name);
        if ((p->type == SL_PARAM_INT || p->type == SL_PARAM_REAL) && !(p->min <= p->max))
            return refuse(why, n, s, "parameter '%s': range %g to %g is empty", p->name, p->min, p->max);
        if (sl_param_parse(p, p->default_value, &v, buf, sizeof buf) != 0)
            return refuse(why, n, s, "parameter '%s': default '%s': %s", p->name, p->default_value, buf);
    }
    return 0;
}

int sl_study_validate(const sl_study *s, char *why, size_t n)
{
    if (!s->name || !*s->name)
        return refuse(why, n, s, "has no name");
    if (!s->variants || s->n_variants < 1)
        return refuse(why, n, s, "has no variants");
    if (!s->run || !s->setup || !s->teardown)
        return refuse(why, n, s, "has no %s callback", !s->run ? "run" : !s->setup ? "setup" : "teardown");
    if (!s->sizes || s->n_sizes < 1)
        return refuse(why, n, s, "has no sizes");
    for (int v = 0; v < s->n_variants; v++) {
        const char *name = s->variants[v].name;
        char buf[256];
        if (!name || !*name)
            return refuse(why, n, s, "row %d: no name", v);
        const char *p = row_problem(s, v, buf, sizeof buf);
        if (p)
            return refuse(why, n, s, "variant '%s': %s", name, p);
    }
    if (s->baseline && find_row(s, s->baseline) < 0)
        return refuse(why, n, s, "baseline '%s' names no variant", s->baseline);
    return params_problem(s, why, n);
}

int sl_registry_check(const sl_study *const *studies, int n_studies)
{
    char why[512];
    for (int i = 0; i < n_studies; i++)
        if (sl_study_validate(studies[i], why, sizeof why) != 0) {
            fprintf(stderr, "speedlab: the registry is incomplete: %s (experiments/study.h says what a "
                    "row needs)\n", why);
            return -1;
        }
    return 0;
}

/* Names in the order of enum sl_trait's bits. */
static const char *const trait_names[] = {"threaded", "device", "reduced", "external"};

json_t *sl_traits_json(unsigned traits)
{
    json_t *a = json_array();
    for (unsigned b = 0; b < sizeof trait_names / sizeof *trait_names; b++)
        if (traits & (1u << b))
            json_array_append_new(a, json_string(trait_names[b]));
    return a;
}
