/* reports/pool.c: a case measured several times shown as one, its repetitions pooled.
 *
 * Without pooling the loader keeps a case's latest record (a case measured again supersedes the
 * earlier one). Pooling keeps them all, for one purpose: medians over rounds that were interleaved so
 * that a slow spell of a shared machine falls on every variant alike (`speedlab run --rounds N`; the
 * same `speedlab run` repeated, ISA levels in turn, then `speedlab report --pool`; two builds in turn,
 * each into its own directory, then `speedlab compare --pool`).
 * Records are pooled when
 *   - `speedlab report --pool` or `speedlab compare --pool` asked for it (rep_set.pool), or
 *   - they are rounds of one run (the same run_id, each with a `round` field).
 * At the end of loading (rep_pool_cases) a case's records are narrowed to those that can be one sample:
 * the latest record that ran (ok or failed) and the others that ran with its thread count, its work
 * (rep_same_work), its build (env compiler, cflags, commit, git_describe, speedlab_version, isa_march) and, for
 * a framework row, its timed form, each record once (a copy of a results file read too is left out).
 * Records outside that set (unavailable or skipped rounds, other configurations) are set aside as
 * without pooling (rep_env.nreplaced). Of the set, the case becomes
 *   - the latest failed record, when any of them failed: a time measured beside a failed check is not
 *     a time of that variant (counted in rep_env.npool_failed);
 *   - else one case whose times are every record's repetitions together (the statistics, and so every
 *     table's median and spread, computed from them), whose rates are the latest record's scaled to the
 *     pooled median (the work per repetition is the same), and whose record is the latest one's with
 *     each numeric metric and counter the median of the records' values, except a metric's mean and
 *     `_std` pair, which become the mean and std over all the repetitions. Profiles, phases and series
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

/* In rec (a copy), each metric pair X (or X_mean) and X_std, a record's mean and sample std over its
 * repetitions (the studies' record_spread), becomes the mean and sample std over every record's
 * repetitions together: from each record's mean m_i, std s_i and count n_i, the pooled mean
 * sum(n_i m_i) / N and variance (sum((n_i - 1) s_i^2) + sum(n_i (m_i - mean)^2)) / (N - 1). A median of
 * the rounds' stds would leave out the drift between the rounds that pooling is for. */
static void pool_mean_std(json_t *rec, const rep_case *all, int n)
{
    json_t *m = json_object_get(rec, "metrics"), *v;
    const char *key;
    json_object_foreach(m, key, v) {
        size_t len = strlen(key);
        char mean_key[256];
        if (len < 5 || len >= sizeof mean_key || strcmp(key + len - 4, "_std"))
            continue;
        snprintf(mean_key, sizeof mean_key, "%.*s_mean", (int)(len - 4), key);
        if (!json_object_get(m, mean_key))
            snprintf(mean_key, sizeof mean_key, "%.*s", (int)(len - 4), key);
        double N = 0, sum = 0, within = 0;
        int ok = 1;
        for (int i = 0; i < n && ok; i++) {
            json_t *mi = json_object_get(all[i].rec, "metrics");
            double mean = rep_jnum(mi, mean_key), sd = rep_jnum(mi, key), ni = all[i].ntimes;
            if (!isfinite(sd) && ni == 1)
                sd = 0; /* one repetition: no std recorded */
            ok = isfinite(mean) && isfinite(sd) && ni > 0;
            N += ni, sum += ni * mean, within += (ni - 1) * sd * sd;
        }
        if (!ok || N < 2)
            continue;
        double mean = sum / N, between = 0;
        for (int i = 0; i < n; i++) {
            double d = rep_jnum(json_object_get(all[i].rec, "metrics"), mean_key) - mean;
            between += all[i].ntimes * d * d;
        }
        json_object_set_new(m, mean_key, json_real(mean));
        json_object_set_new(m, key, json_real(sqrt((within + between) / (N - 1))));
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
    pool_mean_std(rec, all, n);
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

/* Two JSON values equal, both absent counting as equal (jansson's json_equal says 0 for NULL). */
static int same_json(json_t *a, json_t *b)
{
    return a == b || (a && b && json_equal(a, b));
}

/* What must match for two records' repetitions to be one sample: the thread count, the work (reduced, its
 * reason, extrapolated: units.c), the build (env fields that name it: two builds on one host are one
 * machine to the report), the ISA level the case ran at (impl.level: the planner's choice may differ
 * between runs) and a framework row's timed form (chosen per run, the fastest). */
static int same_config(const rep_case *a, const rep_case *b)
{
    static const char *const build[] = {"compiler", "cflags", "commit", "commit_dirty", "git_describe", "speedlab_version", "isa_march"};
    json_t *ea = json_object_get(a->rec, "env"), *eb = json_object_get(b->rec, "env");
    for (size_t i = 0; i < sizeof build / sizeof *build; i++)
        if (!same_json(json_object_get(ea, build[i]), json_object_get(eb, build[i])))
            return 0;
    return a->threads == b->threads && rep_same_work(a, b) &&
           same_json(json_object_get(json_object_get(a->rec, "impl"), "level"),
                     json_object_get(json_object_get(b->rec, "impl"), "level")) &&
           same_json(json_object_get(a->rec, "baseline_form"), json_object_get(b->rec, "baseline_form"));
}

static int ran(const rep_case *c)
{
    return !strcmp(c->status, "ok") || !strcmp(c->status, "failed");
}

/* The same record read twice (a copy of a results file under a given path). */
static int same_record(const rep_case *a, const rep_case *b)
{
    return !strcmp(a->run_id, b->run_id) && !strcmp(a->time, b->time) &&
           same_json(json_object_get(a->rec, "round"), json_object_get(b->rec, "round"));
}

/* Orders all so that all[0..m) are the records pooled together: the latest record that ran (ok or failed;
 * else the latest record) and every other record that ran with its configuration, each once. Returns m. */
static int pool_set(rep_case *all, int n)
{
    int ref = 0;
    for (int i = 0; i < n; i++)
        if (ran(&all[i]) && (!ran(&all[ref]) || strcmp(all[i].time, all[ref].time) > 0))
            ref = i;
    rep_case t = all[0];
    all[0] = all[ref], all[ref] = t;
    if (!ran(&all[0]))
        return 1;
    int m = 1;
    for (int i = 1; i < n; i++) {
        int take = ran(&all[i]) && same_config(&all[i], &all[0]);
        for (int j = 0; take && j < m; j++)
            take = !same_record(&all[i], &all[j]);
        if (take) {
            t = all[m], all[m] = all[i], all[i] = t;
            m++;
        }
    }
    return m;
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
    int m = pool_set(all, n), pick = 0;
    for (int i = 0; i < m; i++) /* a failed one among them: the latest failure is shown */
        if (!strcmp(all[i].status, "failed") && (strcmp(all[pick].status, "failed") ||
                                                 strcmp(all[i].time, all[pick].time) > 0))
            pick = i;
    if (!strcmp(all[pick].status, "failed")) {
        if (m > 1)
            e->npool_failed++;
    } else if (m > 1) {
        int rounds = 0; /* the latest record's run's rounds: under --pool the set may hold other runs' too */
        for (int i = 0; i < m; i++)
            rounds += !strcmp(all[i].run_id, all[0].run_id) && json_object_get(all[i].rec, "round") != NULL;
        if (merge(all, m) == 0) {
            reborrow(&all[0]);
            all[0].pooled = m;
            all[0].pooled_rounds = rounds ? rounds : 1;
            e->npooled_cases++;
            e->npooled_records += m;
            e->nreplaced -= m - 1; /* shown, not set aside */
        }
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
