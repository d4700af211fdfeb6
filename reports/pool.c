/* reports/pool.c: a case measured several times shown as one, its repetitions pooled.
 *
 * Without pooling the loader keeps a case's latest record (a case measured again supersedes the
 * earlier one). Pooling keeps them all, for one purpose: medians over rounds that were interleaved so
 * that a slow spell of a shared machine falls on every variant alike (`speedlab run --rounds N`, or the
 * same `speedlab run` repeated, an ISA level or a build in turn, then `speedlab report --pool`).
 * Records are pooled when
 *   - `speedlab report --pool` or `speedlab compare --pool` asked for it (rep_set.pool), or
 *   - they are rounds of one run (the same run_id, each with a `round` field): a run asked for rounds.
 * At the end of loading (rep_pool_cases) each case with held records becomes
 *   - the latest failed record, when any of them failed: a time measured beside a failed check is not
 *     a time of that variant (counted in rep_env.npool_failed);
 *   - the latest record alone, when they cannot be pooled (not all ok, or at other thread counts, or
 *     reduced and full runs mixed: not the same work);
 *   - else one case whose times are every record's repetitions together (the statistics, and so every
 *     table's median and spread, computed from them), whose rates are the latest record's scaled to the
 *     pooled median (the work per repetition is the same), and whose record is the latest one's with
 *     each numeric metric and counter the median of the records' values. Profiles, phases and series
 *     stay the latest record's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

int rep_pools(const rep_set *s, const rep_case *a, const rep_case *b)
{
    if (s->pool)
        return 1;
    return !strcmp(a->run_id, b->run_id) && json_object_get(a->rec, "round") && json_object_get(b->rec, "round");
}

int rep_hold(rep_case *keep, rep_case *other)
{
    rep_case *grown = realloc(keep->held, sizeof *grown * (size_t)(keep->nheld + other->nheld + 1));
    if (!grown)
        return -1;
    keep->held = grown;
    for (int i = 0; i < other->nheld; i++) /* what other held, keep holds now */
        keep->held[keep->nheld++] = other->held[i];
    free(other->held);
    other->held = NULL, other->nheld = 0;
    keep->held[keep->nheld++] = *other;
    return 0;
}

/* The median of the numeric member `key` of obj over the records (NAN when none has it as a number). */
static double median_of(rep_case *all, int n, const char *obj, const char *key, double *scratch)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        double v = rep_jnum(json_object_get(all[i].rec, obj), key);
        if (isfinite(v))
            scratch[m++] = v;
    }
    if (m == 0)
        return NAN;
    rep_sort(scratch, m);
    return rep_quantile(scratch, m, 0.5);
}

/* In rec (a copy), each numeric member of rec[obj] becomes the median over the records. */
static void median_members(json_t *rec, rep_case *all, int n, const char *obj, double *scratch)
{
    json_t *o = json_object_get(rec, obj), *v;
    const char *key;
    json_object_foreach(o, key, v) {
        double m = json_is_number(v) ? median_of(all, n, obj, key, scratch) : NAN;
        if (isfinite(m))
            json_object_set_new(o, key, json_real(m));
    }
}

/* all[0] (the latest) becomes the pooled case of all n; 0, or -1 out of memory (all[0] unchanged). */
static int merge(rep_case *all, int n)
{
    int total = 0;
    for (int i = 0; i < n; i++)
        total += all[i].ntimes;
    double *times = malloc(sizeof *times * (size_t)total), *scratch = malloc(sizeof *scratch * (size_t)n);
    json_t *rec = json_deep_copy(all[0].rec);
    if (!times || !scratch || !rec) {
        free(times);
        free(scratch);
        json_decref(rec);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < all[i].ntimes; j++)
            times[k++] = all[i].times[j];
    median_members(rec, all, n, "metrics", scratch);
    median_members(rec, all, n, "counters", scratch);
    json_object_set_new(rec, "reps", json_integer(total));
    free(scratch);
    rep_case *c = &all[0];
    double before = c->median;
    free(c->times);
    c->times = times, c->ntimes = total;
    rep_case_stats(c);
    c->gflops *= before / c->median; /* NAN stays NAN: a rate the record did not have */
    c->gbs *= before / c->median;
    json_decref(c->rec);
    c->rec = rec; /* the strings c borrows from the old record are in the copy too: re-borrow them */
    return 0;
}

/* The strings a case borrows from its record, taken again from a new one of the same content. */
static void reborrow(rep_case *c)
{
    static const char *const keys[] = {"study", "variant", "size_name", "status", "error", "baseline",
                                       "run_id", "time", "reduced_reason", "builds_on"};
    const char **at[] = {&c->study, &c->variant, &c->size_name, &c->status, &c->error, &c->baseline,
                         &c->run_id, &c->time, &c->reduced_reason, &c->builds_on};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        json_t *v = json_object_get(c->rec, keys[i]);
        *at[i] = json_is_string(v) ? json_string_value(v) : NULL;
    }
}

/* Which of a case's records it becomes: -1 to pool them all, else the index of the one to show. */
static int shown_alone(const rep_case *all, int n)
{
    int failed = -1, poolable = 1;
    for (int i = 0; i < n; i++) {
        if (!strcmp(all[i].status, "failed") && (failed < 0 || strcmp(all[i].time, all[failed].time) > 0))
            failed = i;
        poolable &= rep_is_ok(&all[i]) && all[i].threads == all[0].threads && all[i].reduced == all[0].reduced;
    }
    return failed >= 0 ? failed : poolable ? -1 : 0;
}

/* One case and the records it held: see the file's comment. */
static void pool_case(rep_set *s, rep_case *c)
{
    int n = c->nheld + 1;
    rep_case *all = malloc(sizeof *all * (size_t)n);
    if (!all) { /* out of memory: the latest record alone, as without pooling */
        for (int i = 0; i < c->nheld; i++)
            rep_case_free(&c->held[i]);
        free(c->held);
        c->held = NULL, c->nheld = 0;
        return;
    }
    all[0] = *c;
    memcpy(all + 1, c->held, sizeof *all * (size_t)c->nheld);
    free(c->held);
    all[0].held = NULL, all[0].nheld = 0;
    rep_env *e = &s->envs[c->env];
    int pick = shown_alone(all, n);
    if (pick < 0 && merge(all, n) == 0) {
        reborrow(&all[0]);
        all[0].pooled = n;
        e->npooled_cases++;
        e->npooled_records += n;
        e->nreplaced -= n - 1; /* shown, not set aside */
        pick = 0;
    } else if (pick < 0) {
        pick = 0;
    } else if (!strcmp(all[pick].status, "failed") && n > 1) {
        e->npool_failed++;
    }
    *c = all[pick];
    for (int i = 0; i < n; i++)
        if (i != pick)
            rep_case_free(&all[i]);
    free(all);
}

void rep_pool_cases(rep_set *s)
{
    for (int i = 0; i < s->ncases; i++)
        if (s->cases[i].nheld > 0)
            pool_case(s, &s->cases[i]);
}
