/* avail.h: which variants can run here (avail.c). */
#ifndef SL_AVAIL_H
#define SL_AVAIL_H

#include <stddef.h>

#include "study.h"

/* 1 when variant v can run here; otherwise 0 and the reason ("cuda: no CUDA device"). */
int sl_variant_available(const sl_variant *v, char *why, size_t n);
int sl_online_cpus(void);

#endif
