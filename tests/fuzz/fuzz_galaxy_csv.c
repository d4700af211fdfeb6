/*
 * libFuzzer harness: the galaxy CSV loader (experiments/data/galaxy_csv.c) on any bytes, plain or gzip
 * (zlib passes a plain file through). Found before it existed as a harness: the (long) cast of 1e39 and
 * nan (UBSan), and a NUL byte hiding the rest of a line; both are in its corpus.
 */
#include "data/galaxy_csv.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_file_init(".csv");
    const char *path = fuzz_file_write(data, n);
    galaxy_set s = {0};
    char err[512];
    if (galaxy_csv_load(path, &s, err, sizeof err) == 0)
        galaxy_set_free(&s);
    return 0;
}
