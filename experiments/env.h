/* env.h: the `env` object of every record (env.c, docs/results-schema.md). */
#ifndef SL_ENV_H
#define SL_ENV_H

#include <jansson.h>
#include <stddef.h>

json_t *sl_env_capture(int threads);
/* The value of the first "key : value" line of a /proc file whose key is `key` (exactly: "model" is not
 * "model name"); 0 when found. */
int sl_proc_field(const char *file, const char *key, char *out, size_t n);
/* MemAvailable from /proc/meminfo in bytes, or -1 when unknown. */
double sl_mem_available(void);

#endif
