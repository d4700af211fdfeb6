/*
 * kernels/kern_onednn.c: oneDNN primitives made once per shape and kept (kern_onednn.h says why this
 * file is compiled once and may hold data). A primitive is found by its key: the operation, its shape,
 * its options and the thread count, since oneDNN's OpenMP runtime sizes its blocking by the thread count
 * at creation. Its memory objects are made with no buffer; each call points them at the caller's arrays.
 * One caller at a time (the runner calls kernels from one thread).
 */
#include "kern_onednn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum { OP_MATMUL = 1, OP_MATMUL_BF16, OP_CONV_FWD, OP_CONV_BWD_W, OP_CONV_BWD_D, OP_POOL_FWD, OP_POOL_BWD };
enum { KEY_N = 14, ARGS_N = 4, CACHE_N = 64 };

typedef struct prim {
    int key[KEY_N];
    dnnl_primitive_t p;
    int nargs;
    int arg[ARGS_N];           /* DNNL_ARG_* */
    dnnl_memory_t mem[ARGS_N];
} prim;

static dnnl_engine_t engine;
static dnnl_stream_t stream;
static prim cache[CACHE_N];
static int cache_used, cache_next;

static int ready(void)
{
    if (!engine && dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success)
        return 0;
    if (!stream && dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) != dnnl_success)
        return 0;
    return 1;
}

/* oneDNN runs on the calling thread's OpenMP count: set it for one call and put it back. */
static int set_threads(int threads)
{
#ifdef _OPENMP
    int old = omp_get_max_threads();
    omp_set_num_threads(threads > 0 ? threads : 1);
    return old;
#else
    (void)threads;
    return 0;
#endif
}

static void restore_threads(int old)
{
#ifdef _OPENMP
    omp_set_num_threads(old);
#else
    (void)old;
#endif
}

static prim *find(const int key[KEY_N])
{
    for (int i = 0; i < cache_used; i++)
        if (memcmp(cache[i].key, key, sizeof cache[i].key) == 0)
            return &cache[i];
    return NULL;
}

static void drop(prim *e)
{
    for (int i = 0; i < e->nargs; i++)
        dnnl_memory_destroy(e->mem[i]);
    dnnl_primitive_destroy(e->p);
    memset(e, 0, sizeof *e);
}

/* A cache slot for key (the oldest is replaced when all are taken: correct, only slower). */
static prim *slot(const int key[KEY_N])
{
    prim *e;
    if (cache_used < CACHE_N) {
        e = &cache[cache_used++];
    } else {
        e = &cache[cache_next];
        cache_next = (cache_next + 1) % CACHE_N;
        drop(e);
    }
    memcpy(e->key, key, sizeof e->key);
    return e;
}

/* Makes e's primitive from pd (destroyed here) with its arguments' memory objects; 0 on success. */
static int make(prim *e, dnnl_primitive_desc_t pd, int nargs, const int *args, const dnnl_memory_desc_t *const *md)
{
    int ok = dnnl_primitive_create(&e->p, pd) == dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    for (int i = 0; ok && i < nargs; i++) {
        e->arg[i] = args[i];
        ok = dnnl_memory_create(&e->mem[i], md[i], engine, DNNL_MEMORY_NONE) == dnnl_success;
        e->nargs = i + 1;
    }
    if (!ok) {
        drop(e);
        return -1;
    }
    return 0;
}

static int run(prim *e, void *const *ptr)
{
    dnnl_exec_arg_t a[ARGS_N];
    for (int i = 0; i < e->nargs; i++) {
        if (dnnl_memory_set_data_handle(e->mem[i], ptr[i]) != dnnl_success)
            return -1;
        a[i].arg = e->arg[i];
        a[i].memory = e->mem[i];
    }
    if (dnnl_primitive_execute(e->p, stream, e->nargs, a) != dnnl_success)
        return -1;
    return dnnl_stream_wait(stream) == dnnl_success ? 0 : -1;
}

