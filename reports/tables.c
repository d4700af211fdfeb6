/* reports/tables.c: the timing tables of a study besides the speedup table (speedup.c): crossover of
 * each GPU variant against the best CPU variant, the GPU time split and the summary (seed 002's Table
 * 2.2). Only current (not replaced by a later record) records are shown, and only cases that ran (ok or failed): the
 * variants not run are in the not-run table (notrun.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64

void rep_fmt_time(char *buf, size_t n, double s)
{
    if (!isfinite(s)) {
        snprintf(buf, n, "—");
        return;
    }
    static const char *unit[] = {"s", "ms", "µs", "ns"};
    double v = s;
    int u = 0;
    while (u < 3 && fabs(v) < 1.0 && v != 0) {
        v *= 1000;
        u++;
    }
    if (fabs(v) >= 1000)
        snprintf(buf, n, "%.0f %s", v, unit[u]);
    else
        snprintf(buf, n, "%.3g %s", v, unit[u]);
}

const char *rep_case_mark(rep_table *t, const rep_case *c)
{
    if (c->reduced && c->extrapolated) {
        rep_table_note_once(t, "† reduced: %s", c->reduced_reason ? c->reduced_reason : "(no reason given)");
        rep_table_note_once(t, "‡ extrapolated, not measured");
        return "†‡";
    }
    if (c->reduced) {
        rep_table_note_once(t, "† reduced: %s", c->reduced_reason ? c->reduced_reason : "(no reason given)");
        return "†";
    }
    if (c->extrapolated) {
        rep_table_note_once(t, "‡ extrapolated, not measured");
        return "‡";
    }
    return "";
}

/* "failed: why" / "unavailable: why" / "skipped: why" for a case that has no time. */
static void status_text(char *buf, size_t n, const rep_case *c)
{
    snprintf(buf, n, "%s%s%s", c->status, c->error ? ": " : "", c->error ? c->error : "");
}

/* The best CPU variant at a size: the fastest ok C variant on the CPU (a framework baseline has its own
 * column, frameworks.c), or NULL. */
static const rep_case *best_cpu_case(const rep_set *s, int env, const char *study, long size)
{
    return rep_best_c(s, env, study, size);
}

static const char *study_size_name(const rep_set *s, int env, const char *study)
{
    for (int i = 0; i < s->ncases; i++)
        if (s->cases[i].env == env && strcmp(s->cases[i].study, study) == 0)
            return s->cases[i].size_name;
    return "size";
}

/* Whether a variant has an ok case at any of the sizes. */
static int ran_somewhere(const rep_set *s, int env, const char *study, const char *variant, const long *sizes, int ns)
{
    for (int i = 0; i < ns; i++)
        if (rep_is_ok(rep_find(s, env, study, variant, sizes[i])))
            return 1;
    return 0;
}

