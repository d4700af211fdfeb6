/* The registry: every study the runner knows, in the order `speedlab list` shows them.
 * A new study is one line here and one folder in studies/ and kernels/. */
#include <string.h>

#include "study.h"

extern const sl_study sl_study_entropy_mi;
extern const sl_study sl_study_tensor_mean;
extern const sl_study sl_study_mlp;
extern const sl_study sl_study_galaxy;

const sl_study *const sl_studies[] = {
    &sl_study_entropy_mi,
    &sl_study_tensor_mean,
    &sl_study_mlp,
    &sl_study_galaxy,
};
const int sl_n_studies = (int)(sizeof sl_studies / sizeof sl_studies[0]);

const sl_study *sl_find_study(const char *name)
{
    for (int i = 0; i < sl_n_studies; i++)
        if (strcmp(sl_studies[i]->name, name) == 0)
            return sl_studies[i];
    return NULL;
}
