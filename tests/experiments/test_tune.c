/*
 * test_tune.c: the planner (experiments/planner.c, tune.c, wisdom.c) through `speedlab tune` and `speedlab
 * run` in a child, with a study of the test's own and FAKE ISA levels (sl_levels_override): a dispatch
 * build on a "v4 CPU" whose select() only moves a static. The study's kernels take, on a clock of the
 * test's own, four times longer at one level than the other (one row) or the same at both (another), so
 * that tune's choice is the test's and not the busy machine's; and they
 * record the level they ran at (level_seen) and the level when the size's setup ran (setup_level).
 * What is asserted: tune's wisdom lines (level, both times), --dry-run, the record's impl and the level
 * the kernel really ran at, the level back at the default after a case, env.planner, tuning off, bad
 * wisdom and SPEEDLAB_TUNE refused before any run directory, other CPUs' and builds' lines kept and not
 * applied, a level that fails its check never chosen, SPEEDLAB_ISA (forced), a one-level build, rows the
 * planner has no say in; and wisdom.c's read, put and write.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "commands.h"
#include "planner.h"
#include "runner_test.h"
#include "sl_config.h"
#include "wisdom.h"

/* ---- the fake levels: x86-64 v2..v4 on a v4 CPU, or one level, or SPEEDLAB_ISA "set" ------------- */

static int lv_lo = 2, lv_hi = 4, lv_cur = 4;
static const char *lv_forced_name; /* what forced() says: NULL, or SPEEDLAB_ISA's value */

static int lv_has(int l) { return l >= lv_lo && l <= lv_hi; }
static int lv_select(int l) { return lv_has(l) ? (lv_cur = l, 0) : -1; }
static int lv_current(void) { return lv_cur; }
static int lv_default(void) { return lv_hi; }
static const char *lv_isa(void) { return lv_cur == 4 ? "avx512" : lv_cur == 3 ? "avx2" : "sse4.2"; }
static const char *lv_forced(void) { return lv_forced_name; }
static const sl_levels fake_levels = {lv_has, lv_select, lv_current, lv_default, lv_isa, lv_forced, NULL};

/* ---- the study: each row takes its time at v4 and at v3; one fails its check at v3 ---------------- */

typedef struct lv_kernel {
    int ms_v4, ms_v3; /* what one call takes at each level (v2 as v3), ms of the test's clock */
    int bad_at;       /* the level at which the check fails, or 0 */
} lv_kernel;

typedef struct lv_state {
    int setup_level; /* the level running when setup was called: the previous case's restore */
    int seen;        /* the level the last run() ran at */
} lv_state;

static const sl_study lv_study;

/* The clock tune and the runner read (prof_now_ns, wrapped by the linker: meson.build) runs ahead by
 * the time the kernels say they took: a row's time at each level is its declared cost, give or take the
 * microseconds of real work around the call, so that a busy machine's wake-up delays cannot make one
 * level look faster than the other; and no test waits for it. */
uint64_t __real_prof_now_ns(void);
uint64_t __wrap_prof_now_ns(void);
static uint64_t virtual_ns;
uint64_t __wrap_prof_now_ns(void) { return __real_prof_now_ns() + virtual_ns; }

static void *lv_setup(long n, const sl_opts *o, sl_error *err)
{
    (void)n, (void)o, (void)err;
    lv_state *s = calloc(1, sizeof *s);
    if (s)
        s->setup_level = sl_levels_now()->current();
    return s;
}

static int lv_run(void *st, int v, sl_record *rec, sl_error *err)
{
    (void)rec, (void)err;
    lv_state *s = st;
    const lv_kernel *k = lv_study.variants[v].kernels;
    s->seen = sl_levels_now()->current();
    virtual_ns += (uint64_t)(s->seen >= 4 ? k->ms_v4 : k->ms_v3) * 1000000u;
    return 0;
}

