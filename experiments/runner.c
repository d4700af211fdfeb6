/*
 * runner.c: `speedlab run`: every (study, size, variant) case, from the memory check to the record.
 *
 * Per (study, size): variants that cannot run here are recorded "unavailable"; a size whose footprint
 * exceeds MemAvailable is refused before setup ("skipped"); then setup, and per variant: prepare, the
 * correctness check (kernels: after one untimed run; training: the study's own check, first), warm-up,
 * and timed repetitions until both --reps and --min-time are met. Each repetition is the profiler region
 * study > variant > "SIZE_NAME=SIZE", so the study's own regions nest below it. One record per case is
 * appended whole (record.c); a failed check is a "failed" record with no times, and the run goes on.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <speedlab/prof.h>

#include "avail.h"
#include "calibrate.h"
#include "case.h"
#include "cli.h"
#include "env.h"
#include "interrupt.h"
#include "progress.h"
#include "quiet.h"
#include "rundir.h"
#include "params.h"
#include "planner.h"
#include "runner.h"
#include "safefile.h"

/* Limits of one study's declaration (far above any real study). */
#define SL_MAX_SIZES 1024
#define SL_MAX_VARIANTS 256

/* Whether n is one of the study's sizes, quick sizes or sweep sizes (what --sizes may name). */
static int study_accepts(const sl_study *s, long n)
{
    const long *lists[] = {s->sizes, s->quick_sizes, s->sweep_sizes};
    const int lens[] = {s->n_sizes, s->n_quick_sizes, s->n_sweep_sizes};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < lens[l]; i++)
            if (lists[l][i] == n)
                return 1;
    return 0;
}

/* Sizes the study runs: --sizes in the order given (those the study accepts), else its (quick) sizes. */
static int study_sizes(const sl_run_ctx *c, const sl_study *s, long *out)
{
    int n = 0;
    /* galaxy's --param max_iter=2 is its size: the case runs, and is recorded, at max_iter=2 */
    long given = sl_size_param(s, c->cfg->n_params, (const char *const *)c->cfg->param_names,
                               (const char *const *)c->cfg->param_values);
    if (given > 0) {
        out[0] = given;
        return 1;
    }
    if (c->cfg->n_sizes) {
        for (int k = 0; k < c->cfg->n_sizes; k++)
            if (study_accepts(s, c->cfg->sizes[k]) && n < SL_MAX_SIZES)
                out[n++] = c->cfg->sizes[k];
        return n;
    }
    const long *src = c->cfg->quick && s->n_quick_sizes ? s->quick_sizes : s->sizes;
    int m = c->cfg->quick && s->n_quick_sizes ? s->n_quick_sizes : s->n_sizes;
    m = m < SL_MAX_SIZES ? m : SL_MAX_SIZES;
    memcpy(out, src, (size_t)m * sizeof *out);
    return m;
}

/* Variant indices the study runs: --variants (those the study has), else all, in the study's order. */
static int study_variants(const sl_run_ctx *c, const sl_study *s, int *out)
{
    int n = 0;
    for (int v = 0; v < s->n_variants; v++) {
        int take = c->cfg->n_variants == 0;
        for (int k = 0; k < c->cfg->n_variants && !take; k++)
            take = strcmp(c->cfg->variants[k], s->variants[v].name) == 0;
        if (take && n < SL_MAX_VARIANTS)
            out[n++] = v;
    }
    return n;
}

