/*
 * experiments/studies/pipeline/load.c: the pipeline study's I/O (pipeline_study.h): the loaders timed
 * by the runner, the run-time copies setup writes, and the page-cache eviction of cache=cold.
 *
 * Every loader reads the whole training-image file into memory the study owns (or maps it), as a
 * training program's loading step would; what the bytes are for (decode) is the decode variant's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <zlib.h>

#include "data/idx.h"
#include "pipeline/pipeline_kernels.h"
#include "pipeline_study.h"

#define IMAGES "train-images-idx3-ubyte"
#define GZ_BUFFER (256u << 10) /* zlib's input buffer: the IDX reader's setting, so gzip is mlp's load */
#define DROP_CACHES "/proc/sys/vm/drop_caches"
#define TMPFS_MAGIC_ 0x01021994

/* ---- loaders (timed) ------------------------------------------------------------------------- */

int pl_load_gzip(pl_state *s, sl_error *err)
{
    gzFile f = gzopen(s->gz_path, "rb");
    if (!f) {
        sl_error_set(err, "pipeline gzip: %s: cannot open: %s", s->gz_path, strerror(errno));
        return -1;
    }
    gzbuffer(f, GZ_BUFFER);
    size_t got = 0;
    int k = 1;
    while (got < s->raw_bytes && k > 0) { /* gzread takes an unsigned count: 1 GiB at most per call */
        size_t ask = s->raw_bytes - got < (1u << 30) ? s->raw_bytes - got : (1u << 30);
        k = gzread(f, s->buf + got, (unsigned)ask);
        got += k > 0 ? (size_t)k : 0;
    }
    int errnum;
    const char *zmsg = gzerror(f, &errnum);
    if (k < 0 || got != s->raw_bytes) {
        sl_error_set(err, "pipeline gzip: %s: decompressed %zu bytes, expected %zu (%s)", s->gz_path, got,
                     s->raw_bytes, errnum != Z_OK ? zmsg : "file ended early");
        gzclose(f);
        return -1;
    }
    gzclose(f);
    return 0;
}

int pl_load_read(pl_state *s, sl_error *err)
{
    int fd = open(s->raw_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sl_error_set(err, "pipeline read: %s: cannot open: %s", s->raw_path, strerror(errno));
        return -1;
    }
    size_t got = 0;
    while (got < s->raw_bytes) {
        ssize_t k = read(fd, s->buf + got, s->raw_bytes - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            sl_error_set(err, "pipeline read: %s: read %zu of %zu bytes (%s)", s->raw_path, got, s->raw_bytes,
                         k < 0 ? strerror(errno) : "file ended early");
            close(fd);
            return -1;
        }
        got += (size_t)k;
    }
    close(fd);
    return 0;
}

int pl_load_mmap(pl_state *s, sl_error *err)
{
    int fd = open(s->raw_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sl_error_set(err, "pipeline mmap: %s: cannot open: %s", s->raw_path, strerror(errno));
        return -1;
    }
    void *m = mmap(NULL, s->raw_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd); /* the mapping keeps the file */
    if (m == MAP_FAILED) {
        sl_error_set(err, "pipeline mmap: %s: mmap of %zu bytes: %s", s->raw_path, s->raw_bytes, strerror(errno));
        return -1;
    }
    s->map = m;
    /* Mapping alone reads nothing: every byte is read here, faulting each page in, as read() copies each. */
    s->touched = pl_sum64(s->map + 16, s->px);
    return 0;
}

int pl_load_decode(pl_state *s, sl_error *err)
{
    (void)err;
    pl_decode_u8_f32(s->ref, s->px, s->out);
    return 0;
}

/* ---- the page cache (untimed) --------------------------------------------------------------- */

int pl_can_drop_caches(void)
{
    return geteuid() == 0 && access(DROP_CACHES, W_OK) == 0;
}

/* "1": the page cache only (not dentries and inodes), the least a cold read needs. */
static int drop_caches(void)
{
    int fd = open(DROP_CACHES, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int ok = write(fd, "1\n", 2) == 2;
    close(fd);
    return ok ? 0 : -1;
}

int pl_evict(const char *path, int drop, int *dropped, sl_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sl_error_set(err, "pipeline: %s: cannot open to evict it from the page cache: %s", path, strerror(errno));
        return -1;
    }
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    if (rc != 0) {
        sl_error_set(err, "pipeline: %s: posix_fadvise(POSIX_FADV_DONTNEED): %s; use --param cache=warm",
                     path, strerror(rc));
        return -1;
    }
    *dropped = drop && drop_caches() == 0;
    return 0;
}

double pl_resident(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t len = (size_t)st.st_size, page = (size_t)sysconf(_SC_PAGESIZE), pages = (len + page - 1) / page;
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    unsigned char *vec = m == MAP_FAILED ? NULL : malloc(pages);
    double frac = -1;
    if (vec && mincore(m, len, vec) == 0) {
        size_t in = 0;
        for (size_t i = 0; i < pages; i++)
            in += vec[i] & 1;
        frac = (double)in / (double)pages;
    }
    free(vec);
    if (m != MAP_FAILED)
        munmap(m, len);
    return frac;
}

int pl_on_tmpfs(const char *path)
{
    struct statfs fs;
    return statfs(path, &fs) == 0 && fs.f_type == TMPFS_MAGIC_;
}

/* ---- setup's files (untimed) ----------------------------------------------------------------- */

static int exists(const char *p)
{
    return access(p, R_OK) == 0;
}

static size_t file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (size_t)st.st_size : 0;
}

/* Written data must be on disk before a cold read: posix_fadvise does not drop dirty pages. */
static int sync_file(const char *p)
{
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    int rc = fd >= 0 && fsync(fd) == 0 ? 0 : -1;
    if (fd >= 0)
        close(fd);
    return rc;
}

