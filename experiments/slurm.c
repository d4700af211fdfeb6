/*
 * slurm.c: `speedlab slurm`: a plan (plan.c) run as Slurm job arrays, merged by one report job.
 *
 *   speedlab slurm STUDY...|all [run options] --out DIR [slurm options] [--submit]
 *   speedlab slurm --resubmit DIR [slurm options] [--submit]
 *
 * Writes DIR/cases.tsv (the plan) and DIR/slurm/: a calibration job per partition (node type), one job
 * array for the CPU cases and one for the GPU cases (each task runs a chunk of cases with `speedlab run`
 * into DIR/<array job id>_<task id>/), a merge job that runs `speedlab report DIR` once the arrays are
 * done, and submit.sh, which submits them in that order with their dependencies. The scripts are plain
 * and commented so that a user reads and edits them before submitting; --submit runs submit.sh.
 * --resubmit DIR does the same for the planned cases that have no record (reports/missing.c).
 * docs/slurm.md is the walk-through.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "missing.h"
#include "plan.h"
#include "rep.h"
#include "safefile.h"
#include "slurm.h"

static const char slurm_usage[] =
    "usage: speedlab slurm STUDY...|all [run options] --out DIR [options]\n"
    "       speedlab slurm --resubmit DIR [options]\n"
    "  Writes DIR/cases.tsv (as speedlab plan) and DIR/slurm/: job arrays over the cases (CPU and GPU\n"
    "  cases apart), a calibration job per partition, a merge job (speedlab report DIR) and submit.sh.\n"
    "  --partition P        partition of the CPU cases (default: the cluster's default)\n"
    "  --gpu-partition P    partition of the GPU cases (default: --partition)\n"
    "  --time T             time limit of each task, as sbatch takes it (default 01:00:00)\n"
    "  --cpus-per-task N    CPUs of each task; threaded variants run on N threads (default 1)\n"
    "  --gpus N             GPUs of each GPU task: --gres=gpu:N (default 1)\n"
    "  --chunk N            cases per task, so that tiny cases do not flood the scheduler (default 4)\n"
    "  --max-running K      at most K tasks of an array at once: --array=0-N%K (default 8)\n"
    "  --sbatch-arg WORD    one more #SBATCH line in every script, e.g. --sbatch-arg=--account=proj\n"
    "                       (repeatable)\n"
    "  --no-calibrate       no calibration job\n"
    "  --submit             run DIR/slurm/submit.sh (sbatch) after writing it\n"
    "  --resubmit DIR       only the cases of DIR/cases.tsv that have no record under DIR, with the\n"
    "                       options the first submission was written with (given ones override)\n"
    "  run options, --calibration PATH: as for speedlab plan (speedlab plan --help)\n"
    "docs/slurm.md walks through it from plan to merged report.\n";

#define MAX_SBATCH_ARGS 16

typedef struct slurm_opts {
    const char *partition, *gpu_partition, *time;
    long cpus, gpus, chunk, max_running;
    int calibrate, submit;
    const char *resubmit;
    const char *sbatch_args[MAX_SBATCH_ARGS];
    int n_sbatch_args;
    char words[2048]; /* the options as given (but --submit, --resubmit): the cases file keeps them */
} slurm_opts;

/* A word written into a script unquoted must not need quoting. */
static int plain(const char *flag, const char *w)
{
    if (sl_plain_word(w))
        return 1;
    fprintf(stderr, "speedlab: %s '%s': written into the scripts unquoted, so only letters, digits "
            "and _.,=:/+@%%- are accepted\n", flag, w);
    return 0;
}

/* The directory the scripts name in #SBATCH lines (--output=DIR/slurm/logs/...), which sbatch reads
 * without a shell's quoting and where % starts a pattern: letters, digits and _.,=:/+@- only. */
static int sbatch_path(const char *what, const char *dir)
{
    for (const char *p = dir; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,=:/+@-", *p)) {
            fprintf(stderr, "speedlab: slurm: %s is '%s': the scripts' #SBATCH --output lines hold it, where "
                    "'%c' cannot stand (sbatch reads them unquoted, %% starts a pattern); use a directory "
                    "whose path has only letters, digits and _.,=:/+@-\n", what, dir, *p);
            return 0;
        }
    return 1;
}

