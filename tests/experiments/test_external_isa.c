/*
 * test_external_isa.c: the framework baselines at the kernels' instruction-set level
 * (experiments/external_isa.c, docs/baselines.md "Instruction-set level").
 * `test_external_isa`: the mapping from a level to the frameworks' variables (a user's own value kept,
 * XLA_FLAGS appended to), the baseline's environment made from them, and the mismatch check on a
 * planted report.
 * `test_external_isa run` (Meson's external_isa_v2, SPEEDLAB_ISA=v2): entropy_mi's NumPy baseline in a
 * --quick run, whose record's external.isa shows OpenBLAS's Nehalem core and NumPy without AVX, and with
 * the user's own OPENBLAS_CORETYPE=Haswell, kept and recorded as a mismatch, and the availability probe
 * run in the same environment; exit 77 (skipped) in a native build or where the interpreter lacks NumPy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "external.h"
#include "isa.h"
#include "runner_test.h"

static const char *const vars[] = {"ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA",
                                   "OPENBLAS_CORETYPE", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES",
                                   "NPY_DISABLE_CPU_FEATURES", "XLA_FLAGS"};

static int every_flag(const char *flag) { (void)flag; return 1; }
static int no_avx512(const char *flag) { return strncmp(flag, "avx512", 6) != 0; }

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        unsetenv(vars[i]);
}

/* v's entry for `name`, or NULL. */
static const sl_isa_var *var(const sl_isa_var *v, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0)
            return &v[i];
    return NULL;
}

static const char *value(const sl_isa_var *v, int n, const char *name)
{
    const sl_isa_var *x = var(v, n, name);
    return x ? x->value : NULL;
}

/* Whether the space-separated list has `word`. */
static int has_word(const char *list, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = list; p && (p = strstr(p, word)) != NULL; p += len)
        if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return 1;
    return 0;
}

static void test_levels(void **state)
{
    (void)state;
    sl_isa_var v[SL_ISA_VARS];
    clear_env();

    int n = sl_external_isa_vars("sse4.2", every_flag, v); /* v2 */
    assert_int_equal(n, 8);
    assert_string_equal(value(v, n, "ATEN_CPU_CAPABILITY"), "default");
    assert_string_equal(value(v, n, "ONEDNN_MAX_CPU_ISA"), "SSE41");
    assert_string_equal(value(v, n, "DNNL_MAX_CPU_ISA"), "SSE41");
    assert_string_equal(value(v, n, "OPENBLAS_CORETYPE"), "Nehalem");
    assert_string_equal(value(v, n, "NUMBA_CPU_NAME"), "nehalem");
    assert_string_equal(value(v, n, "NUMBA_CPU_FEATURES"), ""); /* the named CPU's own */
    assert_string_equal(value(v, n, "XLA_FLAGS"), "--xla_cpu_max_isa=SSE4_2");
    const char *npy = value(v, n, "NPY_DISABLE_CPU_FEATURES");
    for (const char *f = "AVX F16C FMA3 AVX2 X86_V3 AVX512F AVX512_SKX X86_V4 AVX512_ICL"; *f;) {
        char one[32];
        size_t len = strcspn(f, " ");
        snprintf(one, sizeof one, "%.*s", (int)len, f);
        assert_true(has_word(npy, one));
        f += len + (f[len] == ' ');
    }
    assert_false(has_word(npy, "SSE42") || has_word(npy, "POPCNT") || has_word(npy, "SSE41"));
    for (int i = 0; i < n; i++)
        assert_int_equal(v[i].user, 0);

    n = sl_external_isa_vars("avx2", every_flag, v); /* v3 */
    assert_string_equal(value(v, n, "ATEN_CPU_CAPABILITY"), "avx2");
    assert_string_equal(value(v, n, "ONEDNN_MAX_CPU_ISA"), "AVX2");
    assert_string_equal(value(v, n, "OPENBLAS_CORETYPE"), "Haswell");
    assert_string_equal(value(v, n, "NUMBA_CPU_NAME"), "haswell");
    assert_string_equal(value(v, n, "XLA_FLAGS"), "--xla_cpu_max_isa=AVX2");
    npy = value(v, n, "NPY_DISABLE_CPU_FEATURES");
    assert_true(has_word(npy, "AVX512F") && has_word(npy, "X86_V4") && has_word(npy, "AVX512_SKX"));
    assert_false(has_word(npy, "AVX2") || has_word(npy, "FMA3") || has_word(npy, "X86_V3"));
    /* on an AVX2-only CPU nothing is above v3: NumPy gets no list (it would warn about each name) */
    n = sl_external_isa_vars("avx2", no_avx512, v);
    assert_null(var(v, n, "NPY_DISABLE_CPU_FEATURES"));
    assert_int_equal(n, 7);

    n = sl_external_isa_vars("avx512", every_flag, v); /* v4 */
    assert_string_equal(value(v, n, "ATEN_CPU_CAPABILITY"), "avx512");
    assert_string_equal(value(v, n, "ONEDNN_MAX_CPU_ISA"), "AVX512_CORE");
    assert_string_equal(value(v, n, "OPENBLAS_CORETYPE"), "SkylakeX");
    assert_string_equal(value(v, n, "NUMBA_CPU_NAME"), "skylake-avx512");
    assert_string_equal(value(v, n, "XLA_FLAGS"), "--xla_cpu_max_isa=AVX512");
    npy = value(v, n, "NPY_DISABLE_CPU_FEATURES");
    assert_true(has_word(npy, "AVX512_ICL") && has_word(npy, "AVX512_SPR") && has_word(npy, "AVX512_CLX"));
    assert_false(has_word(npy, "AVX512_SKX") || has_word(npy, "X86_V4") || has_word(npy, "AVX512F"));

    assert_int_equal(sl_external_isa_vars("neon", every_flag, v), 0);
    assert_int_equal(sl_external_isa_vars(NULL, every_flag, v), 0);
}

