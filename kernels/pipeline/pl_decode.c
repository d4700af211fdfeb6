/*
 * kernels/pipeline/pl_decode.c: decode and checksums of loaded training bytes (pipeline_kernels.h).
 */
#include <string.h>

#include "pipeline/pipeline_kernels.h"

void pl_decode_u8_f32(const uint8_t *src, size_t n, float *dst)
{
    /* A multiply by the reciprocal, not a divide: what train_gather does, and it vectorises (-O3). */
    const float scale = 1.0f / 255.0f;
    for (size_t i = 0; i < n; i++)
        dst[i] = (float)src[i] * scale;
}

uint64_t pl_sum64(const uint8_t *p, size_t n)
{
    /* Four independent sums so the adds do not wait on each other; memcpy makes the unaligned word loads
     * legal C (an mmap'ed payload starts 16 bytes into a page, a buffer anywhere). */
    uint64_t s[4] = {0, 0, 0, 0};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, p + i + 8 * (size_t)k, 8);
            s[k] += w;
        }
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        s[0] += w;
    }
    uint8_t tail[8] = {0};
    if (n > i)
        memcpy(tail, p + i, n - i);
    uint64_t w;
    memcpy(&w, tail, 8);
    return s[0] + s[1] + s[2] + s[3] + w;
}

uint64_t pl_fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u; /* the FNV-1a 64-bit offset basis and prime */
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3u;
    }
    return h;
}
