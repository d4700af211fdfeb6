/*
 * tune.c: `speedlab tune`: the planner's measurements (planner.h). For each CPU variant of speedlab's own
 * (sl_variant_tunable), at the study's first quick size: at each candidate level (the CPU's widest and
 * the one below), prepare, check against the reference (a level that fails has no time and is no
 * candidate), one warm-up call (kernels), then timed calls until 3 or 0.3 s; a second round in the
 * other order of levels when the calls are short, so that a slow spell of a shared machine falls on
 * both. The widest level is kept unless another's median is more than TUNE_MARGIN faster: noise must not
 * move a variant off the level a reader expects. The choices go into the wisdom file after each study.
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
#include "record.h"
#include "stats.h"
#include "tune.h"
#include "wisdom.h"

#define TUNE_MARGIN 0.05 /* a narrower level must be this much faster than the widest to be chosen */
#define TUNE_MAX_CALLS 8 /* per level and round */
#define TUNE_ROUND_S 0.3 /* timed seconds per level and round, after 3 calls */

static const char tune_usage[] =
    "usage: speedlab tune [STUDY...|all] [--variants A,B] [--threads N] [--data DIR] [--param NAME=VALUE]\n"
    "                     [--wisdom FILE] [--dry-run]\n"
    "  Times each CPU variant at each ISA level this CPU runs (its widest and the one below), on the\n"
    "  study's first quick size, checked against the reference first, and keeps the faster level per\n"
    "  variant in the wisdom file for this CPU model and build; a narrower level is kept only when it\n"
    "  is more than 5 % faster. `speedlab run` then runs each case at its variant's level, and its\n"
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
    "Exit status: 0, 1 when a variant failed its check at some level (that level is not chosen), 2 usage.\n"
    "docs/isa-levels.md, \"The planner\", says how it chooses and how to check its choices.\n";

typedef struct {
    double t[2 * TUNE_MAX_CALLS];
    int n;
} samples;

typedef struct {
    const sl_run_cfg *cfg;
    sl_opts opts;
    sl_planner planner;
    int dry_run, tty, failed, chosen;
} tuner;

/* Prepare, check (first round), warm up and time variant v at the level running now. 0, or -1 with why. */
static int measure(const sl_study *s, void *state, int v, int check, samples *out, char *why, size_t n)
{
    sl_error err = {{0}};
    if (s->prepare && s->prepare(state, v, &err) != 0)
        return snprintf(why, n, "prepare: %s", err.msg), -1;
    sl_record *r = sl_record_new();
    json_t *rec = json_object();
    int rc = 0, kernel = s->kind == SL_KERNEL;
    for (int w = 0; w < (check || kernel ? 1 : 0) && rc == 0; w++) /* the check's run, and the warm-up */
        if ((s->before_rep && s->before_rep(state, v, &err)) || (kernel && s->run(state, v, r, &err)))
            rc = -1, snprintf(why, n, "run: %s", err.msg);
    if (rc == 0 && check && sl_case_check(s, state, v, rec) != 0)
        rc = -1, snprintf(why, n, "%s", json_string_value(json_object_get(rec, "error")));
    double total = 0;
    for (int k = 0; rc == 0 && k < TUNE_MAX_CALLS && (k < 3 || total < TUNE_ROUND_S); k++) {
        if (s->before_rep && s->before_rep(state, v, &err))
            rc = -1, snprintf(why, n, "before_rep: %s", err.msg);
        uint64_t t0 = prof_now_ns();
        if (rc == 0 && s->run(state, v, r, &err))
            rc = -1, snprintf(why, n, "run: %s", err.msg);
        double t = (double)(prof_now_ns() - t0) * 1e-9;
        if (rc == 0)
            out->t[out->n++] = t, total += t;
        if (total > 3 * TUNE_ROUND_S) /* a slow variant (naive): one call is enough to rank its levels */
            break;
    }
    json_decref(rec);
    sl_record_free(r);
    if (s->release)
        s->release(state, v);
    return rc;
}

