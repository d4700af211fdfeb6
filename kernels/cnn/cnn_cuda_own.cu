/*
 * kernels/cnn/cnn_cuda_own.cu: the cuda variant's layers, own kernels for every one (the context and
 * the step are cnn_cuda.cu's). Same maths as cnn_kernels.h: NCHW, OIHW weights, 'valid' 3x3
 * cross-correlation (y[o][i][j] = sum over c, u, v of w[o][c][u][v] x[c][i+u][j+v], as PyTorch), max pool
 * 2x2/2 with floor, dense W stored nin x nout.
 *
 * Design (and why):
 *   - convolution forward: one thread per (row, group of CG = 8 output channels, output pixel) with
 *     the group's 8 sums in registers, so each input value read serves 8 outputs; the pixel is the
 *     fastest index, so a warp's loads and stores are contiguous. The weights (4.6 KB for conv2) sit in
 *     shared memory, zero-padded to a multiple of 8 output channels (no bounds test in the inner loop),
 *     and a warp reads one weight at a time (a broadcast). Bias and ReLU are fused into the store.
 *   - pooling forward keeps the argmax (0-3, row-major in the 2x2 window, the first maximum on ties by
 *     strict >, as cnn_pool_forward). Its backward is a gather, one thread per input element (no
 *     atomics; the dropped last row and column get zero), with the ReLU mask of the convolution below
 *     (a > 0) fused in: it writes that convolution's dL/dz directly.
 *   - convolution backward-data (conv2 only; conv1 needs none): the forward's mirror, one thread per
 *     (row, group of 8 input channels, input pixel), over output channels and the taps that reach it.
 *   - convolution backward-weights: for each of the cout cin k k weights a sum over B x ho x wo
 *     elements. Grid (cout x cin pairs, S slices of the flattened (row, pixel) range): each thread sums
 *     the k k taps and the bias term of its elements, the block reduces them by warp shuffles and then
 *     shared memory in a fixed order, one partial per slice; a second kernel adds the S partials in
 *     slice order. Deterministic (no float atomics); S gives the SMs about two blocks each even for
 *     conv1's 8 pairs (a grid of 8 blocks would leave an H100's 132 SMs idle).
 *   - dense layers: the tiled SGEMM of mlp_cuda.cu (256 threads, k-slices of 16 in shared memory, RM x RN
 *     outputs a thread at stride 16: conflict-free shared reads, coalesced stores; 64x64 tiles while
 *     that still gives every SM a block, else 32x32 or 16x16) with template flags for the three shapes
 *     (X W forward, A^T D weight gradients, D W^T input deltas: nothing is transposed in memory) and
 *     fused epilogues (+ bias, + bias then ReLU, the ReLU' mask of the layer below). The one copy,
 *     k_gpu_gemm, is in kernels/gpu/gpu_gemm.cuh; it is static there, so the two files' instances of
 *     one template are never merged by the linker.
 */
#include "cnn_cuda_impl.h"
#include "gpu/gpu_gemm.cuh"

#define CG 8            /* output (forward) or input (backward-data) channels a thread accumulates */
#define KS 3            /* the kernel size the convolution kernels are built for */
#define SLICES_MAX 64   /* weight-gradient slices, at most */
#define CONV_THREADS 256
#define SMEM_MAX (48 * 1024) /* static limit for dynamic shared memory without opting in */

/* ---- convolution and pooling kernels -------------------------------------------------------------- */

