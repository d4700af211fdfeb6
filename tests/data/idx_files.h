/*
 * tests/data/idx_files.h: a temporary directory of MNIST-format files for the training studies' tests
 * (mlp, cnn), which run the study through sl_study on a small synthetic set: the four uncompressed IDX
 * files (train and t10k, images and labels) that experiments/data/idx.c reads. Include after cmocka.h.
 */
#ifndef SL_TESTS_IDX_FILES_H
#define SL_TESTS_IDX_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "data/idx.h"

static void idx_files_be32(FILE *f, uint32_t v)
{
    unsigned char b[4] = {v >> 24, v >> 16, v >> 8, v};
    fwrite(b, 1, 4, f);
}

/* dir/PREFIX-images-idx3-ubyte and dir/PREFIX-labels-idx1-ubyte from st (a failed write fails the test). */
static void idx_files_write(const char *dir, const char *prefix, const idx_set *st)
{
    char p[160];
    snprintf(p, sizeof p, "%s/%s-images-idx3-ubyte", dir, prefix);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    idx_files_be32(f, 0x803), idx_files_be32(f, (uint32_t)st->n);
    idx_files_be32(f, (uint32_t)st->rows), idx_files_be32(f, (uint32_t)st->cols);
    size_t px = (size_t)st->n * (size_t)st->rows * (size_t)st->cols;
    assert_int_equal(fwrite(st->images, 1, px, f), px);
    assert_int_equal(fclose(f), 0);
    snprintf(p, sizeof p, "%s/%s-labels-idx1-ubyte", dir, prefix);
    f = fopen(p, "wb");
    assert_non_null(f);
    idx_files_be32(f, 0x801), idx_files_be32(f, (uint32_t)st->n);
    assert_int_equal(fwrite(st->labels, 1, (size_t)st->n, f), (size_t)st->n);
    assert_int_equal(fclose(f), 0);
}

/* Removes the four files idx_files_write made for train and t10k, then dir. */
static void idx_files_remove(const char *dir)
{
    const char *names[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"};
    char p[160];
    for (int i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

#endif
