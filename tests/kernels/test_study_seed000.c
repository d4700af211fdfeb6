/* The seed-000 study glue (entropy_mi, tensor_mean) through the sl_study interface, as the runner
 * calls it: every CPU variant passes its check at a small size, inputs depend on the seed, the declared
 * work matches the documented counts, and bad variant indices are refused with an error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <jansson.h>

#include "record.h"
#include "sl_config.h"
#include "study.h"

static int can_run(const sl_variant *v)
{
    if (!v->requires)
        return 1;
    if (!strcmp(v->requires, "openmp"))
        return SL_HAVE_OPENMP;
    if (!strcmp(v->requires, "blas"))
        return SL_HAVE_BLAS;
    if (!strcmp(v->requires, "onednn"))
        return SL_HAVE_ONEDNN;
    return 0; /* cuda: tests/kernels/test_kernels_cuda.c */
}

static sl_opts opts(uint64_t seed)
{
    sl_opts o = {0};
    o.seed = seed;
    o.threads = 2;
    o.quick = 1;
    return o;
}

/* Runs every runnable variant of s at size n; returns the largest relative error. */
static double run_all(const sl_study *s, long n, uint64_t seed)
{
    sl_opts o = opts(seed);
    sl_error err = {{0}};
    void *st = s->setup(n, &o, &err);
    assert_non_null(st);
    double worst = 0.0;
    for (int v = 0; v < s->n_variants; v++) {
        if (!can_run(&s->variants[v]))
            continue;
        assert_int_equal(s->prepare ? s->prepare(st, v, &err) : 0, 0);
        assert_int_equal(s->run(st, v, NULL, &err), 0);
        double rel = -1.0;
        assert_int_equal(s->check(st, v, &rel, &err), 0);
        if (!(rel >= 0.0 && rel <= s->tolerance))
            fail_msg("%s %s size %ld: relative error %g > %g", s->name, s->variants[v].name, n, rel,
                     s->tolerance);
        worst = rel > worst ? rel : worst;
        if (s->release)
            s->release(st, v);
    }
    s->teardown(st);
    return worst;
}

static void test_entropy_mi_variants(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("entropy_mi");
    assert_non_null(s);
    run_all(s, 256, 42);
    run_all(s, 3, 7); /* a size outside the sweep works too */
}

static void test_tensor_mean_variants(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("tensor_mean");
    assert_non_null(s);
    run_all(s, 64, 42);
    run_all(s, 5, 7);
}

static void test_declared_work(void **state)
{
    (void)state;
    sl_opts o = opts(1);
    const sl_study *e = sl_find_study("entropy_mi"), *t = sl_find_study("tensor_mean");
    assert_true(e->flops(65536, &o) == 65536.0 * (3.0 * 256 * 256 + 12.0 * 256));
    assert_true(e->bytes(65536, &o) == 2.0 * 65536 * 256 * 4);
    assert_true(t->flops(8192, &o) == 8192.0 * (2.0 * 32768 + 1024) + 32768);
    assert_true(t->bytes(8192, &o) == (3.0 * 8192 * 32 + 32768) * 4);
    assert_string_equal(e->baseline, "naive");
    assert_string_equal(t->baseline, "naive");
    assert_true(e->tolerance == 1e-3 && t->tolerance == 1e-3);
}

/* factorized and factorized_omp do O(D) work per row: their records carry that work, B (16 D + 2)
 * flops, not the study's D x D count (which put factorized at 6-10x its roofline bound); the D x D
 * variants leave the declared work. */
static void test_factorized_records_own_work(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("entropy_mi");
    sl_opts o = opts(5);
    sl_error err = {{0}};
    const long B = 64;
    void *st = s->setup(B, &o, &err);
    assert_non_null(st);
    for (int v = 0; v < s->n_variants; v++) {
        const char *name = s->variants[v].name;
        const int own = strcmp(name, "factorized") == 0 || strcmp(name, "factorized_omp") == 0;
        if (!own && strcmp(name, "simd") != 0)
            continue;
        assert_int_equal(s->run(st, v, NULL, &err), 0);
        json_t *out = json_pack("{s:{s:f,s:f}}", "work", "flops", s->flops(B, &o), "bytes", s->bytes(B, &o));
        sl_record *r = sl_record_new();
        s->finish(st, v, r);
        sl_record_merge(r, out);
        double flops = json_number_value(json_object_get(json_object_get(out, "work"), "flops"));
        if (own)
            assert_true(flops == (double)B * (16.0 * 256 + 2.0));
        else
            assert_true(flops == s->flops(B, &o));
        sl_record_free(r);
        json_decref(out);
    }
    s->teardown(st);
}

/* Every study of the real registry passes the self-check `speedlab list` and `run` start with: each
 * variant is a complete row (the runner only ever passes a row's index, so a study needs no range check). */
static void test_registry_complete(void **state)
{
    (void)state;
    char why[512];
    for (int k = 0; k < sl_n_studies; k++)
        if (sl_study_validate(sl_studies[k], why, sizeof why) != 0)
            fail_msg("%s", why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entropy_mi_variants),
        cmocka_unit_test(test_tensor_mean_variants),
        cmocka_unit_test(test_declared_work),
        cmocka_unit_test(test_registry_complete),
        cmocka_unit_test(test_factorized_records_own_work),
    };
    return cmocka_run_group_tests_name("seed-000 study glue", tests, NULL, NULL);
}