/* y = relu(conv(x, w) + bias): x B x cin x h x wd, w cout x cin x K x K, y B x cout x ho x wo. */
template <int K>
__global__ void __launch_bounds__(CONV_THREADS)
k_cnn_conv_fwd(const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ bias,
               float *__restrict__ y, int B, int cin, int h, int wd, int cout, int ho, int wo)
{
    extern __shared__ float ws[]; /* groups * CG x cin x K x K: w, zero past cout */
    const int groups = (cout + CG - 1) / CG, per_co = cin * K * K;
    for (int i = threadIdx.x; i < groups * CG * per_co; i += blockDim.x)
        ws[i] = i < cout * per_co ? w[i] : 0.0f;
    __syncthreads();
    const int hw = ho * wo;
    const long n = (long)B * groups * hw;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        const int pix = (int)(i % hw);
        const long t = i / hw;
        const int g = (int)(t % groups), b = (int)(t / groups);
        const float *xp = x + (size_t)b * cin * h * wd + (size_t)(pix / wo) * wd + pix % wo;
        const float *wg = ws + (size_t)g * CG * per_co;
        float acc[CG] = {};
        for (int ci = 0; ci < cin; ci++)
#pragma unroll
            for (int ky = 0; ky < K; ky++)
#pragma unroll
                for (int kx = 0; kx < K; kx++) {
                    const float v = xp[((size_t)ci * h + ky) * wd + kx];
                    const int tap = (ci * K + ky) * K + kx;
#pragma unroll
                    for (int j = 0; j < CG; j++)
                        acc[j] = fmaf(wg[j * per_co + tap], v, acc[j]);
                }
#pragma unroll
        for (int j = 0; j < CG; j++) {
            const int co = g * CG + j;
            if (co < cout) {
                const float v = acc[j] + bias[co];
                y[((size_t)b * cout + co) * hw + pix] = v > 0.0f ? v : 0.0f;
            }
        }
    }
}

/* dx = dL/dx of the same convolution from dz = dL/dz (B x cout x ho x wo); dx B x cin x h x wd. */
template <int K>
__global__ void __launch_bounds__(CONV_THREADS)
k_cnn_conv_bwd_data(const float *__restrict__ dz, const float *__restrict__ w, float *__restrict__ dx, int B,
                    int cin, int h, int wd, int cout, int ho, int wo)
{
    extern __shared__ float ws[]; /* cout x groups * CG x K x K: w, input channels zero-padded to 8s */
    constexpr int KK = K * K;
    const int groups = (cin + CG - 1) / CG, cinp = groups * CG;
    for (int i = threadIdx.x; i < cout * cinp * KK; i += blockDim.x) {
        const int co = i / (cinp * KK), ci = i / KK % cinp, tap = i % KK;
        ws[i] = ci < cin ? w[((size_t)co * cin + ci) * KK + tap] : 0.0f;
    }
    __syncthreads();
    const int hw = h * wd, hwo = ho * wo;
    const long n = (long)B * groups * hw;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        const int pix = (int)(i % hw);
        const long t = i / hw;
        const int g = (int)(t % groups), b = (int)(t / groups);
        const int iy = pix / wd, ix = pix % wd;
        float acc[CG] = {};
        for (int co = 0; co < cout; co++) {
            const float *dzp = dz + ((size_t)b * cout + co) * hwo;
            const float *wc = ws + ((size_t)co * cinp + g * CG) * KK;
#pragma unroll
            for (int ky = 0; ky < K; ky++) {
                const int oy = iy - ky; /* the output row whose tap ky reads input row iy */
                if (oy < 0 || oy >= ho)
                    continue;
#pragma unroll
                for (int kx = 0; kx < K; kx++) {
                    const int ox = ix - kx;
                    if (ox < 0 || ox >= wo)
                        continue;
                    const float v = dzp[oy * wo + ox];
#pragma unroll
                    for (int j = 0; j < CG; j++)
                        acc[j] = fmaf(wc[j * KK + ky * K + kx], v, acc[j]);
                }
            }
        }
#pragma unroll
        for (int j = 0; j < CG; j++) {
            const int ci = g * CG + j;
            if (ci < cin)
                dx[((size_t)b * cin + ci) * hw + pix] = acc[j];
        }
    }
}

