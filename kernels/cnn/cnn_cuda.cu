/*
 * kernels/cnn/cnn_cuda.cu: the cnn network of cnn_kernels.h on the GPU, both device variants of
 * cnn_cuda.h: the step's public calls, what both backends share, and the CUDA graph of a step. The rest
 * is elsewhere: cnn_cuda_setup.cu (create, destroy), cnn_cuda_own.cu (cuda: own layer kernels) and
 * cnn_cudnn.cu (cudnn: cuDNN 9 and cuBLAS); cnn_cuda_impl.h is what the four files share.
 *
 * Design (and why):
 *   - One context, one non-blocking stream. The training and test images stay bytes on the device
 *     (uploaded once by create; a step needs B rows, not 188 MB of floats); P, G and the momentum V use
 *     cnn_kernels.h's single-array layout, so set/get_params are one copy and the update is one kernel
 *     over L.n floats. The activations and deltas (cnn_ws's names) are carved out of one allocation
 *     sized max_batch, zeroed once, each 256-byte aligned (coalescing; cuDNN's preferred alignment).
 *   - data, without a graph: the B int32 indices go through a pinned staging slot (pageable memory
 *     would make the copy synchronous) and cudaMemcpyAsync; two slots, each guarded by an event, so
 *     the host never overwrites indices a queued copy has not read yet. A gather kernel reads the rows
 *     and labels and scales them by an IEEE multiplication with the float 1/255 (__fmul_rn, so no
 *     fast-math contraction changes it), as the CPU gather does: every variant sees the same floats.
 *   - loss: one warp per row (lanes over the classes): max-shifted softmax, d4 = (p - onehot)/B, and
 *     the row's -log max(p_y, 1e-30) in double; a one-block kernel adds the batch mean to a device
 *     double accumulator in a fixed order (deterministic, no double atomics). No host sync in a step.
 *   - update: V = mu V + G, P -= lr V in one elementwise kernel (cnn_sgd_momentum's maths).
 *   - graph = 1: the first step of each batch size records forward, loss, backward and update (the
 *     gather included: it reads the device index buffer) by stream capture; later steps of that size
 *     only launch the executable graph. Kernel arguments are frozen in a graph, so the update reads lr
 *     and mu from device memory: the host writes them into the same staging slot, right before the
 *     indices, and one copy brings [lr, mu, idx...] up before the graph launch. A graph step is
 *     therefore 2 enqueued operations (that copy and the launch) whatever the batch size; data only
 *     stages the indices on the host. An epoch's partial last batch is its own graph (its kernels'
 *     grids differ); the table holds CNN_MAX_GRAPHS sizes, the oldest replaced when full. A failure
 *     while capturing ends the capture, so the stream is usable again, and says so in the message.
 *   - counting: every kernel launch, copy, memset and library call a step enqueues counts as one
 *     operation (a cuDNN or cuBLAS call may launch more than one kernel: a lower bound for cudnn);
 *     launches_per_step is the count of the last completed step. Events are not counted, nor cudnn's
 *     pass outside the capture (begin_capture), so a capturing step counts 2 like a replay.
 *   - device time (kernels/gpu/gpu_timing.h): without a graph, CUDA events before data and after each
 *     phase of every CNN_PHASE_EVERY-th step; phase_poll reads a sample once it has ended (no wait),
 *     phase_ms the last one (NAN in graph mode: a graph runs as one unit). Every step's copy and kernels,
 *     and the read-backs, are event spans (span_take), read after the epoch's sync.
 *   - errors: every CUDA return is checked (kernel launches by cudaGetLastError); a failing call
 *     returns -1 with "cnn cuda: <what>: <reason>" in cnn_cuda_error().
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cnn_cuda_impl.h"
#include "sl_config.h"
#include "gpu/gpu_batch.cuh"

#define MAX_GRID 4096    /* cap for grid-stride elementwise kernels */

/* ---- kernels both backends use (gather, loss, column sums, count: kernels/gpu/gpu_batch.cuh) -- */

