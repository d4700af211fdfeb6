/*
 * libFuzzer harness: the results loader of the reports (rep_load, reports/rep.h) on any bytes as one
 * results.jsonl file. Bad lines are to be skipped and counted, never to crash.
 */
#include "fuzz_file.h"
#include "rep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_file_init(".jsonl");
    char *path = (char *)fuzz_file_write(data, n);
    FILE *devnull = fopen("/dev/null", "w");
    rep_set s;
    memset(&s, 0, sizeof s);
    rep_load(&s, 1, &path, devnull);
    rep_set_free(&s);
    fclose(devnull);
    return 0;
}