/* s in single quotes for sh and bash, any byte kept: ' becomes '\''. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++)
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    fputc('\'', f);
}

static void keep_word(slurm_opts *so, const char *name, const char *val)
{
    size_t len = strlen(so->words);
    snprintf(so->words + len, sizeof so->words - len, "%s%s%s%s", len ? " " : "", name, val ? "=" : "",
             val ? val : "");
}

/* One slurm option at argv[i] (sl_plan_extra_fn): the words used, 0 when not ours, -1 after a message. */
static int slurm_option(void *ctx, int argc, char **argv, int i)
{
    slurm_opts *so = ctx;
    char name[64];
    const char *a = argv[i], *eq = strchr(a, '=');
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : (int)strlen(a), a);
    if (!strcmp(name, "--submit")) { /* not kept: a resubmission says again whether to submit */
        so->submit = 1;
        return 1;
    }
    if (!strcmp(name, "--no-calibrate")) {
        so->calibrate = 0;
        keep_word(so, name, NULL);
        return 1;
    }
    /* the options with a value: a string, a count (1 to 100000), or another #SBATCH line */
    const struct { const char *name; const char **str; long *num; } opts[] = {
        {"--partition", &so->partition, NULL}, {"--gpu-partition", &so->gpu_partition, NULL},
        {"--time", &so->time, NULL}, {"--resubmit", &so->resubmit, NULL},
        {"--cpus-per-task", NULL, &so->cpus}, {"--gpus", NULL, &so->gpus},
        {"--chunk", NULL, &so->chunk}, {"--max-running", NULL, &so->max_running},
        {"--sbatch-arg", NULL, NULL}};
    size_t k = 0, n = sizeof opts / sizeof *opts;
    while (k < n && strcmp(name, opts[k].name))
        k++;
    if (k == n)
        return 0;
    const char *val = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
    if (!val || !*val) {
        fprintf(stderr, "speedlab: %s needs a value (see speedlab slurm --help)\n", name);
        return -1;
    }
    if (!plain(name, val))
        return -1;
    if (opts[k].num && sl_parse_long(name, val, 1, 100000, opts[k].num) != 0)
        return -1;
    if (opts[k].str)
        *opts[k].str = val;
    if (!opts[k].str && !opts[k].num) {
        if (so->n_sbatch_args == MAX_SBATCH_ARGS) {
            fprintf(stderr, "speedlab: --sbatch-arg: at most %d\n", MAX_SBATCH_ARGS);
            return -1;
        }
        so->sbatch_args[so->n_sbatch_args++] = val;
    }
    if (opts[k].str != &so->resubmit)
        keep_word(so, name, val);
    return eq ? 1 : 2;
}

/* What the scripts need from a cases file: its shared run options and how many cases per device. */
typedef struct cases_info {
    char options[2048], slurm[2048];
    int n_cpu, n_gpu;
} cases_info;

/* The cases file's "# options:" words go into the task script as words of `speedlab run`: each must be
 * one `speedlab plan` could have written (a file edited by hand, or by someone else, is refused). */
