/*
 * record.h: the runner's side of results records (docs/results-schema.md).
 *
 * A study fills an opaque `sl_record` through the sl_record_* calls of study.h; the runner turns it into
 * the JSON fields of the case record and appends whole lines to results.jsonl.
 */
#ifndef SL_RECORD_H
#define SL_RECORD_H

#include <jansson.h>

#include "progress.h"
#include "study.h"

#define SL_SCHEMA_NAME "speedlab-results"
#define SL_SCHEMA_VERSION 1

struct sl_record {
    json_t *metrics;  /* object: name -> number */
    json_t *series;   /* object: name -> array (the last call wins) */
    json_t *notes;    /* array of distinct strings */
    char *reduced_reason;
    double work_flops, work_bytes; /* 0: unset (the study's declared work stands) */
    int timing;       /* phases are kept only while the runner times repetitions */
    json_t *h2d_ms, *kernel_ms, *d2h_ms; /* arrays, one value per timed repetition */
    json_t *region_work; /* object: region name -> {flops, bytes, precision} per call */
    sl_progress *progress; /* the case's status line (progress.c), or NULL off a terminal */
};

sl_record *sl_record_new(void);
void sl_record_free(sl_record *r);
/* Phases are recorded only between sl_record_timing(r, 1) and sl_record_timing(r, 0). */
void sl_record_timing(sl_record *r, int on);
/* Adds the study's fields (metrics, series, notes, phases, reduced) to the case record `out`. */
void sl_record_merge(const sl_record *r, json_t *out);

/* A JSON number, or null when x is NaN or infinite (JSON has no such numbers). */
json_t *sl_json_num(double x);
/* The common fields of every record (schema, version, kind, run_id, time, env); returns a new object. */
json_t *sl_record_header(const char *kind, const char *run_id, json_t *env);
/* ISO 8601 UTC time of now into buf ("2026-11-22T14:12:46Z"). */
void sl_iso_time(char *buf, size_t n);

/* Appends `rec` to fd (opened O_APPEND) as one compact line with write() and fsync(); SIGINT and
 * SIGTERM are held off while it writes, so an interrupt never leaves half a line, and a short write
 * (full disk) is cut back to the last whole record. Returns 0 when the record is on disk, or -1 with
 * err and the file as it was. */
int sl_record_append(int fd, json_t *rec, sl_error *err);

#endif
