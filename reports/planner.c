/* reports/planner.c: which ISA level each CPU variant ran at and why (the record's impl: the planner's
 * choice, experiments/planner.h). A study page gets the table where a choice was possible (a dispatch
 * build: chosen by wisdom, by default or forced); a native build's rows all say "build" and need none.
 * The ISA levels table (levels.c) names the level a case ran at when it is not its run's. */
#include <string.h>

#include "rep.h"

#define MAXV 64

const char *rep_impl(const rep_case *c, const char *field)
{
    return c ? json_string_value(json_object_get(json_object_get(c->rec, "impl"), field)) : NULL;
}

/* Whether the case ran at another level than its run's (env.isa): the planner moved it. */
int rep_impl_moved(const rep_set *s, const rep_case *c)
{
    const char *isa = rep_impl(c, "isa"), *env = s->envs[c->env].isa;
    return isa && env && strcmp(isa, env) != 0;
}

static int chosen_here(const rep_case *c)
{
    const char *by = rep_impl(c, "chosen_by");
    return by && (!strcmp(by, "wisdom") || !strcmp(by, "default")); /* forced, build: one level, no choice */
}

/* The variant's first case with an impl (its smallest size): every size of a variant runs at one level. */
static const rep_case *first_case(const rep_set *s, int env, const char *study, const char *variant)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !strcmp(c->study, study) && !strcmp(c->variant, variant) && rep_impl(c, "level"))
            return c;
    }
    return NULL;
}

rep_table *rep_tab_planner(const rep_set *s, int env, const char *study)
{
    if (!rep_study_has(s, env, study, chosen_here))
        return NULL;
    const char *cols[] = {"variant", "ran at", "chosen by", "why"};
    const char *csv[] = {"variant", "level", "chosen_by", "why"};
    char *id = rep_printf("%s-planner", study);
    rep_table *t = rep_table_new(id, "The ISA level each CPU variant ran at, and why", 4, cols, csv);
    free(id);
    const char *vs[MAXV];
    int nv = rep_variants(s, env, study, vs, MAXV), moved = 0;
    for (int v = 0; v < nv; v++) {
        const rep_case *c = first_case(s, env, study, vs[v]);
        if (!c)
            continue;
        int r = rep_table_row(t, 1);
        rep_cell_text(t, r, 0, "%s", c->variant);
        rep_cell_text(t, r, 1, "%s (%s)%s", rep_impl(c, "level"), rep_impl(c, "isa") ? rep_impl(c, "isa") : "?",
                      rep_impl_moved(s, c) ? " *" : "");
        rep_cell_text(t, r, 2, "%s", rep_impl(c, "chosen_by"));
        rep_cell_text(t, r, 3, "%s", rep_impl(c, "why") ? rep_impl(c, "why") : "");
        moved += rep_impl_moved(s, c);
    }
    rep_table_note(t, "The run's default level is %s (env.isa). `wisdom`: `speedlab tune` timed the variant at each "
                      "level on this CPU and build and kept the faster (its times are in the why column); "
                      "`default`: no choice was kept, the widest level ran; `forced`: SPEEDLAB_ISA; `library`: the "
                      "library picks its own ISA. * %d variant%s ran at another level than the run's.",
                   s->envs[env].isa ? s->envs[env].isa : "unknown", moved, moved == 1 ? "" : "s");
    return t;
}
