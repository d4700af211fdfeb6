/*
 * kernels/cnn/cnn_cuda_setup.cu: creating and destroying a cnn_cuda context (cnn_cuda.h): the argument
 * checks, the device allocations and uploads, and the backend's own setup (cnn_cudnn.cu's descriptors and
 * cudnnFind). The design is described at the top of cnn_cuda.cu.
 */
#include <stdlib.h>
#include <string.h>

#include "cnn_cuda_impl.h"
#include "sl_config.h"

#define ALIGN_FLOATS 64 /* 256 bytes: each activation array's start (coalescing; cuDNN's preferred alignment) */

/* ---- API: create and destroy ------------------------------------------------------------------------ */

extern "C" void cnn_cuda_destroy(cnn_cuda *c)
{
    if (!c)
        return;
    cnn_abort_capture(c);
    if (c->s)
        cudaStreamSynchronize(c->s); /* nothing queued may still use what is freed below */
    for (int i = 0; i < c->n_graphs; i++)
        cudaGraphExecDestroy(c->graph_exec[i]);
    cnn_dnn_destroy(c->dnn);
    /* X is the start of the one activation block */
    void *dev[] = {c->tr_x, c->tr_y, c->te_x, c->te_y, c->y, c->P, c->G, c->V, c->X, c->arg1, c->arg2,
                   c->part, c->rowloss, c->acc, c->count, c->stage_d};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        if (dev[i])
            cudaFree(dev[i]);
    void *host[] = {c->h_stage, c->h_loss, c->h_count};
    for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
        if (host[i])
            cudaFreeHost(host[i]);
    for (int i = 0; i < 2; i++)
        if (c->staged[i])
            cudaEventDestroy(c->staged[i]);
    gpu_marks_destroy(c->marks);
    gpu_spans_destroy_all(c->span, CNN_SPANS);
    if (c->s)
        cudaStreamDestroy(c->s);
    free(c);
}

