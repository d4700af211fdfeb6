/*
 * kernels/cnn/naive.c: every layer in direct loops, the maths as written, one thread (`threads` and
 * `scratch` unused): a convolution output is a sum over its input channels and filter taps, its weight
 * gradient a sum over the batch and the output plane, its input gradient a gather of every output the
 * input fed. What a first C port of the write-up's NumPy loops looks like; the fast variants are
 * checked against it.
 */
#include "cnn_kernels.h"

#include <stddef.h>

/* x[b][c][i][j] of an n x c x h x w tensor */
#define AT4(p, C, H, W, b, c, i, j) (p)[(((size_t)(b) * (C) + (c)) * (H) + (i)) * (W) + (j)]

void cnn_conv_forward_naive(const cnn_conv *c, int B, const float *x, const float *w, const float *b,
                            float *y, float *scratch, int threads)
{
    (void)scratch, (void)threads;
    int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    for (int n = 0; n < B; n++)
        for (int o = 0; o < c->cout; o++)
            for (int i = 0; i < ho; i++)
                for (int j = 0; j < wo; j++) {
                    float s = b[o];
                    for (int ci = 0; ci < c->cin; ci++)
                        for (int ki = 0; ki < k; ki++)
                            for (int kj = 0; kj < k; kj++)
                                s += AT4(x, c->cin, c->h, c->w, n, ci, i + ki, j + kj) *
                                     AT4(w, c->cin, k, k, o, ci, ki, kj);
                    AT4(y, c->cout, ho, wo, n, o, i, j) = s > 0.0f ? s : 0.0f;
                }
}

/* dx[n][ci][r][s] = sum over o, ki, kj of dz[n][o][r-ki][s-kj] w[o][ci][ki][kj], where in range */
static void conv_input_grad(const cnn_conv *c, int B, const float *w, const float *dz, float *dx)
{
    int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    for (int n = 0; n < B; n++)
        for (int ci = 0; ci < c->cin; ci++)
            for (int r = 0; r < c->h; r++)
                for (int s = 0; s < c->w; s++) {
                    float t = 0.0f;
                    for (int o = 0; o < c->cout; o++)
                        for (int ki = 0; ki < k; ki++)
                            for (int kj = 0; kj < k; kj++) {
                                int i = r - ki, j = s - kj;
                                if (i >= 0 && i < ho && j >= 0 && j < wo)
                                    t += AT4(dz, c->cout, ho, wo, n, o, i, j) * AT4(w, c->cin, k, k, o, ci, ki, kj);
                            }
                    AT4(dx, c->cin, c->h, c->w, n, ci, r, s) = t;
                }
}

void cnn_conv_backward_naive(const cnn_conv *c, int B, const float *x, const float *w, const float *y,
                             float *dy, float *dw, float *db, float *dx, float *scratch, int threads)
{
    (void)scratch, (void)threads;
    int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    size_t nout = (size_t)B * cnn_conv_out(c);
    for (size_t q = 0; q < nout; q++) /* through the ReLU: dz = dy where y > 0 */
        dy[q] = y[q] > 0.0f ? dy[q] : 0.0f;
    for (int o = 0; o < c->cout; o++) {
        float sb = 0.0f;
        for (int n = 0; n < B; n++)
            for (int i = 0; i < ho; i++)
                for (int j = 0; j < wo; j++)
                    sb += AT4(dy, c->cout, ho, wo, n, o, i, j);
        db[o] = sb;
        for (int ci = 0; ci < c->cin; ci++)
            for (int ki = 0; ki < k; ki++)
                for (int kj = 0; kj < k; kj++) {
                    float s = 0.0f;
                    for (int n = 0; n < B; n++)
                        for (int i = 0; i < ho; i++)
                            for (int j = 0; j < wo; j++)
                                s += AT4(dy, c->cout, ho, wo, n, o, i, j) *
                                     AT4(x, c->cin, c->h, c->w, n, ci, i + ki, j + kj);
                    AT4(dw, c->cin, k, k, o, ci, ki, kj) = s;
                }
    }
    if (dx)
        conv_input_grad(c, B, w, dy, dx);
}

/* y[n][j] = act(sum_i x[n][i] W[i][j] + b[j]) */
void cnn_dense_forward_naive(const cnn_dense *l, int B, const float *x, const float *w, const float *b,
                             float *y, int relu, float *scratch, int threads)
{
    (void)scratch, (void)threads;
    for (int n = 0; n < B; n++)
        for (int j = 0; j < l->nout; j++) {
            float s = b[j];
            for (int i = 0; i < l->nin; i++)
                s += x[(size_t)n * l->nin + i] * w[(size_t)i * l->nout + j];
            y[(size_t)n * l->nout + j] = relu && s < 0.0f ? 0.0f : s;
        }
}

/* dz = dy * relu'(y); dW[i][j] = sum_n x[n][i] dz[n][j]; db[j] = sum_n dz[n][j]; dx[n][i] = sum_j dz[n][j] W[i][j] */
void cnn_dense_backward_naive(const cnn_dense *l, int B, const float *x, const float *w, const float *y,
                              float *dy, int relu, float *dw, float *db, float *dx, float *scratch,
                              int threads)
{
    (void)scratch, (void)threads;
    size_t nout = (size_t)B * l->nout;
    if (relu)
        for (size_t q = 0; q < nout; q++)
            dy[q] = y[q] > 0.0f ? dy[q] : 0.0f;
    for (int i = 0; i < l->nin; i++)
        for (int j = 0; j < l->nout; j++) {
            float s = 0.0f;
            for (int n = 0; n < B; n++)
                s += x[(size_t)n * l->nin + i] * dy[(size_t)n * l->nout + j];
            dw[(size_t)i * l->nout + j] = s;
        }
    for (int j = 0; j < l->nout; j++) {
        float s = 0.0f;
        for (int n = 0; n < B; n++)
            s += dy[(size_t)n * l->nout + j];
        db[j] = s;
    }
    if (dx)
        for (int n = 0; n < B; n++)
            for (int i = 0; i < l->nin; i++) {
                float s = 0.0f;
                for (int j = 0; j < l->nout; j++)
                    s += dy[(size_t)n * l->nout + j] * w[(size_t)i * l->nout + j];
                dx[(size_t)n * l->nin + i] = s;
            }
}
