/*
 * kernels/cnn/cnn_ref.c: the double-precision reference of the whole network, loss and gradient, for
 * the study's check and the finite-difference tests. Direct loops written independently of naive.c so
 * the two do not share a mistake: the convolution accumulates one filter tap over the whole output
 * plane at a time (naive: one output at a time over the taps), its input gradient is a scatter (naive:
 * a gather), and the pooling's backward finds the winner again from the input (no argmax kept).
 */
#include "cnn_kernels.h"

#include <math.h>
#include <string.h>

/* One sample's activations and deltas (18 468 doubles at 28 x 28), whatever B: the reference goes
 * sample by sample, so the check's peak memory does not grow with the batch (75 MB at B = 512). */
size_t cnn_ref_ws_doubles(const cnn_dims *d, int B)
{
    (void)B;
    size_t n[6], t = 0;
    cnn_act_sizes(d, n);
    for (int i = 0; i < 6; i++)
        t += 2 * n[i]; /* the activation and its delta */
    return t;
}

/* One sample: y[o] = relu(b[o] + sum_{c,ki,kj} w[o][c][ki][kj] x[c][i+ki][j+kj]), tap by tap. */
static void conv_fwd(const cnn_conv *c, const double *x, const double *w, const double *b, double *y)
{
    int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    for (int o = 0; o < c->cout; o++) {
        double *yo = y + (size_t)o * ho * wo;
        for (int p = 0; p < ho * wo; p++)
            yo[p] = b[o];
        for (int ci = 0; ci < c->cin; ci++)
            for (int ki = 0; ki < k; ki++)
                for (int kj = 0; kj < k; kj++) {
                    double t = w[((size_t)(o * c->cin + ci) * k + ki) * k + kj];
                    const double *xs = x + ((size_t)ci * c->h + ki) * c->w + kj;
                    for (int i = 0; i < ho; i++)
                        for (int j = 0; j < wo; j++)
                            yo[i * wo + j] += t * xs[(size_t)i * c->w + j];
                }
        for (int p = 0; p < ho * wo; p++)
            yo[p] = yo[p] > 0 ? yo[p] : 0;
    }
}

/* One sample's backward, dz = dL/dy * relu'(y) in place; dw, db accumulated; dx (if any) scattered. */
static void conv_bwd(const cnn_conv *c, const double *x, const double *w, const double *y, double *dz,
                     double *dw, double *db, double *dx)
{
    int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), k = c->k;
    if (dx)
        memset(dx, 0, (size_t)c->cin * c->h * c->w * sizeof *dx);
    for (int o = 0; o < c->cout; o++)
        for (int i = 0; i < ho; i++)
            for (int j = 0; j < wo; j++) {
                size_t q = ((size_t)o * ho + i) * wo + j;
                double g = y[q] > 0 ? dz[q] : 0;
                dz[q] = g;
                db[o] += g;
                for (int ci = 0; ci < c->cin; ci++)
                    for (int ki = 0; ki < k; ki++)
                        for (int kj = 0; kj < k; kj++) {
                            size_t wi = ((size_t)(o * c->cin + ci) * k + ki) * k + kj;
                            size_t xi = ((size_t)ci * c->h + i + ki) * c->w + j + kj;
                            dw[wi] += g * x[xi];
                            if (dx)
                                dx[xi] += g * w[wi];
                        }
            }
}

/* One sample's 2x2/2 max pooling of a channels x h x w block. */
static void pool_fwd(const cnn_pool *p, const double *x, double *y)
{
    int ho = p->h / 2, wo = p->w / 2;
    for (int c = 0; c < p->c; c++)
        for (int i = 0; i < ho; i++)
            for (int j = 0; j < wo; j++) {
                const double *r = x + ((size_t)c * p->h + 2 * i) * p->w + 2 * j;
                y[((size_t)c * ho + i) * wo + j] = fmax(fmax(r[0], r[1]), fmax(r[p->w], r[p->w + 1]));
            }
}

/* dx := dy at the first input of each window that equals the window's max, 0 elsewhere. */
static void pool_bwd(const cnn_pool *p, const double *x, const double *y, const double *dy, double *dx)
{
    int ho = p->h / 2, wo = p->w / 2;
    memset(dx, 0, (size_t)p->c * p->h * p->w * sizeof *dx);
    for (int c = 0; c < p->c; c++)
        for (int i = 0; i < ho; i++)
            for (int j = 0; j < wo; j++) {
                size_t q = ((size_t)c * ho + i) * wo + j, at[4];
                at[0] = ((size_t)c * p->h + 2 * i) * p->w + 2 * j;
                at[1] = at[0] + 1, at[2] = at[0] + p->w, at[3] = at[2] + 1;
                int a = 0;
                while (a < 3 && x[at[a]] != y[q])
                    a++;
                dx[at[a]] = dy[q];
            }
}

