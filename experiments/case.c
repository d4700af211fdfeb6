/*
 * case.c: one case (study, variant, size) from prepare to its record: the check, warm-up, the timed
 * repetitions as profiler regions, statistics, rates, counters and the profile.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <speedlab/prof.h>

#include "case.h"
#include "counters.h"
#include "external.h"
#include "gpu.h"
#include "interrupt.h"
#include "params.h"
#include "record.h"
#include "stats.h"
#include "validate.h"

/* Repetitions stop here even when --min-time is not yet met (a kernel of a few ns). */
#define SL_MAX_REPS 1000000

/* The effective repetition plan of a case (docs/speedlab.md, "Repetitions"). */
void sl_case_plan(const sl_run_cfg *cfg, const sl_study *s, int *reps, int *warmup, double *min_time)
{
    int kernel = s->kind == SL_KERNEL;
    int def = s->default_reps > 0 ? s->default_reps : (kernel ? 5 : 1);
    if (cfg->quick)
        def = def < 2 ? def : 2;
    *reps = cfg->reps > 0 ? cfg->reps : def;
    *warmup = cfg->warmup >= 0 ? cfg->warmup : (kernel ? 1 : 0);
    *min_time = cfg->min_time >= 0 ? cfg->min_time : (kernel && !cfg->quick ? 0.2 : 0.0);
}

/* Region names must outlive every prof_begin until prof_shutdown: keep them all. */
static const char *keep_name(sl_run_ctx *c, const char *fmt_name, long size)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s=%ld", fmt_name ? fmt_name : "size", size);
    for (int i = 0; i < c->n_names; i++)
        if (strcmp(c->names[i], buf) == 0)
            return c->names[i];
    char **grown = realloc(c->names, (size_t)(c->n_names + 1) * sizeof *grown);
    if (!grown)
        return "size";
    c->names = grown;
    c->names[c->n_names] = strdup(buf);
    return c->names[c->n_names] ? c->names[c->n_names++] : "size";
}

/* Whether --param name=... was given. */
static int given(const sl_opts *o, const char *name)
{
    for (int i = 0; i < o->n_params; i++)
        if (strcmp(o->param_names[i], name) == 0)
            return 1;
    return 0;
}

json_t *sl_seed_json(uint64_t seed)
{
    /* jansson's integers are int64: a seed from 2^63 up would come out negative, so those seeds are
     * written as their exact decimal text (docs/results-schema.md, "seed") */
    if (seed <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)seed);
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, seed);
    return json_string(text);
}

json_t *sl_case_base(const sl_run_ctx *c, const sl_study *s, int v, long size)
{
    const sl_variant *var = &s->variants[v];
    int reps, warmup;
    double min_time;
    sl_case_plan(c->cfg, s, &reps, &warmup, &min_time);
    json_t *rec = sl_record_header("case", c->id, c->env);
    json_object_set_new(rec, "study", json_string(s->name));
    json_object_set_new(rec, "variant", json_string(var->name));
    json_object_set_new(rec, "traits", sl_traits_json(var->traits)); /* reports read these, not the name */
    if (var->builds_on) /* the report compares the two: an optimisation slower than its base is flagged */
        json_object_set_new(rec, "builds_on", json_string(var->builds_on));
    const char *copies = s->copies ? s->copies(var) : NULL; /* a GPU row's timed copies: like with like */
    if (copies)
        json_object_set_new(rec, "copies", json_string(copies));
    json_object_set_new(rec, "size", json_integer(size));
    json_object_set_new(rec, "size_name", json_string(s->size_name ? s->size_name : "size"));
    json_object_set_new(rec, "status", json_string("ok"));
    if (s->baseline)
        json_object_set_new(rec, "baseline", json_string(s->baseline));
    json_object_set_new(rec, "reduced", json_false());
    json_object_set_new(rec, "extrapolated", json_false());
    json_t *params = json_object();
    for (int i = 0; i < s->n_params; i++) { /* the parsed value that ran, not the text given */
        char text[128];
        sl_param_canonical(&c->opts, s, &s->params[i], text, sizeof text);
        if (s->size_name && strcmp(s->params[i].name, s->size_name) == 0 && !given(&c->opts, s->size_name))
            snprintf(text, sizeof text, "%ld", size); /* galaxy's max_iter: the size ran, not the default */
        json_object_set_new(params, s->params[i].name, json_string(text));
    }
    json_object_set_new(rec, "params", params);
    json_object_set_new(rec, "seed", sl_seed_json(c->cfg->seed));
    json_object_set_new(rec, "threads", json_integer(sl_variant_threads(var, c->cfg->threads)));
    json_object_set_new(rec, "warmup", json_integer(warmup));
    if (c->cfg->rounds > 1) { /* reports pool a run's rounds of a case (reports/pool.c) */
        json_object_set_new(rec, "round", json_integer(c->round));
        json_object_set_new(rec, "rounds", json_integer(c->cfg->rounds));
    }
    json_object_set_new(rec, "reps", json_integer(0));
    json_t *work = json_object();
    if (s->flops)
        json_object_set_new(work, "flops", sl_json_num(s->flops(size, &c->opts)));
    if (s->bytes)
        json_object_set_new(work, "bytes", sl_json_num(s->bytes(size, &c->opts)));
    json_object_set_new(rec, "work", work);
    return rec;
}

