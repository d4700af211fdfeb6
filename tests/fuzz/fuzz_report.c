/*
 * libFuzzer harness: `speedlab report` (rep_report_main, reports/report.h) on any bytes as one
 * results.jsonl file: every table and every format, into a scratch directory, without the gnuplot
 * figures (--no-plots: no child processes per input).
 */
#include <stdlib.h>

#include "fuzz_file.h"
#include "report.h"

static char out[64];

static void remove_out(void)
{
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_file_init(".jsonl");
    if (!out[0]) {
        snprintf(out, sizeof out, "/tmp/sl-fuzz-report-XXXXXX");
        if (!mkdtemp(out))
            abort();
        atexit(remove_out);
    }
    char *path = (char *)fuzz_file_write(data, n);
    char *argv[] = {"report", path, "--out", out, "--no-plots", "--format", "md,csv,tex", NULL};
    /* stdout carries the report's summary: not wanted once per input */
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w");
    rep_report_main(7, argv);
    fclose(stdout);
    stdout = saved;
    return 0;
}
