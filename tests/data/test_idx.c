/* tests/data/test_idx.c: the IDX reader on small good and broken files written here, raw and gzip, and on
 * the real Fashion-MNIST files when they are installed. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, clock_gettime */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "data/idx.h"

#define FASHION_DIR "/usr/share/datasets/fashion-mnist"
#define IMAGES "train-images-idx3-ubyte"
#define LABELS "train-labels-idx1-ubyte"

static char dir[64]; /* a fresh directory per test (setup/teardown) */

static int make_dir(void **st)
{
    (void)st;
    snprintf(dir, sizeof dir, "/tmp/speedlab_idx_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **st)
{
    (void)st;
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    char p[512];
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    }
    closedir(d);
    return rmdir(dir);
}

/* ---- building files ------------------------------------------------------------------------------ */

/* File contents with 16 spare bytes at the end, so tests can append trailing junk. */
typedef struct blob {
    uint8_t *p;
    size_t size;
} blob;

static uint8_t pixel(size_t i) { return (uint8_t)(i * 7 + 3); }

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static blob image_blob(uint32_t n, uint32_t rows, uint32_t cols)
{
    size_t data = (size_t)n * rows * cols;
    blob b = {calloc(16 + data + 16, 1), 16 + data};
    put32(b.p, 0x00000803), put32(b.p + 4, n), put32(b.p + 8, rows), put32(b.p + 12, cols);
    for (size_t i = 0; i < data; i++)
        b.p[16 + i] = pixel(i);
    return b;
}

static blob label_blob(uint32_t n)
{
    blob b = {calloc(8 + n + 16, 1), 8 + (size_t)n};
    put32(b.p, 0x00000801), put32(b.p + 4, n);
    for (uint32_t i = 0; i < n; i++)
        b.p[8 + i] = (uint8_t)(i % 10);
    return b;
}

/* Writes dir/name, through gzip when the name ends in ".gz" (unless `raw_bytes`: then as given). */
static void write_bytes(const char *name, const void *p, size_t size, int raw_bytes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t nl = strlen(name);
    if (!raw_bytes && nl > 3 && strcmp(name + nl - 3, ".gz") == 0) {
        gzFile f = gzopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(gzwrite(f, p, (unsigned)size), (int)size);
        assert_int_equal(gzclose(f), Z_OK);
    } else {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(p, 1, size, f), size);
        assert_int_equal(fclose(f), 0);
    }
}

static void write_blob(const char *name, blob b)
{
    write_bytes(name, b.p, b.size, 0);
    free(b.p);
}

/* The standard five-image 3x4 training split, raw or gzip. */
static void write_split(const char *prefix, int gz)
{
    char name[128];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte%s", prefix, gz ? ".gz" : "");
    write_blob(name, image_blob(5, 3, 4));
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte%s", prefix, gz ? ".gz" : "");
    write_blob(name, label_blob(5));
}

/* ---- checking results ---------------------------------------------------------------------------- */

/* idx_load_split(dir, "train") must fail, return nothing, and say `file` and every needle. */
static void expect_fail_(const char *file, const char *const *needles)
{
    uint8_t junk;
    idx_set s = {&junk, &junk, 99, 9, 9};
    char msg[1024] = "";
    assert_int_equal(idx_load_split(dir, "train", 10, &s, msg, sizeof msg), -1);
    print_message("# %s\n", msg);
    assert_null(s.images);
    assert_null(s.labels);
    assert_int_equal(s.n, 0);
    assert_int_equal(s.rows, 0);
    assert_int_equal(s.cols, 0);
    assert_non_null(strstr(msg, file));
    for (int i = 0; needles[i]; i++)
        if (!strstr(msg, needles[i]))
            fail_msg("message lacks \"%s\": %s", needles[i], msg);
}
#define expect_fail(file, ...) expect_fail_(file, (const char *const[]){__VA_ARGS__, NULL})

static void check_good_split(void)
{
    idx_set s;
    char msg[1024] = "";
    if (idx_load_split(dir, "train", 10, &s, msg, sizeof msg))
        fail_msg("%s", msg);
    assert_int_equal(s.n, 5);
    assert_int_equal(s.rows, 3);
    assert_int_equal(s.cols, 4);
    for (size_t i = 0; i < 5 * 3 * 4; i++)
        assert_int_equal(s.images[i], pixel(i));
    for (int i = 0; i < 5; i++)
        assert_int_equal(s.labels[i], i);
    idx_set_free(&s);
    assert_null(s.images);
}

