/* cli.h: what `speedlab run` was asked to do, parsed and checked before anything runs (cli.c). */
#ifndef SL_CLI_H
#define SL_CLI_H

#include <stdint.h>

#include "exit_codes.h"
#include "study.h"

typedef struct sl_run_cfg {
    const sl_study **studies;   /* selected studies, registry order */
    int n_studies;
    char **variants;            /* --variants, NULL: all */
    int n_variants;
    long *sizes;                /* --sizes, NULL: the study's (quick) sizes */
    int n_sizes;
    int reps;                   /* -1: the study's default_reps, else the runner default */
    int rounds;                 /* --rounds: the whole list of cases this many times over (1: once) */
    int warmup;                 /* -1: runner default by kind */
    double min_time;            /* -1: runner default by kind */
    int threads;
    const char *counters;       /* --counters, NULL: none (or $PROF_COUNTERS via the profiler) */
    uint64_t seed;
    const char *out;
    int quick;
    const char *data_dir;
    int n_params;
    const char **param_names, **param_values;
    int calibrate;
    int timerstats;
    const char *trace;          /* --trace FILE: the run's timeline (Chrome Trace Event JSON), NULL: none */
    const char *wisdom;         /* --wisdom FILE: the planner's choices (NULL: the default path, wisdom.h) */
    int no_tune;                /* --no-tune: every case at the default ISA level */
} sl_run_cfg;

/* Parses `run` arguments (argv[0] = "run"). Returns 0, 1 when --help was printed, or SL_EXIT_USAGE
 * after a message on stderr. */
int sl_parse_run(int argc, char **argv, const sl_study *const *studies, int n_studies, sl_run_cfg *cfg);
void sl_run_cfg_free(sl_run_cfg *cfg);
/* Strict numbers for flag values: 0 on success, -1 after saying which flag and what is valid. */
int sl_parse_long(const char *flag, const char *s, long lo, long hi, long *out);
int sl_parse_double(const char *flag, const char *s, double lo, double hi, double *out);
/* --seed: digits only, 0 to 2^64-1 (no sign, no space). 0, or -1 after a message. */
int sl_parse_seed(const char *s, uint64_t *out);

#endif