/* Writes a finished case: the record line, its TimerStats table, a one-line summary on stdout. The
 * run's counts of ok, failed, unavailable and skipped cases count records on disk only: a case whose
 * record could not be written (a full disk) is counted in write_errors instead. */
int sl_emit_case(sl_run_ctx *c, json_t *rec, const char *summary)
{
    sl_error err = {{0}};
    int rc = sl_record_append(c->fd, rec, &err);
    const char *status = json_string_value(json_object_get(rec, "status"));
    if (rc != 0) {
        fprintf(stderr, "speedlab: %s/results.jsonl: %s\n", c->dir, err.msg);
        c->write_errors++;
    } else if (!status || strcmp(status, "ok") != 0) {
        int *n = !status || !strcmp(status, "failed") ? &c->n_failed
                 : !strcmp(status, "unavailable")     ? &c->n_unavailable
                                                      : &c->n_skipped;
        (*n)++;
    } else {
        c->n_ok++;
    }
    if (c->tty)
        fprintf(stderr, "\r\033[K");
    if (c->cfg->rounds > 1)
        printf("%s  [round %d of %d]\n", summary, c->round, c->cfg->rounds);
    else
        printf("%s\n", summary);
    fflush(stdout);
    c->done++;
    return rc;
}

static void fail(json_t *rec, const char *fmt, const char *what)
{
    char buf[SL_ERRLEN + 128];
    snprintf(buf, sizeof buf, fmt, what && *what ? what : "(no message)");
    json_object_set_new(rec, "status", json_string("failed"));
    json_object_set_new(rec, "error", json_string(buf));
}

/* The study's per-repetition reset (study.h's before_rep), outside any timing. 0, or -1 (record failed). */
static int before_rep(const sl_study *s, void *state, int v, json_t *rec, const char *when)
{
    sl_error err = {{0}};
    if (!s->before_rep || s->before_rep(state, v, &err) == 0)
        return 0;
    char what[SL_ERRLEN + 64];
    snprintf(what, sizeof what, "%s: %s", when, err.msg);
    fail(rec, "before_rep (%s)", what);
    return -1;
}

int sl_case_check_variant(const sl_study *s, void *state, int v, sl_record *r, json_t *rec)
{
    sl_error err = {{0}};
    if (s->kind == SL_KERNEL && before_rep(s, state, v, rec, "before the check") != 0)
        return -1;
    if (s->kind == SL_KERNEL && s->run(state, v, r, &err) != 0) {
        fail(rec, "run (untimed, before the check): %s", err.msg);
        return -1;
    }
    return sl_case_check(s, state, v, rec);
}

