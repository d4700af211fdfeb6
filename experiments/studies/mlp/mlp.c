/* Placeholder for the mlp study; replaced by the study's real definition. */
#include "study.h"

const sl_study sl_study_mlp = {
    .name = "mlp",
    .title = "(not yet implemented)",
};
