/*
 * The entropy_mi study (seed 000, sections 2-3; CASE_STUDIES.md section 1): entropy and mutual
 * information of softmax activations, D = 256, swept over the batch size B.
 *
 * Work per repetition (docs/study-entropy_mi.md): per row, softmax 5 flops per element on two rows
 * (10 D), entropy 2 D, the D x D pair sum 3 flops per pair (multiply, square, add): B (3 D^2 + 12 D).
 * factorized does O(D) work per row for the same result and records that work (em_finish).
 * Bytes: X and Y read once, 2 B D 4.
 */
#include <math.h>
#include <stdlib.h>

#include "entropy_mi/entropy_mi.h"
#include "seeded_normal.h"
#include "sl_config.h"
#include "speedlab/prof.h"
#include "study.h"

#define EM_D 256

enum { V_NAIVE, V_SIMD, V_OMP, V_CUDA, V_FACTORIZED, V_COUNT };

static const sl_variant em_variants[V_COUNT] = {
    [V_NAIVE] = {"naive", NULL, "scalar loops, the D x D sum in full", NULL},
    [V_SIMD] = {"simd", NULL, "one thread, vector softmax, D x D sum vectorised over j (8 rows of i at once)",
                "naive"},
    [V_OMP] = {"omp", "openmp", "simd with rows split across OpenMP threads", "simd"},
    [V_CUDA] = {"cuda", "cuda", "one block per batch row (as written up); time includes copies",
                "omp"},
    [V_FACTORIZED] = {"factorized", NULL,
                      "algorithmic change: sum_ij (p_i q_j)^2 = (sum p_i^2)(sum q_j^2), O(D) per row",
                      "simd"},
};

static const long em_sizes[] = {256, 1024, 4096, 16384, 65536};
static const long em_quick_sizes[] = {256, 1024};

typedef struct em_state {
    long B, D;
    float *X, *Y;
    double ref_h, ref_mi; /* double-precision reference */
    double h, mi;         /* the last run's output */
    void *cuda;           /* em_cuda_ctx of the cuda variant, between prepare and release */
} em_state;

static double em_flops(long B, const sl_opts *o)
{
    (void)o;
    return (double)B * (3.0 * EM_D * EM_D + 12.0 * EM_D);
}

static double em_bytes(long B, const sl_opts *o)
{
    (void)o;
    return 2.0 * (double)B * EM_D * sizeof(float);
}

static double em_footprint(long B, const sl_opts *o)
{
    (void)o;
    return 2.0 * (double)B * EM_D * sizeof(float) + 2.0 * (double)B * sizeof(float) + 4096.0;
}

/* The reference in double. The D x D sum is evaluated through the factorisation (exact in real
 * arithmetic, so in double it is accurate to ~1e-15 relative) to keep setup at O(B D) at B = 65536;
 * the float kernels' D x D sums are checked against it, and tests/kernels checks the identity. */
static void em_reference(const float *X, const float *Y, long B, long D, double *H, double *MI)
{
    double h = 0.0, mi = 0.0;
    for (long b = 0; b < B; b++) {
        double sp[2] = {0.0, 0.0};
        for (int r = 0; r < 2; r++) {
            const float *x = (r ? Y : X) + b * D;
            double m = x[0], s = 0.0, s2 = 0.0;
            for (long i = 1; i < D; i++)
                m = x[i] > m ? x[i] : m;
            for (long i = 0; i < D; i++)
                s += exp(x[i] - m);
            for (long i = 0; i < D; i++) {
                const double p = exp(x[i] - m) / s;
                s2 += p * p;
            }
            sp[r] = s2;
        }
        h += sp[0];
        mi += sp[0] * sp[1];
    }
    *H = -h / (double)B;
    *MI = mi / (double)B;
}

static void em_teardown(void *state)
{
    em_state *s = state;
    if (!s)
        return;
    free(s->X);
    free(s->Y);
    free(s);
}

static void *em_setup(long B, const sl_opts *o, sl_error *err)
{
    em_state *s = calloc(1, sizeof *s);
    if (!s) {
        sl_error_set(err, "%s:%d: entropy_mi: out of memory for the state", __FILE__, __LINE__);
        return NULL;
    }
    s->B = B;
    s->D = EM_D;
    s->X = malloc((size_t)(B * EM_D) * sizeof(float));
    s->Y = malloc((size_t)(B * EM_D) * sizeof(float));
    if (!s->X || !s->Y) {
        sl_error_set(err, "%s:%d: entropy_mi: out of memory for X, Y (B = %ld, D = %d)", __FILE__,
                     __LINE__, B, EM_D);
        em_teardown(s);
        return NULL;
    }
    sn_rng rx = sn_seed(o->seed, B, 0), ry = sn_seed(o->seed, B, 1);
    sn_fill(&rx, s->X, B * EM_D);
    sn_fill(&ry, s->Y, B * EM_D);
    em_reference(s->X, s->Y, B, EM_D, &s->ref_h, &s->ref_mi);
    return s;
}

/* ---- CUDA: the one place that knows whether it exists ------------------------------------------- */
#if SL_HAVE_CUDA
static int em_prepare(void *state, int v, sl_error *err)
{
    em_state *s = state;
    if (v != V_CUDA)
        return 0;
    s->cuda = em_cuda_alloc(s->B, s->D);
    if (!s->cuda) {
        sl_error_set(err, "%s:%d: entropy_mi cuda: device allocation failed for B = %ld, D = %ld",
                     __FILE__, __LINE__, s->B, s->D);
        return -1;
    }
    return 0;
}

