/*
 * tune.c: `speedlab tune`: the planner's measurements (planner.h). For each study, at its first quick
 * size, the study is set up once per candidate level (the CPU's widest and the one below; a workspace
 * is sized by the kernels of the level that runs). Each CPU variant of speedlab's own
 * (sl_variant_tunable) is made ready at each level (prepared, checked against the reference: a level
 * that fails has no time and is no candidate; warmed up once), then timed in calls that alternate
 * between the levels until 3 calls or 0.3 s each, so that a slow spell of a shared machine falls on
 * both; a level's time is its fastest call. The widest level is kept unless another is more than
 * TUNE_MARGIN faster and wins 3 in 4 of the calls made next to the widest's: noise must not move a
 * variant off the level a reader expects. The choices go into
 * the wisdom file after each study.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <speedlab/prof.h>

#include "avail.h"
#include "case.h"
#include "cli.h"
#include "planner.h"
#include "quiet.h"
#include "record.h"
#include "stats.h"
#include "tune.h"
#include "wisdom.h"

#define TUNE_MARGIN 0.05 /* a narrower level must be this much faster than the widest to be chosen */
#define TUNE_MAX_CALLS 1000 /* timed calls per level, at most */
#define TUNE_ROUND_S 0.3 /* timed seconds per level, after 3 calls */
#define TUNE_SLOW_S 1.0  /* a call this long: 3 calls per level are enough (naive rows) */
#define TUNE_MAX_VARIANTS 64

static const char tune_usage[] =
    "usage: speedlab tune [STUDY...|all] [--variants A,B] [--threads N] [--data DIR] [--param NAME=VALUE]\n"
    "                     [--wisdom FILE] [--dry-run]\n"
    "  Times each CPU variant at each ISA level this CPU runs (its widest and the one below), on the\n"
    "  study's first quick size, checked against the reference first, and keeps the faster level per\n"
    "  variant in the wisdom file for this CPU model and build; a narrower level is kept only when it\n"
    "  is more than 5 % faster and wins 3 in 4 of the calls made next to the widest's (calls alternate\n"
    "  between the levels; a level's time is its fastest call). `speedlab run` then runs each case at its variant's level, and its\n"
    "  record says which and why (impl). Rows whose library picks its own ISA (blas, onednn), GPU rows\n"
    "  and framework baselines are not tuned. Takes seconds to a minute (default: every study).\n"
    "  Needs a dispatch build (-Disa=dispatch): a native build has one level, and tune says so.\n"
    "  --variants A,B    only these variants\n"
    "  --threads N       threads for variants marked [uses --threads] (default: online CPUs)\n"
    "  --data DIR        data directory for studies that read data sets\n"
    "  --param N=V       study parameter, as for `speedlab run`\n"
    "  --wisdom FILE     the wisdom file (default: $SPEEDLAB_WISDOM, else\n"
    "                    $XDG_CACHE_HOME/speedlab/wisdom.tsv or ~/.cache/speedlab/wisdom.tsv)\n"
    "  --dry-run         print the choices, write nothing\n"
    "  -h, --help        this text\n"
    "environment: SPEEDLAB_ISA must be unset (tune compares the levels itself).\n"
    "Exit status: 0; 1 when a variant failed its check at some level (that level is not chosen), a study\n"
    "could not be set up or the wisdom not written; 2 usage or a malformed wisdom file.\n"
    "docs/isa-levels.md, \"The planner\", says how it chooses and how to check its choices.\n";

typedef struct {
    double *t; /* TUNE_MAX_CALLS */
    int n;
} samples;

typedef struct {
    const sl_run_cfg *cfg;
    sl_opts opts;
    sl_planner planner;
    sl_wisdom fresh; /* this tune's choices, put into the file after each study (sl_wisdom_update) */
    int dry_run, tty, failed, chosen;
} tuner;

