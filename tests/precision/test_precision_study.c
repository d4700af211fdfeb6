/*
 * tests/precision/test_precision_study.c: the precision study (seed 003, part 4) through sl_study on a
 * small synthetic IDX set (tests/data/idx_files.h), and the "avx512bf16" requirement's logic.
 */
#define _DEFAULT_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "avail.h"
#include "isa.h"
#include "record.h"
#include "sl_config.h"
#include "study.h"
#include "studies/precision/prec_study.h"

#include "../data/idx_files.h"

/* Every case of the requirement: no CPU support, kernels built without it (dispatch v4 copy, or forced
 * to v3), and both present. */
static void test_avx512bf16_logic(void **state)
{
    (void)state;
    char why[256];
    assert_int_equal(sl_avx512bf16_available(0, 1, "avx512", why, sizeof why), 0);
    assert_string_equal(why, "avx512bf16: this CPU has no AVX512_BF16 (vdpbf16ps)");
    assert_int_equal(sl_avx512bf16_available(1, 0, "avx2", why, sizeof why), 0);
    assert_non_null(strstr(why, "avx512bf16: the kernels run at avx2, built without AVX512_BF16"));
    assert_int_equal(sl_avx512bf16_available(1, 0, "avx512", why, sizeof why), 0);
    assert_non_null(strstr(why, "run at avx512, built without"));
    assert_int_equal(sl_avx512bf16_available(1, 1, "avx512", why, sizeof why), 1);
}

/* The bf16dp row here: available exactly when the CPU and the running kernels have AVX512_BF16. */
static void test_bf16dp_row_here(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("precision");
    assert_non_null(s);
    const sl_variant *v = NULL;
    for (int i = 0; i < s->n_variants; i++)
        if (!strcmp(s->variants[i].name, "bf16dp"))
            v = &s->variants[i];
    assert_non_null(v);
    assert_string_equal(v->requires, "avx512bf16");
    char why[256];
    __builtin_cpu_init();
    int want = __builtin_cpu_supports("avx512bf16") && kern_isa_avx512bf16();
    assert_int_equal(sl_variant_available(v, why, sizeof why), want);
    print_message("# bf16dp here: %s\n", want ? "available" : why);
    char vwhy[256];
    assert_int_equal(sl_study_validate(s, vwhy, sizeof vwhy), 0);
}

static char dir[64];

static int make_data(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/sl_prec_XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    idx_set tr = idx_files_stripes(1100, 28, 1, 100), te = idx_files_stripes(200, 28, 2, 100);
    idx_files_write(dir, "train", &tr);
    idx_files_write(dir, "t10k", &te);
    idx_set_free(&tr);
    idx_set_free(&te);
    return 0;
}

static int drop_data(void **state)
{
    (void)state;
    idx_files_remove(dir);
    return 0;
}

static double metric(const sl_record *r, const char *name)
{
    json_t *m = json_object_get(r->metrics, name);
    if (!m)
        fail_msg("no metric %s", name);
    return json_number_value(m);
}

static int has_note(const sl_record *r, const char *text)
{
    for (size_t i = 0; i < json_array_size(r->notes); i++)
        if (!strcmp(json_string_value(json_array_get(r->notes, i)), text))
            return 1;
    return 0;
}

/* Every CPU row that runs here, 2 epochs: checked within the tolerance, fp32's check error far below
 * bf16's, Table I's metrics, the storage (note and bits) and its bytes, which 16 bits halve. */
static void test_study_records(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("precision");
    const char *names[] = {"epochs", "check_steps"}, *values[] = {"2", "15"};
    sl_opts o = {.seed = 3, .threads = 1, .data_dir = dir, .n_params = 2, .param_names = names,
                 .param_values = values};
    sl_error err = {{0}};
    void *st = s->setup(s->sizes[0], &o, &err);
    if (!st)
        fail_msg("setup: %s", err.msg);
    double rel32 = NAN, rel16 = NAN, bytes32 = NAN;
    int ran = 0;
    for (int v = 0; v < s->n_variants; v++) {
        const sl_variant *row = &s->variants[v];
        char why[256];
        if ((row->traits & SL_DEVICE) || !sl_variant_available(row, why, sizeof why))
            continue;
        double rel;
        sl_record *r = study_run(s, st, v, 0, 2, &rel);
        ran++;
        assert_int_equal(json_array_size(json_object_get(r->series, "test_acc")), 2);
        double acc = metric(r, "test_acc"), bits = metric(r, "storage_bits");
        assert_true(acc > 0.5 && acc <= 1); /* the stripes are easy: every row learns them */
        assert_true(metric(r, "epoch_s_mean") > 0 && metric(r, "samples_per_s_mean") > 0);
        assert_true(metric(r, "test_acc_best") >= acc);
        assert_true(metric(r, "epoch_s_std") >= 0); /* two repetitions: a spread */
        char note[64];
        snprintf(note, sizeof note, "storage: %s", ((const prec_kernels *)row->kernels)->storage);
        assert_true(has_note(r, note));
        if (!strcmp(row->name, "fp32")) {
            assert_true(bits == 32);
            rel32 = rel, bytes32 = metric(r, "step_storage_bytes");
        } else if (!strcmp(row->name, "onednn-fp32")) { /* with oneDNN: float32 storage, as fp32's */
            assert_true(bits == 32);
            assert_true(metric(r, "step_storage_bytes") == bytes32);
        } else {
            assert_true(bits == 16);
            assert_true(metric(r, "step_storage_bytes") * 2 == bytes32);
        }
        if (!strcmp(row->name, "bf16"))
            rel16 = rel;
        assert_null(r->reduced_reason); /* all rows, all epochs */
        sl_record_free(r);
    }
    assert_true(ran >= 3);
    print_message("# check rel_err: fp32 %.3g, bf16 %.3g\n", rel32, rel16);
    assert_true(rel32 * 100 < rel16);
    s->teardown(st);
}

/* --quick: one epoch, marked reduced. */
static void test_quick_is_reduced(void **state)
{
    (void)state;
    const sl_study *s = sl_find_study("precision");
    sl_opts o = {.seed = 3, .threads = 1, .data_dir = dir, .quick = 1};
    sl_error err = {{0}};
    void *st = s->setup(s->quick_sizes[0], &o, &err);
    if (!st)
        fail_msg("setup: %s", err.msg);
    double rel;
    sl_record *r = study_run(s, st, 0, 0, 1, &rel);
    assert_int_equal(json_array_size(json_object_get(r->series, "test_acc")), 1);
    assert_non_null(r->reduced_reason);
    assert_non_null(strstr(r->reduced_reason, "--quick"));
    sl_record_free(r);
    s->teardown(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_avx512bf16_logic),
        cmocka_unit_test(test_bf16dp_row_here),
        cmocka_unit_test_setup_teardown(test_study_records, make_data, drop_data),
        cmocka_unit_test_setup_teardown(test_quick_is_reduced, make_data, drop_data),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
