/*
 * commands.c: `speedlab COMMAND`: dispatch, `list`, `calibrate` and their help texts.
 * `run` is runner.c; `report` and `compare` are the reports' own entry points (reports/report.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "avail.h"
#include "calibrate.h"
#include "cli.h"
#include "commands.h"
#include "env.h"
#include "interrupt.h"
#include "isa.h"
#include "plan.h"
#include "report.h"
#include "rundir.h"
#include "runner.h"
#include "sl_config.h"
#include "slurm.h"
#include "tune.h"
#include "validate.h"

static const char main_usage[] =
    "usage: speedlab COMMAND [options]\n"
    "  list                 studies, variants (and whether they can run here), sizes, parameters\n"
    "  run STUDY...|all     run cases and write results records (speedlab run --help)\n"
    "  calibrate            measure the machine's ceilings (triad, FMA peak, sgemm, GPU)\n"
    "  tune [STUDY...]      time each CPU variant at each ISA level, keep the faster (speedlab tune --help)\n"
    "  plan STUDY...|all    the cases a run would run, counted and estimated (speedlab plan --help)\n"
    "  slurm STUDY...|all   the plan as Slurm job arrays and a merge job (speedlab slurm --help)\n"
    "  report DIR...        tables and figure data from results (speedlab report --help)\n"
    "  compare A B          compare two results directories (speedlab compare --help)\n"
    "  help [COMMAND]       this text, or a command's\n"
    "  --version            the version\n"
    "docs/speedlab.md documents every command, flag and exit code.\n";

static const char list_usage[] =
    "usage: speedlab list [STUDY...]\n"
    "  Lists studies, their sizes, quick sizes and sweep sizes (run only when --sizes names them),\n"
    "  variants with their availability on this machine (and why not), and the parameters --param\n"
    "  accepts, with their defaults.\n";

static const char calibrate_usage[] =
    "usage: speedlab calibrate [--out DIR] [--threads N]\n"
    "  --out DIR      results directory; the record goes to a new DIR/run-... (default results)\n"
    "  --threads N    threads for the all-threads ceilings (default: online CPUs)\n"
    "  The FMA peak is that of the kernels' ISA level: SPEEDLAB_ISA=v3 calibrates a dispatch build's\n"
    "  AVX2 kernels (docs/speedlab.md, \"ISA levels\"). Where a CUDA device is visible, the GPU's\n"
    "  ceilings too: device bandwidth, FP32 FMA peak, cuBLAS sgemm, FP16/BF16 tensor-core GEMM and\n"
    "  host-device copies (docs/results-schema.md); without one the record says why they are absent.\n";

/* ---- list --------------------------------------------------------------------------------------- */

static void print_sizes(const char *label, const long *v, int n)
{
    printf("  %s", label);
    for (int i = 0; i < n; i++)
        printf("%s%ld", i ? ", " : "", v[i]);
    printf("%s\n", n ? "" : "(none)");
}

static void list_study(const sl_study *s)
{
    printf("%s: %s\n", s->name, s->title ? s->title : "");
    if (s->source)
        printf("  source: %s\n", s->source);
    printf("  kind: %s; baseline: %s; tolerance: %g\n", s->kind == SL_TRAINING ? "training" : "kernel",
           s->baseline ? s->baseline : "(none)", s->tolerance);
    char label[64];
    snprintf(label, sizeof label, "sizes (%s): ", s->size_name ? s->size_name : "size");
    print_sizes(label, s->sizes, s->n_sizes);
    print_sizes("quick sizes: ", s->quick_sizes, s->n_quick_sizes);
    if (s->n_sweep_sizes) /* only the studies that have them: other listings stay as they were */
        print_sizes("sweep sizes (--sizes): ", s->sweep_sizes, s->n_sweep_sizes);
    printf("  variants:\n");
    int w = 12; /* the names' column: as wide as the study's longest name */
    for (int v = 0; v < s->n_variants; v++)
        w = (int)strlen(s->variants[v].name) > w ? (int)strlen(s->variants[v].name) : w;
    for (int v = 0; v < s->n_variants; v++) {
        const sl_variant *var = &s->variants[v];
        char why[256], on[64] = "";
        int ok = sl_variant_available(var, why, sizeof why);
        if (var->builds_on) /* which variant the report expects this one to beat */
            snprintf(on, sizeof on, " (builds on %s)", var->builds_on);
        printf("    %-*s %-28s %s%s%s\n", w, var->name, ok ? "available" : why,
               var->description ? var->description : "", on,
               (var->traits & SL_THREADED) ? " [uses --threads]"
               : (var->traits & SL_EXTERNAL) ? " [framework baseline: docs/baselines.md]" : "");
    }
    printf("  params:%s\n", s->n_params ? "" : " (none)");
    for (int p = 0; p < s->n_params; p++) {
        const sl_param *r = &s->params[p];
        char kind[96] = "text";
        if (r->type == SL_PARAM_INT)
            snprintf(kind, sizeof kind, "integer %.0f-%.0f", r->min, r->max);
        else if (r->type == SL_PARAM_REAL)
            snprintf(kind, sizeof kind, "number %g-%g", r->min, r->max);
        else if (r->choices)
            snprintf(kind, sizeof kind, "%s", r->choices);
        printf("    %-16s default %-10s %-22s %s\n", r->name, r->default_value ? r->default_value : "(none)",
               kind, r->help ? r->help : "");
    }
}