/* One partial per (slice, pair): the K K weight-gradient taps and the bias term (index K K) of output
 * channel co = pair / cin over input channel ci = pair % cin, summed over the slice's elements.
 * Block: CONV_THREADS threads; grid (cout cin, S). part: S x cout cin x (K K + 1). */
template <int K>
__global__ void __launch_bounds__(CONV_THREADS)
k_cnn_conv_bwd_w_part(const float *__restrict__ x, const float *__restrict__ dz, float *__restrict__ part, int B,
                      int cin, int h, int wd, int cout, int ho, int wo)
{
    constexpr int KK1 = K * K + 1;
    __shared__ float sh[CONV_THREADS / 32][KK1];
    const int co = blockIdx.x / cin, ci = blockIdx.x % cin, S = gridDim.y, s = blockIdx.y;
    const int hwo = ho * wo;
    const long E = (long)B * hwo, e0 = E * s / S, e1 = E * (s + 1) / S;
    float acc[KK1] = {};
    for (long e = e0 + threadIdx.x; e < e1; e += blockDim.x) {
        const int pix = (int)(e % hwo), b = (int)(e / hwo);
        const float g = dz[((size_t)b * cout + co) * hwo + pix];
        const float *xp = x + (((size_t)b * cin + ci) * h + pix / wo) * wd + pix % wo;
#pragma unroll
        for (int ky = 0; ky < K; ky++)
#pragma unroll
            for (int kx = 0; kx < K; kx++)
                acc[ky * K + kx] = fmaf(g, xp[ky * wd + kx], acc[ky * K + kx]);
        acc[K * K] += g;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int j = 0; j < KK1; j++) {
        float v = acc[j];
        for (int off = 16; off > 0; off >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, off);
        if (lane == 0)
            sh[warp][j] = v;
    }
    __syncthreads();
    if (threadIdx.x < KK1) {
        float t = 0.0f;
        for (int r = 0; r < CONV_THREADS / 32; r++)
            t += sh[r][threadIdx.x];
        part[((size_t)s * gridDim.x + blockIdx.x) * KK1 + threadIdx.x] = t;
    }
}

/* dw, db = the S partials added in slice order (the bias term is taken from the ci = 0 pairs). */
template <int K>
__global__ void k_cnn_conv_bwd_w_sum(const float *__restrict__ part, int S, int cout, int cin,
                                     float *__restrict__ dw, float *__restrict__ db)
{
    constexpr int KK = K * K, KK1 = KK + 1;
    const int n = cout * cin * KK1;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float t = 0.0f;
        for (int s = 0; s < S; s++)
            t += part[(size_t)s * n + i];
        const int pair = i / KK1, j = i % KK1;
        if (j < KK)
            dw[(size_t)pair * KK + j] = t; /* OIHW: pair = co cin + ci */
        else if (pair % cin == 0)
            db[pair / cin] = t;
    }
}

/* y = max of each 2x2 window of x (B c x h x w), arg = its index 0-3 (the first maximum on ties). */
__global__ void k_cnn_pool_fwd(const float *__restrict__ x, float *__restrict__ y, uint8_t *__restrict__ arg,
                               long BC, int h, int w)
{
    const int ph = h / 2, pw = w / 2;
    const long n = BC * ph * pw;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        const int px = (int)(i % pw), py = (int)(i / pw % ph);
        const long bc = i / pw / ph;
        const float *p = x + ((size_t)bc * h + 2 * py) * w + 2 * px;
        float m = p[0];
        int a = 0;
        if (p[1] > m) {
            m = p[1];
            a = 1;
        }
        if (p[w] > m) {
            m = p[w];
            a = 2;
        }
        if (p[w + 1] > m) {
            m = p[w + 1];
            a = 3;
        }
        y[i] = m;
        arg[i] = (uint8_t)a;
    }
}

/* dz (B c x h x w) = dy routed through arg to its window's maximum, zero elsewhere, times the ReLU mask
 * of a, the convolution's output: dL/dz of that convolution. */
