/* reports/select.c: small case selectors that the study-specific tables share (pipeline.c, copies.c,
 * algo_search.c, ...): a record's metric, and whether a study has a case of a kind. */
#include <math.h>
#include <string.h>

#include "rep.h"

double rep_metric(const rep_case *c, const char *name)
{
    return c ? rep_jnum(json_object_get(c->rec, "metrics"), name) : NAN;
}

int rep_study_has(const rep_set *s, int env, const char *study, int (*pred)(const rep_case *c))
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !c->replaced && !strcmp(c->study, study) && pred(c))
            return 1;
    }
    return 0;
}
