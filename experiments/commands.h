/*
 * commands.h: the speedlab command as a library (speedlab_core), so tests can drive it with their own
 * registry of studies. main.c is one call: sl_main(argc, argv, sl_studies, sl_n_studies).
 */
#ifndef SL_COMMANDS_H
#define SL_COMMANDS_H

#include "exit_codes.h"
#include "study.h"

/* `speedlab COMMAND ...`: argv[0] is the program name; returns an exit code (exit_codes.h). */
int sl_main(int argc, char **argv, const sl_study *const *studies, int n_studies);
/* The commands besides `run` (runner.h); argv[0] is the command name ("list", "calibrate"). */
int sl_list_main(int argc, char **argv, const sl_study *const *studies, int n_studies);
int sl_calibrate_main(int argc, char **argv);

#endif