__global__ void k_cnn_pool_bwd_relu(const float *__restrict__ dy, const uint8_t *__restrict__ arg,
                                    const float *__restrict__ a, float *__restrict__ dz, long BC, int h, int w)
{
    const int ph = h / 2, pw = w / 2;
    const long n = BC * h * w;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        const int xx = (int)(i % w), yy = (int)(i / w % h);
        const long bc = i / w / h;
        const int py = yy >> 1, px = xx >> 1;
        float v = 0.0f;
        if (py < ph && px < pw) {
            const size_t j = ((size_t)bc * ph + py) * pw + px;
            if (arg[j] == (((yy & 1) << 1) | (xx & 1)))
                v = dy[j];
        }
        dz[i] = a[i] > 0.0f ? v : 0.0f;
    }
}

/* ---- dense layers: the tiled SGEMM ---------------------------------------------------------------- */

/* ---- host side -------------------------------------------------------------------------------------- */

static int launched(cnn_cuda *c, const char *what)
{
    CK(cudaGetLastError(), what);
    cnn_count_op(c);
    return 0;
}

static long tiles(int M, int N, int t) { return (long)((M + t - 1) / t) * ((N + t - 1) / t); }

/* C = op(A) op(B) then the epilogue; the tile: 64 x 64 (4 x 4 outputs a thread) while that still gives
 * every SM a block, else 32 x 32 or 16 x 16 (the 10-wide output layer, small batches). */
template <bool TA, bool TB, int EPI>
static int gemm(cnn_cuda *c, int M, int N, int K, const float *A, const float *Bm, float *C, const float *aux,
                const char *what)
{
    if (M > 65535 * 16)
        return cnn_fail(c, what, "too many rows for the grid");
    const int r = tiles(M, N, 64) >= c->sms ? 4 : tiles(M, N, 32) >= c->sms ? 2 : 1;
    dim3 grid((unsigned)((N + 16 * r - 1) / (16 * r)), (unsigned)((M + 16 * r - 1) / (16 * r)));
    if (r == 4)
        k_gpu_gemm<4, 4, TA, TB, EPI><<<grid, GPU_GEMM_THREADS, 0, c->s>>>(M, N, K, A, Bm, C, aux);
    else if (r == 2)
        k_gpu_gemm<2, 2, TA, TB, EPI><<<grid, GPU_GEMM_THREADS, 0, c->s>>>(M, N, K, A, Bm, C, aux);
    else
        k_gpu_gemm<1, 1, TA, TB, EPI><<<grid, GPU_GEMM_THREADS, 0, c->s>>>(M, N, K, A, Bm, C, aux);
    return launched(c, what);
}

/* Blocks for a convolution kernel's n threads: at most 4 a SM, since each block first loads the whole
 * weight tensor into shared memory; the grid-stride loop takes the rest. */
static unsigned conv_grid(const cnn_cuda *c, long n)
{
    long g = (n + CONV_THREADS - 1) / CONV_THREADS, cap = 4L * c->sms;
    return (unsigned)(g < 1 ? 1 : g > cap ? cap : g);
}

/* Shared memory of the forward (output channels padded to CG) and backward-data (input channels padded). */
static size_t fwd_smem(const cnn_conv *v)
{
    return (size_t)(v->cout + CG - 1) / CG * CG * v->cin * v->k * v->k * sizeof(float);
}
static size_t bwd_smem(const cnn_conv *v)
{
    return (size_t)v->cout * ((v->cin + CG - 1) / CG * CG) * v->k * v->k * sizeof(float);
}

/* Weight-gradient slices of conv v at batch B: about 2 blocks a SM, each slice at least 1024 elements
 * (4 a thread), at most SLICES_MAX (cnn_own_part_floats sizes the buffer for that). */
