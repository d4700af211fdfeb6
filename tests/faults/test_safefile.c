/* tests/faults/test_safefile.c: common/safefile.h on its own: what is refused for reading and for
 * replacing, a target that changes kind while being written, which temporaries the next command removes,
 * folders below the output folder, and parse messages without the input. In a scratch folder. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "safefile.h"

static char dir[256];

static char *at(const char *name)
{
    static char buf[8][512];
    static int k;
    char *b = buf[k++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", dir, name);
    return b;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/sl-safefile-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void reads_only_regular_files(void **state)
{
    (void)state;
    const char *why = NULL;
    put(at("file"), "data\n");
    FILE *f = sf_open_read(at("file"), 0, &why);
    assert_non_null(f);
    fclose(f);
    assert_int_equal(mkfifo(at("fifo"), 0600), 0);
    assert_null(sf_open_read(at("fifo"), 0, &why)); /* returns at once: nothing waits on the FIFO */
    assert_non_null(strstr(why, "FIFO"));
    assert_int_equal(symlink(at("file"), at("link")), 0);
    assert_null(sf_open_read(at("link"), 0, &why));
    assert_non_null(strstr(why, "symbolic link"));
    f = sf_open_read(at("link"), SF_FOLLOW, &why); /* a path the user typed */
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink(at("fifo"), at("link-fifo")), 0);
    assert_null(sf_open_read(at("link-fifo"), SF_FOLLOW, &why)); /* followed, still not a file */
    assert_null(sf_open_read(dir, 0, &why));
    assert_non_null(strstr(why, "directory"));
    assert_null(sf_open_read("/dev/null", SF_FOLLOW, &why));
    assert_non_null(strstr(why, "device"));
    assert_null(sf_open_read(at("absent"), 0, &why));
}

