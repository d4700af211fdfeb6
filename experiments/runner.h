/*
 * runner.h: `speedlab run` (runner.c): every (study, size, variant) case asked for, each through case.c,
 * into a new run directory.
 */
#ifndef SL_RUNNER_H
#define SL_RUNNER_H

#include "study.h"

/* argv[0] is "run"; returns an exit code (exit_codes.h). */
int sl_run_main(int argc, char **argv, const sl_study *const *studies, int n_studies);

#endif
