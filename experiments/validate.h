/* validate.h: the registry self-check and the names of a variant's traits (validate.c). */
#ifndef SL_VALIDATE_H
#define SL_VALIDATE_H

#include <jansson.h>

#include "study.h"

/* 0 when every study of the registry passes sl_study_validate; else -1 after saying why on stderr. */
int sl_registry_check(const sl_study *const *studies, int n_studies);
/* The names of a variant's traits (enum sl_trait), as records and `speedlab list` show them. */
json_t *sl_traits_json(unsigned traits);

#endif
