/*
 * kernels/cnn/bench/cnn_layers.c: where a cnn training step's time goes, per layer and per CPU variant,
 * at the study's batch (512) and image size (28 x 28), and the im2col forward experiment
 * (conv_im2col.c) against the direct one. A bench, not a kernel: built only on request,
 *     ninja -C build kernels/cnn_layers && build/kernels/cnn_layers [threads [repetitions]]
 * for the build's ISA level (a native build: this machine's; configure with -Dc_args=-march=x86-64-v3
 * for AVX2; in a dispatch build the bench's own experiment is compiled for the baseline only, so use a
 * native build). Prints the median time of each call over the repetitions (after 2 warm-up calls), in
 * ms, with GFLOP/s from the layer's shape; the backward calls get a fresh copy of dy each time (they
 * overwrite it). For simd and omp, conv1+pool1 and conv2+pool2 are each convolution fused with its
 * pooling, the forms the study runs (the backward reads the pooled gradient and needs no copy). "step"
 * is cnn_forward + cnn_loss + cnn_backward + the momentum update (with the fused forms where a row has
 * them), and "epoch" is 60000 / 512 steps of it (the data gather excluded).
 */
#include "../cnn_kernels.h"
#include "../../simd.h"
#include "conv_im2col.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 512

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One call of what is timed, with what it needs; restore (not timed) runs before each call. */
typedef struct job {
    void (*call)(struct job *);
    void (*restore)(struct job *);
    const cnn_layers *k;
    const cnn_dims *d;
    cnn_ws *ws;
    float *P, *G, *V, *X, *dsave, *dtarget;
    const uint8_t *y;
    size_t dn;
    int layer, threads;
    float *work; /* the im2col experiment's */
} job;

static double median_ms(job *j, int reps)
{
    double t[64];
    reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
    for (int r = -2; r < reps; r++) {
        if (j->restore)
            j->restore(j);
        double t0 = now();
        j->call(j);
        if (r >= 0)
            t[r] = now() - t0;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp);
    return 1e3 * t[reps / 2];
}

static void restore_delta(job *j) { memcpy(j->dtarget, j->dsave, j->dn * sizeof(float)); }

/* The layers in the network's order: conv1, conv2 (layer 0, 1), dense1, dense2 (2, 3); forward or backward. */
static void conv_fw(job *j)
{
    cnn_layout L = cnn_layout_of(j->d);
    const cnn_conv *c = j->layer ? &j->d->conv2 : &j->d->conv1;
    j->k->conv_forward(c, BATCH, j->layer ? j->ws->p1 : j->X, j->P + (j->layer ? L.c2w : L.c1w),
                       j->P + (j->layer ? L.c2b : L.c1b), j->layer ? j->ws->a2 : j->ws->a1, j->ws->scratch,
                       j->threads);
}
static void conv_bw(job *j)
{
    cnn_layout L = cnn_layout_of(j->d);
    const cnn_conv *c = j->layer ? &j->d->conv2 : &j->d->conv1;
    j->k->conv_backward(c, BATCH, j->layer ? j->ws->p1 : j->X, j->P + (j->layer ? L.c2w : L.c1w),
                        j->layer ? j->ws->a2 : j->ws->a1, j->layer ? j->ws->da2 : j->ws->da1,
                        j->G + (j->layer ? L.c2w : L.c1w), j->G + (j->layer ? L.c2b : L.c1b),
                        j->layer ? j->ws->dp1 : NULL, j->ws->scratch, j->threads);
}
/* A convolution fused with its pool, as cnn_net.c calls it (simd, omp): conv1+pool1 (layer 0), conv2+pool2 (1). */
static void fused_fw(job *j)
{
    cnn_layout L = cnn_layout_of(j->d);
    const int two = j->layer;
    j->k->conv_pool_forward(two ? &j->d->conv2 : &j->d->conv1, two ? &j->d->pool2 : &j->d->pool1, BATCH,
                            two ? j->ws->p1 : j->X, j->P + (two ? L.c2w : L.c1w), j->P + (two ? L.c2b : L.c1b),
                            two ? j->ws->p2 : j->ws->p1, two ? j->ws->arg2 : j->ws->arg1, j->ws->scratch,
                            j->threads);
}
static void fused_bw(job *j) /* dp is read only: no restore */
{
    cnn_layout L = cnn_layout_of(j->d);
    const int two = j->layer;
    j->k->pool_conv_backward(two ? &j->d->conv2 : &j->d->conv1, two ? &j->d->pool2 : &j->d->pool1, BATCH,
                             two ? j->ws->p1 : j->X, j->P + (two ? L.c2w : L.c1w), two ? j->ws->p2 : j->ws->p1,
                             two ? j->ws->arg2 : j->ws->arg1, two ? j->ws->dp2 : j->ws->dp1,
                             j->G + (two ? L.c2w : L.c1w), j->G + (two ? L.c2b : L.c1b), two ? j->ws->dp1 : NULL,
                             j->ws->scratch, j->threads);
}
static void dense_fw(job *j)
{
    cnn_layout L = cnn_layout_of(j->d);
    int one = j->layer == 2;
    j->k->dense_forward(one ? &j->d->dense1 : &j->d->dense2, BATCH, one ? j->ws->p2 : j->ws->a3,
                        j->P + (one ? L.d1w : L.d2w), j->P + (one ? L.d1b : L.d2b), one ? j->ws->a3 : j->ws->z4,
                        one, j->ws->scratch, j->threads);
}
static void dense_bw(job *j)
{
    cnn_layout L = cnn_layout_of(j->d);
    int one = j->layer == 2;
    j->k->dense_backward(one ? &j->d->dense1 : &j->d->dense2, BATCH, one ? j->ws->p2 : j->ws->a3,
                         j->P + (one ? L.d1w : L.d2w), one ? j->ws->a3 : j->ws->z4, one ? j->ws->da3 : j->ws->d4,
                         one, j->G + (one ? L.d1w : L.d2w), j->G + (one ? L.d1b : L.d2b),
                         one ? j->ws->dp2 : j->ws->da3, j->ws->scratch, j->threads);
}
static void step(job *j)
{
    cnn_forward(j->d, j->k, j->P, j->X, BATCH, j->ws, j->threads, NULL, NULL);
    cnn_loss(j->d, j->y, BATCH, j->ws);
    cnn_backward(j->d, j->k, j->P, j->X, BATCH, j->ws, j->G, j->threads, NULL, NULL);
    cnn_sgd_momentum(j->P, j->V, j->G, cnn_layout_of(j->d).n, 0.0f, 0.9f, j->threads); /* lr 0: P stays */
}
static void pool_fw(job *j)
{
    const cnn_pool *p = j->layer ? &j->d->pool2 : &j->d->pool1;
    cnn_pool_forward(p, BATCH, j->layer ? j->ws->a2 : j->ws->a1, j->layer ? j->ws->p2 : j->ws->p1,
                     j->layer ? j->ws->arg2 : j->ws->arg1, j->threads);
}
static void pool_bw(job *j)
{
    const cnn_pool *p = j->layer ? &j->d->pool2 : &j->d->pool1;
    cnn_pool_backward(p, BATCH, j->layer ? j->ws->dp2 : j->ws->dp1, j->layer ? j->ws->arg2 : j->ws->arg1,
                      j->layer ? j->ws->da2 : j->ws->da1, j->threads);
}
static void im2col_fw(job *j)
{
    cnn_layout L = cnn_layout_of(j->d);
    const cnn_conv *c = j->layer ? &j->d->conv2 : &j->d->conv1;
    conv_forward_im2col(c, BATCH, j->layer ? j->ws->p1 : j->X, j->P + (j->layer ? L.c2w : L.c1w),
                        j->P + (j->layer ? L.c2b : L.c1b), j->layer ? j->ws->a2 : j->ws->a1, j->work);
}

