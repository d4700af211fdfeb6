/*
 * tests/h2d/test_h2d_cuda.c: the copies of kernels/h2d/h2d_cuda.h on a device (exit 77, skipped, without
 * one). For each memory kind (pageable, pinned) and sizes that are not multiples of anything (1 byte,
 * 4097, 1 MiB + 3): a pattern copied to the device and read back is the pattern; a pattern written to the
 * device and copied to the host lands in the host buffer whole; the event time is positive and finite.
 * A copy larger than the context is refused with a message, and the context still works afterwards.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2d/h2d_cuda.h"

#define MAXB ((size_t)(1 << 20) + 3)

static void pattern(uint8_t *p, size_t n, unsigned salt)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)((i * 2654435761u + salt) >> 13);
}

/* Both directions at one size; returns failed checks. */
static int round_trip(h2d_ctx *c, const char *kind, size_t n, uint8_t *want, uint8_t *back)
{
    int fails = 0;
    double ms = NAN;
    pattern(want, n, (unsigned)n);
    memcpy(h2d_host(c), want, n);
    if (h2d_copy(c, H2D_TO_DEVICE, n, &ms) || h2d_read_device(c, back, n))
        return printf("FAIL %s %zu bytes to the device: %s\n", kind, n, h2d_error(c)), 1;
    if (memcmp(back, want, n) != 0)
        printf("FAIL %s %zu bytes to the device: the device holds other bytes\n", kind, n), fails++;
    if (!(ms > 0 && isfinite(ms)))
        printf("FAIL %s %zu bytes to the device: event time %g ms\n", kind, n, ms), fails++;
    pattern(want, n, (unsigned)n + 7);
    memset(h2d_host(c), 0, n);
    if (h2d_write_device(c, want, n) || h2d_copy(c, H2D_TO_HOST, n, &ms))
        return printf("FAIL %s %zu bytes to the host: %s\n", kind, n, h2d_error(c)), fails + 1;
    if (memcmp(h2d_host(c), want, n) != 0)
        printf("FAIL %s %zu bytes to the host: the host buffer holds other bytes\n", kind, n), fails++;
    return fails;
}

int main(void)
{
    if (h2d_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    uint8_t *want = malloc(MAXB), *back = malloc(MAXB);
    if (!want || !back)
        return 1;
    int fails = 0;
    for (int pinned = 0; pinned < 2; pinned++) {
        const char *kind = pinned ? "pinned" : "pageable";
        char msg[256];
        h2d_ctx *c = h2d_create(MAXB, pinned, msg, sizeof msg);
        if (!c) {
            printf("FAIL %s: create: %s\n", kind, msg);
            fails++;
            continue;
        }
        const size_t sizes[] = {1, 4097, MAXB};
        for (int i = 0; i < 3; i++)
            fails += round_trip(c, kind, sizes[i], want, back);
        double ms;
        if (h2d_copy(c, H2D_TO_DEVICE, MAXB + 1, &ms) == 0 || !strstr(h2d_error(c), "context"))
            printf("FAIL %s: a copy larger than the context was not refused (%s)\n", kind, h2d_error(c)), fails++;
        fails += round_trip(c, kind, 4097, want, back); /* still usable after the refusal */
        h2d_destroy(c);
    }
    free(want), free(back);
    printf(fails ? "FAIL: %d check(s)\n" : "PASS: pageable and pinned copies, both directions\n", fails);
    return fails != 0;
}
