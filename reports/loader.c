/* reports/loader.c: reads results records (docs/results-schema.md) from *.jsonl files.
 *
 * Bad input never stops the report: a line that is not JSON, a wrong schema version or a record with a
 * missing field is reported as "file:line: what is wrong; what was expected" and skipped, and the count
 * of skipped records makes the exit status say so. */
#define _DEFAULT_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rep.h"
#include "safefile.h"

static char *params_key(const json_t *r, const char *size_name);

char *rep_strdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

char *rep_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    if (!s)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

int rep_mkdirs(const char *path)
{
    const char *why;
    if (sf_mkdirs(rep_out_root(NULL, 0), path, &why) == 0)
        return 0;
    if (errno == ENOTDIR) /* a link below the output folder: said here, the caller says strerror's */
        fprintf(stderr, "speedlab: %s: %s\n", path, why);
    return -1;
}

double rep_jnum(const json_t *o, const char *key)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    return (v && json_is_number(v)) ? json_number_value(v) : NAN;
}

static const char *jstr(const json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A record's traits say whether its variant runs on a GPU. Records written before traits were recorded
 * (an optional field within schema version 1) lack them: for those alone, the old rule by name. */
static int record_is_gpu(const json_t *r, const char *variant)
{
    json_t *traits = json_object_get(r, "traits"), *t;
    size_t i;
    if (json_is_array(traits)) {
        json_array_foreach(traits, i, t)
            if (json_is_string(t) && strcmp(json_string_value(t), "device") == 0)
                return 1;
        return 0;
    }
    return variant && (strcmp(variant, "cuda") == 0 || strcmp(variant, "cublas") == 0 ||
                       strcmp(variant, "cudnn") == 0);
}

int rep_is_gpu(const rep_set *s, int env, const char *study, const char *variant)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && strcmp(c->study, study) == 0 && strcmp(c->variant, variant) == 0)
            return c->gpu;
    }
    return 0;
}

int rep_is_ok(const rep_case *c)
{
    return c && strcmp(c->status, "ok") == 0 && c->ntimes > 0;
}

/* ---- one record ------------------------------------------------------------------------------- */

/* Checks the fields every record needs; returns NULL or what is missing. */
static const char *missing_common(const json_t *r)
{
    static const char *req[] = {"kind", "run_id", "time"};
    for (size_t i = 0; i < sizeof req / sizeof *req; i++)
        if (!json_is_string(json_object_get(r, req[i])))
            return req[i];
    json_t *env = json_object_get(r, "env");
    if (!json_is_object(env))
        return "env";
    if (!jstr(env, "host"))
        return "env.host";
    if (!jstr(env, "cpu_model"))
        return "env.cpu_model";
    return NULL;
}

static const char *missing_case(const json_t *r)
{
    static const char *req[] = {"study", "variant", "size_name", "status", "baseline"};
    for (size_t i = 0; i < sizeof req / sizeof *req; i++)
        if (!json_is_string(json_object_get(r, req[i])))
            return req[i];
    if (!json_is_integer(json_object_get(r, "size")))
        return "size";
    const char *st = jstr(r, "status");
    if (strcmp(st, "ok") == 0) {
        json_t *t = json_object_get(r, "times_s");
        if (!json_is_array(t) || json_array_size(t) == 0)
            return "times_s (a non-empty array when status is ok)";
        for (size_t i = 0; i < json_array_size(t); i++)
            if (!json_is_number(json_array_get(t, i)))
                return "times_s (numbers)";
    } else if (strcmp(st, "failed") && strcmp(st, "unavailable") && strcmp(st, "skipped")) {
        return "status (one of ok, failed, unavailable, skipped)";
    }
    return NULL;
}