/* One timed call of variant v at the level running now: its seconds, or -1 with why. */
static double timed_call(const sl_study *s, void *state, int v, char *why, size_t n)
{
    sl_error err = {{0}};
    sl_record *r = sl_record_new();
    double t = -1;
    if (s->before_rep && s->before_rep(state, v, &err) != 0)
        snprintf(why, n, "before_rep: %s", err.msg);
    else {
        uint64_t t0 = prof_now_ns();
        int rc = s->run(state, v, r, &err);
        t = (double)(prof_now_ns() - t0) * 1e-9;
        if (rc != 0)
            t = -1, snprintf(why, n, "run: %s", err.msg);
    }
    sl_record_free(r);
    return t;
}

/* Variant v made ready on a set-up state at the level running now: prepared, checked as the runner checks
 * (sl_case_check_variant), and a kernel warmed up once. 0, or -1 with why (then it was released). */
static int ready(const sl_study *s, void *state, int v, char *why, size_t n)
{
    sl_error err = {{0}};
    if (s->prepare && s->prepare(state, v, &err) != 0)
        return snprintf(why, n, "prepare: %s", err.msg), -1;
    sl_record *r = sl_record_new();
    json_t *rec = json_object();
    int rc = sl_case_check_variant(s, state, v, r, rec);
    if (rc != 0)
        snprintf(why, n, "%s", json_string_value(json_object_get(rec, "error")));
    else if (s->kind == SL_KERNEL && timed_call(s, state, v, why, n) < 0) /* the warm-up */
        rc = -1;
    json_decref(rec);
    sl_record_free(r);
    if (rc && s->release)
        s->release(state, v);
    return rc;
}

/* A level's time: its fastest call. Another process on a shared CPU only ever adds time, so the fastest
 * of alternating calls compares the two codes, where a median can still hold a slow spell. */
static double best_of(const samples *x)
{
    sl_stats st;
    sl_stats_compute(x->t, x->n, &st);
    return st.min;
}

/* Whether a wins at least 3 in 4 of its calls against b's made next to them (the calls alternate, so
 * call k of each ran back to back), and every one of them when there are fewer than 4 (a slow row's 3):
 * a fastest call alone could be one lucky call of a busy machine. */
static int wins_pairs(const samples *a, const samples *b)
{
    int n = a->n < b->n ? a->n : b->n, won = 0;
    for (int k = 0; k < n; k++)
        won += a->t[k] < b->t[k];
    return n > 0 && (n < 4 ? won == n : 4 * won >= 3 * n);
}

/* The candidate levels: the CPU's widest and the one below, where this build runs them. */
static int candidates(int *lv)
{
    const sl_levels *L = sl_levels_now();
    int def = L->default_level(), n = 0;
    for (int l = def - 1; l <= def; l++)
        if (l >= 2 && L->has(l))
            lv[n++] = l;
    return n;
}

/* Variant v's choice from its samples at the nl candidate levels lv (ok[i]: level i passed its check):
 * the widest that ran, then a narrower one only when clearly faster; printed and put in the wisdom. */
static void choose(tuner *t, const sl_study *s, int v, long size, const int *lv, int nl, const samples *x,
                   const int *ok)
{
    const sl_variant *var = &s->variants[v];
    int best = -1, def = sl_levels_now()->default_level();
    for (int i = 0; i < nl; i++)
        if (lv[i] == def && !ok[i]) { /* available there (tunable_variants), so it failed: its message is
                                        * above; no choice, so that run shows the failure */
            printf("%-12s %-14s failed at v%d: no choice (the run's case at v%d will say why)\n", s->name,
                   var->name, def, def);
            return;
        }
    for (int i = 0; i < nl; i++)
        if (ok[i] && (best < 0 || lv[i] == def))
            best = i;
    int wide = best;
    for (int i = 0; wide >= 0 && i < nl; i++)
        if (i != wide && ok[i] && best_of(&x[i]) < best_of(&x[wide]) * (1 - TUNE_MARGIN) &&
            wins_pairs(&x[i], &x[wide]))
            best = i;
    char times[160] = "", date[40], sz[96];
    int len = 0;
    for (int i = 0; i < nl; i++)
        if (ok[i] && len < (int)sizeof times)
            len += snprintf(times + len, sizeof times - (size_t)len, "%sv%d=%.4g", len ? "," : "", lv[i],
                            best_of(&x[i]));
    snprintf(sz, sizeof sz, "%.60s=%ld", s->size_name ? s->size_name : "size", size);
    if (best < 0) {
        printf("%-12s %-14s %-12s no level passed its check: no choice\n", s->name, var->name, sz);
        return;
    }
    printf("%-12s %-14s %-12s %s s -> v%d\n", s->name, var->name, sz, times, lv[best]);
    fflush(stdout);
    sl_iso_time(date, sizeof date);
    sl_wisdom_entry e = {t->planner.cpu, t->planner.build, (char *)s->name, (char *)var->name, times, sz, date,
                         lv[best], sl_variant_threads(var, t->cfg->threads)};
    if (sl_wisdom_put(&t->fresh, &e) == 0)
        t->chosen++;
}

