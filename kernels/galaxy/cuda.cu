/*
 * kernels/galaxy/cuda.cu: the GPU step of the write-up (its PyTorch variant), as two kernels.
 *   fwd:  one warp per training row: the H dot products of the row with Theta1 (lanes split k, warp
 *         shuffle reduction), then lane 0 does the output layer, the cost term and, for the gradient,
 *         delta3 (into G2 by atomics), delta2 (into D) and the Theta1 bias column.
 *   bwd:  G1[:,1:] += D' X: a block owns 256 columns k and a chunk of rows; D's chunk sits in shared
 *         memory; one atomicAdd per (h, k) per block.
 * Double precision throughout; atomics make the summation order vary, well inside the 1e-10 check.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" {
#include "galaxy_cuda.h"
#include "canon.h"
}

#define HMAX 16
#define ROWS_PER_BLOCK 8   /* warps per fwd block */
#define BWD_ROWS 128       /* rows per bwd block */

struct galaxy_cuda {
    galaxy_problem p;
    size_t nt;
    double *dX, *dTheta, *dG, *dD, *dJ;
    unsigned char *dy;
    char err[256];
    /* Device time of each call's phases: events around the theta copy (h2d), the kernels and
     * the result copy (d2h), read after the call's own synchronous copy back, so timing adds no wait. */
    cudaEvent_t ev[4];
    int timed;            /* 1 when the four events exist */
    double phase_ms[3];   /* h2d, kernels, d2h summed since the last galaxy_cuda_phase_ms */
    double last_ms;       /* the three of the last call */
    size_t bytes;         /* device memory allocated (the allocator's high-water mark: allocations are fixed) */
};

__device__ static double sig(double x) { return 1.0 / (1.0 + exp(-x)); }

__global__ void galaxy_fwd(const double *X, const unsigned char *y, const double *theta, long m, int N,
                           int H, int K, double *D, double *G, double *J, int want_grad)
{
    const int lane = threadIdx.x & 31;
    const long t = (long)blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (t >= m) return;
    const long N1 = N + 1;
    const double *x = X + t * N;
    double acc[HMAX];
    for (int h = 0; h < H; h++) acc[h] = 0.0;
    for (int k = lane; k < N; k += 32) {
        double xv = x[k];
        for (int h = 0; h < H; h++) acc[h] += theta[h * N1 + 1 + k] * xv;
    }
    for (int h = 0; h < H; h++)
        for (int off = 16; off > 0; off >>= 1) acc[h] += __shfl_down_sync(0xffffffffu, acc[h], off);
    if (lane) return;
    const double *T2 = theta + H * N1;
    double a2[HMAX + 1], d3[8], Jt = 0.0;
    a2[0] = 1.0;
    for (int h = 0; h < H; h++) a2[h + 1] = sig(acc[h] + theta[h * N1]);
    for (int o = 0; o < K; o++) {
        double s = 0.0;
        for (int h = 0; h <= H; h++) s += T2[o * (H + 1) + h] * a2[h];
        double a3 = sig(s);
        Jt += (o == y[t]) ? -log(a3) : -log(1.0 - a3);
        d3[o] = a3 - (o == y[t]);
    }
    atomicAdd(J, Jt);
    if (!want_grad) return;
    double *G2 = G + H * N1;
    for (int o = 0; o < K; o++)
        for (int h = 0; h <= H; h++) atomicAdd(&G2[o * (H + 1) + h], d3[o] * a2[h]);
    for (int h = 0; h < H; h++) {
        double s = 0.0;
        for (int o = 0; o < K; o++) s += T2[o * (H + 1) + h + 1] * d3[o];
        double d = s * a2[h + 1] * (1.0 - a2[h + 1]);
        D[t * H + h] = d;
        atomicAdd(&G[h * N1], d);
    }
}

