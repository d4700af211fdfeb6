/*
 * experiments/data/idx.c: the IDX (MNIST-format) reader declared in idx.h.
 *
 * An IDX file is a big-endian header (magic 0x0000TTDD: element type TT, DD dimensions, then one 32-bit
 * size per dimension) followed by the elements. zlib's gzopen/gzread read gzip files and, transparently,
 * raw ones, so one code path serves both. Every function either returns complete, checked data or
 * returns -1 with a message naming the file, and leaves nothing allocated behind.
 */
#define _POSIX_C_SOURCE 200809L /* access() */
#include "idx.h"
#include "gzopen_regular.h"
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IDX_IMAGES_MAGIC 0x00000803u
#define IDX_LABELS_MAGIC 0x00000801u
#define IDX_UBYTE 0x08
#define IDX_MAX_SIDE 4096

/* gzread takes an unsigned count and returns an int: ask for at most 1 GiB per call. */
#define READ_CHUNK (1u << 30)
/* The payload buffer starts at this size (or the promised size, if smaller) and doubles as data arrives,
 * so a corrupt header promising terabytes costs only what the file really holds. 64 MiB covers the whole
 * Fashion-MNIST training set (47 MB) in one allocation. */
#define FIRST_ALLOC ((size_t)64 << 20)
/* zlib's input buffer (default 8 KiB): larger means fewer read() calls on the 26 MB training file. */
#define GZ_BUFFER (256u << 10)

/* Counts are 32-bit in the header and returned as long. */
_Static_assert(LONG_MAX >= UINT32_MAX, "an IDX count must fit in a long");


/* One open file and where its error message goes. */
typedef struct reader {
    gzFile f;
    const char *path;
    char *msg;
    size_t len;
} reader;