static int check_options(const char *path, int lineno, const char *options)
{
    char buf[2048], *save = NULL;
    if (strlen(options) >= sizeof buf) {
        fprintf(stderr, "speedlab: slurm: %s:%d: the '# options:' line is longer than %zu characters\n", path,
                lineno, sizeof buf - 1);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", options);
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
        if (!sl_plain_word(w)) {
            fprintf(stderr, "speedlab: slurm: %s:%d: '# options:' has '%s': the task scripts pass these "
                    "words to speedlab run unquoted, so only letters, digits and _.,=:/+@%%- are accepted "
                    "(as speedlab plan writes them); plan again with the options you want\n", path, lineno, w);
            return -1;
        }
    /* the options come after each case's own in a task's command line: one that narrowed the variants or
     * sizes made every task run the narrowed case, and --resubmit then looped on the missing ones */
    char why[512];
    if (sl_plan_options_check(options, why, sizeof why) != 0) {
        fprintf(stderr, "speedlab: slurm: %s:%d: '# options:' has %s; plan again with the cases you want "
                "(speedlab plan ... --out DIR)\n", path, lineno, why);
        return -1;
    }
    return 0;
}

/* Every file slurm writes: whole, beside its target, renamed over it only if that is absent or a regular
 * file, never through a link or over a FIFO or device (common/safefile.h); NULL or -1 after a message. */
static FILE *out_open(const char *path, char *tmp, size_t n)
{
    const char *why;
    FILE *f = sf_create(path, tmp, n, &why);
    if (!f)
        fprintf(stderr, "speedlab: slurm: cannot write %s: %s\n", path, why);
    return f;
}

static int out_close(FILE *f, const char *tmp, const char *path)
{
    const char *why;
    if (sf_commit(f, tmp, path, &why) == 0)
        return 0;
    fprintf(stderr, "speedlab: slurm: cannot write %s: %s; not written\n", path, why);
    return -1;
}

static int read_cases(const char *path, cases_info *ci)
{
    memset(ci, 0, sizeof *ci);
    const char *why;
    FILE *f = rep_open_input(path, &why);
    if (!f) {
        fprintf(stderr, "speedlab: slurm: cannot read %s: %s\n", path, why);
        return -1;
    }
    char line[8192];
    int lineno = 0, rc = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (++lineno == 1 && strcmp(line, SL_CASES_MAGIC) != 0) {
            fprintf(stderr, "speedlab: slurm: %s:1: not a cases file (expected its first line to be '%s', "
                    "as speedlab plan --out writes)\n", path, SL_CASES_MAGIC); /* never the file's text */
            rc = -1;
            break;
        }
        if (!strncmp(line, "# options: ", 11)) {
            if (check_options(path, lineno, line + 11) != 0) {
                rc = -1;
                break;
            }
            snprintf(ci->options, sizeof ci->options, "%.2000s", line + 11);
        } else if (!strncmp(line, "# slurm: ", 9))
            snprintf(ci->slurm, sizeof ci->slurm, "%.2000s", line + 9);
        rep_plan_case c;
        if (line[0] != '#' && rep_plan_case_parse(line, &c) == 0) {
            ci->n_gpu += !strcmp(c.device, "gpu");
            ci->n_cpu += strcmp(c.device, "gpu") != 0;
        }
    }
    fclose(f);
    return rc;
}

/* The #SBATCH lines every script shares: name, partition, time, the user's own, the log file. */
static void sbatch_head(FILE *f, const slurm_opts *so, const char *name, const char *partition,
                        const char *logs, int array)
{
    fprintf(f, "#SBATCH --job-name=%s\n", name);
    if (partition)
        fprintf(f, "#SBATCH --partition=%s\n", partition);
    fprintf(f, "#SBATCH --time=%s\n", so->time);
    for (int i = 0; i < so->n_sbatch_args; i++)
        fprintf(f, "#SBATCH %s\n", so->sbatch_args[i]);
    fprintf(f, "#SBATCH --output=%s/%s\n", logs, array ? "%x-%A_%a.out" : "%x-%j.out");
}

