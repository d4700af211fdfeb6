/* Placeholder for the galaxy study; replaced by the study's real definition. */
#include "study.h"

const sl_study sl_study_galaxy = {
    .name = "galaxy",
    .title = "(not yet implemented)",
};
