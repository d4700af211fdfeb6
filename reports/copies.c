/* reports/copies.c: the data path's part 5, host-device copies (the h2d study, or any study whose records carry
 * the metric `pinned`): GB/s against the transfer size by variant, from the host's wall time (the case's
 * median) and from the device's own time (the mean of the record's phases, CUDA events), each variant
 * against the one it builds on (pinned against pageable, one direction); the figure's data
 * (bandwidth.gp) and REPORT.md's sentence. GB/s = the declared bytes of one copy / time / 1e9. */
#include <math.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64

static int copy_case(const rep_case *c)
{
    return rep_is_ok(c) && isfinite(rep_metric(c, "pinned")) && c->median > 0;
}

int rep_is_copies(const rep_set *s, int env, const char *study)
{
    return rep_study_has(s, env, study, copy_case);
}

static double copy_bytes(const rep_case *c)
{
    return rep_jnum(json_object_get(c->rec, "work"), "bytes");
}

/* The device's mean time of one copy (ms, whichever direction the record's phases hold), or NAN. */
static double device_ms(const rep_case *c)
{
    json_t *ph = json_object_get(c->rec, "phases");
    double sum = 0;
    size_t n = 0;
    const char *keys[2] = {"h2d_ms", "d2h_ms"};
    for (int k = 0; k < 2; k++) {
        json_t *a = json_object_get(ph, keys[k]);
        for (size_t i = 0; json_is_array(a) && i < json_array_size(a); i++) {
            double v = json_number_value(json_array_get(a, i));
            if (v > 0)
                sum += v, n++;
        }
    }
    return n ? sum / (double)n : NAN;
}

static double wall_gbs(const rep_case *c)
{
    return copy_bytes(c) / c->median * 1e-9;
}

static double device_gbs(const rep_case *c)
{
    return copy_bytes(c) / (device_ms(c) * 1e-3) * 1e-9;
}

/* "4 KiB", "256 MiB": the sizes as a user reads them. */
static void fmt_bytes(char *b, size_t n, double v)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (v >= 1024 && u < 3)
        v /= 1024, u++;
    snprintf(b, n, "%.4g %s", v, unit[u]);
}

/* The variant's builds_on case at the same size, when it is a copy case. */
static const rep_case *base_of(const rep_set *s, int env, const rep_case *c)
{
    const rep_case *b = c->builds_on ? rep_find(s, env, c->study, c->builds_on, c->size) : NULL;
    return copy_case(b) ? b : NULL;
}


rep_table *rep_tab_copies(const rep_set *s, int env, const char *study)
{
    if (!rep_is_copies(s, env, study))
        return NULL;
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    const char *cols[] = {"variant", "transfer", "wall GB/s", "device GB/s", "× builds on", "median"};
    const char *csv[] = {"variant", "bytes", "wall_gb_per_s", "device_gb_per_s", "speedup_vs_builds_on", "median_s"};
    char title[256], b[64];
    snprintf(title, sizeof title, "%s: copy bandwidth against transfer size", study);
    rep_table *t = rep_table_new("", title, 6, cols, csv);
    for (int k = 2; k < 6; k++)
        rep_col_flags(t, k, REP_COL_NUMERIC);
    free(t->id);
    t->id = rep_printf("%s-bandwidth", study);
    for (int vi = 0; vi < nv; vi++) {
        int group = 1;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (!copy_case(c))
                continue;
            int r = rep_table_row(t, group);
            group = 0;
            rep_row_status(t, r, c->status);
            rep_cell_text(t, r, 0, "%s", c->variant);
            fmt_bytes(b, sizeof b, copy_bytes(c));
            rep_cell_num(t, r, 1, copy_bytes(c), "%s%s", b, rep_case_mark(t, c));
            rep_cell_num_or_dash(t, r, 2, wall_gbs(c), "%.3g");
            rep_cell_num_or_dash(t, r, 3, device_gbs(c), "%.3g");
            const rep_case *base = base_of(s, env, c);
            rep_cell_num_or_dash(t, r, 4, base ? base->median / c->median : NAN, "%.2f×");
            rep_fmt_time(b, sizeof b, c->median);
            rep_cell_num(t, r, 5, c->median, "%s", b);
        }
    }
    rep_table_note(t, "wall GB/s: one copy's bytes over the median host time of the call (enqueue and wait); "
                      "device GB/s: over the copy's own time between CUDA events (the mean over repetitions); "
                      "× builds on: the median time of the variant this one builds on (pinned: pageable, same "
                      "direction) over this one's, at the same size.");
    return t;
}

