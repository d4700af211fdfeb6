/*
 * experiments/data/idx.h: reader for IDX files (the MNIST format), gzip-compressed or raw (zlib's gzread
 * reads both). Checks the magic number (0x00000803 images, 0x00000801 labels), the element type
 * (0x08 unsigned byte), the dimensions, that the file holds exactly the data its header promises, that
 * images and labels agree in count, and that every label is below max_label; only a regular file is
 * opened (a FIFO would block). Errors name the file and
 * say what was expected and what was found; on any error nothing is returned (no partial data).
 */
#ifndef SL_DATA_IDX_H
#define SL_DATA_IDX_H

#include <stddef.h>
#include <stdint.h>

/* One split of a data set: n images of rows x cols bytes, row-major, and n labels. */
typedef struct idx_set {
    uint8_t *images; /* n * rows * cols */
    uint8_t *labels; /* n */
    long n;
    int rows, cols;
} idx_set;

/* An idx3 unsigned-byte image file. 0, or -1 with msg. */
int idx_load_images(const char *path, uint8_t **images, long *n, int *rows, int *cols, char *msg, size_t len);
/* The header of an idx3 unsigned-byte image file, checked as idx_load_images checks it (magic, element
 * type, dimensions), and against the bytes the file holds (a raw file's size, a gzip file's length
 * trailer), without reading the data: what a study's memory estimate may trust. 0, or -1 with msg. */
int idx_image_header(const char *path, long *n, int *rows, int *cols, char *msg, size_t len);
/* An idx1 unsigned-byte label file; every label must be < max_label. 0, or -1 with msg. */
int idx_load_labels(const char *path, uint8_t **labels, long *n, int max_label, char *msg, size_t len);

/* The split `prefix` ("train" or "t10k") of the standard four-file layout in dir:
 * PREFIX-images-idx3-ubyte[.gz] and PREFIX-labels-idx1-ubyte[.gz] (the .gz name is tried first).
 * Checks that the counts agree and labels are < max_label. 0, or -1 with msg (on a missing file the
 * message lists the names tried). */
int idx_load_split(const char *dir, const char *prefix, int max_label, idx_set *out, char *msg, size_t len);
void idx_set_free(idx_set *s);

/* How to get the default data, for messages about a missing file. */
#define IDX_MISSING_HINT "install Debian's dataset-fashion-mnist (files in /usr/share/datasets/fashion-mnist) " \
                     "or pass --data DIR with the four standard MNIST files"

/* Whether dir holds all four standard files (either form). */
int idx_dir_complete(const char *dir);

#endif
