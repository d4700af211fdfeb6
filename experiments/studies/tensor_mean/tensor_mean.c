/*
 * The tensor_mean study (seed 000, sections 4-5): the mean over N triplets
 * of the outer product tanh(x_n) (x) tanh(y_n) (x) tanh(z_n), D = 32, swept over N.
 *
 * Work per repetition (docs/study-tensor_mean.md): per triplet, D^2 products a_i b_j and D^3 multiply-
 * adds (2 flops) into A, then D^3 scalings by 1/N: N (2 D^3 + D^2) + D^3; tanh is not counted.
 * Bytes: X, Y, Z read once and A written once, (3 N D + D^3) 4. Every variant is timed against this
 * nominal count (naive's temporary, blas's Khatri-Rao product are its own overhead).
 */
#include <math.h>
#include <stdlib.h>

#include "seeded_normal.h"
#include "sl_config.h"
#include "speedlab/prof.h"
#include "study.h"
#include "tensor_mean/tensor_mean_kernels.h"

#define TM_D 32

static const long tm_sizes[] = {64, 256, 1024, 4096, 8192};
static const long tm_quick_sizes[] = {64, 256};

typedef struct tm_state {
    long N, D;
    float *X, *Y, *Z, *A;
    double *ref;
    float *ws;  /* the prepared variant's workspace */
    void *cuda; /* tm_cuda_ctx of the cuda variant */
    int threads; /* --threads */
} tm_state;

/* A device variant's path: it owns its device buffers between prepare and release. */
typedef struct tm_device {
    int (*prepare)(tm_state *s, sl_error *err);
    int (*run)(tm_state *s, sl_record *rec, sl_error *err);
    void (*release)(tm_state *s);
} tm_device;

/* What a variant row's `kernels` points to: a CPU variant's kernel and workspace size (the pair its
 * kernel file defines, tensor_mean_kernels.h), or an SL_DEVICE variant's path. */
typedef struct tm_kernels {
    tm_kernel_fn *run;
    tm_workspace_fn *workspace;
    const tm_device *device;
    const char *copies; /* GPU rows: what the timed region copies (sl_study.copies) */
} tm_kernels;

/* The row's functions for the CPU kernel K: K and K_workspace. */
#define TM_CPU(K) (&(const tm_kernels){.run = K, .workspace = K##_workspace})

extern const sl_study sl_study_tensor_mean;

static const sl_variant *tm_variant(int v)
{
    return &sl_study_tensor_mean.variants[v];
}

static const tm_kernels *tm_kernels_of(int v)
{
    return tm_variant(v)->kernels;
}

static double tm_flops(long N, const sl_opts *o)
{
    (void)o;
    const double D = TM_D;
    return (double)N * (2.0 * D * D * D + D * D) + D * D * D;
}

static double tm_bytes(long N, const sl_opts *o)
{
    (void)o;
    return (3.0 * (double)N * TM_D + (double)TM_D * TM_D * TM_D) * sizeof(float);
}

static double tm_footprint(long N, const sl_opts *o)
{
    (void)o;
    const double D3 = (double)TM_D * TM_D * TM_D;
    return (3.0 * N * TM_D + D3) * sizeof(float) + D3 * sizeof(double) +
           (double)tm_blas_workspace(N, TM_D) * sizeof(float); /* the largest */
}

static void tm_reference(const tm_state *s)
{
    const long N = s->N, D = s->D;
    double a[TM_D], b[TM_D], c[TM_D];
    for (long e = 0; e < D * D * D; e++)
        s->ref[e] = 0.0;
    for (long n = 0; n < N; n++) {
        for (long i = 0; i < D; i++) {
            a[i] = tanh(s->X[n * D + i]);
            b[i] = tanh(s->Y[n * D + i]);
            c[i] = tanh(s->Z[n * D + i]);
        }
        for (long i = 0; i < D; i++)
            for (long j = 0; j < D; j++)
                for (long k = 0; k < D; k++)
                    s->ref[(i * D + j) * D + k] += a[i] * b[j] * c[k];
    }
    for (long e = 0; e < D * D * D; e++)
        s->ref[e] /= (double)N;
}

