/*
 * kernels/galaxy/simd.c: the fused single-thread variant (the write-up's Cython step, in C: typed,
 * preallocated, vectorised) and the blocks the omp and blas variants share.
 *
 * Why blocked: the gradient reads X (2700 x 1024 doubles, 22 MB) twice in the matrix form (Z2 = X T1'
 * and G1 = D2' X). Doing both for GALAXY_FUSED_BLOCK rows at a time reads each row from memory once,
 * and while a block's Theta1 gradient runs (from L2) the next block's rows are prefetched into L2, so
 * the next forward does not wait on memory either.
 * Forward: Theta1 is packed once per call into aligned 8 x KC chunks; a chunk stays in L1 while every
 * row of the block passes over it, FW_MR rows per Theta1 load (the tiles below follow the vector width
 * and register count of kernels/simd.h); the sums stay vectors across the chunks and are reduced once
 * per row; X is also prefetched PF_ROWS rows ahead (a row is read in KC-double pieces, rows ldx apart).
 * Output layer: whole-block passes so exp and log run a vector at a time (canon.c). Theta1 gradient: a
 * BW_NV x BW_NU register tile (vectors of k x hidden units).
 * Every sum follows canon.h's order, so the result is default's, bit for bit.
 * docs/study-galaxy.md has the measurements of each step.
 */
#include "fused.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd.h"

#define KC GALAXY_KC /* canon.h: the chunk of the canonical sums */
#define PF_ROWS 4 /* the forward prefetches the rows this many ahead */
#define VL VF64_LANES
#define G8 (8 / VL) /* vectors per canonical 8-lane group: canon.h's lane l is lane l % VL of vector l / VL */

/* Register tiles from the width (kernels/simd.h). Forward: FW_MR rows x FW_NU hidden units x G8 vectors
 * of accumulators, each Theta1 load feeding FW_MR FMAs: AVX-512 3 x 8 x 1 = 24 of 32 zmm; AVX2
 * 2 x 2 x 2 = 8 + 4 row vectors + the Theta1 vector of 16 ymm; SSE 1 x 2 x 4. Theta1 gradient: BW_NV
 * vectors of k x BW_NU hidden units, each broadcast of delta2 feeding BW_NV FMAs: AVX-512 3 x 8 = 24,
 * otherwise 3 x 4 = 12 + 3 row vectors + the broadcast of 16 (with AVX2, on the Zen 5 VM, `ninja -C
 * build-v3 kernels/galaxy_parts` with the tiles overridden, interleaved runs: Theta1 gradient 1.23 ms at
 * 3 x 4 against 1.82 at 4 x 2, 1.50 at 2 x 4 with 2 x 2 forward, 1.81 at 2 x 4 with 1 x 4 forward). */
#if SIMD_NREGS >= 32 && G8 == 1
#define FW_MR 3
#define FW_NU 8
#define BW_NU 8
#define BW_NV 3
#elif G8 <= 2
#define FW_MR 2
#define FW_NU 2
#define BW_NU 4
#define BW_NV 3
#else
#define FW_MR 1
#define FW_NU 2
#define BW_NU 4
#define BW_NV 3
#endif

/* Fast path of the forward: H and N multiples of 8 (the study's 1024-8-3 shape). */
static int packable(const galaxy_problem *p) { return p->n_hid % 8 == 0 && p->n_in % 8 == 0; }

size_t galaxy_fused_slice_doubles(const galaxy_problem *p)
{
    size_t pack = (size_t)p->n_hid * ((size_t)p->n_in + KC) + 8;  /* chunks padded to KC, aligned */
    return (size_t)GALAXY_FUSED_BLOCK * (size_t)p->n_hid + pack + 8;
}

