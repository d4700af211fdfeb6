/* reports/missing.h: the planned cases (DIR/cases.tsv) that the results lack (missing.c). */
#ifndef SL_REP_MISSING_H
#define SL_REP_MISSING_H

#include <stdio.h>

#include "rep.h"

/* One line of a cases file (docs/slurm.md); the strings point into the parsed line. */
typedef struct rep_plan_case {
    int index;
    const char *study, *variant, *device, *params; /* params: "k=v k=v", "" for none */
    long size;
} rep_plan_case;

/* Parses (and cuts up) one tab-separated case line; 0, or -1 when it is not one. */
int rep_plan_case_parse(char *line, rep_plan_case *c);
/* Calls fn (may be NULL) for every case of the cases file that has no record in s, with the case and
 * its line as written. Returns how many, or -1 when the file cannot be opened; *n_planned (may be NULL)
 * gets the number of cases in the file. */
typedef void (*rep_missing_fn)(void *ctx, const rep_plan_case *c, const char *line);
int rep_missing_cases(const rep_set *s, const char *cases_path, rep_missing_fn fn, void *ctx,
                      int *n_planned);
/* For each report input path holding a cases.tsv: a REPORT.md section listing its cases without a
 * record, and one line on stderr when there are any. Returns the number missing. */
int rep_missing_section(FILE *md, const rep_set *s, int npaths, char **paths);

#endif