static void fill_nan(float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = NAN;
}

static void md_strided(dnnl_memory_desc_t *md, int rows, int cols, int ld, int trans, dnnl_data_type_t dt)
{
    dnnl_dims_t dims = {rows, cols};
    dnnl_dims_t strides = {trans ? 1 : ld, trans ? ld : 1};
    dnnl_memory_desc_init_by_strides(md, 2, dims, dt, strides);
}

static prim *matmul_prim(const int key[KEY_N], dnnl_data_type_t dt)
{
    int ta = key[1], tb = key[2], M = key[3], N = key[4], K = key[5], lda = key[6], ldb = key[7];
    int ldc = key[8], has_bias = key[9], relu = key[10], accumulate = key[12], c_dt = key[13];
    dnnl_memory_desc_t a_md, b_md, c_md, bias_md;
    md_strided(&a_md, M, K, lda, ta, dt);
    md_strided(&b_md, K, N, ldb, tb, dt);
    md_strided(&c_md, M, N, ldc, 0, (dnnl_data_type_t)c_dt);
    md_strided(&bias_md, 1, N, N, 0, dnnl_f32);
    dnnl_matmul_desc_t desc;
    if (dnnl_matmul_desc_init(&desc, &a_md, &b_md, has_bias ? &bias_md : NULL, &c_md) != dnnl_success)
        return NULL;
    dnnl_primitive_attr_t attr;
    dnnl_post_ops_t po;
    dnnl_primitive_attr_create(&attr);
    dnnl_post_ops_create(&po);
    if (accumulate) /* C += the product */
        dnnl_post_ops_append_sum(po, 1.0f);
    if (relu)
        dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    dnnl_primitive_attr_set_post_ops(attr, po);
    dnnl_primitive_desc_t pd;
    dnnl_status_t st = dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return NULL;
    prim *e = slot(key);
    int args[] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST, DNNL_ARG_BIAS};
    const dnnl_memory_desc_t *mds[] = {&a_md, &b_md, &c_md, &bias_md};
    return make(e, pd, has_bias ? 4 : 3, args, mds) == 0 ? e : NULL;
}

static void matmul(int op, dnnl_data_type_t dt, int ta, int tb, int M, int N, int K, const void *A, int lda,
                   const void *Bm, int ldb, const float *bias, void *C, dnnl_data_type_t c_dt, int ldc, int relu,
                   int accumulate, int threads)
{
    if (M <= 0 || N <= 0)
        return;
    int old = set_threads(threads);
    int key[KEY_N] = {op, ta, tb, M, N, K, lda, ldb, ldc, bias != NULL, relu, threads, accumulate, (int)c_dt};
    prim *e = ready() ? find(key) : NULL;
    if (!e && engine)
        e = matmul_prim(key, dt);
    void *ptr[] = {(void *)A, (void *)Bm, C, (void *)bias};
    if (!e || run(e, ptr) != 0) { /* NaN: 0xffff as bf16 too */
        for (int i = 0; i < M; i++) {
            if (c_dt == dnnl_f32)
                fill_nan((float *)C + (size_t)i * ldc, (size_t)N);
            else
                memset((uint16_t *)C + (size_t)i * ldc, 0xff, (size_t)N * 2);
        }
    }
    restore_threads(old);
}

void kern_onednn_matmul(int ta, int tb, int M, int N, int K, const float *A, int lda, const float *Bm,
                        int ldb, const float *bias, float *C, int ldc, int relu, int threads)
{
    matmul(OP_MATMUL, dnnl_f32, ta, tb, M, N, K, A, lda, Bm, ldb, bias, C, dnnl_f32, ldc, relu, 0, threads);
}

