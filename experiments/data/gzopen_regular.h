/* experiments/data/gzopen_regular.h: how the data readers open a file (gzopen_regular.c). */
#ifndef SL_DATA_GZOPEN_REGULAR_H
#define SL_DATA_GZOPEN_REGULAR_H

#include <zlib.h>

/* path opened for zlib's gzread (gzip or raw), a regular file only: a FIFO, device or directory where a
 * data file is expected would block the open or the first read. NULL with *why (strerror's text, or
 * what the path is). zlib names the stream "<fd:N>" in its messages: the caller names the path. */
gzFile data_gzopen_regular(const char *path, const char **why);

#endif