/* Segment gradients sit a whole number of 4 KiB pages apart (PAGE_D doubles), shifted as a group so that
 * they start half a page away from X in address bits 0-11. Why: the Theta1 gradient stores a register
 * tile into G, then at once loads the rows of X at the next columns; where G and X have the same offset
 * within a 4 KiB page, those loads wait on the unrelated stores (4K aliasing: the core matches loads
 * against pending stores by the low 12 address bits first). With packed 8 KiB rows (ldx = n_in = 1024)
 * every row has X's page offset; G at the start of a malloc'd workspace, X from another large
 * allocation, both page-aligned plus the same header, made galaxy_parts' AVX2 gradient call 25 % longer
 * on a Zen 4 VM, its AVX-512 one (one pass over the rows) 2 % at most (docs/study-galaxy.md). With padded rows (galaxy_padded_ldx, as the study's loader
 * gives them) the rows' offsets step by 64 bytes, only one or two rows in 64 can meet G's, and the
 * placement measured no difference: it is kept for callers with packed rows. */
#define PAGE_D 512
static size_t seg_stride(const galaxy_problem *p) { return (galaxy_n_theta(p) + PAGE_D - 1) / PAGE_D * PAGE_D; }

size_t galaxy_fused_ws_doubles(const galaxy_problem *p, int threads)
{
    if (threads < 1) threads = 1;
    return GALAXY_SEGMENTS * seg_stride(p) + PAGE_D + (size_t)threads * galaxy_fused_slice_doubles(p) + 64;
}

double *galaxy_fused_seg(const galaxy_problem *p, double *ws, int s)
{
    uintptr_t half = ((uintptr_t)p->X + 2048 - (uintptr_t)ws) % 4096;  /* bytes: ws + half ~ X + 2 KiB */
    return ws + half / sizeof(double) + (size_t)s * seg_stride(p);
}

double *galaxy_fused_slice(const galaxy_problem *p, double *ws, int thread)
{
    return ws + GALAXY_SEGMENTS * seg_stride(p) + PAGE_D + (size_t)thread * galaxy_fused_slice_doubles(p);
}

const double *galaxy_fused_pack(const galaxy_problem *p, const double *theta, double *slice)
{
    if (!packable(p)) return NULL;
    const int N = p->n_in, H = p->n_hid;
    const size_t N1 = (size_t)N + 1;
    double *T1p = slice + (size_t)GALAXY_FUSED_BLOCK * H;
    T1p += (64 - (uintptr_t)T1p % 64) % 64 / sizeof(double);  /* malloc gives 16-byte alignment */
    double *dst = T1p;
    for (int h0 = 0; h0 < H; h0 += 8)
        for (int k0 = 0; k0 < N; k0 += KC, dst += 8 * KC) {
            int kn = N - k0 < KC ? N - k0 : KC;
            for (int j = 0; j < 8; j++)
                memcpy(dst + j * KC, theta + (h0 + j) * N1 + 1 + k0, (size_t)kn * sizeof(double));
        }
    return T1p;
}

/* nr (<= FW_MR) rows of X at once against nu (<= FW_NU) rows of T: each T vector feeds nr FMAs. Row r is
 * x + r * ldx. The sums stay canonical 8-lane groups (G8 vectors): they are added to z[r * 8 * G8 + ...]
 * (in L1) at the end of a KC chunk and reduced to scalars once per row, after the last chunk (a
 * horizontal sum costs as much as 8 FMAs). pf: prefetch X PF_ROWS rows ahead (the first pass only). */
static inline __attribute__((always_inline)) void
dots_rows(const double *T, size_t ld, const double *x, int ldx, const int nr, const int nu, int kn, int pf,
          vf64 *z)
{
    const ptrdiff_t ahead = (ptrdiff_t)PF_ROWS * ldx;
    vf64 a[FW_MR][FW_NU][G8];
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < nu; j++)
            for (int g = 0; g < G8; g++) a[r][j][g] = (vf64){0};
    for (int k = 0; k < kn; k += 8) {
        vf64 u[FW_MR][G8];
        for (int r = 0; r < nr; r++) {
            for (int g = 0; g < G8; g++) u[r][g] = vf64_load(x + (size_t)r * ldx + k + g * VL);
            if (pf) __builtin_prefetch(x + (size_t)r * ldx + ahead + k);
        }
        for (int j = 0; j < nu; j++)
            for (int g = 0; g < G8; g++) {
                vf64 tv = vf64_load(T + j * ld + k + g * VL);
                SIMD_KEEP_IN_REG(tv);
                for (int r = 0; r < nr; r++) a[r][j][g] += tv * u[r][g];
            }
    }
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < nu; j++)
            for (int g = 0; g < G8; g++) z[(r * 8 + j) * G8 + g] += a[r][j][g];
}

