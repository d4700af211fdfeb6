/* experiments/data/galaxy_csv.c: the galaxy CSV reader (see galaxy_csv.h). */
#include "galaxy_csv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses one integer field in [lo, hi] from *p up to ',' or end of line; 0 on success. */
static int field(const char **p, long lo, long hi, long *v, const char *path, long line, int col,
                 const char *what, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double d = strtod(*p, &end);
    if (end == *p || (*end != ',' && *end != '\n' && *end != '\r' && *end != '\0') || errno) {
        snprintf(err, errlen, "%s:%ld: field %d (%s) is not a number (want an integer %ld-%ld)",
                 path, line, col, what, lo, hi);
        return -1;
    }
    if (d != (double)(long)d || d < lo || d > hi) {
        snprintf(err, errlen, "%s:%ld: field %d (%s) is %g, out of range (want an integer %ld-%ld)",
                 path, line, col, what, d, lo, hi);
        return -1;
    }
    *v = (long)d;
    *p = end;
    return 0;
}

static int parse_row(const char *buf, double *x, unsigned char *y, const char *path, long line,
                     char *err, size_t errlen)
{
    int cols = 1;
    for (const char *c = buf; *c && *c != '\n'; c++) cols += (*c == ',');
    if (cols != GALAXY_PIXELS + 1) {
        snprintf(err, errlen, "%s:%ld: %d fields, want %d (label,p0,...,p%d)", path, line, cols,
                 GALAXY_PIXELS + 1, GALAXY_PIXELS - 1);
        return -1;
    }
    const char *p = buf;
    long v;
    if (field(&p, 0, GALAXY_CLASSES - 1, &v, path, line, 1, "label", err, errlen)) return -1;
    *y = (unsigned char)v;
    for (int k = 0; k < GALAXY_PIXELS; k++) {
        p++; /* the comma */
        char name[16];
        snprintf(name, sizeof name, "p%d", k);
        if (field(&p, 0, 255, &v, path, line, k + 2, name, err, errlen)) return -1;
        x[k] = (double)v / 255.0;
    }
    return 0;
}

/* X moved to a 64-byte aligned block (a row is 8 KB, so every row starts on a cache line): the
 * kernels' vector loads of X (up to 64 bytes) then never straddle two lines (5-7 % of a gradient call). */
static int align_rows(galaxy_set *s)
{
    size_t bytes = (size_t)s->m * GALAXY_PIXELS * sizeof(double);
    double *a = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!a) return -1;
    memcpy(a, s->X, bytes);
    free(s->X);
    s->X = a;
    return 0;
}

int galaxy_csv_load(const char *path, galaxy_set *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 0, len = 0;
    char *buf = NULL;
    galaxy_set s = {0};
    long capm = 0, line = 0;
    ssize_t n;
    int rc = 0;
    while ((n = getline(&buf, &cap, f)) >= 0) {
        line++;
        len = (size_t)n;
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
        if (len == 0) continue; /* blank lines (a trailing newline) are not rows */
        if (s.m == capm) {
            capm = capm ? 2 * capm : 1024;
            double *nx = realloc(s.X, (size_t)capm * GALAXY_PIXELS * sizeof(double));
            unsigned char *ny = nx ? realloc(s.y, (size_t)capm) : NULL;
            if (nx) s.X = nx;
            if (!ny) { snprintf(err, errlen, "%s:%ld: out of memory", path, line); rc = -1; break; }
            s.y = ny;
        }
        if (parse_row(buf, s.X + (size_t)s.m * GALAXY_PIXELS, s.y + s.m, path, line, err, errlen)) { rc = -1; break; }
        s.m++;
    }
    free(buf);
    fclose(f);
    if (rc == 0 && s.m == 0) {
        snprintf(err, errlen, "%s: empty file (want rows label,p0,...,p%d)", path, GALAXY_PIXELS - 1);
        rc = -1;
    }
    if (rc == 0 && align_rows(&s)) {
        snprintf(err, errlen, "%s: out of memory for %ld rows", path, s.m);
        rc = -1;
    }
    if (rc) { galaxy_set_free(&s); return -1; }
    *out = s;
    return 0;
}

void galaxy_set_free(galaxy_set *s)
{
    free(s->X);
    free(s->y);
    s->X = NULL; s->y = NULL; s->m = 0;
}