static void test_user_values_kept(void **state)
{
    (void)state;
    sl_isa_var v[SL_ISA_VARS];
    clear_env();
    setenv("OPENBLAS_CORETYPE", "Core2", 1);
    setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2", 1);
    int n = sl_external_isa_vars("sse4.2", every_flag, v);
    assert_string_equal(value(v, n, "OPENBLAS_CORETYPE"), "Core2");
    assert_int_equal(var(v, n, "OPENBLAS_CORETYPE")->user, 1);
    assert_int_equal(var(v, n, "ATEN_CPU_CAPABILITY")->user, 0);
    /* the user's other XLA flags stay, the level's is appended */
    assert_string_equal(value(v, n, "XLA_FLAGS"),
                        "--xla_force_host_platform_device_count=2 --xla_cpu_max_isa=SSE4_2");
    assert_int_equal(var(v, n, "XLA_FLAGS")->user, 0);
    setenv("XLA_FLAGS", "--xla_cpu_max_isa=AVX2", 1);
    n = sl_external_isa_vars("sse4.2", every_flag, v);
    assert_string_equal(value(v, n, "XLA_FLAGS"), "--xla_cpu_max_isa=AVX2");
    assert_int_equal(var(v, n, "XLA_FLAGS")->user, 1);
    clear_env();
}

static void test_mismatch(void **state)
{
    (void)state;
    assert_true(sl_external_isa_rank("sse4.2") < sl_external_isa_rank("avx"));
    assert_true(sl_external_isa_rank("avx2") < sl_external_isa_rank("avx512"));
    assert_true(sl_external_isa_rank("avx512") < sl_external_isa_rank("avx512+"));
    assert_int_equal(sl_external_isa_rank("x87"), -1);
    json_error_t je;
    json_t *r = json_loads("{\"openblas\": {\"corename\": \"SkylakeX\", \"isa\": \"avx512\"},"
                           " \"numpy\": {\"isa\": \"avx2\"}, \"torch\": {\"capability\": null, \"isa\": null},"
                           " \"env\": {\"OPENBLAS_CORETYPE\": \"SkylakeX\"}}", 0, &je);
    assert_non_null(r);
    sl_external_isa_check(r, "avx2");
    const char *m = json_string_value(json_object_get(r, "mismatch"));
    assert_non_null(m);
    assert_non_null(strstr(m, "openblas SkylakeX (avx512)"));
    assert_null(strstr(m, "numpy"));
    assert_int_equal(json_array_size(json_object_get(r, "checked")), 2);
    json_object_del(r, "mismatch");
    sl_external_isa_check(r, "avx512");
    assert_null(json_object_get(r, "mismatch"));
    json_decref(r);
}