/* V = mu V + G; P -= lr V. lr and mu from lrmu (device) when it is not NULL: a graph's frozen arguments
 * cannot carry a rate that changes between replays. */
__global__ void k_cnn_momentum(float *__restrict__ P, float *__restrict__ V, const float *__restrict__ G, size_t n,
                               float lr, float mu, const float *__restrict__ lrmu)
{
    if (lrmu) {
        lr = lrmu[0];
        mu = lrmu[1];
    }
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float v = mu * V[i] + G[i];
        V[i] = v;
        P[i] -= lr * v;
    }
}

/* ---- shared host helpers -------------------------------------------------------------------------- */

int cnn_fail(cnn_cuda *c, const char *what, const char *why)
{
    snprintf(c->err, sizeof c->err, "cnn cuda: %s: %s", what, why);
    return -1;
}

void cnn_count_op(cnn_cuda *c)
{
    if (!c->capturing)
        c->step_ops++;
}

unsigned cnn_grid(const cnn_cuda *c, size_t n, unsigned threads)
{
    (void)c;
    size_t g = (n + threads - 1) / threads;
    return (unsigned)(g < 1 ? 1 : g > MAX_GRID ? MAX_GRID : g);
}

int cnn_dalloc(cnn_cuda *c, void **p, size_t n, const char *what)
{
    if (n < 16)
        n = 16; /* never a zero-byte allocation (empty test set) */
    CK(cudaMalloc(p, n), what);
    c->bytes += n;
    return 0;
}

int cnn_colsum(cnn_cuda *c, const float *D, int B, int N, float *db)
{
    k_gpu_colsum<<<(unsigned)((N + 31) / 32), dim3(32, 8), 0, c->s>>>(D, B, N, db);
    LAUNCHED("bias gradient");
    return 0;
}

static int check_B(cnn_cuda *c, int B, const char *what)
{
    if (B < 1 || B > c->max_batch) {
        char why[96];
        snprintf(why, sizeof why, "batch %d out of range 1-%d", B, c->max_batch);
        return cnn_fail(c, what, why);
    }
    return 0;
}

static int layers_forward(cnn_cuda *c, int B)
{
    return cnn_backend_is_dnn(c->backend) ? cnn_dnn_forward(c, B) : cnn_own_forward(c, B);
}

static int layers_backward(cnn_cuda *c, int B)
{
    return cnn_backend_is_dnn(c->backend) ? cnn_dnn_backward(c, B) : cnn_own_backward(c, B);
}

/* X, y <- rows of (src_x, src_y): by the device indices c->idx, or contiguous from row0 (use_idx 0). */
static int gather(cnn_cuda *c, const uint8_t *src_x, const uint8_t *src_y, int use_idx, long row0, int B)
{
    const cnn_conv *c1 = &c->d.conv1;
    unsigned g = (unsigned)(B < MAX_GRID ? B : MAX_GRID);
    k_gpu_gather<<<g, 256, 0, c->s>>>(src_x, src_y, use_idx ? c->idx : NULL, row0, B, c1->cin * c1->h * c1->w,
                                      c->X, c->y);
    LAUNCHED("gather");
    return 0;
}

static int loss_kernels(cnn_cuda *c, int B)
{
    unsigned g = (unsigned)((B + GPU_ROWS_PER_BLOCK - 1) / GPU_ROWS_PER_BLOCK);
    k_gpu_softmax_ce<<<g, 32 * GPU_ROWS_PER_BLOCK, 0, c->s>>>(c->z4, c->y, B, c->d.dense2.nout, c->d4, c->rowloss);
    LAUNCHED("softmax");
    k_gpu_loss_sum<<<1, 256, 0, c->s>>>(c->rowloss, B, c->acc);
    LAUNCHED("loss sum");
    return 0;
}

/* lrmu: NULL = take lr and mu as arguments (no graph), else read them there (graph). */
static int momentum(cnn_cuda *c, float lr, float mu, const float *lrmu)
{
    k_cnn_momentum<<<cnn_grid(c, c->L.n, 256), 256, 0, c->s>>>(c->P, c->V, c->G, c->L.n, lr, mu, lrmu);
    LAUNCHED("momentum update");
    return 0;
}

