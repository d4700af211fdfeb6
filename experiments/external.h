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

#endif