void kern_onednn_matmul_bf16(int ta, int tb, int M, int N, int K, const uint16_t *A, int lda, const uint16_t *Bm,
                             int ldb, const float *bias, void *C, int c_bf16, int ldc, int relu, int accumulate,
                             int threads)
{
    matmul(OP_MATMUL_BF16, dnnl_bf16, ta, tb, M, N, K, A, lda, Bm, ldb, bias, C, c_bf16 ? dnnl_bf16 : dnnl_f32,
           ldc, relu, accumulate, threads);
}

/* ---- convolutions: NCHW activations, OIHW weights ---------------------------------------------- */

typedef struct conv_mds {
    dnnl_memory_desc_t x, w, b, y;
} conv_mds;

static void conv_mds_init(conv_mds *m, int B, int cin, int h, int w, int cout, int k)
{
    dnnl_dims_t xd = {B, cin, h, w}, wd = {cout, cin, k, k}, bd = {cout}, yd = {B, cout, h - k + 1, w - k + 1};
    dnnl_memory_desc_init_by_tag(&m->x, 4, xd, dnnl_f32, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&m->w, 4, wd, dnnl_f32, dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&m->b, 1, bd, dnnl_f32, dnnl_a);
    dnnl_memory_desc_init_by_tag(&m->y, 4, yd, dnnl_f32, dnnl_nchw);
}

static const dnnl_dims_t stride1 = {1, 1}, pad0 = {0, 0};

/* The forward primitive descriptor (also the backward ones' hint); relu as a post-op. */
static dnnl_primitive_desc_t conv_fwd_pd(const conv_mds *m, int relu)
{
    dnnl_convolution_desc_t desc;
    if (dnnl_convolution_forward_desc_init(&desc, dnnl_forward_training, dnnl_convolution_direct, &m->x,
                                           &m->w, &m->b, &m->y, stride1, pad0, pad0) != dnnl_success)
        return NULL;
    dnnl_primitive_attr_t attr;
    dnnl_post_ops_t po;
    dnnl_primitive_attr_create(&attr);
    dnnl_post_ops_create(&po);
    if (relu)
        dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    dnnl_primitive_attr_set_post_ops(attr, po);
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_primitive_desc_create(&pd, &desc, attr, engine, NULL) != dnnl_success)
        pd = NULL;
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    return pd;
}

static prim *conv_prim(const int key[KEY_N])
{
    int op = key[0], B = key[1], cin = key[2], h = key[3], w = key[4], cout = key[5], k = key[6];
    conv_mds m;
    conv_mds_init(&m, B, cin, h, w, cout, k);
    dnnl_primitive_desc_t fwd = conv_fwd_pd(&m, op == OP_CONV_FWD ? key[7] : 0);
    if (!fwd)
        return NULL;
    if (op == OP_CONV_FWD) {
        int args[] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST};
        const dnnl_memory_desc_t *mds[] = {&m.x, &m.w, &m.b, &m.y};
        prim *e = slot(key);
        return make(e, fwd, 4, args, mds) == 0 ? e : NULL;
    }
    dnnl_convolution_desc_t desc;
    dnnl_status_t st = op == OP_CONV_BWD_W
        ? dnnl_convolution_backward_weights_desc_init(&desc, dnnl_convolution_direct, &m.x, &m.w, &m.b, &m.y,
                                                      stride1, pad0, pad0)
        : dnnl_convolution_backward_data_desc_init(&desc, dnnl_convolution_direct, &m.x, &m.w, &m.y, stride1,
                                                   pad0, pad0);
    dnnl_primitive_desc_t pd = NULL;
    if (st == dnnl_success && dnnl_primitive_desc_create(&pd, &desc, NULL, engine, fwd) != dnnl_success)
        pd = NULL;
    dnnl_primitive_desc_destroy(fwd);
    if (!pd)
        return NULL;
    prim *e = slot(key);
    if (op == OP_CONV_BWD_W) {
        int args[] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_BIAS};
        const dnnl_memory_desc_t *mds[] = {&m.x, &m.y, &m.w, &m.b};
        return make(e, pd, 4, args, mds) == 0 ? e : NULL;
    }
    int args[] = {DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    const dnnl_memory_desc_t *mds[] = {&m.w, &m.y, &m.x};
    return make(e, pd, 3, args, mds) == 0 ? e : NULL;
}