/* Fills c from record r (its strings borrowed from r, which c holds) and its repetition statistics. */
static void fill_case(rep_case *c, json_t *r, const char *file, int line, int env)
{
    memset(c, 0, sizeof *c);
    c->file = rep_strdup(file);
    c->line = line;
    c->env = env;
    c->rec = json_incref(r);
    c->study = jstr(r, "study");
    c->variant = jstr(r, "variant");
    c->size_name = jstr(r, "size_name");
    c->pkey = params_key(r, c->size_name);
    c->status = jstr(r, "status");
    c->error = jstr(r, "error");
    c->baseline = jstr(r, "baseline");
    c->run_id = jstr(r, "run_id");
    c->time = jstr(r, "time");
    c->size = (long)json_integer_value(json_object_get(r, "size"));
    c->reduced = json_is_true(json_object_get(r, "reduced"));
    c->reduced_reason = jstr(r, "reduced_reason");
    c->builds_on = jstr(r, "builds_on");
    c->gpu = record_is_gpu(r, c->variant);
    c->extrapolated = json_is_true(json_object_get(r, "extrapolated"));
    json_t *th = json_object_get(r, "threads");
    c->threads = json_is_integer(th) ? (int)json_integer_value(th) : 1;
    json_t *rates = json_object_get(r, "rates");
    c->gflops = rep_jnum(rates, "gflops");
    c->gbs = rep_jnum(rates, "gbs");
    c->ai = rep_jnum(rates, "ai");
    c->pooled = c->pooled_rounds = 1;
    json_t *t = json_object_get(r, "times_s");
    if (strcmp(c->status, "ok") == 0 && json_is_array(t)) {
        c->times = malloc(sizeof *c->times * json_array_size(t));
        c->ntimes = c->times ? (int)json_array_size(t) : 0;
        for (int i = 0; i < c->ntimes; i++)
            c->times[i] = json_number_value(json_array_get(t, (size_t)i));
        rep_case_stats(c);
    }
}

void rep_case_stats(rep_case *c)
{
    if (c->ntimes <= 0)
        return;
    rep_sort(c->times, c->ntimes);
    c->median = rep_quantile(c->times, c->ntimes, 0.5);
    c->p25 = rep_quantile(c->times, c->ntimes, 0.25);
    c->p75 = rep_quantile(c->times, c->ntimes, 0.75);
    c->mean = rep_mean(c->times, c->ntimes);
    c->std = rep_std(c->times, c->ntimes);
    c->min = c->times[0];
    c->max = c->times[c->ntimes - 1];
    c->cv = c->mean > 0 ? c->std / c->mean : NAN;
}

void rep_case_free(rep_case *c)
{
    for (int i = 0; i < c->nheld; i++)
        rep_case_free(&c->held[i]);
    free(c->held);
    free(c->file);
    free(c->times);
    free(c->pkey);
    json_decref(c->rec);
    c->held = NULL, c->nheld = 0, c->times = NULL, c->rec = NULL, c->file = c->pkey = NULL;
}

/* The environment lists the runs of its case records, replaced ones included. */
static void note_run(rep_env *e, const char *run_id)
{
    for (int k = 0; k < e->nruns; k++)
        if (strcmp(e->runs[k], run_id) == 0)
            return;
    if (e->nruns < (int)(sizeof e->runs / sizeof *e->runs))
        e->runs[e->nruns++] = rep_strdup(run_id);
}

/* A case is its environment, size, study, variant and other params (pipeline's cache=warm and cold). */
static char *case_key(const rep_case *c)
{
    return rep_printf("%d\x1f%ld\x1f%s\x1f%s\x1f%s", c->env, c->size, c->study, c->variant, c->pkey);
}

static int grow_cases(rep_set *s)
{
    int cap = s->capcases ? 2 * s->capcases : 64;
    rep_case *grown = realloc(s->cases, sizeof *grown * (size_t)cap);
    if (!grown)
        return -1;
    s->cases = grown;
    s->capcases = cap;
    return 0;
}

/* Two records of one case at different thread counts: counted, and the first named (the report says
 * that one of them is hidden, and how to keep both). */
static void note_threads(rep_env *e, const rep_case *old, const rep_case *now)
{
    if (old->threads == now->threads)
        return;
    e->nthreads_replaced++;
    if (!e->threads_example) {
        const rep_case *a = strcmp(now->time, old->time) >= 0 ? old : now, *b = a == old ? now : old;
        e->threads_example = rep_printf("%s %s: %d -> %d threads", now->study, now->variant, a->threads,
                                        b->threads);
    }
}

