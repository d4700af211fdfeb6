/* reports/pipeline.c: the data path (docs/study-pipeline.md). Part 1, loading (the pipeline study, or any study whose
 * records carry the metrics load_s and images_per_s): a table of load time, MB/s of the file and images/s
 * by method (variant) and cache state (the record's params other than the size, rep_case.pkey: cache=warm
 * and cache=cold are separate cases, never one cell), and the load against one training epoch; the data
 * of its figure (bars.gp); and REPORT.md's "Data path" section: one sentence per part present (loading,
 * overlap from overlap.c, batch size from rep_batch_sweep, reduced precision from precision.c, copies from
 * copies.c, the cuDNN search from algo_search.c) computed from the records, and the parts not in the
 * results. */
#include <math.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXK 8
#define MAXST 64

static int loading_case(const rep_case *c)
{
    return rep_is_ok(c) && isfinite(rep_metric(c, "load_s")) && isfinite(rep_metric(c, "images_per_s"));
}

int rep_is_loading(const rep_set *s, int env, const char *study)
{
    return rep_study_has(s, env, study, loading_case);
}

/* The cache states (params keys) of the study, first-seen order. */
static int cache_keys(const rep_set *s, int env, const char *study, const char **keys, int max)
{
    int n = 0;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || c->replaced || strcmp(c->study, study))
            continue;
        int k = 0;
        while (k < n && strcmp(keys[k], c->pkey))
            k++;
        if (k == n && n < max)
            keys[n++] = c->pkey;
    }
    return n;
}

/* The current case of a variant in one cache state (any size: the study has one). */
static const rep_case *find_keyed(const rep_set *s, int env, const char *study, const char *v, const char *key)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !c->replaced && !strcmp(c->study, study) && !strcmp(c->variant, v) &&
            !strcmp(c->pkey, key))
            return c;
    }
    return NULL;
}

/* What the report calls a cache state: the cache param's value, else the whole key, else "—". */
static const char *cache_name(const rep_case *c)
{
    json_t *v = json_object_get(json_object_get(c->rec, "params"), "cache");
    if (json_is_string(v))
        return json_string_value(v);
    return c->pkey[0] ? c->pkey : "—";
}

/* The cache state as the table says it: a cold load whose eviction could not drop the kernel's caches
 * (not root, or drop_caches not writable) was evicted by posix_fadvise alone, which a file's pages can
 * survive; its resident fraction says how cold it was. */
static const char *cache_label(const rep_case *c)
{
    const char *name = cache_name(c);
    if (!strcmp(name, "cold") && rep_metric(c, "cold") == 1 && rep_metric(c, "cold_drop_caches") == 0)
        return "cold (fadvise only, no drop_caches)";
    return name;
}

static double speedup_vs_base(const rep_set *s, int env, const rep_case *c)
{
    const rep_case *b = c->baseline ? find_keyed(s, env, c->study, c->baseline, c->pkey) : NULL;
    return loading_case(b) ? rep_metric(b, "load_s") / rep_metric(c, "load_s") : NAN;
}