/* Rows [0, nb) of the block against the packed chunk Tp, FW_MR rows at a time, each row group through
 * the 8 / FW_NU passes of FW_NU units while its rows are in L1 (X is prefetched by the first pass). */
static inline __attribute__((always_inline)) void
dots_block(const double *Tp, const double *x, int ldx, int nb, int kn, vf64 *acc)
{
    int t = 0;
    for (; t + FW_MR <= nb; t += FW_MR)
        for (int j0 = 0; j0 < 8; j0 += FW_NU)
            dots_rows(Tp + (size_t)j0 * KC, KC, x + (size_t)t * ldx, ldx, FW_MR, FW_NU, kn, j0 == 0,
                      acc + (t * 8 + j0) * G8);
    for (; t < nb; t++)
        for (int j0 = 0; j0 < 8; j0 += FW_NU)
            dots_rows(Tp + (size_t)j0 * KC, KC, x + (size_t)t * ldx, ldx, 1, FW_NU, kn, j0 == 0,
                      acc + (t * 8 + j0) * G8);
}

/* The lanes of a canonical 8-lane group added in lane order (canon.h). */
static inline double hsum8(const vf64 *g)
{
    double s = 0.0;
    for (int v = 0; v < G8; v++)
        for (int l = 0; l < VL; l++) s += g[v][l];
    return s;
}

void galaxy_fused_forward(const galaxy_problem *p, const double *theta, const double *T1p, long t0,
                          int nb, double *Z)
{
    const int N = p->n_in, H = p->n_hid;
    const size_t N1 = (size_t)N + 1, ldx = galaxy_ldx(p);
    for (int t = 0; t < nb; t++)
        for (int h = 0; h < H; h++) Z[t * H + h] = theta[h * N1];          /* the bias column */
    /* The fast path (packed Theta1, a block of at most GALAXY_FUSED_BLOCK rows): FW_MR rows at a time,
     * vector sums kept across the k chunks in acc (GALAXY_FUSED_BLOCK x 8 canonical groups, 16 KB, per
     * group of 8 hidden units). Other shapes: galaxy_dot per row and hidden unit (same order, slower). */
    if (T1p && nb <= GALAXY_FUSED_BLOCK) {
        vf64 acc[GALAXY_FUSED_BLOCK * 8 * G8];
        const double *Tp = T1p;     /* the chunk's 8 x KC slice (16 KB, stays in L1 for the block) */
        for (int h0 = 0; h0 < H; h0 += 8) {
            for (int i = 0; i < nb * 8 * G8; i++) acc[i] = (vf64){0};
            for (int k0 = 0; k0 < N; k0 += KC, Tp += 8 * KC) {
                int kn = N - k0 < KC ? N - k0 : KC;
                dots_block(Tp, p->X + (size_t)t0 * ldx + k0, (int)ldx, nb, kn, acc);
            }
            for (int t = 0; t < nb; t++)
                for (int j = 0; j < 8; j++) Z[t * H + h0 + j] += hsum8(&acc[(t * 8 + j) * G8]);
        }
        return;
    }
    for (int t = 0; t < nb; t++)        /* the same sums, one at a time (canon.h's galaxy_dot) */
        for (int h = 0; h < H; h++)
            Z[t * H + h] += galaxy_dot(theta + h * N1 + 1, p->X + (size_t)(t0 + t) * ldx, N);
}

/* The block's output layer as whole-block passes (so the exp and log run a vector at a time): hidden
 * activations, output activations, the cost terms, then the per-row Theta2 gradient and delta2, each
 * in canon.h's order. */
