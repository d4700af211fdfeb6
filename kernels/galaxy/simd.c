/*
 * kernels/galaxy/simd.c: the fused single-thread variant (the write-up's Cython step, in C: typed,
 * preallocated, vectorised) and the blocks the omp and blas variants share.
 *
 * Why blocked: the gradient reads X (2700 x 1024 doubles, 22 MB) twice in the matrix form (Z2 = X T1'
 * and G1 = D2' X). Doing both for GALAXY_FUSED_BLOCK rows at a time reads each row from memory once,
 * and while a block's Theta1 gradient runs (from L2) the next block's rows are prefetched into L2, so
 * the next forward does not wait on memory either.
 * Forward: Theta1 is packed once per call into aligned 8 x KC chunks; a chunk stays in L1 while every
 * row of the block passes over it, three rows per Theta1 load (24 vector accumulators); the sums stay
 * vectors across the chunks and are reduced once per row; X is also prefetched PF_ROWS rows ahead (a
 * row is read in KC-double pieces N doubles apart). Output layer: whole-block passes so exp and log run
 * eight at a time (canon.c). Theta1 gradient: a 3 x 8 register tile (3 vectors of k, 8 hidden units).
 * Every sum follows canon.h's order, so the result is default's, bit for bit.
 * docs/study-galaxy.md has the measurements of each step.
 */
#include "fused.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define KC GALAXY_KC /* canon.h: the chunk of the canonical sums */
#define PF_ROWS 4 /* the forward prefetches the rows this many ahead */
#if defined(__GNUC__) && !defined(__clang__)
/* The 8-double vectors only pass between static inline functions of this file, so GCC's note that
 * their ABI differs without AVX-512 does not matter here. */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
typedef double vd __attribute__((vector_size(64)));   /* 8 doubles; the compiler splits it as needed */
#define VL 8
/* GCC otherwise folds a loaded vector into each FMA that uses it (two loads instead of one); an empty
 * asm that "changes" the register keeps it there (the same trick as kernels/mlp/mlp_simd.h). */
#if defined(__GNUC__) && defined(__x86_64__) && defined(__AVX512F__)
#define KEEP_IN_REG(x) __asm__("" : "+v"(x))
#else
#define KEEP_IN_REG(x) ((void)0)
#endif

static inline vd vload(const double *p) { vd v; memcpy(&v, p, sizeof v); return v; }
static inline void vstore(double *p, const vd *v) { memcpy(p, v, sizeof *v); }
static inline double hsum(const vd *v)
{
    double s = 0.0;
    for (int l = 0; l < VL; l++) s += (*v)[l];
    return s;
}

/* Fast path of the forward: H a multiple of 8 and N of VL (the study's 1024-8-3 shape). */
static int packable(const galaxy_problem *p) { return p->n_hid % 8 == 0 && p->n_in % VL == 0; }

size_t galaxy_fused_slice_doubles(const galaxy_problem *p)
{
    size_t pack = (size_t)p->n_hid * ((size_t)p->n_in + KC) + 8;  /* chunks padded to KC, aligned */
    return (size_t)GALAXY_FUSED_BLOCK * (size_t)p->n_hid + pack + 8;
}

size_t galaxy_fused_ws_doubles(const galaxy_problem *p, int threads)
{
    if (threads < 1) threads = 1;
    return GALAXY_SEGMENTS * galaxy_n_theta(p) + (size_t)threads * galaxy_fused_slice_doubles(p) + 64;
}

double *galaxy_fused_slice(const galaxy_problem *p, double *ws, int thread)
{
    return ws + GALAXY_SEGMENTS * galaxy_n_theta(p) + (size_t)thread * galaxy_fused_slice_doubles(p);
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

/* nr (1 to 3) rows of X at once against 8 rows of T: each T load feeds nr FMAs (up to 24 accumulators
 * in registers, 11 loads per 24 FMAs). Row r is x + r * N. The sums stay vectors: they are added to
 * z[r * 8 + j] (in L1) at the end of a KC chunk and reduced to scalars once per row, after the last
 * chunk (a horizontal sum costs as much as 8 FMAs). */
static inline __attribute__((always_inline)) void
dots_rows(const double *T, size_t ld, const double *x, int N, int nr, int kn, vd *z)
{
    const ptrdiff_t pf = (ptrdiff_t)PF_ROWS * N;
    vd a[3][8];
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < 8; j++) a[r][j] = (vd){0};
    for (int k = 0; k < kn; k += VL) {
        vd u[3];
        for (int r = 0; r < nr; r++) {
            u[r] = vload(x + (size_t)r * N + k);
            __builtin_prefetch(x + (size_t)r * N + pf + k);
        }
        for (int j = 0; j < 8; j++) {
            vd tv = vload(T + j * ld + k);
            KEEP_IN_REG(tv);
            for (int r = 0; r < nr; r++) a[r][j] += tv * u[r];
        }
    }
    for (int r = 0; r < nr; r++)
        for (int j = 0; j < 8; j++) z[r * 8 + j] += a[r][j];
}