static double median_of(const samples *x)
{
    sl_stats st;
    sl_stats_compute(x->t, x->n, &st);
    return st.median;
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

/* Chooses variant v's level: every candidate measured, the winner into the wisdom. */
static void tune_variant(tuner *t, const sl_study *s, void *state, int v, long size)
{
    const sl_levels *L = sl_levels_now();
    const sl_variant *var = &s->variants[v];
    int lv[3], nl = candidates(lv), ok[3] = {0}, def = L->default_level();
    samples x[3] = {{{0}, 0}};
    char why[SL_ERRLEN + 64];
    for (int round = 0; round < 2; round++) {
        for (int k = 0; k < nl; k++) {
            int i = round ? nl - 1 - k : k; /* the second round in the other order */
            if (round && !ok[i])
                continue;
            if (t->tty)
                fprintf(stderr, "\r\033[Ktune: %s %s v%d (round %d)", s->name, var->name, lv[i], round + 1);
            L->select(lv[i]);
            char avail[256];
            if (!sl_variant_available(var, avail, sizeof avail)) /* bf16dp: the AVX-512 copy only */
                continue;
            if (measure(s, state, v, round == 0, &x[i], why, sizeof why) == 0)
                ok[i] |= round == 0;
            else if (round == 0) {
                fprintf(stderr, "%sspeedlab tune: %s %s at v%d: %s; that level is not chosen\n", t->tty ? "\r\033[K" : "",
                        s->name, var->name, lv[i], why);
                t->failed = 1;
            }
        }
        sl_planner_restore();
        double longest = 0;
        for (int i = 0; i < nl; i++)
            longest = ok[i] && median_of(&x[i]) > longest ? median_of(&x[i]) : longest;
        if (longest > TUNE_ROUND_S) /* slow calls: one round is enough, and a second would take minutes */
            break;
    }
    if (t->tty)
        fprintf(stderr, "\r\033[K");
    int best = -1;
    for (int i = 0; i < nl; i++) /* the widest that ran, then a narrower one only when clearly faster */
        if (ok[i] && (best < 0 || lv[i] == def))
            best = i;
    for (int i = 0; best >= 0 && i < nl; i++)
        if (ok[i] && median_of(&x[i]) < median_of(&x[best]) * (1 - TUNE_MARGIN) &&
            median_of(&x[i]) < median_of(&x[best]))
            best = i;
    char times[160] = "", line[256], date[40], sz[96];
    int len = 0;
    for (int i = 0; i < nl; i++)
        if (ok[i] && len < (int)sizeof times)
            len += snprintf(times + len, sizeof times - (size_t)len, "%sv%d=%.4g", len ? "," : "", lv[i],
                            median_of(&x[i]));
    snprintf(sz, sizeof sz, "%s=%ld", s->size_name ? s->size_name : "size", size);
    if (best < 0) {
        printf("%-12s %-14s %-12s no level passed its check: no choice\n", s->name, var->name, sz);
        return;
    }
    snprintf(line, sizeof line, "%-12s %-14s %-12s %s s -> v%d", s->name, var->name, sz, times, lv[best]);
    printf("%s\n", line);
    fflush(stdout);
    sl_iso_time(date, sizeof date);
    sl_wisdom_entry e = {t->planner.cpu, t->planner.build, (char *)s->name, (char *)var->name, times, sz, date,
                         lv[best], sl_variant_threads(var, t->cfg->threads)};
    if (sl_wisdom_put(&t->planner.w, &e) == 0)
        t->chosen++;
}

/* One study at its first quick size: setup, every tunable variant asked for, teardown. */
static void tune_study(tuner *t, const sl_study *s)
{
    long size = s->n_quick_sizes ? s->quick_sizes[0] : s->sizes[0];
    char why[768];
    if (s->data_missing && !t->opts.data_dir && s->data_missing(&t->opts, why, sizeof why)) {
        printf("%-12s (not tuned: %s)\n", s->name, why);
        return;
    }
    void *state = NULL;
    for (int v = 0; v < s->n_variants; v++) {
        const sl_variant *var = &s->variants[v];
        int take = t->cfg->n_variants == 0;
        for (int k = 0; k < t->cfg->n_variants && !take; k++)
            take = !strcmp(t->cfg->variants[k], var->name);
        if (!take || !sl_variant_tunable(var, why, sizeof why) || !sl_variant_available(var, why, sizeof why))
            continue;
        sl_error err = {{0}};
        if (!state && !(state = s->setup(size, &t->opts, &err))) {
            printf("%-12s (not tuned: setup: %s)\n", s->name, err.msg);
            t->failed = 1;
            return;
        }
        tune_variant(t, s, state, v, size);
    }
    if (state && s->teardown)
        s->teardown(state);
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
        int ok = strncmp(a, "--", 2) != 0;
        if (!strcmp(a, "--dry-run")) {
            *dry_run = 1;
            continue;
        }
        for (size_t k = 0; !ok && k < sizeof allowed / sizeof *allowed; k++)
            ok = strlen(allowed[k]) == len && !strncmp(a, allowed[k], len);
        if (!ok) {
            fprintf(stderr, "speedlab: tune: unknown option '%s'\n%s", a, tune_usage);
            return -1;
        }
        rest[(*nrest)++] = argv[i];
        *named |= strncmp(a, "--", 2) != 0; /* a study */
        if (a[len] != '=' && strncmp(a, "--", 2) == 0 && i + 1 < argc)
            rest[(*nrest)++] = argv[++i]; /* the option's value */
    }
    return 0;
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
    char err[1024];
    const sl_levels *L = sl_levels_now();
    int lv[3];
    rc = SL_EXIT_USAGE;
    if (L->forced())
        fprintf(stderr, "speedlab: tune: SPEEDLAB_ISA=%s is set; tune compares the levels itself: unset it\n",
                L->forced());
    else if (sl_planner_open(&t.planner, cfg.wisdom, 0, err, sizeof err) != 0 ||
             /* SPEEDLAB_TUNE=off leaves the wisdom unread for runs; tune rewrites the file, and must keep
              * every line of other CPUs and builds */
             (t.planner.off && sl_wisdom_read(t.planner.path, &t.planner.w, err, sizeof err) != 0))
        fprintf(stderr, "speedlab: tune: %s\n", err);
    else if (!t.planner.path[0])
        fprintf(stderr, "speedlab: tune: no wisdom file: HOME is not set; give one with --wisdom FILE\n");
    else if (candidates(lv) < 2) {
        printf("speedlab tune: this build runs one ISA level here (a native build, or a CPU below x86-64-v3): "
               "nothing to choose; a -Disa=dispatch build has v2 to v4 (docs/isa-levels.md)\n");
        rc = SL_EXIT_OK;
    } else {
        printf("speedlab tune: levels v%d and v%d on %s, build %s\n", lv[0], lv[1], t.planner.cpu, t.planner.build);
        fflush(stdout);
        rc = SL_EXIT_OK;
        for (int i = 0; i < cfg.n_studies && rc == SL_EXIT_OK; i++) {
            tune_study(&t, cfg.studies[i]);
            if (!dry_run && t.chosen && sl_wisdom_write(&t.planner.w, t.planner.path, err, sizeof err) != 0) {
                fprintf(stderr, "speedlab: tune: %s\n", err); /* each study's choices kept as they come */
                rc = SL_EXIT_FAILED;
            }
        }
        if (rc == SL_EXIT_OK && dry_run)
            printf("speedlab tune: %d choice%s made; --dry-run: %s unchanged\n", t.chosen, t.chosen == 1 ? "" : "s",
                   t.planner.path);
        else if (rc == SL_EXIT_OK)
            printf("speedlab tune: %d choice%s in %s\n", t.chosen, t.chosen == 1 ? "" : "s", t.planner.path);
        if (rc == SL_EXIT_OK && t.failed)
            rc = SL_EXIT_FAILED;
    }
    sl_planner_close(&t.planner);
    sl_run_cfg_free(&cfg);
    return rc;
}
