/* reports/roofline.c: the roofline table (every variant at every size against the calibrated
 * ceilings of the same machine), the per-call roofline of the profiled regions a study declares work
 * for, and the training table (seed 001's Table 1, seed 004's Table I). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64
#define MAXM 32

static const char *size_name_of(const rep_set *s, int env, const char *study)
{
    for (int i = 0; i < s->ncases; i++)
        if (s->cases[i].env == env && !strcmp(s->cases[i].study, study))
            return s->cases[i].size_name;
    return "size";
}

/* The precision of a whole case's work: work.precision when the record gives one, else the variant's
 * name (cuda-fp16, cuda-bf16); NULL for fp32, which is what a study means when it says nothing. */
static const char *case_precision(const rep_case *c)
{
    const char *p = json_string_value(json_object_get(json_object_get(c->rec, "work"), "precision"));
    if (p)
        return strcmp(p, "fp32") ? p : NULL;
    return strstr(c->variant, "fp16") ? "fp16" : strstr(c->variant, "bf16") ? "bf16" : NULL;
}

/* A GPU ceiling's value, or NAN with *why: its reason in gpu.missing, the calibration's gpu_missing
 * (no device), or NULL (an older record that lacks the field). */
static double gpu_ceiling(const json_t *ceil, const char *key, const char **why)
{
    json_t *g = json_object_get(ceil, "gpu");
    double v = rep_jnum(g, key);
    if (!isfinite(v) && !*why)
        *why = json_string_value(g ? json_object_get(json_object_get(g, "missing"), key)
                                   : json_object_get(ceil, "gpu_missing"));
    return v;
}

/* Ceilings for a case, named in which (n bytes); 0 when one is missing, with *why when the record says
 * why. GPU variants use the GPU's: the device triad (or, in records before it, the device copy) and the
 * peak of their precision: FP32 FMA (or cuBLAS sgemm before it), the tensor-core GEMM for fp16 and bf16,
 * none for fp64. Single-thread CPU variants use the _1t pair; fp64 work on the CPU: half the FP32 FMA
 * peak (FP64 vectors hold half as many lanes). */
static int ceilings_for(const json_t *ceil, const rep_case *c, const char *prec, double *peak, double *bw,
                        char *which, size_t n, const char **why)
{
    int fp64 = prec && !strcmp(prec, "fp64");
    *why = NULL;
    if (c->gpu) {
        const char *pk = "FP32 FMA", *bk = "triad";
        *bw = gpu_ceiling(ceil, "triad_gbs", why);
        if (!isfinite(*bw) && json_object_get(json_object_get(ceil, "gpu"), "d2d_gbs"))
            *bw = gpu_ceiling(ceil, "d2d_gbs", why), bk = "device copy";
        if (fp64)
            *peak = NAN, pk = "no FP64 peak";
        else if (prec && !strcmp(prec, "fp16"))
            *peak = gpu_ceiling(ceil, "tc_fp16_gflops", why), pk = "FP16 tensor cores";
        else if (prec && !strcmp(prec, "bf16"))
            *peak = gpu_ceiling(ceil, "tc_bf16_gflops", why), pk = "BF16 tensor cores";
        else if (json_object_get(json_object_get(ceil, "gpu"), "fma_gflops"))
            *peak = gpu_ceiling(ceil, "fma_gflops", why);
        else
            *peak = gpu_ceiling(ceil, "cublas_sgemm_gflops", why), pk = "cuBLAS sgemm";
        snprintf(which, n, "GPU (%s, %s)", pk, bk);
    } else if (c->threads <= 1) {
        *peak = rep_jnum(ceil, "fma_gflops_1t") / (fp64 ? 2 : 1);
        *bw = rep_jnum(ceil, "triad_gbs_1t");
        snprintf(which, n, "1 thread");
    } else {
        *peak = rep_jnum(ceil, "fma_gflops") / (fp64 ? 2 : 1);
        *bw = rep_jnum(ceil, "triad_gbs");
        snprintf(which, n, "all threads");
    }
    return isfinite(*peak) && isfinite(*bw);
}

double rep_fraction_of_bound(const rep_set *s, const rep_case *c)
{
    const json_t *ceil = rep_is_ok(c) ? s->envs[c->env].ceilings : NULL;
    double peak, bw;
    char which[96];
    const char *why;
    if (!ceil || !isfinite(c->gflops) ||
        !ceilings_for(ceil, c, c->gpu ? case_precision(c) : NULL, &peak, &bw, which, sizeof which, &why))
        return NAN;
    return c->gflops / (isfinite(c->ai) ? fmin(peak, c->ai * bw) : peak);
}

