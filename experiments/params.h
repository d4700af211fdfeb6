/*
 * params.h: one parser for study parameters (--param NAME=VALUE), used by the studies' lookups
 * (sl_param_long, sl_param_double in study.h), by the check of every value before the first case
 * (sl_params_check), by the registry self-check of defaults and by the records (the value that ran).
 */
#ifndef SL_PARAMS_H
#define SL_PARAMS_H

#include <stddef.h>

#include "study.h"

/* A parsed value: `i` for SL_PARAM_INT, `d` for SL_PARAM_INT and SL_PARAM_REAL. */
typedef struct sl_param_value {
    long i;
    double d;
} sl_param_value;

/* Parses text as row p declares. 0 with *v, or -1 with why ("want an integer from 1 to 64"). */
int sl_param_parse(const sl_param *p, const char *text, sl_param_value *v, char *why, size_t n);
/* The row of study s called name, or NULL. */
const sl_param *sl_param_row(const sl_study *s, const char *name);
/* The value that runs, written back as text: "8", "0.1" (the shortest text that reads back as the same
 * double), or the text itself for an SL_PARAM_TEXT row. */
void sl_param_canonical(const sl_opts *o, const sl_study *s, const sl_param *p, char *out, size_t n);
/* Every given --param that study s declares, parsed as its row says. 0, or -1 after printing
 * "speedlab: --param NAME=VALUE (study S): want ..." on stderr. */
int sl_params_check(const sl_study *s, int n, const char *const *names, const char *const *values);
/* The size a study whose size is one of its parameters (galaxy's max_iter) was given with --param (the
 * last one), which is then its only size: a case at the size that runs, labelled as it ran. -1 when the
 * study has no such parameter, it was not given, or its value does not parse (sl_params_check says). */
long sl_size_param(const sl_study *s, int n, const char *const *names, const char *const *values);

#endif