/* n floats from *cur, the next array starting ALIGN_FLOATS further on. */
static float *carve(float **cur, size_t n)
{
    float *p = *cur;
    *cur += (n + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
    return p;
}

/* The activations and deltas of max_batch rows: one allocation, zeroed (no stale NaN anywhere). */
static int alloc_activations(cnn_cuda *c)
{
    const cnn_dims *d = &c->d;
    const size_t mb = (size_t)c->max_batch;
    const size_t n[13] = {mb * d->conv1.cin * d->conv1.h * d->conv1.w,
                          mb * cnn_conv_out(&d->conv1), mb * cnn_pool_out(&d->pool1),
                          mb * cnn_conv_out(&d->conv2), mb * cnn_pool_out(&d->pool2),
                          mb * d->dense1.nout, mb * d->dense2.nout, mb * d->dense2.nout,
                          mb * d->dense1.nout, mb * cnn_pool_out(&d->pool2), mb * cnn_conv_out(&d->conv2),
                          mb * cnn_pool_out(&d->pool1), mb * cnn_conv_out(&d->conv1)};
    size_t total = 0;
    for (int i = 0; i < 13; i++)
        total += (n[i] + ALIGN_FLOATS - 1) / ALIGN_FLOATS * ALIGN_FLOATS;
    float *block = NULL;
    if (cnn_dalloc(c, (void **)&block, total * sizeof(float), "cudaMalloc activations"))
        return -1;
    float *cur = block; /* X first: destroy frees the block through it */
    float **dst[13] = {&c->X, &c->a1, &c->p1, &c->a2, &c->p2, &c->a3, &c->z4,
                       &c->d4, &c->da3, &c->dp2, &c->da2, &c->dp1, &c->da1};
    for (int i = 0; i < 13; i++)
        *dst[i] = carve(&cur, n[i]);
    CK(cudaMemset(block, 0, total * sizeof(float)), "memset activations");
    return 0;
}

static int alloc_all(cnn_cuda *c)
{
    const cnn_dims *d = &c->d;
    const size_t mb = (size_t)c->max_batch, ntr = (size_t)c->n_train, nte = (size_t)c->n_test;
    const size_t n0 = (size_t)d->conv1.cin * d->conv1.h * d->conv1.w, np = c->L.n * sizeof(float);
    if (cnn_dalloc(c, (void **)&c->tr_x, ntr * n0, "cudaMalloc train x") ||
        cnn_dalloc(c, (void **)&c->tr_y, ntr, "cudaMalloc train y") ||
        cnn_dalloc(c, (void **)&c->te_x, nte * n0, "cudaMalloc test x") ||
        cnn_dalloc(c, (void **)&c->te_y, nte, "cudaMalloc test y") ||
        cnn_dalloc(c, (void **)&c->y, mb, "cudaMalloc y") || cnn_dalloc(c, (void **)&c->P, np, "cudaMalloc P") ||
        cnn_dalloc(c, (void **)&c->G, np, "cudaMalloc G") || cnn_dalloc(c, (void **)&c->V, np, "cudaMalloc V") ||
        alloc_activations(c) ||
        cnn_dalloc(c, (void **)&c->rowloss, mb * sizeof(double), "cudaMalloc rowloss") ||
        cnn_dalloc(c, (void **)&c->acc, sizeof(double), "cudaMalloc loss") ||
        cnn_dalloc(c, (void **)&c->count, sizeof(unsigned long long), "cudaMalloc count") ||
        cnn_dalloc(c, (void **)&c->stage_d, (2 + mb) * sizeof(uint32_t), "cudaMalloc indices"))
        return -1;
    if (c->backend == CNN_CUDA_OWN &&
        (cnn_dalloc(c, (void **)&c->arg1, mb * cnn_pool_out(&d->pool1), "cudaMalloc arg1") ||
         cnn_dalloc(c, (void **)&c->arg2, mb * cnn_pool_out(&d->pool2), "cudaMalloc arg2") ||
         cnn_dalloc(c, (void **)&c->part, c->part_floats * sizeof(float), "cudaMalloc partial sums")))
        return -1;
    c->lrmu = (float *)c->stage_d; /* words 0 and 1; the indices from word 2 */
    c->idx = (int32_t *)(c->stage_d + 2);
    CK(cudaMallocHost((void **)&c->h_stage, 2 * (2 + mb) * sizeof(uint32_t)), "cudaMallocHost indices");
    CK(cudaMallocHost((void **)&c->h_loss, sizeof(double)), "cudaMallocHost loss");
    CK(cudaMallocHost((void **)&c->h_count, sizeof(unsigned long long)), "cudaMallocHost count");
    return 0;
}

static int setup(cnn_cuda *c, const uint8_t *train_x, const uint8_t *train_y, const uint8_t *test_x,
                 const uint8_t *test_y)
{
    const cnn_conv *c1 = &c->d.conv1;
    const size_t n0 = (size_t)c1->cin * c1->h * c1->w, ntr = (size_t)c->n_train, nte = (size_t)c->n_test;
    int dev = 0;
    CK(cudaGetDevice(&dev), "cudaGetDevice");
    CK(cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
    if (c->sms < 1)
        c->sms = 1;
    CK(cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking), "stream");
    for (int i = 0; i < 2; i++)
        CK(cudaEventCreateWithFlags(&c->staged[i], cudaEventDisableTiming), "event");
    int rc = 0; /* the spans' events for an epoch's steps are created now, not in the timed steps */
    long steps = (long)(ntr / (size_t)c->max_batch) + 2, reserve[CNN_SPANS] = {steps, steps, 4};
    if (!(c->marks = gpu_marks_create(CNN_PHASES, CNN_PHASE_EVERY, &rc)))
        return cnn_fail(c, "phase events", gpu_timing_error(rc));
    for (int i = 0; i < CNN_SPANS; i++)
        if (!(c->span[i] = gpu_spans_create(reserve[i], &rc)))
            return cnn_fail(c, "span events", gpu_timing_error(rc));
    if (alloc_all(c))
        return -1;
    if (ntr) {
        CK(cudaMemcpy(c->tr_x, train_x, ntr * n0, cudaMemcpyHostToDevice), "copy train x");
        CK(cudaMemcpy(c->tr_y, train_y, ntr, cudaMemcpyHostToDevice), "copy train y");
    }
    if (nte) {
        CK(cudaMemcpy(c->te_x, test_x, nte * n0, cudaMemcpyHostToDevice), "copy test x");
        CK(cudaMemcpy(c->te_y, test_y, nte, cudaMemcpyHostToDevice), "copy test y");
    }
    const size_t np = c->L.n * sizeof(float);
    CK(cudaMemset(c->P, 0, np), "memset P");
    CK(cudaMemset(c->G, 0, np), "memset G");
    CK(cudaMemset(c->V, 0, np), "memset V");
    CK(cudaMemset(c->acc, 0, sizeof(double)), "memset loss");
    CK(cudaDeviceSynchronize(), "upload");
    return cnn_backend_is_dnn(c->backend) ? cnn_dnn_create(c) : 0;
}

/* The argument checks create makes before touching the device; 0 or -1 with msg. */
static int check_args(const cnn_dims *d, int backend, int max_batch, const uint8_t *train_x,
                      const uint8_t *train_y, long n_train, const uint8_t *test_x, const uint8_t *test_y,
                      long n_test, char *msg, size_t msg_len)
{
    /* each layer's input is the previous one's output (the buffers are sized from these) */
    if (!d || d->conv1.cin < 1 || d->conv1.cout < 1 || d->conv2.cout < 1 || d->pool1.h < 2 || d->pool2.h < 2 ||
        d->pool1.w < 2 || d->pool2.w < 2 || d->pool1.c != d->conv1.cout || d->pool1.h != cnn_conv_ho(&d->conv1) ||
        d->pool1.w != cnn_conv_wo(&d->conv1) || d->conv2.cin != d->pool1.c || d->conv2.h != d->pool1.h / 2 ||
        d->conv2.w != d->pool1.w / 2 || d->pool2.c != d->conv2.cout || d->pool2.h != cnn_conv_ho(&d->conv2) ||
        d->pool2.w != cnn_conv_wo(&d->conv2) || d->dense1.nin != (int)cnn_pool_out(&d->pool2) ||
        d->dense1.nout < 1 || d->dense2.nin != d->dense1.nout || d->dense2.nout < 1 || d->dense2.nout > 256) {
        snprintf(msg, msg_len, "cnn cuda: bad dimensions (not cnn_dims_init's chain of layers)");
        return -1;
    }
    const char *bad = NULL;
    if (backend != CNN_CUDA_OWN && !cnn_backend_is_dnn(backend))
        bad = "backend: want CNN_CUDA_OWN (0), CNN_CUDA_CUDNN (1) or CNN_CUDA_CUDNN_HEURISTIC (2)";
    else if (max_batch < 1 || max_batch > 65535 * 16)
        bad = "max_batch: want 1 to 1048560 (the dense product's grid.y: 65535 tiles of 16 rows, cnn_cuda_own.cu)";
    else if (n_train < 0 || n_train > INT32_MAX || n_test < 0)
        bad = "row counts: want 0 to 2147483647 training rows (int32 indices) and >= 0 test rows";
    else if ((n_train > 0 && (!train_x || !train_y)) || (n_test > 0 && (!test_x || !test_y)))
        bad = "images or labels: NULL for a split with rows";
    if (bad) {
        snprintf(msg, msg_len, "cnn cuda: bad %s (got backend %d, max_batch %d, %ld training rows, %ld test rows)",
                 bad, backend, max_batch, n_train, n_test);
        return -1;
    }
    for (int t = 0; t < 2; t++) {
        const uint8_t *lab = t ? test_y : train_y;
        for (long i = 0, n = t ? n_test : n_train; i < n; i++)
            if (lab[i] >= d->dense2.nout) {
                snprintf(msg, msg_len, "cnn cuda: %s label %d at row %ld is not below %d", t ? "test" : "training",
                         lab[i], i, d->dense2.nout);
                return -1;
            }
    }
    if (backend == CNN_CUDA_OWN)
        return cnn_own_check(d, msg, msg_len);
#if !SL_HAVE_CUDNN || !SL_HAVE_CUBLAS
    snprintf(msg, msg_len, "cnn cuda: cudnn variant: built without %s", SL_HAVE_CUDNN ? "cuBLAS" : "cuDNN");
    return -1;
#else
    return 0;
#endif
}

extern "C" cnn_cuda *cnn_cuda_create(const cnn_dims *d, int backend, int graph, int max_batch,
                                     const uint8_t *train_x, const uint8_t *train_y, long n_train,
                                     const uint8_t *test_x, const uint8_t *test_y, long n_test, char *msg,
                                     size_t msg_len)
{
    char tmp[8];
    if (!msg || !msg_len)
        msg = tmp, msg_len = sizeof tmp;
    msg[0] = 0;
    if (check_args(d, backend, max_batch, train_x, train_y, n_train, test_x, test_y, n_test, msg, msg_len))
        return NULL;
    if (cnn_cuda_device_count() == 0) {
        snprintf(msg, msg_len, "cnn cuda: no CUDA device");
        return NULL;
    }
    cnn_cuda *c = (cnn_cuda *)calloc(1, sizeof *c);
    if (!c) {
        snprintf(msg, msg_len, "cnn cuda: out of host memory");
        return NULL;
    }
    c->d = *d;
    c->L = cnn_layout_of(d);
    c->backend = backend;
    c->graph = graph ? 1 : 0;
    c->max_batch = max_batch;
    c->n_train = n_train;
    c->n_test = n_test;
    c->last_ops = -1;
    c->part_floats = backend == CNN_CUDA_OWN ? cnn_own_part_floats(d) : 0;
    if (setup(c, train_x, train_y, test_x, test_y)) {
        snprintf(msg, msg_len, "%s", c->err);
        cnn_cuda_destroy(c);
        return NULL;
    }
    return c;
}