/* Adds a case record, or lets it replace the case's record in place when it is later (a case measured
 * again supersedes the earlier record): one hash lookup, so n records load in O(n). */
static void add_case(rep_set *s, json_t *r, const char *file, int line, int env)
{
    rep_case c;
    fill_case(&c, r, file, line, env);
    note_run(&s->envs[env], c.run_id);
    char *key = case_key(&c);
    int at = key ? rep_hash_get(&s->keys, key) : -1;
    if (at >= 0) {
        s->envs[env].nreplaced++;
        note_threads(&s->envs[env], &s->cases[at], &c);
        int later = strcmp(c.time, s->cases[at].time) >= 0; /* or as late and read later: it wins */
        if (rep_pools(s, &s->cases[at], &c)) { /* kept until rep_pool_cases: the latest in front */
            if (later) {
                rep_case keep = c;
                c = s->cases[at];
                s->cases[at] = keep;
                if (rep_hold(&s->cases[at], &c) != 0)
                    rep_case_free(&c);
            } else if (rep_hold(&s->cases[at], &c) != 0) {
                rep_case_free(&c);
            }
        } else if (later) {
            rep_case_free(&s->cases[at]);
            s->cases[at] = c;
        } else {
            rep_case_free(&c);
        }
        free(key);
        return;
    }
    if ((s->ncases == s->capcases && grow_cases(s) != 0) || !key ||
        rep_hash_put(&s->keys, key, s->ncases) != 0) {
        fprintf(stderr, "speedlab: out of memory loading %s:%d; record skipped\n", file, line);
        s->nerrors++;
        rep_case_free(&c);
        free(key);
        return;
    }
    s->cases[s->ncases++] = c;
    free(key);
}

/* Numbers a case record cannot hold, or NULL: a repetition takes a finite time of at least a nanosecond
 * (0 or less is a broken timer or an edited file, and would make speedups of -nan or below zero and a
 * "B faster" verdict; 5e-324 s made "inf×"; no clock here resolves less than 1 ns); a thread count is a
 * whole number from 1 to REP_MAX_THREADS; reps, where given, is the number of times. why holds the text. */
#define REP_MIN_TIME_S 1e-9
#define REP_MAX_THREADS 65536
static const char *bad_numbers(const json_t *r, char *why, size_t n)
{
    json_t *t = json_object_get(r, "times_s"), *th = json_object_get(r, "threads"), *reps = json_object_get(r, "reps");
    int ok = strcmp(jstr(r, "status"), "ok") == 0;
    for (size_t i = 0; ok && json_is_array(t) && i < json_array_size(t); i++) {
        double x = json_number_value(json_array_get(t, i));
        if (!(x >= REP_MIN_TIME_S) || !isfinite(x)) {
            snprintf(why, n, "times_s[%zu] is %g; a repetition's time is a positive number of seconds, finite "
                     "and at least %g (a nanosecond: no clock here resolves less)", i, x, REP_MIN_TIME_S);
            return why;
        }
    }
    if (th && (!json_is_integer(th) || json_integer_value(th) < 1 || json_integer_value(th) > REP_MAX_THREADS)) {
        char *v = json_dumps(th, JSON_ENCODE_ANY);
        snprintf(why, n, "threads is %.40s; a thread count is a whole number from 1 to %d", v ? v : "?",
                 REP_MAX_THREADS);
        free(v);
        return why;
    }
    if (ok && reps && (!json_is_integer(reps) || json_integer_value(reps) != (json_int_t)json_array_size(t))) {
        char *v = json_dumps(reps, JSON_ENCODE_ANY);
        snprintf(why, n, "reps is %.40s but times_s holds %zu times; the two must agree", v ? v : "?",
                 json_array_size(t));
        free(v);
        return why;
    }
    return NULL;
}

static void add_calibration(rep_set *s, json_t *r, const char *file, int line, int env, FILE *err)
{
    json_t *ceil = json_object_get(r, "ceilings");
    if (!json_is_object(ceil)) {
        fprintf(err, "%s:%d: calibration record without a `ceilings` object; skipped\n", file, line);
        s->nerrors++;
        return;
    }
    rep_env *e = &s->envs[env];
    const char *t = jstr(r, "time");
    if (!e->calib_time || strcmp(t, e->calib_time) > 0) { /* the latest calibration wins */
        json_decref(e->ceilings);
        free(e->calib_time);
        e->ceilings = json_incref(ceil);
        e->calib_time = rep_strdup(t);
    }
}

