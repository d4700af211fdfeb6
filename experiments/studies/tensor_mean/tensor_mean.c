/* Placeholder for the tensor_mean study; replaced by the study's real definition. */
#include "study.h"

const sl_study sl_study_tensor_mean = {
    .name = "tensor_mean",
    .title = "(not yet implemented)",
};