static void be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static int make_tmpdir(pl_state *s, sl_error *err)
{
    if (s->tmpdir[0])
        return 0;
    const char *t = getenv("TMPDIR");
    int k = snprintf(s->tmpdir, PL_PATH - 64, "%s/speedlab-pipeline-XXXXXX", t && *t ? t : "/tmp");
    if (k < 0 || k >= PL_PATH - 64 || !mkdtemp(s->tmpdir)) {
        sl_error_set(err, "pipeline: cannot make a temp dir %s for the file copies: %s; set TMPDIR to a "
                     "writable directory", s->tmpdir, strerror(errno));
        s->tmpdir[0] = '\0';
        return -1;
    }
    return 0;
}

/* out = dir/name; -1 when it does not fit in PL_PATH. */
static int join(char *out, const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    if (a + 1 + b >= PL_PATH)
        return -1;
    memcpy(out, dir, a);
    out[a] = '/';
    memcpy(out + a + 1, name, b + 1);
    return 0;
}

static int write_raw_copy(pl_state *s, sl_error *err)
{
    join(s->raw_path, s->tmpdir, IMAGES); /* fits: tmpdir is checked in make_tmpdir */
    FILE *f = fopen(s->raw_path, "wb");
    int ok = f && fwrite(s->header, 1, 16, f) == 16 && fwrite(s->ref, 1, s->px, f) == s->px;
    ok = f && fclose(f) == 0 && ok;
    if (!ok || sync_file(s->raw_path)) {
        sl_error_set(err, "pipeline: cannot write the raw copy %s (%zu bytes): %s; set TMPDIR to a directory "
                     "with room", s->raw_path, s->raw_bytes, strerror(errno));
        return -1;
    }
    s->raw_copied = 1;
    return 0;
}

static int write_gz_copy(pl_state *s, sl_error *err)
{
    join(s->gz_path, s->tmpdir, IMAGES ".gz");
    gzFile f = gzopen(s->gz_path, "wb"); /* zlib's default level 6 */
    int ok = f && gzwrite(f, s->header, 16) == 16;
    for (size_t at = 0; ok && at < s->px; at += 1u << 30) {
        unsigned k = s->px - at < (1u << 30) ? (unsigned)(s->px - at) : (1u << 30);
        ok = gzwrite(f, s->ref + at, k) == (int)k;
    }
    ok = f && gzclose(f) == Z_OK && ok;
    if (!ok || sync_file(s->gz_path)) {
        sl_error_set(err, "pipeline: cannot write the gzip copy %s: %s; set TMPDIR to a directory with room",
                     s->gz_path, strerror(errno));
        return -1;
    }
    s->gz_copied = 1;
    return 0;
}

int pl_files_setup(pl_state *s, const char *dir, sl_error *err)
{
    if (join(s->gz_path, dir, IMAGES ".gz") || join(s->raw_path, dir, IMAGES)) {
        sl_error_set(err, "pipeline: --data %.64s...: directory name too long (at most %d bytes)", dir,
                     PL_PATH - 32);
        return -1;
    }
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    int have_gz = exists(s->gz_path), have_raw = exists(s->raw_path);
    if (!have_gz && !have_raw) {
        sl_error_set(err, "pipeline: %s: no training images: tried %s and %s; " IDX_MISSING_HINT, dir,
                     s->gz_path, s->raw_path);
        return -1;
    }
    /* The reference, by the reader training uses: it checks the header, the length and the gzip CRC. */
    char msg[1024];
    if (idx_load_images(have_gz ? s->gz_path : s->raw_path, &s->ref, &s->n, &s->rows, &s->cols, msg, sizeof msg)) {
        sl_error_set(err, "pipeline: %s", msg);
        return -1;
    }
    s->px = (size_t)s->n * (size_t)s->rows * (size_t)s->cols;
    s->raw_bytes = 16 + s->px;
    be32(s->header, 0x803), be32(s->header + 4, (uint32_t)s->n);
    be32(s->header + 8, (uint32_t)s->rows), be32(s->header + 12, (uint32_t)s->cols);
    if ((!have_raw || !have_gz) && make_tmpdir(s, err))
        return -1;
    if ((!have_raw && write_raw_copy(s, err)) || (!have_gz && write_gz_copy(s, err)))
        return -1;
    s->gz_bytes = file_size(s->gz_path);
    if (file_size(s->raw_path) != s->raw_bytes) {
        sl_error_set(err, "pipeline: %s: %zu bytes, expected %zu (a 16-byte header and %ld images of %dx%d, "
                     "as %s says)", s->raw_path, file_size(s->raw_path), s->raw_bytes, s->n, s->rows, s->cols,
                     have_gz ? s->gz_path : "its header");
        return -1;
    }
    return 0;
}

void pl_files_remove(pl_state *s)
{
    if (s->raw_copied)
        unlink(s->raw_path);
    if (s->gz_copied)
        unlink(s->gz_path);
    if (s->tmpdir[0])
        rmdir(s->tmpdir);
    s->raw_copied = s->gz_copied = 0, s->tmpdir[0] = '\0';
}

size_t pl_payload_bytes(const char *dir)
{
    char p[PL_PATH], msg[512];
    if (join(p, dir, IMAGES ".gz") || access(p, F_OK) != 0)
        if (join(p, dir, IMAGES))
            return 0;
    long n;
    int rows, cols;
    /* The header the loader will trust, checked the one way every study checks it: a corrupt one gives
     * 0 (the caller's guess), and setup then fails with the reader's message, not a memory skip. */
    if (idx_image_header(p, &n, &rows, &cols, msg, sizeof msg) != 0)
        return 0;
    return (size_t)n * (size_t)rows * (size_t)cols;
}