/* ---- good files ---------------------------------------------------------------------------------- */

static void test_good_raw(void **st)
{
    (void)st;
    write_split("train", 0);
    check_good_split();
    assert_false(idx_dir_complete(dir)); /* no t10k files yet */
}

static void test_good_gz(void **st)
{
    (void)st;
    write_split("train", 1);
    check_good_split();
    write_split("t10k", 0); /* one split gzip, one raw: both forms count */
    assert_true(idx_dir_complete(dir));
}

/* ---- broken files -------------------------------------------------------------------------------- */

static void test_truncated_images(void **st)
{
    (void)st;
    blob b = image_blob(5, 3, 4);
    b.size -= 3;
    write_blob(IMAGES, b);
    write_blob(LABELS, label_blob(5));
    expect_fail(IMAGES, "expected 60 bytes of image data, found 57");
}

/* A valid gzip stream whose content is cut short: the IDX check, not zlib, finds it. */
static void test_truncated_images_in_gz(void **st)
{
    (void)st;
    blob b = image_blob(5, 3, 4);
    b.size -= 3;
    write_blob(IMAGES ".gz", b);
    write_blob(LABELS ".gz", label_blob(5));
    expect_fail(IMAGES ".gz", "expected 60 bytes of image data, found 57");
}

static void test_truncated_labels(void **st)
{
    (void)st;
    write_blob(IMAGES, image_blob(5, 3, 4));
    blob b = label_blob(5);
    b.size -= 1;
    write_blob(LABELS, b);
    expect_fail(LABELS, "expected 5 bytes of label data, found 4");
}

static void test_truncated_header(void **st)
{
    (void)st;
    blob b = image_blob(5, 3, 4);
    b.size = 10;
    write_blob(IMAGES, b);
    write_blob(LABELS, label_blob(5));
    expect_fail(IMAGES, "expected a 16-byte IDX header, found 10 bytes");
}

static void test_trailing_bytes(void **st)
{
    (void)st;
    blob b = image_blob(5, 3, 4);
    b.size += 2;
    write_blob(IMAGES, b);
    write_blob(LABELS, label_blob(5));
    expect_fail(IMAGES, "2 trailing bytes", "expected none");
}

static void test_wrong_magic(void **st)
{
    (void)st;
    write_blob(IMAGES, image_blob(5, 3, 4));
    write_blob(LABELS ".gz", image_blob(5, 3, 4)); /* an image file where the labels belong */
    expect_fail(LABELS ".gz", "magic number 0x00000803, expected 0x00000801 (an IDX label file)");
}

static void test_not_idx(void **st)
{
    (void)st;
    blob b = image_blob(5, 3, 4);
    memcpy(b.p, "PK\3\4", 4);
    write_blob(IMAGES, b);
    write_blob(LABELS, label_blob(5));
    expect_fail(IMAGES, "magic number 0x504b0304, expected 0x00000803 (an IDX image file)", "not an IDX file");
}

static void test_wrong_element_type(void **st)
{
    (void)st;
    blob b = image_blob(5, 3, 4);
    b.p[2] = 0x0d;
    write_blob(IMAGES, b);
    write_blob(LABELS, label_blob(5));
    expect_fail(IMAGES, "element type 0x0d (float), expected 0x08 (unsigned byte)");
}

static void test_bad_dimensions(void **st)
{
    (void)st;
    write_blob(LABELS, label_blob(5));
    write_blob(IMAGES, image_blob(5, 0, 4));
    expect_fail(IMAGES, "images of 0x4", "expected 1 to 4096");
    write_blob(IMAGES, image_blob(1, 3, 5000));
    expect_fail(IMAGES, "images of 3x5000", "expected 1 to 4096");
    write_blob(IMAGES, image_blob(0, 3, 4));
    expect_fail(IMAGES, "0 images", "expected at least 1");
}

/* A header promising 2^56 bytes with no data behind it: an error, not an attempt to allocate 64 PiB. */
static void test_huge_header(void **st)
{
    (void)st;
    uint8_t h[16];
    put32(h, 0x00000803), put32(h + 4, 0xffffffffu), put32(h + 8, 4096), put32(h + 12, 4096);
    write_bytes(IMAGES, h, sizeof h, 0);
    write_blob(LABELS, label_blob(5));
    expect_fail(IMAGES, "bytes of image data, found 0");
}