/* The job array of one device's cases. */
static int write_array(const char *path, const slurm_opts *so, const char *dir, const char *sdir,
                       const char *cases, const cases_info *ci, int gpu)
{
    int n = gpu ? ci->n_gpu : ci->n_cpu, tasks = (int)((n + so->chunk - 1) / so->chunk);
    char tmp[PATH_MAX + 128];
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f)
        return -1;
    fprintf(f, "#!/bin/bash\n"
            "# speedlab's %d %s cases of %s as a Slurm job array, %ld case(s) per task (written by\n"
            "# `speedlab slurm`; read and edit it, then submit with submit.sh beside it). Task k runs the\n"
            "# %s cases k*CHUNK .. k*CHUNK+CHUNK-1 of the cases file, each with `speedlab run` into\n"
            "# DIR/<array job id>_<task id>/; its records carry the job id, task id, node and partition.\n",
            n, gpu ? "GPU" : "CPU", cases, so->chunk, gpu ? "gpu" : "cpu");
    char name[32], logs[PATH_MAX + 8];
    snprintf(name, sizeof name, "speedlab-%s", gpu ? "gpu" : "cpu");
    snprintf(logs, sizeof logs, "%s/logs", sdir);
    sbatch_head(f, so, name, gpu && so->gpu_partition ? so->gpu_partition : so->partition, logs, 1);
    fprintf(f, "#SBATCH --array=0-%d%%%ld\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%ld\n", tasks - 1,
            so->max_running, so->cpus);
    if (gpu)
        fprintf(f, "#SBATCH --gres=gpu:%ld\n", so->gpus);
    /* set -f: the options and params are split into words, never expanded as file names */
    fputs("set -u -f\n\nspeedlab=", f);
    put_quoted(f, sl_self_path());
    fputs("\ncases=", f);
    put_quoted(f, cases);
    fprintf(f, "\ndevice=%s\nchunk=%ld\n", gpu ? "gpu" : "cpu", so->chunk);
    fprintf(f, "# the run options every case shares (the cases file's \"# options:\" line)\noptions=");
    put_quoted(f, ci->options);
    fputs("\nout=", f);
    put_quoted(f, dir);
    fputs("/\"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"\n\n", f);
    fputs("# Pinning: the threaded variants run on this task's CPUs (--threads below), one thread per\n"
          "# core, kept there by OpenMP; srun binds the task to its cores where the site's TaskPlugin\n"
          "# can (task/affinity or task/cgroup; elsewhere --cpu-bind is ignored). Set launch= to run\n"
          "# without srun.\n"
          "export OMP_PLACES=cores OMP_PROC_BIND=close OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK\n"
          "launch='srun --ntasks=1 --cpu-bind=cores'\n\n"
          "[ -r \"$cases\" ] || { echo \"speedlab-slurm: cannot read the cases file $cases\" >&2; exit 1; }\n"
          "status=0 ran=0\n"
          "first=$((SLURM_ARRAY_TASK_ID * chunk))\n"
          "# This device's cases are numbered from 0 in file order; take this task's chunk of them.\n"
          "while IFS=$'\\t' read -r index study variant size seed reps _ params _; do\n"
          "    set --\n"
          "    [ \"$params\" = - ] || for p in $params; do set -- \"$@\" --param \"$p\"; done\n"
          "    echo \"speedlab-slurm: case $index: $study $variant size $size (task $SLURM_ARRAY_TASK_ID,\" \\\n"
          "        \"node ${SLURMD_NODENAME:-?})\"\n"
          "    ran=$((ran + 1))\n"
          "    $launch \"$speedlab\" run \"$study\" --variants \"$variant\" --sizes \"$size\" --seed \"$seed\" \\\n"
          "        --reps \"$reps\" --threads \"$SLURM_CPUS_PER_TASK\" $options \"$@\" --out \"$out\" </dev/null ||\n"
          "        status=$? # (</dev/null: srun would read the rest of the case list)\n"
          "done < <(awk -F'\\t' -v dev=\"$device\" -v lo=\"$first\" -v hi=$((first + chunk)) \\\n"
          "    '!/^#/ && $7 == dev { if (n >= lo && n < hi) print; n++ }' \"$cases\")\n"
          "# A task with no case ran nothing: an error, not a success (a cases file that changed).\n"
          "[ \"$ran\" -gt 0 ] || { echo \"speedlab-slurm: task $SLURM_ARRAY_TASK_ID has no $device case in $cases\" >&2; \\\n"
          "    exit 1; }\n"
          "# 1: a case failed its check or run (its record says why); the merge job runs anyway.\n"
          "exit $status\n", f);
    return out_close(f, tmp, path);
}