void galaxy_fused_forward(const galaxy_problem *p, const double *theta, const double *T1p, long t0,
                          int nb, double *Z)
{
    const int N = p->n_in, H = p->n_hid;
    const size_t N1 = (size_t)N + 1;
    for (int t = 0; t < nb; t++)
        for (int h = 0; h < H; h++) Z[t * H + h] = theta[h * N1];          /* the bias column */
    /* The fast path (packed Theta1, a block of at most GALAXY_FUSED_BLOCK rows): three rows at a time,
     * vector sums kept across the k chunks in acc (GALAXY_FUSED_BLOCK x 8 vectors, 16 KB, per group
     * of 8 hidden units). Other shapes: galaxy_dot per row and hidden unit (same order, slower). */
    if (T1p && nb <= GALAXY_FUSED_BLOCK) {
        vd acc[GALAXY_FUSED_BLOCK * 8];
        const double *Tp = T1p;     /* the chunk's 8 x KC slice (16 KB, stays in L1 for the block) */
        for (int h0 = 0; h0 < H; h0 += 8) {
            for (int i = 0; i < nb * 8; i++) acc[i] = (vd){0};
            for (int k0 = 0; k0 < N; k0 += KC, Tp += 8 * KC) {
                int kn = N - k0 < KC ? N - k0 : KC;
                int t = 0;
                for (; t + 3 <= nb; t += 3)
                    dots_rows(Tp, KC, p->X + (size_t)(t0 + t) * N + k0, N, 3, kn, acc + t * 8);
                for (; t + 2 <= nb; t += 2)
                    dots_rows(Tp, KC, p->X + (size_t)(t0 + t) * N + k0, N, 2, kn, acc + t * 8);
                if (t < nb)
                    dots_rows(Tp, KC, p->X + (size_t)(t0 + t) * N + k0, N, 1, kn, acc + t * 8);
            }
            for (int t = 0; t < nb; t++)
                for (int j = 0; j < 8; j++) Z[t * H + h0 + j] += hsum(&acc[t * 8 + j]);
        }
        return;
    }
    for (int t = 0; t < nb; t++)        /* the same sums, one at a time (canon.h's galaxy_dot) */
        for (int h = 0; h < H; h++)
            Z[t * H + h] += galaxy_dot(theta + h * N1 + 1, p->X + (size_t)(t0 + t) * N, N);
}

/* The block's output layer as whole-block passes (so the exp and log run eight at a time): hidden
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

/* The 8 x (nv vectors of k) tile of G at column k, in registers while the nb rows of the block pass:
 * each broadcast of D feeds nv FMAs (nv = 3: 24 accumulators, 11 loads per 24 FMAs). When t < nbn the
 * same lines of the next block's row t are prefetched into L2 (see galaxy_fused_backward). */
static inline __attribute__((always_inline)) void
tile8(const double *X, int N, int nb, const double *D, int H, double *G, size_t ld, int k, int nv,
      const double *Xn, int nbn)
{
    vd a[3][8];
    for (int v = 0; v < nv; v++)
        for (int j = 0; j < 8; j++) a[v][j] = vload(G + j * ld + k + v * VL);
    for (int t = 0; t < nb; t++) {
        vd x[3];
        for (int v = 0; v < nv; v++) x[v] = vload(X + (size_t)t * N + k + v * VL);
        if (t < nbn)
            for (int v = 0; v < nv; v++) __builtin_prefetch(Xn + (size_t)t * N + k + v * VL, 0, 2);
        for (int j = 0; j < 8; j++) {
            vd dv = (vd){0} + D[t * H + j];
            KEEP_IN_REG(dv);
            for (int v = 0; v < nv; v++) a[v][j] += dv * x[v];
        }
    }
    for (int v = 0; v < nv; v++)
        for (int j = 0; j < 8; j++) vstore(G + j * ld + k + v * VL, &a[v][j]);
}

/* G[j] += sum_t d[t][j] x_t over the block, for hb (<= 8) hidden units; G rows have stride ld. */
static inline __attribute__((always_inline)) void
rank_update(const double *X, int N, int nb, const double *D, int H, int hb, double *G, size_t ld,
            const double *Xn, int nbn)
{
    int k = 0;
    if (hb == 8) {
        for (; k + 3 * VL <= N; k += 3 * VL) tile8(X, N, nb, D, H, G, ld, k, 3, Xn, nbn);
        for (; k + 2 * VL <= N; k += 2 * VL) tile8(X, N, nb, D, H, G, ld, k, 2, Xn, nbn);
    }
    for (; k + VL <= N; k += VL) {
        vd acc[8];
        for (int j = 0; j < hb; j++) acc[j] = vload(G + j * ld + k);
        for (int t = 0; t < nb; t++) {
            vd xv = vload(X + (size_t)t * N + k);
            for (int j = 0; j < hb; j++) acc[j] += D[t * H + j] * xv;
        }
        for (int j = 0; j < hb; j++) vstore(G + j * ld + k, &acc[j]);
    }
    for (; k < N; k++)
        for (int j = 0; j < hb; j++) {
            double s = G[j * ld + k];
            for (int t = 0; t < nb; t++) s = fma(D[t * H + j], X[(size_t)t * N + k], s);
            G[j * ld + k] = s;
        }
}

void galaxy_fused_backward(const galaxy_problem *p, long t0, int nb, const double *D, double *G1)
{
    const int N = p->n_in, H = p->n_hid;
    const size_t N1 = (size_t)N + 1;
    const double *X = p->X + (size_t)t0 * N;
    for (int t = 0; t < nb; t++)
        for (int h = 0; h < H; h++) G1[h * N1] += D[t * H + h];              /* bias column */
    /* While this block's gradient is computed (from L2), the next block's rows are fetched into L2,
     * so the next forward does not wait on memory (by the first group of 8 hidden units only). */
    long left = p->m - (t0 + nb);
    int nbn = left < nb ? (int)left : nb;
    const double *Xn = X + (size_t)nb * N;
    for (int h0 = 0; h0 < H; h0 += 8) {
        if (H - h0 >= 8) rank_update(X, N, nb, D + h0, H, 8, G1 + h0 * N1 + 1, N1, Xn, h0 ? 0 : nbn);
        else rank_update(X, N, nb, D + h0, H, H - h0, G1 + h0 * N1 + 1, N1, Xn, 0);
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
    double *Z = galaxy_fused_slice(p, ws, 0), *G = ws;   /* G: one segment's sum at a time */
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