__global__ void galaxy_bwd(const double *X, const double *D, long m, int N, int H, double *G)
{
    __shared__ double sD[BWD_ROWS * HMAX];
    const long t0 = (long)blockIdx.y * BWD_ROWS;
    const int nb = (int)(m - t0 < BWD_ROWS ? m - t0 : BWD_ROWS);
    for (int i = threadIdx.x; i < nb * H; i += blockDim.x) sD[i] = D[t0 * H + i];
    __syncthreads();
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= N) return;
    double acc[HMAX];
    for (int h = 0; h < H; h++) acc[h] = 0.0;
    for (int t = 0; t < nb; t++) {
        double xv = X[(t0 + t) * N + k];
        for (int h = 0; h < H; h++) acc[h] += sD[t * H + h] * xv;
    }
    for (int h = 0; h < H; h++) atomicAdd(&G[(long)h * (N + 1) + 1 + k], acc[h]);
}

static int fail(galaxy_cuda *c, cudaError_t e, const char *what)
{
    snprintf(c->err, sizeof c->err, "galaxy cuda: %s: %s", what, cudaGetErrorString(e));
    return -1;
}
#define CK(call, what) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return fail(c, e_, what); } while (0)

extern "C" int galaxy_cuda_device_count(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

extern "C" const char *galaxy_cuda_error(const galaxy_cuda *c) { return c->err; }

extern "C" void galaxy_cuda_destroy(galaxy_cuda *c)
{
    if (!c) return;
    for (int i = 0; i < 4 && c->timed; i++) cudaEventDestroy(c->ev[i]);
    cudaFree(c->dX); cudaFree(c->dy); cudaFree(c->dTheta); cudaFree(c->dG); cudaFree(c->dD); cudaFree(c->dJ);
    free(c);
}

static int upload(galaxy_cuda *c)
{
    const galaxy_problem *p = &c->p;
    CK(cudaMalloc(&c->dX, (size_t)p->m * p->n_in * sizeof(double)), "cudaMalloc X");
    CK(cudaMalloc(&c->dy, (size_t)p->m), "cudaMalloc y");
    CK(cudaMalloc(&c->dTheta, c->nt * sizeof(double)), "cudaMalloc theta");
    CK(cudaMalloc(&c->dG, c->nt * sizeof(double)), "cudaMalloc grad");
    CK(cudaMalloc(&c->dD, (size_t)p->m * p->n_hid * sizeof(double)), "cudaMalloc D");
    CK(cudaMalloc(&c->dJ, sizeof(double)), "cudaMalloc J");
    c->bytes = (size_t)p->m * p->n_in * sizeof(double) + (size_t)p->m + 2 * c->nt * sizeof(double) +
               (size_t)p->m * p->n_hid * sizeof(double) + sizeof(double);
    /* rows packed on the device (the host's may be padded: galaxy_ldx) */
    CK(cudaMemcpy2D(c->dX, (size_t)p->n_in * sizeof(double), p->X, galaxy_ldx(p) * sizeof(double),
                    (size_t)p->n_in * sizeof(double), (size_t)p->m, cudaMemcpyHostToDevice), "copy X");
    CK(cudaMemcpy(c->dy, p->y, (size_t)p->m, cudaMemcpyHostToDevice), "copy y");
    return 0;
}

extern "C" galaxy_cuda *galaxy_cuda_create(const galaxy_problem *p, char *err, size_t errlen)
{
    if (p->n_hid > HMAX || p->n_out > 8) {
        snprintf(err, errlen, "galaxy cuda: n_hid=%d n_out=%d, this kernel supports n_hid <= %d, n_out <= 8",
                 p->n_hid, p->n_out, HMAX);
        return NULL;
    }
    galaxy_cuda *c = (galaxy_cuda *)calloc(1, sizeof *c);
    if (!c) { snprintf(err, errlen, "galaxy cuda: out of host memory"); return NULL; }
    c->p = *p;
    c->nt = galaxy_n_theta(p);
    if (upload(c)) {
        snprintf(err, errlen, "%s", c->err);
        galaxy_cuda_destroy(c);
        return NULL;
    }
    int made = 0;
    while (made < 4 && cudaEventCreate(&c->ev[made]) == cudaSuccess) made++;
    c->timed = made == 4;
    for (int i = 0; i < made && !c->timed; i++) cudaEventDestroy(c->ev[i]); /* no phases, still runs */
    cudaGetLastError();
    return c;
}

/* After a call's synchronous copy back: its phases' device time, added to the sums. */
static void add_phases(galaxy_cuda *c)
{
    if (!c->timed || cudaEventRecord(c->ev[3], 0) != cudaSuccess || cudaEventSynchronize(c->ev[3]) != cudaSuccess)
        return;
    float ms[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++)
        if (cudaEventElapsedTime(&ms[i], c->ev[i], c->ev[i + 1]) != cudaSuccess)
            return;
    c->last_ms = 0;
    for (int i = 0; i < 3; i++) {
        c->phase_ms[i] += ms[i];
        c->last_ms += ms[i];
    }
}

extern "C" int galaxy_cuda_phase_ms(galaxy_cuda *c, double ms[3])
{
    if (!c->timed) return -1;
    for (int i = 0; i < 3; i++) {
        ms[i] = c->phase_ms[i];
        c->phase_ms[i] = 0;
    }
    return 0;
}

extern "C" double galaxy_cuda_last_ms(const galaxy_cuda *c) { return c->timed ? c->last_ms : -1.0; }
extern "C" size_t galaxy_cuda_bytes(const galaxy_cuda *c) { return c->bytes; }

/* Copies theta in, zeroes the sums and runs fwd (and bwd for the gradient). */
static int launch(galaxy_cuda *c, const double *theta, int want_grad)
{
    const galaxy_problem *p = &c->p;
    if (c->timed) cudaEventRecord(c->ev[0], 0);
    CK(cudaMemcpy(c->dTheta, theta, c->nt * sizeof(double), cudaMemcpyHostToDevice), "copy theta");
    CK(cudaMemset(c->dJ, 0, sizeof(double)), "memset J");
    if (want_grad) CK(cudaMemset(c->dG, 0, c->nt * sizeof(double)), "memset grad");
    if (c->timed) cudaEventRecord(c->ev[1], 0);
    unsigned nblk = (unsigned)((p->m + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    galaxy_fwd<<<nblk, 32 * ROWS_PER_BLOCK>>>(c->dX, c->dy, c->dTheta, p->m, p->n_in, p->n_hid, p->n_out,
                                              c->dD, c->dG, c->dJ, want_grad);
    CK(cudaGetLastError(), "launch fwd");
    if (want_grad) {
        dim3 g((unsigned)((p->n_in + 255) / 256), (unsigned)((p->m + BWD_ROWS - 1) / BWD_ROWS));
        galaxy_bwd<<<g, 256>>>(c->dX, c->dD, p->m, p->n_in, p->n_hid, c->dG);
        CK(cudaGetLastError(), "launch bwd");
    }
    if (c->timed) cudaEventRecord(c->ev[2], 0);
    return 0;
}

extern "C" int galaxy_cost_cuda(galaxy_cuda *c, const double *theta, double *J)
{
    if (launch(c, theta, 0)) return -1;
    CK(cudaMemcpy(J, c->dJ, sizeof(double), cudaMemcpyDeviceToHost), "copy J");
    add_phases(c);
    *J = *J / (double)c->p.m + galaxy_cost_reg(&c->p, theta);
    return 0;
}

extern "C" int galaxy_grad_cuda(galaxy_cuda *c, const double *theta, double *grad)
{
    if (launch(c, theta, 1)) return -1;
    CK(cudaMemcpy(grad, c->dG, c->nt * sizeof(double), cudaMemcpyDeviceToHost), "copy grad");
    add_phases(c);
    galaxy_grad_finish(&c->p, theta, grad);
    return 0;
}
