/*
 * test_records.c: a record is on disk whole or not at all. A full disk is
 * simulated with RLIMIT_FSIZE (SIGXFSZ ignored): write() stops part-way through a record, as on a full
 * tmpfs; then the limit is lifted, as when space is freed, and the next record must read back whole.
 * Before the fix the cut line stayed and the next record was glued onto it, so both were lost.
 * And env.cflags is the flags the kernels were compiled with (an optimisation level, the -march in use),
 * not the build type's name.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "env.h"
#include "isa.h"
#include "record.h"

/* A record of about 300 bytes, numbered. */
static json_t *record(int i)
{
    char pad[281];
    memset(pad, 'x', sizeof pad - 1);
    pad[sizeof pad - 1] = 0;
    json_t *r = json_object();
    json_object_set_new(r, "i", json_integer(i));
    json_object_set_new(r, "pad", json_string(pad));
    return r;
}

/* In a child: 3 records fit under the limit, the 4th is cut short by it and must fail, the limit is
 * lifted and the 5th must succeed. Exits with a bit per append that returned 0. */
static void child(const char *path)
{
    signal(SIGXFSZ, SIG_IGN);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rlim_t hard = rl.rlim_max;
    rl.rlim_cur = 1000;
    setrlimit(RLIMIT_FSIZE, &rl);
    int ok = 0;
    for (int i = 0; i < 5; i++) {
        if (i == 4) {
            rl.rlim_cur = hard; /* the space is freed */
            setrlimit(RLIMIT_FSIZE, &rl);
        }
        json_t *r = record(i);
        sl_error err = {{0}};
        if (sl_record_append(fd, r, &err) == 0)
            ok |= 1 << i;
        else if (!strstr(err.msg, "cut back to the last whole record"))
            ok |= 1 << 6; /* the message must say what became of the file */
        json_decref(r);
    }
    close(fd);
    _exit(ok);
}

static void short_write_is_cut_back(void **state)
{
    (void)state;
    char path[] = "/tmp/sl-records-XXXXXX";
    int tfd = mkstemp(path);
    assert_true(tfd >= 0);
    close(tfd);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        child(path);
    int st = 0;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0x17); /* records 0, 1, 2 and 4 written; 3 refused, said so */

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    int want[] = {0, 1, 2, 4}, n = 0;
    while (fgets(line, sizeof line, f)) {
        assert_int_equal(line[strlen(line) - 1], '\n');
        json_error_t e;
        json_t *r = json_loads(line, 0, &e);
        assert_non_null(r); /* before the fix: record 4 glued onto the cut record 3 */
        assert_true(n < 4);
        assert_int_equal(json_integer_value(json_object_get(r, "i")), want[n]);
        n++;
        json_decref(r);
    }
    fclose(f);
    assert_int_equal(n, 4);
    unlink(path);
}

/* env.cflags: the kernels' compiler flags (kern_isa_cflags), with -O and the -march of the copy that runs. */
static void env_cflags_are_the_kernels(void **state)
{
    (void)state;
    json_t *env = sl_env_capture(1);
    const char *f = json_string_value(json_object_get(env, "cflags"));
    assert_non_null(f);
    print_message("# env.cflags: %s\n", f);
    assert_string_equal(f, kern_isa_cflags());
    assert_non_null(strstr(f, "-O"));
    assert_null(strstr(f, "buildtype="));
    char want[160];
    if (strcmp(kern_isa_mode(), "native") == 0) {
        snprintf(want, sizeof want, "-march=%s", kern_isa_march()); /* native, or -Dc_args' -march */
    } else { /* dispatch: the level that runs, last */
        const char *isa = kern_isa();
        snprintf(want, sizeof want, "-march=x86-64-%s",
                 strcmp(isa, "avx512") == 0 ? "v4" : strcmp(isa, "avx2") == 0 ? "v3" : "v2");
        assert_string_equal(f + strlen(f) - strlen(want), want);
    }
    assert_non_null(strstr(f, want));
    json_decref(env);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(short_write_is_cut_back),
        cmocka_unit_test(env_cflags_are_the_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
