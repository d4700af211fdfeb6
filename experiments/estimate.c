/*
 * estimate.c: how long each planned case will take, and what that guess rests on.
 *
 * Best: an earlier record of the same case (study, variant, size, params) with its median time per
 * repetition. Else a lower bound from the study's declared work per repetition (flops, bytes) and a
 * calibration record's ceilings (the roofline: max(flops / FMA peak, bytes / triad bandwidth)); real
 * code is often 10-100x slower than that bound, so the plan prints it as "≥". Else no estimate, said so.
 * A case's time = its repetitions (at least --min-time) + warm-up calls + the check's run.
 * Records are read from --calibration PATH, else from the plan's --out directory and results/latest.
 */
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "plan.h"
#include "rep.h"
#include "safefile.h"

typedef struct known {
    json_t *cases;        /* ok case records seen */
    json_t *ceilings;     /* the newest calibration record's ceilings */
    char calib_time[40];  /* its time (ISO 8601 UTC: compares as text) */
    char host[64];        /* its env.host */
} known;

static const char *record_time(const json_t *r)
{
    const char *t = json_string_value(json_object_get(r, "time"));
    return t ? t : "";
}

static void take_record(known *k, json_t *r)
{
    const char *kind = json_string_value(json_object_get(r, "kind"));
    if (kind && !strcmp(kind, "calibration") && json_is_object(json_object_get(r, "ceilings")) &&
        (!k->ceilings || strcmp(record_time(r), k->calib_time) >= 0)) { /* files come in any order */
        json_decref(k->ceilings);
        snprintf(k->calib_time, sizeof k->calib_time, "%s", record_time(r));
        k->ceilings = json_incref(json_object_get(r, "ceilings"));
        const char *h = json_string_value(json_object_get(json_object_get(r, "env"), "host"));
        snprintf(k->host, sizeof k->host, "%s", h ? h : "?");
    } else if (kind && !strcmp(kind, "case")) {
        const char *st = json_string_value(json_object_get(r, "status"));
        if (st && !strcmp(st, "ok"))
            json_array_append(k->cases, r);
    }
}

static void read_jsonl(known *k, const char *path, int top)
{
    const char *why;
    /* a FIFO is no calibration, and must not block the plan; a link is followed only where typed */
    FILE *f = sf_open_read(path, top ? SF_FOLLOW : 0, &why);
    char *line = NULL;
    size_t cap = 0;
    while (f && getline(&line, &cap, f) > 0) {
        json_t *r = json_loads(line, 0, NULL); /* a bad line is the report's business, not the plan's */
        if (r)
            take_record(k, r);
        json_decref(r);
    }
    free(line);
    if (f)
        fclose(f);
}

/* Every *.jsonl below path (a file, a run directory or a parent of runs), a few levels deep; below the
 * top, symbolic links are not followed (`latest` points at a run read anyway). */
static void walk(known *k, const char *path, int depth)
{
    struct stat st;
    if ((depth == 0 ? stat(path, &st) : lstat(path, &st)) != 0)
        return;
    size_t n = strlen(path);
    if (S_ISREG(st.st_mode) && n > 6 && !strcmp(path + n - 6, ".jsonl")) {
        read_jsonl(k, path, depth == 0);
        return;
    }
    DIR *d = S_ISDIR(st.st_mode) && depth < 4 ? opendir(path) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4200];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        walk(k, sub, depth + 1);
    }
    if (d)
        closedir(d);
}

/* The same key the report's loader builds: every param but the size's, "k=v" joined by spaces. */
static int same_params(const json_t *r, const sl_plan_case *c)
{
    char buf[1024];
    size_t len = 0;
    const char *key;
    json_t *v;
    buf[0] = 0;
    json_object_foreach(json_object_get(r, "params"), key, v) {
        if (c->study->size_name && !strcmp(key, c->study->size_name))
            continue;
        if (json_is_string(v) && len < sizeof buf)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s=%s", len ? " " : "", key,
                                    json_string_value(v));
    }
    /* a case line carries the size's own parameter where it was given (galaxy's max_iter=2 at size 2):
     * the key leaves it out */
    char want[sizeof c->params], own[80];
    size_t wl = 0, ol = (size_t)snprintf(own, sizeof own, "%s=", c->study->size_name ? c->study->size_name : "");
    want[0] = 0;
    for (const char *w = c->params; *w;) {
        size_t n = strcspn(w, " ");
        if (!(c->study->size_name && n >= ol && !strncmp(w, own, ol)) && wl + n + 2 < sizeof want)
            wl += (size_t)snprintf(want + wl, sizeof want - wl, "%s%.*s", wl ? " " : "", (int)n, w);
        w += n + (w[n] == ' ');
    }
    return !strcmp(buf, want);
}

/* The newest earlier record of this case (same study, variant, size, params), or NULL. */
static json_t *measured(const known *k, const sl_plan_case *c)
{
    json_t *best = NULL;
    for (size_t i = 0; i < json_array_size(k->cases); i++) {
        json_t *r = json_array_get(k->cases, i);
        const char *s = json_string_value(json_object_get(r, "study"));
        const char *v = json_string_value(json_object_get(r, "variant"));
        if (s && v && !strcmp(s, c->study->name) && !strcmp(v, c->study->variants[c->variant].name) &&
            json_integer_value(json_object_get(r, "size")) == c->size && same_params(r, c) &&
            (!best || strcmp(record_time(r), record_time(best)) >= 0))
            best = r;
    }
    return best;
}

