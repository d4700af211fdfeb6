/*
 * calibrate.c: the machine's ceilings (docs/results-schema.md, calibration records): STREAM-style triad
 * bandwidth and FP32 FMA peak on one thread and on all threads, BLAS sgemm, and the GPU's (calibrate_gpu.c).
 * Every figure is the best of several passes: a ceiling is what the machine can do, not what it usually does.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <speedlab/prof.h>

#include "calib/calib.h"
#include "calibrate.h"
#include "kern_blas.h"
#include "record.h"
#include "sl_config.h"

#if SL_HAVE_BLAS
#include <cblas.h>
#endif

/* Triad arrays: 3 x 128 MiB of doubles, four times the 32 MiB L3 each. */
#define TRIAD_N ((size_t)16 << 20)
#define TRIAD_PASSES 10

/* ---- a team of threads that start each pass together -------------------------------------------- */
typedef struct team {
    int n;
    pthread_barrier_t start, stop;
    void (*work)(struct team *, int id);
    int quit;
    double *a, *b, *c; /* triad */
    long fma_iters;
    float sink[64];
} team;

typedef struct member {
    team *t;
    int id;
} member;

static void *member_main(void *arg)
{
    member *m = arg;
    for (;;) {
        pthread_barrier_wait(&m->t->start);
        if (m->t->quit)
            return NULL;
        m->t->work(m->t, m->id);
        pthread_barrier_wait(&m->t->stop);
    }
}

/* Runs work on every member (the caller is member 0) and returns the wall time of the pass, seconds. */
static double team_pass(team *t, void (*work)(team *, int))
{
    t->work = work;
    pthread_barrier_wait(&t->start);
    uint64_t t0 = prof_now_ns();
    work(t, 0);
    pthread_barrier_wait(&t->stop);
    return (double)(prof_now_ns() - t0) * 1e-9;
}

static void triad_work(team *t, int id)
{
    size_t lo = TRIAD_N * (size_t)id / (size_t)t->n, hi = TRIAD_N * (size_t)(id + 1) / (size_t)t->n;
    sl_triad(t->a, t->b, t->c, 3.0, lo, hi);
}

static void touch_work(team *t, int id)
{
    /* First touch by the thread that will stream the pages. */
    size_t lo = TRIAD_N * (size_t)id / (size_t)t->n, hi = TRIAD_N * (size_t)(id + 1) / (size_t)t->n;
    for (size_t i = lo; i < hi; i++) {
        t->a[i] = 0.0;
        t->b[i] = 1.0;
        t->c[i] = 2.0;
    }
}

static void fma_work(team *t, int id)
{
    sl_fma_loop(t->fma_iters, &t->sink[id % 64]);
}

/* Best triad GB/s (24 bytes per element, STREAM's count) and best FMA GFLOP/s on n threads. */
static void measure_team(int n, double *triad_gbs, double *fma_gflops)
{
    team t = {.n = n};
    pthread_barrier_init(&t.start, NULL, (unsigned)n);
    pthread_barrier_init(&t.stop, NULL, (unsigned)n);
    member *ms = calloc((size_t)n, sizeof *ms);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    for (int i = 1; i < n; i++) {
        ms[i] = (member){&t, i};
        pthread_create(&th[i], NULL, member_main, &ms[i]);
    }
    *triad_gbs = 0;
    t.a = malloc(TRIAD_N * sizeof(double));
    t.b = malloc(TRIAD_N * sizeof(double));
    t.c = malloc(TRIAD_N * sizeof(double));
    if (t.a && t.b && t.c) {
        team_pass(&t, touch_work);
        for (int p = 0; p < TRIAD_PASSES; p++) {
            double s = team_pass(&t, triad_work);
            double gbs = 3.0 * sizeof(double) * (double)TRIAD_N / s / 1e9;
            *triad_gbs = gbs > *triad_gbs ? gbs : *triad_gbs;
        }
    }
    free(t.a);
    free(t.b);
    free(t.c);

    /* Size the FMA pass to about 0.2 s from a short trial on one thread. */
    float sink = 0;
    uint64_t t0 = prof_now_ns();
    double f = sl_fma_loop(1L << 20, &sink);
    double rate = f / ((double)(prof_now_ns() - t0) * 1e-9);
    t.fma_iters = (long)(0.2 * rate / (f / (1L << 20)));
    if (t.fma_iters < 1)
        t.fma_iters = 1;
    *fma_gflops = 0;
    for (int p = 0; p < 3; p++) {
        double s = team_pass(&t, fma_work);
        double g = (double)n * (f / (1L << 20)) * (double)t.fma_iters / s / 1e9;
        *fma_gflops = g > *fma_gflops ? g : *fma_gflops;
    }

    t.quit = 1;
    pthread_barrier_wait(&t.start);
    for (int i = 1; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&t.start);
    pthread_barrier_destroy(&t.stop);
    free(ms);
    free(th);
}