/* The calibration of one partition's nodes, on a whole node, before that partition's cases. */
static int write_calibrate(const char *path, const slurm_opts *so, const char *dir, const char *sdir,
                           const char *partition, int gpu)
{
    char tmp[PATH_MAX + 128];
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f)
        return -1;
    fprintf(f, "#!/bin/bash\n"
            "# speedlab calibrate on one node of partition %s (written by `speedlab slurm`): the\n"
            "# ceilings (triad, FMA peak, sgemm%s) that the report's roofline uses for this node type.\n"
            "# --exclusive: nothing else on the node while it measures.\n",
            partition ? partition : "(default)", gpu ? ", GPU copies and cuBLAS" : "");
    char logs[PATH_MAX + 8];
    snprintf(logs, sizeof logs, "%s/logs", sdir);
    sbatch_head(f, so, "speedlab-calibrate", partition, logs, 0);
    fputs("#SBATCH --nodes=1\n#SBATCH --exclusive\n", f);
    if (gpu)
        fprintf(f, "#SBATCH --gres=gpu:%ld\n", so->gpus);
    fputs("set -u\n", f);
    put_quoted(f, sl_self_path());
    fputs(" calibrate --threads \"${SLURM_CPUS_ON_NODE:-1}\" --out ", f);
    put_quoted(f, dir);
    fprintf(f, "/calibration/%s\n", partition ? partition : "default");
    return out_close(f, tmp, path);
}

static int write_merge(const char *path, const slurm_opts *so, const char *dir, const char *sdir)
{
    char tmp[PATH_MAX + 128];
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f)
        return -1;
    fprintf(f, "#!/bin/bash\n"
            "# The merged report of every record under %s (written by `speedlab slurm`). It runs when the\n"
            "# arrays are done, whether or not every task succeeded (afterany): the report then lists the\n"
            "# planned cases that have no record, and `speedlab slurm --resubmit DIR` runs only those.\n", dir);
    char logs[PATH_MAX + 8];
    snprintf(logs, sizeof logs, "%s/logs", sdir);
    sbatch_head(f, so, "speedlab-merge", so->partition, logs, 0);
    fputs("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\nset -u\n", f);
    put_quoted(f, sl_self_path());
    fputs(" report ", f);
    put_quoted(f, dir);
    fputs(" --out ", f);
    put_quoted(f, dir);
    fputs("/report\n", f);
    return out_close(f, tmp, path);
}

/* submit.sh: calibration, then the arrays after it, then the merge job after the arrays. */
static int write_submit(const char *path, const slurm_opts *so, const cases_info *ci, int calibrate)
{
    char tmp[PATH_MAX + 128];
    FILE *f = out_open(path, tmp, sizeof tmp);
    if (!f)
        return -1;
    const char *gpart = so->gpu_partition ? so->gpu_partition : so->partition;
    int two = ci->n_gpu && ci->n_cpu && !rep_same_opt(gpart, so->partition);
    fputs("#!/bin/sh\n"
          "# Submits the jobs beside this file in order, each held until the ones it needs are done, and\n"
          "# writes their ids to jobs.txt (written by `speedlab slurm`). afterany, not afterok: a failed or\n"
          "# cancelled task must not keep the merge job from reporting what is missing.\n"
          "set -eu\ncd \"$(dirname \"$0\")\"\n: > jobs.txt\n"
          "submit() { # NAME SCRIPT [sbatch options]: prints the job id\n"
          "    name=$1 script=$2; shift 2\n"
          "    id=$(sbatch --parsable \"$@\" \"$script\"); id=${id%%;*}\n"
          "    echo \"$name $id\" >> jobs.txt; echo \"speedlab-slurm: $name: job $id\" >&2; echo \"$id\"\n}\n", f);
    /* cpu_after, gpu_after: the dependency on a calibration, or empty (then no argument at all) */
    if (ci->n_cpu)
        fputs("cpu_after=''\n", f);
    if (ci->n_gpu)
        fputs("gpu_after=''\n", f);
    if (calibrate && ci->n_cpu)
        fputs("cpu_after=--dependency=afterany:$(submit calibrate-cpu calibrate-cpu.sbatch)\n", f);
    if (calibrate && ci->n_gpu)
        fprintf(f, "gpu_after=%s\n", two ? "--dependency=afterany:$(submit calibrate-gpu calibrate-gpu.sbatch)"
                                         : (ci->n_cpu ? "$cpu_after" : "--dependency=afterany:$(submit "
                                                        "calibrate-gpu calibrate-gpu.sbatch)"));
    fputs("arrays=''\n", f);
    if (ci->n_cpu)
        fputs("arrays=$arrays:$(submit cpu cpu.sbatch ${cpu_after:+\"$cpu_after\"})\n", f);
    if (ci->n_gpu)
        fputs("arrays=$arrays:$(submit gpu gpu.sbatch ${gpu_after:+\"$gpu_after\"})\n", f);
    fputs("submit merge merge.sbatch \"--dependency=afterany$arrays\" >/dev/null\n", f);
    return out_close(f, tmp, path);
}