/* The variants of s tune takes: asked for, speedlab's own CPU code, runnable here. */
static int tunable_variants(const tuner *t, const sl_study *s, int *vs)
{
    char why[256];
    int n = 0;
    for (int v = 0; v < s->n_variants && n < TUNE_MAX_VARIANTS; v++) {
        int take = t->cfg->n_variants == 0;
        for (int k = 0; k < t->cfg->n_variants && !take; k++)
            take = !strcmp(t->cfg->variants[k], s->variants[v].name);
        if (take && sl_variant_tunable(&s->variants[v], why, sizeof why) &&
            sl_variant_available(&s->variants[v], why, sizeof why))
            vs[n++] = v;
    }
    return n;
}

/* What tune keeps of one study's variants: samples and check results per candidate level. */
typedef struct {
    int v[TUNE_MAX_VARIANTS], n;          /* the variants' indices in the study */
    int lv[3], nl;                        /* the candidate levels */
    void *state[3];                       /* the study set up at each level */
    samples x[TUNE_MAX_VARIANTS][3];
    int ok[TUNE_MAX_VARIANTS][3];         /* ready and every call ran at that level */
} study_samples;

/* Variant j at every candidate level: made ready at each, then timed calls alternating between the
 * levels (the order reversed every call), so that a slow spell of a shared machine falls on both. */
static void tune_variant(tuner *t, const sl_study *s, study_samples *z, int j)
{
    const sl_levels *L = sl_levels_now();
    const sl_variant *var = &s->variants[z->v[j]];
    char why[SL_ERRLEN + 64];
    for (int i = 0; i < z->nl; i++) {
        L->select(z->lv[i]);
        if (!sl_variant_available(var, why, sizeof why)) /* bf16dp has code at the AVX-512 level only */
            continue;
        if (t->tty)
            fprintf(stderr, "\r\033[Ktune: %s %s v%d", s->name, var->name, z->lv[i]);
        z->ok[j][i] = ready(s, z->state[i], z->v[j], why, sizeof why) == 0;
        if (!z->ok[j][i]) {
            fprintf(stderr, "%sspeedlab tune: %s %s at v%d: %s; that level is not chosen\n",
                    t->tty ? "\r\033[K" : "", s->name, var->name, z->lv[i], why);
            t->failed = 1;
        }
    }
    double total = 0;
    for (int k = 0; k < TUNE_MAX_CALLS && (k < 3 || total < TUNE_ROUND_S * z->nl); k++) {
        if (k >= 3 && total > 3 * TUNE_SLOW_S * z->nl) /* slow calls (naive rows): three pairs */
            break;
        for (int m = 0; m < z->nl; m++) {
            int i = k % 2 ? z->nl - 1 - m : m;
            if (!z->ok[j][i])
                continue;
            L->select(z->lv[i]);
            double secs = timed_call(s, z->state[i], z->v[j], why, sizeof why);
            if (secs < 0) { /* a level whose call failed has no time */
                fprintf(stderr, "%sspeedlab tune: %s %s at v%d: %s\n", t->tty ? "\r\033[K" : "", s->name,
                        var->name, z->lv[i], why);
                z->ok[j][i] = 0, t->failed = 1;
                if (s->release)
                    s->release(z->state[i], z->v[j]);
                continue;
            }
            z->x[j][i].t[z->x[j][i].n++] = secs;
            total += secs;
        }
    }
    for (int i = 0; i < z->nl; i++)
        if (z->ok[j][i] && s->release) {
            L->select(z->lv[i]);
            s->release(z->state[i], z->v[j]);
        }
    sl_planner_restore();
    if (t->tty)
        fprintf(stderr, "\r\033[K");
}

