/*
 * tests/kernels/test_cublas_lazy.c: cuBLAS is loaded on first use (kernels/gpu/cublas_lazy.c), not
 * linked. Without a GPU: the process holds no libcublas until a cuBLAS function is called, then the
 * library loads and answers (its status strings are its own, not the fallback's), and the process
 * stays small before that (what the lazy load is for: libcublasLt made ~150 MB resident when linked).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <cublas_v2.h>

/* 1 when a mapping of the process names libcublas. */
static int cublas_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int found = 0;
    assert_non_null(f);
    while (fgets(line, sizeof line, f))
        found |= strstr(line, "libcublas") != NULL;
    fclose(f);
    return found;
}

static void test_loaded_on_first_use(void **state)
{
    (void)state;
    assert_false(cublas_mapped());
    const char *s = cublasGetStatusString(CUBLAS_STATUS_SUCCESS);
    assert_non_null(s);
    assert_string_not_equal(s, "cuBLAS not loaded"); /* the fallback's: the library's own is "success" (13.0) */
    assert_true(cublas_mapped());
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_loaded_on_first_use)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