void galaxy_fused_output(const galaxy_problem *p, const double *theta, long t0, int nb, const double *Z,
                         double *D, double *G2, double *J)
{
    const int H = p->n_hid, K = p->n_out;
    const double *T2 = theta + (size_t)H * (p->n_in + 1);
    double A2[GALAXY_FUSED_BLOCK * 64], A3[GALAXY_FUSED_BLOCK * 16], L[GALAXY_FUSED_BLOCK * 16];
    memcpy(A2, Z, (size_t)nb * H * sizeof *A2);
    galaxy_sigmoid_inplace(A2, nb * H);
    for (int t = 0; t < nb; t++)
        for (int o = 0; o < K; o++) A3[t * K + o] = galaxy_z3(T2, H, o, A2 + t * H);
    galaxy_sigmoid_inplace(A3, nb * K);
    for (int t = 0; t < nb; t++)
        for (int o = 0; o < K; o++) {
            double a3 = A3[t * K + o];
            L[t * K + o] = (o == p->y[t0 + t]) ? a3 : 1.0 - a3;
        }
    galaxy_log_inplace(L, nb * K);
    for (int i = 0; i < nb * K; i++) *J -= L[i];
    if (!G2) return;
    for (int t = 0; t < nb; t++) {
        const int y = p->y[t0 + t];
        const double *a2 = A2 + t * H;
        double d3[16];
        for (int o = 0; o < K; o++) d3[o] = A3[t * K + o] - (o == y);
        galaxy_g2_row(G2, H, K, d3, a2);
        for (int h = 0; h < H; h++) D[t * H + h] = galaxy_d2(T2, H, K, h, d3, a2[h]);
    }
}

/* The nu x (nv vectors of k) tile of G at column k, in registers while the nb rows of the block pass:
 * each broadcast of D feeds nv FMAs. When t < nbn the same lines of the next block's row t are
 * prefetched into L2 (see galaxy_fused_backward). */
static inline __attribute__((always_inline)) void
tile(const double *X, size_t ldx, int nb, const double *D, int H, double *G, size_t ld, int k, const int nv,
     const int nu, const double *Xn, int nbn)
{
    vf64 a[BW_NV][BW_NU];
    for (int v = 0; v < nv; v++)
        for (int j = 0; j < nu; j++) a[v][j] = vf64_load(G + j * ld + k + v * VL);
    for (int t = 0; t < nb; t++) {
        vf64 x[BW_NV];
        for (int v = 0; v < nv; v++) x[v] = vf64_load(X + (size_t)t * ldx + k + v * VL);
        if (t < nbn)
            for (int v = 0; v < nv; v++) __builtin_prefetch(Xn + (size_t)t * ldx + k + v * VL, 0, 2);
        for (int j = 0; j < nu; j++) {
            vf64 dv = vf64_splat(D[t * H + j]);
            SIMD_KEEP_IN_REG(dv);
            for (int v = 0; v < nv; v++) a[v][j] += dv * x[v];
        }
    }
    for (int v = 0; v < nv; v++)
        for (int j = 0; j < nu; j++) vf64_store(G + j * ld + k + v * VL, a[v][j]);
}

/* G[j] += sum_t d[t][j] x_t over the block, for hb (<= 8) hidden units; G rows have stride ld. The
 * next block's lines are prefetched by the first BW_NU units' pass only. */
static inline __attribute__((always_inline)) void
rank_update(const double *X, size_t ldx, int N, int nb, const double *D, int H, int hb, double *G, size_t ld,
            const double *Xn, int nbn)
{
    int k = 0;
    if (hb == 8) {
        for (; k + BW_NV * VL <= N; k += BW_NV * VL)
            for (int j0 = 0; j0 < 8; j0 += BW_NU)
                tile(X, ldx, nb, D + j0, H, G + j0 * ld, ld, k, BW_NV, BW_NU, Xn, j0 ? 0 : nbn);
        for (; k + VL <= N; k += VL)
            for (int j0 = 0; j0 < 8; j0 += BW_NU)
                tile(X, ldx, nb, D + j0, H, G + j0 * ld, ld, k, 1, BW_NU, Xn, j0 ? 0 : nbn);
    }
    for (; k + VL <= N; k += VL) {
        vf64 acc[8];
        for (int j = 0; j < hb; j++) acc[j] = vf64_load(G + j * ld + k);
        for (int t = 0; t < nb; t++) {
            vf64 xv = vf64_load(X + (size_t)t * ldx + k);
            for (int j = 0; j < hb; j++) acc[j] += D[t * H + j] * xv;
        }
        for (int j = 0; j < hb; j++) vf64_store(G + j * ld + k, acc[j]);
    }
    for (; k < N; k++)
        for (int j = 0; j < hb; j++) {
            double s = G[j * ld + k];
            for (int t = 0; t < nb; t++) s = galaxy_fma(D[t * H + j], X[(size_t)t * ldx + k], s);
            G[j * ld + k] = s;
        }
}