/* Size where t_gpu / t_cpu crosses 1, interpolating log(ratio) linearly in log(size). */
rep_table *rep_tab_crossover(const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    const char *sn = study_size_name(s, env, study);
    char title[256];
    snprintf(title, sizeof title, "%s: where each GPU variant overtakes the best CPU variant", study);
    const char *cols[] = {"GPU variant", "crossover", "GPU ÷ best CPU, smallest", "GPU ÷ best CPU, largest"};
    const char *csv[] = {"variant", "crossover_size", "ratio_smallest", "ratio_largest"};
    rep_table *t = rep_table_new("", title, 4, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-crossover", study);
    for (int vi = 0; vi < nv; vi++) {
        if (!rep_is_gpu(s, env, study, vs[vi]))
            continue;
        double lx[MAXS], lr[MAXS];
        long sz[MAXS];
        const char *mk[MAXS];
        int n = 0;
        for (int si = 0; si < ns; si++) {
            const rep_case *g = rep_find(s, env, study, vs[vi], sizes[si]);
            const rep_case *cpu = best_cpu_case(s, env, study, sizes[si]);
            /* per unit of work where the size compares so (units.c); NAN: not comparable */
            double tg = rep_cmp_time(s, env, study, g), tc = cpu ? rep_cmp_time(s, env, study, cpu) : NAN;
            if (!isfinite(tg) || !isfinite(tc))
                continue;
            lx[n] = log((double)sizes[si]);
            lr[n] = log(tg / tc);
            /* a reduced or extrapolated case on either side marks the ratio */
            mk[n] = rep_case_mark(t, g)[0] ? rep_case_mark(t, g) : rep_case_mark(t, cpu);
            sz[n++] = sizes[si];
        }
        if (n == 0 && !ran_somewhere(s, env, study, vs[vi], sizes, ns))
            continue; /* never ran: in the not-run table */
        int r = rep_table_row(t, 1);
        rep_cell_text(t, r, 0, "%s", vs[vi]);
        if (n == 0) {
            rep_cell_text(t, r, 1, "no size with both a GPU and a CPU time");
            continue;
        }
        rep_cell_num(t, r, 2, exp(lr[0]), "%.3g%s (%s=%ld)", exp(lr[0]), mk[0], sn, sz[0]);
        rep_cell_num(t, r, 3, exp(lr[n - 1]), "%.3g%s (%s=%ld)", exp(lr[n - 1]), mk[n - 1], sn, sz[n - 1]);
        if (lr[0] < 0) {
            rep_cell_text(t, r, 1, "GPU faster already at the smallest size (%s=%ld)", sn, sz[0]);
            continue;
        }
        int found = 0;
        for (int i = 0; i + 1 < n && !found; i++)
            if (lr[i] >= 0 && lr[i + 1] < 0) {
                double x = lx[i] + (lx[i + 1] - lx[i]) * lr[i] / (lr[i] - lr[i + 1]);
                rep_cell_num(t, r, 1, exp(x), "%s ≈ %.0f", sn, exp(x));
                found = 1;
            }
        if (!found)
            rep_cell_text(t, r, 1, "never in the measured range");
    }
    if (t->nrows == 0) {
        rep_table_free(t);
        return NULL;
    }
    rep_table_note(t, "best CPU = the fastest CPU variant at each size; the crossover is interpolated "
                      "linearly in log(size) on log(GPU ÷ CPU).");
    return t;
}

/* Mean of one phases array over the repetitions that measured it (nulls left out); NAN when none. */
static double phase_mean(const json_t *phases, const char *key)
{
    json_t *a = json_object_get(phases, key);
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; json_is_array(a) && i < json_array_size(a); i++) {
        json_t *x = json_array_get(a, i);
        if (json_is_number(x)) /* null: a repetition whose device time could not be read */
            sum += json_number_value(x), n++;
    }
    return n ? sum / (double)n : NAN;
}

/* Whether any ok case of the study has the runner's device-memory figure (gpu_mem_used_bytes): the
 * phases table then has two more columns, and rows for GPU cases without phases. */
static int has_gpu_memory(const rep_set *s, int env, const char *study)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !strcmp(c->study, study) && rep_is_ok(c) &&
            isfinite(rep_jnum(json_object_get(c->rec, "metrics"), "gpu_mem_used_bytes")))
            return 1;
    }
    return 0;
}

/* The two device-memory cells of a row: the variant's own allocator high-water mark (peak_gpu_bytes)
 * and the device's memory in use at the case's end (cudaMemGetInfo), MiB. */
static void gpu_memory_cells(rep_table *t, int r, const rep_case *c)
{
    json_t *m = json_object_get(c->rec, "metrics");
    double peak = rep_jnum(m, "peak_gpu_bytes") / 1048576.0, used = rep_jnum(m, "gpu_mem_used_bytes") / 1048576.0;
    if (isfinite(peak))
        rep_cell_num(t, r, 7, peak, "%.1f MiB", peak);
    else
        rep_cell_text(t, r, 7, "—");
    if (isfinite(used))
        rep_cell_num(t, r, 8, used, "%.0f MiB", used);
    else
        rep_cell_text(t, r, 8, "—");
}