static void tm_teardown(void *state)
{
    tm_state *s = state;
    if (!s)
        return;
    free(s->X);
    free(s->Y);
    free(s->Z);
    free(s->A);
    free(s->ref);
    free(s->ws);
    free(s);
}

static void *tm_setup(long N, const sl_opts *o, sl_error *err)
{
    tm_state *s = calloc(1, sizeof *s);
    if (!s) {
        sl_error_set(err, "%s:%d: tensor_mean: out of memory for the state", __FILE__, __LINE__);
        return NULL;
    }
    const size_t in = (size_t)(N * TM_D), d3 = (size_t)TM_D * TM_D * TM_D;
    s->N = N;
    s->D = TM_D;
    s->threads = o->threads;
    s->X = malloc(in * sizeof(float));
    s->Y = malloc(in * sizeof(float));
    s->Z = malloc(in * sizeof(float));
    s->A = malloc(d3 * sizeof(float));
    s->ref = malloc(d3 * sizeof(double));
    if (!s->X || !s->Y || !s->Z || !s->A || !s->ref) {
        sl_error_set(err, "%s:%d: tensor_mean: out of memory for inputs (N = %ld, D = %d)", __FILE__,
                     __LINE__, N, TM_D);
        tm_teardown(s);
        return NULL;
    }
    sn_rng rx = sn_seed(o->seed, N, 10), ry = sn_seed(o->seed, N, 11), rz = sn_seed(o->seed, N, 12);
    sn_fill(&rx, s->X, (long)in);
    sn_fill(&ry, s->Y, (long)in);
    sn_fill(&rz, s->Z, (long)in);
    tm_reference(s);
    return s;
}

/* ---- CUDA: the one place that knows whether it exists ------------------------------------------- */
#if SL_HAVE_CUDA
static int tm_prepare_cuda(tm_state *s, sl_error *err)
{
    s->cuda = tm_cuda_alloc(s->N, s->D);
    if (!s->cuda) {
        sl_error_set(err, "%s:%d: tensor_mean cuda: device allocation failed for N = %ld, D = %ld",
                     __FILE__, __LINE__, s->N, s->D);
        return -1;
    }
    return 0;
}

static void tm_release_cuda(tm_state *s)
{
    tm_cuda_free(s->cuda);
    s->cuda = NULL;
}

/* One repetition on the GPU: copy in, kernels, copy out; each phase a profiler region and device time. */
static int tm_run_cuda(tm_state *s, sl_record *rec, sl_error *err)
{
    int rc;
    prof_begin("h2d");
    prof_gpu_begin(NULL);
    rc = tm_cuda_copy_in(s->cuda, s->X, s->Y, s->Z);
    const double h2d = prof_gpu_end();
    prof_end("h2d");
    prof_begin("kernel");
    prof_gpu_begin(NULL);
    rc |= tm_cuda_compute(s->cuda);
    const double k = prof_gpu_end();
    prof_end("kernel");
    prof_begin("d2h");
    prof_gpu_begin(NULL);
    rc |= tm_cuda_copy_out(s->cuda, s->A);
    const double d2h = prof_gpu_end();
    prof_end("d2h");
    if (rc != 0) {
        sl_error_set(err, "%s:%d: tensor_mean cuda: a CUDA call failed (N = %ld)", __FILE__, __LINE__, s->N);
        return -1;
    }
    if (h2d >= 0.0 && k >= 0.0 && d2h >= 0.0)
        sl_record_phases(rec, h2d, k, d2h);
    return 0;
}
#else /* the row stays complete; the runner reports the variant unavailable and never calls these */
static int tm_prepare_cuda(tm_state *s, sl_error *err)
{
    (void)s;
    sl_error_set(err, "%s:%d: tensor_mean cuda: built without CUDA (configure with -Dcuda=enabled)",
                 __FILE__, __LINE__);
    return -1;
}
static void tm_release_cuda(tm_state *s) { (void)s; }
static int tm_run_cuda(tm_state *s, sl_record *rec, sl_error *err)
{
    (void)rec;
    return tm_prepare_cuda(s, err);
}
#endif
static const tm_device tm_cuda_path = {tm_prepare_cuda, tm_run_cuda, tm_release_cuda};

