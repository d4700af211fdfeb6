/* planner.c: the level each CPU case runs at, from the wisdom `speedlab tune` keeps (planner.h). */
#include "planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avail.h"
#include "isa.h"

static const sl_levels kernel_levels = {kern_isa_has_level, kern_isa_select, kern_isa_level,
                                        kern_isa_default_level, kern_isa, kern_isa_forced, kern_isa_cflags};
static const sl_levels *levels = &kernel_levels;

const sl_levels *sl_levels_now(void) { return levels; }
void sl_levels_override(const sl_levels *l) { levels = l ? l : &kernel_levels; }

static int n_levels(void)
{
    int n = 0;
    for (int l = 2; l <= 4; l++)
        n += levels->has(l);
    return n;
}

int sl_planner_open(sl_planner *p, const char *wisdom_path, int no_tune, char *err, size_t n)
{
    memset(p, 0, sizeof *p);
    const char *env = getenv("SPEEDLAB_TUNE");
    p->off = no_tune || (env && !strcmp(env, "off"));
    if (env && *env && strcmp(env, "off") && strcmp(env, "on")) {
        snprintf(err, n, "SPEEDLAB_TUNE=%.40s: want on or off (off: every case at the default level)", env);
        return -1;
    }
    sl_cpu_key(p->cpu, sizeof p->cpu);
    sl_build_key(p->build, sizeof p->build);
    if (sl_wisdom_path(wisdom_path, p->path, sizeof p->path) != 0) {
        if (wisdom_path) {
            snprintf(err, n, "--wisdom: the path is too long");
            return -1;
        }
        p->path[0] = '\0'; /* no HOME: no wisdom, every case at its default level */
        return 0;
    }
    /* a native build or a forced level has nothing to choose: a broken file must not stop its runs */
    return p->off || n_levels() < 2 || levels->forced() ? 0 : sl_wisdom_read(p->path, &p->w, err, n);
}

void sl_planner_close(sl_planner *p) { sl_wisdom_free(&p->w); }

json_t *sl_planner_env(const sl_planner *p)
{
    int here = 0;
    for (int i = 0; i < p->w.n; i++)
        here += !strcmp(p->w.e[i].cpu, p->cpu) && !strcmp(p->w.e[i].build, p->build);
    json_t *o = json_object();
    json_object_set_new(o, "wisdom", json_string(p->path));
    json_object_set_new(o, "tuning", json_string(p->off ? "off" : "on"));
    json_object_set_new(o, "choices", json_integer(here)); /* for this CPU and build */
    json_object_set_new(o, "cpu_key", json_string(p->cpu));
    json_object_set_new(o, "build_key", json_string(p->build));
    return o;
}

int sl_planner_stale(const sl_planner *p, char *line, size_t n)
{
    int here = 0, other = 0;
    for (int i = 0; i < p->w.n; i++)
        if (!strcmp(p->w.e[i].cpu, p->cpu))
            strcmp(p->w.e[i].build, p->build) ? other++ : here++;
    if (here || !other || p->off || levels->forced())
        return 0;
    snprintf(line, n, "the wisdom in %.200s has %d choice%s for this CPU from other builds, none for this one "
             "(%.120s): every CPU case runs at the widest level; `speedlab tune` chooses for this build", p->path,
             other, other == 1 ? "" : "s", p->build);
    return 1;
}

int sl_variant_tunable(const sl_variant *v, char *why, size_t n)
{
    /* Rows whose time is a library's that picks its own ISA at run time: the dispatch level changes only
     * speedlab's code around the call, and timing it would choose by noise. */
    static const char *const self_dispatching[] = {"blas", "onednn"};
    if (v->traits & SL_EXTERNAL)
        return snprintf(why, n, "a framework baseline: the framework picks its ISA (record's external.isa)"), 0;
    if (v->traits & SL_DEVICE)
        return snprintf(why, n, "a GPU row"), 0;
    for (size_t i = 0; v->requires && i < sizeof self_dispatching / sizeof *self_dispatching; i++)
        if (!strcmp(v->requires, self_dispatching[i]))
            return snprintf(why, n, "the %s library picks its own ISA at run time; speedlab's code around it runs "
                            "at the default level", v->requires), 0;
    return 1;
}


