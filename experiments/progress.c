/*
 * progress.c: the status line inside a case (progress.h) and the study's call into it,
 * sl_record_progress (study.h).
 */
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <speedlab/prof.h>

#include "record.h"

/* Terminal columns the line may take: a longer line would wrap, and "\r" would then redraw only its
 * last part, leaving a trail of half lines. */
#define SL_PROGRESS_COLUMNS 79

void sl_progress_case(sl_progress *p, int case_no, int n_cases, const char *study, const char *variant,
                      const char *size_name, long size, uint64_t now_ns)
{
    snprintf(p->head, sizeof p->head, "[%d/%d] %s %s %s=%ld", case_no, n_cases, study, variant,
             size_name ? size_name : "size", size);
    p->phase = NULL;
    p->rep = p->reps = p->later = 0;
    p->phase_t0 = now_ns;
    p->next_ns = now_ns + SL_PROGRESS_PERIOD_NS;
}

void sl_progress_rep(sl_progress *p, const char *phase, int rep, int reps, int later, uint64_t now_ns)
{
    p->phase = phase;
    p->rep = rep;
    p->reps = reps;
    p->later = later;
    p->phase_t0 = now_ns;
}

void sl_progress_duration(char *buf, size_t n, double s)
{
    if (s < 60)
        snprintf(buf, n, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

int sl_progress_format(const sl_progress *p, double done, double total, const char *unit,
                       uint64_t now_ns, char *buf, size_t n)
{
    char rep[48] = "", left[48] = "";
    if (p->phase)
        snprintf(rep, sizeof rep, "  %s %d/%d", p->phase, p->rep, p->reps);
    double elapsed = now_ns > p->phase_t0 ? (double)(now_ns - p->phase_t0) * 1e-9 : 0;
    if (done > 0 && total >= done && elapsed > 0) {
        double per_rep = elapsed * total / done; /* this repetition's pace, for it and the ones after */
        char t[32];
        sl_progress_duration(t, sizeof t, per_rep - elapsed + per_rep * p->later);
        snprintf(left, sizeof left, "  ~%s left", t);
    }
    char line[256];
    int len = snprintf(line, sizeof line, "%s%s  %s %.0f/%.0f%s", p->head, rep, unit ? unit : "step",
                       floor(done), total, left);
    if (len > SL_PROGRESS_COLUMNS)
        len = SL_PROGRESS_COLUMNS;
    if (n == 0)
        return 0;
    if ((size_t)len >= n)
        len = (int)n - 1;
    memcpy(buf, line, (size_t)len);
    buf[len] = '\0';
    return len;
}

int sl_progress_tick(sl_progress *p, double done, double total, const char *unit, uint64_t now_ns,
                     char *buf, size_t n)
{
    if (now_ns < p->next_ns)
        return 0;
    p->next_ns = now_ns + SL_PROGRESS_PERIOD_NS;
    sl_progress_format(p, done, total, unit, now_ns, buf, n);
    return 1;
}

/* Called from a study's run loop between steps, inside the repetition but outside the kernels' timed
 * work. Off a terminal r->progress is NULL: one compare. On one, a clock read and a compare until a
 * redraw is due (tests/experiments/test_progress.c measures both). */
void sl_record_progress(sl_record *r, double done, double total, const char *unit)
{
    sl_progress *p = r ? r->progress : NULL;
    if (!p || !p->out)
        return;
    uint64_t now = prof_now_ns();
    if (now < p->next_ns)
        return;
    char line[SL_PROGRESS_COLUMNS + 1];
    if (sl_progress_tick(p, done, total, unit, now, line, sizeof line)) {
        fprintf(p->out, "\r\033[K%s", line);
        fflush(p->out);
    }
}
