/*
 * params.c: study parameters parsed one way everywhere (see params.h). Integers are read strictly
 * (strtol would take " 8", "+8" and wrap nothing, but a study's (int) cast did: hidden=4294967304 trained
 * 8 units), numbers must be finite, and both must lie in the row's declared range.
 */
#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether text starts like a number: a digit, or '-' then a digit (no space, no '+'). */
static int starts_number(const char *t)
{
    return isdigit((unsigned char)t[0]) || (t[0] == '-' && isdigit((unsigned char)t[1])) ||
           (t[0] == '.' && isdigit((unsigned char)t[1])) || (t[0] == '-' && t[1] == '.');
}

static int parse_int(const sl_param *p, const char *t, sl_param_value *v, char *why, size_t n)
{
    double lo = p->type == SL_PARAM_INT ? p->min : (double)LONG_MIN;
    double hi = p->type == SL_PARAM_INT ? p->max : (double)LONG_MAX;
    char *end;
    errno = 0;
    long x = starts_number(t) ? strtol(t, &end, 10) : 0;
    if (!starts_number(t) || end == t || *end || errno || (double)x < lo || (double)x > hi) {
        snprintf(why, n, "want an integer from %.0f to %.0f", lo, hi);
        return -1;
    }
    v->i = x;
    v->d = (double)x;
    return 0;
}

static int parse_real(const sl_param *p, const char *t, sl_param_value *v, char *why, size_t n)
{
    int ranged = p->type == SL_PARAM_REAL;
    char *end;
    errno = 0;
    double x = starts_number(t) ? strtod(t, &end) : 0;
    if (!starts_number(t) || end == t || *end || errno == ERANGE || !isfinite(x) ||
        (ranged && (x < p->min || x > p->max))) {
        if (ranged)
            snprintf(why, n, "want a number from %g to %g", p->min, p->max);
        else
            snprintf(why, n, "want a finite number");
        return -1;
    }
    v->d = x;
    v->i = 0;
    return 0;
}

/* Whether t is one of "a|b|c". */
static int in_choices(const char *choices, const char *t)
{
    size_t len = strlen(t);
    for (const char *c = choices; *c;) {
        size_t k = strcspn(c, "|");
        if (k == len && strncmp(c, t, len) == 0)
            return 1;
        c += k + (c[k] == '|');
    }
    return 0;
}

int sl_param_parse(const sl_param *p, const char *text, sl_param_value *v, char *why, size_t n)
{
    const char *t = text ? text : "";
    if (p->type == SL_PARAM_INT)
        return parse_int(p, t, v, why, n);
    if (p->type == SL_PARAM_REAL)
        return parse_real(p, t, v, why, n);
    if (p->type != SL_PARAM_TEXT) {
        snprintf(why, n, "the study declares an unknown type %d", p->type);
        return -1;
    }
    if (p->choices && !in_choices(p->choices, t)) {
        snprintf(why, n, "want one of %s", p->choices);
        return -1;
    }
    return 0;
}

const sl_param *sl_param_row(const sl_study *s, const char *name)
{
    for (int i = 0; s && i < s->n_params; i++)
        if (strcmp(s->params[i].name, name) == 0)
            return &s->params[i];
    return NULL;
}

const char *sl_param_str(const sl_opts *o, const sl_study *s, const char *name)
{
    /* The last --param wins, as with any repeated command-line option. */
    for (int i = o ? o->n_params - 1 : -1; i >= 0; i--)
        if (strcmp(o->param_names[i], name) == 0)
            return o->param_values[i];
    const sl_param *p = sl_param_row(s, name);
    if (p)
        return p->default_value;
    /* A study asking for a parameter it never declared is a bug in the study, not bad user input. */
    fprintf(stderr, "speedlab: study '%s' reads parameter '%s' that it does not declare in its params "
            "table (experiments/studies/%s/)\n", s ? s->name : "?", name, s ? s->name : "?");
    abort();
}

/* The value as a number of the row's kind, range aside: `speedlab run` checked every range before the
 * first case, and a study called directly (tests) checks its own ranges in setup, on the long or double
 * (never on an int or float it was narrowed to). Text that is no number at all: say which, and exit 2
 * like any bad flag. */
static sl_param_value lookup(const sl_opts *o, const sl_study *s, const char *name, int as_real)
{
    const char *text = sl_param_str(o, s, name);
    const sl_param *p = sl_param_row(s, name);
    sl_param any = {.name = name, .type = SL_PARAM_TEXT}; /* TEXT: no range (parse_int, parse_real) */
    sl_param_value v = {0, 0};
    char why[160];
    int rc = as_real && p->type != SL_PARAM_INT ? parse_real(&any, text, &v, why, sizeof why)
                                                : parse_int(&any, text, &v, why, sizeof why);
    if (rc != 0) {
        fprintf(stderr, "speedlab: --param %s=%s (study %s): %s (default %s)\n", name, text, s->name, why,
                p->default_value ? p->default_value : "none");
        exit(2);
    }
    return v;
}

long sl_param_long(const sl_opts *o, const sl_study *s, const char *name)
{
    const sl_param *p = sl_param_row(s, name);
    if (p && p->type == SL_PARAM_REAL) {
        fprintf(stderr, "speedlab: study '%s' reads real parameter '%s' as an integer\n", s->name, name);
        abort();
    }
    return lookup(o, s, name, 0).i;
}

double sl_param_double(const sl_opts *o, const sl_study *s, const char *name)
{
    return lookup(o, s, name, 1).d;
}

/* The shortest %g text that reads back as exactly x; -0 is 0 (one value, one text). */
static void shortest(double x, char *out, size_t n)
{
    if (x == 0)
        x = 0;
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, n, "%.*g", prec, x);
        if (strtod(out, NULL) == x)
            return;
    }
}

void sl_param_canonical(const sl_opts *o, const sl_study *s, const sl_param *p, char *out, size_t n)
{
    const char *text = sl_param_str(o, s, p->name);
    sl_param_value v;
    char why[160];
    if (p->type == SL_PARAM_TEXT || sl_param_parse(p, text, &v, why, sizeof why) != 0)
        snprintf(out, n, "%s", text ? text : "");
    else if (p->type == SL_PARAM_INT)
        snprintf(out, n, "%ld", v.i);
    else
        shortest(v.d, out, n);
}

int sl_params_check(const sl_study *s, int n, const char *const *names, const char *const *values)
{
    for (int k = 0; k < n; k++) {
        const sl_param *p = sl_param_row(s, names[k]);
        if (!p)
            continue; /* another chosen study's parameter (the CLI checked that one has it) */
        sl_param_value v;
        char why[160];
        if (sl_param_parse(p, values[k], &v, why, sizeof why) != 0) {
            fprintf(stderr, "speedlab: --param %s=%s (study %s): %s (default %s)\n", names[k], values[k],
                    s->name, why, p->default_value ? p->default_value : "none");
            return -1;
        }
    }
    return 0;
}

long sl_size_param(const sl_study *s, int n, const char *const *names, const char *const *values)
{
    const sl_param *p = s->size_name ? sl_param_row(s, s->size_name) : NULL;
    const char *text = NULL;
    for (int i = 0; p && i < n; i++)
        if (!strcmp(names[i], s->size_name))
            text = values[i];
    sl_param_value v;
    char why[128];
    if (!text || p->type != SL_PARAM_INT || sl_param_parse(p, text, &v, why, sizeof why) != 0)
        return -1;
    return v.i;
}