int rep_fraction_cell(rep_table *t, int r, int col, double num, double den)
{
    double frac = num / den;
    if (!(frac > 1.0)) {
        rep_cell_num(t, r, col, frac, "%.1f %%", 100 * num / den);
        return 0;
    }
    rep_cell_text(t, r, col, "error: %.*f %% > 100 %%", frac < 1.01 ? 2 : 0, 100 * num / den);
    rep_table_note_once(t, "error: a case faster than its roofline bound is not a measurement: the work it "
                           "is charged (the record's work: flops, bytes) is more than it did (a variant or "
                           "framework form that computes the result another way declares its own), or a "
                           "ceiling of the calibration is too low (calibrate again on a quiet machine).");
    return 1;
}

/* The roofline bound (GFLOP/s) of case c's work at intensity ai, or NAN; cell (r, col) says which
 * ceilings and which roof, or why there is no bound. prec ("fp32", "fp64", "fp16", "bf16") is named in
 * the cell when given; NULL: fp32, unnamed. */
static double bound_cell(rep_table *t, int r, int col, const json_t *ceil, const rep_case *c, double ai,
                         const char *prec)
{
    int fp64 = prec && !strcmp(prec, "fp64");
    double peak, bw;
    char which[96];
    const char *why;
    if (!ceil) {
        rep_cell_text(t, r, col, "no calibration");
        return NAN;
    }
    if (!ceilings_for(ceil, c, prec, &peak, &bw, which, sizeof which, &why)) {
        rep_cell_text(t, r, col, "%s: not calibrated%s%s%s%s", c->gpu ? "GPU" : which, fp64 ? " for fp64" : "",
                      why ? " (" : "", why ? why : "", why ? ")" : "");
        return NAN;
    }
    if (c->gpu)
        rep_table_note_once(t, "GPU rows are bound by the GPU's ceilings from the same calibration: the device "
                               "triad's bandwidth (the device copy's in older records) and the peak of the row's "
                               "precision: FP32 FMA (cuBLAS sgemm in older records), the tensor-core GEMM for "
                               "fp16 and bf16 rows.");
    if (!isfinite(ai)) { /* flops without bytes: no intensity, so the peak alone is the bound */
        rep_cell_text(t, r, col, "%s, peak (no bytes recorded)", which);
        rep_table_note_once(t, "A case whose work has flops but no bytes has no arithmetic intensity: its "
                               "bound is the peak alone, and of bound its fraction of the calibrated peak.");
        return peak;
    }
    const char *roof = ai * bw < peak ? "memory" : "compute";
    if (prec)
        rep_cell_text(t, r, col, "%s, %s, %s-bound", which, prec, roof);
    else
        rep_cell_text(t, r, col, "%s, %s-bound", which, roof);
    return fmin(peak, ai * bw);
}