/* Runs the convolution op on ptr (in the order of conv_prim's arguments); out[0..n_out) are NaN when it
 * cannot run. */
static void conv(int op, int B, int cin, int h, int w, int cout, int k, int relu, void *const *ptr,
                 float *const *out, const size_t *n_out, int outs, int threads)
{
    if (B <= 0)
        return;
    int old = set_threads(threads);
    int key[KEY_N] = {op, B, cin, h, w, cout, k, relu, threads};
    prim *e = ready() ? find(key) : NULL;
    if (!e && engine)
        e = conv_prim(key);
    if (!e || run(e, ptr) != 0)
        for (int i = 0; i < outs; i++)
            fill_nan(out[i], n_out[i]);
    restore_threads(old);
}

void kern_onednn_conv_forward(int B, int cin, int h, int w, int cout, int k, const float *x,
                              const float *wt, const float *b, float *y, int relu, int threads)
{
    void *ptr[] = {(void *)x, (void *)wt, (void *)b, y};
    size_t ny = (size_t)B * cout * (h - k + 1) * (w - k + 1);
    conv(OP_CONV_FWD, B, cin, h, w, cout, k, relu, ptr, &y, &ny, 1, threads);
}

void kern_onednn_conv_backward_weights(int B, int cin, int h, int w, int cout, int k, const float *x,
                                       const float *dz, float *dw, float *db, int threads)
{
    void *ptr[] = {(void *)x, (void *)dz, dw, db};
    float *out[] = {dw, db};
    size_t n[] = {(size_t)cout * cin * k * k, (size_t)cout};
    conv(OP_CONV_BWD_W, B, cin, h, w, cout, k, 0, ptr, out, n, 2, threads);
}

void kern_onednn_conv_backward_data(int B, int cin, int h, int w, int cout, int k, const float *wt,
                                    const float *dz, float *dx, int threads)
{
    void *ptr[] = {(void *)wt, (void *)dz, dx};
    size_t n = (size_t)B * cin * h * w;
    conv(OP_CONV_BWD_D, B, cin, h, w, cout, k, 0, ptr, &dx, &n, 1, threads);
}

/* ---- 2x2 max pooling, stride 2: NCHW, the argmax as oneDNN's workspace ----------------------------- */

/* oneDNN's max pooling keeps, per output, the index of the winner in its window (kh kw + kw: 0-3,
 * row-major, the first on ties) as one byte in the output's layout: cnn_pool_forward's arg exactly, so
 * the study's argmax arrays are the primitive's workspace. A pooling whose workspace is anything else
 * is refused (its output NaN). */
static prim *pool_prim(const int key[KEY_N])
{
    int op = key[0], B = key[1], c = key[2], h = key[3], w = key[4];
    dnnl_dims_t xd = {B, c, h, w}, yd = {B, c, h / 2, w / 2}, st = {2, 2}, k = {2, 2};
    dnnl_memory_desc_t x, y, arg;
    dnnl_memory_desc_init_by_tag(&x, 4, xd, dnnl_f32, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&y, 4, yd, dnnl_f32, dnnl_nchw);
    dnnl_memory_desc_init_by_tag(&arg, 4, yd, dnnl_u8, dnnl_nchw);
    dnnl_pooling_desc_t desc;
    dnnl_primitive_desc_t fwd = NULL, pd = NULL;
    if (dnnl_pooling_forward_desc_init(&desc, dnnl_forward_training, dnnl_pooling_max, &x, &y, st, k, pad0,
                                       pad0) != dnnl_success ||
        dnnl_primitive_desc_create(&fwd, &desc, NULL, engine, NULL) != dnnl_success)
        return NULL;
    const dnnl_memory_desc_t *ws = dnnl_primitive_desc_query_md(fwd, dnnl_query_workspace_md, 0);
    if (!ws || !dnnl_memory_desc_equal(ws, &arg)) {
        dnnl_primitive_desc_destroy(fwd);
        return NULL;
    }
    if (op == OP_POOL_FWD) {
        int args[] = {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_WORKSPACE};
        const dnnl_memory_desc_t *mds[] = {&x, &y, &arg};
        prim *e = slot(key);
        return make(e, fwd, 3, args, mds) == 0 ? e : NULL;
    }
    if (dnnl_pooling_backward_desc_init(&desc, dnnl_pooling_max, &x, &y, st, k, pad0, pad0) != dnnl_success ||
        dnnl_primitive_desc_create(&pd, &desc, NULL, engine, fwd) != dnnl_success)
        pd = NULL;
    dnnl_primitive_desc_destroy(fwd);
    if (!pd)
        return NULL;
    int args[] = {DNNL_ARG_DIFF_DST, DNNL_ARG_WORKSPACE, DNNL_ARG_DIFF_SRC};
    const dnnl_memory_desc_t *mds[] = {&y, &arg, &x};
    prim *e = slot(key);
    return make(e, pd, 3, args, mds) == 0 ? e : NULL;
}