/* Terminal progress, overwritten in place; nothing at all when stderr is not a terminal. */
static void progress(sl_run_ctx *c, const sl_study *s, const char *variant, long size)
{
    if (!c->tty)
        return;
    double el = (double)(prof_now_ns() - c->t0_ns) * 1e-9;
    char a[32], b[32];
    sl_progress_duration(a, sizeof a, el);
    fprintf(stderr, "\r\033[K");
    if (c->cfg->rounds > 1)
        fprintf(stderr, "round %d of %d, ", c->round, c->cfg->rounds);
    fprintf(stderr, "case %d of %d: %s %s %s=%ld — %s elapsed", c->done + 1, c->n_cases, s->name, variant,
            s->size_name ? s->size_name : "size", size, a);
    if (c->done > 0) {
        /* A plain average: cases differ a lot, so this is a rough guide and says so. */
        sl_progress_duration(b, sizeof b, el / c->done * (c->n_cases - c->done));
        fprintf(stderr, ", about %s left", b);
    }
    fflush(stderr);
}

/* The record of a case that did not run (status failed, skipped or unavailable, with why), counted. */
static void record_not_run(sl_run_ctx *c, const sl_study *s, int v, long size, const char *status,
                           const char *why)
{
    json_t *rec = sl_case_base(c, s, v, size);
    json_object_set_new(rec, "status", json_string(status));
    json_object_set_new(rec, "error", json_string(why));
    char line[1024];
    snprintf(line, sizeof line, "%-12s %-12s %s=%-8ld %s: %s", s->name, s->variants[v].name,
             s->size_name ? s->size_name : "size", size, status, why);
    sl_emit_case(c, rec, line); /* counts it by status once it is on disk */
    json_decref(rec);
}

/* Records for every variant when the size cannot run at all (no memory, setup failed). */
static void whole_size(sl_run_ctx *c, const sl_study *s, long size, const int *vs, int nv,
                       const char *status, const char *error)
{
    for (int k = 0; k < nv; k++)
        record_not_run(c, s, vs[k], size, status, error);
}

static void record_unavailable(sl_run_ctx *c, const sl_study *s, int v, long size, const char *why)
{
    progress(c, s, s->variants[v].name, size);
    record_not_run(c, s, v, size, "unavailable", why);
}

/* With --trace, an instant event at the start of each case, so a user finds it on the timeline. */
static void trace_mark_case(const sl_study *s, const char *variant, long size)
{
    char label[256];
    snprintf(label, sizeof label, "case %s %s %s=%ld", s->name, variant, s->size_name ? s->size_name : "size",
             size);
    prof_trace_mark(label); /* a no-op without tracing */
}

/* With --trace: the trace so far, rewritten after a case when the last copy is TRACE_CHECKPOINT_S old,
 * so that a run stopped by Ctrl-C (which leaves at once, interrupt.c) still leaves the trace up to a
 * recent case. Written to a temporary and renamed (prof_trace_write) with Ctrl-C held off, so the copy
 * is always whole (a full 1M-event buffer is about 70 MB: a second or two). The final trace is written
 * by close_run. */
#define TRACE_CHECKPOINT_S 30.0
static void trace_checkpoint(const sl_run_ctx *c)
{
    static uint64_t last;
    if (!c->cfg->trace)
        return;
    uint64_t now = prof_now_ns();
    if (last && (double)(now - last) * 1e-9 < TRACE_CHECKPOINT_S)
        return;
    last = now;
    sigset_t old;
    sl_interrupt_hold(&old);
    prof_trace_write(c->cfg->trace); /* a temporary renamed over the last copy: a failure keeps that one */
    sl_interrupt_release(&old);
}

