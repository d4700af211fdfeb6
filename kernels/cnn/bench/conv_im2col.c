/*
 * kernels/cnn/bench/conv_im2col.c: the forward convolution as im2col + a register-blocked product, the
 * way that lost to cnn_simd.h's direct convolution over wide positions: an experiment kept with its
 * measurements, not a variant, built only with the bench (kernels/cnn/bench/cnn_layers.c).
 *
 * Per image: col (K = cin k k rows of P = ho wo positions, each row padded to whole vectors) holds the
 * input patches, then y = W col with cnn_simd.h's own tile (8 channels x 3 vectors in registers with
 * AVX-512, bias and ReLU fused), read as a 1 x 1 convolution of col's K rows. It wastes fewer lanes (121
 * of 128 per conv2 channel, against 121 of 144 for the direct form) but copies the image K times (9 for
 * conv1, 72 for conv2), and the copy costs more than the lanes it saves:
 *
 *   batch 512, one thread, ms           conv1 forward     conv2 forward
 *   AVX-512 (native build)  direct          0.82              0.95
 *                           im2col          1.03              1.55
 *   AVX2 (x86-64-v3 build)  direct          0.72              1.48
 *                           im2col          0.91              1.87
 * (build/kernels/cnn_layers 1 11 and build-v3/kernels/cnn_layers 1 11, configured with
 * -Dc_args=-march=x86-64-v3, run in turn three times; each figure the middle of the three, each of those
 * the median of 3 interleaved medians of 11 calls. 2-vCPU AMD EPYC (Zen 5) VM shared with other
 * jobs.) conv1's forward is memory-bound either way: its output is 11 MB per batch.
 */
#include "../cnn_simd.h"

#include "conv_im2col.h"

/* Floats of work for conv_forward_im2col: col, the padded output, the packed weights, a padded image. */
size_t conv_im2col_floats(const cnn_conv *c)
{
    const size_t K = (size_t)c->cin * c->k * c->k, Pv = cnns_up((size_t)cnn_conv_out(c) / c->cout, CNNS_VL);
    const cnns_area a = cnns_area_of(c);
    return cnns_up(K * Pv, 16) + cnns_up((size_t)c->cout * Pv + CNNS_VL, 16) + a.wp + a.xpad;
}

/* y = relu(conv(x, W) + bias) for B images; work: conv_im2col_floats(c) floats, 64-byte aligned. */
void conv_forward_im2col(const cnn_conv *c, int B, const float *x, const float *W, const float *bias, float *y,
                         float *work)
{
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k, K = c->cin * k * k, P = ho * wo;
    const size_t Pv = cnns_up((size_t)P, CNNS_VL), in = (size_t)c->cin * c->h * c->w, out = cnn_conv_out(c);
    const cnns_area a = cnns_area_of(c);
    float *col = work, *wide = col + cnns_up((size_t)K * Pv, 16);
    float *wp = wide + cnns_up((size_t)c->cout * Pv + CNNS_VL, 16), *xpad = wp + a.wp;
    memset(col, 0, (size_t)K * Pv * sizeof(float)); /* the padding lanes of each row */
    cnns_pack_w(W, c->cout, c->cin, k, 0, wp);      /* taps in col's row order */
    cnns_op o = {.src = col, .cs = Pv, .rs = 0, .cin = K, .k = 1, .cout = c->cout, .nq = (int)(Pv / CNNS_VL),
                 .wp = wp, .bias = bias, .relu = 1, .out = wide, .ldo = Pv};
    for (int n = 0; n < B; n++) {
        const float *xn = cnns_image(x, n, B, in, xpad, a.xpad);
        for (int t = 0; t < K; t++) { /* row t = (ci, ky, kx): ho rows of wo, shifted */
            int ci = t / (k * k), ky = t / k % k, kx = t % k;
            cnns_compact(col + (size_t)t * Pv, xn + ((size_t)ci * c->h + ky) * c->w + kx, 1, ho, wo, 0,
                         (size_t)c->w);
        }
        cnns_conv_wide(&o);
        cnns_compact(y + (size_t)n * out, wide, c->cout, 1, P, Pv, 0);
    }
}