/* Boundary i of a sampled step's phases (0 before data, i after phase i); none in graph mode. */
static int mark(cnn_cuda *c, int i)
{
    if (c->graph)
        return 0;
    TIMED(gpu_marks_mark(c->marks, i, c->s), "phase event");
    return 0;
}

/* The begin or end of a span of kind `which` (CNN_SPAN_*) on the stream. */
static int span(cnn_cuda *c, int which, int end)
{
    gpu_spans *s = c->span[which];
    TIMED(end ? gpu_spans_end(s, c->s) : gpu_spans_begin(s, c->s), "span event");
    return 0;
}

static uint32_t *stage_slot(cnn_cuda *c) { return c->h_stage + (size_t)c->slot * (2 + (size_t)c->max_batch); }

/* ---- graph ------------------------------------------------------------------------------------------ */

static cudaGraphExec_t find_graph(const cnn_cuda *c, int B)
{
    for (int i = 0; i < c->n_graphs; i++)
        if (c->graph_B[i] == B)
            return c->graph_exec[i];
    return NULL;
}

/* (cnn_cuda_impl.h) */
void cnn_abort_capture(cnn_cuda *c)
{
    if (!c->capturing)
        return;
    cudaGraph_t g = NULL;
    (void)cudaStreamEndCapture(c->s, &g);
    if (g)
        cudaGraphDestroy(g);
    (void)cudaGetLastError(); /* the capture's invalidation is reported by err already */
    c->capturing = 0;
    size_t n = strlen(c->err);
    snprintf(c->err + n, sizeof c->err - n, " (while capturing the step as a CUDA graph; graph=0 runs without)");
}

/* Starts recording batch size B's step: the gather first (it reads the device indices the step's copy
 * brings). cudnn first runs the layers once outside the capture: cuDNN builds and caches its execution
 * plans for a shape on first use, host work that must not happen inside a capture. That pass writes
 * only activations and G, which the graph then recomputes. */
static int begin_capture(cnn_cuda *c, int B)
{
    if (cnn_backend_is_dnn(c->backend)) {
        int ops = c->step_ops; /* a one-time warm-up, not the step's: launches_per_step leaves it out */
        if (layers_forward(c, B) || layers_backward(c, B))
            return -1;
        c->step_ops = ops;
    }
    CK(cudaStreamBeginCapture(c->s, cudaStreamCaptureModeThreadLocal), "begin graph capture");
    c->capturing = 1;
    return gather(c, c->tr_x, c->tr_y, 1, 0, B);
}

/* Ends the recording and keeps the executable graph as batch size B's (the oldest out when full). */
static int end_capture(cnn_cuda *c, int B)
{
    cudaGraph_t g = NULL;
    cudaError_t e = cudaStreamEndCapture(c->s, &g);
    c->capturing = 0;
    if (e != cudaSuccess) {
        if (g)
            cudaGraphDestroy(g);
        return cnn_fail(c, "end graph capture", cudaGetErrorString(e));
    }
    cudaGraphExec_t x = NULL;
    e = cudaGraphInstantiate(&x, g, 0);
    cudaGraphDestroy(g);
    if (e != cudaSuccess)
        return cnn_fail(c, "instantiate graph", cudaGetErrorString(e));
    if (c->n_graphs == CNN_MAX_GRAPHS) {
        cudaGraphExecDestroy(c->graph_exec[0]);
        memmove(c->graph_exec, c->graph_exec + 1, (CNN_MAX_GRAPHS - 1) * sizeof c->graph_exec[0]);
        memmove(c->graph_B, c->graph_B + 1, (CNN_MAX_GRAPHS - 1) * sizeof c->graph_B[0]);
        c->n_graphs--;
    }
    c->graph_exec[c->n_graphs] = x;
    c->graph_B[c->n_graphs++] = B;
    c->launch = x;
    return 0;
}

