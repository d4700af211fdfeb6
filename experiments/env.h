/* env.h: the `env` object of every record (env.c, docs/results-schema.md). */
#ifndef SL_ENV_H
#define SL_ENV_H

#include <jansson.h>

json_t *sl_env_capture(int threads);
/* MemAvailable from /proc/meminfo in bytes, or -1 when unknown. */
double sl_mem_available(void);

#endif
