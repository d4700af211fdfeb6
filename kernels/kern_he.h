/*
 * kernels/kern_he.h: He initialisation for the training studies' weights (mlp, cnn): each weight drawn
 * from N(0, 2 / fan_in) by Box-Muller (the cosine half only) on splitmix64 uniforms in (0, 1]. The
 * draws are a pure function of the state, so every variant of a study starts from the same weights;
 * each study seeds the state with its own tag (mlp_init_he, cnn_init_he).
 */
#ifndef SL_KERNELS_KERN_HE_H
#define SL_KERNELS_KERN_HE_H

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

#endif