/* One (study, size): availability, the memory check, setup, every variant, teardown. */
static void run_size(sl_run_ctx *c, const sl_study *s, long size, const int *vs, int nv)
{
    char why[768];
    if (s->data_missing && !c->opts.data_dir && s->data_missing(&c->opts, why, sizeof why)) {
        for (int k = 0; k < nv; k++)
            record_unavailable(c, s, vs[k], size, why);
        return;
    }
    int runnable[SL_MAX_VARIANTS], nr = 0;
    for (int k = 0; k < nv; k++) {
        if (sl_variant_available(&s->variants[vs[k]], why, sizeof why))
            runnable[nr++] = vs[k];
        else
            record_unavailable(c, s, vs[k], size, why);
    }
    if (nr == 0)
        return;

    double need = s->footprint ? s->footprint(size, &c->opts) : 0;
    double avail = sl_mem_available();
    if (need > 0 && avail >= 0 && need > avail) {
        char msg[512];
        snprintf(msg, sizeof msg, "does not fit in memory: setup needs %.0f bytes (%.2f GiB), "
                 "MemAvailable is %.0f bytes (%.2f GiB); refused before allocating", need,
                 need / 1073741824.0, avail, avail / 1073741824.0);
        fprintf(stderr, "%sspeedlab: %s %s=%ld %s\n", c->tty ? "\r\033[K" : "", s->name,
                s->size_name ? s->size_name : "size", size, msg);
        whole_size(c, s, size, runnable, nr, "skipped", msg);
        return;
    }

    /* The setup a case uses is made at the level the case runs at (the planner's choice): a study's
     * workspace is sized by the kernels of that level (cnn's work area differs between the levels for
     * some image sizes), so a variant at another level than the last setup's gets a setup of its own.
     * Framework and GPU rows (level 0) get the default level's. */
    void *state = NULL;
    int state_level = -1;
    for (int k = 0; k < nr; k++) {
        sl_impl im = {0};
        if (c->planner)
            sl_planner_choose(c->planner, s, runnable[k], &im);
        int level = im.level ? im.level : sl_levels_now()->default_level();
        if (!state || level != state_level) {
            if (state && s->teardown)
                s->teardown(state);
            sl_error err = {{0}};
            progress(c, s, "setup", size);
            sl_planner_enter(&im);
            state = s->setup(size, &c->opts, &err);
            sl_planner_restore();
            state_level = level;
            if (!state) {
                char msg[SL_ERRLEN + 16];
                snprintf(msg, sizeof msg, "setup: %s", err.msg[0] ? err.msg : "failed (no message)");
                whole_size(c, s, size, runnable + k, nr - k, "failed", msg);
                return;
            }
        }
        progress(c, s, s->variants[runnable[k]].name, size);
        trace_mark_case(s, s->variants[runnable[k]].name, size);
        sl_run_case(c, s, state, runnable[k], size);
        trace_checkpoint(c);
    }
    if (state && s->teardown)
        s->teardown(state);
}

static int count_cases(const sl_run_ctx *c)
{
    long sizes[SL_MAX_SIZES];
    int vs[SL_MAX_VARIANTS], n = 0;
    for (int i = 0; i < c->cfg->n_studies; i++) {
        const sl_study *s = c->cfg->studies[i];
        n += study_sizes(c, s, sizes) * study_variants(c, s, vs);
    }
    return n * c->cfg->rounds;
}

/* Every case, once per round: round r runs the whole list before round r + 1 begins, so the rounds of
 * one case are as far apart as the run allows. */
static void run_all(sl_run_ctx *c)
{
    for (c->round = 1; c->round <= c->cfg->rounds; c->round++)
        for (int i = 0; i < c->cfg->n_studies; i++) {
            const sl_study *s = c->cfg->studies[i];
            long sizes[SL_MAX_SIZES];
            int vs[SL_MAX_VARIANTS];
            int ns = study_sizes(c, s, sizes), nv = study_variants(c, s, vs);
            for (int k = 0; k < ns; k++)
                run_size(c, s, sizes[k], vs, nv);
        }
}

/* Opens the run directory's files and the profiler; 0, or -1 after a message. */
static int open_run(sl_run_ctx *c)
{
    if (sl_rundir_create(c->cfg->out, c->dir, sizeof c->dir, c->id, sizeof c->id) != 0)
        return -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/results.jsonl", c->dir);
    /* created in the run directory just made: O_EXCL and O_NOFOLLOW, so nothing there is written through */
    c->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666);
    snprintf(path, sizeof path, "%s/timerstats.txt", c->dir);
    int tfd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0666);
    c->timerstats = tfd >= 0 ? fdopen(tfd, "a") : NULL;
    if (tfd >= 0 && !c->timerstats)
        close(tfd);
    if (c->fd < 0 || !c->timerstats) {
        fprintf(stderr, "speedlab: cannot create files in %s\n", c->dir);
        return -1;
    }
    return 0;
}