/* Every script of one submission in sdir; 0 or -1 after a message. */
static int write_scripts(const slurm_opts *so, const char *dir, const char *sdir, const char *cases,
                         int calibrate)
{
    cases_info ci;
    if (!sbatch_path("the output directory", dir) || read_cases(cases, &ci) != 0)
        return -1;
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/logs", sdir);
    const char *why;
    if (sf_mkdirs(dir, p, &why) != 0) { /* real folders inside DIR: a link there is not written through */
        fprintf(stderr, "speedlab: slurm: cannot create %s: %s\n", p, why);
        return -1;
    }
    const char *gpart = so->gpu_partition ? so->gpu_partition : so->partition;
    int rc = 0;
    for (int gpu = 0; gpu < 2; gpu++) {
        if (!(gpu ? ci.n_gpu : ci.n_cpu))
            continue;
        snprintf(p, sizeof p, "%s/%s.sbatch", sdir, gpu ? "gpu" : "cpu");
        rc |= write_array(p, so, dir, sdir, cases, &ci, gpu);
        snprintf(p, sizeof p, "%s/calibrate-%s.sbatch", sdir, gpu ? "gpu" : "cpu");
        /* once per node type: the GPU cases' partition gets its own only when it is another one */
        int own = !gpu || !ci.n_cpu || !rep_same_opt(gpart, so->partition);
        if (calibrate && own)
            rc |= write_calibrate(p, so, dir, sdir, gpu ? gpart : so->partition, gpu);
    }
    snprintf(p, sizeof p, "%s/merge.sbatch", sdir);
    rc |= write_merge(p, so, dir, sdir);
    snprintf(p, sizeof p, "%s/submit.sh", sdir);
    rc |= write_submit(p, so, &ci, calibrate);
    if (rc) /* each file said what failed */
        fprintf(stderr, "speedlab: slurm: the scripts in %s are not all written\n", sdir);
    else
        printf("speedlab slurm: %d CPU and %d GPU cases, %ld per task: scripts in %s/; submit with: "
               "sh %s/submit.sh\n", ci.n_cpu, ci.n_gpu, so->chunk, sdir, sdir);
    return rc ? -1 : 0;
}

static int submit(const char *sdir)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "sh '%s/submit.sh'", sdir);
    fflush(stdout);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "speedlab: slurm: %s failed (exit %d); is sbatch on PATH and the cluster up?\n",
                cmd, WIFEXITED(rc) ? WEXITSTATUS(rc) : rc);
    return rc == 0 ? SL_EXIT_OK : SL_EXIT_FAILED;
}

static void slurm_defaults(slurm_opts *so)
{
    memset(so, 0, sizeof *so);
    so->time = "01:00:00";
    so->cpus = so->gpus = 1;
    so->chunk = 4;
    so->max_running = 8;
    so->calibrate = 1;
}

