/*
 * plan.h: `speedlab plan` and the cases file it writes (plan.c, estimate.c); `speedlab slurm` (slurm.c)
 * turns that file into job arrays. docs/slurm.md documents the file format.
 */
#ifndef SL_PLAN_H
#define SL_PLAN_H

#include <stdio.h>

#include "cli.h"
#include "study.h"

/* The first line of every cases file: its format and version (docs/slurm.md, "The cases file"). */
#define SL_CASES_MAGIC "# speedlab cases v1"

/* One case the run options would run: the identity the report's loader uses (study, variant, size,
 * params), and what running it alone takes (seed, reps). */
typedef struct sl_plan_case {
    const sl_study *study;
    int variant;
    long size;
    int reps;
    int gpu;              /* the variant runs on a GPU (SL_DEVICE): it goes to the GPU array */
    char params[1024];    /* "k=v k=v", every declared parameter but the size's (unless given), or "" */
    double est_s;         /* estimated seconds for the whole case, < 0: no estimate */
    int bound;            /* est_s is a lower bound (the roofline's), not a measured time */
    char basis[256];      /* what est_s rests on, in words */
} sl_plan_case;

typedef struct sl_plan {
    sl_run_cfg cfg;
    sl_plan_case *cases;
    int n;
    char options[2048];   /* the run options every case shares, as words for `speedlab run` */
    const char *calibration; /* --calibration PATH, or NULL: look in the default places */
} sl_plan;

/* Parses `plan` arguments (argv[0] = "plan"), builds the cases and their estimates. 0, 1 after --help,
 * or SL_EXIT_USAGE after a message. `extra` (may be NULL) is offered every option plan does not know
 * first: it returns the number of argv words it used (0: not its option, -1: a bad value, said). */
typedef int (*sl_plan_extra_fn)(void *ctx, int argc, char **argv, int i);
int sl_plan_parse(int argc, char **argv, const sl_study *const *studies, int n_studies, sl_plan *p,
                  sl_plan_extra_fn extra, void *ctx);
void sl_plan_free(sl_plan *p);
/* Writes DIR/cases.tsv (DIR = --out); `header` (may be NULL) is one more "# ..." line. 0 or -1. */
int sl_plan_write(const sl_plan *p, const char *path, const char *header);
/* Whether a word can go through the generated shell scripts unquoted: non-empty, only letters, digits
 * and _.,=:/+@%- (the run options of the cases file, the slurm options, their values). */
int sl_plain_word(const char *w);
/* Whether a cases file's "# options:" words leave each case as its line says: 0, or -1 with `why`
 * naming the first word that would change which cases run or how (an option each case line sets, such
 * as --variants or --sizes, or a study name, which would add that study to every task). */
int sl_plan_options_check(const char *options, char *why, size_t n);

/* The table, count and total estimate on stdout. */
void sl_plan_print(const sl_plan *p, const char *path);
int sl_plan_main(int argc, char **argv, const sl_study *const *studies, int n_studies);

/* estimate.c: fills est_s and basis of every case from earlier records of the same case, else the
 * roofline of a calibration record, else says that no estimate is possible. */
void sl_plan_estimate(sl_plan *p);

#endif
