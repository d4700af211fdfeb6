/*
 * kernels/cnn/cnn_gather.c: the batch gather (rows idx of the image bytes -> floats / 255, and their
 * labels) shared by every CPU variant, with `threads` splitting the rows: serial, it was 0.2 ms of omp's
 * 5.9 ms step (3 %, the study's profile on the 2-vCPU Zen 5 VM, AVX-512 native build; commit 3b663a7
 * gives the run), the one part of a step the threads did not
 * share. The same floats as experiments/train's train_gather (pixel * (1/255)).
 */
#include "cnn_kernels.h"

/* Rows ahead whose bytes are prefetched: random rows of a 47 MB set miss the caches (train.c says more). */
#define CNN_GATHER_AHEAD 8

void cnn_gather(const uint8_t *images, const uint8_t *labels, size_t px, const int32_t *idx, int B, float *X,
                uint8_t *y, int threads)
{
    const float scale = 1.0f / 255.0f;
    if (threads < 1)
        threads = 1;
    #pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int b = 0; b < B; b++) {
        const uint8_t *src = images + (size_t)idx[b] * px;
        float *dst = X + (size_t)b * px;
        if (b + CNN_GATHER_AHEAD < B)
            for (size_t k = 0; k < px; k += 64)
                __builtin_prefetch(images + (size_t)idx[b + CNN_GATHER_AHEAD] * px + k);
        for (size_t k = 0; k < px; k++)
            dst[k] = (float)src[k] * scale;
        y[b] = labels[idx[b]];
    }
}