static int slices(const cnn_cuda *c, const cnn_conv *v, int B)
{
    const int pairs = v->cout * v->cin;
    const long E = (long)B * cnn_conv_ho(v) * cnn_conv_wo(v);
    long S = (2L * c->sms + pairs - 1) / pairs;
    if (S > E / 1024)
        S = E / 1024;
    if (S > SLICES_MAX)
        S = SLICES_MAX;
    return S < 1 ? 1 : (int)S;
}

static int conv_forward(cnn_cuda *c, const cnn_conv *v, int B, const float *x, const float *w, const float *b,
                        float *y, const char *what)
{
    const int ho = cnn_conv_ho(v), wo = cnn_conv_wo(v);
    const long n = (long)B * ((v->cout + CG - 1) / CG) * ho * wo;
    k_cnn_conv_fwd<KS><<<conv_grid(c, n), CONV_THREADS, fwd_smem(v), c->s>>>(x, w, b, y, B, v->cin, v->h, v->w,
                                                                             v->cout, ho, wo);
    return launched(c, what);
}

static int conv_backward_data(cnn_cuda *c, const cnn_conv *v, int B, const float *dz, const float *w, float *dx,
                              const char *what)
{
    const long n = (long)B * ((v->cin + CG - 1) / CG) * v->h * v->w;
    k_cnn_conv_bwd_data<KS><<<conv_grid(c, n), CONV_THREADS, bwd_smem(v), c->s>>>(
        dz, w, dx, B, v->cin, v->h, v->w, v->cout, cnn_conv_ho(v), cnn_conv_wo(v));
    return launched(c, what);
}

static int conv_backward_weights(cnn_cuda *c, const cnn_conv *v, int B, const float *x, const float *dz,
                                 float *dw, float *db, const char *what)
{
    const int S = slices(c, v, B), pairs = v->cout * v->cin;
    k_cnn_conv_bwd_w_part<KS><<<dim3((unsigned)pairs, (unsigned)S), CONV_THREADS, 0, c->s>>>(
        x, dz, c->part, B, v->cin, v->h, v->w, v->cout, cnn_conv_ho(v), cnn_conv_wo(v));
    if (launched(c, what))
        return -1;
    const size_t n = (size_t)pairs * (KS * KS + 1);
    k_cnn_conv_bwd_w_sum<KS><<<cnn_grid(c, n, 256), 256, 0, c->s>>>(c->part, S, v->cout, v->cin, dw, db);
    return launched(c, what);
}

static int pool_forward(cnn_cuda *c, const cnn_pool *p, int B, const float *x, float *y, uint8_t *arg,
                        const char *what)
{
    const long BC = (long)B * p->c;
    k_cnn_pool_fwd<<<cnn_grid(c, (size_t)BC * (p->h / 2) * (p->w / 2), 256), 256, 0, c->s>>>(x, y, arg, BC, p->h,
                                                                                             p->w);
    return launched(c, what);
}

static int pool_backward(cnn_cuda *c, const cnn_pool *p, int B, const float *dy, const uint8_t *arg,
                         const float *a, float *dz, const char *what)
{
    const long BC = (long)B * p->c;
    k_cnn_pool_bwd_relu<<<cnn_grid(c, (size_t)BC * p->h * p->w, 256), 256, 0, c->s>>>(dy, arg, a, dz, BC, p->h,
                                                                                      p->w);
    return launched(c, what);
}

/* ---- the backend ------------------------------------------------------------------------------------ */

int cnn_own_check(const cnn_dims *d, char *msg, size_t msg_len)
{
    const cnn_conv *v[2] = {&d->conv1, &d->conv2};
    for (int i = 0; i < 2; i++) {
        if (v[i]->k != KS) {
            snprintf(msg, msg_len, "cnn cuda: cuda variant: its convolution kernels are built for %dx%d, "
                     "conv%d is %dx%d", KS, KS, i + 1, v[i]->k, v[i]->k);
            return -1;
        }
        if (fwd_smem(v[i]) > SMEM_MAX || bwd_smem(v[i]) > SMEM_MAX) {
            snprintf(msg, msg_len, "cnn cuda: cuda variant: conv%d's weights do not fit in %d bytes of shared memory",
                     i + 1, SMEM_MAX);
            return -1;
        }
    }
    return 0;
}