int rep_copies_data(const rep_set *s, int env, const char *study, FILE *f)
{
    if (!rep_is_copies(s, env, study))
        return 0;
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS), blocks = 0;
    fputs("# blocks per variant: bytes wall_gb_per_s device_gb_per_s\n", f);
    for (int vi = 0; vi < nv; vi++) {
        int first = 1;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (!copy_case(c))
                continue;
            if (first)
                fprintf(f, "%s\"%s\"\n", blocks++ ? "\n\n" : "", vs[vi]), first = 0;
            double d = device_gbs(c);
            fprintf(f, "%.9g %.9g %.9g\n", copy_bytes(c), wall_gbs(c), isfinite(d) ? d : NAN);
        }
    }
    return blocks > 0;
}

/* One sentence per variant that builds on another: at the smallest and the largest size both have. */
void rep_copies_sentences(FILE *f, const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *lo = NULL, *hi = NULL;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (!copy_case(c) || !base_of(s, env, c))
                continue;
            lo = lo ? lo : c;
            hi = c;
        }
        if (!hi)
            continue;
        const rep_case *bh = base_of(s, env, hi), *bl = base_of(s, env, lo);
        char a[32], b[32];
        fmt_bytes(a, sizeof a, copy_bytes(hi));
        fmt_bytes(b, sizeof b, copy_bytes(lo));
        fprintf(f, "- Host-device copies (%s): %s reached %.3g GB/s at %s, %.2f× %s's %.3g GB/s; at %s, %.3g "
                   "against %.3g GB/s (%.2f×).\n",
                study, hi->variant, wall_gbs(hi), a, bh->median / hi->median, bh->variant, wall_gbs(bh), b,
                wall_gbs(lo), wall_gbs(bl), bl->median / lo->median);
    }
}

/* ---- copy/compute overlap in a GPU training (the mlp study's --param feed) ------------------------ */

static double feed_of(const rep_case *c)
{
    return rep_is_ok(c) ? rep_metric(c, "feed") : NAN;
}

static int host_fed(const rep_case *c)
{
    return feed_of(c) >= 1;
}

int rep_is_feed(const rep_set *s, int env, const char *study)
{
    return rep_study_has(s, env, study, host_fed);
}

/* The current case of variant/size fed as `feed` (0 resident, 1 sync, 2 overlap), or NULL. */
static const rep_case *fed(const rep_set *s, int env, const rep_case *like, int feed)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !c->replaced && !strcmp(c->study, like->study) &&
            !strcmp(c->variant, like->variant) && c->size == like->size && feed_of(c) == feed)
            return c;
    }
    return NULL;
}

static double epoch_of(const rep_case *c)
{
    double e = rep_metric(c, "epoch_s_mean");
    return isfinite(e) ? e : c->median;
}

/* One sentence per variant and size that has the overlapped feed and the synchronous one. */
void rep_feed_sentences(FILE *f, const rep_set *s, int env, const char *study)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *o = &s->cases[i];
        if (o->env != env || o->replaced || strcmp(o->study, study) || feed_of(o) != 2)
            continue;
        const rep_case *sy = fed(s, env, o, 1), *re = fed(s, env, o, 0);
        if (!sy)
            continue;
        char a[64], b[64], r[64];
        rep_fmt_time(a, sizeof a, epoch_of(o));
        rep_fmt_time(b, sizeof b, epoch_of(sy));
        double x = epoch_of(sy) / epoch_of(o);
        fprintf(f, "- Copy/compute overlap (%s %s, %s=%ld): fed from the host, an epoch took %s with two streams "
                   "and pinned slots against %s copying synchronously (%.2f× %s)",
                study, o->variant, o->size_name, o->size, a, b, x >= 1 ? x : 1 / x, x >= 1 ? "faster" : "slower");
        if (re) {
            rep_fmt_time(r, sizeof r, epoch_of(re));
            fprintf(f, "; with the training set resident on the GPU, %s", r);
        }
        fputs(".\n", f);
    }
}