static int tm_prepare(void *state, int v, sl_error *err)
{
    tm_state *s = state;
    const tm_kernels *k = tm_kernels_of(v);
    if (k->device)
        return k->device->prepare(s, err);
    const size_t n = k->workspace(s->N, s->D);
    s->ws = malloc((n ? n : 1) * sizeof(float));
    if (!s->ws) {
        sl_error_set(err, "%s:%d: tensor_mean %s: out of memory for a %zu-float workspace", __FILE__,
                     __LINE__, tm_variant(v)->name, n);
        return -1;
    }
    return 0;
}

static void tm_release(void *state, int v)
{
    tm_state *s = state;
    const tm_kernels *k = tm_kernels_of(v);
    if (k->device)
        k->device->release(s);
    free(s->ws);
    s->ws = NULL;
}

static int tm_run(void *state, int v, sl_record *rec, sl_error *err)
{
    tm_state *s = state;
    const tm_kernels *k = tm_kernels_of(v);
    if (k->device)
        return k->device->run(s, rec, err);
    if (k->run(s->X, s->Y, s->Z, s->N, s->D, s->A, s->ws, sl_variant_threads(tm_variant(v), s->threads))) {
        sl_error_set(err, "%s:%d: tensor_mean %s: kernel rejected N = %ld, D = %ld (or no workspace)",
                     __FILE__, __LINE__, tm_variant(v)->name, s->N, s->D);
        return -1;
    }
    return 0;
}

/* Normwise relative error ||A - ref||_F / ||ref||_F: elementwise would divide by entries near zero. */
static int tm_check(void *state, int v, double *rel_err, sl_error *err)
{
    tm_state *s = state;
    (void)v;
    double d = 0.0, r = 0.0;
    for (long e = 0; e < s->D * s->D * s->D; e++) {
        const double diff = s->A[e] - s->ref[e];
        d += diff * diff;
        r += s->ref[e] * s->ref[e];
    }
    if (r == 0.0) {
        sl_error_set(err, "%s:%d: tensor_mean: reference is zero, relative error undefined", __FILE__, __LINE__);
        return -1;
    }
    *rel_err = isnan(d) ? INFINITY : sqrt(d / r);
    return 0;
}

/* The framework baselines' inputs (baselines/tensor_mean.py reads them) and output A (docs/baselines.md). */
static int tm_external_inputs(void *state, sl_inputs *in, sl_error *err)
{
    tm_state *s = state;
    const long shape[2] = {s->N, s->D};
    return sl_input_f32(in, "X", s->X, 2, shape, err) || sl_input_f32(in, "Y", s->Y, 2, shape, err) ||
           sl_input_f32(in, "Z", s->Z, 2, shape, err) ? -1 : 0;
}

static int tm_external_outputs(void *state, int v, const sl_outputs *out, sl_error *err)
{
    tm_state *s = state;
    const long n = s->D * s->D * s->D;
    double *a = malloc((size_t)n * sizeof *a);
    (void)v;
    if (!a) {
        sl_error_set(err, "%s:%d: tensor_mean: out of memory for the baseline's A", __FILE__, __LINE__);
        return -1;
    }
    int rc = sl_output_array(out, "A", a, n, err);
    for (long e = 0; rc == 0 && e < n; e++) /* into the float A that tm_check reads */
        s->A[e] = (float)a[e];
    free(a);
    return rc;
}

/* What a row lacks: a CPU variant its kernel or workspace size, a device variant its path. */
static const char *tm_incomplete(const sl_variant *v)
{
    const tm_kernels *k = v->kernels;
    if (v->traits & SL_EXTERNAL) /* run by baselines/tensor_mean.py: no functions of ours */
        return NULL;
    if (v->traits & SL_DEVICE)
        return k->device && k->device->prepare && k->device->run && k->device->release
                   ? NULL : "an SL_DEVICE row needs .device with prepare, run and release";
    if (k->device)
        return "a .device path on a row that is not SL_DEVICE";
    return k->run && k->workspace ? NULL : "a CPU row needs .run and .workspace (TM_CPU(kernel))";
}