size_t cnn_own_part_floats(const cnn_dims *d)
{
    const int p1 = d->conv1.cout * d->conv1.cin, p2 = d->conv2.cout * d->conv2.cin;
    return (size_t)SLICES_MAX * (p1 > p2 ? p1 : p2) * (KS * KS + 1);
}

int cnn_own_forward(cnn_cuda *c, int B)
{
    const cnn_dims *d = &c->d;
    const cnn_layout *L = &c->L;
    const float *P = c->P;
    const int n1 = d->dense1.nin, n2 = d->dense1.nout, n3 = d->dense2.nout;
    if (conv_forward(c, &d->conv1, B, c->X, P + L->c1w, P + L->c1b, c->a1, "conv1 forward") ||
        pool_forward(c, &d->pool1, B, c->a1, c->p1, c->arg1, "pool1 forward") ||
        conv_forward(c, &d->conv2, B, c->p1, P + L->c2w, P + L->c2b, c->a2, "conv2 forward") ||
        pool_forward(c, &d->pool2, B, c->a2, c->p2, c->arg2, "pool2 forward") ||
        gemm<false, false, EPI_BIAS_RELU>(c, B, n2, n1, c->p2, P + L->d1w, c->a3, P + L->d1b, "dense1 forward") ||
        gemm<false, false, EPI_BIAS>(c, B, n3, n2, c->a3, P + L->d2w, c->z4, P + L->d2b, "dense2 forward"))
        return -1;
    return 0;
}

/* Each layer from the top: dense weights dW = A^T D and db = column sums of D; dense deltas D W^T (the
 * ReLU' mask of dense1's output fused); each pool's backward writes the convolution's dL/dz. */
int cnn_own_backward(cnn_cuda *c, int B)
{
    const cnn_dims *d = &c->d;
    const cnn_layout *L = &c->L;
    const float *P = c->P;
    float *G = c->G;
    const int n1 = d->dense1.nin, n2 = d->dense1.nout, n3 = d->dense2.nout;
    if (gemm<true, false, EPI_STORE>(c, n2, n3, B, c->a3, c->d4, G + L->d2w, NULL, "dense2 weights") ||
        cnn_colsum(c, c->d4, B, n3, G + L->d2b) ||
        gemm<false, true, EPI_MASK>(c, B, n2, n3, c->d4, P + L->d2w, c->da3, c->a3, "dense2 delta") ||
        gemm<true, false, EPI_STORE>(c, n1, n2, B, c->p2, c->da3, G + L->d1w, NULL, "dense1 weights") ||
        cnn_colsum(c, c->da3, B, n2, G + L->d1b) ||
        gemm<false, true, EPI_STORE>(c, B, n1, n2, c->da3, P + L->d1w, c->dp2, NULL, "dense1 delta") ||
        pool_backward(c, &d->pool2, B, c->dp2, c->arg2, c->a2, c->da2, "pool2 backward") ||
        conv_backward_weights(c, &d->conv2, B, c->p1, c->da2, G + L->c2w, G + L->c2b, "conv2 weights") ||
        conv_backward_data(c, &d->conv2, B, c->da2, P + L->c2w, c->dp1, "conv2 delta") ||
        pool_backward(c, &d->pool1, B, c->dp1, c->arg1, c->a1, c->da1, "pool1 backward") ||
        conv_backward_weights(c, &d->conv1, B, c->X, c->da1, G + L->c1w, G + L->c1b, "conv1 weights"))
        return -1;
    return 0;
}