/* Writes "PATH: <formatted text>" to the caller's message buffer; returns -1 for `return fail(...)`. */
static int fail(const reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const reader *r, const char *fmt, ...)
{
    if (!r->msg || r->len == 0)
        return -1;
    int k = snprintf(r->msg, r->len, "%s: ", r->path);
    if (k >= 0 && (size_t)k < r->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->msg + k, r->len - (size_t)k, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int reader_open(reader *r, const char *path, char *msg, size_t len)
{
    *r = (reader){.path = path, .msg = msg, .len = len};
    const char *why;
    if (!(r->f = data_gzopen_regular(path, &why)))
        return fail(r, "cannot open: %s", why);
    gzbuffer(r->f, GZ_BUFFER); /* must come before the first read */
    return 0;
}

/* After a short or failed gzread: -1 with zlib's message if the stream is broken (bad data, a gzip file
 * cut short, a read error), 0 if it simply ended. */
static int check_stream(const reader *r)
{
    int errnum;
    const char *zmsg = gzerror(r->f, &errnum);
    if (errnum == Z_OK)
        return 0;
    /* zlib prefixes its message with the path; ours already starts with it. */
    size_t plen = strlen(r->path);
    if (strncmp(zmsg, r->path, plen) == 0 && strncmp(zmsg + plen, ": ", 2) == 0)
        zmsg += plen + 2;
    else if (strncmp(zmsg, "<fd:", 4) == 0 && strstr(zmsg, ": ")) /* opened by gzdopen: "<fd:N>: " */
        zmsg = strstr(zmsg, ": ") + 2;
    if (errnum == Z_ERRNO)
        return fail(r, "read error: %s", zmsg);
    return fail(r, "corrupt gzip stream: %s (zlib)", zmsg);
}

/* Reads up to `want` bytes; *got < want means the file ended there. -1 (message set) on a broken stream. */
static int read_fully(const reader *r, uint8_t *buf, size_t want, size_t *got)
{
    *got = 0;
    while (*got < want) {
        size_t ask = want - *got < READ_CHUNK ? want - *got : READ_CHUNK;
        int k = gzread(r->f, buf + *got, (unsigned)ask);
        if (k > 0)
            *got += (size_t)k;
        if (k < 0 || (size_t)k < ask)
            return check_stream(r); /* gzread only comes back short at the end or on an error */
    }
    return 0;
}

static const char *type_name(int t)
{
    switch (t) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0b: return "short";
    case 0x0c: return "int";
    case 0x0d: return "float";
    case 0x0e: return "double";
    default: return "not an IDX type";
    }
}

static const char *kind_name(uint32_t magic)
{
    return magic == IDX_IMAGES_MAGIC ? "an IDX image file" : "an IDX label file";
}

/* The magic number is wrong: say which part (element type, dimension count, or not IDX at all). */
static int bad_magic(const reader *r, const uint8_t *h, uint32_t want)
{
    uint32_t m = be32(h);
    int is_idx = h[0] == 0 && h[1] == 0;
    if (is_idx && h[2] != IDX_UBYTE)
        return fail(r, "element type 0x%02x (%s), expected 0x%02x (unsigned byte)", h[2], type_name(h[2]),
                    IDX_UBYTE);
    if (is_idx)
        return fail(r, "magic number 0x%08x, expected 0x%08x (%s); the file has %d dimensions, expected %d",
                    (unsigned)m, (unsigned)want, kind_name(want), h[3], (int)(want & 0xff));
    return fail(r, "magic number 0x%08x, expected 0x%08x (%s); not an IDX file", (unsigned)m, (unsigned)want,
                kind_name(want));
}

/* Reads and checks the magic number, then the `ndims` sizes that follow it. */
static int read_header(const reader *r, uint32_t magic, uint32_t *dims, int ndims)
{
    uint8_t h[4 + 4 * 3];
    size_t want = 4 + 4 * (size_t)ndims, got;
    if (read_fully(r, h, 4, &got))
        return -1;
    if (got == 4 && be32(h) != magic)
        return bad_magic(r, h, magic);
    if (got == 4) {
        size_t rest;
        if (read_fully(r, h + 4, want - 4, &rest))
            return -1;
        got += rest;
    }
    if (got < want)
        return fail(r, "expected a %zu-byte IDX header, found %zu bytes", want, got);
    for (int i = 0; i < ndims; i++)
        dims[i] = be32(h + 4 + 4 * i);
    return 0;
}

/* After the payload the file must end: anything more means the header and the data disagree. Reading
 * on to the end also makes zlib check the gzip trailer (CRC and length). */
static int check_end(const reader *r, const char *what, size_t want)
{
    uint8_t buf[1 << 16];
    size_t extra = 0, got;
    do {
        if (read_fully(r, buf, sizeof buf, &got))
            return -1;
        extra += got;
    } while (got == sizeof buf);
    if (extra)
        return fail(r, "%zu trailing bytes after the %zu bytes of %s data the header promises, expected none",
                    extra, want, what);
    return 0;
}

/* Reads exactly `want` bytes of payload (`what`: "image" or "label") into a new buffer, then checks
 * that the file ends there. */
static int read_payload(const reader *r, size_t want, const char *what, uint8_t **out)
{
    size_t cap = want < FIRST_ALLOC ? want : FIRST_ALLOC, have = 0, got;
    uint8_t *buf = NULL;
    for (;;) {
        uint8_t *grown = realloc(buf, cap);
        if (!grown) {
            free(buf);
            return fail(r, "out of memory for %zu bytes of %s data", cap, what);
        }
        buf = grown;
        if (read_fully(r, buf + have, cap - have, &got)) {
            free(buf);
            return -1;
        }
        have += got;
        if (have < cap || cap == want)
            break;
        cap = want - cap < cap ? want : 2 * cap;
    }
    if (have < want) {
        free(buf);
        return fail(r, "expected %zu bytes of %s data, found %zu (file truncated)", want, what, have);
    }
    if (check_end(r, what, want)) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}

static int check_image_dims(const reader *r, const uint32_t *d)
{
    if (d[0] == 0)
        return fail(r, "header says 0 images, expected at least 1");
    if (d[1] == 0 || d[1] > IDX_MAX_SIDE || d[2] == 0 || d[2] > IDX_MAX_SIDE)
        return fail(r, "header says images of %lux%lu, expected 1 to %d rows and columns",
                    (unsigned long)d[1], (unsigned long)d[2], IDX_MAX_SIDE);
    if ((size_t)d[0] > SIZE_MAX / ((size_t)d[1] * d[2])) /* only possible with a 32-bit size_t */
        return fail(r, "header says %lu images of %lux%lu, too large for this machine", (unsigned long)d[0],
                    (unsigned long)d[1], (unsigned long)d[2]);
    return 0;
}

/* The bytes the file holds after decompression: a raw file's size, or a gzip file's ISIZE trailer (the
 * length modulo 2^32: exact below 4 GiB, and a mismatch still shows above). -1 when unknown. */
static long long stored_bytes(const char *path, int raw)
{
    const char *why;
    FILE *f = sf_open_read(path, SF_FOLLOW, &why); /* a regular file only, as the reader opened it */
    if (!f)
        return -1;
    long long n = -1;
    uint8_t t[4];
    if (raw) {
        if (fseeko(f, 0, SEEK_END) == 0)
            n = ftello(f);
    } else if (fseeko(f, -4, SEEK_END) == 0 && fread(t, 1, 4, f) == 4) {
        n = (long long)((uint32_t)t[3] << 24 | (uint32_t)t[2] << 16 | (uint32_t)t[1] << 8 | t[0]);
    }
    fclose(f);
    return n;
}

int idx_image_header(const char *path, long *n, int *rows, int *cols, char *msg, size_t len)
{
    *n = 0, *rows = 0, *cols = 0;
    reader r;
    if (reader_open(&r, path, msg, len))
        return -1;
    uint32_t d[3] = {0};
    int rc = read_header(&r, IDX_IMAGES_MAGIC, d, 3);
    if (rc == 0)
        rc = check_image_dims(&r, d);
    int raw = gzdirect(r.f);
    gzclose(r.f);
    if (rc)
        return -1;
    unsigned long long want = 16 + (unsigned long long)d[0] * d[1] * d[2];
    long long have = stored_bytes(path, raw);
    if (have >= 0 && (raw ? (unsigned long long)have != want : (unsigned long long)have != (want & 0xffffffffu)))
        return fail(&r, "header says %lu images of %lux%lu (%llu bytes with the header), but the file holds "
                        "%lld%s bytes", (unsigned long)d[0], (unsigned long)d[1], (unsigned long)d[2], want, have,
                    raw ? "" : " (gzip's length, modulo 2^32)");
    *n = (long)d[0], *rows = (int)d[1], *cols = (int)d[2];
    return 0;
}

int idx_load_images(const char *path, uint8_t **images, long *n, int *rows, int *cols, char *msg, size_t len)
{
    *images = NULL, *n = 0, *rows = 0, *cols = 0;
    reader r;
    if (reader_open(&r, path, msg, len))
        return -1;
    uint32_t d[3] = {0};
    uint8_t *buf = NULL;
    int rc = read_header(&r, IDX_IMAGES_MAGIC, d, 3);
    if (rc == 0)
        rc = check_image_dims(&r, d);
    if (rc == 0)
        rc = read_payload(&r, (size_t)d[0] * d[1] * d[2], "image", &buf);
    gzclose(r.f);
    if (rc)
        return -1;
    *images = buf, *n = (long)d[0], *rows = (int)d[1], *cols = (int)d[2];
    return 0;
}

/* -1 (message set) unless every label is below max_label. */
static int check_labels(const reader *r, const uint8_t *labels, long n, int max_label)
{
    for (long i = 0; i < n; i++)
        if (labels[i] >= max_label)
            return fail(r, "label at index %ld is %d, expected < %d", i, labels[i], max_label);
    return 0;
}

int idx_load_labels(const char *path, uint8_t **labels, long *n, int max_label, char *msg, size_t len)
{
    *labels = NULL, *n = 0;
    reader r;
    if (max_label < 1) {
        r = (reader){.path = path, .msg = msg, .len = len};
        return fail(&r, "max_label %d, expected at least 1", max_label);
    }
    if (reader_open(&r, path, msg, len))
        return -1;
    uint32_t d[1] = {0};
    uint8_t *buf = NULL;
    int rc = read_header(&r, IDX_LABELS_MAGIC, d, 1);
    if (rc == 0 && d[0] == 0)
        rc = fail(&r, "header says 0 labels, expected at least 1");
    if (rc == 0)
        rc = read_payload(&r, d[0], "label", &buf);
    if (rc == 0)
        rc = check_labels(&r, buf, (long)d[0], max_label);
    gzclose(r.f);
    if (rc) {
        free(buf);
        return -1;
    }
    *labels = buf, *n = (long)d[0];
    return 0;
}

/* Puts DIR/PREFIX-KIND[.gz] in path (the .gz name wins when both exist). 0 if one exists, else -1 with a
 * message listing both names and how to get the data. */
static int find_file(const char *dir, const char *prefix, const char *kind, char *path, size_t size, char *msg,
                     size_t len)
{
    int k = snprintf(path, size, "%s/%s-%s.gz", dir, prefix, kind);
    if (k < 0 || (size_t)k >= size) {
        snprintf(msg, len, "%s: directory name too long", dir);
        return -1;
    }
    if (access(path, F_OK) == 0)
        return 0;
    path[k - 3] = '\0'; /* drop ".gz" */
    if (access(path, F_OK) == 0)
        return 0;
    snprintf(msg, len, "%s: no %s-%s file: tried %s.gz and %s; " IDX_MISSING_HINT, dir, prefix, kind, path, path);
    return -1;
}

int idx_load_split(const char *dir, const char *prefix, int max_label, idx_set *out, char *msg, size_t len)
{
    *out = (idx_set){0};
    char ipath[4096], lpath[4096];
    if (find_file(dir, prefix, "images-idx3-ubyte", ipath, sizeof ipath, msg, len) ||
        find_file(dir, prefix, "labels-idx1-ubyte", lpath, sizeof lpath, msg, len))
        return -1;
    idx_set s = {0};
    long nlabels;
    if (idx_load_images(ipath, &s.images, &s.n, &s.rows, &s.cols, msg, len) ||
        idx_load_labels(lpath, &s.labels, &nlabels, max_label, msg, len)) {
        idx_set_free(&s);
        return -1;
    }
    if (nlabels != s.n) {
        snprintf(msg, len, "%s holds %ld images but %s holds %ld labels, expected equal counts", ipath, s.n,
                 lpath, nlabels);
        idx_set_free(&s);
        return -1;
    }
    *out = s;
    return 0;
}

void idx_set_free(idx_set *s)
{
    if (!s)
        return;
    free(s->images), free(s->labels);
    *s = (idx_set){0};
}

/* Whether DIR/PREFIX-KIND exists as .gz or raw. */
static int have_file(const char *dir, const char *prefix, const char *kind)
{
    char path[4096];
    int k = snprintf(path, sizeof path, "%s/%s-%s.gz", dir, prefix, kind);
    if (k < 0 || (size_t)k >= sizeof path)
        return 0;
    if (access(path, R_OK) == 0)
        return 1;
    path[k - 3] = '\0';
    return access(path, R_OK) == 0;
}

int idx_dir_complete(const char *dir)
{
    return have_file(dir, "train", "images-idx3-ubyte") && have_file(dir, "train", "labels-idx1-ubyte") &&
           have_file(dir, "t10k", "images-idx3-ubyte") && have_file(dir, "t10k", "labels-idx1-ubyte");
}