int sl_case_check(const sl_study *s, void *state, int v, json_t *rec)
{
    sl_error err = {{0}};
    double rel = NAN;
    if (!s->check) {
        fail(rec, "%s", "the study has no check callback; a variant that is not checked has no time");
        return -1;
    }
    if (s->check(state, v, &rel, &err) != 0) {
        fail(rec, "check: %s", err.msg);
        return -1;
    }
    int passed = isfinite(rel) && rel <= s->tolerance;
    json_t *chk = json_object();
    json_object_set_new(chk, "rel_err", sl_json_num(rel));
    json_object_set_new(chk, "tolerance", json_real(s->tolerance));
    json_object_set_new(chk, "passed", json_boolean(passed));
    json_object_set_new(rec, "check", chk);
    if (!passed) {
        char msg[128];
        snprintf(msg, sizeof msg, "relative error %.3g exceeds the tolerance %.3g", rel, s->tolerance);
        fail(rec, "check failed: %s", msg);
        return -1;
    }
    return 0;
}

/* Timed repetitions until both reps and min_time are met. Returns the count, or -1 (record failed). */
static int timed_reps(sl_run_ctx *c, const sl_study *s, void *state, int v, long size, sl_record *r,
                      json_t *rec, double **times)
{
    int reps, warmup;
    double min_time;
    sl_case_plan(c->cfg, s, &reps, &warmup, &min_time);
    const char *vname = s->variants[v].name;
    const char *sname = keep_name(c, s->size_name, size);
    sl_error err = {{0}};
    for (int w = 0; w < warmup; w++) {
        if (c->tty) /* the status line's "warm-up w/W": reps timed ones come after */
            sl_progress_rep(&c->progress, "warm-up", w + 1, warmup, warmup - w - 1 + reps, prof_now_ns());
        if (before_rep(s, state, v, rec, "warm-up") != 0)
            return -1;
        if (s->run(state, v, r, &err) != 0) {
            fail(rec, "run (warm-up): %s", err.msg);
            return -1;
        }
    }
    prof_reset(); /* the profile holds the timed repetitions only */
    int cap = reps > 16 ? reps : 16, n = 0;
    double total = 0;
    *times = malloc((size_t)cap * sizeof **times);
    sl_record_timing(r, 1);
    while ((n < reps || total < min_time) && n < SL_MAX_REPS && *times) {
        if (n == cap) {
            double *g = realloc(*times, (size_t)(cap *= 2) * sizeof **times);
            if (!g)
                break;
            *times = g;
        }
        if (c->tty) /* before the clock starts: not part of the repetition's time */
            sl_progress_rep(&c->progress, "rep", n + 1, n < reps ? reps : n + 1, n < reps ? reps - n - 1 : 0,
                            prof_now_ns());
        if (before_rep(s, state, v, rec, "timed repetition") != 0) {
            sl_record_timing(r, 0);
            return -1;
        }
        prof_begin(s->name);
        prof_begin(vname);
        prof_begin(sname);
        uint64_t t0 = prof_now_ns();
        int rc = s->run(state, v, r, &err);
        uint64_t t1 = prof_now_ns();
        prof_end(sname);
        prof_end(vname);
        prof_end(s->name);
        if (rc != 0) {
            sl_record_timing(r, 0);
            char what[SL_ERRLEN + 64];
            snprintf(what, sizeof what, "repetition %d: %s", n + 1, err.msg);
            fail(rec, "run (%s)", what);
            return -1;
        }
        (*times)[n++] = (double)(t1 - t0) * 1e-9;
        total += (*times)[n - 1];
    }
    sl_record_timing(r, 0);
    return n;
}

/* times_s and stats of an ok case (rates: add_rates, after finish). */
static void add_times(json_t *rec, const double *t, int n)
{
    sl_stats st;
    sl_stats_compute(t, n, &st);
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_real(t[i]));
    json_object_set_new(rec, "reps", json_integer(n));
    json_object_set_new(rec, "times_s", a);
    json_t *s = json_object();
    json_object_set_new(s, "median_s", json_real(st.median));
    json_object_set_new(s, "mean_s", json_real(st.mean));
    json_object_set_new(s, "std_s", json_real(st.std));
    json_object_set_new(s, "min_s", json_real(st.min));
    json_object_set_new(s, "max_s", json_real(st.max));
    json_object_set_new(s, "cv", json_real(st.cv));
    json_object_set_new(rec, "stats", s);
}

