/*
 * The entropy_mi study (seed 000, sections 2-3): entropy and mutual
 * information of softmax activations, D = 256, swept over the batch size B.
 *
 * Work per repetition (docs/study-entropy_mi.md): per row, softmax 5 flops per element on two rows
 * (10 D), entropy 2 D, the D x D pair sum 3 flops per pair (multiply, square, add): B (3 D^2 + 12 D).
 * factorized does O(D) work per row for the same result and records that work (em_finish).
 * Bytes: X and Y read once, 2 B D 4.
 */
#include <math.h>
#include <stdlib.h>

#include "entropy_mi/entropy_mi_kernels.h"
#include "seeded_normal.h"
#include "sl_config.h"
#include "speedlab/prof.h"
#include "study.h"

#define EM_D 256

static const long em_sizes[] = {256, 1024, 4096, 16384, 65536};
static const long em_quick_sizes[] = {256, 1024};

typedef struct em_state {
    long B, D;
    float *X, *Y;
    double ref_h, ref_mi; /* double-precision reference */
    double h, mi;         /* the last run's output */
    void *cuda;           /* em_cuda_ctx of the cuda variant, between prepare and release */
    int threads;          /* --threads */
} em_state;

/* A device variant's form (em_kernels.device): EM_GPU runs on the GPU, owning its device buffers between
 * prepare and release; EM_PINNED copies X and Y from pinned host memory (staged once, in prepare) and
 * reduces the rows' sums on the device, so that only H and MI come back (into pinned memory);
 * EM_FACTORIZED computes the O(D) rows there. 0: a CPU variant. */
enum { EM_GPU = 1, EM_PINNED = 2, EM_FACTORIZED = 4 };

/* What a variant row's `kernels` points to: a CPU variant's kernel (entropy_mi_kernels.h), or an SL_DEVICE
 * variant's form (EM_GPU and its options). `own_flops`: for a variant that does less work than the study's nominal count (an
 * algorithmic change), the work it does, which its records carry instead. */
typedef struct em_kernels {
    em_kernel_fn *run;
    int device;
    double (*own_flops)(long B, long D);
    const char *own_work_note;
    const char *copies; /* GPU rows: what the timed region copies (sl_study.copies) */
} em_kernels;

extern const sl_study sl_study_entropy_mi;

static const sl_variant *em_variant(int v)
{
    return &sl_study_entropy_mi.variants[v];
}

static const em_kernels *em_kernels_of(int v)
{
    return em_variant(v)->kernels;
}

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
    s->threads = o->threads;
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
static void em_release_cuda(em_state *s)
{
    em_cuda_free(s->cuda);
    s->cuda = NULL;
}

static int em_prepare_cuda(em_state *s, const char *name, int form, sl_error *err)
{
    s->cuda = em_cuda_alloc(s->B, s->D);
    if (!s->cuda) {
        sl_error_set(err, "%s:%d: entropy_mi %s: device allocation failed for B = %ld, D = %ld",
                     __FILE__, __LINE__, name, s->B, s->D);
        return -1;
    }
    /* the pinned forms copy as torch-cuda's: X and Y in from pinned memory, H and MI out (2 doubles) */
    if ((form & EM_PINNED) && (em_cuda_pin_inputs(s->cuda, s->X, s->Y) != 0 || em_cuda_sums_on_device(s->cuda))) {
        sl_error_set(err, "%s:%d: entropy_mi %s: pinned host memory (cudaMallocHost) failed for 2 x %ld "
                     "floats and 2 doubles (the cuda row is the form without it)", __FILE__, __LINE__, name,
                     s->B * s->D);
        em_release_cuda(s);
        return -1;
    }
    return 0;
}

/* One repetition on the GPU: copy in, kernel, copy out; each phase a profiler region and device time. */
static int em_run_cuda(em_state *s, const char *name, int form, sl_record *rec, sl_error *err)
{
    int rc;
    prof_begin("h2d");
    prof_gpu_begin(NULL);
    rc = em_cuda_copy_in(s->cuda, s->X, s->Y);
    const double h2d = prof_gpu_end();
    prof_end("h2d");
    prof_begin("kernel");
    prof_gpu_begin(NULL);
    rc |= (form & EM_FACTORIZED) ? em_cuda_compute_factorized(s->cuda) : em_cuda_compute(s->cuda);
    const double k = prof_gpu_end();
    prof_end("kernel");
    prof_begin("d2h");
    prof_gpu_begin(NULL);
    rc |= em_cuda_copy_out(s->cuda, &s->h, &s->mi);
    const double d2h = prof_gpu_end();
    prof_end("d2h");
    if (rc != 0) {
        sl_error_set(err, "%s:%d: entropy_mi %s: a CUDA call failed (B = %ld)", __FILE__, __LINE__, name, s->B);
        return -1;
    }
    if (h2d >= 0.0 && k >= 0.0 && d2h >= 0.0)
        sl_record_phases(rec, h2d, k, d2h);
    return 0;
}
#else /* the row stays complete; the runner reports the variant unavailable and never calls these */
static int em_prepare_cuda(em_state *s, const char *name, int form, sl_error *err)
{
    (void)s, (void)form;
    sl_error_set(err, "%s:%d: entropy_mi %s: built without CUDA (configure with -Dcuda=enabled)",
                 __FILE__, __LINE__, name);
    return -1;
}
static void em_release_cuda(em_state *s) { (void)s; }
static int em_run_cuda(em_state *s, const char *name, int form, sl_record *rec, sl_error *err)
{
    (void)rec;
    return em_prepare_cuda(s, name, form, err);
}
#endif

