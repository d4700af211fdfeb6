/* experiments/data/galaxy_csv.c: placeholder, replaced by the real reader. */
#include "galaxy_csv.h"
typedef int sl_placeholder_galaxy_csv;