/* One study at its first quick size: set up once per candidate level (a workspace is sized by the
 * kernels of the level that runs), every variant tuned, each choice kept. */
static void tune_study(tuner *t, const sl_study *s)
{
    long size = s->n_quick_sizes ? s->quick_sizes[0] : s->sizes[0];
    char why[768];
    if (s->data_missing && !t->opts.data_dir && s->data_missing(&t->opts, why, sizeof why)) {
        printf("%-12s (not tuned: %s)\n", s->name, why);
        return;
    }
    study_samples *z = calloc(1, sizeof *z);
    double *pool = calloc((size_t)TUNE_MAX_VARIANTS * 3 * TUNE_MAX_CALLS, sizeof *pool);
    if (!z || !pool || !(z->n = tunable_variants(t, s, z->v)) || !(z->nl = candidates(z->lv))) {
        free(z), free(pool);
        return;
    }
    for (int j = 0; j < TUNE_MAX_VARIANTS; j++)
        for (int i = 0; i < 3; i++)
            z->x[j][i].t = pool + ((size_t)j * 3 + (size_t)i) * TUNE_MAX_CALLS;
    int set_up = 1;
    for (int i = 0; i < z->nl && set_up; i++) {
        sl_error err = {{0}};
        sl_levels_now()->select(z->lv[i]);
        if (!(z->state[i] = s->setup(size, &t->opts, &err))) {
            printf("%-12s (not tuned: setup at v%d: %s)\n", s->name, z->lv[i], err.msg);
            t->failed = 1, set_up = 0;
        }
    }
    sl_planner_restore();
    for (int j = 0; j < z->n && set_up; j++) {
        tune_variant(t, s, z, j);
        choose(t, s, z->v[j], size, z->lv, z->nl, z->x[j], z->ok[j]);
    }
    for (int i = 0; i < z->nl; i++)
        if (z->state[i] && s->teardown)
            s->teardown(z->state[i]);
    free(z), free(pool);
}

/* Tune's own arguments out of argv (--dry-run; the rest must be options run shares with it). */
static int tune_args(int argc, char **argv, char **rest, int *nrest, int *dry_run, int *named)
{
    static const char *const allowed[] = {"--variants", "--threads", "--data", "--param", "--wisdom"};
    *nrest = 0;
    rest[(*nrest)++] = "run";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        size_t len = strcspn(a, "=");
        int opt = 0;
        if (!strcmp(a, "--dry-run")) {
            *dry_run = 1;
            continue;
        }
        for (size_t k = 0; k < sizeof allowed / sizeof *allowed; k++)
            opt |= strlen(allowed[k]) == len && !strncmp(a, allowed[k], len);
        if (!strncmp(a, "--", 2) && !opt) {
            fprintf(stderr, "speedlab: tune: unknown option '%s'; tune takes --variants, --threads, --data, --param, "
                    "--wisdom and --dry-run (speedlab tune --help)\n", a);
            return -1;
        }
        if (a[0] == '-' && !opt) {
            fprintf(stderr, "speedlab: tune: unknown option '%s' (speedlab tune --help)\n", a);
            return -1;
        }
        int wants_value = opt && a[len] != '=';
        if (wants_value && (i + 1 >= argc || argv[i + 1][0] == '-' || !argv[i + 1][0])) {
            fprintf(stderr, "speedlab: tune: %s needs a value (speedlab tune --help)\n", a);
            return -1;
        }
        if (opt && !strncmp(a, "--wisdom", len) && (wants_value ? !argv[i + 1][0] : !a[len + 1])) {
            fprintf(stderr, "speedlab: tune: --wisdom needs a file path\n");
            return -1;
        }
        rest[(*nrest)++] = argv[i];
        *named |= !opt; /* a study */
        if (wants_value)
            rest[(*nrest)++] = argv[++i]; /* the option's value */
    }
    return 0;
}

