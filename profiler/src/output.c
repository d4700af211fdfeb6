/*
 * Outputs: the JSON profile (schema in docs/profile-schema.md, written with jansson) and the
 * TimerStats text table.
 */
#include "prof_internal.h"
#include "safefile.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *jns(double ns) { return json_integer((json_int_t)llround(ns)); }

/* A name as a JSON string: any bytes, written as valid UTF-8 (utf8.c), never dropped (jansson's
 * json_string refuses invalid UTF-8 and returns NULL, which an array or object then leaves out). */
static json_t *jname(const char *name)
{
    char *c = prof_utf8_clean(name, 0);
    json_t *j = c ? json_string(c) : NULL;
    free(c);
    return j ? j : json_string("\xef\xbf\xbd");
}

static json_t *region_json(const prof_mnode *n)
{
    json_t *r = json_object();
    const char *names[PROF_MAX_DEPTH + 1];
    int k = 0;
    for (const prof_mnode *p = n; p && p->depth >= 0 && k <= PROF_MAX_DEPTH; p = p->parent)
        names[k++] = p->name;
    json_t *path = json_array();
    while (k > 0)
        json_array_append_new(path, jname(names[--k]));
    json_object_set_new(r, "path", path);
    json_object_set_new(r, "name", jname(n->name));
    json_object_set_new(r, "depth", json_integer(n->depth));
    json_object_set_new(r, "calls", json_integer(n->st.calls));
    json_object_set_new(r, "incl_ns", jns(n->st.incl_ns));
    json_object_set_new(r, "self_ns", jns(n->st.self_ns));
    json_object_set_new(r, "mean_ns", json_real(n->st.mean_ns));
    json_object_set_new(r, "std_ns", json_real(n->st.std_ns));
    json_object_set_new(r, "min_ns", jns(n->st.min_ns));
    json_object_set_new(r, "max_ns", jns(n->st.max_ns));
    json_object_set_new(r, "threads", json_integer(n->st.threads));
    if (n->has_device)
        json_object_set_new(r, "device_ms", json_real(n->st.device_ms));
    if (n->ctr_valid && prof_g.ctr_n > 0) {
        json_t *c = json_object();
        for (int i = 0; i < prof_g.ctr_n; i++)
            json_object_set_new(c, prof_g.ctr_names[i], json_integer(n->ctr[i]));
        json_object_set_new(r, "counters", c);
    }
    if (n->has_rss) {
        json_object_set_new(r, "rss_peak_bytes", json_integer((json_int_t)n->rss_peak));
        json_object_set_new(r, "rss_end_bytes", json_integer((json_int_t)n->rss_end));
    }
    return r;
}

static json_t *memory_json(void)
{
    json_t *mem = json_object(), *ts = json_array(), *rss = json_array();
    json_object_set_new(mem, "interval_ms", json_real(prof_sampler_interval()));
    uint64_t n = prof_samples_count();
    for (uint64_t i = 0; i < n; i++) {
        double t;
        size_t b = prof_samples_get(i, &t);
        json_array_append_new(ts, json_real(t));
        json_array_append_new(rss, json_integer((json_int_t)b));
    }
    json_object_set_new(mem, "t_s", ts);
    json_object_set_new(mem, "rss_bytes", rss);
    return mem;
}

