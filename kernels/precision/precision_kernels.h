/*
 * kernels/precision/precision_kernels.h: the mlp of kernels/mlp (784-128-128-10, ReLU, softmax
 * cross-entropy) with its weights and activations stored in a reduced precision, as frameworks' mixed
 * precision does it (seed 003, part 4):
 *   - the master weights P stay float32, and so does the SGD update (mlp_sgd);
 *   - each step converts P once into the row's storage (`convert`: Pq, 16-bit);
 *   - the forward stores its input X and activations a1, a2 in that type; every product accumulates in
 *     float32; the logits z3, the loss (mlp_loss) and the deltas d3, d2, d1 stay float32, and so does the
 *     gradient G. Keeping the deltas in float32 is why these rows need no loss scaling (it rescues fp16
 *     gradients from underflow: the GPU rows store theirs in 16 bits and scale, prec_cuda.h);
 *   - the biases are read from the float32 P (266 numbers).
 * One file per row, each defining prec_convert_NAME, prec_forward_NAME and prec_backward_NAME (declared
 * from the build list, kernels/precision/meson.build). fp32.c is the reference row: the mlp's simd
 * kernels on P itself. Kernels do no I/O and no allocation: the caller binds a prec_ws.
 */
#ifndef SL_KERNELS_PRECISION_KERNELS_H
#define SL_KERNELS_PRECISION_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "mlp/mlp_kernels.h"

/* One batch's arrays (up to B rows). */
typedef struct prec_ws {
    mlp_ws f;                 /* float32: z3, d3, d2, d1 for every row; a1, a2 for the fp32 row only */
    uint16_t *xq, *a1q, *a2q; /* B x n0, B x n1, B x n2: input and activations in the row's storage */
    float *wt;                /* a layer's W^T in float32 for the delta products: max(n1 n2, n2 n3) */
    /* The bf16 dot-product path's backward (prec_dp.h): an activation's and a delta's row pairs
     * interleaved, and a delta in bf16. */
    uint32_t *ap, *dp;        /* ceil(B / 2) x max(n0, n1, n2), ceil(B / 2) x max(n1, n2, n3) */
    uint16_t *dq;             /* B x (max(n1, n2, n3) + 1) */
} prec_ws;

/* Bytes of the block prec_ws_bind carves (64-byte aligned parts), and the binding. */
size_t prec_ws_bytes(const mlp_dims *d, int B);
void prec_ws_bind(prec_ws *ws, const mlp_dims *d, int B, void *block);
/* 16-bit elements of Pq: P's layout (mlp_layout_of), then each W again with pairs of its rows
 * interleaved (bf16dp's layout for _mm512_dpbf16_ps: element (p, j) at ((p / 2) n_out + j) 2 + p % 2). */
size_t prec_qweights_elems(const mlp_dims *d);
/* Where layer l's (0, 1, 2) interleaved W starts in Pq. */
size_t prec_pairs_offset(const mlp_dims *d, int layer);
/* Where layer l's (1, 2) W^T pairs start in Pq (prec_dp.h's delta): the pair (W[i][2jj], W[i][2jj+1])
 * as the 32-bit word jj n_prev + i, an odd last column's partner zero. */
size_t prec_tpairs_offset(const mlp_dims *d, int layer);

/* How a 16-bit row computes: chosen at run time from what the CPU offers (cpuid) and what the copy of
 * the kernels that runs was compiled with, by prec_path, the same answer for every call:
 *   PREC_PATH_CONVERT  the storage converted to float32 in registers, float32 FMA (prec_gemm.h): every
 *                      CPU; the bf16 row without AVX512_BF16, the fp16 row without AVX512_FP16
 *   PREC_PATH_BF16DP   bf16: the forward's and backward's products by vdpbf16ps (prec_dp.h), the
 *                      deltas rounded to bf16 for them; a CPU with AVX512_BF16, AVX2 or AVX-512 kernels
 *   PREC_PATH_FP16     fp16: the forward's products in native fp16 arithmetic (AVX512_FP16, fp16.c),
 *                      summed in fp16 over PREC_FP16_CHUNK steps, then in float32; the backward the
 *                      conversions' (fp16 deltas would underflow without loss scaling); AVX-512 kernels */
enum { PREC_PATH_CONVERT = 0, PREC_PATH_BF16DP = 1, PREC_PATH_FP16 = 2 };
#define PREC_FP16_CHUNK 16
/* The path the row storing `type` (PT_BF16 = 1, PT_F16 = 2; anything else: convert) takes here. */
int prec_path(int type);
/* One line naming a path, with the vector width of the copy that runs: "vdpbf16ps (AVX512_BF16), 512-bit". */
const char *prec_path_name(int path);
/* What this CPU offers the 16-bit rows, by cpuid: e.g. "avx512bf16 f16c; lacks avx512fp16 amx-bf16". */
const char *prec_cpu_offers(void);

/* convert: Pq := P in the row's storage (the fp32 row: nothing, it reads P). forward: z3 (and the
 * stored activations) for B rows of X. backward: G from ws->f.d3 (mlp_loss), with the same forward's
 * activations; d2, d1 and wt are scratch. */
typedef void (*prec_convert_fn)(const mlp_dims *d, const float *P, uint16_t *Pq);
typedef void (*prec_forward_fn)(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                                prec_ws *ws);
typedef void (*prec_backward_fn)(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X, int B,
                                 prec_ws *ws, float *G);

#define PREC_KERNEL(name)                                                                              \
    void prec_convert_##name(const mlp_dims *d, const float *P, uint16_t *Pq);                         \
    void prec_forward_##name(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X,    \
                             int B, prec_ws *ws);                                                      \
    void prec_backward_##name(const mlp_dims *d, const float *P, const uint16_t *Pq, const float *X,   \
                              int B, prec_ws *ws, float *G);
#include "precision_variant_kernels.h" /* generated: build tree kernels/ */
#undef PREC_KERNEL

/* Scalar conversions for callers outside the kernels (tests, the study's report of a value), the
 * same rounding as prec_convert.h's (round to nearest even; NaN quiet; fp16 subnormals kept). */
uint16_t prec_to_bf16(float x);
float prec_from_bf16(uint16_t h);
uint16_t prec_to_f16(float x);
float prec_from_f16(uint16_t h);

#endif