/* rates of an ok case, from its work and median time. Called after sl_record_merge, which puts the work
 * the variant actually did (sl_record_work) in place of the declared one. */
static void add_rates(json_t *rec)
{
    json_t *work = json_object_get(rec, "work");
    double median = json_number_value(json_object_get(json_object_get(rec, "stats"), "median_s"));
    double flops = json_number_value(json_object_get(work, "flops"));
    double bytes = json_number_value(json_object_get(work, "bytes"));
    json_t *rates = json_object();
    if (flops > 0 && median > 0)
        json_object_set_new(rates, "gflops", json_real(flops / median / 1e9));
    if (bytes > 0 && median > 0)
        json_object_set_new(rates, "gbs", json_real(bytes / median / 1e9));
    if (flops > 0 && bytes > 0)
        json_object_set_new(rates, "ai", json_real(flops / bytes));
    json_object_set_new(rec, "rates", rates);
}

/* peak_rss_bytes: VmHWM once the case is done (before release). The peak was reset as the case began,
 * so it covers prepare, the check, warm-up, the timed repetitions and finish, on top of the study's
 * set-up data still resident; where that reset failed it is the process's peak so far, which
 * peak_rss_scope says (docs/results-schema.md). */
static void add_peak_rss(json_t *rec, int reset)
{
    size_t peak = prof_peak_rss_bytes();
    if (peak == 0)
        return; /* no /proc/self/status: unknown, not 0 */
    json_object_set_new(rec, "peak_rss_bytes", json_integer((json_int_t)peak));
    json_object_set_new(rec, "peak_rss_scope", json_string(reset ? "case" : "process"));
}

/* Device memory of a GPU case (cudaMemGetInfo), at its end before release, next to the study's own
 * allocator figure (peak_gpu_bytes): gpu_mem_used_bytes is the whole device's use then (the CUDA context
 * and the variant's buffers, other processes too), gpu_mem_case_bytes what the case added since before
 * prepare, gpu_mem_total_bytes the device's size. Nothing without a device. */
static void add_gpu_memory(sl_record *r, double before)
{
    double used, total;
    if (sl_gpu_mem_used(&used, &total) != 0)
        return;
    sl_record_metric(r, "gpu_mem_used_bytes", used);
    sl_record_metric(r, "gpu_mem_total_bytes", total);
    if (before >= 0)
        sl_record_metric(r, "gpu_mem_case_bytes", used - before);
}

/* The TimerStats table of the case, under a heading, into timerstats.txt. */
static void append_timerstats(sl_run_ctx *c, const sl_study *s, const char *variant, long size)
{
    fprintf(c->timerstats, "== %s %s %s=%ld ==\n", s->name, variant, s->size_name ? s->size_name : "size",
            size);
    prof_report(c->timerstats);
    fprintf(c->timerstats, "\n");
    fflush(c->timerstats);
}

static void summary_line(char *buf, size_t n, const sl_study *s, const char *variant, long size,
                         json_t *rec)
{
    const char *status = json_string_value(json_object_get(rec, "status"));
    int len = snprintf(buf, n, "%-12s %-12s %s=%-8ld ", s->name, variant,
                       s->size_name ? s->size_name : "size", size);
    if (len < 0 || (size_t)len >= n)
        return;
    if (strcmp(status, "ok") == 0) {
        json_t *st = json_object_get(rec, "stats");
        snprintf(buf + len, n - (size_t)len, "ok  median %.6g s  cv %.3f  (%d reps)",
                 json_number_value(json_object_get(st, "median_s")),
                 json_number_value(json_object_get(st, "cv")),
                 (int)json_integer_value(json_object_get(rec, "reps")));
    } else {
        snprintf(buf + len, n - (size_t)len, "%s: %s", status,
                 json_string_value(json_object_get(rec, "error")));
    }
}

