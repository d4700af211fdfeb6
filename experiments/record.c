/*
 * record.c: the study-facing helpers of study.h (errors, record fields) and the writing of
 * whole JSON Lines records.
 */
#include "record.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "interrupt.h"

/* ---- errors ---------------------------------------------------------------------------------- */

void sl_error_set(sl_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

/* (Parameters: experiments/params.c.) */

/* ---- the study's record fields ---------------------------------------------------------------- */

sl_record *sl_record_new(void)
{
    sl_record *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->metrics = json_object();
    r->series = json_object();
    r->notes = json_array();
    r->h2d_ms = json_array();
    r->kernel_ms = json_array();
    r->d2h_ms = json_array();
    r->region_work = json_object();
    return r;
}

void sl_record_free(sl_record *r)
{
    if (!r)
        return;
    json_decref(r->metrics);
    json_decref(r->series);
    json_decref(r->notes);
    json_decref(r->h2d_ms);
    json_decref(r->kernel_ms);
    json_decref(r->d2h_ms);
    json_decref(r->region_work);
    free(r->reduced_reason);
    free(r);
}

void sl_record_timing(sl_record *r, int on)
{
    r->timing = on;
}

int sl_record_is_timed(const sl_record *r)
{
    return r && r->timing;
}

json_t *sl_json_num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

void sl_record_metric(sl_record *r, const char *name, double value)
{
    if (r && name)
        json_object_set_new(r->metrics, name, sl_json_num(value));
}

void sl_record_series(sl_record *r, const char *name, const double *values, int n)
{
    if (!r || !name)
        return;
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, sl_json_num(values[i]));
    json_object_set_new(r->series, name, a); /* the last repetition's series wins */
}

void sl_record_note(sl_record *r, const char *text)
{
    if (!r || !text)
        return;
    /* run() may be called many times (check, warm-up, reps): keep each note once. */
    size_t i;
    json_t *v;
    json_array_foreach(r->notes, i, v)
        if (strcmp(json_string_value(v), text) == 0)
            return;
    json_array_append_new(r->notes, json_string(text));
}

void sl_record_reduced(sl_record *r, const char *reason)
{
    if (!r)
        return;
    free(r->reduced_reason);
    r->reduced_reason = strdup(reason ? reason : "reduced (no reason given)");
}

void sl_record_work(sl_record *r, double flops, double bytes)
{
    /* flops 0 is a byte-only study's count (pipeline's loaders): its bytes still replace the declared. */
    if (r && flops >= 0 && bytes > 0) {
        r->work_flops = flops;
        r->work_bytes = bytes;
    }
}

void sl_record_region_work(sl_record *r, const char *region, double flops, double bytes,
                           const char *precision)
{
    if (!r || !region || !(flops > 0) || !(bytes > 0))
        return;
    json_t *w = json_object();
    json_object_set_new(w, "flops", json_real(flops));
    json_object_set_new(w, "bytes", json_real(bytes));
    json_object_set_new(w, "precision", json_string(precision ? precision : "fp32"));
    json_object_set_new(r->region_work, region, w);
}

void sl_record_phases(sl_record *r, double h2d_ms, double kernel_ms, double d2h_ms)
{
    if (!r || !r->timing)
        return;
    json_array_append_new(r->h2d_ms, sl_json_num(h2d_ms));
    json_array_append_new(r->kernel_ms, sl_json_num(kernel_ms));
    json_array_append_new(r->d2h_ms, sl_json_num(d2h_ms));
}