/* The record's strings that reach a report's prose, table cells and file names (its own and its env's):
 * a results file is anyone's. Every control character (a newline, a tab, ESC) becomes a space, so a
 * newline cannot start a Markdown heading or end a table row; in names (all but the error texts) | < and
 * ` become ?, so a name cannot split a table cell, open HTML or close a code span in prose written
 * without escaping. speedlab writes none of these there. Nested values (params, profile) are escaped
 * where they are written. */
static void clean_strings(json_t *obj)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(obj, tmp, k, v) {
        if (!json_is_string(v))
            continue;
        const char *t = json_string_value(v);
        const char *bad = strcmp(k, "error") && strcmp(k, "reduced_reason") ? "|<`" : "";
        size_t n = strlen(t), i = 0;
        while (i < n && (unsigned char)t[i] >= 0x20 && t[i] != 0x7f && !strchr(bad, t[i]))
            i++;
        if (i == n)
            continue;
        char *c = rep_strdup(t);
        for (char *p = c; p && *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = ' ';
            else if (strchr(bad, *p))
                *p = '?';
        if (c)
            json_object_set_new(obj, k, json_string(c));
        free(c);
    }
}

static void load_record(rep_set *s, const char *file, int line, const char *text, FILE *err)
{
    json_error_t je;
    char msg[160];
    json_t *r = json_loads(text, 0, &je);
    if (!r || !json_is_object(r)) { /* the message says where and what, never what the line holds */
        fprintf(err, "%s:%d: not a JSON object (%s at column %d); expected one results record per line "
                     "(truncated write?); skipped\n", file, line,
                r ? "not an object" : sf_no_content(je.text, msg, sizeof msg), je.column);
        s->nerrors++;
        json_decref(r);
        return;
    }
    clean_strings(r);
    if (json_is_object(json_object_get(r, "env")))
        clean_strings(json_object_get(r, "env"));
    const char *schema = jstr(r, "schema");
    json_t *ver = json_object_get(r, "schema_version");
    if (!schema || strcmp(schema, "speedlab-results") != 0) {
        fprintf(err, "%s:%d: schema is %s, expected \"speedlab-results\"; skipped\n", file, line,
                schema ? "another" : "missing"); /* the place and what is expected, never the file's text */
        s->nerrors++;
    } else if (!json_is_integer(ver) || json_integer_value(ver) != 1) {
        if (json_is_integer(ver))
            fprintf(err, "%s:%d: schema_version %lld found, this reader reads version 1; skipped\n", file,
                    line, (long long)json_integer_value(ver));
        else
            fprintf(err, "%s:%d: schema_version missing or not an integer, expected 1; skipped\n", file, line);
        s->nerrors++;
    } else {
        const char *miss = missing_common(r);
        const char *kind = jstr(r, "kind");
        if (!miss && strcmp(kind, "case") == 0)
            miss = missing_case(r);
        char why[256];
        const char *bad = !miss && strcmp(kind, "case") == 0 ? bad_numbers(r, why, sizeof why) : NULL;
        int env = miss || bad ? -1 : rep_env_index(s, json_object_get(r, "env"));
        if (miss) {
            fprintf(err, "%s:%d: record is missing field `%s` (docs/results-schema.md); skipped\n", file,
                    line, miss);
            s->nerrors++;
        } else if (bad) {
            fprintf(err, "%s:%d: %s (docs/results-schema.md); skipped\n", file, line, bad);
            s->nerrors++;
        } else if (env < 0) {
            fprintf(err, "%s:%d: out of memory; skipped\n", file, line);
            s->nerrors++;
        } else {
            if (strcmp(kind, "case") == 0)
                add_case(s, r, file, line, env);
            else if (strcmp(kind, "calibration") == 0)
                add_calibration(s, r, file, line, env, err);
            else {
                fprintf(err, "%s:%d: kind unknown, expected \"case\" or \"calibration\"; skipped\n", file,
                        line);
                s->nerrors++;
            }
        }
    }
    json_decref(r);
}