int sl_list_main(int argc, char **argv, const sl_study *const *studies, int n_studies)
{
    int listed = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(list_usage, stdout);
            return SL_EXIT_OK;
        }
    }
    for (int i = 1; i < argc; i++) {
        int found = 0;
        for (int k = 0; k < n_studies && !found; k++)
            if (strcmp(studies[k]->name, argv[i]) == 0) {
                list_study(studies[k]);
                found = 1;
            }
        if (!found) {
            fprintf(stderr, "speedlab: list: unknown study '%s'; valid studies:", argv[i]);
            for (int k = 0; k < n_studies; k++)
                fprintf(stderr, " %s", studies[k]->name);
            fprintf(stderr, "\n");
            return SL_EXIT_USAGE;
        }
        listed++;
    }
    for (int k = 0; k < n_studies && !listed; k++) {
        list_study(studies[k]);
        if (k + 1 < n_studies)
            printf("\n");
    }
    return SL_EXIT_OK;
}

/* ---- calibrate ---------------------------------------------------------------------------------- */

int sl_calibrate_main(int argc, char **argv)
{
    const char *out = "results";
    long threads = sl_online_cpus();
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(calibrate_usage, stdout);
            return SL_EXIT_OK;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
        int is_out = strncmp(a, "--out", len) == 0 && len == 5;
        int is_threads = strncmp(a, "--threads", len) == 0 && len == 9;
        if (!is_out && !is_threads) {
            fprintf(stderr, "speedlab: calibrate: unknown argument '%s'\n%s", a, calibrate_usage);
            return SL_EXIT_USAGE;
        }
        if (!val) {
            fprintf(stderr, "speedlab: %s needs a value\n", a);
            return SL_EXIT_USAGE;
        }
        if (!eq)
            i++;
        if (is_out)
            out = val;
        else if (sl_parse_long("--threads", val, 1, 4096, &threads) != 0)
            return SL_EXIT_USAGE;
    }
    char dir[4096], id[256], path[4200];
    if (sl_rundir_create(out, dir, sizeof dir, id, sizeof id) != 0)
        return SL_EXIT_FAILED;
    snprintf(path, sizeof path, "%s/results.jsonl", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666); /* a new run directory */
    if (fd < 0) {
        perror(path);
        return SL_EXIT_FAILED;
    }
    sl_interrupt_install();
    json_t *env = sl_env_capture((int)threads);
    int rc = sl_write_calibration(fd, id, env, (int)threads);
    json_decref(env);
    close(fd);
    if (rc == 0)
        printf("speedlab: calibration record in %s\n", path);
    return rc == 0 ? SL_EXIT_OK : SL_EXIT_FAILED;
}

/* ---- dispatch ----------------------------------------------------------------------------------- */

int sl_main(int argc, char **argv, const sl_study *const *studies, int n_studies)
{
    if (argc < 2) {
        fputs(main_usage, stderr);
        return SL_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            char help[] = "--help";
            char *sub[] = {argv[0], argv[2], help, NULL};
            return sl_main(3, sub, studies, n_studies);
        }
        fputs(main_usage, stdout);
        return SL_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("speedlab %s\n", SL_VERSION);
        return SL_EXIT_OK;
    }
    if (kern_isa_error() && (!strcmp(cmd, "run") || !strcmp(cmd, "calibrate") || !strcmp(cmd, "tune"))) {
        /* a forced ISA level that cannot be had: running anyway would label results wrongly */
        fprintf(stderr, "speedlab: %s\n", kern_isa_error());
        return SL_EXIT_USAGE;
    }
    if ((!strcmp(cmd, "list") || !strcmp(cmd, "run") || !strcmp(cmd, "plan") || !strcmp(cmd, "tune") ||
         !strcmp(cmd, "slurm")) && sl_registry_check(studies, n_studies) != 0)
        return SL_EXIT_FAILED; /* a row without its functions would crash a case later */
    if (strcmp(cmd, "list") == 0)
        return sl_list_main(argc - 1, argv + 1, studies, n_studies);
    if (strcmp(cmd, "run") == 0)
        return sl_run_main(argc - 1, argv + 1, studies, n_studies);
    if (strcmp(cmd, "calibrate") == 0)
        return sl_calibrate_main(argc - 1, argv + 1);
    if (strcmp(cmd, "tune") == 0)
        return sl_tune_main(argc - 1, argv + 1, studies, n_studies);
    if (strcmp(cmd, "plan") == 0)
        return sl_plan_main(argc - 1, argv + 1, studies, n_studies);
    if (strcmp(cmd, "slurm") == 0)
        return sl_slurm_main(argc - 1, argv + 1, studies, n_studies);
    if (strcmp(cmd, "report") == 0)
        return rep_report_main(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return rep_compare_main(argc - 1, argv + 1);
    fprintf(stderr, "speedlab: unknown command '%s'; valid commands: list, run, calibrate, tune, plan, "
            "slurm, report, compare, help\n", cmd);
    return SL_EXIT_USAGE;
}
