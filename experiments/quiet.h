/* quiet.h: what on this machine makes timings noisy, read before a run (docs/quiet-machine.md). */
#ifndef SL_QUIET_H
#define SL_QUIET_H
#include <jansson.h>
#include <stdio.h>

/* Reads the frequency governors, turbo, SMT and the processes running (below $SPEEDLAB_SYSFS_ROOT, default
 * "/": tests point it at a fake tree), puts them in env.quiet with a list of warnings, and prints each
 * warning to `warn` (NULL: none). What cannot be read is absent, never guessed. Returns the number of
 * warnings. */
int sl_quiet_check(json_t *env, int threads, FILE *warn);

#endif
