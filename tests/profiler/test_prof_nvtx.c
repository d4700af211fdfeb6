/*
 * NVTX: with the test tool (nvtx_inject.c, path in argv[1]) attached, regions become pushes and pops
 * in the "speedlab" domain with their names, nested as opened, each name registered once per node.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, mkstemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "speedlab/prof.h"

static char log_path[] = "/tmp/prof_nvtx_XXXXXX";
static char lines[64][128];
static int nlines;

static void read_log(void)
{
    FILE *f = fopen(log_path, "r");
    assert_non_null(f);
    nlines = 0;
    while (nlines < 64 && fgets(lines[nlines], sizeof lines[0], f)) {
        lines[nlines][strcspn(lines[nlines], "\n")] = '\0';
        nlines++;
    }
    fclose(f);
}

static void test_push_pop_nesting(void **state)
{
    (void)state;
    prof_set_color("inner", 0xff00ff00u);
    prof_options o = {.nvtx = 1, .quiet = 1};
    prof_init(&o);
    for (int i = 0; i < 2; i++) {
        prof_begin("outer");
        prof_begin("inner");
        prof_end("inner");
        prof_end("outer");
    }
    read_log();
    const char *want[] = {
        "domain speedlab", "string outer", "push speedlab outer", "string inner", "push speedlab inner ff00ff00",
        "pop speedlab",    "pop speedlab", "push speedlab outer", "push speedlab inner ff00ff00", "pop speedlab",
        "pop speedlab",
    };
    int n = (int)(sizeof want / sizeof want[0]);
    assert_int_equal(nlines, n);
    for (int i = 0; i < n; i++)
        if (strncmp(lines[i], want[i], strlen(want[i])) != 0)
            fail_msg("line %d of the NVTX log is \"%s\", want \"%s...\"", i + 1, lines[i], want[i]);
    prof_shutdown();
}

static void test_off(void **state)
{
    (void)state;
    prof_options o = {.nvtx = 0, .quiet = 1};
    prof_init(&o);
    int before = nlines;
    prof_begin("silent");
    prof_end("silent");
    read_log();
    assert_int_equal(nlines, before);
    prof_shutdown();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH_TO_nvtx_inject.so\n", argv[0]);
        return 2;
    }
    int fd = mkstemp(log_path);
    if (fd < 0)
        return 2;
    close(fd);
    /* NVTX reads these at its first call, which comes later (prof_init). */
    setenv("NVTX_INJECTION64_PATH", argv[1], 1);
    setenv("PROF_NVTX_LOG", log_path, 1);
    unsetenv("PROF_NVTX");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_pop_nesting),
        cmocka_unit_test(test_off),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(log_path);
    return rc;
}