/* The graph step's end: the momentum kernel closes a capture; then [lr, mu, idx] up and the launch. */
static int update_graph(cnn_cuda *c, int B, float lr, float mu)
{
    if (c->capturing && (momentum(c, 0.0f, 0.0f, c->lrmu) || end_capture(c, B)))
        return -1;
    if (!c->launch)
        return cnn_fail(c, "update", "no forward in this step");
    uint32_t *stage = stage_slot(c);
    memcpy(&stage[0], &lr, sizeof lr);
    memcpy(&stage[1], &mu, sizeof mu);
    if (span(c, CNN_SPAN_H2D, 0))
        return -1;
    CK(cudaMemcpyAsync(c->stage_d, stage, (2 + (size_t)B) * sizeof(uint32_t), cudaMemcpyHostToDevice, c->s),
       "update: copy rate and indices");
    cnn_count_op(c);
    CK(cudaEventRecord(c->staged[c->slot], c->s), "update: event");
    if (span(c, CNN_SPAN_H2D, 1) || span(c, CNN_SPAN_KERNEL, 0))
        return -1;
    CK(cudaGraphLaunch(c->launch, c->s), "graph launch");
    cnn_count_op(c);
    return span(c, CNN_SPAN_KERNEL, 1);
}

/* ---- API: the step ---------------------------------------------------------------------------------- */

/* The checks every phase after data makes: B as data gave it. After a failed call of the same step
 * the message stays that call's (the study calls all five phases, then reads the error once). */
static int in_step(cnn_cuda *c, int B, const char *what)
{
    if (c->step_failed)
        return -1;
    if (check_B(c, B, what))
        return -1;
    if (B != c->step_B) {
        char why[96];
        snprintf(why, sizeof why, "batch %d, but the step's data call gave %d rows (0: none)", B, c->step_B);
        return cnn_fail(c, what, why);
    }
    return 0;
}

/* A phase's result: a failure abandons the step, and no capture may stay open. */
static int phase_end(cnn_cuda *c, int rc)
{
    if (!rc)
        return 0;
    cnn_abort_capture(c);
    c->step_B = 0;
    c->step_failed = 1;
    c->launch = NULL;
    return -1;
}

/* Calls that wait or copy synchronously: never while a step is being captured. */
static int outside_capture(cnn_cuda *c, const char *what)
{
    if (!c->capturing)
        return 0;
    return phase_end(c, cnn_fail(c, what, "inside a step being captured (between forward and update)"));
}

/* Without a graph: the staged indices to the device, the slot's event after the copy. */
static int upload_indices(cnn_cuda *c, int B)
{
    if (span(c, CNN_SPAN_H2D, 0))
        return -1;
    CK(cudaMemcpyAsync(c->idx, stage_slot(c) + 2, (size_t)B * sizeof(int32_t), cudaMemcpyHostToDevice, c->s),
       "data: copy indices");
    cnn_count_op(c);
    CK(cudaEventRecord(c->staged[c->slot], c->s), "data: event");
    return span(c, CNN_SPAN_H2D, 1);
}

extern "C" int cnn_cuda_data(cnn_cuda *c, const int32_t *idx, int B)
{
    if (!c)
        return -1;
    if (c->capturing)
        return phase_end(c, cnn_fail(c, "data", "the previous step was not finished (no update)"));
    c->step_B = 0;
    c->step_failed = 1; /* until the step is staged */
    if (check_B(c, B, "data"))
        return -1;
    if (!idx)
        return cnn_fail(c, "data", "no indices");
    for (int b = 0; b < B; b++)
        if (idx[b] < 0 || idx[b] >= c->n_train) {
            char why[96];
            snprintf(why, sizeof why, "index %ld at %d outside the %ld training rows", (long)idx[b], b, c->n_train);
            return cnn_fail(c, "data", why);
        }
    /* the slot's previous copy must have read it before the host writes it again */
    c->slot ^= 1;
    uint32_t *stage = stage_slot(c);
    CK(cudaEventSynchronize(c->staged[c->slot]), "data: staging wait");
    memcpy(stage + 2, idx, (size_t)B * sizeof(int32_t));
    c->step_B = B;
    c->step_failed = 0;
    c->step_ops = 0;
    c->launch = NULL;
    if (c->graph)
        return 0; /* the indices go up with lr and mu, in update */
    return phase_end(c, mark(c, 0) || upload_indices(c, B) || span(c, CNN_SPAN_KERNEL, 0) ||
                            gather(c, c->tr_x, c->tr_y, 1, 0, B) || mark(c, 1));
}

