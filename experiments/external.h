/*
 * external.h: framework baselines (SL_EXTERNAL rows) run as a Python subprocess (external.c,
 * docs/baselines.md has the protocol).
 */
#ifndef SL_EXTERNAL_H
#define SL_EXTERNAL_H

#include <stddef.h>

#include "case.h"
#include "study.h"

/* The interpreter that runs baselines: $SPEEDLAB_PYTHON, else the source tree's .venv-baselines (made by
 * `scripts/setup.sh --baselines`), else /usr/bin/python3, else python3 from PATH. */
const char *sl_external_python(void);
/* The folder of the baseline programs: $SPEEDLAB_BASELINES, else the source tree's baselines/. */
const char *sl_external_dir(void);
/* Seconds a baseline program may run in all: SPEEDLAB_BASELINE_TIMEOUT, default 1800. */
double sl_external_timeout_s(void);
/* 1 when the interpreter imports numpy and `module` (checked once per module and run); otherwise 0 and
 * the reason with the command that installs it. */
int sl_external_available(const char *module, char *why, size_t n);
/* `--param form=NAME` forces every baseline row to run its form NAME (docs/baselines.md, "Forms"):
 * a run-wide parameter, not a study's, and not in the records' params (baseline_form says what ran). */
#define SL_EXTERNAL_FORM_PARAM "form"
/* The form --param form= names (the last one given), or NULL: each row runs its fastest form. */
const char *sl_external_forced_form(const sl_opts *o);
/* Runs external variant v of a set-up study at `size`: hands the inputs over, starts the program, reads
 * its first-call outputs and checks them (sl_case_check), then its timed repetitions. Returns the number
 * of times put in *times (malloc'ed), or -1 with rec marked failed. Fills rec's "external" object. */
int sl_external_case(sl_run_ctx *c, const sl_study *s, void *state, int v, long size, json_t *rec,
                     double **times);

/* ---- the frameworks at the kernels' instruction-set level (external_isa.c) ---------------------- */

/* The level the frameworks are held at, in kern_isa()'s names ("sse4.2", "avx", "avx2", "avx512"): the
 * kernels' level when SPEEDLAB_ISA was honoured (at any level, the CPU's best included) or when the
 * kernels run below this CPU's best level (a build for a lower -march); NULL otherwise (the frameworks
 * then choose for themselves) and for a level that has no framework mapping. */
const char *sl_external_isa_target(void);

/* One variable of a baseline program's environment. */
typedef struct sl_isa_var {
    const char *name;
    char value[2048]; /* XLA_FLAGS: the user's flags and the level's */
    int user; /* 1: the user's own value, kept as it is */
} sl_isa_var;
#define SL_ISA_VARS 10

/* Fills v (SL_ISA_VARS entries) with the variables that hold every framework at level `isa`:
 * ATEN_CPU_CAPABILITY, ONEDNN_MAX_CPU_ISA, DNNL_MAX_CPU_ISA, OPENBLAS_CORETYPE, NUMBA_CPU_NAME,
 * NUMBA_CPU_FEATURES (empty: the named CPU's own), NPY_DISABLE_CPU_FEATURES
 * (only NumPy features above the level that cpu_has(/proc/cpuinfo flag) says this CPU has; NULL: all;
 * left out when there are none) and XLA_FLAGS (--xla_cpu_max_isa appended to the user's flags). A variable
 * already in the environment keeps its value (user = 1; XLA_FLAGS: when it has --xla_cpu_max_isa).
 * Returns the count, 0 when isa is NULL or has no mapping. */
int sl_external_isa_vars(const char *isa, int (*cpu_has)(const char *), sl_isa_var *v);
/* 1 when /proc/cpuinfo's flags name `flag` (or cannot be read). */
int sl_external_isa_cpu_has(const char *flag);
/* base (an environ-style list) with v's variables that are not the user's set, each replacing an entry
 * of its name: a new NULL-terminated list of copies, to free with sl_external_env_free; NULL when out of
 * memory. */
char **sl_external_env_with(char *const *base, const sl_isa_var *v, int n);
/* The environment of a baseline program: this process's, with sl_external_isa_target()'s variables.
 * Made in the parent, passed to execvpe: between fork and exec only async-signal-safe calls are safe
 * (setenv allocates, and another thread may hold the allocator's lock when the process forks). */
char **sl_external_env(void);
void sl_external_env_free(char **env);
/* The order of the level names: "generic" 0, "sse2", "sse4.2", "avx", "avx2", "avx512", "avx512+" 6;
 * -1 for another name. */
int sl_external_isa_rank(const char *isa);
/* Adds "checked" (the frameworks compared) and, when one runs above `requested`, "mismatch" (one line)
 * to the program's isa report. */
void sl_external_isa_check(json_t *isa, const char *requested);
/* The record's external.isa: the first report's "isa" object (baselines/isa.py), and, when the level
 * is held, "requested", "level", "set" (what speedlab set), "user" (the user's own values kept),
 * "checked" and "mismatch". Nothing when neither. */
void sl_external_isa_record(json_t *e, const json_t *first);

#endif