static int lv_check(void *st, int v, double *rel_err, sl_error *err)
{
    (void)err;
    const lv_kernel *k = lv_study.variants[v].kernels;
    *rel_err = k->bad_at && ((lv_state *)st)->seen == k->bad_at ? 1.0 : 0.0;
    return 0;
}

static void lv_finish(void *st, int v, sl_record *rec)
{
    (void)v;
    sl_record_metric(rec, "level_seen", ((lv_state *)st)->seen);
    sl_record_metric(rec, "setup_level", ((lv_state *)st)->setup_level);
}

static double lv_flops(long n, const sl_opts *o) { (void)o; return (double)n; }
static double lv_footprint(long n, const sl_opts *o) { (void)o; return 64.0 * (double)n; }

static const long lv_sizes[] = {1, 2};
/* Order matters: "wide" runs last in a size, so the next size's setup sees whether its level was put back. */
static const sl_variant lv_variants[] = {
    {"even", NULL, "as fast at v3 as at v4", NULL, 0, &(const lv_kernel){40, 40, 0}},
    {"v3bad", NULL, "faster at v3, but wrong there", NULL, 0, &(const lv_kernel){40, 10, 3}},
    {"blasrow", "blas", "stands for a BLAS call", NULL, 0, &(const lv_kernel){10, 10, 0}},
    {"gpu", "cuda", "stands for a GPU row", NULL, SL_DEVICE, &(const lv_kernel){10, 10, 0}},
    {"near", NULL, "2.5 % faster at v3: inside tune's margin", NULL, 0, &(const lv_kernel){40, 39, 0}},
    {"past", NULL, "7.5 % faster at v3: past tune's margin", NULL, 0, &(const lv_kernel){40, 37, 0}},
    {"wide", NULL, "four times faster at v3", NULL, 0, &(const lv_kernel){40, 10, 0}},
};

static const sl_study lv_study = {
    .name = "lvl", .title = "levels", .source = "tests", .kind = SL_KERNEL, .size_name = "N",
    .sizes = lv_sizes, .n_sizes = 2, .quick_sizes = lv_sizes, .n_quick_sizes = 2,
    .baseline = "even", .tolerance = 1e-3, .variants = lv_variants,
    .n_variants = (int)(sizeof lv_variants / sizeof *lv_variants), .default_reps = 2,
    .flops = lv_flops, .bytes = lv_flops, .footprint = lv_footprint,
    .setup = lv_setup, .run = lv_run, .check = lv_check, .finish = lv_finish, .teardown = free,
};
static const sl_study *const lv_registry[] = {&lv_study};

/* ---- speedlab in a child: stdout and stderr kept ------------------------------------------------- */

