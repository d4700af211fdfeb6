/*
 * runner_case.h: what runner.c and case.c share while a `speedlab run` is going on.
 */
#ifndef SL_RUNNER_CASE_H
#define SL_RUNNER_CASE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "runner.h"
#include "study.h"

typedef struct sl_run_ctx {
    const sl_run_cfg *cfg;
    sl_opts opts;
    json_t *env;
    char dir[4096], id[256]; /* the run directory and its name (run_id) */
    int fd;                  /* results.jsonl, O_APPEND */
    FILE *timerstats;
    int tty;                 /* progress only on a terminal */
    uint64_t t0_ns;
    int n_cases, done;
    int n_failed, n_unavailable, n_skipped, write_errors;
    char **names;            /* region names kept alive until prof_shutdown */
    int n_names;
} sl_run_ctx;

/* Repetitions, warm-up calls and minimum time of a case of study s under cfg. */
void sl_plan(const sl_run_cfg *cfg, const sl_study *s, int *reps, int *warmup, double *min_time);
/* "B=4096", kept until the run ends. */
const char *sl_keep_name(sl_run_ctx *c, const char *size_name, long size);
/* The fields every case record of (s, v, size) has before it runs (a new object). */
json_t *sl_case_base(const sl_run_ctx *c, const sl_study *s, int v, long size);
/* Runs variant v of a set-up study at `size` and writes its record. */
void sl_run_case(sl_run_ctx *c, const sl_study *s, void *state, int v, long size);
/* Appends a finished record, prints its summary line; 0 or -1 (counted in write_errors). */
int sl_emit_case(sl_run_ctx *c, json_t *rec, const char *summary);
/* Calibrates and appends the calibration record to fd; 0 or -1 after a message. */
int sl_write_calibration(int fd, const char *run_id, json_t *env, int threads);

#endif