/* Whether tune can choose here; else 0 and *rc its exit status, after saying why. */
static int can_tune(tuner *t, int *lv, int *rc)
{
    const sl_levels *L = sl_levels_now();
    char err[1024];
    *rc = SL_EXIT_USAGE;
    if (L->forced())
        fprintf(stderr, "speedlab: tune: SPEEDLAB_ISA=%s is set; tune compares the levels itself: unset it\n",
                L->forced());
    else if (candidates(lv) < 2) {
        printf("speedlab tune: this build runs one ISA level here (a native build, or a CPU below x86-64-v3): "
               "nothing to choose; a -Disa=dispatch build has v2 to v4 (docs/isa-levels.md)\n");
        *rc = SL_EXIT_OK;
    } else if (sl_planner_open(&t->planner, t->cfg->wisdom, 0, err, sizeof err) != 0 ||
               /* SPEEDLAB_TUNE=off leaves the wisdom unread for runs; tune rewrites the file, and must keep
                * every line of other CPUs and builds */
               (t->planner.off && sl_wisdom_read(t->planner.path, &t->planner.w, err, sizeof err) != 0))
        fprintf(stderr, "speedlab: tune: %s\n", err);
    else if (!t->planner.path[0])
        fprintf(stderr, "speedlab: tune: no wisdom file: HOME is not set; give one with --wisdom FILE\n");
    else
        return 1;
    return 0;
}

/* Every study asked for, its choices put into the wisdom after each; the exit status. */
static int tune_all(tuner *t, const int *lv)
{
    char err[1024];
    json_t *quiet = json_object(); /* a busy machine's choices are noise: say so, as run does */
    if (sl_quiet_check(quiet, t->cfg->threads, stderr))
        fprintf(stderr, "speedlab: tune: choices made now may be noise; run it again on a quiet machine\n");
    json_decref(quiet);
    printf("speedlab tune: levels v%d and v%d on %s, build %s\n", lv[0], lv[1], t->planner.cpu, t->planner.build);
    fflush(stdout);
    for (int i = 0; i < t->cfg->n_studies; i++) {
        tune_study(t, t->cfg->studies[i]);
        if (!t->dry_run && t->fresh.n && sl_wisdom_update(t->planner.path, &t->fresh, err, sizeof err) != 0) {
            fprintf(stderr, "speedlab: tune: %s\n", err); /* each study's choices kept as they come */
            return SL_EXIT_FAILED;
        }
    }
    if (t->dry_run)
        printf("speedlab tune: %d choice%s made; --dry-run: %s unchanged\n", t->chosen, t->chosen == 1 ? "" : "s",
               t->planner.path);
    else
        printf("speedlab tune: %d choice%s in %s\n", t->chosen, t->chosen == 1 ? "" : "s", t->planner.path);
    return t->failed ? SL_EXIT_FAILED : SL_EXIT_OK;
}

int sl_tune_main(int argc, char **argv, const sl_study *const *studies, int n_studies)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return fputs(tune_usage, stdout), SL_EXIT_OK;
    char **rest = calloc((size_t)argc + 2, sizeof *rest);
    int nrest = 0, dry_run = 0, named = 0;
    if (!rest || tune_args(argc, argv, rest, &nrest, &dry_run, &named) != 0)
        return free(rest), SL_EXIT_USAGE;
    if (!named)
        rest[nrest++] = "all";
    sl_run_cfg cfg;
    int rc = sl_parse_run(nrest, rest, studies, n_studies, &cfg);
    free(rest);
    if (rc != 0)
        return sl_run_cfg_free(&cfg), rc == 1 ? SL_EXIT_OK : rc;
    tuner t = {.cfg = &cfg, .dry_run = dry_run, .tty = isatty(STDERR_FILENO)};
    t.opts = (sl_opts){.seed = cfg.seed, .threads = cfg.threads, .quick = 1, .data_dir = cfg.data_dir,
                       .n_params = cfg.n_params, .param_names = cfg.param_names, .param_values = cfg.param_values};
    int lv[3];
    if (can_tune(&t, lv, &rc))
        rc = tune_all(&t, lv);
    sl_planner_close(&t.planner);
    sl_wisdom_free(&t.fresh);
    sl_run_cfg_free(&cfg);
    return rc;
}