/* `speedlab slurm STUDY... --out DIR`: the plan, then its scripts. */
static int slurm_new(int argc, char **argv, const sl_study *const *studies, int n_studies)
{
    slurm_opts so;
    slurm_defaults(&so);
    sl_plan p;
    int rc = sl_plan_parse(argc, argv, studies, n_studies, &p, slurm_option, &so);
    int has_out = 0;
    for (int i = 1; i < argc; i++)
        has_out |= !strcmp(argv[i], "--out") || !strncmp(argv[i], "--out=", 6);
    if (rc == 0 && !has_out) {
        fprintf(stderr, "speedlab: slurm: --out DIR is required: the directory the plan, the scripts and "
                "every task's results go to (on a file system the nodes share)\n");
        rc = SL_EXIT_USAGE;
    }
    if (rc == 1)
        fputs(slurm_usage, stdout);
    if (rc != 0) {
        sl_plan_free(&p);
        return rc == 1 ? SL_EXIT_OK : rc;
    }
    char dir[PATH_MAX], cases[PATH_MAX + 16], sdir[PATH_MAX + 16], header[2100], cwd[PATH_MAX];
    char *given = rep_printf("%s%s%s", p.cfg.out[0] == '/' ? "" : getcwd(cwd, sizeof cwd) ? cwd : ".",
                             p.cfg.out[0] == '/' ? "" : "/", p.cfg.out);
    int usable = given && sbatch_path("--out", given);
    free(given);
    if (!usable) { /* before anything is made: a name that would break the scripts */
        sl_plan_free(&p);
        return SL_EXIT_USAGE;
    }
    mkdir(p.cfg.out, 0777);
    if (!realpath(p.cfg.out, dir)) {
        fprintf(stderr, "speedlab: slurm: --out %s: %s\n", p.cfg.out, strerror(errno));
        sl_plan_free(&p);
        return SL_EXIT_FAILED;
    }
    snprintf(cases, sizeof cases, "%s/cases.tsv", dir);
    snprintf(sdir, sizeof sdir, "%s/slurm", dir);
    snprintf(header, sizeof header, "slurm: %s", so.words);
    struct stat st;
    if (stat(sdir, &st) == 0) { /* a second plan over the first's results would mix the two */
        fprintf(stderr, "speedlab: slurm: --out %s already holds a submission (%s); give another --out, "
                "or --resubmit %s for its missing cases\n", p.cfg.out, sdir, p.cfg.out);
        sl_plan_free(&p);
        return SL_EXIT_USAGE;
    }
    if (p.n == 0) {
        fprintf(stderr, "speedlab: slurm: the plan has no cases (see speedlab plan with the same options)\n");
        sl_plan_free(&p);
        return SL_EXIT_USAGE;
    }
    rc = sl_plan_write(&p, cases, header);
    if (rc == 0)
        sl_plan_print(&p, cases);
    sl_plan_free(&p);
    if (rc != 0 || write_scripts(&so, dir, sdir, cases, so.calibrate) != 0)
        return SL_EXIT_FAILED;
    return so.submit ? submit(sdir) : SL_EXIT_OK;
}

/* Splits the cases file's "# slurm:" words and applies them as options. */
static int apply_words(slurm_opts *so, char *words)
{
    char *argv[64];
    int argc = 0;
    for (char *w = strtok(words, " "); w && argc < 63; w = strtok(NULL, " "))
        argv[argc++] = w;
    for (int i = 0; i < argc; i++) {
        int used = slurm_option(so, argc, argv, i);
        if (used <= 0) {
            fprintf(stderr, "speedlab: slurm: the cases file's '# slurm:' line has '%s', not an option "
                    "of speedlab slurm\n", argv[i]);
            return -1;
        }
        i += used - 1;
    }
    return 0;
}

typedef struct resub_ctx {
    FILE *out;
    int n;
} resub_ctx;

static void copy_case(void *ctx, const rep_plan_case *c, const char *line)
{
    resub_ctx *r = ctx;
    (void)c;
    fputs(line, r->out);
    r->n++;
}