static void pool(int op, int B, int c, int h, int w, void *const *ptr, float *out, size_t n_out, int threads)
{
    if (B <= 0)
        return;
    int old = set_threads(threads);
    int key[KEY_N] = {op, B, c, h, w, threads};
    prim *e = ready() ? find(key) : NULL;
    if (!e && engine)
        e = pool_prim(key);
    if (!e || run(e, ptr) != 0)
        fill_nan(out, n_out);
    restore_threads(old);
}

void kern_onednn_pool_forward(int B, int c, int h, int w, const float *x, float *y, uint8_t *arg, int threads)
{
    void *ptr[] = {(void *)x, y, arg};
    pool(OP_POOL_FWD, B, c, h, w, ptr, y, (size_t)B * c * (h / 2) * (w / 2), threads);
}

void kern_onednn_pool_backward(int B, int c, int h, int w, const float *dy, const uint8_t *arg, float *dx,
                               int threads)
{
    void *ptr[] = {(void *)dy, (void *)arg, dx};
    pool(OP_POOL_BWD, B, c, h, w, ptr, dx, (size_t)B * c * h * w, threads);
}

/* ---- what runs ---------------------------------------------------------------------------------- */

void kern_onednn_version(char *out, int n)
{
    const dnnl_version_t *v = dnnl_version();
    snprintf(out, (size_t)n, "%d.%d.%d (commit %s)", v->major, v->minor, v->patch, v->hash);
}

/* The names oneDNN's verbose output gives each ISA (its "info,cpu,isa:" line). */
const char *kern_onednn_isa(void)
{
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "Intel SSE4.1";
    case dnnl_cpu_isa_avx: return "Intel AVX";
    case dnnl_cpu_isa_avx2: return "Intel AVX2";
    case dnnl_cpu_isa_avx2_vnni: return "Intel AVX2 with Intel DL Boost";
    case dnnl_cpu_isa_avx512_mic: return "Intel AVX-512 with AVX512CD, AVX512ER, and AVX512PF extensions";
    case dnnl_cpu_isa_avx512_mic_4ops:
        return "Intel AVX-512 with AVX512_4FMAPS and AVX512_4VNNIW extensions";
    case dnnl_cpu_isa_avx512_core: return "Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions";
    case dnnl_cpu_isa_avx512_core_vnni: return "Intel AVX-512 with Intel DL Boost";
    case dnnl_cpu_isa_avx512_core_bf16: return "Intel AVX-512 with Intel DL Boost and bfloat16 support";
    case dnnl_cpu_isa_avx512_core_amx:
        return "Intel AVX-512 with Intel DL Boost and bfloat16 support and Intel AMX with bfloat16 and 8-bit "
               "integer support";
    default: return "unknown";
    }
}
