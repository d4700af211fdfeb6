/*
 * runner_test.c: what the runner's tests share (runner_test.h): speedlab run in a child with a registry
 * of their own, and the records it wrote read back.
 */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "commands.h"
#include "runner_test.h"

char rt_tmpdir[PATH_MAX];
char rt_errbuf[16384];

/* Runs `speedlab ARGS...` with the registry `reg` in a child (stdout to /dev/null, stderr captured in
 * rt_errbuf); its exit code. */
int rt_speedlab(const sl_study *const *reg, int n_reg, const char *first, ...)
{
    va_list ap;
    va_start(ap, first);
    int rc = rt_speedlab_va(reg, n_reg, first, ap);
    va_end(ap);
    return rc;
}

int rt_speedlab_va(const sl_study *const *reg, int n_reg, const char *first, va_list ap)
{
    char *argv[64] = {"speedlab"};
    int argc = 1;
    for (const char *a = first; a && argc < 63; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    argv[argc] = NULL;

    char errpath[PATH_MAX + 16];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", rt_tmpdir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644), o = open("/dev/null", O_WRONLY);
        dup2(e, STDERR_FILENO);
        dup2(o, STDOUT_FILENO);
        int rc = sl_main(argc, argv, reg, n_reg);
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    FILE *f = fopen(errpath, "r");
    size_t n = f ? fread(rt_errbuf, 1, sizeof rt_errbuf - 1, f) : 0;
    rt_errbuf[n] = '\0';
    if (f)
        fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Every line of OUT/latest/results.jsonl parsed; the array's length is the line count. */
json_t *rt_read_latest(const char *out)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/latest/results.jsonl", out);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    json_t *all = json_array();
    char line[1 << 16];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        assert_int_equal(line[strlen(line) - 1], '\n'); /* whole lines only */
        json_error_t e;
        json_t *rec = json_loads(line, 0, &e);
        if (!rec)
            fail_msg("%s:%d: not JSON: %s", path, lineno, e.text);
        json_array_append_new(all, rec);
    }
    fclose(f);
    return all;
}

json_t *rt_find_case(json_t *all, const char *variant, long size)
{
    size_t i;
    json_t *r;
    json_array_foreach(all, i, r) {
        if (strcmp(json_string_value(json_object_get(r, "variant")), variant) == 0 &&
            json_integer_value(json_object_get(r, "size")) == size)
            return r;
    }
    fail_msg("no record for variant %s size %ld", variant, size);
    return NULL;
}

const char *rt_str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    if (!s)
        fail_msg("record field '%s' is not a string", k);
    return s;
}

char rt_out_dir[PATH_MAX + 16];

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

int rt_setup_dir(void **state)
{
    (void)state;
    snprintf(rt_tmpdir, sizeof rt_tmpdir, "/tmp/speedlab-test-XXXXXX");
    if (!mkdtemp(rt_tmpdir))
        return -1;
    snprintf(rt_out_dir, sizeof rt_out_dir, "%s/out", rt_tmpdir);
    return 0;
}

int rt_remove_dir(void **state)
{
    (void)state;
    if (getenv("SPEEDLAB_TEST_KEEP")) { /* for a look at the records after a failure */
        fprintf(stderr, "# kept %s\n", rt_tmpdir);
        return 0;
    }
    return nftw(rt_tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