void galaxy_fused_backward(const galaxy_problem *p, long t0, int nb, const double *D, double *G1)
{
    const int N = p->n_in, H = p->n_hid;
    const size_t N1 = (size_t)N + 1;
    const size_t ldx = galaxy_ldx(p);
    const double *X = p->X + (size_t)t0 * ldx;
    for (int t = 0; t < nb; t++)
        for (int h = 0; h < H; h++) G1[h * N1] += D[t * H + h];              /* bias column */
    /* While this block's gradient is computed (from L2), the next block's rows are fetched into L2,
     * so the next forward does not wait on memory (by the first group of 8 hidden units only). */
    long left = p->m - (t0 + nb);
    int nbn = left < nb ? (int)left : nb;
    const double *Xn = X + (size_t)nb * ldx;
    for (int h0 = 0; h0 < H; h0 += 8) {
        if (H - h0 >= 8) rank_update(X, ldx, N, nb, D + h0, H, 8, G1 + h0 * N1 + 1, N1, Xn, h0 ? 0 : nbn);
        else rank_update(X, ldx, N, nb, D + h0, H, H - h0, G1 + h0 * N1 + 1, N1, Xn, 0);
    }
}

double galaxy_fused_segment(const galaxy_problem *p, const double *theta, const double *T1p, int s,
                            double *Z, double *G)
{
    const size_t off2 = (size_t)p->n_hid * (p->n_in + 1);
    long r0, r1;
    double J = 0.0;
    galaxy_segment_rows(p->m, s, &r0, &r1);
    for (long t0 = r0; t0 < r1; t0 += GALAXY_FUSED_BLOCK) {
        int nb = r1 - t0 < GALAXY_FUSED_BLOCK ? (int)(r1 - t0) : GALAXY_FUSED_BLOCK;
        galaxy_fused_forward(p, theta, T1p, t0, nb, Z);
        galaxy_fused_output(p, theta, t0, nb, Z, Z, G ? G + off2 : NULL, &J);
        if (G) galaxy_fused_backward(p, t0, nb, Z, G);
    }
    return J;
}

double galaxy_cost_simd(const galaxy_problem *p, const double *theta, double *ws)
{
    double *Z = galaxy_fused_slice(p, ws, 0);
    const double *T1p = galaxy_fused_pack(p, theta, Z);
    double J = 0.0;
    for (int s = 0; s < GALAXY_SEGMENTS; s++)  /* canon.h: segment sums, added in order */
        J += galaxy_fused_segment(p, theta, T1p, s, Z, NULL);
    return J / (double)p->m + galaxy_cost_reg(p, theta);
}

void galaxy_grad_simd(const galaxy_problem *p, const double *theta, double *grad, double *ws)
{
    const size_t nt = galaxy_n_theta(p);
    double *Z = galaxy_fused_slice(p, ws, 0), *G = galaxy_fused_seg(p, ws, 0); /* one segment at a time */
    const double *T1p = galaxy_fused_pack(p, theta, Z);
    memset(grad, 0, nt * sizeof *grad);
    memset(G, 0, nt * sizeof *G);
    for (int s = 0; s < GALAXY_SEGMENTS; s++) {
        galaxy_fused_segment(p, theta, T1p, s, Z, G);
        for (size_t i = 0; i < nt; i++) {    /* added in segment order; G zeroed for the next */
            grad[i] += G[i];
            G[i] = 0.0;
        }
    }
    galaxy_grad_finish(p, theta, grad);
}
