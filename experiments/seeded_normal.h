/*
 * experiments/seeded_normal.h: the suite's one seeded generator: splitmix64 for uniform bits (sn_next;
 * also the training studies' shuffles and galaxy's initial weights), Box-Muller for normals (the
 * entropy_mi and tensor_mean inputs). mlp's and cnn's He weights come from kernels/kern_train.h, the same
 * splitmix64 on the kernels' side (kernels do not include experiments/). Inputs are a pure function of (seed, size, stream): the same
 * on every machine, independent of thread count and variant.
 */
#ifndef SL_SEEDED_NORMAL_H
#define SL_SEEDED_NORMAL_H

#include <math.h>
#include <stdint.h>

typedef struct sn_rng {
    uint64_t s;
} sn_rng;

static inline sn_rng sn_seed(uint64_t seed, long size, uint64_t stream)
{
    sn_rng r = {seed ^ (0x9e3779b97f4a7c15ull * ((uint64_t)size + 1)) ^ (0xbf58476d1ce4e5b9ull * (stream + 1))};
    return r;
}

static inline uint64_t sn_next(sn_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): never 0, so log() below is finite. */
static inline double sn_uniform(sn_rng *r)
{
    return ((double)(sn_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Fills v[0..n) with standard normals. */
static inline void sn_fill(sn_rng *r, float *v, long n)
{
    for (long i = 0; i < n; i += 2) {
        const double rad = sqrt(-2.0 * log(sn_uniform(r))), ang = 6.283185307179586 * sn_uniform(r);
        v[i] = (float)(rad * cos(ang));
        if (i + 1 < n)
            v[i + 1] = (float)(rad * sin(ang));
    }
}

#endif