/* top: a file named on the command line, which may be a link; below a folder only regular files are
 * read, never through a link (common/safefile.h). */
static void load_file(rep_set *s, const char *file, int top, FILE *err)
{
    const char *why;
    FILE *f = sf_open_read(file, top ? SF_FOLLOW : 0, &why);
    if (!f) {
        fprintf(err, "%s: cannot open: %s; skipped\n", file, why);
        s->nerrors++;
        return;
    }
    s->nfiles++;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        lineno++;
        int complete = line[n - 1] == '\n';
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = 0;
        if (n == 0)
            continue;
        if (!complete) { /* a record is appended whole with its newline: no newline = cut short */
            json_t *probe = json_loads(line, 0, NULL);
            if (!probe) {
                fprintf(err, "%s:%d: truncated line (no newline and not valid JSON); expected a whole "
                             "record; skipped\n", file, lineno);
                s->nerrors++;
                continue;
            }
            json_decref(probe);
        }
        load_record(s, file, lineno, line, err);
    }
    free(line);
    fclose(f);
}

/* ---- walking directories ---------------------------------------------------------------------- */

typedef struct seen {
    char **paths;
    int n;
} seen;

static int seen_add(seen *sn, const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        snprintf(real, sizeof real, "%s", path);
    for (int i = 0; i < sn->n; i++)
        if (strcmp(sn->paths[i], real) == 0)
            return 0;
    char **p = realloc(sn->paths, sizeof *p * (size_t)(sn->n + 1));
    if (!p)
        return 0;
    sn->paths = p;
    sn->paths[sn->n++] = rep_strdup(real);
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

static void walk(rep_set *s, const char *path, int top, seen *sn, FILE *err)
{
    struct stat st;
    if ((top ? stat(path, &st) : lstat(path, &st)) != 0) {
        fprintf(err, "%s: %s; skipped\n", path, strerror(errno));
        s->nerrors++;
        return;
    }
    if (S_ISLNK(st.st_mode))
        return; /* e.g. `latest`: the run it points at is below the same parent */
    if (S_ISREG(st.st_mode)) {
        if ((top || ends_with(path, ".jsonl")) && seen_add(sn, path))
            load_file(s, path, top, err);
        return;
    }
    if (!S_ISDIR(st.st_mode)) { /* a FIFO, device or socket: reading it could block */
        if (top || ends_with(path, ".jsonl")) {
            fprintf(err, "%s: not a regular file or directory (a FIFO or device would block the read); "
                         "skipped\n", path);
            s->nerrors++;
        }
        return;
    }
    DIR *d = opendir(path);
    if (!d) {
        fprintf(err, "%s: cannot read directory: %s; skipped\n", path, strerror(errno));
        s->nerrors++;
        return;
    }
    char **names = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char **p = realloc(names, sizeof *p * (size_t)(n + 1));
        if (!p)
            break;
        names = p;
        names[n++] = rep_strdup(de->d_name);
    }
    closedir(d);
    if (n) /* an empty directory (a Slurm logs/ before any task): qsort must not get NULL */
        qsort(names, (size_t)n, sizeof *names, cmp_str); /* run order: run-YYYYmmdd-HHMMSS sorts by time */
    for (int i = 0; i < n; i++) {
        char *child = rep_printf("%s/%s", path, names[i]);
        walk(s, child, 0, sn, err);
        free(child);
        free(names[i]);
    }
    free(names);
}

/* The params other than the size, in record order: "cache=cold" (empty string when none). The size's own
 * parameter is part of the key where it says other than the size: galaxy's --param max_iter=2 at size 20
 * ran 2 iterations and is not the same case as max_iter=20 (experiments/plan.c, case_params). */