/* Whether this build and CPU run variant var at level (a hand-edited wisdom may name any). */
static int available_at(const sl_variant *var, int level)
{
    char why[256];
    int now = levels->current();
    if (!levels->has(level) || levels->select(level) != 0)
        return 0;
    int ok = sl_variant_available(var, why, sizeof why); /* bf16dp: AVX512_BF16 code in the v4 copy only */
    levels->select(now);
    return ok;
}

void sl_planner_choose(const sl_planner *p, const sl_study *s, int v, sl_impl *out)
{
    const sl_variant *var = &s->variants[v];
    int def = levels->default_level();
    memset(out, 0, sizeof *out);
    if (var->traits & (SL_EXTERNAL | SL_DEVICE))
        return; /* level 0: no say */
    out->level = def;
    if (!sl_variant_tunable(var, out->why, sizeof out->why)) {
        out->chosen_by = "library";
        return;
    }
    const sl_wisdom_entry *e = sl_wisdom_find(&p->w, p->cpu, p->build, s->name, var->name);
    if (levels->forced()) {
        out->chosen_by = "forced";
        snprintf(out->why, sizeof out->why, "SPEEDLAB_ISA=%s", levels->forced());
    } else if (n_levels() < 2) {
        out->chosen_by = "build";
        snprintf(out->why, sizeof out->why, "the one level this build runs here (a -Disa=dispatch build has "
                 "v2 to v4 for the planner to choose from)");
    } else if (p->off) {
        out->chosen_by = "default";
        snprintf(out->why, sizeof out->why, "the widest level this CPU runs: tuning off (--no-tune or "
                 "SPEEDLAB_TUNE=off)");
    } else if (e && p->threads && e->threads != sl_variant_threads(var, p->threads)) {
        out->chosen_by = "default";
        snprintf(out->why, sizeof out->why, "the widest level this CPU runs: the wisdom's choice was tuned at %d "
                 "thread%s, this case runs on %d (speedlab tune --threads %d)", e->threads, e->threads == 1 ? "" : "s",
                 sl_variant_threads(var, p->threads), sl_variant_threads(var, p->threads));
    } else if (e && !available_at(var, e->level)) {
        out->chosen_by = "default";
        snprintf(out->why, sizeof out->why, "the widest level this CPU runs: the wisdom's choice, v%d, cannot run "
                 "this variant here (speedlab tune chooses again)", e->level);
    } else if (e) {
        out->chosen_by = "wisdom";
        out->level = e->level;
        snprintf(out->why, sizeof out->why, "speedlab tune: %s s at %s, %d thread%s (%s)", e->times, e->size,
                 e->threads, e->threads == 1 ? "" : "s", e->date);
    } else {
        out->chosen_by = "default";
        snprintf(out->why, sizeof out->why, "the widest level this CPU runs: no choice for this CPU and build "
                 "in %.200s (speedlab tune makes it)", p->path[0] ? p->path : "the wisdom file (no HOME)");
    }
}

void sl_planner_enter(const sl_impl *im)
{
    if (im->level && im->level != levels->current())
        levels->select(im->level);
}

void sl_planner_restore(void)
{
    if (levels->current() != levels->default_level())
        levels->select(levels->default_level());
}

json_t *sl_impl_json(const sl_impl *im)
{
    if (!im->level)
        return NULL;
    char lv[8];
    snprintf(lv, sizeof lv, "v%d", levels->current());
    json_t *o = json_object();
    json_object_set_new(o, "level", json_string(lv));
    json_object_set_new(o, "isa", json_string(levels->isa()));
    if (levels->cflags && levels->cflags()) /* env.cflags are the default level's */
        json_object_set_new(o, "cflags", json_string(levels->cflags()));
    json_object_set_new(o, "chosen_by", json_string(im->chosen_by));
    json_object_set_new(o, "why", json_string(im->why));
    return o;
}
