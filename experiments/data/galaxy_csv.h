/* experiments/data/galaxy_csv.h: placeholder, replaced by the real reader. */
#ifndef SL_DATA_GALAXY_CSV_H
#define SL_DATA_GALAXY_CSV_H
#endif