/* The baseline's environment: speedlab's values replace their names' entries, the user's stay, the rest
 * is copied as it is. */
static void test_env_with(void **state)
{
    (void)state;
    /* an entry without '=' and a name given twice, as execve would pass them on */
    char *const base[] = {"PATH=/bin", "ATEN_CPU_CAPABILITY=avx512", "ATEN_CPU_CAPABILITY_X=1", "NOEQUALS",
                          "OPENBLAS_CORETYPE=Core2", "XLA_FLAGS=--a", "ATEN_CPU_CAPABILITY=avx", NULL};
    sl_isa_var v[3] = {{.name = "ATEN_CPU_CAPABILITY", .value = "avx2"},
                       {.name = "OPENBLAS_CORETYPE", .value = "Haswell", .user = 1}, /* user: not applied */
                       {.name = "XLA_FLAGS", .value = "--a --xla_cpu_max_isa=AVX2"}};
    char **env = sl_external_env_with(base, v, 3);
    assert_non_null(env);
    static const char *const want[] = {"PATH=/bin", "ATEN_CPU_CAPABILITY_X=1", "NOEQUALS",
                                       "OPENBLAS_CORETYPE=Core2", "ATEN_CPU_CAPABILITY=avx2",
                                       "XLA_FLAGS=--a --xla_cpu_max_isa=AVX2"};
    size_t n = 0;
    while (env[n])
        n++;
    assert_int_equal(n, sizeof want / sizeof *want);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(env[i], want[i]);
    sl_external_env_free(env);
    env = sl_external_env_with(NULL, v, 0); /* nothing at all: an empty list */
    assert_non_null(env);
    assert_null(env[0]);
    sl_external_env_free(env);
}

/* ---- SPEEDLAB_ISA=v2 in a dispatch build: what the NumPy baseline ran at ------------------------ */

extern const sl_study sl_study_entropy_mi;
static const sl_study *const reg[] = {&sl_study_entropy_mi};