/* --trace FILE: the trace was written at prof_shutdown; RUNDIR/trace.json is it, so that `speedlab
 * report` draws its timeline: a hard link, or across file systems a copy (report reads only regular
 * files of the run, never a link out of it). */
static void link_trace(const sl_run_ctx *c)
{
    char dst[4200], tmp[4400], buf[1 << 16];
    const char *why = "";
    snprintf(dst, sizeof dst, "%s/trace.json", c->dir);
    if (!c->cfg->trace || access(c->cfg->trace, R_OK) != 0 || link(c->cfg->trace, dst) == 0)
        return;
    int in = sf_open_read_fd(c->cfg->trace, SF_FOLLOW, &why);
    FILE *out = in >= 0 ? sf_create(dst, tmp, sizeof tmp, &why) : NULL;
    ssize_t n = 0;
    while (out && (n = read(in, buf, sizeof buf)) > 0 && fwrite(buf, 1, (size_t)n, out) == (size_t)n)
        ;
    if (out && n != 0) /* a read or write error: not committed */
        fclose(out), unlink(tmp), out = NULL, why = "copying it failed (disk full?)";
    if (in >= 0)
        close(in);
    if (out && sf_commit(out, tmp, dst, &why) == 0)
        return;
    fprintf(stderr, "speedlab: trace in %s (could not copy it to %s: %s)\n", c->cfg->trace, dst, why);
}

/* --trace FILE, before the first case: a path the run could not write (no such directory, no
 * permission, too long, not a regular file) is a usage error at once, not a trace lost after every case. A
 * temporary beside it is made and removed, as the trace itself will be (prof_trace_write). */
static int trace_path_usable(const char *path)
{
    const char *why;
    if (sf_target_ok(path, &why) != 0) {
        fprintf(stderr, "speedlab: --trace %s: %s; give a file path\n", path, why);
        return 0;
    }
    char tmp[PATH_MAX];
    FILE *f = sf_create(path, tmp, sizeof tmp, &why);
    if (!f) {
        fprintf(stderr, "speedlab: --trace %s: cannot write there: %s; give a file in an existing directory "
                "you can write to\n", path, why);
        return 0;
    }
    fclose(f);
    unlink(tmp);
    return 1;
}

/* Returns whether the trace (--trace) was written whole; 1 without --trace. */
static int close_run(sl_run_ctx *c)
{
    if (c->fd >= 0)
        close(c->fd);
    if (c->timerstats)
        fclose(c->timerstats);
    json_decref(c->env);
    int traced = 1;
    if (c->cfg->trace && c->dir[0]) { /* written here, not at prof_shutdown: its failure is the run's */
        traced = prof_trace_write(c->cfg->trace) == 0;
        prof_trace_start(NULL);       /* tracing on, no file: prof_shutdown writes none */
    }
    prof_shutdown();
    if (c->dir[0] && traced)
        link_trace(c);
    for (int i = 0; i < c->n_names; i++)
        free(c->names[i]);
    free(c->names);
    return traced;
}

