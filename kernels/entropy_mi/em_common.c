/* The stable row softmax shared by the CPU entropy_mi variants. */
#include <math.h>

#include "entropy_mi_kernels.h"

void em_softmax_row(const float *x, long D, float *p)
{
    float m = x[0];
    for (long i = 1; i < D; i++)
        m = x[i] > m ? x[i] : m;
    float s = 0.0f;
    for (long i = 0; i < D; i++) {
        p[i] = expf(x[i] - m);
        s += p[i];
    }
    const float inv = 1.0f / s;
    for (long i = 0; i < D; i++)
        p[i] *= inv;
}