#if SL_HAVE_BLAS
/* BLAS sgemm at n = 2048, best of 3 after one warm-up call, GFLOP/s. */
static double sgemm_gflops(int threads)
{
    const int n = 2048;
    float *A = malloc((size_t)n * n * sizeof *A), *B = malloc((size_t)n * n * sizeof *B);
    float *C = malloc((size_t)n * n * sizeof *C);
    double best = 0;
    if (A && B && C) {
        for (size_t i = 0; i < (size_t)n * n; i++) {
            A[i] = (float)(i % 7) * 0.1f;
            B[i] = (float)(i % 5) * 0.1f;
            C[i] = 0;
        }
        kern_blas_threads(threads);
        for (int p = 0; p < 4; p++) {
            uint64_t t0 = prof_now_ns();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, A, n, B, n, 0.0f, C, n);
            double s = (double)(prof_now_ns() - t0) * 1e-9;
            double g = 2.0 * n * (double)n * n / s / 1e9;
            if (p > 0 && g > best)
                best = g;
        }
    }
    free(A);
    free(B);
    free(C);
    return best;
}
#endif

json_t *sl_calibrate_ceilings(int threads)
{
    json_t *c = json_object();
    double tr1, fma1, tr, fma;
    measure_team(1, &tr1, &fma1);
    measure_team(threads, &tr, &fma);
    json_object_set_new(c, "triad_gbs_1t", json_real(tr1));
    json_object_set_new(c, "triad_gbs", json_real(tr));
    json_object_set_new(c, "fma_gflops_1t", json_real(fma1));
    json_object_set_new(c, "fma_gflops", json_real(fma));
    printf("calibrate: triad %.1f GB/s (1 thread), %.1f GB/s (%d threads); FP32 FMA %.1f GFLOP/s (1 thread), "
           "%.1f GFLOP/s (%d threads)\n", tr1, tr, threads, fma1, fma, threads);
#if SL_HAVE_BLAS
    double sg = sgemm_gflops(threads);
    json_object_set_new(c, "sgemm_gflops", json_real(sg));
    printf("calibrate: BLAS sgemm (n = 2048) %.1f GFLOP/s (%d threads)\n", sg, threads);
#endif
    /* The GPU's, or the reason it has none: absent, never zero (docs/results-schema.md). */
    char why[200] = "";
    json_t *gpu = sl_calibrate_gpu(why, sizeof why);
    if (gpu) {
        json_object_set_new(c, "gpu", gpu);
    } else {
        json_object_set_new(c, "gpu_missing", json_string(why));
        printf("calibrate: no GPU ceilings: %s\n", why);
    }
    fflush(stdout);
    return c;
}

int sl_write_calibration(int fd, const char *run_id, json_t *env, int threads)
{
    json_t *rec = sl_record_header("calibration", run_id, env);
    json_object_set_new(rec, "threads", json_integer(threads));
    json_object_set_new(rec, "ceilings", sl_calibrate_ceilings(threads));
    sl_error err = {{0}};
    int rc = sl_record_append(fd, rec, &err);
    if (rc != 0)
        fprintf(stderr, "speedlab: writing the calibration record: %s\n", err.msg);
    json_decref(rec);
    return rc;
}