void sl_record_merge(const sl_record *r, json_t *out)
{
    json_t *work = json_object_get(out, "work");
    double declared = work ? json_number_value(json_object_get(work, "flops")) : 0;
    if (r->work_flops > 0 && declared > 0 && (r->work_flops != declared ||
        r->work_bytes != json_number_value(json_object_get(work, "bytes")))) {
        json_object_set_new(work, "flops", json_real(r->work_flops));
        json_object_set_new(work, "bytes", json_real(r->work_bytes));
        json_object_set_new(work, "scale", json_real(r->work_flops / declared));
    } else if (r->work_flops > 0 && declared == 0 && work && !json_object_get(work, "flops")) {
        /* A study whose work is known only after the run (galaxy: CG's calls) declares none and
         * counts it in finish: the record's work is that count, with no `scale`. */
        json_object_set_new(work, "flops", json_real(r->work_flops));
        if (r->work_bytes > 0)
            json_object_set_new(work, "bytes", json_real(r->work_bytes));
    } else if (r->work_flops == 0 && r->work_bytes > 0 && declared == 0 && work &&
               json_number_value(json_object_get(work, "bytes")) > 0) {
        /* A study that declares bytes only (pipeline): the variant's own byte count (gzip reads the
         * compressed file) is the same job counted in its own bytes, so no `scale`. */
        json_object_set_new(work, "bytes", json_real(r->work_bytes));
    }
    if (r->reduced_reason) {
        json_object_set_new(out, "reduced", json_true());
        json_object_set_new(out, "reduced_reason", json_string(r->reduced_reason));
    }
    if (json_array_size(r->kernel_ms) > 0) {
        json_t *p = json_object();
        json_object_set(p, "h2d_ms", r->h2d_ms);
        json_object_set(p, "kernel_ms", r->kernel_ms);
        json_object_set(p, "d2h_ms", r->d2h_ms);
        json_object_set_new(out, "phases", p);
    }
    if (json_object_size(r->metrics) > 0)
        json_object_set(out, "metrics", r->metrics);
    if (json_object_size(r->series) > 0)
        json_object_set(out, "series", r->series);
    if (json_object_size(r->region_work) > 0)
        json_object_set(out, "region_work", r->region_work);
    if (json_array_size(r->notes) > 0)
        json_object_set(out, "notes", r->notes);
}

/* ---- whole records ---------------------------------------------------------------------------- */

void sl_iso_time(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

json_t *sl_record_header(const char *kind, const char *run_id, json_t *env)
{
    char now[32];
    sl_iso_time(now, sizeof now);
    json_t *o = json_object();
    json_object_set_new(o, "schema", json_string(SL_SCHEMA_NAME));
    json_object_set_new(o, "schema_version", json_integer(SL_SCHEMA_VERSION));
    json_object_set_new(o, "kind", json_string(kind));
    json_object_set_new(o, "run_id", json_string(run_id));
    json_object_set_new(o, "time", json_string(now));
    if (env)
        json_object_set(o, "env", env);
    return o;
}

/* Writes line (n bytes, ending in '\n') at the end of fd, opened O_APPEND, or nothing at all. A short
 * write (a full disk, a file size limit) would leave half a line for the next record to be glued onto,
 * losing both: so every byte is checked, and on any failure the file is truncated back to
 * where it ended before, the last whole record. The file is the run's own, written by this process
 * alone, so its end before the write is where this record starts. */
static int append_line(int fd, const char *line, size_t n, sl_error *err)
{
    off_t start = lseek(fd, 0, SEEK_END);
    if (start < 0) {
        sl_error_set(err, "results.jsonl: cannot find its end: %s", strerror(errno));
        return -1;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, line + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) { /* 0 never happens for a regular file; treat it as the disk being full */
            int saved = w < 0 ? errno : ENOSPC;
            int cut = ftruncate(fd, start);
            sl_error_set(err, "writing a record: %s after %zu of %zu bytes%s; the record is not in the "
                         "file (free space and run the case again)", strerror(saved), done, n,
                         cut == 0 ? ", cut back to the last whole record" : " (and it could not be cut back)");
            return -1;
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0 && errno != EINVAL) {
        int saved = errno;
        /* Not durable: the record might vanish later, so it is not counted as written; cut it off. */
        int cut = ftruncate(fd, start);
        sl_error_set(err, "fsync of results.jsonl: %s; the record is %s", strerror(saved),
                     cut == 0 ? "removed from the file" : "in the file but may not survive a crash");
        return -1;
    }
    return 0;
}

int sl_record_append(int fd, json_t *rec, sl_error *err)
{
    char *text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    if (!text) {
        sl_error_set(err, "cannot encode the record as JSON (out of memory?)");
        return -1;
    }
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        sl_error_set(err, "out of memory writing a record");
        return -1;
    }
    line[n] = '\n';
    line[n + 1] = '\0';

    /* Hold SIGINT off so the line is written whole and synced, then let a pending one act. */
    sigset_t old;
    sl_interrupt_hold(&old);
    int rc = append_line(fd, line, n + 1, err);
    sl_interrupt_release(&old);
    free(line);
    return rc;
}
