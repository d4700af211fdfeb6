/* experiments/data/idx.c: placeholder, replaced by the real reader. */
#include "idx.h"
typedef int sl_placeholder_idx;
