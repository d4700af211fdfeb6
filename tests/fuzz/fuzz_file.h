/*
 * tests/fuzz/fuzz_file.h: what the harnesses share. The readers under test take a path, so each input
 * is written to one temporary file per process (named with the suffix the reader expects), rewritten
 * for every input; removed at exit.
 */
#ifndef SL_FUZZ_FILE_H
#define SL_FUZZ_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_path[64];

static void fuzz_file_remove(void) { unlink(fuzz_path); }

/* Makes the file (once): /tmp/sl-fuzz-XXXXXX + suffix. Aborts when it cannot: nothing could be tested. */
static void fuzz_file_init(const char *suffix)
{
    if (fuzz_path[0])
        return;
    snprintf(fuzz_path, sizeof fuzz_path, "/tmp/sl-fuzz-XXXXXX%s", suffix);
    int fd = mkstemps(fuzz_path, (int)strlen(suffix));
    if (fd < 0) {
        perror("fuzz: mkstemps");
        abort();
    }
    close(fd);
    atexit(fuzz_file_remove);
}

/* The file holds exactly data[0..n). */
static const char *fuzz_file_write(const uint8_t *data, size_t n)
{
    FILE *f = fopen(fuzz_path, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0) {
        perror(fuzz_path);
        abort();
    }
    return fuzz_path;
}

#endif
