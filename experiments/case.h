/*
 * case.h: one case (study, variant, size) of a `speedlab run`, from prepare to its record (case.c), and
 * the run's state the runner (runner.c) keeps while it goes through the cases.
 */
#ifndef SL_CASE_H
#define SL_CASE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "planner.h"
#include "progress.h"
#include "study.h"

typedef struct sl_run_ctx {
    const sl_run_cfg *cfg;
    const sl_planner *planner; /* the ISA level of each CPU case (NULL: the default level) */
    sl_opts opts;
    json_t *env;
    char dir[4096], id[256]; /* the run directory and its name (run_id) */
    int fd;                  /* results.jsonl, O_APPEND */
    FILE *timerstats;
    int tty;                 /* progress only on a terminal */
    sl_progress progress;    /* the status line inside the running case (used when tty) */
    uint64_t t0_ns;
    int n_cases, done;       /* every round's */
    int round;               /* 1..cfg->rounds while running */
    int n_ok, n_failed, n_unavailable, n_skipped; /* records on disk, by status */
    int write_errors;        /* records that could not be written (not in the counts above) */
    char **names;            /* region names kept alive until prof_shutdown */
    int n_names;
} sl_run_ctx;

/* The fields every case record of (s, v, size) has before it runs (a new object). */
json_t *sl_case_base(const sl_run_ctx *c, const sl_study *s, int v, long size);
/* The record's "seed": an integer below 2^63, else the exact decimal text (jansson's integers are int64). */
json_t *sl_seed_json(uint64_t seed);
/* Runs variant v of a set-up study at `size` and writes its record. */
void sl_run_case(sl_run_ctx *c, const sl_study *s, void *state, int v, long size);
/* Appends a finished record, prints its summary line; 0 or -1 (counted in write_errors). */
int sl_emit_case(sl_run_ctx *c, json_t *rec, const char *summary);

/* The repetition plan of a case of s: repetitions, warm-up calls, minimum total time. */
void sl_case_plan(const sl_run_cfg *cfg, const sl_study *s, int *reps, int *warmup, double *min_time);
/* The correctness check of a prepared variant, before any timed run: a kernel study's after one untimed
 * run, a training study's own. 0 when it passed; else rec is marked failed with the reason ("error"). */
int sl_case_check_variant(const sl_study *s, void *state, int v, sl_record *r, json_t *rec);
/* The study's check of variant v's last output against its tolerance, into rec's "check" (rec marked
 * failed when it does not pass). 0 when it passed. */
int sl_case_check(const sl_study *s, void *state, int v, json_t *rec);

#endif
