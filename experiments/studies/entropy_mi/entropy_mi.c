/* Placeholder for the entropy_mi study; replaced by the study's real definition. */
#include "study.h"

const sl_study sl_study_entropy_mi = {
    .name = "entropy_mi",
    .title = "(not yet implemented)",
};
