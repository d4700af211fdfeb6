/*
 * plan.c: `speedlab plan STUDY...|all [run options] [--out DIR] [--calibration PATH]`: the cases the run
 * options would run, one per line, with an estimate of each, before anything runs. With --out, the list
 * is written as DIR/cases.tsv, which `speedlab slurm` runs as job arrays and `speedlab report` compares
 * with the records (the missing cases). The run options are `speedlab run`'s, parsed by cli.c, so a plan
 * refuses exactly what the run would refuse.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "external.h"
#include "params.h"
#include "plan.h"
#include "safefile.h"

static const char plan_usage[] =
    "usage: speedlab plan STUDY...|all [run options] [--out DIR] [--calibration PATH]\n"
    "  Lists the cases `speedlab run` would run with these options (study, variant, size, seed, reps),\n"
    "  their count and an estimate of each case's time, and runs nothing.\n"
    "  run options        as for `speedlab run` (speedlab run --help): --variants, --sizes, --reps,\n"
    "                     --quick, --param ...\n"
    "  --out DIR          also write the list to DIR/cases.tsv (the cases file `speedlab slurm` runs)\n"
    "  --calibration PATH a results file or run directory with a calibration record and/or earlier\n"
    "                     records of the same cases (default: DIR's and results/latest's, if any)\n"
    "  -h, --help         this text\n"
    "docs/slurm.md documents the cases file and how the estimates are made.\n";

/* Options of `run` that take no value. */
static int no_value(const char *name)
{
    return !strcmp(name, "--quick") || !strcmp(name, "--calibrate") || !strcmp(name, "--timerstats") ||
           !strcmp(name, "--no-tune");
}

/* Options each case line sets itself (or that a task must not repeat): left out of the shared options. */
static int per_case(const char *name)
{
    static const char *const own[] = {"--out", "--variants", "--sizes", "--seed", "--reps", "--param",
                                      "--calibrate", "--timerstats", "--threads"};
    for (size_t k = 0; k < sizeof own / sizeof *own; k++)
        if (!strcmp(name, own[k]))
            return 1;
    return 0;
}

/* --param form=NAME is run-wide and in no case's params (external.h): every task passes it on */
static int form_param(const char *name, const char *value)
{
    return !strcmp(name, "--param") && !strncmp(value, SL_EXTERNAL_FORM_PARAM "=", 5);
}

int sl_plan_options_check(const char *options, char *why, size_t n)
{
    char buf[4096], *save = NULL;
    snprintf(buf, sizeof buf, "%s", options);
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (strncmp(w, "--", 2) != 0) {
            snprintf(why, n, "'%s' is not an option: a study name there would add its cases to every task", w);
            return -1;
        }
        char name[64];
        const char *eq = strchr(w, '=');
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - w) : (int)strlen(w), w);
        const char *val = eq ? eq + 1 : NULL;
        if (!eq && !no_value(name))
            val = strtok_r(NULL, " ", &save);
        int rounds_one = !strcmp(name, "--rounds") && val && !strcmp(val, "1");
        if ((per_case(name) || !strcmp(name, "--rounds")) && !form_param(name, val ? val : "") && !rounds_one) {
            snprintf(why, n, "'%s' is an option each case line sets (or a task must not repeat): in the shared "
                     "options it would change which cases every task runs", name);
            return -1;
        }
    }
    return 0;
}

