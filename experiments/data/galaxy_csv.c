/* experiments/data/galaxy_csv.c: the galaxy CSV reader (see galaxy_csv.h). Files are read through zlib's
 * gzopen/gzgets, which inflate a gzip file and pass a plain one through unchanged (the same bytes reach
 * the parser either way, so a .csv and its .csv.gz give the same doubles). */
#include "galaxy_csv.h"
#include "gzopen_regular.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* zlib's input buffer (default 8 KiB): larger means fewer read() calls on the 11 MB training set. */
#define GZ_BUFFER (128u * 1024u)

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
    /* range first: (long)d of 1e39 or nan is undefined behaviour (UBSan found it by fuzzing) */
    if (!(d >= (double)lo && d <= (double)hi) || d != (double)(long)d) {
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

/* X's rows moved to a 64-byte aligned block at GALAXY_ROW_STRIDE, the pad zeroed: every row starts on
 * a cache line, so the kernels' vector loads of X (up to 64 bytes) never straddle two lines (5-7 % of a
 * gradient call), and consecutive rows fall in different L1 sets (galaxy_csv.h). */
static int align_rows(galaxy_set *s)
{
    const long ldx = GALAXY_ROW_STRIDE;
    double *a = aligned_alloc(64, (size_t)s->m * (size_t)ldx * sizeof(double)); /* 8 * ldx: whole lines */
    if (!a) return -1;
    for (long t = 0; t < s->m; t++) {
        memcpy(a + t * ldx, s->X + t * GALAXY_PIXELS, GALAXY_PIXELS * sizeof(double));
        memset(a + t * ldx + GALAXY_PIXELS, 0, (size_t)(ldx - GALAXY_PIXELS) * sizeof(double));
    }
    free(s->X);
    s->X = a;
    s->ldx = ldx;
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* After a gzgets: -1 with a message if zlib met a broken stream (bad data, a gzip file cut short, a bad
 * CRC, a read error); 0 if all is well so far. A gzip file cut short still hands out the bytes before the
 * cut, so this is asked after every line, before the line is parsed. */
static int stream_error(gzFile f, const char *path, long line, char *err, size_t errlen)
{
    int errnum;
    const char *zmsg = gzerror(f, &errnum);
    if (errnum == Z_OK)
        return 0;
    size_t plen = strlen(path); /* zlib prefixes its message with the path; ours already starts with it */
    if (strncmp(zmsg, path, plen) == 0 && strncmp(zmsg + plen, ": ", 2) == 0)
        zmsg += plen + 2;
    else if (strncmp(zmsg, "<fd:", 4) == 0 && strstr(zmsg, ": ")) /* opened by gzdopen: "<fd:N>: " */
        zmsg = strstr(zmsg, ": ") + 2;
    if (errnum == Z_ERRNO)
        snprintf(err, errlen, "%s:%ld: read error: %s", path, line, strerror(errno));
    else
        snprintf(err, errlen, "%s:%ld: corrupt gzip stream: %s (zlib): the file is truncated or damaged "
                 "(want a whole gzip file: `gzip -t` checks one)", path, line, zmsg);
    return -1;
}

/* The file's bytes in chunks of zlib's output. Lines are cut here with memchr rather than by gzgets,
 * which ends its string at the first NUL byte: a NUL inside a line then hid the rest of it (two rows
 * joined by a NUL loaded as one). Every byte now reaches the parser, which refuses a NUL. */
typedef struct gz_reader {
    gzFile f;
    unsigned char chunk[64 * 1024];
    size_t pos, end;
} gz_reader;

/* Appends k bytes to *buf (length *len, capacity *cap), keeping room for a '\0'; -1 when out of memory. */
static int append(char **buf, size_t *len, size_t *cap, const unsigned char *p, size_t k)
{
    if (*cap - *len < k + 1) {
        size_t ncap = *cap ? *cap : 8192;
        while (ncap - *len < k + 1) ncap *= 2;
        char *nb = realloc(*buf, ncap);
        if (!nb) return -1;
        *buf = nb, *cap = ncap;
    }
    memcpy(*buf + *len, p, k);
    *len += k;
    (*buf)[*len] = '\0';
    return 0;
}

/* Reads one line (with its '\n', if any) into *buf, growing it: its length in bytes (NULs included),
 * 0 at the end, -1 when out of memory. Errors of the stream are left to stream_error. */
static long gz_line(gz_reader *r, char **buf, size_t *cap)
{
    size_t len = 0;
    for (;;) {
        if (r->pos == r->end) {
            int got = gzread(r->f, r->chunk, sizeof r->chunk);
            if (got <= 0) { /* the end (or an error) */
                if (*buf) (*buf)[len] = '\0';
                return (long)len;
            }
            r->pos = 0, r->end = (size_t)got;
        }
        const unsigned char *p = r->chunk + r->pos;
        const unsigned char *nl = memchr(p, '\n', r->end - r->pos);
        size_t k = nl ? (size_t)(nl - p) + 1 : r->end - r->pos;
        if (append(buf, &len, cap, p, k)) return -1;
        r->pos += k;
        if (nl) return (long)len;
    }
}

int galaxy_csv_find(const char *dir, const char *name, char *path, size_t n)
{
    int k = snprintf(path, n, "%s/%s.csv", dir, name);
    if (k < 0 || (size_t)k + 3 >= n) return -1;
    if (access(path, R_OK) == 0) return 0;
    strcat(path, ".gz");
    return access(path, R_OK) == 0 ? 0 : -1;
}

int galaxy_csv_load(const char *path, galaxy_set *out, char *err, size_t errlen)
{
    const char *why;
    gzFile f = data_gzopen_regular(path, &why);
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, why);
        return -1;
    }
    gzbuffer(f, GZ_BUFFER); /* must come before the first read */
    if (ends_with(path, ".gz") && gzdirect(f)) {
        snprintf(err, errlen, "%s: not a gzip file (no gzip header): want gzip-compressed rows "
                 "label,p0,...,p%d, or a plain CSV named .csv", path, GALAXY_PIXELS - 1);
        gzclose(f);
        return -1;
    }
    size_t cap = 0, len = 0;
    char *buf = NULL;
    galaxy_set s = {0};
    long capm = 0, line = 0, n;
    int rc = 0;
    gz_reader *rd = malloc(sizeof *rd);
    if (!rd) { snprintf(err, errlen, "%s: out of memory", path); gzclose(f); return -1; }
    *rd = (gz_reader){.f = f};
    while ((n = gz_line(rd, &buf, &cap)) != 0) {
        line++;
        if (n < 0) { snprintf(err, errlen, "%s:%ld: out of memory for the line", path, line); rc = -1; break; }
        if (stream_error(f, path, line, err, errlen)) { rc = -1; break; }
        len = (size_t)n;
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
        if (len == 0) continue; /* blank lines (a trailing newline) are not rows */
        const char *nul = memchr(buf, '\0', len);
        if (nul) {
            snprintf(err, errlen, "%s:%ld: a NUL byte at column %ld: the file is binary or damaged (want text "
                     "rows label,p0,...,p%d)", path, line, (long)(nul - buf) + 1, GALAXY_PIXELS - 1);
            rc = -1;
            break;
        }
        if (s.m == capm) {
            capm = capm ? 2 * capm : 1024;
            double *nx = realloc(s.X, (size_t)capm * GALAXY_PIXELS * sizeof(double));
            unsigned char *ny = nx ? realloc(s.y, (size_t)capm) : NULL;
            if (nx) s.X = nx;
            if (!ny) { snprintf(err, errlen, "%s:%ld: out of memory", path, line); rc = -1; break; }
            s.y = ny;
        }
        if (parse_row(buf, s.X + (size_t)s.m * GALAXY_PIXELS, s.y + s.m, path, line, err, errlen)) {
            rc = -1;
            /* In a gzip file a bad row may be damage zlib has not caught yet: read on to the end (and
             * its CRC); if the stream is broken, that is the error to report. */
            if (!gzdirect(f)) {
                while (gzread(f, buf, (unsigned)cap) > 0) {}
                stream_error(f, path, line, err, errlen);
            }
            break;
        }
        s.m++;
    }
    if (rc == 0 && stream_error(f, path, line + 1, err, errlen)) rc = -1; /* broken before any byte of a line */
    free(buf);
    free(rd);
    gzclose(f);
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
    s->X = NULL; s->y = NULL; s->m = 0; s->ldx = 0;
}
