/*
 * experiments/data/galaxy_csv.h: the galaxy CSV reader. Rows `label,p0,...,p1023`, label 0-2
 * (0 elliptical, 1 spiral, 2 irregular), pixels 0-255; pixels are returned divided by 255 as Mocz's
 * code does. A file is either plain text or gzip-compressed (zlib): `train.csv` or `train.csv.gz`, read
 * alike, giving the same doubles. Errors name the file, line and field (or, for a broken gzip stream,
 * the line where it broke and zlib's reason); nothing partial is returned.
 */
#ifndef SL_DATA_GALAXY_CSV_H
#define SL_DATA_GALAXY_CSV_H

#include <stddef.h>

#define GALAXY_PIXELS 1024
#define GALAXY_CLASSES 3
/* X's row stride: the 1024 pixels and one 64-byte line of zeros. A row of exactly 8 KiB would put the
 * same column of every row in the same L1 set (kernels/galaxy/galaxy_kernels.h, galaxy_padded_ldx: the
 * kernels' gradient walks down 32 rows a few columns at a time). */
#define GALAXY_ROW_STRIDE (GALAXY_PIXELS + 8)

typedef struct galaxy_set {
    double *X;          /* m rows of 1024 pixels / 255, row t at X + t * ldx, 64-byte aligned */
    unsigned char *y;   /* m labels */
    long m;
    long ldx;           /* GALAXY_ROW_STRIDE */
} galaxy_set;

/* Puts DIR/NAME.csv in path (n bytes) when that file is readable, else DIR/NAME.csv.gz: 0 if the one
 * named is readable, else -1. The plain file wins when both exist: it is the deliberate copy (unpacked,
 * perhaps edited, by hand); the repository ships only the .csv.gz (data/galaxy/README.md). */
int galaxy_csv_find(const char *dir, const char *name, char *path, size_t n);

/* PATH: a plain or gzip-compressed CSV (by content; a name ending in .gz must be gzip). Returns 0 and fills *out, or -1 with a message in err (errlen bytes) and *out untouched. */
int galaxy_csv_load(const char *path, galaxy_set *out, char *err, size_t errlen);
void galaxy_set_free(galaxy_set *s);

#endif