rep_table *rep_tab_loading(const rep_set *s, int env, const char *study)
{
    if (!rep_is_loading(s, env, study))
        return NULL;
    const char *vs[MAXV], *keys[MAXK], *base = NULL;
    int nv = rep_variants(s, env, study, vs, MAXV), nk = cache_keys(s, env, study, keys, MAXK);
    const char *cols[] = {"variant", "cache", "load time", "file MB/s", "images/s", "× baseline",
                          "× one mlp epoch", "× one cnn epoch", "resident fraction"};
    const char *csv[] = {"variant", "cache", "load_s", "file_mb_per_s", "images_per_s", "speedup_vs_baseline",
                         "mlp_epoch_ratio", "cnn_epoch_ratio", "resident_fraction"};
    char title[256];
    snprintf(title, sizeof title, "%s: loading by method and cache state, against one training epoch", study);
    rep_table *t = rep_table_new("", title, 9, cols, csv);
    for (int k = 2; k < 9; k++)
        rep_col_flags(t, k, REP_COL_NUMERIC);
    free(t->id);
    t->id = rep_printf("%s-loading", study);
    for (int vi = 0; vi < nv; vi++) {
        int group = 1;
        for (int ki = 0; ki < nk; ki++) {
            const rep_case *c = find_keyed(s, env, study, vs[vi], keys[ki]);
            if (!c || rep_not_run(c))
                continue;
            int r = rep_table_row(t, group);
            group = 0;
            rep_row_status(t, r, c->status);
            rep_cell_text(t, r, 0, "%s", c->variant);
            rep_cell_text(t, r, 1, "%s", cache_label(c));
            if (c->baseline)
                base = c->baseline;
            if (!loading_case(c)) {
                rep_cell_text(t, r, 2, "%s%s%s", c->status, c->error ? ": " : "", c->error ? c->error : "—");
                continue;
            }
            char tm[64];
            rep_fmt_time(tm, sizeof tm, rep_metric(c, "load_s"));
            rep_cell_num(t, r, 2, rep_metric(c, "load_s"), "%s%s", tm, rep_case_mark(t, c));
            rep_cell_num_or_dash(t, r, 3, rep_metric(c, "file_mb_per_s"), "%.1f");
            rep_cell_num_or_dash(t, r, 4, rep_metric(c, "images_per_s"), "%.0f");
            rep_cell_num_or_dash(t, r, 5, speedup_vs_base(s, env, c), "%.2f×");
            rep_cell_num_or_dash(t, r, 6, rep_metric(c, "mlp_epoch_ratio"), "%.3f");
            rep_cell_num_or_dash(t, r, 7, rep_metric(c, "cnn_epoch_ratio"), "%.4f");
            rep_cell_num_or_dash(t, r, 8, rep_metric(c, "resident_fraction"), "%.2f");
        }
    }
    rep_table_note(t, "load time: the study's median over its timed loads (metric load_s); file MB/s: bytes of "
                      "the file read (compressed for gzip; — where no file is read) per second; × baseline: "
                      "%s's load time over the row's, in the same cache state (warm and cold are separate runs, "
                      "never one cell); × one epoch: the load time over one training epoch of that study "
                      "(mlp_epoch_ratio, cnn_epoch_ratio: below 1, loading is a fraction of an epoch); resident "
                      "fraction: the file's pages in the page cache before a load.",
                   base ? base : "the baseline");
    return t;
}

int rep_loading_data(const rep_set *s, int env, const char *study, FILE *f)
{
    if (!rep_is_loading(s, env, study))
        return 0;
    const char *vs[MAXV], *keys[MAXK];
    int nv = rep_variants(s, env, study, vs, MAXV), nk = cache_keys(s, env, study, keys, MAXK), n = 0;
    fputs("# \"variant cache\" images_per_s std(0) file_mb_per_s load_s mlp_epoch_ratio\n", f);
    for (int vi = 0; vi < nv; vi++)
        for (int ki = 0; ki < nk; ki++) {
            const rep_case *c = find_keyed(s, env, study, vs[vi], keys[ki]);
            if (!loading_case(c))
                continue;
            double mb = rep_metric(c, "file_mb_per_s");
            fprintf(f, "\"%s %s\" %.9g 0 %.9g %.9g %.9g\n", c->variant, cache_name(c), rep_metric(c, "images_per_s"),
                    isfinite(mb) ? mb : 0.0, rep_metric(c, "load_s"), rep_metric(c, "mlp_epoch_ratio"));
            n++;
        }
    return n > 0;
}

/* One sentence per cache state: the fastest load of a file against the baseline, and the epoch ratio. */
static void loading_sentences(FILE *f, const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV], *keys[MAXK];
    int nv = rep_variants(s, env, study, vs, MAXV), nk = cache_keys(s, env, study, keys, MAXK);
    for (int ki = 0; ki < nk; ki++) {
        const rep_case *best = NULL, *base = NULL;
        for (int vi = 0; vi < nv; vi++) {
            const rep_case *c = find_keyed(s, env, study, vs[vi], keys[ki]);
            if (!loading_case(c) || !isfinite(rep_metric(c, "file_bytes")))
                continue;
            if (c->baseline && !strcmp(c->variant, c->baseline))
                base = c;
            else if (!best || rep_metric(c, "load_s") < rep_metric(best, "load_s"))
                best = c;
        }
        if (!best && !base)
            continue;
        const rep_case *any = best ? best : base;
        char a[64], b[64];
        fprintf(f, "- Loading (%s, cache=%s):", study, cache_label(base ? base : any));
        if (best) {
            rep_fmt_time(a, sizeof a, rep_metric(best, "load_s"));
            fprintf(f, " %s of the file took %s", best->variant, a);
            if (base) {
                rep_fmt_time(b, sizeof b, rep_metric(base, "load_s"));
                double x = rep_metric(base, "load_s") / rep_metric(best, "load_s");
                fprintf(f, ", %.2f× %s than %s (%s)", x >= 1 ? x : 1 / x, x >= 1 ? "faster" : "slower",
                        base->variant, b);
            }
            fputc(';', f);
        }
        if (base && isfinite(rep_metric(base, "mlp_epoch_ratio")))
            fprintf(f, " a %s load is %.3f× one mlp epoch and %.4f× one cnn epoch", base->variant,
                    rep_metric(base, "mlp_epoch_ratio"), rep_metric(base, "cnn_epoch_ratio"));
        if (best && isfinite(rep_metric(best, "mlp_epoch_ratio")))
            fprintf(f, "%s %s's %.3f× one mlp epoch", base ? "," : " a load by", best->variant,
                    rep_metric(best, "mlp_epoch_ratio"));
        fputs(".\n", f);
    }
}

