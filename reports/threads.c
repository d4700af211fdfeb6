/* reports/threads.c: OpenMP attribution: for the rows whose traits hold "threaded" and whose record
 * carries threads_busy_s (the omp kernels' per-thread shares, docs/results-schema.md), each thread's busy
 * time per repetition, the busiest thread's against the median wall time, and the imbalance (the
 * busiest thread's busy time over the mean of all threads'). A table per study, by variant and size. */
#include <math.h>
#include <string.h>

#include "rep.h"

#define MAXV 32
#define MAXS 64

static int has_threaded(const rep_case *c)
{
    json_t *traits = json_object_get(c->rec, "traits"), *t;
    size_t i;
    json_array_foreach(traits, i, t) {
        if (json_is_string(t) && !strcmp(json_string_value(t), "threaded"))
            return 1;
    }
    return 0;
}

static int busy_case(const rep_case *c)
{
    json_t *b = c ? json_object_get(c->rec, "threads_busy_s") : NULL;
    return c && rep_is_ok(c) && has_threaded(c) && json_is_array(b) && json_array_size(b) > 0;
}

rep_table *rep_tab_thread_busy(const rep_set *s, int env, const char *study)
{
    if (!rep_study_has(s, env, study, busy_case))
        return NULL;
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(s, env, study, vs, MAXV), ns = rep_sizes(s, env, study, sizes, MAXS);
    const char *cols[] = {"variant", "size", "threads", "median", "busy per thread", "busiest / median",
                          "imbalance"};
    const char *csv[] = {"variant", "size", "threads", "median_s", "threads_busy_s", "busiest_over_median",
                         "imbalance"};
    char title[256], b[64];
    snprintf(title, sizeof title, "%s, omp: thread busy time and imbalance", study);
    rep_table *t = rep_table_new("", title, 7, cols, csv);
    for (int k = 1; k < 7; k++)
        if (k != 4)
            rep_col_flags(t, k, REP_COL_NUMERIC);
    free(t->id);
    t->id = rep_printf("%s-thread-busy", study);
    for (int vi = 0; vi < nv; vi++) {
        int group = 1;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(s, env, study, vs[vi], sizes[si]);
            if (!busy_case(c))
                continue;
            json_t *busy = json_object_get(c->rec, "threads_busy_s");
            size_t n = json_array_size(busy);
            double sum = 0, max = 0;
            char list[512] = "";
            for (size_t i = 0; i < n; i++) {
                double v = json_number_value(json_array_get(busy, i));
                sum += v;
                if (v > max)
                    max = v;
                rep_fmt_time(b, sizeof b, v);
                size_t used = strlen(list);
                if (used + 1 < sizeof list)
                    snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", b);
            }
            double imb = sum > 0 ? max / (sum / (double)n) : NAN;
            int r = rep_table_row(t, group);
            group = 0;
            rep_row_status(t, r, c->status);
            rep_cell_text(t, r, 0, "%s", c->variant);
            rep_cell_num(t, r, 1, (double)c->size, "%s=%ld%s", c->size_name ? c->size_name : "size", c->size,
                         rep_case_mark(t, c));
            rep_cell_num(t, r, 2, (double)c->threads, "%d", c->threads);
            rep_fmt_time(b, sizeof b, c->median);
            rep_cell_num(t, r, 3, c->median, "%s", b);
            rep_cell_text(t, r, 4, "%s", list);
            rep_cell_num_or_dash(t, r, 5, c->median > 0 ? max / c->median : NAN, "%.2f");
            rep_cell_num_or_dash(t, r, 6, imb, "%.3f");
        }
    }
    rep_table_note(t, "busy per thread: the time each OpenMP thread (0 first) spent in its share of the "
                      "work per repetition (the mean over the timed repetitions), barrier waits left out (the record's "
                      "threads_busy_s); "
                      "busiest / median: the busiest thread's busy time over the median wall time of a "
                      "repetition (what is left is the serial part, waits and the fork/join; above 1 when slow "
                      "repetitions raised the mean); imbalance: "
                      "the busiest thread's busy time over the mean of all threads' (1.000: even).");
    return t;
}