rep_table *rep_tab_phases(const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    const char *sn = study_size_name(s, env, study);
    char title[256];
    int mem = has_gpu_memory(s, env, study);
    snprintf(title, sizeof title, "%s: GPU time split (mean per repetition)%s", study, mem ? " and device memory" : "");
    const char *cols[] = {"variant", sn, "host→device", "kernel", "device→host", "transfers", "wall (median)",
                          "peak VRAM (allocator)", "device memory in use"};
    const char *csv[] = {"variant", "size", "h2d_ms", "kernel_ms", "d2h_ms", "transfer_share", "median_s",
                         "peak_gpu_bytes_mib", "gpu_mem_used_mib"};
    rep_table *t = rep_table_new("", title, mem ? 9 : 7, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-gpu-phases", study);
    char buf[64];
    for (int vi = 0; vi < nv; vi++) {
        int first = 1;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            json_t *ph = c ? json_object_get(c->rec, "phases") : NULL;
            int gpu_row = mem && c && isfinite(rep_jnum(json_object_get(c->rec, "metrics"), "gpu_mem_used_bytes"));
            if (!rep_is_ok(c) || (!json_is_object(ph) && !gpu_row))
                continue;
            double h = phase_mean(ph, "h2d_ms"), k = phase_mean(ph, "kernel_ms"), d = phase_mean(ph, "d2h_ms");
            int r = rep_table_row(t, first);
            first = 0;
            rep_cell_text(t, r, 0, "%s", vs[vi]);
            rep_cell_num(t, r, 1, (double)c->size, "%ld%s", c->size, rep_case_mark(t, c));
            if (json_is_object(ph) && isfinite(h) && isfinite(k) && isfinite(d)) {
                rep_cell_num(t, r, 2, h, "%.3g ms", h);
                rep_cell_num(t, r, 3, k, "%.3g ms", k);
                rep_cell_num(t, r, 4, d, "%.3g ms", d);
                double share = (h + d) / (h + k + d);
                rep_cell_num(t, r, 5, share, "%.0f %%", 100 * share);
            } else { /* a GPU case that records no phases (device_*_ms metrics only), or none measured */
                for (int col = 2; col <= 5; col++)
                    rep_cell_text(t, r, col, "—");
            }
            rep_fmt_time(buf, sizeof buf, c->median);
            rep_cell_num(t, r, 6, c->median, "%s", buf);
            if (mem)
                gpu_memory_cells(t, r, c);
        }
    }
    if (t->nrows == 0) {
        rep_table_free(t);
        return NULL;
    }
    rep_table_note(t, "transfers = (host→device + device→host) ÷ (all three phases): the GPU overhead "
                      "that a CPU variant does not pay.");
    if (mem)
        rep_table_note(t, "peak VRAM (allocator) = the variant's own device allocations at their largest "
                          "(peak_gpu_bytes); device memory in use = the whole device's at the case's end "
                          "(cudaMemGetInfo: CUDA context and other processes included).");
    return t;
}

rep_table *rep_tab_summary(const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    const char *sn = study_size_name(s, env, study);
    char title[256], m[64], sd[64], lo[64], hi[64];
    snprintf(title, sizeof title, "%s: time per variant, mean ± standard deviation over repetitions", study);
    const char *cols[] = {"variant", sn, "n", "mean ± std", "CV", "min", "max", "note"};
    const char *csv[] = {"variant", "size", "reps", "mean_s", "cv", "min_s", "max_s", "note"};
    rep_table *t = rep_table_new("", title, 8, cols, csv);
    free(t->id);
    t->id = rep_printf("%s-summary", study);
    for (int vi = 0; vi < nv; vi++) {
        int first = 1;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (!c || rep_not_run(c))
                continue;
            int r = rep_table_row(t, first);
            first = 0;
            rep_row_status(t, r, c->status);
            rep_cell_text(t, r, 0, "%s", vs[vi]);
            rep_cell_num(t, r, 1, (double)c->size, "%ld", c->size);
            if (!rep_is_ok(c)) {
                rep_cell_text(t, r, 3, "%s", c->status);
                status_text(title, sizeof title, c);
                rep_cell_text(t, r, 7, "%s", title);
                continue;
            }
            rep_fmt_time(m, sizeof m, c->mean);
            rep_fmt_time(sd, sizeof sd, c->std);
            rep_fmt_time(lo, sizeof lo, c->min);
            rep_fmt_time(hi, sizeof hi, c->max);
            rep_cell_num(t, r, 2, c->ntimes, "%d", c->ntimes);
            rep_cell_num(t, r, 3, c->mean, "%s ± %s%s", m, sd, rep_case_mark(t, c));
            if (isfinite(c->cv))
                rep_cell_num(t, r, 4, c->cv, "%.1f %%", 100 * c->cv);
            else
                rep_cell_text(t, r, 4, "—");
            rep_cell_num(t, r, 5, c->min, "%s", lo);
            rep_cell_num(t, r, 6, c->max, "%s", hi);
            if (isfinite(c->cv) && c->cv > 0.05)
                rep_cell_text(t, r, 7, "noisy (CV > 5 %%)");
        }
    }
    rep_table_note(t, "std is the sample standard deviation (n − 1); CV = std ÷ mean.");
    return t;
}