extern "C" int cnn_cuda_forward(cnn_cuda *c, int B)
{
    if (!c)
        return -1;
    if (in_step(c, B, "forward"))
        return phase_end(c, -1);
    if (!c->graph)
        return phase_end(c, layers_forward(c, B) || mark(c, 2));
    c->launch = find_graph(c, B);
    if (c->launch)
        return 0; /* replay: update launches it */
    return phase_end(c, begin_capture(c, B) || layers_forward(c, B));
}

extern "C" int cnn_cuda_loss(cnn_cuda *c, int B)
{
    if (!c)
        return -1;
    if (in_step(c, B, "loss"))
        return phase_end(c, -1);
    if (c->graph && !c->capturing)
        return 0;
    return phase_end(c, loss_kernels(c, B) || mark(c, 3));
}

extern "C" int cnn_cuda_backward(cnn_cuda *c, int B)
{
    if (!c)
        return -1;
    if (in_step(c, B, "backward"))
        return phase_end(c, -1);
    if (c->graph && !c->capturing)
        return 0;
    return phase_end(c, layers_backward(c, B) || mark(c, 4));
}

extern "C" int cnn_cuda_update(cnn_cuda *c, int B, float lr, float mu)
{
    if (!c)
        return -1;
    if (in_step(c, B, "update"))
        return phase_end(c, -1);
    int rc = c->graph ? update_graph(c, B, lr, mu)
                      : (momentum(c, lr, mu, NULL) || mark(c, 5) || span(c, CNN_SPAN_KERNEL, 1));
    if (phase_end(c, rc))
        return -1;
    c->last_ops = c->step_ops;
    c->step_B = 0; /* step_failed stays 0: a phase call now says "no data call" */
    c->launch = NULL;
    return 0;
}

extern "C" int cnn_cuda_sync(cnn_cuda *c)
{
    if (!c)
        return -1;
    if (outside_capture(c, "sync"))
        return -1;
    CK(cudaStreamSynchronize(c->s), "sync");
    return 0;
}

extern "C" int cnn_cuda_take_loss(cnn_cuda *c, double *loss_sum)
{
    if (!c || !loss_sum)
        return -1;
    if (cnn_cuda_sync(c))
        return -1;
    if (span(c, CNN_SPAN_D2H, 0))
        return -1;
    CK(cudaMemcpyAsync(c->h_loss, c->acc, sizeof(double), cudaMemcpyDeviceToHost, c->s), "take loss");
    if (span(c, CNN_SPAN_D2H, 1))
        return -1;
    CK(cudaMemsetAsync(c->acc, 0, sizeof(double), c->s), "take loss: zero");
    CK(cudaStreamSynchronize(c->s), "take loss");
    *loss_sum = *c->h_loss;
    return 0;
}

/* ---- API: evaluation, parameters, reports ---------------------------------------------------------- */