static void replaces_only_regular_files(void **state)
{
    (void)state;
    const char *why = NULL;
    char tmp[600];
    put(at("victim"), "keep\n");
    assert_int_equal(symlink(at("victim"), at("out-link")), 0);
    assert_int_equal(mkfifo(at("out-fifo"), 0600), 0);
    assert_int_equal(mkdir(at("out-dir"), 0700), 0);
    const char *refused[] = {"out-link", "out-fifo", "out-dir"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(sf_target_ok(at(refused[i]), &why), -1);
        assert_null(sf_create(at(refused[i]), tmp, sizeof tmp, &why));
    }
    assert_null(sf_create("/dev/null", tmp, sizeof tmp, &why));
    assert_non_null(strstr(why, "device"));

    /* whole, then renamed; the temporary is gone */
    FILE *f = sf_create(at("out"), tmp, sizeof tmp, &why);
    assert_non_null(f);
    assert_non_null(strstr(tmp, "/" SF_TMP_PREFIX));
    fputs("new\n", f);
    assert_int_equal(sf_commit(f, tmp, at("out"), &why), 0);
    assert_int_equal(access(tmp, F_OK), -1);
    f = sf_open_read(at("out"), 0, &why);
    char line[16] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "new\n");

    /* the target became a FIFO while written: refused at the rename, the FIFO kept, no temporary */
    f = sf_create(at("late"), tmp, sizeof tmp, &why);
    assert_non_null(f);
    fputs("x\n", f);
    assert_int_equal(mkfifo(at("late"), 0600), 0);
    assert_int_equal(sf_commit(f, tmp, at("late"), &why), -1);
    struct stat st;
    assert_int_equal(lstat(at("late"), &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(access(tmp, F_OK), -1);

    /* a full disk (a 4-byte file size limit, SIGXFSZ ignored: the write fails with EFBIG): the earlier
     * file stays whole */
    put(at("earlier"), "earlier\n");
    f = sf_create(at("earlier"), tmp, sizeof tmp, &why);
    assert_non_null(f);
    fputs("longer than the limit\n", f);
    struct rlimit old, small;
    getrlimit(RLIMIT_FSIZE, &old);
    small = old;
    small.rlim_cur = 4;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    int rc = sf_commit(f, tmp, at("earlier"), &why);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(rc, -1);
    f = sf_open_read(at("earlier"), 0, &why);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_string_equal(line, "earlier\n");
    assert_int_equal(access(tmp, F_OK), -1);
    char victim[16] = "";
    f = fopen(at("victim"), "r");
    assert_non_null(fgets(victim, sizeof victim, f));
    fclose(f);
    assert_string_equal(victim, "keep\n");
}

static void stale_temporaries_of_dead_processes_go(void **state)
{
    (void)state;
    assert_int_equal(mkdir(at("stale"), 0700), 0);
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0); /* a PID that is no longer alive */
    char dead[600], live[600], other[600], mine[600], notours[600];
    char target[600];
    snprintf(target, sizeof target, "%s/stale/REPORT.md", dir);
    sf_temp_name(target, "", mine, sizeof mine); /* this process's own: kept */
    /* a dead PID's name: this process's name with the child's PID */
    char *p = strstr(mine, SF_TMP_PREFIX) + strlen(SF_TMP_PREFIX);
    snprintf(dead, sizeof dead, "%.*s%ld%s", (int)(p - mine), mine, (long)child, strchr(p, '_'));
    snprintf(live, sizeof live, "%.*s%ld%s", (int)(p - mine), mine, (long)getppid(), strchr(p, '_'));
    snprintf(other, sizeof other, "%s/stale/" SF_TMP_PREFIX "%ld_other-node_REPORT.md", dir, (long)child);
    snprintf(notours, sizeof notours, "%s/stale/REPORT.md.tmp-%ld", dir, (long)child);
    const char *all[] = {dead, live, other, mine, notours};
    for (int i = 0; i < 5; i++)
        put(all[i], "t");
    char dead_dir[600]; /* a folder with a temporary's name is never removed */
    snprintf(dead_dir, sizeof dead_dir, "%s/stale/" SF_TMP_PREFIX "%ld%s", dir, (long)child, strchr(p, '_'));
    strcat(dead_dir, ".d");
    assert_int_equal(mkdir(dead_dir, 0700), 0);
    sf_clean_stale(at("stale"));
    assert_int_equal(access(dead, F_OK), -1);
    assert_int_equal(access(live, F_OK), 0);
    assert_int_equal(access(other, F_OK), 0);
    assert_int_equal(access(mine, F_OK), 0);
    assert_int_equal(access(notours, F_OK), 0);
    assert_int_equal(access(dead_dir, F_OK), 0);
}

static void folders_below_the_output_stay_inside(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_int_equal(mkdir(at("root"), 0700), 0);
    assert_int_equal(mkdir(at("outside"), 0700), 0);
    assert_int_equal(sf_mkdirs(at("root"), at("root/a/b"), &why), 0);
    assert_int_equal(sf_inside(at("root"), at("root/a/b/f.md"), &why), 0);
    assert_int_equal(symlink(at("outside"), at("root/l")), 0);
    assert_int_equal(sf_mkdirs(at("root"), at("root/l/b"), &why), -1);
    assert_int_equal(errno, ENOTDIR);
    assert_int_equal(sf_inside(at("root"), at("root/l/f.md"), &why), -1);
    assert_int_equal(access(at("outside/b"), F_OK), -1);
    /* the root itself may be a link: it is the user's */
    assert_int_equal(symlink(at("root"), at("root-link")), 0);
    assert_int_equal(sf_mkdirs(at("root-link"), at("root-link/c"), &why), 0);
    assert_int_equal(sf_inside(at("root-link"), at("root-link/c/f"), &why), 0);
}

static void parse_messages_lose_the_input(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(sf_no_content("'[' or '{' expected near 'root:x:0:0'", buf, sizeof buf),
                        "'[' or '{' expected");
    assert_string_equal(sf_no_content("end of file expected", buf, sizeof buf), "end of file expected");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_only_regular_files),
        cmocka_unit_test(replaces_only_regular_files),
        cmocka_unit_test(stale_temporaries_of_dead_processes_go),
        cmocka_unit_test(folders_below_the_output_stay_inside),
        cmocka_unit_test(parse_messages_lose_the_input),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