/* One sample: z = act(x W + b), W nin x nout. */
static void dense_fwd(const cnn_dense *l, const double *x, const double *W, const double *b, double *z,
                      int relu)
{
    for (int j = 0; j < l->nout; j++)
        z[j] = b[j];
    for (int i = 0; i < l->nin; i++)
        for (int j = 0; j < l->nout; j++)
            z[j] += x[i] * W[(size_t)i * l->nout + j];
    if (relu)
        for (int j = 0; j < l->nout; j++)
            z[j] = z[j] > 0 ? z[j] : 0;
}

/* One sample: dz = dy * relu'(z) in place (when relu); dW, db accumulated; dx = dz W^T. */
static void dense_bwd(const cnn_dense *l, const double *x, const double *W, const double *z, double *dz,
                      int relu, double *dW, double *db, double *dx)
{
    for (int j = 0; j < l->nout; j++) {
        if (relu && !(z[j] > 0))
            dz[j] = 0;
        db[j] += dz[j];
    }
    for (int i = 0; i < l->nin; i++) {
        double s = 0;
        for (int j = 0; j < l->nout; j++) {
            dW[(size_t)i * l->nout + j] += x[i] * dz[j];
            s += W[(size_t)i * l->nout + j] * dz[j];
        }
        if (dx)
            dx[i] = s;
    }
}

/* -log softmax(z)[y], computed stably; d := (softmax(z) - onehot(y)) / B. */
static double xent(const double *z, int K, int y, int B, double *d)
{
    double mx = z[0], s = 0;
    for (int j = 1; j < K; j++)
        mx = fmax(mx, z[j]);
    for (int j = 0; j < K; j++)
        s += exp(z[j] - mx);
    for (int j = 0; j < K; j++)
        d[j] = (exp(z[j] - mx) / s - (j == y)) / B;
    return log(s) + mx - z[y];
}

double cnn_ref_loss_grad(const cnn_dims *d, const double *P, const double *X, const uint8_t *y, int B,
                         double *G, double *ws)
{
    cnn_layout L = cnn_layout_of(d);
    size_t n[6], in = (size_t)d->conv1.h * d->conv1.w;
    cnn_act_sizes(d, n);
    double *a[6], *g[6], *p = ws; /* per sample: activations a[i] and their deltas g[i] */
    for (int i = 0; i < 6; i++) {
        a[i] = p, p += n[i];
        g[i] = p, p += n[i];
    }
    if (G)
        memset(G, 0, L.n * sizeof *G);
    double loss = 0;
    for (int b = 0; b < B; b++) { /* the batch's gradient is the sum of its samples' (d4 has the 1/B) */
        const double *x = X + (size_t)b * in;
        conv_fwd(&d->conv1, x, P + L.c1w, P + L.c1b, a[0]);
        pool_fwd(&d->pool1, a[0], a[1]);
        conv_fwd(&d->conv2, a[1], P + L.c2w, P + L.c2b, a[2]);
        pool_fwd(&d->pool2, a[2], a[3]);
        dense_fwd(&d->dense1, a[3], P + L.d1w, P + L.d1b, a[4], 1);
        dense_fwd(&d->dense2, a[4], P + L.d2w, P + L.d2b, a[5], 0);
        loss += xent(a[5], d->dense2.nout, y[b], B, g[5]);
        if (!G)
            continue;
        dense_bwd(&d->dense2, a[4], P + L.d2w, a[5], g[5], 0, G + L.d2w, G + L.d2b, g[4]);
        dense_bwd(&d->dense1, a[3], P + L.d1w, a[4], g[4], 1, G + L.d1w, G + L.d1b, g[3]);
        pool_bwd(&d->pool2, a[2], a[3], g[3], g[2]);
        conv_bwd(&d->conv2, a[1], P + L.c2w, a[2], g[2], G + L.c2w, G + L.c2b, g[1]);
        pool_bwd(&d->pool1, a[0], a[1], g[1], g[0]);
        conv_bwd(&d->conv1, x, P + L.c1w, a[0], g[0], G + L.c1w, G + L.c1b, NULL);
    }
    return loss / B;
}