static char out_buf[16384], err_buf[16384], wisdom[PATH_MAX + 32];
static const char *tune_env; /* SPEEDLAB_TUNE in the child, or NULL for unset */

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* `speedlab ARGS... NULL` with the lvl registry and the fake levels; its exit code. */
static int speedlab(const char *first, ...)
{
    char *argv[32] = {"speedlab"};
    int argc = 1;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    char outp[PATH_MAX + 16], errp[PATH_MAX + 16];
    snprintf(outp, sizeof outp, "%s/stdout.txt", rt_tmpdir);
    snprintf(errp, sizeof errp, "%s/stderr.txt", rt_tmpdir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, STDOUT_FILENO);
        dup2(e, STDERR_FILENO);
        if (tune_env)
            setenv("SPEEDLAB_TUNE", tune_env, 1);
        else
            unsetenv("SPEEDLAB_TUNE");
        sl_levels_override(&fake_levels);
        int rc = sl_main(argc, argv, lv_registry, 1);
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    slurp(outp, out_buf, sizeof out_buf);
    slurp(errp, err_buf, sizeof err_buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define expect_rc(want, rc) \
    do { \
        int rc_ = (rc); \
        if (rc_ != (want)) \
            fail_msg("exit %d, want %d\nstdout: %s\nstderr: %s", rc_, (want), out_buf, err_buf); \
    } while (0)

static int tune_setup(void **state)
{
    lv_lo = 2, lv_hi = 4, lv_cur = 4, lv_forced_name = NULL, tune_env = NULL;
    sl_levels_override(&fake_levels); /* the in-process planner calls too */
    if (rt_setup_dir(state) != 0)
        return -1;
    snprintf(wisdom, sizeof wisdom, "%s/wisdom.tsv", rt_tmpdir);
    return 0;
}

static int tune_teardown(void **state)
{
    sl_levels_override(NULL);
    return rt_remove_dir(state);
}

/* Writes the wisdom file: a comment, then `lines`, each HERE in them replaced by this CPU's and build's
 * keys (the first two fields). */
#define HERE "@HERE@\t"
static void write_wisdom(const char *lines)
{
    char cpu[320], build[320];
    sl_cpu_key(cpu, sizeof cpu);
    sl_build_key(build, sizeof build);
    FILE *f = fopen(wisdom, "w");
    assert_non_null(f);
    fputs("# cpu\tbuild\tstudy\tvariant\tlevel\ttimes\tsize\tthreads\tdate\n", f);
    for (const char *p = lines; *p;) {
        const char *at = strstr(p, "@HERE@");
        size_t n = at ? (size_t)(at - p) : strlen(p);
        fwrite(p, 1, n, f);
        if (!at)
            break;
        fprintf(f, "%s\t%s", cpu, build);
        p = at + 6;
    }
    fclose(f);
}

/* This CPU's and build's entry for a variant of lvl in the wisdom file, copied into *out; 0 or -1. */
static int wisdom_entry(const char *variant, sl_wisdom_entry *out, char *times, size_t n)
{
    char cpu[320], build[320], err[1024];
    sl_cpu_key(cpu, sizeof cpu);
    sl_build_key(build, sizeof build);
    sl_wisdom w;
    if (sl_wisdom_read(wisdom, &w, err, sizeof err) != 0)
        fail_msg("%s", err);
    const sl_wisdom_entry *e = sl_wisdom_find(&w, cpu, build, "lvl", variant);
    if (e) {
        *out = *e;
        snprintf(times, n, "%s", e->times);
    }
    sl_wisdom_free(&w);
    return e ? 0 : -1;
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

/* The records of the last run, and one's impl field. */
static json_t *impl_of(json_t *all, const char *variant, long size)
{
    return json_object_get(rt_find_case(all, variant, size), "impl");
}

static double metric(json_t *all, const char *variant, long size, const char *name)
{
    json_t *m = json_object_get(json_object_get(rt_find_case(all, variant, size), "metrics"), name);
    if (!json_is_number(m))
        fail_msg("%s N=%ld: no metric %s", variant, size, name);
    return json_number_value(m);
}

static void assert_impl(json_t *all, const char *variant, long size, const char *level, const char *by)
{
    json_t *im = impl_of(all, variant, size);
    if (!im)
        fail_msg("%s N=%ld: no impl", variant, size);
    assert_string_equal(rt_str(im, "level"), level);
    assert_string_equal(rt_str(im, "isa"), !strcmp(level, "v4") ? "avx512" : "avx2");
    assert_string_equal(rt_str(im, "chosen_by"), by);
    assert_true(strlen(rt_str(im, "why")) > 0);
    /* the kernel ran at the level the record names */
    assert_int_equal((int)metric(all, variant, size, "level_seen"), level[1] - '0');
}

/* ---- 1. tune -------------------------------------------------------------------------------------- */

static void test_tune_writes_choices(void **state)
{
    (void)state;
    expect_rc(0, speedlab("tune", "lvl", "--variants", "wide,even,near,past", "--wisdom", wisdom, NULL));
    sl_wisdom_entry e;
    char times[160];
    if (wisdom_entry("wide", &e, times, sizeof times) != 0)
        fail_msg("no line for wide in %s; stdout: %s", wisdom, out_buf);
    if (e.level != 3 || !strstr(times, "v3=") || !strstr(times, "v4="))
        fail_msg("wide: v%d (%s), want v3, four times faster there, with both times; stdout:\n%s", e.level, times,
                 out_buf);
    double t3 = atof(strstr(times, "v3=") + 3), t4 = atof(strstr(times, "v4=") + 3);
    if (!(t3 >= 0.010 && t3 < 0.011 && t4 >= 0.040 && t4 < 0.041)) /* 10 and 40 ms */
        fail_msg("wide: times %s, want 0.01 and 0.04 s", times);
    assert_int_equal(e.threads, 1);
    assert_int_equal(wisdom_entry("even", &e, times, sizeof times), 0);
    if (e.level != 4) /* no faster below: the widest stays */
        fail_msg("even: v%d (%s), want v4: as fast at both levels; stdout:\n%s", e.level, times, out_buf);
    /* a narrower level only when more than 5 % faster */
    assert_int_equal(wisdom_entry("near", &e, times, sizeof times), 0);
    if (e.level != 4)
        fail_msg("near: v%d (%s), want v4: v3 is only 2.5 %% faster; stdout:\n%s", e.level, times, out_buf);
    assert_int_equal(wisdom_entry("past", &e, times, sizeof times), 0);
    if (e.level != 3)
        fail_msg("past: v%d (%s), want v3: 7.5 %% faster; stdout:\n%s", e.level, times, out_buf);
    /* only the variants asked for, and never a row whose library or device picks the ISA */
    assert_int_equal(wisdom_entry("blasrow", &e, times, sizeof times), -1);
    assert_int_equal(wisdom_entry("v3bad", &e, times, sizeof times), -1);
    assert_non_null(strstr(out_buf, "-> v3"));

    snprintf(wisdom, sizeof wisdom, "%s/dry/wisdom.tsv", rt_tmpdir);
    expect_rc(0, speedlab("tune", "lvl", "--variants", "wide", "--wisdom", wisdom, "--dry-run", NULL));
    assert_false(exists(wisdom));
    assert_non_null(strstr(out_buf, "--dry-run"));
}

/* ---- 2. run with wisdom --------------------------------------------------------------------------- */

static void test_run_at_wisdom_level(void **state)
{
    (void)state;
    write_wisdom(HERE "lvl\twide\tv3\tv3=0.002,v4=0.008\tN=1\t1\t2026-01-01T00:00:00Z\n"
                 "Other CPU (family 6, model 1, stepping 1)\tb\tlvl\teven\tv3\tv3=1,v4=2\tN=1\t1\td\n");
    expect_rc(0, speedlab("run", "lvl", "--variants", "even,wide", "--quick", "--wisdom", wisdom, "--out",
                          rt_out_dir, NULL));
    json_t *all = rt_read_latest(rt_out_dir);
    for (long n = 1; n <= 2; n++) {
        assert_impl(all, "wide", n, "v3", "wisdom");
        assert_non_null(strstr(rt_str(impl_of(all, "wide", n), "why"), "v3=0.002,v4=0.008"));
        assert_impl(all, "even", n, "v4", "default"); /* no line of this CPU: the widest */
    }
    /* wide ran last at N=1; N=2's setup came after it: the level was back at the default */
    assert_int_equal((int)metric(all, "even", 2, "setup_level"), 4);
    json_t *pl = json_object_get(json_object_get(rt_find_case(all, "wide", 1), "env"), "planner");
    assert_non_null(pl);
    assert_string_equal(rt_str(pl, "wisdom"), wisdom);
    assert_string_equal(rt_str(pl, "tuning"), "on");
    assert_int_equal(json_integer_value(json_object_get(pl, "choices")), 1); /* the other CPU's not counted */
    json_decref(all);
}

/* tune's file, read back by run: the two commands agree on the keys */
/* `speedlab run lvl --variants wide` at N=1, once, with the test's wisdom and `extra` (or NULL) after it;
 * its records. */
static json_t *run_wide(const char *extra)
{
    expect_rc(0, speedlab("run", "lvl", "--variants", "wide", "--sizes", "1", "--reps", "1", "--min-time", "0",
                          "--wisdom", wisdom, "--out", rt_out_dir, extra, NULL));
    return rt_read_latest(rt_out_dir);
}

static void test_tune_then_run(void **state)
{
    (void)state;
    expect_rc(0, speedlab("tune", "lvl", "--variants", "wide", "--wisdom", wisdom, NULL));
    json_t *all = run_wide(NULL);
    assert_impl(all, "wide", 1, "v3", "wisdom");
    json_decref(all);
}

/* ---- 3. tuning off -------------------------------------------------------------------------------- */

static void test_tuning_off(void **state)
{
    (void)state;
    write_wisdom(HERE "lvl\twide\tv3\tv3=0.002,v4=0.008\tN=1\t1\t2026-01-01T00:00:00Z\n");
    for (int k = 0; k < 2; k++) {
        tune_env = k ? "off" : NULL;
        json_t *all = run_wide(k ? NULL : "--no-tune");
        assert_impl(all, "wide", 1, "v4", "default");
        json_t *pl = json_object_get(json_object_get(rt_find_case(all, "wide", 1), "env"), "planner");
        assert_string_equal(rt_str(pl, "tuning"), "off");
        json_decref(all);
    }
    tune_env = "bogus";
    char out[PATH_MAX + 32];
    snprintf(out, sizeof out, "%s/bogus", rt_tmpdir);
    expect_rc(2, speedlab("run", "lvl", "--variants", "wide", "--wisdom", wisdom, "--out", out, NULL));
    assert_non_null(strstr(err_buf, "SPEEDLAB_TUNE=bogus"));
    assert_false(exists(out));
}

/* ---- 4. a malformed wisdom file ------------------------------------------------------------------- */

static void test_malformed_wisdom(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "lvl\twide\tv3\tv3=1,v4=2\tN=1\t1\n",                  /* 8 fields */
        "lvl\twide\tv3\tv3=1,v4=2\tN=1\t1\td\textra\n",        /* 10 fields */
        "lvl\twide\tv9\tv3=1,v4=2\tN=1\t1\td\n",               /* no such level */
        "lvl\twide\tv3\tv3=1,v4=2\tN=1\t0\td\n",               /* no threads */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char lines[1024], out[PATH_MAX + 32], before[4096], after[4096];
        snprintf(lines, sizeof lines, HERE "lvl\teven\tv4\tv4=1\tN=1\t1\td\n" HERE "%s", bad[i]);
        write_wisdom(lines);
        slurp(wisdom, before, sizeof before);
        snprintf(out, sizeof out, "%s/out%zu", rt_tmpdir, i);
        expect_rc(2, speedlab("run", "lvl", "--variants", "wide", "--wisdom", wisdom, "--out", out, NULL));
        char where[PATH_MAX + 64];
        snprintf(where, sizeof where, "%s, line 3", wisdom); /* after the comment and a good line */
        if (!strstr(err_buf, where))
            fail_msg("case %zu: stderr does not say '%s': %s", i, where, err_buf);
        assert_false(exists(out));
        /* tune refuses it too, and leaves it as it was */
        expect_rc(2, speedlab("tune", "lvl", "--variants", "wide", "--wisdom", wisdom, NULL));
        assert_non_null(strstr(err_buf, where));
        slurp(wisdom, after, sizeof after);
        assert_string_equal(before, after);
        /* what the message offers: --no-tune runs past it */
        expect_rc(0, speedlab("run", "lvl", "--variants", "wide", "--sizes", "1", "--reps", "1", "--wisdom", wisdom,
                              "--no-tune", "--out", out, NULL));
    }
}

/* ---- 5. other CPUs and builds --------------------------------------------------------------------- */

static const char other_cpu[] = "Other CPU (family 6, model 1, stepping 1)\tbuild-x\tlvl\twide\tv4\tv3=1,v4=2\tN=1\t1\td1\n";

static void test_other_lines_kept(void **state)
{
    (void)state;
    char cpu[320], lines[2048], text[8192];
    sl_cpu_key(cpu, sizeof cpu);
    char other_build[400];
    snprintf(other_build, sizeof other_build, "%s\tanother build\tlvl\teven\tv3\tv3=1,v4=2\tN=1\t1\td2\n", cpu);
    snprintf(lines, sizeof lines, "%s%s", other_cpu, other_build);
    write_wisdom(lines);
    /* another build's line is not this build's choice */
    expect_rc(0, speedlab("run", "lvl", "--variants", "even", "--sizes", "1", "--reps", "1", "--min-time", "0",
                          "--wisdom", wisdom, "--out", rt_out_dir, NULL));
    json_t *all = rt_read_latest(rt_out_dir);
    assert_impl(all, "even", 1, "v4", "default");
    json_decref(all);
    /* tune rewrites the file with both lines as they were; also with tuning off for runs */
    for (int k = 0; k < 2; k++) {
        tune_env = k ? "off" : NULL;
        expect_rc(0, speedlab("tune", "lvl", "--variants", "wide", "--wisdom", wisdom, NULL));
        slurp(wisdom, text, sizeof text);
        if (!strstr(text, other_cpu) || !strstr(text, other_build))
            fail_msg("SPEEDLAB_TUNE=%s: tune dropped another CPU's or build's line:\n%s", tune_env ? tune_env : "",
                     text);
        sl_wisdom_entry e;
        char times[160];
        assert_int_equal(wisdom_entry("wide", &e, times, sizeof times), 0);
    }
}

/* ---- 6. a level that fails its check -------------------------------------------------------------- */

static void test_failing_level_never_chosen(void **state)
{
    (void)state;
    expect_rc(1, speedlab("tune", "lvl", "--variants", "v3bad", "--wisdom", wisdom, NULL));
    assert_non_null(strstr(err_buf, "v3bad at v3"));
    assert_non_null(strstr(err_buf, "not chosen"));
    sl_wisdom_entry e;
    char times[160];
    assert_int_equal(wisdom_entry("v3bad", &e, times, sizeof times), 0);
    assert_int_equal(e.level, 4); /* though v3 is four times faster */
    assert_null(strstr(times, "v3=")); /* a level that fails its check has no time */
}

/* ---- 7. SPEEDLAB_ISA and one-level builds --------------------------------------------------------- */

static void test_forced_level(void **state)
{
    (void)state;
    write_wisdom(HERE "lvl\twide\tv3\tv3=0.002,v4=0.008\tN=1\t1\td\n");
    lv_forced_name = "v4";
    expect_rc(2, speedlab("tune", "lvl", "--wisdom", wisdom, NULL));
    assert_non_null(strstr(err_buf, "SPEEDLAB_ISA=v4"));
    json_t *all = run_wide(NULL);
    assert_impl(all, "wide", 1, "v4", "forced"); /* the wisdom's v3 yields to SPEEDLAB_ISA */
    assert_non_null(strstr(rt_str(impl_of(all, "wide", 1), "why"), "SPEEDLAB_ISA=v4"));
    json_decref(all);
}

static void test_one_level(void **state)
{
    (void)state;
    lv_lo = lv_hi = lv_cur = 4;
    expect_rc(0, speedlab("tune", "lvl", "--wisdom", wisdom, NULL));
    assert_non_null(strstr(out_buf, "nothing to choose"));
    assert_false(exists(wisdom));
    json_t *all = run_wide(NULL);
    assert_impl(all, "wide", 1, "v4", "build");
    json_decref(all);
}

/* ---- 8. rows the planner has no say in ------------------------------------------------------------ */

static void test_rows_without_say(void **state)
{
    (void)state;
    /* a framework baseline and a GPU row: level 0, no impl (in-process: no Python needed) */
    static const sl_variant rows[] = {
        {"py", "python:numpy", "a framework", NULL, SL_EXTERNAL, NULL},
        {"dev", "cuda", "a GPU row", NULL, SL_DEVICE, NULL},
        {"lib", "blas", "a BLAS call", NULL, 0, NULL},
        {"own", NULL, "speedlab's", NULL, 0, NULL},
    };
    sl_study s = {.name = "lvl", .variants = rows, .n_variants = 4};
    sl_planner p;
    char err[1024];
    assert_int_equal(sl_planner_open(&p, wisdom, 0, err, sizeof err), 0);
    sl_impl im;
    for (int v = 0; v < 2; v++) {
        sl_planner_choose(&p, &s, v, &im);
        assert_int_equal(im.level, 0);
        assert_null(sl_impl_json(&im));
        char why[200];
        assert_int_equal(sl_variant_tunable(&rows[v], why, sizeof why), 0);
    }
    sl_planner_choose(&p, &s, 2, &im);
    assert_int_equal(im.level, 4);
    assert_string_equal(im.chosen_by, "library");
    sl_planner_choose(&p, &s, 3, &im);
    assert_string_equal(im.chosen_by, "default");
    sl_planner_close(&p);

    /* through a run: the GPU row's record has no impl; the BLAS row's says library, whatever the wisdom */
    write_wisdom(HERE "lvl\tblasrow\tv3\tv3=1,v4=2\tN=1\t1\td\n" HERE "lvl\tgpu\tv3\tv3=1,v4=2\tN=1\t1\td\n");
    expect_rc(0, speedlab("run", "lvl", "--variants", "gpu,blasrow", "--sizes", "1", "--reps", "1", "--min-time",
                          "0", "--wisdom", wisdom, "--out", rt_out_dir, NULL));
    json_t *all = rt_read_latest(rt_out_dir);
    assert_null(impl_of(all, "gpu", 1));
    if (SL_HAVE_BLAS)
        assert_impl(all, "blasrow", 1, "v4", "library");
    json_decref(all);
    expect_rc(0, speedlab("tune", "lvl", "--variants", "gpu,blasrow", "--wisdom", wisdom, NULL));
    assert_non_null(strstr(out_buf, "0 choices"));
    if (!SL_HAVE_BLAS) { /* the BLAS row is unavailable: its run-level case is not checked */
        print_message("# built without BLAS: the 'library' row's record is not checked\n");
        skip();
    }
}

/* ---- wisdom.c -------------------------------------------------------------------------------------- */

static void write_raw(const char *bytes, size_t n)
{
    FILE *f = fopen(wisdom, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

static void test_wisdom_round_trip(void **state)
{
    (void)state;
    sl_wisdom w;
    char err[1024];
    assert_int_equal(sl_wisdom_read(wisdom, &w, err, sizeof err), 0); /* no file: empty */
    assert_int_equal(w.n, 0);
    static const char crlf[] = "# comment\r\n\r\ncpu A\tbuild 1\ts\tv\tv3\tv3=1,v4=2\tN=4\t2\td\r\n"
                               "cpu A\tbuild 1\ts\tu\tv2\tv2=1\tN=4\t16\td\n";
    write_raw(crlf, sizeof crlf - 1);
    assert_int_equal(sl_wisdom_read(wisdom, &w, err, sizeof err), 0);
    assert_int_equal(w.n, 2);
    const sl_wisdom_entry *e = sl_wisdom_find(&w, "cpu A", "build 1", "s", "v");
    assert_non_null(e);
    assert_int_equal(e->level, 3);
    assert_int_equal(e->threads, 2);
    assert_string_equal(e->date, "d"); /* no '\r' left */
    assert_string_equal(e->times, "v3=1,v4=2");
    assert_null(sl_wisdom_find(&w, "cpu A", "build 2", "s", "v"));
    /* put: a replacement in place, a new entry after, tabs in a field made spaces */
    sl_wisdom_entry r = {"cpu A", "build 1", "s", "v", "v4=1", "N=8", "d2", 4, 1};
    sl_wisdom_entry a = {"cpu\tB", "build 1", "s", "v", "v3=1", "N=8", "d3", 2, 4096};
    assert_int_equal(sl_wisdom_put(&w, &r), 0);
    assert_int_equal(sl_wisdom_put(&w, &a), 0);
    assert_int_equal(w.n, 3);
    assert_int_equal(w.e[0].level, 4);
    assert_string_equal(w.e[0].size, "N=8");
    assert_string_equal(w.e[2].cpu, "cpu B");
    snprintf(wisdom, sizeof wisdom, "%s/new/dir/wisdom.tsv", rt_tmpdir); /* made when missing */
    assert_int_equal(sl_wisdom_write(&w, wisdom, err, sizeof err), 0);
    sl_wisdom back;
    assert_int_equal(sl_wisdom_read(wisdom, &back, err, sizeof err), 0);
    assert_int_equal(back.n, w.n);
    for (int i = 0; i < w.n; i++) {
        assert_string_equal(back.e[i].cpu, w.e[i].cpu);
        assert_string_equal(back.e[i].variant, w.e[i].variant);
        assert_string_equal(back.e[i].times, w.e[i].times);
        assert_string_equal(back.e[i].date, w.e[i].date);
        assert_int_equal(back.e[i].level, w.e[i].level);
        assert_int_equal(back.e[i].threads, w.e[i].threads);
    }
    sl_wisdom_free(&back);
    sl_wisdom_free(&w);
}

static void test_wisdom_refuses(void **state)
{
    (void)state;
    static const char nul[] = "cpu\tb\ts\tv\tv3\tt\tN=1\t1\td\ncpu\tb\ts\tu\tv3\tt\0x\tN=1\t1\td\n";
    static const char *const bad[] = {
        "cpu\tb\ts\tv\tv3\tt\tN=1\t1\td\ncpu\tb\ts\tu\tv3\tt\tN=1\t1\td\textra\n",
        "cpu\tb\ts\tv\tv3\tt\tN=1\t1\td\ncpu\tb\ts\tu\tv3\tt\tN=1\t1\n",
        "cpu\tb\ts\tv\tv3\tt\tN=1\t1\td\ncpu\tb\ts\tu\tv1\tt\tN=1\t1\td\n",
        "cpu\tb\ts\tv\tv3\tt\tN=1\t1\td\ncpu\tb\ts\tu\tv3\tt\tN=1\t4097\td\n",
        "cpu\tb\ts\tv\tv3\tt\tN=1\t1\td\ncpu\tb\t\tu\tv3\tt\tN=1\t1\td\n",
    };
    sl_wisdom w;
    char err[1024], where[PATH_MAX + 64];
    snprintf(where, sizeof where, "%s, line 2", wisdom);
    for (size_t i = 0; i <= sizeof bad / sizeof *bad; i++) {
        if (i < sizeof bad / sizeof *bad)
            write_raw(bad[i], strlen(bad[i]));
        else
            write_raw(nul, sizeof nul - 1);
        err[0] = '\0';
        if (sl_wisdom_read(wisdom, &w, err, sizeof err) != -1)
            fail_msg("case %zu: read as good (%d entries)", i, w.n);
        if (!strstr(err, where))
            fail_msg("case %zu: '%s' does not say '%s'", i, err, where);
        assert_int_equal(w.n, 0);
    }
    assert_non_null(strstr(err, "NUL"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wisdom_round_trip, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_wisdom_refuses, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_tune_writes_choices, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_run_at_wisdom_level, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_tune_then_run, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_tuning_off, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_malformed_wisdom, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_other_lines_kept, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_failing_level_never_chosen, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_forced_level, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_one_level, tune_setup, tune_teardown),
        cmocka_unit_test_setup_teardown(test_rows_without_say, tune_setup, tune_teardown),
    };
    return cmocka_run_group_tests_name("tune", tests, NULL, NULL);
}
