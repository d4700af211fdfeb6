/* The kernels' ISA level and SPEEDLAB_ISA (kernels/isa.h). meson runs this binary several times with
 * SPEEDLAB_ISA set or not; the test reads the same variable and asserts what must follow from it and
 * from the CPU: the level that runs, its vector width, the forced value, or the error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "isa.h"
#include "sl_config.h"

static const struct { const char *isa; int bytes; } widths[] = {
    {"avx512", 64}, {"avx2", 32}, {"avx", 32}, {"sse4.2", 16}, {"sse2", 16}, {"neon", 16}, {"generic", 8}};

/* The level a SPEEDLAB_ISA value names (2-4), 0 for none. */
static int named_level(const char *s)
{
    if (!strcmp(s, "v2") || !strcmp(s, "sse4.2") || !strcmp(s, "x86-64-v2")) return 2;
    if (!strcmp(s, "v3") || !strcmp(s, "avx2") || !strcmp(s, "x86-64-v3")) return 3;
    if (!strcmp(s, "v4") || !strcmp(s, "avx512") || !strcmp(s, "x86-64-v4")) return 4;
    return 0;
}

static int cpu_has_level(int level)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (level == 4)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    if (level == 3)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
               __builtin_cpu_supports("bmi2");
    if (level == 2) return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt");
#endif
    return 0;
}

static void test_width_matches_name(void **state)
{
    (void)state;
    const char *isa = kern_isa();
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        if (strcmp(isa, widths[i].isa) == 0) {
            assert_int_equal(kern_isa_vector_bytes(), widths[i].bytes);
            return;
        }
    fail_msg("kern_isa() returned an unknown name '%s'", isa);
}

static void test_mode_and_march(void **state)
{
    (void)state;
    assert_string_equal(kern_isa_mode(), SL_ISA_DISPATCH ? "dispatch" : "native");
    if (SL_ISA_DISPATCH)
        assert_string_equal(kern_isa_march(), "x86-64-v2,x86-64-v3,x86-64-v4");
    else
        assert_true(strlen(kern_isa_march()) > 0);
}

/* SPEEDLAB_ISA unset: no error, nothing forced; in a dispatch build the best level of the CPU runs. */
static void test_forced_level(void **state)
{
    (void)state;
    const char *want = getenv("SPEEDLAB_ISA");
    if (!want || !*want) {
        assert_null(kern_isa_error());
        assert_null(kern_isa_forced());
        if (SL_ISA_DISPATCH) {
            const char *best = cpu_has_level(4) ? "avx512" : cpu_has_level(3) ? "avx2" : "sse4.2";
            assert_string_equal(kern_isa(), best);
        }
        return;
    }
    static const char *const names[] = {"", "", "sse4.2", "avx2", "avx512"};
    int w = named_level(want);
    if (SL_ISA_DISPATCH && w && cpu_has_level(w)) {
        assert_null(kern_isa_error());
        assert_string_equal(kern_isa_forced(), want);
        assert_string_equal(kern_isa(), names[w]);
    } else if (!SL_ISA_DISPATCH && w && strcmp(kern_isa(), names[w]) == 0) {
        assert_null(kern_isa_error());          /* a native build forced to the level it has */
        assert_string_equal(kern_isa_forced(), want);
    } else {
        assert_non_null(kern_isa_error());      /* not a level, a level the CPU lacks, or not built */
        assert_non_null(strstr(kern_isa_error(), want));
        assert_null(kern_isa_forced());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_width_matches_name),
        cmocka_unit_test(test_mode_and_march),
        cmocka_unit_test(test_forced_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