static int em_prepare(void *state, int v, sl_error *err)
{
    const em_kernels *k = em_kernels_of(v);
    return k->device ? em_prepare_cuda(state, em_variant(v)->name, k->device, err) : 0;
}

static void em_release(void *state, int v)
{
    if (em_kernels_of(v)->device)
        em_release_cuda(state);
}

static int em_run(void *state, int v, sl_record *rec, sl_error *err)
{
    em_state *s = state;
    const em_kernels *k = em_kernels_of(v);
    if (k->device)
        return em_run_cuda(s, em_variant(v)->name, k->device, rec, err);
    if (k->run(s->X, s->Y, s->B, s->D, &s->h, &s->mi, sl_variant_threads(em_variant(v), s->threads))) {
        sl_error_set(err, "%s:%d: entropy_mi %s: kernel rejected B = %ld, D = %ld", __FILE__, __LINE__,
                     em_variant(v)->name, s->B, s->D);
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
    const em_kernels *k = em_kernels_of(v);
    if (k->own_flops) { /* so rates and the roofline credit it with the flops it does, not the study's */
        sl_record_work(rec, k->own_flops(s->B, s->D), em_bytes(s->B, NULL));
        sl_record_note(rec, k->own_work_note);
    }
}

/* factorized's work: the two softmaxes as the study counts them (12 D), the two sums of squares (4 D),
 * their product; about 1/50 of the study's nominal count at D = 256. */
static double em_factorized_flops(long B, long D)
{
    return (double)B * (16.0 * (double)D + 2.0);
}

/* The framework baselines' inputs (baselines/entropy_mi.py reads them) and outputs (docs/baselines.md). */
static int em_external_inputs(void *state, sl_inputs *in, sl_error *err)
{
    em_state *s = state;
    const long shape[2] = {s->B, s->D};
    return sl_input_f32(in, "X", s->X, 2, shape, err) || sl_input_f32(in, "Y", s->Y, 2, shape, err) ? -1 : 0;
}

static int em_external_outputs(void *state, int v, const sl_outputs *out, sl_error *err)
{
    em_state *s = state;
    (void)v;
    return sl_output_number(out, "H", &s->h, err) || sl_output_number(out, "MI", &s->mi, err) ? -1 : 0;
}

/* What a row lacks: a CPU variant its kernel, a device variant its form. */
static const char *em_incomplete(const sl_variant *v)
{
    const em_kernels *k = v->kernels;
    if (v->traits & SL_EXTERNAL) /* run by baselines/entropy_mi.py: no functions of ours */
        return NULL;
    if (v->traits & SL_DEVICE)
        return (k->device & EM_GPU) && !k->run ? NULL : "an SL_DEVICE row needs .device = EM_GPU (and no .run)";
    if (k->device)
        return "a .device form on a row that is not SL_DEVICE";
    if (k->own_flops && !k->own_work_note)
        return ".own_flops without .own_work_note (the record's note says why the work differs)";
    return k->run ? NULL : "a CPU row needs .run (its kernel)";
}

/* What each GPU row's timed region copies (sl_study.copies): the report prints it beside the times, so
 * that a row is compared with a framework form that copies the same. */
#define EM_COPIES_PAGEABLE "in: X, Y from pageable memory (2 B D floats); out: the rows' sums (2 B floats), " \
                           "reduced on the host"
#define EM_COPIES_PINNED "in: X, Y from pinned memory (2 B D floats); out: H, MI (2 doubles, pinned)"

/* The framework rows' work: every form of baselines/entropy_mi.py factorises the pair sum (docs/baselines.md),
 * so each row is charged factorized's flops and the same bytes (X and Y read once), not the study's O(D^2)
 * count. A form that computed the D x D sum would need a row of its own with the study's work. */
#define EM_FRAMEWORK_WORK_NOTE "the framework's forms factorise the pair sum: O(D) per row; the work of " \
                               "factorized, B (16 D + 2) flops, is recorded"
static const em_kernels em_framework_work = {.own_flops = em_factorized_flops,
                                             .own_work_note = EM_FRAMEWORK_WORK_NOTE};

/* One row per variant: name, requirement, description, the variant it builds on, traits, functions. */
static const sl_variant em_variants[] = {
    {"naive", NULL, "scalar loops, the D x D sum in full", NULL, 0, &(const em_kernels){.run = em_naive}},
    {"simd", NULL, "one thread, vector softmax, D x D sum vectorised over j (8 rows of i at once)", "naive", 0,
     &(const em_kernels){.run = em_simd}},
    {"omp", "openmp", "simd with rows split across OpenMP threads", "simd", SL_THREADED,
     &(const em_kernels){.run = em_omp}},
    {"cuda", "cuda", "one block per batch row (as written up); time includes copies", "omp", SL_DEVICE,
     &(const em_kernels){.device = EM_GPU, .copies = EM_COPIES_PAGEABLE}},
    {"cuda_pinned", "cuda", "cuda with X and Y copied from pinned host memory (staged once, untimed) and the "
     "rows' sums reduced on the device, as the torch-cuda forms copy", "cuda", SL_DEVICE,
     &(const em_kernels){.device = EM_GPU | EM_PINNED, .copies = EM_COPIES_PINNED}},
    {"cuda_factorized", "cuda", "factorized on the GPU: a warp per row, O(D); copies as cuda_pinned "
     "(the GPU counterpart of the framework forms, which factorise)", "cuda_pinned", SL_DEVICE,
     &(const em_kernels){.device = EM_GPU | EM_PINNED | EM_FACTORIZED, .own_flops = em_factorized_flops,
                         .own_work_note = "algorithmic change: O(D) per row; its own work, B (16 D + 2) "
                                          "flops, is recorded",
                         .copies = EM_COPIES_PINNED}},
    {"factorized", NULL, "algorithmic change: sum_ij (p_i q_j)^2 = (sum p_i^2)(sum q_j^2), O(D) per row",
     "simd", 0,
     &(const em_kernels){.run = em_factorized, .own_flops = em_factorized_flops,
                         .own_work_note = "algorithmic change: O(D) per row; its own work, B (16 D + 2) "
                                          "flops, is recorded"}},
    {"factorized_omp", "openmp", "factorized with rows split across OpenMP threads (memory-bound)", "factorized",
     SL_THREADED,
     &(const em_kernels){.run = em_factorized_omp, .own_flops = em_factorized_flops,
                         .own_work_note = "algorithmic change: O(D) per row; its own work, B (16 D + 2) "
                                          "flops, is recorded"}},
    /* Framework baselines (docs/baselines.md): baselines/entropy_mi.py, the forms of the row's name. */
    {"numpy", "python:numpy", "NumPy: row softmaxes, sums of squares by einsum or (p*p).sum (factorised pair sum)",
     NULL, SL_EXTERNAL, &em_framework_work},
    {"torch", "python:torch", "PyTorch: softmax, row sums of squares by bmm or (p*p).sum, or torch.compile of it "
     "(factorised pair sum)", NULL, SL_EXTERNAL, &em_framework_work},
    {"numba", "python:numba", "Numba: njit(parallel) loops over rows (factorised pair sum)", NULL, SL_EXTERNAL,
     &em_framework_work},
    {"jax", "python:jax", "JAX: the NumPy form under jax.jit", NULL, SL_EXTERNAL, &em_framework_work},
    /* GPU baselines: the framework's forms on its GPU (python:MODULE@DEVICE), beside cuda */
    {"torch-cuda", "python:torch@cuda", "PyTorch on the GPU: the torch forms on CUDA tensors", NULL,
     SL_EXTERNAL | SL_DEVICE,
     &(const em_kernels){.own_flops = em_factorized_flops, .own_work_note = EM_FRAMEWORK_WORK_NOTE,
                         .copies = "in: X, Y from pinned memory (2 B D floats, .to(non_blocking)); out: H, MI "
                                   "(.item())"}},
    {"jax-gpu", "python:jax@gpu", "JAX on the GPU: the jax form under jax.jit", NULL, SL_EXTERNAL | SL_DEVICE,
     &(const em_kernels){.own_flops = em_factorized_flops, .own_work_note = EM_FRAMEWORK_WORK_NOTE,
                         .copies = "in: X, Y from pageable memory (2 B D floats, jax.device_put); out: H, MI"}},
};

static const char *em_copies(const sl_variant *v) { return ((const em_kernels *)v->kernels)->copies; }

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
    .n_variants = sizeof em_variants / sizeof em_variants[0],
    .incomplete = em_incomplete,
    .copies = em_copies,
    .external_inputs = em_external_inputs,
    .external_outputs = em_external_outputs,
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