static char *params_key(const json_t *r, const char *size_name)
{
    char size[32];
    snprintf(size, sizeof size, "%lld", (long long)json_integer_value(json_object_get(r, "size")));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const char *k;
    json_t *v;
    int n = 0;
    json_object_foreach(json_object_get(r, "params"), k, v) {
        if (size_name && !strcmp(k, size_name) && (!json_is_string(v) || !strcmp(json_string_value(v), size)))
            continue;
        if (json_is_string(v))
            fprintf(f, "%s%s=%s", n++ ? " " : "", k, json_string_value(v));
        else if (json_is_number(v))
            fprintf(f, "%s%s=%g", n++ ? " " : "", k, json_number_value(v));
    }
    fclose(f);
    return buf ? buf : rep_strdup("");
}

/* rep_case.nsame for every case: one count per (environment, study, size, params), so linear. */
static void count_param_sets(rep_set *s)
{
    rep_hash sets = {0};
    int *count = calloc((size_t)s->ncases + 1, sizeof *count);
    int *set = malloc(sizeof *set * ((size_t)s->ncases + 1));
    int nsets = 0;
    for (int i = 0; count && set && i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        char *key = rep_printf("%d\x1f%ld\x1f%s\x1f%s", c->env, c->size, c->study, c->pkey);
        int at = key ? rep_hash_get(&sets, key) : -1;
        if (at < 0 && key && rep_hash_put(&sets, key, nsets) == 0)
            at = nsets++;
        free(key);
        set[i] = at;
        if (at >= 0)
            count[at]++;
    }
    for (int i = 0; i < s->ncases; i++) /* out of memory: every case counts 1, and rep_find the earliest */
        s->cases[i].nsame = count && set && set[i] >= 0 ? count[set[i]] : 1;
    free(count);
    free(set);
    rep_hash_free(&sets);
}

void rep_load(rep_set *s, int npaths, char **paths, FILE *err)
{
    seen sn = {0};
    for (int i = 0; i < npaths; i++)
        walk(s, paths[i], 1, &sn, err);
    rep_pool_cases(s);
    count_param_sets(s);
    for (int i = 0; i < sn.n; i++)
        free(sn.paths[i]);
    free(sn.paths);
    for (int e = 0; e < s->nenvs; e++) /* not an error: said once, as REPORT.md says it */
        if (s->envs[e].nthreads_replaced && err)
            fprintf(err, "speedlab: %s: %d case records hidden by a later record at another thread count (%s);"
                    " report runs at different --threads from separate directories\n", s->envs[e].name,
                    s->envs[e].nthreads_replaced, s->envs[e].threads_example);
}

void rep_set_free(rep_set *s)
{
    for (int i = 0; i < s->ncases; i++)
        rep_case_free(&s->cases[i]);
    rep_hash_free(&s->keys);
    for (int i = 0; i < s->nenvs; i++)
        rep_env_free(&s->envs[i]);
    free(s->cases);
    free(s->envs);
    memset(s, 0, sizeof *s);
}

/* ---- queries ---------------------------------------------------------------------------------- */

int rep_studies(const rep_set *s, int env, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env)
            continue;
        int k = 0;
        while (k < n && strcmp(names[k], c->study))
            k++;
        if (k == n && n < max)
            names[n++] = c->study;
    }
    return n;
}

int rep_variants(const rep_set *s, int env, const char *study, const char **names, int max)
{
    int n = 0;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || strcmp(c->study, study))
            continue;
        int k = 0;
        while (k < n && strcmp(names[k], c->variant))
            k++;
        if (k == n && n < max)
            names[n++] = c->variant;
    }
    return n;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int rep_sizes(const rep_set *s, int env, const char *study, long *sizes, int max)
{
    int n = 0;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env != env || strcmp(c->study, study))
            continue;
        int k = 0;
        while (k < n && sizes[k] != c->size)
            k++;
        if (k == n && n < max)
            sizes[n++] = c->size;
    }
    qsort(sizes, (size_t)n, sizeof *sizes, cmp_long);
    return n;
}

const rep_case *rep_find(const rep_set *s, int env, const char *study, const char *variant, long size)
{
    const rep_case *best = NULL;
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *c = &s->cases[i];
        if (c->env == env && !c->replaced && c->size == size && strcmp(c->study, study) == 0 &&
            strcmp(c->variant, variant) == 0 &&
            (!best || c->nsame > best->nsame || (c->nsame == best->nsame && c->time && best->time && strcmp(c->time, best->time) < 0)))
            best = c;
    }
    return best;
}
