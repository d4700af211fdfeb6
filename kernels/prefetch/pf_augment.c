/*
 * kernels/prefetch/pf_augment.c: the flip-and-shift augmentation fused with the batch gather, and its
 * double reference (prefetch_kernels.h). The gather writes each output row as three runs (zeros, the
 * moved pixels, zeros), the source walked backwards when flipped; the reference computes every output
 * pixel's source coordinate from the definition.
 */
#include "prefetch_kernels.h"

#include <string.h>

/* splitmix64's finaliser: a well-mixed 64-bit hash of x. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

pf_aug pf_aug_of(uint64_t seed, int epoch, int32_t row)
{
    uint64_t h = mix64(mix64(seed ^ 0x70726566ull) ^ ((uint64_t)(uint32_t)epoch << 32 | (uint32_t)row));
    const int span = 2 * PF_MAX_SHIFT + 1;
    return (pf_aug){.flip = (int)(h & 1), .dx = (int)((h >> 8) % span) - PF_MAX_SHIFT,
                    .dy = (int)((h >> 24) % span) - PF_MAX_SHIFT};
}

/* Output row r of one image: source row r - dy, columns c - dx (of the flipped image when flip). */
static void one_row(const uint8_t *src, int rows, int cols, pf_aug a, int r, float *dst)
{
    const float scale = 1.0f / 255.0f;
    int sr = r - a.dy;
    if (sr < 0 || sr >= rows) {
        memset(dst, 0, (size_t)cols * sizeof(float));
        return;
    }
    const uint8_t *line = src + (size_t)sr * cols;
    int c0 = a.dx > 0 ? a.dx : 0, c1 = a.dx < 0 ? cols + a.dx : cols; /* the columns with a source */
    for (int c = 0; c < c0; c++)
        dst[c] = 0.0f;
    if (a.flip)
        for (int c = c0; c < c1; c++)
            dst[c] = (float)line[cols - 1 - (c - a.dx)] * scale;
    else
        for (int c = c0; c < c1; c++)
            dst[c] = (float)line[c - a.dx] * scale;
    for (int c = c1; c < cols; c++)
        dst[c] = 0.0f;
}

/* Rows ahead whose bytes are prefetched, as train_gather (experiments/train/train.c says why): random
 * rows of a 47 MB set miss the caches, and the augmented gather should cost what the plain one does. */
#define GATHER_AHEAD 8

void pf_gather_flipshift(const uint8_t *images, const uint8_t *labels, int rows, int cols, const int32_t *idx,
                         int B, uint64_t seed, int epoch, float *X, uint8_t *y)
{
    size_t px = (size_t)rows * (size_t)cols;
    for (int b = 0; b < B; b++) {
        if (b + GATHER_AHEAD < B)
            for (size_t k = 0; k < px; k += 64)
                __builtin_prefetch(images + (size_t)idx[b + GATHER_AHEAD] * px + k);
        pf_aug a = pf_aug_of(seed, epoch, idx[b]);
        const uint8_t *src = images + (size_t)idx[b] * px;
        for (int r = 0; r < rows; r++)
            one_row(src, rows, cols, a, r, X + (size_t)b * px + (size_t)r * cols);
        y[b] = labels[idx[b]];
    }
}

void pf_ref_flipshift(const uint8_t *images, int rows, int cols, const int32_t *idx, int B, uint64_t seed,
                      int epoch, double *X)
{
    size_t px = (size_t)rows * (size_t)cols;
    for (int b = 0; b < B; b++) {
        pf_aug a = pf_aug_of(seed, epoch, idx[b]);
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                int sr = r - a.dy, sc = c - a.dx; /* in the flipped image */
                if (a.flip)
                    sc = cols - 1 - sc;
                int inside = sr >= 0 && sr < rows && c - a.dx >= 0 && c - a.dx < cols;
                X[(size_t)b * px + (size_t)r * cols + c] =
                    inside ? images[(size_t)idx[b] * px + (size_t)sr * cols + sc] / 255.0 : 0.0;
            }
    }
}
