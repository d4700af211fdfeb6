/* slurm.h: `speedlab slurm`: a plan as Slurm job arrays plus a merge job (slurm.c, docs/slurm.md). */
#ifndef SL_SLURM_H
#define SL_SLURM_H

#include "study.h"

/* argv[0] = "slurm"; returns an exit code (exit_codes.h). */
int sl_slurm_main(int argc, char **argv, const sl_study *const *studies, int n_studies);
/* The absolute path of the running speedlab (/proc/self/exe): what the scripts call. */
const char *sl_self_path(void);

#endif