static double conv_flops(const cnn_conv *c) { return 2.0 * BATCH * (double)cnn_conv_out(c) * c->cin * c->k * c->k; }
static double dense_flops(const cnn_dense *l) { return 2.0 * BATCH * l->nin * l->nout; }

/* One variant's row: each layer's forward and backward, then the whole step. */
static void variant_row(const char *name, job *j, int reps)
{
    const cnn_dims *d = j->d;
    double fl[4] = {conv_flops(&d->conv1), conv_flops(&d->conv2), dense_flops(&d->dense1), dense_flops(&d->dense2)};
    float *delta[4] = {j->ws->da1, j->ws->da2, j->ws->da3, j->ws->d4};
    size_t dn[4] = {BATCH * cnn_conv_out(&d->conv1), BATCH * cnn_conv_out(&d->conv2),
                    (size_t)BATCH * d->dense1.nout, (size_t)BATCH * d->dense2.nout};
    const char *names[4] = {"conv1", "conv2", "dense1", "dense2"};
    step(j); /* every activation and delta in place, as the network leaves them */
    printf("%-6s", name);
    for (int l = 0; l < 4; l++) {
        j->layer = l, j->restore = NULL, j->call = l < 2 ? conv_fw : dense_fw;
        double f = median_ms(j, reps);
        float *save = malloc(dn[l] * sizeof(float));
        memcpy(save, delta[l], dn[l] * sizeof(float));
        j->dsave = save, j->dtarget = delta[l], j->dn = dn[l], j->restore = restore_delta;
        j->call = l < 2 ? conv_bw : dense_bw;
        double b = median_ms(j, reps), bfl = fl[l] * (l == 0 ? 1 : 2); /* conv1: no input gradient */
        printf(" | %s %.3f (%3.0f) %.3f (%3.0f)", names[l], f, fl[l] / f * 1e-6, b, bfl / b * 1e-6);
        free(save);
    }
    for (int l = 0; l < 2 && j->k->conv_pool_forward; l++) { /* the fused forms, which the study runs */
        j->layer = l, j->restore = NULL, j->call = fused_fw;
        double f = median_ms(j, reps);
        j->call = fused_bw;
        double b = median_ms(j, reps);
        printf(" | conv%d+pool%d %.3f (%3.0f) %.3f (%3.0f)", l + 1, l + 1, f, fl[l] / f * 1e-6, b,
               fl[l] * (l == 0 ? 1 : 2) / b * 1e-6);
    }
    for (int l = 0; l < 2; l++) { /* the shared pooling, with this row's thread count */
        j->layer = l, j->restore = NULL, j->call = pool_fw;
        double f = median_ms(j, reps);
        j->call = pool_bw;
        printf(" | pool%d %.3f %.3f", l + 1, f, median_ms(j, reps));
    }
    j->restore = NULL, j->call = step;
    double s = median_ms(j, reps);
    printf(" | step %.2f (%3.0f) epoch %.3f s\n", s, cnn_step_flops(d, BATCH) / s * 1e-6, s * 60000 / BATCH * 1e-3);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1, reps = argc > 2 ? atoi(argv[2]) : 15;
    cnn_dims d;
    cnn_dims_init(&d, 28, 28);
    cnn_layout L = cnn_layout_of(&d);
    size_t nws = cnn_ws_floats(&d, BATCH, threads > 1 ? threads : 1), nx = (size_t)BATCH * 28 * 28;
    float *block = aligned_alloc(64, nws * sizeof(float)), *X = malloc(nx * sizeof(float));
    float *P = malloc(L.n * sizeof(float)), *G = malloc(L.n * sizeof(float)), *V = calloc(L.n, sizeof(float));
    uint8_t *argmax = malloc(cnn_ws_argmax_bytes(&d, BATCH)), *y = malloc(BATCH);
    if (!block || !X || !P || !G || !V || !argmax || !y)
        return 1;
    memset(block, 0, nws * sizeof(float));
    cnn_ws ws;
    cnn_ws_bind(&ws, &d, BATCH, threads > 1 ? threads : 1, block, argmax);
    uint32_t s = 1;
    for (size_t i = 0; i < nx; i++)
        X[i] = (float)((s = s * 1103515245u + 12345u) >> 24) / 255.0f;
    for (int b = 0; b < BATCH; b++)
        y[b] = (uint8_t)((s = s * 1103515245u + 12345u) >> 16) % 10;
    cnn_init_he(&d, P, 1);
    printf("# cnn_layers: batch %d, 28 x 28, threads %d, kernels for %s (%s), median of %d, ms (GFLOP/s)\n",
           BATCH, threads, SIMD_ISA, SL_KERNEL_MARCH, reps);
    printf("# each layer: forward, backward (conv1's without an input gradient); conv+pool: the fused forms the "
           "study runs (and step with them); pooling is shared (cnn_pool.c)\n");
    const struct {
        const char *name;
        cnn_layers k;
        int threads;
    } rows[] = {
        {"simd", {cnn_conv_forward_simd, cnn_conv_backward_simd, cnn_dense_forward_simd, cnn_dense_backward_simd, NULL,
                  cnn_conv_pool_forward_simd, cnn_pool_conv_backward_simd}, 1},
        {"omp", {cnn_conv_forward_omp, cnn_conv_backward_omp, cnn_dense_forward_omp, cnn_dense_backward_omp, NULL,
                 cnn_conv_pool_forward_omp, cnn_pool_conv_backward_omp}, threads},
#if SL_HAVE_BLAS
        {"blas", {cnn_conv_forward_blas, cnn_conv_backward_blas, cnn_dense_forward_blas, cnn_dense_backward_blas, NULL,
                  NULL, NULL}, threads},
#endif
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        job j = {.k = &rows[r].k, .d = &d, .ws = &ws, .P = P, .G = G, .V = V, .X = X, .y = y,
                 .threads = rows[r].threads};
        variant_row(rows[r].name, &j, reps);
    }
    /* the experiment, interleaved with simd's direct forward so that both see the same machine load */
    job j = {.k = &rows[0].k, .d = &d, .ws = &ws, .P = P, .X = X, .threads = 1};
    size_t nw = conv_im2col_floats(&d.conv1) > conv_im2col_floats(&d.conv2) ? conv_im2col_floats(&d.conv1)
                                                                            : conv_im2col_floats(&d.conv2);
    j.work = aligned_alloc(64, (nw * sizeof(float) + 63) / 64 * 64);
    for (int l = 0; l < 2; l++) {
        double direct[3], im2col[3];
        for (int r = 0; r < 3; r++) {
            j.layer = l, j.call = conv_fw, direct[r] = median_ms(&j, reps);
            j.call = im2col_fw, im2col[r] = median_ms(&j, reps);
        }
        qsort(direct, 3, sizeof direct[0], cmp), qsort(im2col, 3, sizeof im2col[0], cmp);
        printf("# conv%d forward, one thread: direct (simd) %.3f ms, im2col + product %.3f ms (medians of 3 "
               "interleaved medians)\n", l + 1, direct[1], im2col[1]);
    }
    free(j.work), free(block), free(X), free(P), free(G), free(V), free(argmax), free(y);
    return 0;
}