static void print_timerstats(const sl_run_ctx *c)
{
    char path[4200], buf[8192];
    snprintf(path, sizeof path, "%s/timerstats.txt", c->dir);
    FILE *f = fopen(path, "r");
    size_t n;
    while (f && (n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, stdout);
    if (f)
        fclose(f);
}

/* The counts are of records on disk: a case whose record was lost to a full disk is not "ok". */
static void print_summary(const sl_run_ctx *c)
{
    printf("speedlab: %d cases", c->done);
    if (c->cfg->rounds > 1) /* a record per case and round: report pools them */
        printf(" (%d rounds)", c->cfg->rounds);
    printf(": %d ok, %d failed, %d unavailable, %d skipped", c->n_ok, c->n_failed, c->n_unavailable,
           c->n_skipped);
    if (c->write_errors)
        printf("; %d records NOT written (see the errors above), %d on disk", c->write_errors,
               c->done - c->write_errors);
    printf("; results in %s\n", c->dir);
}

int sl_run_main(int argc, char **argv, const sl_study *const *studies, int n_studies)
{
    sl_run_cfg cfg;
    int rc = sl_parse_run(argc, argv, studies, n_studies, &cfg);
    if (rc != 0) {
        sl_run_cfg_free(&cfg);
        return rc == 1 ? SL_EXIT_OK : rc;
    }
    sl_run_ctx c = {.cfg = &cfg, .fd = -1, .tty = isatty(STDERR_FILENO)};
    c.opts = (sl_opts){.seed = cfg.seed, .threads = cfg.threads, .quick = cfg.quick,
                       .data_dir = cfg.data_dir, .n_params = cfg.n_params,
                       .param_names = cfg.param_names, .param_values = cfg.param_values};
    prof_init(NULL);
    if (cfg.counters && prof_set_counters(cfg.counters) < 0) {
        fprintf(stderr, "speedlab: --counters '%.60s%s': %s; expected comma-separated PAPI event names "
                "or the groups cache, branch, ipc\n", cfg.counters, strlen(cfg.counters) > 60 ? "..." : "",
                prof_counters_error());
        prof_shutdown();
        sl_run_cfg_free(&cfg);
        return SL_EXIT_USAGE;
    }
    if (cfg.trace && !trace_path_usable(cfg.trace)) {
        prof_shutdown();
        sl_run_cfg_free(&cfg);
        return SL_EXIT_USAGE;
    }
    sl_planner planner;
    char why[1024];
    if (sl_planner_open(&planner, cfg.wisdom, cfg.no_tune, why, sizeof why) != 0) {
        fprintf(stderr, "speedlab: %s\n", why); /* before the run directory: nothing made, nothing lost */
        prof_shutdown();
        sl_run_cfg_free(&cfg);
        return SL_EXIT_USAGE;
    }
    planner.threads = cfg.threads;
    c.planner = &planner;
    if (sl_planner_stale(&planner, why, sizeof why))
        fprintf(stderr, "speedlab: %s\n", why);
    rc = SL_EXIT_FAILED;
    if (open_run(&c) == 0) {
        sl_interrupt_install();
        c.env = sl_env_capture(cfg.threads);
        json_object_set_new(c.env, "planner", sl_planner_env(&planner));
        sl_quiet_check(c.env, cfg.threads, stderr);
        c.t0_ns = prof_now_ns();
        c.n_cases = count_cases(&c);
        if (cfg.trace) {
            char name[sizeof c.id + 16];
            snprintf(name, sizeof name, "speedlab run %s", c.id);
            prof_trace_start(cfg.trace);
            prof_trace_set_process_name(name);
        }
        printf("speedlab: run %s: %d cases -> %s/results.jsonl\n", c.id, c.n_cases, c.dir);
        fflush(stdout);
        if (!cfg.calibrate || sl_write_calibration(c.fd, c.id, c.env, cfg.threads) == 0) {
            run_all(&c);
            if (c.tty)
                fprintf(stderr, "\r\033[K");
            print_summary(&c);
            if (cfg.timerstats) {
                fflush(c.timerstats);
                print_timerstats(&c);
            }
            rc = c.n_failed || c.write_errors ? SL_EXIT_FAILED : SL_EXIT_OK;
        }
    }
    if (!close_run(&c) && rc == SL_EXIT_OK)
        rc = SL_EXIT_FAILED; /* the records are whole; the trace asked for is not */
    sl_planner_close(&planner);
    sl_run_cfg_free(&cfg);
    return rc;
}