static void em_release(void *state, int v)
{
    em_state *s = state;
    if (v == V_CUDA) {
        em_cuda_free(s->cuda);
        s->cuda = NULL;
    }
}

/* One repetition on the GPU: copy in, kernel, copy out; each phase a profiler region and device time. */
static int em_run_cuda(em_state *s, sl_record *rec, sl_error *err)
{
    int rc;
    prof_begin("h2d");
    prof_gpu_begin(NULL);
    rc = em_cuda_copy_in(s->cuda, s->X, s->Y);
    const double h2d = prof_gpu_end();
    prof_end("h2d");
    prof_begin("kernel");
    prof_gpu_begin(NULL);
    rc |= em_cuda_compute(s->cuda);
    const double k = prof_gpu_end();
    prof_end("kernel");
    prof_begin("d2h");
    prof_gpu_begin(NULL);
    rc |= em_cuda_copy_out(s->cuda, &s->h, &s->mi);
    const double d2h = prof_gpu_end();
    prof_end("d2h");
    if (rc != 0) {
        sl_error_set(err, "%s:%d: entropy_mi cuda: a CUDA call failed (B = %ld)", __FILE__, __LINE__, s->B);
        return -1;
    }
    if (h2d >= 0.0 && k >= 0.0 && d2h >= 0.0)
        sl_record_phases(rec, h2d, k, d2h);
    return 0;
}
#else
#define em_prepare NULL
#define em_release NULL
static int em_run_cuda(em_state *s, sl_record *rec, sl_error *err)
{
    (void)s, (void)rec;
    sl_error_set(err, "%s:%d: entropy_mi cuda: built without CUDA (configure with -Dcuda=enabled)",
                 __FILE__, __LINE__);
    return -1;
}
#endif

static int em_run(void *state, int v, sl_record *rec, sl_error *err)
{
    em_state *s = state;
    int rc;
    switch (v) {
    case V_NAIVE: rc = em_naive(s->X, s->Y, s->B, s->D, &s->h, &s->mi); break;
    case V_SIMD: rc = em_simd(s->X, s->Y, s->B, s->D, &s->h, &s->mi); break;
    case V_OMP: rc = em_omp(s->X, s->Y, s->B, s->D, &s->h, &s->mi); break;
    case V_FACTORIZED: rc = em_factorized(s->X, s->Y, s->B, s->D, &s->h, &s->mi); break;
    case V_CUDA: return em_run_cuda(s, rec, err);
    default:
        sl_error_set(err, "%s:%d: entropy_mi: no variant %d (0..%d)", __FILE__, __LINE__, v, V_COUNT - 1);
        return -1;
    }
    if (rc != 0) {
        sl_error_set(err, "%s:%d: entropy_mi %s: kernel rejected B = %ld, D = %ld", __FILE__, __LINE__,
                     em_variants[v].name, s->B, s->D);
        return -1;
    }
    return 0;
}

static int em_check(void *state, int v, double *rel_err, sl_error *err)
{
    em_state *s = state;
    (void)v;
    if (s->ref_h == 0.0 || s->ref_mi == 0.0) {
        sl_error_set(err, "%s:%d: entropy_mi: reference is zero, relative error undefined", __FILE__, __LINE__);
        return -1;
    }
    const double eh = fabs(s->h - s->ref_h) / fabs(s->ref_h);
    const double em = fabs(s->mi - s->ref_mi) / fabs(s->ref_mi);
    *rel_err = eh > em ? eh : em;
    if (isnan(s->h) || isnan(s->mi))
        *rel_err = INFINITY;
    return 0;
}

static void em_finish(void *state, int v, sl_record *rec)
{
    em_state *s = state;
    sl_record_metric(rec, "H", s->h);
    sl_record_metric(rec, "MI", s->mi);
    if (v == V_FACTORIZED) {
        /* its own work, so rates and the roofline are not credited with ~50x the flops it does: the
         * two softmaxes as the study counts them (12 D), the two sums of squares (4 D), their product */
        sl_record_work(rec, (double)s->B * (16.0 * (double)s->D + 2.0), em_bytes(s->B, NULL));
        sl_record_note(rec, "algorithmic change: O(D) per row; its own work, B (16 D + 2) flops, is recorded");
    }
}

const sl_study sl_study_entropy_mi = {
    .name = "entropy_mi",
    .title = "entropy and mutual information of softmax activations (D = 256)",
    .source = "seed 000, sections 2-3",
    .kind = SL_KERNEL,
    .size_name = "B",
    .sizes = em_sizes,
    .n_sizes = sizeof em_sizes / sizeof em_sizes[0],
    .quick_sizes = em_quick_sizes,
    .n_quick_sizes = sizeof em_quick_sizes / sizeof em_quick_sizes[0],
    .baseline = "naive",
    .tolerance = 1e-3,
    .variants = em_variants,
    .n_variants = V_COUNT,
    .flops = em_flops,
    .bytes = em_bytes,
    .footprint = em_footprint,
    .setup = em_setup,
    .prepare = em_prepare,
    .run = em_run,
    .check = em_check,
    .finish = em_finish,
    .release = em_release,
    .teardown = em_teardown,
};
