/* experiments/data/idx.h: placeholder, replaced by the real reader. */
#ifndef SL_DATA_IDX_H
#define SL_DATA_IDX_H
#endif