rep_table *rep_tab_roofline(const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    const json_t *ceil = s->envs[env].ceilings;
    int rated = 0;
    for (int i = 0; i < s->ncases; i++)
        rated |= s->cases[i].env == env && !strcmp(s->cases[i].study, study) && isfinite(s->cases[i].gflops);
    if (!rated)
        return NULL; /* the study records no work (FLOP, bytes): a training run, say */
    char title[256];
    snprintf(title, sizeof title, "%s: roofline, achieved GFLOP/s against the calibrated bound", study);
    const char *cols[] = {"variant", size_name_of(s, env, study), "threads", "GFLOP/s", "GB/s", "AI (flop/byte)", "ceilings",
                          "bound GFLOP/s", "of bound"};
    const char *csv[] = {"variant", "size", "threads", "gflops", "gbs", "ai", "ceilings", "bound_gflops",
                         "fraction_of_bound"};
    rep_table *t = rep_table_new("", title, 9, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-roofline", study);
    for (int vi = 0; vi < nv; vi++) {
        int first = 1;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (!c || (!rep_is_ok(c) && strcmp(c->status, "failed")))
                continue;
            int r = rep_table_row(t, first);
            first = 0;
            rep_row_status(t, r, c->status);
            rep_cell_text(t, r, 0, "%s", c->variant);
            rep_cell_num(t, r, 1, (double)c->size, "%ld", c->size);
            rep_cell_num(t, r, 2, c->threads, "%d", c->threads);
            if (!rep_is_ok(c)) {
                rep_cell_text(t, r, 3, "failed");
                continue;
            }
            const char *mark = rep_case_mark(t, c);
            if (!isfinite(c->gflops)) {
                rep_cell_text(t, r, 3, "not recorded%s", mark);
                continue;
            }
            rep_cell_num(t, r, 3, c->gflops, "%.3g%s", c->gflops, mark);
            if (isfinite(c->gbs))
                rep_cell_num(t, r, 4, c->gbs, "%.3g", c->gbs);
            if (isfinite(c->ai)) /* a study may count flops only (no bytes): bound_cell says so */
                rep_cell_num(t, r, 5, c->ai, "%.3g", c->ai);
            double bound = bound_cell(t, r, 6, ceil, c, c->ai, c->gpu ? case_precision(c) : NULL);
            if (!isfinite(bound))
                continue;
            rep_cell_num(t, r, 7, bound, "%.3g", bound);
            rep_fraction_cell(t, r, 8, c->gflops, bound);
        }
    }
    if (!ceil)
        rep_table_note(t, "No calibration record in these results for this machine: no bound. "
                          "Run `speedlab calibrate` and report its run directory with these results.");
    else
        rep_table_note(t, "bound = min(peak FLOP/s, AI × bandwidth) from the calibration record of %s "
                          "(FMA peak and STREAM-style triad; single-thread variants against the 1-thread "
                          "ceilings).", s->envs[env].calib_time ? s->envs[env].calib_time : "this machine");
    return t;
}

/* ---- regions ------------------------------------------------------------------------------- */

/* The profile's instance of region `name` with the most calls (the profile holds only the timed
 * repetitions; a region called from two places, as galaxy's gradient inside and before the line search,
 * has one instance per place): its mean time per call in seconds and its call count; NAN when none. */
static double region_mean_s(const json_t *rec, const char *name, double *calls)
{
    json_t *regs = json_object_get(json_object_get(rec, "profile"), "regions"), *g;
    size_t i;
    double best = NAN;
    *calls = 0;
    json_array_foreach(regs, i, g) {
        const char *gn = json_string_value(json_object_get(g, "name"));
        double n = rep_jnum(g, "calls"), mean = rep_jnum(g, "mean_ns");
        if (!gn || strcmp(gn, name) || !(n > *calls) || !isfinite(mean))
            continue;
        *calls = n;
        best = mean * 1e-9;
    }
    return best;
}

/* One row: a region's achieved rate per call against the bound of the case's ceilings. */
static void region_row(rep_table *t, const json_t *ceil, const rep_case *c, const char *region, const json_t *w,
                       int first)
{
    int r = rep_table_row(t, first);
    rep_cell_text(t, r, 0, "%s", c->variant);
    rep_cell_num(t, r, 1, (double)c->size, "%ld", c->size);
    rep_cell_num(t, r, 2, c->threads, "%d", c->threads);
    rep_cell_text(t, r, 3, "%s", region);
    double calls, sec = region_mean_s(c->rec, region, &calls);
    if (!isfinite(sec) || !(sec > 0)) {
        rep_cell_text(t, r, 4, "no profile of %s", region);
        return;
    }
    double flops = rep_jnum(w, "flops"), bytes = rep_jnum(w, "bytes"), ai = flops / bytes;
    const char *prec = json_string_value(json_object_get(w, "precision"));
    char m[64];
    rep_fmt_time(m, sizeof m, sec);
    rep_cell_num(t, r, 4, calls, "%.0f", calls);
    rep_cell_num(t, r, 5, sec, "%s%s", m, rep_case_mark(t, c));
    rep_cell_num(t, r, 6, flops / sec * 1e-9, "%.3g", flops / sec * 1e-9);
    rep_cell_num(t, r, 7, ai, "%.3g", ai);
    double bound = bound_cell(t, r, 8, ceil, c, ai, prec ? prec : "fp32");
    if (!isfinite(bound))
        return;
    double bound_s = flops / (bound * 1e9);
    rep_fmt_time(m, sizeof m, bound_s);
    rep_cell_num(t, r, 9, bound_s, "%s", m);
    rep_fraction_cell(t, r, 10, bound_s, sec);
}