static void test_count_mismatch(void **st)
{
    (void)st;
    write_blob(IMAGES, image_blob(5, 3, 4));
    write_blob(LABELS, label_blob(4));
    expect_fail(IMAGES, LABELS, "5 images", "4 labels", "expected equal counts");
}

/* A valid gzip header, then bytes no deflate stream starts with (final block of reserved type 3). */
static void test_bad_gzip_stream(void **st)
{
    (void)st;
    uint8_t g[10 + 32] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
    memset(g + 10, 0xff, 32);
    write_bytes(IMAGES ".gz", g, sizeof g, 1);
    write_blob(LABELS, label_blob(5));
    expect_fail(IMAGES ".gz", "corrupt gzip stream", "invalid block type");
}

/* Reads dir/name back, then writes its first `keep` bytes (or all but `-keep` if negative) as is. */
static void cut_file(const char *name, long keep)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    uint8_t buf[1 << 16];
    size_t size = fread(buf, 1, sizeof buf, f);
    fclose(f);
    size_t n = keep >= 0 ? (size_t)keep : size - (size_t)-keep;
    assert_true(n < size);
    write_bytes(name, buf, n, 1);
}

static void test_gzip_cut_short(void **st)
{
    (void)st;
    write_blob(IMAGES ".gz", image_blob(50, 8, 8));
    write_blob(LABELS ".gz", label_blob(50));
    cut_file(IMAGES ".gz", 40); /* inside the deflate data */
    expect_fail(IMAGES ".gz", "corrupt gzip stream", "unexpected end of file");
    /* All the data there but the 8-byte trailer (CRC, length) cut: still corrupt. */
    write_blob(IMAGES ".gz", image_blob(50, 8, 8));
    cut_file(IMAGES ".gz", -4);
    expect_fail(IMAGES ".gz", "corrupt gzip stream", "unexpected end of file");
}

static void test_label_out_of_range(void **st)
{
    (void)st;
    write_blob(IMAGES, image_blob(5, 3, 4));
    blob b = label_blob(5);
    b.p[8 + 3] = 12;
    b.p[8 + 4] = 200;
    write_blob(LABELS, b);
    expect_fail(LABELS, "label at index 3 is 12, expected < 10");
}

static void test_missing_file(void **st)
{
    (void)st;
    expect_fail(IMAGES ".gz", "tried", "/" IMAGES ";", "dataset-fashion-mnist", "--data DIR");
    write_blob(IMAGES, image_blob(5, 3, 4));
    expect_fail(LABELS ".gz", "tried", "/" LABELS ";", "dataset-fashion-mnist", "--data DIR");
}

/* The two single-file calls also leave nothing behind when they fail. */
static void test_single_file_calls(void **st)
{
    (void)st;
    char path[512], msg[512] = "";
    snprintf(path, sizeof path, "%s/nothing-here", dir);
    uint8_t junk, *p = &junk;
    long n = 7;
    int rows = 7, cols = 7;
    assert_int_equal(idx_load_images(path, &p, &n, &rows, &cols, msg, sizeof msg), -1);
    assert_null(p);
    assert_true(n == 0 && rows == 0 && cols == 0);
    assert_non_null(strstr(msg, "nothing-here: cannot open"));

    write_blob(LABELS, label_blob(5));
    snprintf(path, sizeof path, "%s/" LABELS, dir);
    p = &junk, n = 7;
    assert_int_equal(idx_load_labels(path, &p, &n, 4, msg, sizeof msg), -1);
    assert_null(p);
    assert_int_equal(n, 0);
    assert_non_null(strstr(msg, "label at index 4 is 4, expected < 4"));
    assert_int_equal(idx_load_labels(path, &p, &n, 10, msg, sizeof msg), 0);
    assert_int_equal(n, 5);
    free(p);
}