static json_t *profile_json(void)
{
    prof_merged *m = prof_merge();
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string("speedlab-profile"));
    json_object_set_new(o, "schema_version", json_integer(PROF_SCHEMA_VERSION));
    json_object_set_new(o, "clock", json_string(prof_clock_name()));
    json_object_set_new(o, "wall_ns", jns(prof_wall_ns()));
    json_object_set_new(o, "threads", json_integer(m->threads));
    json_t *ctr = json_array(), *absent = json_array();
    for (int i = 0; i < prof_counter_count(); i++)
        json_array_append_new(ctr, json_string(prof_counter_name(i)));
    for (int i = 0; i < prof_counter_absent_count(); i++)
        json_array_append_new(absent, json_pack("{s:s,s:s}", "name", prof_counter_absent_name(i), "why",
                                                prof_counter_absent_why(i)));
    json_object_set_new(o, "counters", ctr);
    json_object_set_new(o, "counters_absent", absent);
    json_object_set_new(o, "errors", json_integer(prof_errors()));
    json_t *regions = json_array();
    for (int i = 0; i < m->n; i++)
        json_array_append_new(regions, region_json(m->all[i]));
    json_object_set_new(o, "regions", regions);
    if (prof_sampler_ran())
        json_object_set_new(o, "memory", memory_json());
    prof_merged_free(m);
    return o;
}

char *prof_json(void)
{
    json_t *o = profile_json();
    char *s = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

int prof_write_json(const char *path)
{
    if (!path)
        return -1;
    /* whole beside it, then renamed; a link, FIFO or device there is refused (common/safefile.h) */
    char tmp[4200];
    const char *why = NULL;
    FILE *f = sf_create(path, tmp, sizeof tmp, &why);
    json_t *o = f ? profile_json() : NULL;
    int rc = f ? json_dumpf(o, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : -1;
    json_decref(o);
    if (f && rc != 0) {
        fclose(f);
        unlink(tmp);
        why = "writing it failed (disk full?)";
    } else if (f)
        rc = sf_commit(f, tmp, path, &why);
    if (rc != 0)
        fprintf(stderr, "prof: cannot write the profile to \"%s\": %s\n", path, why);
    return rc == 0 ? 0 : -1;
}

/* A duration with a unit that keeps 3-4 significant digits. */
static const char *fmt_time(char *buf, size_t len, double ns)
{
    if (ns < 1e3)
        snprintf(buf, len, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, len, "%.2f us", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.3f s", ns / 1e9);
    return buf;
}

void prof_report(FILE *out)
{
    if (!out)
        return;
    prof_merged *m = prof_merge();
    double wall = prof_wall_ns();
    fprintf(out, "TimerStats (clock: %s, wall %.3f s, %d thread%s, %ld nesting error%s)\n", prof_clock_name(),
            wall / 1e9, m->threads, m->threads == 1 ? "" : "s", prof_errors(), prof_errors() == 1 ? "" : "s");
    fprintf(out, "%-40s %10s %11s %11s %11s %11s %11s %11s %7s\n", "region", "calls", "total", "self", "mean",
            "std", "min", "max", "% run");
    int multi = 0;
    for (int i = 0; i < m->n; i++) {
        const prof_mnode *n = m->all[i];
        multi |= n->st.threads > 1;
        char label[64], b[7][24];
        int ind = n->depth * 2 > 20 ? 20 : n->depth * 2;
        char *name = prof_utf8_clean(n->name, 1); /* no terminal escape or line break from a name */
        snprintf(label, sizeof label, "%*s%s%s", ind, "", name ? name : "?", n->st.threads > 1 ? " *" : "");
        free(name);
        /* a long name is cut to the column: never inside a UTF-8 sequence */
        for (unsigned char *p = (unsigned char *)label; *p;) {
            int len = prof_utf8_len(p);
            if (len == 0) {
                *p = 0;
                break;
            }
            p += len;
        }
        fprintf(out, "%-40s %10ld %11s %11s %11s %11s %11s %11s %6.1f%%\n", label, n->st.calls,
                fmt_time(b[0], 24, n->st.incl_ns), fmt_time(b[1], 24, n->st.self_ns),
                fmt_time(b[2], 24, n->st.mean_ns), fmt_time(b[3], 24, n->st.std_ns),
                fmt_time(b[4], 24, n->st.min_ns), fmt_time(b[5], 24, n->st.max_ns),
                wall > 0 ? 100.0 * n->st.incl_ns / wall : 0.0);
    }
    if (multi)
        fputs("(* several threads: total and self are sums of per-thread times)\n", out);
    prof_merged_free(m);
}
