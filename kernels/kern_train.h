/*
 * kernels/kern_train.h: the maths the training studies' kernels share (mlp, cnn), written once:
 *   - He initialisation: each weight drawn from N(0, 2 / fan_in) by Box-Muller (the cosine half only)
 *     on splitmix64 uniforms in (0, 1]; the draws are a pure function of the state, so every variant of
 *     a study starts from the same weights; each study seeds the state with its own tag (mlp_init_he,
 *     cnn_init_he);
 *   - softmax cross-entropy over B rows of K logits, and the count of rows predicted right.
 * Both are O(parameters) or O(B K), far under 1 % of a training step, so one plain version serves
 * every variant.
 */
#ifndef SL_KERNELS_KERN_TRAIN_H
#define SL_KERNELS_KERN_TRAIN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

static inline uint64_t kern_he_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1]: never 0, so log() in Box-Muller is finite. */
static inline double kern_he_unit(uint64_t *s)
{
    return ((double)(kern_he_splitmix(s) >> 11) + 1.0) / 9007199254740992.0;
}

/* W[0..n) ~ N(0, 2 / fan_in), two draws of *s per weight. */
static inline void kern_he_fill(float *W, size_t n, int fan_in, uint64_t *s)
{
    double sd = sqrt(2.0 / fan_in);
    for (size_t i = 0; i < n; i++) {
        double r = sqrt(-2.0 * log(kern_he_unit(s))), t = 6.283185307179586 * kern_he_unit(s);
        W[i] = (float)(sd * r * cos(t));
    }
}

/* Softmax of rows r0..r1-1 of the B x K logits z in place (each row max-shifted); g = (softmax -
 * onehot(y)) / B, the gradient of the mean loss over all B rows; returns the rows' summed
 * cross-entropy, in double so that the mean does not depend on B's rounding. -log p_y is taken from p
 * (one pass), clamped so that a saturated wrong answer gives a large finite loss, not inf. A range of
 * rows lets threads share the rows (mlp's fused omp step) and add their sums. */
static inline double kern_softmax_xent_rows(float *z, float *g, const uint8_t *y, int r0, int r1, int B,
                                            int K)
{
    double total = 0.0;
    for (int b = r0; b < r1; b++) {
        float *zb = z + (size_t)b * K, *gb = g + (size_t)b * K;
        float mx = zb[0];
        for (int j = 1; j < K; j++)
            mx = zb[j] > mx ? zb[j] : mx;
        float s = 0.0f;
        for (int j = 0; j < K; j++) {
            zb[j] = expf(zb[j] - mx);
            s += zb[j];
        }
        for (int j = 0; j < K; j++) {
            zb[j] /= s;
            gb[j] = (zb[j] - (j == y[b] ? 1.0f : 0.0f)) / (float)B;
        }
        total += -log(fmax((double)zb[y[b]], 1e-30));
    }
    return total;
}

/* All B rows: the mean cross-entropy. */
static inline float kern_softmax_xent(float *z, float *g, const uint8_t *y, int B, int K)
{
    return (float)(kern_softmax_xent_rows(z, g, y, 0, B, B, K) / B);
}

/* How many of the B rows of K logits (or probabilities) have their first maximum at y. */
static inline int kern_count_correct(const float *z, const uint8_t *y, int B, int K)
{
    int ok = 0;
    for (int b = 0; b < B; b++) {
        const float *zb = z + (size_t)b * K;
        int best = 0;
        for (int j = 1; j < K; j++)
            if (zb[j] > zb[best])
                best = j;
        ok += best == y[b];
    }
    return ok;
}

#endif
