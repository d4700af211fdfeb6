/*
 * experiments/data/galaxy_csv.h: the galaxy CSV reader. Rows `label,p0,...,p1023`, label 0-2
 * (0 elliptical, 1 spiral, 2 irregular), pixels 0-255; pixels are returned divided by 255 as Mocz's
 * code does. Errors name the file, line and field; nothing partial is returned.
 */
#ifndef SL_DATA_GALAXY_CSV_H
#define SL_DATA_GALAXY_CSV_H

#include <stddef.h>

#define GALAXY_PIXELS 1024
#define GALAXY_CLASSES 3

typedef struct galaxy_set {
    double *X;          /* m x 1024, row-major, pixel / 255 */
    unsigned char *y;   /* m labels */
    long m;
} galaxy_set;

/* Returns 0 and fills *out, or -1 with a message in err (errlen bytes) and *out untouched. */
int galaxy_csv_load(const char *path, galaxy_set *out, char *err, size_t errlen);
void galaxy_set_free(galaxy_set *s);

#endif
