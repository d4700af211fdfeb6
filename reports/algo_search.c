/* reports/algo_search.c: the data path's part 6, cuDNN's benchmark mode (the cnn study's cudnn and
 * cudnn-heuristic rows, or any study whose records carry the metrics algo_search_s and cudnn_find): what
 * choosing the convolution algorithms cost once (cudnnFind* runs every candidate; the heuristic runs
 * none), the first and the steady epoch time (the epoch_s series: the first epoch, and the mean of the
 * others), and after how many epochs the search has paid for itself. */
#include <math.h>
#include <string.h>

#include "rep.h"

static int search_case(const rep_case *c)
{
    return rep_is_ok(c) && isfinite(rep_metric(c, "algo_search_s")) && isfinite(rep_metric(c, "cudnn_find"));
}

int rep_is_algo_search(const rep_set *s, int env, const char *study)
{
    return rep_study_has(s, env, study, search_case);
}

/* Epoch i of the last repetition's epoch_s series (i = 0: the first), or the mean of epochs 1.. (i < 0). */
static double epoch_s(const rep_case *c, int i)
{
    json_t *a = json_object_get(json_object_get(c->rec, "series"), "epoch_s");
    size_t n = json_is_array(a) ? json_array_size(a) : 0;
    if (i >= 0)
        return (size_t)i < n ? json_number_value(json_array_get(a, (size_t)i)) : NAN;
    if (n < 2)
        return n ? json_number_value(json_array_get(a, 0)) : NAN;
    double sum = 0;
    for (size_t k = 1; k < n; k++)
        sum += json_number_value(json_array_get(a, k));
    return sum / (double)(n - 1);
}

/* The other choice's case at the same size and parameters: Find's partner is the heuristic, and back. */
static const rep_case *partner(const rep_set *s, int env, const rep_case *c)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *o = &s->cases[i];
        if (o->env == env && !o->replaced && search_case(o) && !strcmp(o->study, c->study) &&
            o->size == c->size && !strcmp(o->pkey, c->pkey) && rep_metric(o, "cudnn_find") != rep_metric(c, "cudnn_find"))
            return o;
    }
    return NULL;
}

static void time_cell(rep_table *t, int r, int col, double v)
{
    char b[64];
    if (!isfinite(v)) {
        rep_cell_text(t, r, col, "—");
        return;
    }
    rep_fmt_time(b, sizeof b, v);
    rep_cell_num(t, r, col, v, "%s", b);
}

rep_table *rep_tab_algo_search(const rep_set *s, int env, const char *study)
{
    if (!rep_is_algo_search(s, env, study))
        return NULL;
    const char *cols[] = {"variant", "size", "algorithms by", "search (once)", "first epoch", "steady epoch",
                          "× the other choice"};
    const char *csv[] = {"variant", "size", "choice", "algo_search_s", "first_epoch_s", "steady_epoch_s",
                         "steady_speedup_vs_other"};
    char title[256];
    snprintf(title, sizeof title, "%s: cuDNN's benchmark mode (cudnnFind*) against its heuristic", study);
    rep_table *t = rep_table_new("", title, 7, cols, csv);
    for (int k = 3; k < 7; k++)
        rep_col_flags(t, k, REP_COL_NUMERIC);
    free(t->id);
    t->id = rep_printf("%s-algo-search", study);
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || c->replaced || strcmp(c->study, study) || !search_case(c))
            continue;
        int r = rep_table_row(t, 1);
        rep_row_status(t, r, c->status);
        rep_cell_text(t, r, 0, "%s", c->variant);
        rep_cell_num(t, r, 1, (double)c->size, "%s=%ld%s%s%s", c->size_name, c->size, c->pkey[0] ? " " : "",
                     c->pkey, rep_case_mark(t, c));
        rep_cell_text(t, r, 2, "%s", rep_metric(c, "cudnn_find") > 0 ? "cudnnFind (benchmark)" : "heuristic");
        time_cell(t, r, 3, rep_metric(c, "algo_search_s"));
        time_cell(t, r, 4, epoch_s(c, 0));
        time_cell(t, r, 5, epoch_s(c, -1));
        const rep_case *o = partner(s, env, c);
        double x = o ? epoch_s(o, -1) / epoch_s(c, -1) : NAN;
        if (isfinite(x))
            rep_cell_num(t, r, 6, x, "%.2f×", x);
        else
            rep_cell_text(t, r, 6, "—");
    }
    rep_table_note(t, "search: the wall time of choosing the five convolutions' algorithms, once, before the "
                      "timed epochs (PyTorch's benchmark mode pays it in its first iterations); first and steady "
                      "epoch: the last repetition's first epoch and the mean of its later ones; × the other "
                      "choice: the other row's steady epoch over this row's, same size and parameters.");
    return t;
}

/* One sentence per Find case with a heuristic partner. */
void rep_algo_search_sentences(FILE *f, const rep_set *s, int env, const char *study)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || c->replaced || strcmp(c->study, study) || !search_case(c) ||
            rep_metric(c, "cudnn_find") <= 0)
            continue;
        const rep_case *h = partner(s, env, c);
        double find = epoch_s(c, -1), heur = h ? epoch_s(h, -1) : NAN, cost = rep_metric(c, "algo_search_s");
        char a[64], b[64], k[64];
        rep_fmt_time(k, sizeof k, cost);
        fprintf(f, "- cuDNN benchmark mode (%s %s, %s=%ld): cudnnFind* took %s once", study, c->variant, c->size_name,
                c->size, k);
        if (!isfinite(find) || !isfinite(heur)) {
            fputs("; no heuristic case to compare with.\n", f);
            continue;
        }
        rep_fmt_time(a, sizeof a, find);
        rep_fmt_time(b, sizeof b, heur);
        /* the search's cost over the heuristic's own queries, against what each epoch saves */
        double x = heur / find, gain = heur - find, extra = cost - rep_metric(h, "algo_search_s");
        fprintf(f, "; a steady epoch took %s against the heuristic's %s (%.2f× %s)", a, b, x >= 1 ? x : 1 / x,
                x >= 1 ? "faster" : "slower");
        if (gain > 0)
            fprintf(f, ", so the search paid for itself after %.0f epochs.\n", ceil(extra / gain));
        else
            fputs(", so the search never paid for itself here.\n", f);
    }
}