rep_table *rep_tab_region_roofline(const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    const char *cols[] = {"variant", size_name_of(s, env, study), "threads", "region", "calls",
                          "time per call (mean)", "GFLOP/s", "AI (flop/byte)", "ceilings",
                          "bound per call", "of bound"};
    const char *csv[] = {"variant", "size", "threads", "region", "calls", "mean_s", "gflops", "ai",
                         "ceilings", "bound_s", "fraction_of_bound"};
    rep_table *t = NULL;
    for (int vi = 0; vi < nv; vi++)
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            json_t *rw = c ? json_object_get(c->rec, "region_work") : NULL;
            if (!c || !rep_is_ok(c) || !json_object_size(rw))
                continue;
            if (!t) {
                char title[256];
                snprintf(title, sizeof title, "%s: roofline of the profiled regions, per call", study);
                t = rep_table_new("", title, 11, cols, csv);
                free(t->id);
                t->id = rep_printf("%s-region-roofline", study);
            }
            const char *name;
            json_t *w;
            int first = 1;
            json_object_foreach(rw, name, w) {
                region_row(t, s->envs[env].ceilings, c, name, w, first);
                first = 0;
            }
        }
    if (t)
        rep_table_note(t, "A region's work per call (flops; bytes it must move from memory at least; "
                          "precision) is the study's (record field region_work); its time per call is the "
                          "mean of the profile's instance with the most calls (the timed runs). bound = "
                          "the time the work takes at min(peak, AI × bandwidth) from the calibration record "
                          "of %s; fp64 against half the FP32 FMA peak; single-thread variants against the "
                          "1-thread ceilings. of bound = bound / time.",
                       s->envs[env].calib_time ? s->envs[env].calib_time : "this machine");
    return t;
}

/* ---- training ------------------------------------------------------------------------------- */

/* The runner's record field (docs/results-schema.md); older mlp and galaxy records have it as a metric. */
#define PEAK "peak_rss_bytes"

static int add_name(const char **names, int n, int max, const char *k)
{
    int j = 0;
    while (j < n && strcmp(names[j], k))
        j++;
    if (j == n && n < max)
        names[n++] = k;
    return n;
}

static int metric_names(const rep_set *s, int env, const char *study, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        json_t *m = json_object_get(c->rec, "metrics");
        if (c->env != env || c->replaced || strcmp(c->study, study) || !json_is_object(m))
            continue;
        const char *k;
        json_t *v;
        json_object_foreach(m, k, v)
            n = add_name(names, n, max, k);
    }
    for (int i = 0; i < s->ncases; i++) { /* the runner's peak memory, after the study's metrics */
        const rep_case *c = &s->cases[i];
        if (c->env == env && !c->replaced && !strcmp(c->study, study) &&
            json_is_number(json_object_get(c->rec, PEAK)))
            n = add_name(names, n, max, PEAK);
    }
    return n;
}

/* A metric of the case: from its metrics, or the runner's peak_rss_bytes record field. */
static double case_metric(const rep_case *c, const char *name)
{
    double v = rep_jnum(json_object_get(c->rec, "metrics"), name);
    return !isfinite(v) && !strcmp(name, PEAK) ? rep_jnum(c->rec, PEAK) : v;
}

static void fmt_metric(rep_table *t, int r, int col, const char *name, double v)
{
    size_t n = strlen(name);
    if (n > 6 && strcmp(name + n - 6, "_bytes") == 0)
        rep_cell_num(t, r, col, v, "%.1f MiB", v / (1024.0 * 1024.0));
    else if (strstr(name, "acc") && v <= 1.0)
        rep_cell_num(t, r, col, v, "%.2f %%", 100 * v);
    else if (v == floor(v) && fabs(v) < 1e9) /* counts (epochs, rows) in full, not as 6e+04 */
        rep_cell_num(t, r, col, v, "%.0f", v);
    else
        rep_cell_num(t, r, col, v, "%.4g", v);
}

/* Per-epoch series summarised as seed 004's Table I does: mean epoch time and throughput, best accuracy. */
static const struct series_sum {
    const char *series, *col, *csv;
    int max; /* 1: the maximum, 0: the mean */
} sums[] = {
    {"epoch_s", "epoch time (mean)", "epoch_s_mean", 0},
    {"samples_per_s", "samples/s (mean)", "samples_per_s_mean", 0},
    {"test_acc", "best test_acc", "test_acc_best", 1},
};
#define NSUMS (int)(sizeof sums / sizeof *sums)