/* One row per variant: name, requirement, description, the variant it builds on, traits, functions. */
static const sl_variant tm_variants[] = {
    {"naive", NULL, "per triplet a D^3 outer-product temporary, then added (the einsum baseline)", NULL, 0,
     TM_CPU(tm_naive)},
    {"loop", NULL, "accumulate a_i b_j c_k straight into A, no temporary", "naive", 0, TM_CPU(tm_loop)},
    {"simd", NULL, "register-blocked rank-1 updates, A in L2, input chunks in L1, vector tanh", "loop", 0,
     TM_CPU(tm_simd)},
    {"omp", "openmp", "simd with the rows i of A split across OpenMP threads", "simd", SL_THREADED,
     TM_CPU(tm_omp)},
    {"blas", "blas", "Khatri-Rao product (timed) then one cblas_sgemm", "loop", SL_THREADED, TM_CPU(tm_blas)},
    {"cuda", "cuda", "one thread per (i,j,k) element (as written up); time includes copies", "omp", SL_DEVICE,
     &(const tm_kernels){.device = &tm_cuda_path, .copies = "in: X, Y, Z from pageable memory (3 N D floats); "
                                                            "out: A (D^3 floats) into pageable memory"}},
    /* Framework baselines (docs/baselines.md): baselines/tensor_mean.py, the forms of the row's name. */
    {"numpy", "python:numpy", "NumPy: the fastest of einsum, einsum(optimize=True) and the Khatri-Rao sgemm",
     NULL, SL_EXTERNAL, &(const tm_kernels){0}},
    {"torch", "python:torch", "PyTorch: the fastest of torch.einsum, the Khatri-Rao matmul and its torch.compile",
     NULL, SL_EXTERNAL, &(const tm_kernels){0}},
    {"numba", "python:numba", "Numba: njit(parallel) loop over i accumulating the outer products", NULL,
     SL_EXTERNAL, &(const tm_kernels){0}},
    {"jax", "python:jax", "JAX: the faster of jnp.einsum and the Khatri-Rao matmul, under jax.jit", NULL,
     SL_EXTERNAL, &(const tm_kernels){0}},
    /* GPU baselines: the framework's forms on its GPU (python:MODULE@DEVICE), beside cuda */
    {"torch-cuda", "python:torch@cuda", "PyTorch on the GPU: the torch forms on CUDA tensors", NULL,
     SL_EXTERNAL | SL_DEVICE,
     &(const tm_kernels){.copies = "in: X, Y, Z from pinned memory (3 N D floats, .to(non_blocking)); out: A "
                                   "(D^3 floats, .cpu()) into pageable memory"}},
    {"jax-gpu", "python:jax@gpu", "JAX on the GPU: the jax forms under jax.jit", NULL, SL_EXTERNAL | SL_DEVICE,
     &(const tm_kernels){.copies = "in: X, Y, Z from pageable memory (3 N D floats, jax.device_put); out: A "
                                   "(D^3 floats, jax.device_get)"}},
};

static const char *tm_copies(const sl_variant *v) { return ((const tm_kernels *)v->kernels)->copies; }

const sl_study sl_study_tensor_mean = {
    .name = "tensor_mean",
    .title = "mean of triple outer products of tanh features (D = 32)",
    .source = "seed 000, sections 4-5",
    .kind = SL_KERNEL,
    .size_name = "N",
    .sizes = tm_sizes,
    .n_sizes = sizeof tm_sizes / sizeof tm_sizes[0],
    .quick_sizes = tm_quick_sizes,
    .n_quick_sizes = sizeof tm_quick_sizes / sizeof tm_quick_sizes[0],
    .baseline = "naive",
    .tolerance = 1e-3,
    .variants = tm_variants,
    .n_variants = sizeof tm_variants / sizeof tm_variants[0],
    .incomplete = tm_incomplete,
    .copies = tm_copies,
    .external_inputs = tm_external_inputs,
    .external_outputs = tm_external_outputs,
    .flops = tm_flops,
    .bytes = tm_bytes,
    .footprint = tm_footprint,
    .setup = tm_setup,
    .prepare = tm_prepare,
    .run = tm_run,
    .check = tm_check,
    .release = tm_release,
    .teardown = tm_teardown,
};