int sl_plain_word(const char *w)
{
    for (const char *p = w; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,=:/+@%-", *p))
            return 0;
    return *w != 0;
}

static int add_option(sl_plan *p, const char *word)
{
    if (!sl_plain_word(word)) {
        fprintf(stderr, "speedlab: plan: option word '%s': the cases file and the Slurm scripts pass run "
                "options unquoted, so only letters, digits and _.,=:/+@%%- are accepted\n", word);
        return -1;
    }
    size_t len = strlen(p->options);
    if (len + strlen(word) + 2 >= sizeof p->options) {
        fprintf(stderr, "speedlab: plan: the run options are longer than %zu characters\n",
                sizeof p->options);
        return -1;
    }
    snprintf(p->options + len, sizeof p->options - len, "%s%s", len ? " " : "", word);
    return 0;
}

/* Splits argv into plan's own options, `extra`'s (slurm's), and the words `speedlab run` parses; the
 * shared run options are kept as words in p->options. Returns 0, 1 (--help) or SL_EXIT_USAGE. */
static int split_args(int argc, char **argv, sl_plan *p, char **run_argv, int *run_argc,
                      sl_plan_extra_fn extra, void *ctx)
{
    *run_argc = 0;
    run_argv[(*run_argc)++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (!strncmp(a, "--calibration", 13) && (a[13] == 0 || a[13] == '=')) {
            if (a[13] == 0 && i + 1 >= argc) {
                fprintf(stderr, "speedlab: --calibration needs a path (a results file or run directory)\n");
                return SL_EXIT_USAGE;
            }
            p->calibration = a[13] ? a + 14 : argv[++i];
            continue;
        }
        int used = extra && !strncmp(a, "--", 2) ? extra(ctx, argc, argv, i) : 0;
        if (used < 0)
            return SL_EXIT_USAGE;
        if (used > 0) {
            i += used - 1;
            continue;
        }
        run_argv[(*run_argc)++] = argv[i];
        if (strncmp(a, "--", 2) != 0)
            continue; /* a study name */
        char name[64];
        const char *eq = strchr(a, '=');
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
        const char *val = NULL;
        if (!eq && !no_value(name) && i + 1 < argc)
            run_argv[(*run_argc)++] = argv[++i], val = argv[i];
        const char *pv = val ? val : eq ? eq + 1 : "";
        if (per_case(name) && !form_param(name, pv))
            continue;
        if (add_option(p, a) != 0 || (val && add_option(p, val) != 0))
            return SL_EXIT_USAGE;
    }
    run_argv[*run_argc] = NULL;
    return 0;
}

/* Whether --param NAME= was given. */
static int given(const sl_opts *o, const char *name)
{
    for (int i = 0; i < o->n_params; i++)
        if (!strcmp(o->param_names[i], name))
            return 1;
    return 0;
}

/* The parameters of a case as the record will hold them, minus the size's unless it was given (galaxy's
 * --param max_iter=2 is then the case's size, and the task passes it on so that `run` takes that size);
 * reports/missing.c leaves a size's own parameter equal to the size out of the identity, as the loader. */
static void case_params(const sl_opts *o, const sl_study *s, char *out, size_t n)
{
    size_t len = 0;
    out[0] = 0;
    for (int i = 0; i < s->n_params && len < n; i++) {
        char v[256]; /* the record's form (1.0 -> 1, 0x10 -> 16, 08 -> 8), or the case never matches one */
        sl_param_canonical(o, s, &s->params[i], v, sizeof v);
        /* the size's own parameter only where it says other than the size (reports/loader.c, params_key) */
        if (s->size_name && !strcmp(s->params[i].name, s->size_name) && !given(o, s->size_name))
            continue;
        len += (size_t)snprintf(out + len, n - len, "%s%s=%s", len ? " " : "", s->params[i].name, v);
    }
}

static int wanted_variant(const sl_run_cfg *c, const char *name)
{
    for (int k = 0; k < c->n_variants; k++)
        if (!strcmp(c->variants[k], name))
            return 1;
    return c->n_variants == 0;
}

static int accepts(const long *v, int n, long size)
{
    for (int i = 0; i < n; i++)
        if (v[i] == size)
            return 1;
    return 0;
}

/* The sizes of study s, as runner.c chooses them: --sizes (those s accepts), else its (quick) sizes. */
static int plan_sizes(const sl_run_cfg *c, const sl_study *s, long *out, int max)
{
    int n = 0;
    long given = sl_size_param(s, c->n_params, (const char *const *)c->param_names,
                               (const char *const *)c->param_values);
    if (given > 0 && max > 0) { /* as runner.c: the size's parameter, given, is the only size */
        out[0] = given;
        return 1;
    }
    for (int k = 0; k < c->n_sizes && n < max; k++)
        if (accepts(s->sizes, s->n_sizes, c->sizes[k]) || accepts(s->quick_sizes, s->n_quick_sizes, c->sizes[k])
            || accepts(s->sweep_sizes, s->n_sweep_sizes, c->sizes[k]))
            out[n++] = c->sizes[k];
    if (c->n_sizes)
        return n;
    const long *src = c->quick && s->n_quick_sizes ? s->quick_sizes : s->sizes;
    int m = c->quick && s->n_quick_sizes ? s->n_quick_sizes : s->n_sizes;
    for (int k = 0; k < m && n < max; k++)
        out[n++] = src[k];
    return n;
}

/* Repetitions as case.c plans them. */
static int plan_reps(const sl_run_cfg *c, const sl_study *s)
{
    int def = s->default_reps > 0 ? s->default_reps : (s->kind == SL_KERNEL ? 5 : 1);
    if (c->quick)
        def = def < 2 ? def : 2;
    return c->reps > 0 ? c->reps : def;
}

/* Every case, in the order `speedlab run` would run them: study, size, variant. */
static void build_cases(sl_plan *p)
{
    const sl_run_cfg *c = &p->cfg;
    sl_opts o = {.seed = c->seed, .threads = c->threads, .quick = c->quick, .data_dir = c->data_dir,
                 .n_params = c->n_params, .param_names = c->param_names, .param_values = c->param_values};
    for (int i = 0; i < c->n_studies; i++) {
        const sl_study *s = c->studies[i];
        long sizes[1024];
        int ns = plan_sizes(c, s, sizes, 1024);
        for (int k = 0; k < ns; k++)
            for (int v = 0; v < s->n_variants; v++) {
                if (!wanted_variant(c, s->variants[v].name))
                    continue;
                p->cases = realloc(p->cases, (size_t)(p->n + 1) * sizeof *p->cases);
                sl_plan_case *pc = &p->cases[p->n++];
                memset(pc, 0, sizeof *pc);
                *pc = (sl_plan_case){.study = s, .variant = v, .size = sizes[k], .reps = plan_reps(c, s),
                                     .gpu = (s->variants[v].traits & SL_DEVICE) != 0, .est_s = -1};
                case_params(&o, s, pc->params, sizeof pc->params);
            }
    }
}

int sl_plan_parse(int argc, char **argv, const sl_study *const *studies, int n_studies, sl_plan *p,
                  sl_plan_extra_fn extra, void *ctx)
{
    memset(p, 0, sizeof *p);
    char **run_argv = calloc((size_t)argc + 1, sizeof *run_argv);
    int run_argc, rc = split_args(argc, argv, p, run_argv, &run_argc, extra, ctx);
    if (rc == 0) {
        rc = sl_parse_run(run_argc, run_argv, studies, n_studies, &p->cfg);
        if (rc == 1) /* `run`'s --help cannot be reached: split_args answered -h first */
            rc = SL_EXIT_USAGE;
    }
    free(run_argv);
    if (rc != 0)
        return rc;
    if (p->cfg.rounds > 1) {
        fprintf(stderr, "speedlab: --rounds is speedlab run's (the list of cases again in one process); a plan "
                "and its Slurm submission run each case once: submit it once per round, each into its own "
                "--out, and read them together with speedlab report --pool DIR1 DIR2 ...\n");
        return SL_EXIT_USAGE;
    }
    for (int k = 0; k < p->cfg.n_params; k++)
        if (!sl_plain_word(p->cfg.param_values[k])) {
            fprintf(stderr, "speedlab: plan: --param %s='%s': the cases file passes values unquoted, so "
                    "only letters, digits and _.,=:/+@%%- are accepted\n", p->cfg.param_names[k],
                    p->cfg.param_values[k]);
            return SL_EXIT_USAGE;
        }
    build_cases(p);
    sl_plan_estimate(p);
    return 0;
}

void sl_plan_free(sl_plan *p)
{
    sl_run_cfg_free(&p->cfg);
    free(p->cases);
    memset(p, 0, sizeof *p);
}

int sl_plan_write(const sl_plan *p, const char *path, const char *header)
{
    /* whole, beside it, then renamed: a full disk keeps the earlier cases file whole, and a link, FIFO or
     * device there is refused, never written through (common/safefile.h) */
    char tmp[4400];
    const char *why;
    FILE *f = sf_create(path, tmp, sizeof tmp, &why);
    if (!f) {
        fprintf(stderr, "speedlab: plan: cannot write %s: %s; remove it or give another --out\n", path, why);
        return -1;
    }
    fprintf(f, "%s\n# options: %s\n", SL_CASES_MAGIC, p->options);
    if (header)
        fprintf(f, "# %s\n", header);
    fprintf(f, "# index\tstudy\tvariant\tsize\tseed\treps\tdevice\tparams\testimate_s\n");
    for (int i = 0; i < p->n; i++) {
        const sl_plan_case *c = &p->cases[i];
        fprintf(f, "%d\t%s\t%s\t%ld\t%llu\t%d\t%s\t%s\t", i, c->study->name, c->study->variants[c->variant].name,
                c->size, (unsigned long long)p->cfg.seed, c->reps, c->gpu ? "gpu" : "cpu",
                c->params[0] ? c->params : "-");
        if (c->est_s >= 0)
            fprintf(f, "%.3g\n", c->est_s);
        else
            fprintf(f, "-\n");
    }
    if (sf_commit(f, tmp, path, &why) != 0) {
        fprintf(stderr, "speedlab: plan: writing %s: %s; the file there is as it was (free space, then run "
                "again)\n", path, why);
        return -1;
    }
    return 0;
}

static void print_seconds(char *buf, size_t n, double s)
{
    if (s < 0)
        snprintf(buf, n, "-");
    else if (s < 10)
        snprintf(buf, n, "%.2g s", s);
    else if (s < 120)
        snprintf(buf, n, "%.0f s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.1f min", s / 60);
    else
        snprintf(buf, n, "%.1f h", s / 3600);
}

void sl_plan_print(const sl_plan *p, const char *path)
{
    int gpu = 0, none = 0, bound = 0;
    double total = 0;
    printf("%-5s %-12s %-14s %10s %5s %-4s %10s  %s\n", "#", "study", "variant", "size", "reps", "dev",
           "estimate", "based on");
    for (int i = 0; i < p->n; i++) {
        const sl_plan_case *c = &p->cases[i];
        char est[32], shown[40];
        print_seconds(est, sizeof est, c->est_s);
        snprintf(shown, sizeof shown, "%s%s", c->bound ? ">= " : "", est);
        printf("%-5d %-12s %-14s %10ld %5d %-4s %10s  %s\n", i, c->study->name,
               c->study->variants[c->variant].name, c->size, c->reps, c->gpu ? "gpu" : "cpu", shown, c->basis);
        gpu += c->gpu;
        bound |= c->bound;
        if (c->est_s < 0)
            none++;
        else
            total += c->est_s;
    }
    char t[32];
    print_seconds(t, sizeof t, total);
    printf("speedlab plan: %d cases (%d CPU, %d GPU)%s%s\n", p->n, p->n - gpu, gpu, path ? " -> " : "",
           path ? path : "");
    printf("speedlab plan: estimated time: %s%s for the %d cases with an estimate (one after another, "
           "as `speedlab run` would take them)%s; %d cases without an estimate\n", bound ? "at least " : "",
           t, p->n - none, bound ? ", some of it roofline lower bounds" : "", none);
}

int sl_plan_main(int argc, char **argv, const sl_study *const *studies, int n_studies)
{
    sl_plan p;
    int rc = sl_plan_parse(argc, argv, studies, n_studies, &p, NULL, NULL);
    if (rc == 1)
        fputs(plan_usage, stdout);
    if (rc != 0) {
        sl_plan_free(&p);
        return rc == 1 ? SL_EXIT_OK : rc;
    }
    char path[4200];
    int out = 0;
    for (int i = 1; i < argc; i++) /* --out given: write the file (else only print) */
        out |= !strcmp(argv[i], "--out") || !strncmp(argv[i], "--out=", 6);
    if (out) {
        mkdir(p.cfg.out, 0777); /* an existing directory is fine; fopen says what else is wrong */
        snprintf(path, sizeof path, "%s/cases.tsv", p.cfg.out);
        if (sl_plan_write(&p, path, NULL) != 0) {
            sl_plan_free(&p);
            return SL_EXIT_FAILED;
        }
    }
    sl_plan_print(&p, out ? path : NULL);
    sl_plan_free(&p);
    return SL_EXIT_OK;
}