/* Reuses the step's activation arrays: call it between steps, never between a step's data and update. */
extern "C" int cnn_cuda_evaluate(cnn_cuda *c, long *correct)
{
    if (!c || !correct)
        return -1;
    if (outside_capture(c, "evaluate"))
        return -1;
    if (c->step_B)
        return cnn_fail(c, "evaluate", "inside a step (between data and update)");
    CK(cudaMemsetAsync(c->count, 0, sizeof(unsigned long long), c->s), "evaluate: zero");
    for (long r = 0; r < c->n_test; r += c->max_batch) {
        int B = (int)(c->n_test - r < c->max_batch ? c->n_test - r : c->max_batch);
        if (gather(c, c->te_x, c->te_y, 0, r, B) || layers_forward(c, B))
            return -1;
        k_gpu_count<<<(unsigned)((B + 255) / 256), 256, 0, c->s>>>(c->z4, c->y, B, c->d.dense2.nout, c->count);
        LAUNCHED("count");
    }
    if (span(c, CNN_SPAN_D2H, 0))
        return -1;
    CK(cudaMemcpyAsync(c->h_count, c->count, sizeof(unsigned long long), cudaMemcpyDeviceToHost, c->s),
       "evaluate: copy count");
    if (span(c, CNN_SPAN_D2H, 1))
        return -1;
    CK(cudaStreamSynchronize(c->s), "evaluate");
    *correct = (long)*c->h_count;
    return 0;
}

extern "C" int cnn_cuda_set_params(cnn_cuda *c, const float *P)
{
    if (!c || !P || outside_capture(c, "set params"))
        return -1;
    CK(cudaMemcpyAsync(c->P, P, c->L.n * sizeof(float), cudaMemcpyHostToDevice, c->s), "copy params in");
    CK(cudaMemsetAsync(c->V, 0, c->L.n * sizeof(float), c->s), "zero momentum");
    CK(cudaStreamSynchronize(c->s), "copy params in");
    return 0;
}

extern "C" int cnn_cuda_get_params(cnn_cuda *c, float *P)
{
    if (!c || !P || outside_capture(c, "get params"))
        return -1;
    CK(cudaMemcpyAsync(P, c->P, c->L.n * sizeof(float), cudaMemcpyDeviceToHost, c->s), "copy params out");
    CK(cudaStreamSynchronize(c->s), "copy params out");
    return 0;
}

extern "C" const char *cnn_cuda_error(const cnn_cuda *c) { return c ? c->err : "cnn cuda: no context"; }

extern "C" size_t cnn_cuda_bytes(const cnn_cuda *c) { return c ? c->bytes : 0; }

extern "C" double cnn_cuda_launches_per_step(const cnn_cuda *c)
{
    return c && c->last_ops >= 0 ? (double)c->last_ops : NAN;
}

extern "C" int cnn_cuda_phase_ms(cnn_cuda *c, double ms[CNN_PHASES])
{
    if (!c || !ms)
        return -1;
    int rc = gpu_marks_last(c->marks, ms); /* none sampled (graph mode): NAN */
    return rc <= 0 ? 0 : cnn_fail(c, "phase time", gpu_timing_error(rc));
}

extern "C" int cnn_cuda_phase_poll(cnn_cuda *c, double ms[CNN_PHASES])
{
    if (!c || !ms)
        return -1;
    int rc = gpu_marks_poll(c->marks, ms);
    return rc <= 1 ? rc : cnn_fail(c, "phase time", gpu_timing_error(rc));
}

extern "C" int cnn_cuda_span_take(cnn_cuda *c, int which, double *ms)
{
    if (!c || !ms || which < 0 || which >= CNN_SPANS)
        return -1;
    if (outside_capture(c, "span take"))
        return -1;
    TIMED(gpu_spans_take(c->span[which], ms), "span time");
    return 0;
}

extern "C" void cnn_cuda_span_drop(cnn_cuda *c)
{
    if (c)
        gpu_spans_drop_all(c->span, CNN_SPANS);
}

extern "C" void cnn_cuda_spans_off(cnn_cuda *c)
{
    if (c)
        gpu_spans_destroy_all(c->span, CNN_SPANS);
}

extern "C" const char *cnn_cuda_algorithms(const cnn_cuda *c)
{
    return c && cnn_backend_is_dnn(c->backend) && c->dnn ? cnn_dnn_algorithms(c->dnn) : "";
}

extern "C" double cnn_cuda_algo_search_s(const cnn_cuda *c)
{
    return c && cnn_backend_is_dnn(c->backend) && c->dnn ? cnn_dnn_search_s(c->dnn) : NAN;
}

extern "C" int cnn_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear "no device" / "insufficient driver" */
        return 0;
    }
    return n;
}
