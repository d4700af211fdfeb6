/*
 * runner.h: the speedlab command as a library (speedlab_core), so tests can drive it with their own
 * registry of studies. main.c is one call: sl_main(argc, argv, sl_studies, sl_n_studies).
 */
#ifndef SL_RUNNER_H
#define SL_RUNNER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "study.h"

/* Exit codes of every command (docs/speedlab.md). */
enum {
    SL_EXIT_OK = 0,
    SL_EXIT_FAILED = 1,      /* a case failed its check or its run, or the output could not be written */
    SL_EXIT_USAGE = 2,       /* unknown command, study, variant, size, parameter or a bad flag value */
    SL_EXIT_INTERRUPTED = 130,
};

/* `speedlab COMMAND ...`: argv[0] is the program name. */
int sl_main(int argc, char **argv, const sl_study *const *studies, int n_studies);
/* The commands; argv[0] is the command name ("run", "list", "calibrate"). */
int sl_run_main(int argc, char **argv, const sl_study *const *studies, int n_studies);
int sl_list_main(int argc, char **argv, const sl_study *const *studies, int n_studies);
int sl_calibrate_main(int argc, char **argv);

/* ---- what `speedlab run` was asked to do (cli.c) ----------------------------------------------- */
typedef struct sl_run_cfg {
    const sl_study **studies;   /* selected studies, registry order */
    int n_studies;
    char **variants;            /* --variants, NULL: all */
    int n_variants;
    long *sizes;                /* --sizes, NULL: the study's (quick) sizes */
    int n_sizes;
    int reps;                   /* -1: the study's default_reps, else the runner default */
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
} sl_run_cfg;

/* Parses `run` arguments (argv[0] = "run"). Returns 0, 1 when --help was printed, or SL_EXIT_USAGE
 * after a message on stderr. */
int sl_parse_run(int argc, char **argv, const sl_study *const *studies, int n_studies, sl_run_cfg *cfg);
void sl_run_cfg_free(sl_run_cfg *cfg);
/* Strict numbers for flag values: 0 on success, -1 after saying which flag and what is valid. */
int sl_parse_long(const char *flag, const char *s, long lo, long hi, long *out);
int sl_parse_double(const char *flag, const char *s, double lo, double hi, double *out);

/* ---- availability of variants (avail.c, gpu.c) ------------------------------------------------- */
/* 1 when variant v can run here; otherwise 0 and the reason ("cuda: no CUDA device"). */
int sl_variant_available(const sl_variant *v, char *why, size_t n);
/* GPU probe: 1 with a usable CUDA device; else 0 and why ("no CUDA device", "built without CUDA"). */
int sl_gpu_available(char *why, size_t n);
/* Adds cuda_device, cuda_driver and cuda_runtime to env when a device exists. */
void sl_gpu_env(json_t *env);
/* GPU ceilings (ceilings.gpu of docs/results-schema.md), or NULL without a device. */
json_t *sl_gpu_calibrate(void);
/* The names of a variant's traits (enum sl_trait), as records and `speedlab list` show them. */
json_t *sl_traits_json(unsigned traits);
/* 0 when every study of the registry passes sl_study_validate; else -1 after saying why on stderr. */
int sl_registry_check(const sl_study *const *studies, int n_studies);
int sl_online_cpus(void);

/* ---- environment (env.c) ----------------------------------------------------------------------- */
json_t *sl_env_capture(int threads);
/* MemAvailable from /proc/meminfo in bytes, or -1 when unknown. */
double sl_mem_available(void);

/* ---- run directories (rundir.c) ---------------------------------------------------------------- */
/* Creates OUT (and parents) and a new OUT/run-YYYYmmdd-HHMMSS[-N]; points OUT/latest at it.
 * Writes its path into dir and its name into id. 0, or -1 after a message on stderr. */
int sl_rundir_create(const char *out, char *dir, size_t dn, char *id, size_t idn);

/* ---- statistics (stats.c) ---------------------------------------------------------------------- */
typedef struct sl_stats {
    double median, mean, std, min, max, cv;
} sl_stats;
/* Statistics of x[0..n-1] (n >= 1): sample std (n - 1; 0 for one value), cv = std / mean. */
void sl_stats_compute(const double *x, int n, sl_stats *st);

/* ---- calibration (calibrate.c) ----------------------------------------------------------------- */
/* The ceilings object of a calibration record; prints a summary on stdout. */
json_t *sl_calibrate_ceilings(int threads);
/* The calibration loops (kernels/calib/calib.h: built with the kernels' flags, per ISA level). */
#include "calib/calib.h"

/* ---- interrupts -------------------------------------------------------------------------------- */
/* SIGINT/SIGTERM: a message, then exit 130 (143) at once; records are written whole (sl_record_append
 * holds the signal off), so the file keeps every finished case and no partial one. */
void sl_install_interrupt_handler(void);

#endif
