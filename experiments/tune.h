/* tune.h: `speedlab tune` (tune.c): the planner's measurements, into the wisdom file (planner.h). */
#ifndef SL_TUNE_H
#define SL_TUNE_H

#include "study.h"

/* argv[0] is "tune"; returns an exit code (exit_codes.h). */
int sl_tune_main(int argc, char **argv, const sl_study *const *studies, int n_studies);

#endif