/* A new cases file DIR/resubmit-N.cases.tsv with the header and the missing cases; its N, or -1. */
static int write_missing(const char *dir, const char *cases, const cases_info *ci, char *path, size_t n)
{
    int k = 1;
    struct stat st;
    do
        snprintf(path, n, "%s/resubmit-%d.cases.tsv", dir, k++);
    while (stat(path, &st) == 0);
    rep_set s = {0};
    char *paths[] = {(char *)dir};
    rep_load(&s, 1, paths, stderr);
    char tmp[PATH_MAX + 128];
    resub_ctx r = {out_open(path, tmp, sizeof tmp), 0};
    if (!r.out) {
        rep_set_free(&s);
        return -1;
    }
    fprintf(r.out, "%s\n# options: %s\n# slurm: %s\n# resubmitted: the cases of %s without a record\n",
            SL_CASES_MAGIC, ci->options, ci->slurm, cases);
    fprintf(r.out, "# index\tstudy\tvariant\tsize\tseed\treps\tdevice\tparams\testimate_s\n");
    int planned = 0;
    rep_missing_cases(&s, cases, copy_case, &r, &planned);
    rep_set_free(&s);
    if (r.n == 0) { /* nothing to resubmit: no file */
        fclose(r.out);
        unlink(tmp);
    } else if (out_close(r.out, tmp, path) != 0)
        return -1;
    printf("speedlab slurm: %d of the %d cases in %s have no record under %s\n", r.n, planned, cases, dir);
    return r.n == 0 ? 0 : k - 1;
}

/* `speedlab slurm --resubmit DIR`: the planned cases without a record, as a new submission. */
static int slurm_resubmit(int argc, char **argv)
{
    slurm_opts so, given;
    slurm_defaults(&so);
    slurm_defaults(&given);
    for (int i = 1; i < argc; i++) {
        int used = slurm_option(&given, argc, argv, i);
        if (used <= 0) {
            if (used == 0)
                fprintf(stderr, "speedlab: slurm --resubmit: '%s' is not a slurm option (the run options "
                        "are the plan's)\n%s", argv[i], slurm_usage);
            return SL_EXIT_USAGE;
        }
        i += used - 1;
    }
    char dir[PATH_MAX], cases[PATH_MAX + 16], sub[PATH_MAX + 40], sdir[PATH_MAX + 40];
    cases_info ci;
    if (!realpath(given.resubmit, dir)) {
        fprintf(stderr, "speedlab: --resubmit %s: %s\n", given.resubmit, strerror(errno));
        return SL_EXIT_USAGE;
    }
    snprintf(cases, sizeof cases, "%s/cases.tsv", dir);
    if (read_cases(cases, &ci) != 0)
        return SL_EXIT_USAGE;
    char words[sizeof ci.slurm + sizeof given.words + 2];
    snprintf(words, sizeof words, "%.2040s %.2040s", ci.slurm, given.words); /* the first submission's, then given */
    if (apply_words(&so, words) != 0)
        return SL_EXIT_FAILED;
    so.submit = given.submit;
    int k = write_missing(dir, cases, &ci, sub, sizeof sub);
    if (k <= 0)
        return k < 0 ? SL_EXIT_FAILED : SL_EXIT_OK;
    snprintf(sdir, sizeof sdir, "%s/slurm-resubmit-%d", dir, k);
    /* No calibration: the first submission measured these nodes. */
    if (write_scripts(&so, dir, sdir, sub, 0) != 0)
        return SL_EXIT_FAILED;
    return so.submit ? submit(sdir) : SL_EXIT_OK;
}

const char *sl_self_path(void)
{
    static char self[PATH_MAX];
    if (!self[0]) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        snprintf(self + (n > 0 ? n : 0), sizeof self - (size_t)(n > 0 ? n : 0), "%s", n > 0 ? "" : "speedlab");
    }
    return self;
}

int sl_slurm_main(int argc, char **argv, const sl_study *const *studies, int n_studies)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(slurm_usage, stdout);
            return SL_EXIT_OK;
        }
        if (!strcmp(argv[i], "--resubmit") || !strncmp(argv[i], "--resubmit=", 11))
            return slurm_resubmit(argc, argv);
    }
    return slurm_new(argc, argv, studies, n_studies);
}