void sl_run_case(sl_run_ctx *c, const sl_study *s, void *state, int v, long size)
{
    const sl_variant *var = &s->variants[v];
    json_t *rec = sl_case_base(c, s, v, size);
    sl_record *r = sl_record_new();
    if (c->tty && r) { /* the status line: on a terminal only, so that a pipe gets nothing extra */
        c->progress.out = stderr;
        sl_progress_case(&c->progress, c->done + 1, c->n_cases, s->name, var->name, s->size_name, size,
                         prof_now_ns());
        r->progress = &c->progress;
    }
    sl_error err = {{0}};
    double *times = NULL;
    int n = -1, prepared = 0;
    prof_reset();
    /* peak memory per case: what the study's setup holds plus what this variant adds */
    static int warned;
    int rss_reset = prof_peak_rss_reset() == 0;
    if (!rss_reset && !warned++)
        fprintf(stderr, "speedlab: cannot reset the peak RSS (/proc/self/clear_refs): peak memory "
                "figures are the process's since it started\n");
    double gpu_before = -1, gpu_total;
    int device = (var->traits & SL_DEVICE) != 0;
    if (device && sl_gpu_mem_used(&gpu_before, &gpu_total) != 0)
        gpu_before = -1;
    sl_impl impl = {0}; /* the level this case runs at (the planner's choice) and why, in the record */
    if (c->planner) {
        sl_planner_choose(c->planner, s, v, &impl);
        sl_planner_enter(&impl);
        json_t *what = sl_impl_json(&impl);
        if (what)
            json_object_set_new(rec, "impl", what);
    }
    if (var->traits & SL_EXTERNAL) { /* the program times itself: external.c */
        n = sl_external_case(c, s, state, v, size, rec, &times);
    } else if (s->prepare && s->prepare(state, v, &err) != 0)
        fail(rec, "prepare: %s", err.msg);
    else {
        prepared = 1;
        /* the omp kernels' "omp thread N" regions (KERN_SHARE), warm-up included so that each thread's
         * profile tree is made before the timed repetitions; a branch on a flag in every other case */
        int shares = (var->traits & SL_THREADED) != 0;
        if (sl_case_check_variant(s, state, v, r, rec) == 0) {
            if (shares)
                prof_thread_regions(1);
            n = timed_reps(c, s, state, v, size, r, rec, &times);
            if (shares)
                prof_thread_regions(0);
        }
    }
    if (n > 0) {
        add_times(rec, times, n);
        const char *path[3] = {s->name, var->name, keep_name(c, s->size_name, size)};
        char *text = prof_json();
        json_t *profile = text ? json_loads(text, 0, NULL) : NULL;
        free(text);
        sl_add_counters(rec, profile, path, n);
        sl_add_thread_busy(rec, profile, path, n);
        if (profile)
            json_object_set_new(rec, "profile", profile);
        if (s->finish)
            s->finish(state, v, r);
        if (device)
            add_gpu_memory(r, gpu_before);
    } else if (n == 0) {
        fail(rec, "%s", "no repetition was timed (out of memory?)");
    }
    sl_record_merge(r, rec);
    if (n > 0)
        add_rates(rec);
    else
        json_object_del(rec, "phases"); /* a failed variant has no times of any kind */
    if (prepared)
        add_peak_rss(rec, rss_reset);
    if (prepared && s->release)
        s->release(state, v);
    sl_planner_restore();
    /* The table and the record go out together: an interrupt waits until both are written. */
    sigset_t old;
    sl_interrupt_hold(&old);
    append_timerstats(c, s, var->name, size);
    char line[1024];
    summary_line(line, sizeof line, s, var->name, size, rec);
    sl_emit_case(c, rec, line);
    sl_interrupt_release(&old);
    json_decref(rec);
    sl_record_free(r);
    free(times);
}