/* One sentence per swept study: its first variant with two points or more. */
static void batch_sentence(FILE *f, const rep_set *s, int env, const char *study)
{
    const char *vs[MAXV];
    long sizes[64];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, 64);
    for (int vi = 0; vi < nv; vi++) {
        rep_batch p, first = {0}, top = {0}, last = {0}, acc = {0};
        long fs = 0, ts = 0, ls = 0, as = 0;
        int n = 0;
        const char *set = rep_batch_set(s, env, study, vs[vi]);
        for (int si = 0; set && si < ns; si++) {
            if (!rep_batch_point(rep_batch_case(s, env, study, vs[vi], sizes[si], set), &p))
                continue;
            if (!n++)
                first = p, fs = sizes[si];
            if (n == 1 || p.samples_per_s > top.samples_per_s)
                top = p, ts = sizes[si];
            if (n == 1 || p.test_acc > acc.test_acc)
                acc = p, as = sizes[si];
            last = p, ls = sizes[si];
        }
        if (n < 2)
            continue;
        const char *sn = rep_batch_case(s, env, study, vs[vi], fs, set)->size_name;
        /* worded so that it holds whichever way the numbers went: best, ratio, and a gap to the best */
        fprintf(f, "- Batch size (%s %s): samples/s were highest at %s %ld (%.0f/s), %.2f× %s %ld's; test "
                   "accuracy at %s %ld was %.2f points below the best (%.2f %% against %.2f %% at %s %ld).\n",
                study, vs[vi], sn, ts, top.samples_per_s, top.samples_per_s / first.samples_per_s, sn, fs,
                sn, ls, 100 * (acc.test_acc - last.test_acc), 100 * last.test_acc, 100 * acc.test_acc, sn, as);
        return;
    }
}

/* The parts of the data-path study, in the section's order. A part is present for a study when `present` says its
 * records are there; `sentences` then writes its lines ("- Part (study ...): ..."). A part that is not
 * built yet has NULL functions and is listed as not in the results. Adding a part: its two functions (in
 * its own reports/ file, declared in rep.h) on its row here. */
typedef struct dp_part {
    const char *name;
    int (*present)(const rep_set *s, int env, const char *study);
    void (*sentences)(FILE *f, const rep_set *s, int env, const char *study);
} dp_part;

static const dp_part parts[] = {
    {"loading (part 1)", rep_is_loading, loading_sentences},
    {"overlap (prefetching, part 2)", rep_is_overlap, rep_overlap_sentences},
    {"batch size (part 3)", rep_batch_sweep, batch_sentence},
    {"reduced precision (part 4)", rep_is_precision, rep_precision_sentences},
    {"host-to-device copies (part 5)", rep_is_copies, rep_copies_sentences},
    {"copy/compute overlap on the GPU (part 5)", rep_is_feed, rep_feed_sentences},
    {"cuDNN benchmark mode (part 6)", rep_is_algo_search, rep_algo_search_sentences},
};
#define NPARTS ((int)(sizeof parts / sizeof parts[0]))

void rep_data_path_section(FILE *f, const rep_set *s, int env)
{
    const char *studies[MAXST];
    int nst = rep_studies(s, env, studies, MAXST), found[NPARTS] = {0}, any = 0;
    for (int p = 0; p < NPARTS; p++)
        for (int i = 0; i < nst && parts[p].present; i++)
            found[p] += parts[p].present(s, env, studies[i]);
    for (int p = 0; p < NPARTS; p++)
        any += found[p] > 0;
    if (!any)
        return;
    fprintf(f, "### Data path on %s\n\n", s->envs[env].name);
    fputs("Which of the lecture's cures paid on this machine, and by how much, from the records above:\n\n", f);
    for (int p = 0; p < NPARTS; p++)
        for (int i = 0; i < nst && found[p]; i++)
            if (parts[p].present(s, env, studies[i]))
                parts[p].sentences(f, s, env, studies[i]);
    const char *sep = "\nParts of the data-path study not in these results: ";
    for (int p = 0; p < NPARTS; p++)
        if (!found[p]) {
            fprintf(f, "%s%s", sep, parts[p].name);
            sep = ", ";
        }
    fputs(strcmp(sep, ", ") ? "\n" : ".\n\n", f);
}
