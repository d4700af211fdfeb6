/*
 * kernels/calib/calib.c: the loops behind the CPU ceilings of `speedlab calibrate` (calib.h). Built with
 * the kernels' flags, so the FMA loop uses the widest FMA units of the target and the triad vectorises.
 */
#include "calib.h"
#include "simd.h"

/* kernels/simd.h's FP32 vector: 512-bit with AVX-512, 256-bit with AVX2, 128-bit with SSE. Ten
 * independent chains: FMA latency (4 cycles) times two pipes needs 8 in flight; ten fit in 16 registers
 * with a and b, so none is kept in memory. */
typedef vf32 vf;
#define LANES VF32_LANES
#define N_ACC 10

double sl_fma_loop(long iters, float *sink)
{
    vf a, b, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9;
    for (int l = 0; l < LANES; l++) {
        a[l] = 0.999999f;
        b[l] = 1e-6f; /* x -> b / (1 - a) = 1: no overflow, no denormals */
        x0[l] = x1[l] = x2[l] = x3[l] = x4[l] = 0.01f * (float)l;
        x5[l] = x6[l] = x7[l] = x8[l] = x9[l] = 0.02f * (float)l;
    }
    for (long i = 0; i < iters; i++) {
        /* Each FMA waits only on its own chain (contracted by -ffp-contract=fast; FP is never
         * reassociated without -ffast-math, so the loop cannot be folded away). */
        x0 = x0 * a + b;
        x1 = x1 * a + b;
        x2 = x2 * a + b;
        x3 = x3 * a + b;
        x4 = x4 * a + b;
        x5 = x5 * a + b;
        x6 = x6 * a + b;
        x7 = x7 * a + b;
        x8 = x8 * a + b;
        x9 = x9 * a + b;
    }
    vf sum = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9;
    float s = 0;
    for (int l = 0; l < LANES; l++)
        s += sum[l];
    *sink += s;
    return 2.0 * LANES * N_ACC * (double)iters;
}

/* STREAM triad on [lo, hi): a = b + s * c (doubles, as STREAM). */
void sl_triad(double *restrict a, const double *restrict b, const double *restrict c, double s,
              size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++)
        a[i] = b[i] + s * c[i];
}