static double series_summary(const rep_case *c, const struct series_sum *ss)
{
    json_t *a = json_object_get(json_object_get(c->rec, "series"), ss->series);
    size_t n = json_array_size(a);
    if (!n)
        return NAN;
    double acc = ss->max ? -INFINITY : 0;
    for (size_t i = 0; i < n; i++) {
        double v = json_number_value(json_array_get(a, i));
        acc = ss->max ? fmax(acc, v) : acc + v;
    }
    return ss->max ? acc : acc / (double)n;
}

/* Which of the series summaries any case of the study has. */
static int series_present(const rep_set *s, int env, const char *study, int *which)
{
    int n = 0;
    for (int k = 0; k < NSUMS; k++)
        for (int i = 0; i < s->ncases; i++) {
            const rep_case *c = &s->cases[i];
            if (c->env == env && !c->replaced && !strcmp(c->study, study) && isfinite(series_summary(c, &sums[k]))) {
                which[n++] = k;
                break;
            }
        }
    return n;
}

/* Only studies that record series (per epoch or iteration) are training runs; kernel studies may
 * record metrics too (entropy_mi's H and MI). */
int rep_is_training(const rep_set *s, int env, const char *study)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !strcmp(c->study, study) && json_object_size(json_object_get(c->rec, "series")))
            return 1;
    }
    return 0;
}

rep_table *rep_tab_training(const rep_set *s, int env, const char *study)
{
    const char *ms[MAXM], *vs[MAXV];
    long sizes[MAXS];
    int nm = metric_names(s, env, study, ms, MAXM - 4);
    if (nm == 0)
        return NULL;
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    const char *cols[MAXM + 4 + NSUMS] = {"variant", size_name_of(s, env, study), "n", "run time mean ± std"};
    const char *csv[MAXM + 4 + NSUMS] = {"variant", "size", "reps", "time_mean_s"};
    for (int i = 0; i < nm; i++)
        cols[4 + i] = csv[4 + i] = ms[i];
    int which[NSUMS], nsum = series_present(s, env, study, which);
    for (int k = 0; k < nsum; k++) {
        cols[4 + nm + k] = sums[which[k]].col;
        csv[4 + nm + k] = sums[which[k]].csv;
    }
    char title[256], m[64], sd[64];
    int training = rep_is_training(s, env, study);
    snprintf(title, sizeof title, "%s: %s, time and study metrics per variant", study,
             training ? "training runs" : "results");
    rep_table *t = rep_table_new("", title, 4 + nm + nsum, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-training", study);
    for (int vi = 0; vi < nv; vi++)
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (!c || rep_not_run(c))
                continue;
            int r = rep_table_row(t, 1);
            rep_row_status(t, r, c->status);
            rep_cell_text(t, r, 0, "%s", c->variant);
            rep_cell_num(t, r, 1, (double)c->size, "%ld", c->size);
            if (!rep_is_ok(c)) {
                rep_cell_text(t, r, 3, "%s%s%s", c->status, c->error ? ": " : "", c->error ? c->error : "");
                continue;
            }
            rep_cell_num(t, r, 2, c->ntimes, "%d", c->ntimes);
            rep_fmt_time(m, sizeof m, c->mean);
            rep_fmt_time(sd, sizeof sd, c->std);
            rep_cell_num(t, r, 3, c->mean, "%s ± %s%s", m, sd, rep_case_mark(t, c));
            for (int i = 0; i < nm; i++) {
                double v = case_metric(c, ms[i]);
                if (isfinite(v))
                    fmt_metric(t, r, 4 + i, ms[i], v);
                else
                    rep_cell_text(t, r, 4 + i, "—");
            }
            for (int k = 0; k < nsum; k++) {
                const struct series_sum *ss = &sums[which[k]];
                double v = series_summary(c, ss);
                if (!isfinite(v))
                    rep_cell_text(t, r, 4 + nm + k, "—");
                else if (!strcmp(ss->series, "epoch_s"))
                    rep_cell_num(t, r, 4 + nm + k, v, "%.3g s", v);
                else
                    fmt_metric(t, r, 4 + nm + k, ss->series, v);
            }
        }
    if (training)
        rep_table_note(t, "time: mean ± sample std of whole training runs (repetitions); metrics from the "
                          "record (the last repetition), as are the per-epoch summaries (seed 004's Table I); — = "
                          "not recorded by that variant.");
    else
        rep_table_note(t, "time: mean ± sample std over the repetitions; metrics from the record (the last "
                          "repetition); — = not recorded by that variant.");
    return t;
}
