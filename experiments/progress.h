/*
 * progress.h: the status line inside a case (progress.c). A training study reports how far its
 * repetition is (sl_record_progress, study.h: an epoch, a CG iteration); on a terminal the runner
 * redraws one line in place, like
 *     [3/12] mlp omp batch=64  rep 2/3  epoch 7/20  ~14 s left
 * at most SL_PROGRESS_PERIOD_NS apart, and clears it when the case ends. Off a terminal it is off:
 * records and outputs stay byte-identical.
 */
#ifndef SL_PROGRESS_H
#define SL_PROGRESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Redraws at most 4 times a second: often enough to look alive, rarely enough to cost nothing. */
#define SL_PROGRESS_PERIOD_NS 250000000ull

typedef struct sl_progress {
    FILE *out;              /* stderr on a terminal; NULL: progress off */
    char head[128];         /* "[3/12] mlp omp batch=64" */
    const char *phase;      /* "warm-up" or "rep" (a string literal) */
    int rep, reps;          /* this repetition of the phase's, 1-based */
    int later;              /* repetitions still to come after this one (warm-up and timed) */
    uint64_t phase_t0;      /* when this repetition began (ns, prof_now_ns) */
    uint64_t next_ns;       /* no redraw before this: the throttle */
} sl_progress;

/* A new case: its head ("[case/cases] study variant SIZE_NAME=size"). The first redraw waits one
 * period, so a case shorter than that never shows a line of its own. */
void sl_progress_case(sl_progress *p, int case_no, int n_cases, const char *study, const char *variant,
                      const char *size_name, long size, uint64_t now_ns);
/* A repetition begins: phase "warm-up" or "rep", rep of reps, `later` repetitions after it. */
/* A duration as both progress lines say it: "14 s", "3m05s", "1h02m". */
void sl_progress_duration(char *buf, size_t n, double s);
void sl_progress_rep(sl_progress *p, const char *phase, int rep, int reps, int later, uint64_t now_ns);
/* The line for `done` of `total` units at now_ns into buf (no "\r", no newline); its length. The time
 * left is this repetition's rest at its pace so far, plus the `later` repetitions at that pace. */
int sl_progress_format(const sl_progress *p, double done, double total, const char *unit,
                       uint64_t now_ns, char *buf, size_t n);
/* The throttle: 1 with the line formatted into buf when a redraw is due at now_ns (and the next one
 * is then a period away), else 0 with buf untouched. */
int sl_progress_tick(sl_progress *p, double done, double total, const char *unit, uint64_t now_ns,
                     char *buf, size_t n);

#endif
