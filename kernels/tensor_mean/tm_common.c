/* tensor_mean: what the CPU variants share (tanh). */
#include <math.h>

#include "simd.h"
#include "tensor_mean_kernels.h"

void tm_tanh(const float *in, long n, float *out)
{
    for (long i = 0; i < n; i++)
        out[i] = tanhf(in[i]);
}

/* tanh(x) = sign(x) (1 - e) / (1 + e) with e = exp(-2|x|) <= 1, VF32_LANES at a time with simd.h's exp.
 * Absolute error ~1e-7 (relative error grows only where tanh(x) ~ x is tiny, which the normwise check
 * of A does not notice); scalar tanhf costs ~10 ns a call, more than the whole D^3 update at D = 32. */
static inline vf32 tm_tanh_v(vf32 x)
{
    const vi32 sign = (vi32)x & (vi32)vf32_splat(-0.0f);
    const vf32 ax = (vf32)((vi32)x & ~sign);
    const vf32 e = vf32_exp_neg(-2.0f * ax);
    const vf32 r = (1.0f - e) / (1.0f + e);
    return (vf32)((vi32)r | sign);
}

void tm_tanh_fast(const float *in, long n, float *out)
{
    long i = 0;
    for (; i + VF32_LANES <= n; i += VF32_LANES)
        vf32_store(out + i, tm_tanh_v(vf32_load(in + i)));
    if (i < n) { /* tail: through a padded buffer */
        float buf[VF32_LANES] = {0};
        for (long k = i; k < n; k++)
            buf[k - i] = in[k];
        vf32_store(buf, tm_tanh_v(vf32_load(buf)));
        for (long k = i; k < n; k++)
            out[k] = buf[k - i];
    }
}
