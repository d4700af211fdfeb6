/*
 * runner_test.h: what the runner's tests (test_runner.c, test_registry.c) share: `speedlab ARGS...` run
 * in a child with a registry of the test's own, its stderr kept, and the records it wrote read back.
 * The cmocka group's setup and teardown make and remove a temporary directory per test.
 */
#ifndef RUNNER_TEST_H
#define RUNNER_TEST_H

#include <limits.h>
#include <stdarg.h>

#include <jansson.h>

#include "study.h"

extern char rt_tmpdir[PATH_MAX];  /* the test's temporary directory */
extern char rt_errbuf[16384];     /* the stderr of the last rt_speedlab_va */
extern char rt_out_dir[PATH_MAX + 16]; /* rt_tmpdir/out, for --out */

/* Runs `speedlab ARGS...` (first, then ap, up to a NULL) with the registry `reg` in a child, stdout to
 * /dev/null and stderr into rt_errbuf; its exit code (128 + the signal when one ended it). */
int rt_speedlab_va(const sl_study *const *reg, int n_reg, const char *first, va_list ap);
/* The same with the arguments listed: rt_speedlab(reg, n, "run", "fake", ..., NULL). */
int rt_speedlab(const sl_study *const *reg, int n_reg, const char *first, ...);
/* Every line of OUT/latest/results.jsonl parsed (each must be whole); the array's length is the count. */
json_t *rt_read_latest(const char *out);
/* The record of (variant, size) in rt_read_latest's array; fails the test when there is none. */
json_t *rt_find_case(json_t *all, const char *variant, long size);
/* A record's string field; fails the test when it is not a string. */
const char *rt_str(json_t *o, const char *k);
/* cmocka setup and teardown: a new rt_tmpdir, then its removal (kept with SPEEDLAB_TEST_KEEP set). */
int rt_setup_dir(void **state);
int rt_remove_dir(void **state);

#endif
