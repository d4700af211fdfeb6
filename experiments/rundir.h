/* rundir.h: one new run directory per invocation (rundir.c). */
#ifndef SL_RUNDIR_H
#define SL_RUNDIR_H

#include <stddef.h>

/* Creates OUT (and parents) and a new OUT/run-YYYYmmdd-HHMMSS[-N]; points OUT/latest at it.
 * Writes its path into dir and its name into id. 0, or -1 after a message on stderr. */
int sl_rundir_create(const char *out, char *dir, size_t dn, char *id, size_t idn);

#endif