/* ---- the real data set --------------------------------------------------------------------------- */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void check_real_split(const char *prefix, long n)
{
    idx_set s;
    char msg[1024] = "";
    double t0 = now();
    if (idx_load_split(FASHION_DIR, prefix, 10, &s, msg, sizeof msg))
        fail_msg("%s", msg);
    print_message("# %s: %ld images loaded in %.3f s\n", prefix, s.n, now() - t0);
    assert_int_equal(s.n, n);
    assert_int_equal(s.rows, 28);
    assert_int_equal(s.cols, 28);
    long count[10] = {0};
    for (long i = 0; i < s.n; i++) {
        assert_true(s.labels[i] < 10);
        count[s.labels[i]]++;
    }
    for (int c = 0; c < 10; c++) /* Fashion-MNIST is balanced */
        assert_int_equal(count[c], n / 10);
    idx_set_free(&s);
}

static void test_fashion_mnist(void **st)
{
    (void)st;
    /* Meson's TAP reader counts cmocka's skip() as a failure: say why and pass instead. */
    if (!idx_dir_complete(FASHION_DIR)) {
        print_message("# not checked: Fashion-MNIST is not in %s (Debian package dataset-fashion-mnist)\n",
                      FASHION_DIR);
        return;
    }
    check_real_split("train", 60000);
    check_real_split("t10k", 10000);
}

/* idx_image_header, what a study's memory estimate trusts: the same checks as the loader, plus the bytes
 * the file holds (raw size, gzip length), so a header promising 84 GiB over a small file is an error
 * and not a "does not fit in memory" skip. */
static void test_image_header(void **st)
{
    (void)st;
    char path[512], msg[512];
    long n;
    int rows, cols;
    write_blob(IMAGES, image_blob(5, 3, 4));
    snprintf(path, sizeof path, "%s/%s", dir, IMAGES);
    assert_int_equal(idx_image_header(path, &n, &rows, &cols, msg, sizeof msg), 0);
    assert_true(n == 5 && rows == 3 && cols == 4);
    write_blob(IMAGES ".gz", image_blob(5, 3, 4));
    snprintf(path, sizeof path, "%s/%s.gz", dir, IMAGES);
    assert_int_equal(idx_image_header(path, &n, &rows, &cols, msg, sizeof msg), 0);
    assert_true(n == 5 && rows == 3 && cols == 4);
    /* a valid magic, dimensions of 60000 x 463 x 463 (12.9 GB), 76 bytes of data: raw and gzip */
    blob b = image_blob(5, 3, 4);
    put32(b.p + 4, 60000), put32(b.p + 8, 463), put32(b.p + 12, 463);
    write_bytes(IMAGES, b.p, b.size, 0);
    write_bytes(IMAGES ".gz", b.p, b.size, 0);
    free(b.p);
    const char *names[] = {IMAGES, IMAGES ".gz"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        assert_int_equal(idx_image_header(path, &n, &rows, &cols, msg, sizeof msg), -1);
        print_message("# %s\n", msg);
        assert_non_null(strstr(msg, "60000 images of 463x463"));
        assert_non_null(strstr(msg, "but the file holds 76"));
        assert_int_equal(n, 0);
    }
    write_blob(IMAGES, label_blob(5)); /* the wrong kind: the loader's own message */
    snprintf(path, sizeof path, "%s/%s", dir, IMAGES);
    assert_int_equal(idx_image_header(path, &n, &rows, &cols, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "magic number 0x00000801, expected 0x00000803"));
}

/* A FIFO where a data file is expected would block the open (no writer) or the read: refused at once. */
static void test_fifo_refused(void **st)
{
    (void)st;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, IMAGES ".gz");
    assert_int_equal(mkfifo(path, 0600), 0);
    write_blob(LABELS, label_blob(5));
    expect_fail(IMAGES ".gz", "not a regular file");
    char msg[512];
    long n;
    int rows, cols;
    assert_int_equal(idx_image_header(path, &n, &rows, &cols, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "not a regular file"));
}

#define T(f) cmocka_unit_test_setup_teardown(f, make_dir, remove_dir)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_good_raw),
        T(test_good_gz),
        T(test_truncated_images),
        T(test_truncated_images_in_gz),
        T(test_truncated_labels),
        T(test_truncated_header),
        T(test_trailing_bytes),
        T(test_wrong_magic),
        T(test_not_idx),
        T(test_wrong_element_type),
        T(test_bad_dimensions),
        T(test_huge_header),
        T(test_count_mismatch),
        T(test_bad_gzip_stream),
        T(test_gzip_cut_short),
        T(test_label_out_of_range),
        T(test_missing_file),
        T(test_single_file_calls),
        T(test_image_header),
        T(test_fifo_refused),
        cmocka_unit_test(test_fashion_mnist),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
