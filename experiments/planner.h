/*
 * planner.h: which ISA level a CPU variant's case runs at, and why (planner.c), as FFTW's planner and
 * cuDNN's find choose: `speedlab tune` (tune.c) times each variant at the levels this CPU runs on a small
 * case, keeps the winner in the wisdom file (wisdom.h), and `speedlab run` runs each case at its
 * variant's kept level. Every CPU row's record says what ran and why ("impl", docs/results-schema.md).
 * Without wisdom a case runs at the default level (the widest the CPU has).
 */
#ifndef SL_PLANNER_H
#define SL_PLANNER_H

#include <jansson.h>
#include <stddef.h>

#include "study.h"
#include "wisdom.h"

/* The kernels' levels (kernels/isa.h): the real ones, or a test's (sl_levels_override). */
typedef struct sl_levels {
    int (*has)(int level);
    int (*select)(int level);
    int (*current)(void);
    int (*default_level)(void);
    const char *(*isa)(void);    /* the name of the level running now: "avx2" */
    const char *(*forced)(void); /* SPEEDLAB_ISA when it was honoured, else NULL */
    const char *(*cflags)(void); /* the flags of the level running now, or NULL */
} sl_levels;
const sl_levels *sl_levels_now(void);
/* Tests: levels of their own (a fake dispatch build), or NULL for the kernels'. */
void sl_levels_override(const sl_levels *l);

typedef struct sl_planner {
    char path[4096];         /* the wisdom file */
    char cpu[320], build[320];
    sl_wisdom w;
    int off;                 /* --no-tune, or SPEEDLAB_TUNE=off: every case at the default level */
    int threads;             /* the run's --threads (0: unknown); a choice tuned at another count is not used */
} sl_planner;

/* Reads the wisdom (wisdom_path: --wisdom, or NULL) where there is a choice to make (two levels or more,
 * none forced). 0, or -1 with err (a malformed file: what and where). */
int sl_planner_open(sl_planner *p, const char *wisdom_path, int no_tune, char *err, size_t n);
void sl_planner_close(sl_planner *p);
/* The run's env.planner: the wisdom file, whether it was used and how many choices it holds here. */
json_t *sl_planner_env(const sl_planner *p);

/* 1 with a line for the user when the wisdom has choices for this CPU but none for this build (made by
 * another commit: the kernels may differ), so every case runs at the default level; else 0. */
int sl_planner_stale(const sl_planner *p, char *line, size_t n);

/* What ran for one case, and why. */
typedef struct sl_impl {
    int level;              /* 2..4; 0 where the planner has no say (a GPU or framework row) */
    const char *chosen_by;  /* wisdom | default | forced | build | library */
    char why[400];
} sl_impl;

/* 1 when the planner chooses variant v's level (a CPU kernel of speedlab's own); else 0 and, in why, who
 * does (the library, the device, the framework). */
int sl_variant_tunable(const sl_variant *v, char *why, size_t n);
/* The level variant v of s runs at, and why. */
void sl_planner_choose(const sl_planner *p, const sl_study *s, int v, sl_impl *out);
/* Runs the kernels at im's level (nothing for level 0); sl_planner_restore goes back to the default. */
void sl_planner_enter(const sl_impl *im);
void sl_planner_restore(void);
/* The record's "impl": {"level": "v3", "isa": "avx2", "cflags": ..., "chosen_by": ..., "why": ...}; NULL for
 * level 0.
 * Call between enter and restore: isa is the level running. */
json_t *sl_impl_json(const sl_impl *im);

#endif