static void test_v2_run(void **state)
{
    (void)state;
    clear_env(); /* the level's own values, not the caller's */
    assert_int_equal(rt_speedlab(reg, 1, "run", "entropy_mi", "--variants", "numpy", "--sizes", "256",
                                 "--quick", "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, "numpy", 256);
    assert_string_equal(rt_str(r, "status"), "ok");
    json_t *isa = json_object_get(json_object_get(r, "external"), "isa");
    assert_non_null(isa);
    assert_string_equal(rt_str(isa, "requested"), "sse4.2");
    assert_string_equal(rt_str(isa, "level"), "v2");
    assert_null(json_object_get(isa, "mismatch"));
    json_t *blas = json_object_get(isa, "openblas");
    if (blas) /* NumPy on OpenBLAS (Debian's, PyPI's wheels) */
        assert_string_equal(rt_str(blas, "corename"), "Nehalem");
    json_t *np = json_object_get(isa, "numpy");
    assert_non_null(np);
    assert_string_equal(rt_str(np, "isa"), "sse4.2");
    json_t *f;
    size_t i;
    json_array_foreach(json_object_get(np, "dispatch"), i, f) {
        const char *name = json_string_value(f);
        assert_false(strcmp(name, "AVX2") == 0 || strcmp(name, "AVX") == 0 || strcmp(name, "FMA3") == 0 ||
                     strcmp(name, "X86_V3") == 0);
    }
    json_decref(all);
}

/* The availability probe runs in the program's environment: an interpreter that refuses the level's
 * variables (here a stand-in that fails unless OpenBLAS is held at Nehalem, and one that fails when it
 * is) makes the row unavailable before any case starts. */
static void test_v2_probe_env(void **state)
{
    (void)state;
    clear_env();
    static const char *const scripts[][2] = {{"held.sh", "test \"$OPENBLAS_CORETYPE\" = Nehalem"},
                                             {"refuses.sh", "test \"$OPENBLAS_CORETYPE\" != Nehalem"}};
    for (int i = 0; i < 2; i++) {
        char path[4400], why[512];
        snprintf(path, sizeof path, "%s/%s", rt_out_dir, scripts[i][0]);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "#!/bin/sh\n%s\n", scripts[i][1]);
        fclose(f);
        assert_int_equal(chmod(path, 0755), 0);
        setenv("SPEEDLAB_PYTHON", path, 1);
        int ok = sl_external_available("numpy", why, sizeof why);
        unsetenv("SPEEDLAB_PYTHON"); /* before any assert: the next tests use the real interpreter */
        assert_int_equal(ok, i == 0);
        if (i == 1) /* importable without the level's variables: the reason says so */
            assert_non_null(strstr(why, "but not with the variables that hold the frameworks"));
    }
}

/* Numba compiles for the level's CPU (where the interpreter has Numba). */
static void test_v2_numba(void **state)
{
    (void)state;
    char why[512];
    clear_env();
    if (!sl_external_available("numba", why, sizeof why))
        skip();
    assert_int_equal(rt_speedlab(reg, 1, "run", "entropy_mi", "--variants", "numba", "--sizes", "256",
                                 "--quick", "--out", rt_out_dir, NULL), 0);
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *r = rt_find_case(all, "numba", 256);
    assert_string_equal(rt_str(r, "status"), "ok");
    json_t *nb = json_object_get(json_object_get(json_object_get(r, "external"), "isa"), "numba");
    assert_non_null(nb);
    assert_string_equal(rt_str(nb, "cpu_name"), "nehalem");
    assert_string_equal(rt_str(nb, "isa"), "sse4.2");
    json_decref(all);
}

/* The user's own OPENBLAS_CORETYPE wins, and the record says it ran above the kernels' level. */
static void test_v2_user_value_mismatch(void **state)
{
    (void)state;
    clear_env();
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    assert_int_equal(rt_speedlab(reg, 1, "run", "entropy_mi", "--variants", "numpy", "--sizes", "256",
                                 "--quick", "--out", rt_out_dir, NULL), 0);
    unsetenv("OPENBLAS_CORETYPE");
    json_t *all = rt_read_latest(rt_out_dir);
    json_t *isa = json_object_get(json_object_get(rt_find_case(all, "numpy", 256), "external"), "isa");
    assert_string_equal(rt_str(json_object_get(isa, "user"), "OPENBLAS_CORETYPE"), "Haswell");
    if (json_object_get(isa, "openblas"))
        assert_non_null(strstr(rt_str(isa, "mismatch"), "openblas Haswell (avx2)"));
    json_decref(all);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "run") == 0) {
        char why[512];
        if (strcmp(kern_isa_mode(), "dispatch") != 0 || !kern_isa_forced() ||
            strcmp(kern_isa(), "sse4.2") != 0) {
            fprintf(stderr, "skipped: needs a dispatch build run with SPEEDLAB_ISA=v2 (this: %s, %s)\n",
                    kern_isa_mode(), kern_isa());
            return 77;
        }
        if (!sl_external_available("numpy", why, sizeof why)) {
            fprintf(stderr, "skipped: %s\n", why);
            return 77;
        }
        const struct CMUnitTest run[] = {cmocka_unit_test(test_v2_run),
                                         cmocka_unit_test(test_v2_user_value_mismatch),
                                         cmocka_unit_test(test_v2_probe_env),
                                         cmocka_unit_test(test_v2_numba)};
        return cmocka_run_group_tests_name("external isa v2", run, rt_setup_dir, rt_remove_dir);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels),
        cmocka_unit_test(test_user_values_kept),
        cmocka_unit_test(test_mismatch),
        cmocka_unit_test(test_env_with),
    };
    return cmocka_run_group_tests_name("external isa", tests, NULL, NULL);
}
