/*
 * cli.c: the arguments of `speedlab run`, checked before anything runs. Every bad value is named, with
 * what would be valid, and gives exit code 2.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "avail.h"
#include "cli.h"
#include "external.h"
#include "params.h"

static const char run_usage[] =
    "usage: speedlab run STUDY...|all [options]\n"
    "  --variants A,B        only these variants (default: all of each study)\n"
    "  --sizes N,M           only these sizes (default: the study's sizes; --quick: its quick sizes);\n"
    "                        also its sweep sizes, which only --sizes runs (mlp, cnn: batches 16-1024)\n"
    "  --reps N              timed repetitions, at least (default: the study's, else 5 for kernels and\n"
    "                        1 for training studies; --quick at most 2)\n"
    "  --warmup N            untimed calls before timing (default: kernels 1, training 0)\n"
    "  --min-time SECONDS    keep repeating until the timed reps add up to this (default: kernels 0.2,\n"
    "                        training 0; --quick 0)\n"
    "  --rounds N            run the whole list of cases N times over, each case once per round, so a\n"
    "                        slow spell of a shared machine falls on every variant alike; each round's\n"
    "                        records say which round (round, rounds), and `speedlab report` pools a\n"
    "                        case's rounds: medians over all their repetitions (default 1)\n"
    "  --threads N           threads for variants marked [uses --threads] in `speedlab list`\n"
    "                        (default: online CPUs)\n"
    "  --counters SPEC       PAPI events or groups (cache, branch, ipc), comma-separated\n"
    "  --seed N              inputs are a pure function of (seed, size) (default 42); digits only,\n"
    "                        0 to 18446744073709551615\n"
    "  --out DIR             results directory; each run gets a new DIR/run-... (default results)\n"
    "  --quick               small sizes, few reps: CI and smoke checks\n"
    "  --data DIR            data directory for studies that read data sets\n"
    "  --param NAME=VALUE    study parameter (repeatable; `speedlab list` shows each with its type\n"
    "                        and range; all are checked before the first case); --param\n"
    "                        form=NAME runs each framework baseline's form NAME, not its fastest\n"
    "  --calibrate           write a calibration record first (as `speedlab calibrate`)\n"
    "  --timerstats          print every case's TimerStats table at the end\n"
    "  --trace FILE          timeline of the whole run (every region of every thread, a mark per case)\n"
    "                        as Chrome Trace Event JSON for ui.perfetto.dev, written at the end (and\n"
    "                        after a case every 30 s, so Ctrl-C keeps it), linked as RUNDIR/trace.json;\n"
    "                        PROF_TRACE_EVENTS=N events per thread (default 1048576) bounds it\n"
    "                        (docs/profiler.md, \"Trace\"; docs/nsight.md)\n"
    "  --wisdom FILE         the planner's choices of ISA level per CPU variant, made by `speedlab\n"
    "                        tune` (default: $SPEEDLAB_WISDOM, else $XDG_CACHE_HOME/speedlab/wisdom.tsv\n"
    "                        or ~/.cache/speedlab/wisdom.tsv);\n"
    "                        a variant it has no choice for runs at the widest level\n"
    "  --no-tune             ignore the wisdom: every case at the widest level (SPEEDLAB_TUNE=off too)\n"
    "  -h, --help            this text\n"
    "environment: SPEEDLAB_ISA=v2|v3|v4 (or sse4.2|avx2|avx512) runs a dispatch build's kernels at that\n"
    "  level (records say which in env.isa; docs/speedlab.md, \"ISA levels\")\n"
    "  SPEEDLAB_PYTHON, SPEEDLAB_BASELINES, SPEEDLAB_BASELINE_TIMEOUT: the framework baselines' interpreter,\n"
    "  programs and time limit (docs/baselines.md; `sh scripts/setup.sh build --baselines` installs them)\n"
    "  SPEEDLAB_DATA_DIR: without --data, galaxy reads DIR/galaxy and the Fashion-MNIST studies\n"
    "  DIR/fashion-mnist (docs/speedlab.md, \"Environment variables\")\n";

int sl_parse_long(const char *flag, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    /* strtol alone would take " 5" and "+5": a value is its digits and nothing else */
    int digits = s && (isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1])));
    long x = digits ? strtol(s, &end, 10) : 0;
    if (!digits || errno || end == s || *end || x < lo || x > hi) {
        fprintf(stderr, "speedlab: %s '%s': expected an integer from %ld to %ld\n", flag, s ? s : "",
                lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int sl_parse_double(const char *flag, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = s ? strtod(s, &end) : 0;
    if (!s || errno || end == s || *end || !isfinite(x) || x < lo || x > hi) {
        fprintf(stderr, "speedlab: %s '%s': expected a number from %g to %g\n", flag, s ? s : "", lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int sl_parse_seed(const char *s, uint64_t *out)
{
    /* strtoull skips spaces and negates a '-' (" -5" became 2^64-5): only digits are a seed */
    char *end;
    errno = 0;
    int digits = s && isdigit((unsigned char)s[0]);
    unsigned long long x = digits ? strtoull(s, &end, 10) : 0;
    if (!digits || errno || *end) {
        fprintf(stderr, "speedlab: --seed '%s': expected an integer from 0 to 18446744073709551615 "
                "(2^64-1), digits only\n", s ? s : "");
        return -1;
    }
    *out = (uint64_t)x;
    return 0;
}

/* Splits "a,b,c" into a malloc'd array of malloc'd strings; empty items are an error. */
static char **split_list(const char *flag, const char *s, int *n)
{
    *n = 0;
    int cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    char **v = calloc((size_t)cap, sizeof *v);
    const char *p = s;
    for (int i = 0; i < cap; i++) {
        size_t len = strcspn(p, ",");
        if (len == 0) {
            fprintf(stderr, "speedlab: %s '%s': empty item in the comma-separated list\n", flag, s);
            for (int j = 0; j < *n; j++)
                free(v[j]);
            free(v);
            *n = 0;
            return NULL;
        }
        v[(*n)++] = strndup(p, len);
        p += len + (p[len] == ',');
    }
    return v;
}

static void list_studies(FILE *f, const sl_study *const *studies, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? ", " : "", studies[i]->name);
}

static int study_has_variant(const sl_study *s, const char *v)
{
    for (int i = 0; i < s->n_variants; i++)
        if (strcmp(s->variants[i].name, v) == 0)
            return 1;
    return 0;
}

static int study_has_size(const sl_study *s, long n)
{
    for (int i = 0; i < s->n_sizes; i++)
        if (s->sizes[i] == n)
            return 1;
    for (int i = 0; i < s->n_quick_sizes; i++)
        if (s->quick_sizes[i] == n)
            return 1;
    for (int i = 0; i < s->n_sweep_sizes; i++)
        if (s->sweep_sizes[i] == n)
            return 1;
    return 0;
}

static int study_has_param(const sl_study *s, const char *name)
{
    for (int i = 0; i < s->n_params; i++)
        if (strcmp(s->params[i].name, name) == 0)
            return 1;
    if (strcmp(name, SL_EXTERNAL_FORM_PARAM) == 0) /* the baselines' form: any study with a baseline row */
        for (int j = 0; j < s->n_variants; j++)
            if (s->variants[j].traits & SL_EXTERNAL)
                return 1;
    return 0;
}

/* Every --variants, --sizes and --param name must mean something for one of the chosen studies. */
static int check_names(const sl_run_cfg *c)
{
    for (int k = 0; k < c->n_variants; k++) {
        int ok = 0;
        for (int i = 0; i < c->n_studies && !ok; i++)
            ok = study_has_variant(c->studies[i], c->variants[k]);
        if (ok)
            continue;
        fprintf(stderr, "speedlab: unknown variant '%s'; valid variants:\n", c->variants[k]);
        for (int i = 0; i < c->n_studies; i++) {
            fprintf(stderr, "  %s:", c->studies[i]->name);
            for (int j = 0; j < c->studies[i]->n_variants; j++)
                fprintf(stderr, " %s", c->studies[i]->variants[j].name);
            fprintf(stderr, "\n");
        }
        return -1;
    }
    for (int k = 0; k < c->n_sizes; k++) {
        int ok = 0;
        for (int i = 0; i < c->n_studies && !ok; i++)
            ok = study_has_size(c->studies[i], c->sizes[k]) ||
                 sl_size_param(c->studies[i], c->n_params, (const char *const *)c->param_names,
                               (const char *const *)c->param_values) == c->sizes[k];
        if (ok)
            continue;
        fprintf(stderr, "speedlab: unknown size %ld; valid sizes:\n", c->sizes[k]);
        for (int i = 0; i < c->n_studies; i++) {
            const sl_study *s = c->studies[i];
            fprintf(stderr, "  %s (%s):", s->name, s->size_name ? s->size_name : "size");
            for (int j = 0; j < s->n_sizes; j++)
                fprintf(stderr, " %ld", s->sizes[j]);
            if (s->n_quick_sizes) {
                fprintf(stderr, "; quick:");
                for (int j = 0; j < s->n_quick_sizes; j++)
                    fprintf(stderr, " %ld", s->quick_sizes[j]);
            }
            if (s->n_sweep_sizes) {
                fprintf(stderr, "; sweep:");
                for (int j = 0; j < s->n_sweep_sizes; j++)
                    fprintf(stderr, " %ld", s->sweep_sizes[j]);
            }
            fprintf(stderr, "\n");
        }
        return -1;
    }
    for (int k = 0; k < c->n_params; k++) {
        int ok = 0;
        for (int i = 0; i < c->n_studies && !ok; i++)
            ok = study_has_param(c->studies[i], c->param_names[k]);
        if (ok)
            continue;
        fprintf(stderr, "speedlab: --param %s: no chosen study has this parameter; valid parameters:\n",
                c->param_names[k]);
        for (int i = 0; i < c->n_studies; i++) {
            fprintf(stderr, "  %s:", c->studies[i]->name);
            for (int j = 0; j < c->studies[i]->n_params; j++)
                fprintf(stderr, " %s", c->studies[i]->params[j].name);
            int form = study_has_param(c->studies[i], SL_EXTERNAL_FORM_PARAM);
            fprintf(stderr, "%s%s\n", form ? " form" : "", c->studies[i]->n_params || form ? "" : " (none)");
        }
        return -1;
    }
    return 0;
}

static int add_study(sl_run_cfg *c, const char *name, const sl_study *const *studies, int n)
{
    for (int i = 0; i < n; i++) {
        if (strcmp(name, "all") != 0 && strcmp(name, studies[i]->name) != 0)
            continue;
        int dup = 0;
        for (int j = 0; j < c->n_studies; j++)
            dup |= c->studies[j] == studies[i];
        if (!dup)
            c->studies[c->n_studies++] = studies[i];
        if (strcmp(name, "all") != 0)
            return 0;
    }
    if (strcmp(name, "all") == 0)
        return 0;
    fprintf(stderr, "speedlab: unknown study '%s'; valid studies: ", name);
    list_studies(stderr, studies, n);
    fprintf(stderr, ", all\n");
    return -1;
}

static int parse_sizes(sl_run_cfg *c, const char *arg)
{
    int n;
    char **items = split_list("--sizes", arg, &n);
    if (!items)
        return -1;
    if (n > 1024) {
        fprintf(stderr, "speedlab: --sizes: %d sizes; at most 1024\n", n);
        for (int i = 0; i < n; i++)
            free(items[i]);
        free(items);
        return -1;
    }
    c->sizes = calloc((size_t)n, sizeof *c->sizes);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (rc == 0 && sl_parse_long("--sizes", items[i], 1, 1L << 40, &c->sizes[i]) != 0)
            rc = -1;
        free(items[i]);
    }
    free(items);
    c->n_sizes = n;
    return rc;
}

static int parse_param(sl_run_cfg *c, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        fprintf(stderr, "speedlab: --param '%s': expected NAME=VALUE\n", arg);
        return -1;
    }
    c->param_names = realloc(c->param_names, (size_t)(c->n_params + 1) * sizeof *c->param_names);
    c->param_values = realloc(c->param_values, (size_t)(c->n_params + 1) * sizeof *c->param_values);
    c->param_names[c->n_params] = strndup(arg, (size_t)(eq - arg));
    c->param_values[c->n_params] = strdup(eq + 1);
    c->n_params++;
    return 0;
}

/* One "--flag value" or "--flag=value" option; *i advances past what it used. */
static int parse_option(sl_run_cfg *c, int argc, char **argv, int *i)
{
    char name[64];
    const char *arg = argv[*i], *val = NULL;
    const char *eq = strchr(arg, '=');
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
    static const char *const flags_only[] = {"--quick", "--calibrate", "--timerstats", "--no-tune"};
    for (size_t k = 0; k < sizeof flags_only / sizeof *flags_only; k++) {
        if (strcmp(name, flags_only[k]) != 0)
            continue;
        if (eq) {
            fprintf(stderr, "speedlab: %s takes no value\n", name);
            return -1;
        }
        if (k == 0)
            c->quick = 1;
        else if (k == 1)
            c->calibrate = 1;
        else if (k == 2)
            c->timerstats = 1;
        else
            c->no_tune = 1;
        return 0;
    }
    if (eq)
        val = eq + 1;
    else if (*i + 1 < argc)
        val = argv[++*i];
    else {
        fprintf(stderr, "speedlab: %s needs a value (see speedlab run --help)\n", name);
        return -1;
    }
    long x;
    if (strcmp(name, "--variants") == 0)
        return (c->variants = split_list(name, val, &c->n_variants)) ? 0 : -1;
    if (strcmp(name, "--sizes") == 0)
        return parse_sizes(c, val);
    if (strcmp(name, "--reps") == 0)
        return sl_parse_long(name, val, 1, 1000000, &x) ? -1 : (c->reps = (int)x, 0);
    if (strcmp(name, "--rounds") == 0)
        return sl_parse_long(name, val, 1, 1000, &x) ? -1 : (c->rounds = (int)x, 0);
    if (strcmp(name, "--warmup") == 0)
        return sl_parse_long(name, val, 0, 1000000, &x) ? -1 : (c->warmup = (int)x, 0);
    if (strcmp(name, "--threads") == 0)
        return sl_parse_long(name, val, 1, 4096, &x) ? -1 : (c->threads = (int)x, 0);
    if (strcmp(name, "--min-time") == 0)
        return sl_parse_double(name, val, 0, 86400, &c->min_time);
    if (strcmp(name, "--seed") == 0)
        return sl_parse_seed(val, &c->seed);
    if (strcmp(name, "--counters") == 0)
        return (c->counters = val, 0);
    if (strcmp(name, "--out") == 0)
        return (c->out = val, 0);
    if (strcmp(name, "--trace") == 0)
        return (c->trace = val, 0);
    if (strcmp(name, "--data") == 0)
        return (c->data_dir = val, 0);
    if (strcmp(name, "--wisdom") == 0)
        return (c->wisdom = val, 0);
    if (strcmp(name, "--param") == 0)
        return parse_param(c, val);
    fprintf(stderr, "speedlab: run: unknown option '%s' (see speedlab run --help)\n", name);
    return -1;
}

int sl_parse_run(int argc, char **argv, const sl_study *const *studies, int n_studies, sl_run_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->reps = c->warmup = -1;
    c->rounds = 1;
    c->min_time = -1;
    c->threads = sl_online_cpus();
    c->seed = 42;
    c->out = "results";
    c->studies = calloc((size_t)n_studies + 1, sizeof *c->studies);
    int named = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(run_usage, stdout);
            return 1;
        }
        if (strncmp(argv[i], "--", 2) == 0) {
            if (parse_option(c, argc, argv, &i) != 0)
                return SL_EXIT_USAGE;
            continue;
        }
        named++;
        if (add_study(c, argv[i], studies, n_studies) != 0)
            return SL_EXIT_USAGE;
    }
    if (!named) {
        fprintf(stderr, "speedlab: run: name at least one study, or all; studies: ");
        list_studies(stderr, studies, n_studies);
        fprintf(stderr, "\n%s", run_usage);
        return SL_EXIT_USAGE;
    }
    struct stat st;
    if (c->data_dir && (stat(c->data_dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "speedlab: --data '%s': not a directory (%s)\n", c->data_dir,
                errno ? strerror(errno) : "a file");
        return SL_EXIT_USAGE;
    }
    if (check_names(c))
        return SL_EXIT_USAGE;
    /* every value of every chosen study, before the first case: a bad one must not cost the studies
     * before it their run, nor leave a run directory (and `latest`) behind */
    for (int i = 0; i < c->n_studies; i++)
        if (sl_params_check(c->studies[i], c->n_params, (const char *const *)c->param_names,
                            (const char *const *)c->param_values) != 0)
            return SL_EXIT_USAGE;
    return 0;
}

void sl_run_cfg_free(sl_run_cfg *c)
{
    for (int i = 0; i < c->n_variants; i++)
        free(c->variants[i]);
    for (int i = 0; i < c->n_params; i++) {
        free((char *)c->param_names[i]);
        free((char *)c->param_values[i]);
    }
    free(c->variants);
    free(c->sizes);
    free(c->param_names);
    free(c->param_values);
    free(c->studies);
    memset(c, 0, sizeof *c);
}
