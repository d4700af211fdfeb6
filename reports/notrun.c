/* reports/notrun.c: the variants of a study that were not run (status unavailable or skipped), each
 * once, in a short table: the variant, why (the status and the record's error, cut to its first clause
 * when long) and what to install or pass to run it (the error from its "install", "pass" or "set" on,
 * or else the whole error). Every other table and figure holds measured rows only: a fresh
 * machine, without a GPU or the Python baselines, gets this table once per study instead of an
 * "unavailable" row per variant at every size. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64
#define LONG_ERROR 80 /* characters: an error longer than this is cut to its first clause */

int rep_not_run(const rep_case *c)
{
    return c && (!strcmp(c->status, "unavailable") || !strcmp(c->status, "skipped"));
}

/* The first clause of a long error: cut at "; ", then " (", then ", " while it is still long. */
static void first_clause(char *buf, size_t n, const char *err)
{
    static const char *const seps[] = {"; ", " (", ", "};
    snprintf(buf, n, "%s", err);
    for (size_t i = 0; i < sizeof seps / sizeof *seps && strlen(buf) > LONG_ERROR; i++) {
        char *p = strstr(buf, seps[i]);
        if (p && p > buf)
            *p = 0;
    }
}

/* Where the error says what to do: the word install, pass or set (a whole word), or NULL. */
static const char *remedy_start(const char *err)
{
    static const char *const verbs[] = {"install", "pass", "set"};
    for (const char *p = err; *p; p++) {
        if (p > err && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '-'))
            continue;
        for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++) {
            size_t k = strlen(verbs[i]);
            if (!strncasecmp(p, verbs[i], k) && (p[k] == ' ' || p[k] == ':'))
                return p;
        }
    }
    return NULL;
}

/* What to install or pass: from the verb on, else the whole error (its first clause alone would leave
 * out what a reader needs: a build option, the memory asked for). */
static void remedy(char *buf, size_t n, const char *err)
{
    const char *v = remedy_start(err);
    snprintf(buf, n, "%s", v ? v : err);
}

/* The sizes at which a variant was not run, "" when at every size the study ran. */
static void not_run_sizes(char *buf, size_t n, const rep_set *s, int env, const char *study, const char *variant)
{
    long sizes[MAXS];
    int ns = rep_sizes(s, env, study, sizes, MAXS), k = 0;
    char list[256] = "";
    const char *sn = "size";
    for (int i = 0; i < ns; i++) {
        const rep_case *c = rep_find(s, env, study, variant, sizes[i]);
        if (!rep_not_run(c))
            continue;
        sn = c->size_name;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%ld", k++ ? ", " : "", sizes[i]);
    }
    buf[0] = 0;
    if (k < ns)
        snprintf(buf, n, " (at %s=%s)", sn, list);
}

/* The variant's first not-run case (smallest size), or NULL when it ran, or failed, at every size. */
static const rep_case *first_not_run(const rep_set *s, int env, const char *study, const char *variant)
{
    long sizes[MAXS];
    int ns = rep_sizes(s, env, study, sizes, MAXS);
    for (int i = 0; i < ns; i++) {
        const rep_case *c = rep_find(s, env, study, variant, sizes[i]);
        if (rep_not_run(c))
            return c;
    }
    return NULL;
}

static void not_run_row(rep_table *t, const rep_set *s, int env, const rep_case *c)
{
    char clause[512], todo[512], at[300];
    const char *err = c->error ? c->error : "";
    first_clause(clause, sizeof clause, err);
    remedy(todo, sizeof todo, err);
    not_run_sizes(at, sizeof at, s, env, c->study, c->variant);
    int r = rep_table_row(t, 1);
    rep_row_status(t, r, c->status);
    rep_cell_text(t, r, 0, "%s", c->variant);
    rep_cell_text(t, r, 1, "%s%s%s%s", c->status, clause[0] ? ": " : "", clause, at);
    rep_cell_text(t, r, 2, "%s", err[0] ? todo : "—");
}

rep_table *rep_tab_not_run(const rep_set *s, int env, const char *study)
{
    const char *cols[] = {"variant", "reason", "what to install or pass"};
    const char *csv[] = {"variant", "reason", "to_run"};
    char title[256];
    snprintf(title, sizeof title, "%s: variants not run here (unavailable, or skipped)", study);
    rep_table *t = rep_table_new("", title, 3, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-not-run", study);
    const char *vs[MAXV];
    int nv = rep_variants(s, env, study, vs, MAXV);
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *c = first_not_run(s, env, study, vs[vi]);
        if (c)
            not_run_row(t, s, env, c);
    }
    if (t->nrows == 0) {
        rep_table_free(t);
        return NULL;
    }
    rep_table_note(t, "Each variant once, with the reason its record gives (its first clause when long); "
                      "the speedup, summary and other tables and the figures hold measured rows only.");
    return t;
}