/* Seconds per repetition at the roofline, or -1 with why. */
static double roofline_rep(const known *k, const sl_plan *p, const sl_plan_case *c, char *why, size_t n)
{
    const sl_study *s = c->study;
    sl_opts o = {.seed = p->cfg.seed, .threads = p->cfg.threads, .quick = p->cfg.quick,
                 .n_params = p->cfg.n_params, .param_names = p->cfg.param_names,
                 .param_values = p->cfg.param_values};
    double fl = s->flops ? s->flops(c->size, &o) : 0, by = s->bytes ? s->bytes(c->size, &o) : 0;
    if (!(fl > 0) && !(by > 0)) {
        snprintf(why, n, "no estimate: the study declares no work per repetition");
        return -1;
    }
    if (!k->ceilings) {
        snprintf(why, n, "no estimate: no calibration on hand (speedlab calibrate; --calibration PATH)");
        return -1;
    }
    int threaded = (s->variants[c->variant].traits & SL_THREADED) != 0;
    double peak, bw;
    if (c->gpu) {
        json_t *g = json_object_get(k->ceilings, "gpu");
        peak = json_number_value(json_object_get(g, "cublas_sgemm_gflops"));
        bw = json_number_value(json_object_get(g, "d2d_gbs")) / 2; /* d2d counts read + write */
        if (!g) {
            snprintf(why, n, "no estimate: the calibration on hand (%s) has no GPU", k->host);
            return -1;
        }
    } else {
        peak = json_number_value(json_object_get(k->ceilings, threaded ? "fma_gflops" : "fma_gflops_1t"));
        bw = json_number_value(json_object_get(k->ceilings, threaded ? "triad_gbs" : "triad_gbs_1t"));
    }
    if (!(peak > 0) || !(bw > 0)) {
        snprintf(why, n, "no estimate: the calibration on hand (%s) lacks the ceilings", k->host);
        return -1;
    }
    snprintf(why, n, "roofline of calibration on %s: a lower bound (real code often 10-100x more)",
             k->host);
    return fmax((fl > 0 ? fl : 0) / (peak * 1e9), (by > 0 ? by : 0) / (bw * 1e9));
}

/* The whole case from the time of one repetition: repetitions (at least --min-time), warm-up, check. */
static double case_time(const sl_plan *p, const sl_plan_case *c, double rep)
{
    int kernel = c->study->kind == SL_KERNEL;
    int warmup = p->cfg.warmup >= 0 ? p->cfg.warmup : (kernel ? 1 : 0);
    double min_time = p->cfg.min_time >= 0 ? p->cfg.min_time : (kernel && !p->cfg.quick ? 0.2 : 0.0);
    return fmax(rep * c->reps, min_time) + rep * (warmup + (kernel ? 1 : 0));
}

/* Training studies: how many epochs one repetition trains, so the plan says what a case's time covers. */
static void add_epochs(const sl_plan *p, sl_plan_case *c)
{
    const sl_study *s = c->study;
    for (int i = 0; i < s->n_params && s->kind == SL_TRAINING; i++)
        if (!strcmp(s->params[i].name, "epochs")) {
            sl_opts o = {.n_params = p->cfg.n_params, .param_names = p->cfg.param_names,
                         .param_values = p->cfg.param_values};
            size_t len = strlen(c->basis);
            snprintf(c->basis + len, sizeof c->basis - len, "; %s epochs per rep%s",
                     sl_param_str(&o, s, "epochs"), p->cfg.quick ? " (fewer with --quick)" : "");
        }
}

void sl_plan_estimate(sl_plan *p)
{
    known k = {.cases = json_array()};
    if (p->calibration)
        walk(&k, p->calibration, 0);
    else {
        walk(&k, "results/latest", 0);
        walk(&k, p->cfg.out, 0);
    }
    for (int i = 0; i < p->n; i++) {
        sl_plan_case *c = &p->cases[i];
        json_t *r = measured(&k, c);
        double med = r ? json_number_value(json_object_get(json_object_get(r, "stats"), "median_s")) : NAN;
        if (med > 0) {
            const char *h = json_string_value(json_object_get(json_object_get(r, "env"), "host"));
            c->est_s = case_time(p, c, med);
            snprintf(c->basis, sizeof c->basis, "measured before on %s: median %.3g s per rep", h ? h : "?",
                     med);
        } else {
            double rep = roofline_rep(&k, p, c, c->basis, sizeof c->basis);
            c->est_s = rep >= 0 ? case_time(p, c, rep) : -1;
            c->bound = rep >= 0;
        }
        add_epochs(p, c);
    }
    if (p->calibration && !k.ceilings && json_array_size(k.cases) == 0)
        fprintf(stderr, "speedlab: plan: --calibration %s: no calibration or case record found there\n",
                p->calibration);
    json_decref(k.cases);
    json_decref(k.ceilings);
}
