/*
 * kernels/cnn/cnn_simd_bwd.h: the backward convolution of simd.c and omp.c (cnn_simd.h has the forward,
 * the work area and the dense layers). Internal to kernels/cnn; everything is static inline. Per image:
 *
 * dz = dy * (y > 0): one flat pass over y and dy (written back into dy, summed into db), then dz copied
 * into the layouts below from L1; fused with the pool (cnns_pool_conv_backward_range), dz is built from
 * the pooled gradient instead (cnns_dz_unpool).
 *
 * Backward data (cnns_dx_image): at AVX-512 and SSE cnn_simd.h's forward convolution run on dz
 * zero-padded by k-1 on every side, with the weights transposed (cin <-> cout) and flipped (ky, kx ->
 * k-1-ky, k-1-kx): the "full" correlation; at AVX2 a scatter of dz's positions by tap, which does not
 * multiply the padding's zeros.
 *
 * Backward weights, dW[co][ci][ky][kx] = sum over images and output positions p of
 * dz[co][p] x[ci][p + (ky, kx)], summed per thread into accumulators in its work area (omp's threads
 * never write the same gradient), two ways chosen by the output channel count:
 *   channel lanes (cout >= CW = 16, conv2): dz transposed to positions x channels, the vector lanes are
 *     16 output channels and x is broadcast; a tile of GR rows (ci, ky) x 3 taps kx x CL vectors of
 *     channels (AVX-512: 8 x 3 x 1 = 24 accumulators; AVX2: 2 x 3 x 2 = 12) runs over the valid
 *     positions only. conv2 at batch 512: 1.3 ms, where position lanes took 1.9 (Zen 5, AVX-512).
 *   position lanes (fewer channels, conv1: 8, half an AVX-512 vector): the lanes are the forward's wide
 *     positions, dz is copied into that layout (zero in the dropped columns, which then add nothing) and
 *     x is read as the forward reads it; a tile of WC channels x GR rows x 3 taps (AVX-512: 3 x 3 x 3 =
 *     27 accumulators; AVX2: 2 x 2 x 3 = 12) keeps one vector per (channel, tap), added up lane by lane
 *     once, at the end. conv1: 1.3 ms, where channel lanes took 2.4 (half the lanes idle, and the
 *     transpose of 676 positions per channel per image).
 * conv1's shape at AVX2 has a third way in the fused backward, pooling windows as the lanes, reading the
 * pooled gradient in its own planes (cnn_conv1_simd.h), which builds no dz plane.
 * Both sum CNNS_NB images per tile before storing the accumulators (position lanes: 72 KB of them for a
 * 16-channel layer, L2 not L1; 4 images took 2.1 ms for conv2 where 1 took 2.5).
 *
 * The times in this file: one layer's call at batch 512, one thread, AVX-512, on a 2-vCPU Zen 5 VM
 * (shared, so noisy), taken to choose between two forms; they are comparisons, not current figures.
 * To time the layers again: `ninja -C build kernels/cnn_layers && build/kernels/cnn_layers 1`.
 */
#ifndef SL_KERNELS_CNN_SIMD_BWD_H
#define SL_KERNELS_CNN_SIMD_BWD_H

#include "cnn_simd.h"

#define CNNS_GRC (SIMD_NREGS >= 32 ? 8 / CNNS_CL : 2) /* channel lanes: rows (ci, ky) per tile */
#ifndef CNNS_WC
#define CNNS_WC (CNNS_BIG_TILES ? 3 : 2)  /* position lanes: output channels ... */
#endif
#ifndef CNNS_GRP
#define CNNS_GRP (CNNS_BIG_TILES ? 3 : 2) /* ... x rows (ci, ky) per tile */
#endif
#define CNNS_KXC 3                          /* taps kx per tile, both ways */
#if defined(__GNUC__) && !defined(__clang__)
#define CNNS_NO_PCOM __attribute__((optimize("no-predictive-commoning"))) /* GCC's, see cnns_cgrad */
#else
#define CNNS_NO_PCOM
#endif

/* ---- dz ----------------------------------------------------------------------------------------------- */

/* dy = dz = dy * (y > 0) over one image's cout x P floats, db[co] += each channel's sum (in lane order,
 * a fixed order), and when dzt is not NULL dz transposed into it (position p, channel co at
 * dzt[p ldz + co]). The first and only pass over y and dy, which come from memory (conv1's are 11 MB
 * each at batch 512). */
static inline void cnns_dz_flat(const cnn_conv *c, const float *y, float *dy, float *db, float *dzt, size_t ldz)
{
    const int P = cnn_conv_ho(c) * cnn_conv_wo(c);
    for (int co = 0; co < c->cout; co++) {
        float *d = dy + (size_t)co * P;
        const float *yy = y + (size_t)co * P;
        vf32 s = {0};
        int p = 0;
        for (; p + CNNS_VL <= P; p += CNNS_VL) {
            vf32 z = (vf32)((vi32)vf32_load(d + p) & (vf32_load(yy + p) > 0.0f));
            vf32_store(d + p, z);
            s += z;
            if (dzt)
                for (int l = 0; l < CNNS_VL; l++)
                    dzt[(size_t)(p + l) * ldz + co] = z[l];
        }
        float st = 0.0f;
        for (; p < P; p++) {
            d[p] = yy[p] > 0.0f ? d[p] : 0.0f;
            st += d[p];
            if (dzt)
                dzt[(size_t)p * ldz + co] = d[p];
        }
        db[co] += vf32_hsum(s) + st;
    }
}

/* One image's dz (cnns_dz_flat's, read back from L1) copied row by row into the planes of the wide
 * layout (cnns_dzw; planes at dzw + co plane, row 0 after k - 1 zero rows). A row's last vector has its
 * lanes past wo zeroed and is stored whole: the zeros land on columns or rows that must be zero or on
 * places a later row overwrites; only where a vector would read past the image's dz does a row go lane
 * by lane. Run after the flat pass over the whole image, not per channel: a load spanning two recent
 * unaligned stores waits for them to reach the cache, and fused per channel these waits cost more than
 * the weight gradient. */
static inline void cnns_dz_rows(const cnn_conv *c, const float *dz, float *dzw, size_t plane)
{
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), P = ho * wo;
    const size_t end = (size_t)c->cout * P;
    vi32 lane;
    for (int l = 0; l < CNNS_VL; l++)
        lane[l] = l;
    for (int co = 0; co < c->cout; co++)
        for (int oy = 0; oy < ho; oy++) {
            const size_t at = (size_t)co * P + (size_t)oy * wo;
            float *zw = dzw + co * plane + (size_t)(oy + c->k - 1) * c->w;
            for (int j = 0; j < wo; j += CNNS_VL) {
                if (at + j + CNNS_VL > end) { /* the image's last floats */
                    for (int l = j; l < wo; l++)
                        zw[l] = dz[at + l];
                    break;
                }
                vf32_store(zw + j, (vf32)((vi32)vf32_load(dz + at + j) & (lane < wo - j)));
            }
        }
}

/* d where p > 0, else 0, by a mask: a branch on the sign of a ReLU output is mispredicted about half the
 * time, and conv2's dz takes this path for each of its 400 windows per image. */
static inline float cnns_if_positive(float p, float d)
{
    uint32_t bits;
    memcpy(&bits, &d, sizeof bits);
    bits &= -(uint32_t)(p > 0.0f);
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Whether cnns_dz_unpool can write the wide planes by whole vectors: a pooled row's L windows fill 2L
 * columns of two output rows, so the stores of a row cover 2 up(pw, L) columns, which must reach w (every
 * column written, the ones past the windows with zeros), and what they spill past the last row, zeros,
 * must stay inside the plane's bottom padding (k - 1 rows and L floats). */
static inline int cnns_unpool_by_vectors(const cnn_conv *c)
{
    const size_t cover = 2 * cnns_up((size_t)(cnn_conv_wo(c) / 2), CNNS_VL), w = (size_t)c->w;
    return cover >= w && cover - w <= (size_t)(c->k - 1) * w + CNNS_VL;
}

/* One image's dz from the gradient of its pooled output (a convolution fused with its 2x2 max pool,
 * cnns_conv_pool_forward_range): dz = dp at each window's winner (arg) where the pooled value pv (the
 * winner's output, after the ReLU) is > 0, 0 everywhere else; db[co] += each channel's sum. Written,
 * zeros included, into dzt (channel lanes, as cnns_dz_flat's) and/or the wide planes from zw (as
 * cnns_dz_rows's). This replaces the pool's backward (a memset and a scatter over the whole output, 11 MB
 * for conv1 at batch 512) and the pass over y and dy that applied the ReLU: the image's dz is built in L1
 * from its pooled gradient (lim: how many of pv, arg and dp may be read from the image's start). The
 * wide planes alone (position lanes: conv1) by vectors where
 * cnns_unpool_by_vectors allows: L windows at a time, each winner's value selected into one of four vectors (its place in the
 * window), interleaved into the two output rows' 2L columns and stored whole, row after row (a row's
 * zeros that spill into the next row are overwritten by it); an odd last row (dropped by the pool) is
 * cleared (conv1 at batch 512: 2.2 ms for its backward, 3.3 one window at a time). Otherwise one window
 * at a time: with dzt (channel lanes: conv2) the vector stores made conv2's backward slower (5.7 ms
 * against 5.2), its input gradient reading the planes right after they are written. */
CNNS_ALWAYS_INLINE void cnns_dz_unpool(const cnn_conv *c, const float *pv, const uint8_t *arg, const float *dp,
                                      size_t lim, float *db, float *dzt, size_t ldz, float *zw, size_t plane)
{
    const int ho = cnn_conv_ho(c), wo = cnn_conv_wo(c), ph = ho / 2, pw = wo / 2, k1 = c->k - 1;
    const int vec = zw && !dzt && cnns_unpool_by_vectors(c);
    if (dzt)
        memset(dzt, 0, (size_t)ho * wo * ldz * sizeof(float));
    vi32 lane;
    for (int l = 0; l < CNNS_VL; l++)
        lane[l] = l;
    for (int co = 0; co < c->cout; co++) {
        const size_t at = (size_t)co * ph * pw;
        float *zc = zw ? zw + co * plane + (size_t)k1 * c->w : NULL;
        float s = 0.0f;
        if (vec) {
            vf32 sv = {0};
            for (int i = 0; i < ph; i++)
                for (int r = 0; r < 2; r++) { /* the top row whole, then the bottom one, which its spill reaches */
                    float *row = zc + (size_t)(2 * i + r) * c->w;
                    for (int j = 0; j < pw; j += CNNS_VL) {
                        const size_t e = at + (size_t)i * pw + j;
                        const int n = pw - j < CNNS_VL ? pw - j : CNNS_VL;
                        cnns_vu8 bytes = {0};
                        vf32 d, p;
                        if (e + CNNS_VL <= lim) { /* whole vectors, the lanes past n masked below */
                            memcpy(&bytes, arg + e, sizeof bytes);
                            d = vf32_load(dp + e), p = vf32_load(pv + e);
                        } else { /* the batch's last floats: lane by lane (through memory, slow) */
                            memcpy(&bytes, arg + e, (size_t)n);
                            d = vf32_load_n(dp + e, n), p = vf32_load_n(pv + e, n);
                        }
                        const vi32 in = lane < n;
                        vi32 a = __builtin_convertvector(bytes, vi32);
                        a = (a & in) | (4 & ~in); /* past the row: no winner, zeros (v too, for db) */
                        vi32 v = (vi32)d & (p > 0.0f) & in;
                        if (r == 0)
                            sv += (vf32)v;
                        vf32 left = (vf32)(v & (a == 2 * r)), right = (vf32)(v & (a == 2 * r + 1));
                        vf32_store(row + 2 * j, cnns_zip(left, right, 0));
                        vf32_store(row + 2 * j + CNNS_VL, cnns_zip(left, right, 1));
                    }
                }
            if (ho & 1)
                memset(zc + (size_t)(ho - 1) * c->w, 0, (size_t)c->w * sizeof(float));
            s = vf32_hsum(sv);
        } else if (zc)
            memset(zc, 0, (size_t)ho * c->w * sizeof(float));
        if (!vec || dzt)
            for (int i = 0; i < ph; i++)
                for (int j = 0; j < pw; j++) {
                    const size_t e = at + (size_t)i * pw + j;
                    const float v = cnns_if_positive(pv[e], dp[e]);
                    const int a = arg[e], oy = 2 * i + (a >> 1), ox = 2 * j + (a & 1);
                    if (!vec) {
                        s += v;
                        if (zc)
                            zc[(size_t)oy * c->w + ox] = v;
                    }
                    if (dzt)
                        dzt[((size_t)oy * wo + ox) * ldz + co] = v;
                }
        db[co] += s;
    }
}

/* ---- weight gradient ------------------------------------------------------------------------------- */

/* A chunk of nb images' weight-gradient operands: x (image n at x[n], the forward's layout), dz (image
 * n at dz + n dzs: transposed with ldz channels, or in the wide layout with ldq floats per channel, dz
 * pointing at channel 0's first row), and the accumulators acc (channel lanes: dW^T, taps x ldz;
 * position lanes: vector (t cout + co) at acc + (t cout + co) L). Tap t = (ci k + ky) k + kx, row
 * r = ci k + ky. */
typedef struct cnns_wop {
    const float *x[CNNS_NB];
    int nb;
    size_t cs, rs;
    int k, cout, ho, wo, nq;
    const float *dz;
    size_t dzs, ldz, ldq;
    float *acc;
} cnns_wop;

/* Channel lanes: dW^T of taps (row r0 + g, kx0 + j), g < gr, j < kc, channels cb..cb+CW-1, += the
 * chunk's sums over valid positions. */
CNNS_ALWAYS_INLINE void cnns_ctile(const int gr, const int kc, const cnns_wop *o, int r0, int kx0, int cb)
{
    vf32 acc[CNNS_GRC][CNNS_KXC][CNNS_CL];
    float *dst = o->acc + ((size_t)r0 * o->k + kx0) * o->ldz + cb;
    for (int g = 0; g < gr; g++)
        for (int j = 0; j < kc; j++)
            for (int v = 0; v < CNNS_CL; v++)
                acc[g][j][v] = vf32_load(dst + ((size_t)g * o->k + j) * o->ldz + v * CNNS_VL);
    for (int n = 0; n < o->nb; n++) {
        const float *xr[CNNS_GRC];
        for (int g = 0; g < gr; g++)
            xr[g] = o->x[n] + (size_t)((r0 + g) / o->k) * o->cs + (size_t)((r0 + g) % o->k) * o->rs + kx0;
        const float *dz = o->dz + n * o->dzs + cb;
        for (int oy = 0; oy < o->ho; oy++)
            for (int ox = 0; ox < o->wo; ox++, dz += o->ldz) {
                const size_t at = (size_t)oy * o->rs + ox;
                vf32 dv[CNNS_CL];
                for (int v = 0; v < CNNS_CL; v++)
                    dv[v] = vf32_load(dz + v * CNNS_VL);
                for (int g = 0; g < gr; g++)
                    for (int j = 0; j < kc; j++)
                        for (int v = 0; v < CNNS_CL; v++)
                            acc[g][j][v] += xr[g][at + j] * dv[v];
            }
    }
    for (int g = 0; g < gr; g++)
        for (int j = 0; j < kc; j++)
            for (int v = 0; v < CNNS_CL; v++)
                vf32_store(dst + ((size_t)g * o->k + j) * o->ldz + v * CNNS_VL, acc[g][j][v]);
}

/* Position lanes: the vectors of channels co0..co0+mc-1 x taps (row r0 + g, kx0 + j), g < gr, j < kc,
 * += the chunk's products, lane by lane over the wide positions. */
CNNS_ALWAYS_INLINE void cnns_ptile(const int mc, const int gr, const int kc, const cnns_wop *o, int co0,
                                   int r0, int kx0)
{
    vf32 acc[CNNS_WC][CNNS_GRP][CNNS_KXC];
    float *vp[CNNS_GRP][CNNS_KXC];
    for (int g = 0; g < gr; g++)
        for (int j = 0; j < kc; j++) {
            vp[g][j] = o->acc + ((size_t)((r0 + g) * o->k + kx0 + j) * o->cout + co0) * CNNS_VL;
            for (int m = 0; m < mc; m++)
                acc[m][g][j] = vf32_load(vp[g][j] + m * CNNS_VL);
        }
    for (int n = 0; n < o->nb; n++) {
        const float *xr[CNNS_GRP];
        for (int g = 0; g < gr; g++)
            xr[g] = o->x[n] + (size_t)((r0 + g) / o->k) * o->cs + (size_t)((r0 + g) % o->k) * o->rs + kx0;
        const float *dz = o->dz + n * o->dzs + (size_t)co0 * o->ldq;
        for (int q = 0; q < o->nq * CNNS_VL; q += CNNS_VL) {
            vf32 dv[CNNS_WC];
            for (int m = 0; m < mc; m++)
                dv[m] = vf32_load(dz + m * o->ldq + q);
            for (int g = 0; g < gr; g++)
                for (int j = 0; j < kc; j++) {
                    vf32 xv = vf32_load(xr[g] + q + j);
                    SIMD_KEEP_IN_REG(xv); /* one load, not one folded into each of mc FMAs */
                    for (int m = 0; m < mc; m++)
                        acc[m][g][j] += dv[m] * xv;
                }
        }
    }
    for (int g = 0; g < gr; g++)
        for (int j = 0; j < kc; j++)
            for (int m = 0; m < mc; m++)
                vf32_store(vp[g][j] + m * CNNS_VL, acc[m][g][j]);
}

/* Channel lanes: every kx of gr rows from r, in chunks of 3, then 2, 1 (sizes fixed at compile time). */
CNNS_ALWAYS_INLINE void cnns_ctaps(const int gr, const cnns_wop *o, int r, int cb)
{
    int kx = 0;
    for (; kx + CNNS_KXC <= o->k; kx += CNNS_KXC)
        cnns_ctile(gr, CNNS_KXC, o, r, kx, cb);
    if (kx + 2 <= o->k) {
        cnns_ctile(gr, 2, o, r, kx, cb);
        kx += 2;
    }
    if (kx < o->k)
        cnns_ctile(gr, 1, o, r, kx, cb);
}

/* Position lanes: the same for mc channels from co. */
CNNS_ALWAYS_INLINE void cnns_ptaps(const int mc, const int gr, const cnns_wop *o, int co, int r)
{
    int kx = 0;
    for (; kx + CNNS_KXC <= o->k; kx += CNNS_KXC)
        cnns_ptile(mc, gr, CNNS_KXC, o, co, r, kx);
    if (kx + 2 <= o->k) {
        cnns_ptile(mc, gr, 2, o, co, r, kx);
        kx += 2;
    }
    if (kx < o->k)
        cnns_ptile(mc, gr, 1, o, co, r, kx);
}

/* Channel lanes: rows (ci, ky) in blocks of GRC, then 4, 2, 1, for each block of CW channels. Without
 * GCC's predictive commoning (-O3), which sees that tap kx + 1 at position ox is tap kx at ox + 1 and
 * carries the 16 such inputs of a tile from one position to the next in scalar registers it does not
 * have, spilling them: 1.33 ms for conv2 at batch 512 with it, 0.96 without (one thread, AVX-512). */
CNNS_NO_PCOM static inline void cnns_cgrad(const cnns_wop *o, int rows)
{
    for (int cb = 0; cb < o->cout; cb += CNNS_CW) {
        int r = 0;
        for (; r + CNNS_GRC <= rows; r += CNNS_GRC)
            cnns_ctaps(CNNS_GRC, o, r, cb);
#if CNNS_GRC > 4
        if (r + 4 <= rows) {
            cnns_ctaps(4, o, r, cb);
            r += 4;
        }
#endif
#if CNNS_GRC > 2
        if (r + 2 <= rows) {
            cnns_ctaps(2, o, r, cb);
            r += 2;
        }
#endif
        for (; r < rows; r++)
            cnns_ctaps(1, o, r, cb);
    }
}

/* Position lanes: rows in blocks of GRP, then 2, 1, for mc channels from co. */
CNNS_ALWAYS_INLINE void cnns_prows(const int mc, const cnns_wop *o, int co, int rows)
{
    int r = 0;
    for (; r + CNNS_GRP <= rows; r += CNNS_GRP)
        cnns_ptaps(mc, CNNS_GRP, o, co, r);
#if CNNS_GRP > 2
    if (r + 2 <= rows) {
        cnns_ptaps(mc, 2, o, co, r);
        r += 2;
    }
#endif
    for (; r < rows; r++)
        cnns_ptaps(mc, 1, o, co, r);
}

/* Position lanes: channels in blocks of WC, then 2, 1. */
static inline void cnns_pgrad(const cnns_wop *o, int rows)
{
    int co = 0;
    for (; co + CNNS_WC <= o->cout; co += CNNS_WC)
        cnns_prows(CNNS_WC, o, co, rows);
#if CNNS_WC > 2
    if (co + 2 <= o->cout) {
        cnns_prows(2, o, co, rows);
        co += 2;
    }
#endif
    for (; co < o->cout; co++)
        cnns_prows(1, o, co, rows);
}

/* part (cout x taps, dw's order) = the accumulators' sums: dW^T transposed, or each vector's lanes added
 * in lane order (once, at the end of the range). */
static inline void cnns_wgrad_out(const cnn_conv *c, const float *acc, int pos, float *part)
{
    const int taps = c->cin * c->k * c->k;
    const size_t ldz = cnns_up((size_t)c->cout, CNNS_CW);
    for (int t = 0; t < taps; t++)
        for (int co = 0; co < c->cout; co++)
            part[(size_t)co * taps + t] = pos ? vf32_hsum(vf32_load(acc + ((size_t)t * c->cout + co) * CNNS_VL))
                                              : acc[(size_t)t * ldz + co];
}

/* ---- the backward of a range of images ------------------------------------------------------------- */

/* The data gradient of one image from its dz in the wide layout (zw: cnns_dzw's block), into dx through
 * the wide buffer dxwide (cnns_dx_ldo floats per channel); wp: the weights as cnns_pack_dx packed them.
 *
 * Gather (AVX-512, SSE and the other targets): the forward convolution of the padded dz with the flipped, transposed weights, at
 * positions q = iy w + ix: tap (ky, kx) of the flipped kernel reads dz row iy - (k-1) + ky, column
 * ix - (k-1) + kx, which is q + ky w + kx - (k-1) from row 0 of the padding, and a column before 0 lands
 * on the previous row's zero columns (w - wo = k - 1 of them). So every position is a valid one: 169 of
 * 176 lanes kept for conv2, against 169 of 208 with dz padded on every side (1.3 ms of conv2's backward
 * then). But of its taps, those that read the padding add zeros: conv2 executes 176 x 9 lane-taps per
 * channel pair for 121 x 9 that count.
 *
 * Scatter (AVX2): each of dz's positions q (oy w + ox: 144 lanes for conv2's 121, its zero columns
 * included) adds W[co][ci][ky][kx] dz[co][q] to dx at q + ky w + kx, a shift by the tap. Per tap, a tile
 * of MR input channels x DXNV vectors of q sums the cout channels in registers, then adds into dxwide
 * at the tap's shift. At AVX2, 4 x 3: 12 accumulators, 3 dz vectors and 4 broadcast weights loaded per
 * 12 FMAs, 16 registers in all, where 4 x 2 has 8 accumulators (just the 8 chains that two pipes of
 * 4-cycle FMAs need, over a reduction of only cout = 16 steps) and loads 6 per 8. In the layer the two
 * take the same time: `build/kernels/cnn_layers 1`, conv2+pool2 backward, against a build configured
 * with -Dc_args=-DCNNS_DXNV=2, median ratio 1.00 over 11 interleaved pairs (one thread, a 2-vCPU Zen 3
 * VM). The taps are the outer loop, so a tile's read-modify-write does not meet
 * the previous tap's stores to overlapping, differently aligned places (a load spanning two recent
 * unaligned stores waits for them) once a tap sweeps more than one tile (conv2: 6).
 * A fifth less work for conv2 than the gather (144 lanes a tap for its 176); its conv2+pool2 backward
 * at batch 512, one thread, a Zen 3 VM: `build/kernels/cnn_layers 1` 4.29 ms against 4.58 in a build
 * with -Dc_args=-DCNNS_DX_SCATTER=0 (medians of 3 interleaved runs, with the 4 x 2 tile). */
#if CNNS_DX_SCATTER
#ifndef CNNS_DXNV
#define CNNS_DXNV 3 /* vectors of q per tile (at most 3: 4 x 3 accumulators and 4 operands fill 16 registers) */
#endif
CNNS_ALWAYS_INLINE void cnns_dx_tile(const int mr, const int nv, const cnn_conv *c, const float *dz, size_t plane,
                                     const float *wt, float *o, size_t ldo)
{
    vf32 acc[CNNS_MR][CNNS_DXNV];
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++)
            acc[i][v] = (vf32){0};
    for (int co = 0; co < c->cout; co++, dz += plane, wt += mr) {
        vf32 x[CNNS_DXNV];
        for (int v = 0; v < nv; v++) {
            x[v] = vf32_load(dz + v * CNNS_VL);
            SIMD_KEEP_IN_REG(x[v]); /* one load each, not one folded into each of mr FMAs */
        }
        for (int i = 0; i < mr; i++) {
            vf32 wv = vf32_bcast(wt + i);
            SIMD_KEEP_IN_REG(wv);
            for (int v = 0; v < nv; v++)
                acc[i][v] += wv * x[v];
        }
    }
    for (int i = 0; i < mr; i++)
        for (int v = 0; v < nv; v++) {
            float *p = o + (size_t)i * ldo + v * CNNS_VL;
            vf32_store(p, vf32_load(p) + acc[i][v]);
        }
}

/* Every tile of mr input channels from ci for tap t: CNNS_DXNV vectors of q at a time, then a pair and the
 * odd one for what is left (conv2: nq = 18, no tail; the odd shapes of tests/cnn/test_cnn_kernels.c have both). */
CNNS_ALWAYS_INLINE void cnns_dx_taps(const int mr, const cnn_conv *c, const float *dz0, size_t plane,
                                     const float *wp, int ci, float *dxwide, size_t ldo, int nq)
{
    const int k = c->k, w = c->w;
    for (int t = 0; t < k * k; t++) {
        const float *wt = wp + ((size_t)ci * k * k + (size_t)t * mr) * c->cout;
        float *o = dxwide + (size_t)ci * ldo + (size_t)(t / k) * w + (size_t)(t % k);
        int q = 0;
        for (; q + CNNS_DXNV <= nq; q += CNNS_DXNV)
            cnns_dx_tile(mr, CNNS_DXNV, c, dz0 + (size_t)q * CNNS_VL, plane, wt, o + (size_t)q * CNNS_VL, ldo);
#if CNNS_DXNV > 2
        if (q + 2 <= nq) {
            cnns_dx_tile(mr, 2, c, dz0 + (size_t)q * CNNS_VL, plane, wt, o + (size_t)q * CNNS_VL, ldo);
            q += 2;
        }
#endif
        if (q < nq)
            cnns_dx_tile(mr, 1, c, dz0 + (size_t)q * CNNS_VL, plane, wt, o + (size_t)q * CNNS_VL, ldo);
    }
}

static inline void cnns_dx_image(const cnn_conv *c, const float *zw, const float *wp, float *dxwide, float *dx)
{
    const cnns_dzw z = cnns_dzw_of(c);
    const size_t ldo = cnns_dx_ldo(c);
    const int nq = (int)(cnns_up((size_t)cnn_conv_ho(c) * c->w, CNNS_VL) / CNNS_VL);
    const float *dz0 = zw + z.margin + (size_t)(c->k - 1) * c->w; /* dz's row 0 (below its k - 1 zero rows) */
    memset(dxwide, 0, (size_t)c->cin * ldo * sizeof(float));
    for (int ci = 0, mr; ci < c->cin; ci += mr) {
        mr = cnns_rows_at(ci, c->cin);
        if (mr == CNNS_MR)
            cnns_dx_taps(CNNS_MR, c, dz0, z.plane, wp, ci, dxwide, ldo, nq);
#if CNNS_MR > 4
        else if (mr == 4)
            cnns_dx_taps(4, c, dz0, z.plane, wp, ci, dxwide, ldo, nq);
#endif
        else if (mr == 2)
            cnns_dx_taps(2, c, dz0, z.plane, wp, ci, dxwide, ldo, nq);
        else
            cnns_dx_taps(1, c, dz0, z.plane, wp, ci, dxwide, ldo, nq);
    }
    cnns_compact(dx, dxwide, c->cin, 1, c->h * c->w, ldo, 0);
}

/* The weights for cnns_dx_image: for input channels ci..ci+mr-1 (cnns_rows_at's tiles), tap t, channel
 * co, the mr weights W[co][ci + i][t] adjacent, at wp + (ci k k + t mr) cout + co mr. */
static inline void cnns_pack_dx(const float *W, int cout, int cin, int k, float *wp)
{
    const int kk = k * k;
    for (int ci = 0, mr; ci < cin; ci += mr) {
        mr = cnns_rows_at(ci, cin);
        for (int t = 0; t < kk; t++)
            for (int co = 0; co < cout; co++)
                for (int i = 0; i < mr; i++)
                    wp[((size_t)ci * kk + (size_t)t * mr) * cout + (size_t)co * mr + i] =
                        W[((size_t)co * cin + ci + i) * kk + t];
    }
}
#else
static inline void cnns_dx_image(const cnn_conv *c, const float *zw, const float *wp, float *dxwide, float *dx)
{
    const cnns_dzw z = cnns_dzw_of(c);
    const size_t hw = (size_t)c->h * c->w, ldo = cnns_up(hw, CNNS_VL);
    cnns_op od = {.src = zw + z.margin - (c->k - 1), .cs = z.plane, .rs = (size_t)c->w, .cin = c->cout, .k = c->k,
                  .cout = c->cin, .nq = (int)(ldo / CNNS_VL), .wp = wp, .bias = NULL, .relu = 0, .out = dxwide,
                  .ldo = ldo};
    cnns_conv_wide(&od);
    cnns_compact(dx, dxwide, c->cin, 1, (int)hw, ldo, 0);
}

static inline void cnns_pack_dx(const float *W, int cout, int cin, int k, float *wp)
{
    cnns_pack_w(W, cout, cin, k, 1, wp);
}
#endif

/* The backward's parts of one thread's work area and the weight-gradient operand over them, the same
 * for the plain and the pool-fused backward: the partial dw and db, the accumulators and dz's layouts
 * zeroed (dz's padding stays 0), and the flipped weights packed when dx is wanted. */
typedef struct cnns_bwd {
    cnns_area a;
    cnns_dzw z;
    int pos; /* position lanes (else channel lanes) */
    float *part, *dzt, *dzw, *dxwide, *xpad, *wp, *db;
    cnns_wop ow;
} cnns_bwd;

static inline void cnns_bwd_init(cnns_bwd *s, const cnn_conv *c, const float *W, int dx, float *area)
{
    const int k = c->k;
    s->a = cnns_area_of(c), s->z = cnns_dzw_of(c), s->pos = !cnns_channel_lanes(c);
    float *acc = area + s->a.part;
    s->part = area, s->dzt = acc + s->a.acc, s->dzw = s->dzt + s->a.dzt, s->dxwide = s->dzw + s->a.dzw;
    s->xpad = s->dxwide + s->a.dxwide, s->wp = s->xpad + s->a.xpad, s->db = area + (size_t)c->cin * k * k * c->cout;
    s->ow = (cnns_wop){.cs = (size_t)c->h * c->w, .rs = (size_t)c->w, .k = k, .cout = c->cout,
                       .ho = cnn_conv_ho(c), .wo = cnn_conv_wo(c),
                       .dz = s->pos ? s->dzw + s->z.margin + (size_t)(k - 1) * c->w : s->dzt,
                       .dzs = s->pos ? s->z.size : s->a.dzts, .ldz = cnns_up((size_t)c->cout, CNNS_CW),
                       .ldq = s->z.plane, .nq = (int)(cnns_up((size_t)cnn_conv_ho(c) * c->w, CNNS_VL) / CNNS_VL),
                       .acc = acc};
    memset(area, 0, (s->a.part + s->a.acc + s->a.dzt + s->a.dzw) * sizeof(float));
    if (dx)
        cnns_pack_dx(W, c->cout, c->cin, k, s->wp);
}

/* The weight gradient's sums over the chunk of s->ow.nb images whose dz is in place. */
static inline void cnns_bwd_chunk(const cnns_bwd *s, const cnn_conv *c)
{
    if (s->pos)
        cnns_pgrad(&s->ow, c->cin * c->k);
    else
        cnns_cgrad(&s->ow, c->cin * c->k);
}

/* Images b0..b1-1 of a batch of B: dy becomes dz (through the ReLU), the partial dw and db at the start
 * of area (cout x taps, then cout) are set to these images' sums, and these images' dx is written when
 * dx is not NULL. */
static inline void cnns_conv_backward_range(const cnn_conv *c, int B, const float *x, const float *W,
                                            const float *y, float *dy, float *dx, int b0, int b1, float *area)
{
    cnns_bwd s;
    cnns_bwd_init(&s, c, W, dx != NULL, area);
    const size_t in = (size_t)c->cin * c->h * c->w, out = cnn_conv_out(c);
    for (int b = b0; b < b1; b += CNNS_NB) {
        s.ow.nb = b1 - b < CNNS_NB ? b1 - b : CNNS_NB;
        for (int n = 0; n < s.ow.nb; n++) {
            float *dyn = dy + (size_t)(b + n) * out, *zw = s.dzw + (s.pos ? n * s.z.size : 0);
            cnns_dz_flat(c, y + (size_t)(b + n) * out, dyn, s.db, s.pos ? NULL : s.dzt + n * s.a.dzts, s.ow.ldz);
            if (s.pos || dx)
                cnns_dz_rows(c, dyn, zw + s.z.margin, s.z.plane);
            s.ow.x[n] = cnns_image(x, b + n, B, in, s.xpad, s.a.xpad);
            if (dx)
                cnns_dx_image(c, zw, s.wp, s.dxwide, dx + (size_t)(b + n) * in);
        }
        cnns_bwd_chunk(&s, c);
    }
    cnns_wgrad_out(c, s.ow.acc, s.pos, s.part);
}

/* The backward of cnns_conv_pool_forward_range for images b0..b1-1: from dp (the pooled output's
 * gradient, read only), pv and arg (the forward's pooled output and winners), the partial dw and db at the
 * start of area, and dx when not NULL; as cnns_conv_backward_range after the pool's backward. */
static inline void cnns_pool_conv_backward_range(const cnn_conv *c, int B, const float *x, const float *W,
                                                 const float *pv, const uint8_t *arg, const float *dp, float *dx,
                                                 int b0, int b1, float *area)
{
    if (cnns_conv1_window_lanes(c) && !dx) {
        cnns_c1_wgrad_range(c, x, pv, arg, dp, b0, b1, area);
        return;
    }
    cnns_bwd s;
    cnns_bwd_init(&s, c, W, dx != NULL, area);
    const size_t in = (size_t)c->cin * c->h * c->w;
    const size_t pout = (size_t)c->cout * (size_t)(cnn_conv_ho(c) / 2) * (size_t)(cnn_conv_wo(c) / 2);
    for (int b = b0; b < b1; b += CNNS_NB) {
        s.ow.nb = b1 - b < CNNS_NB ? b1 - b : CNNS_NB;
        for (int n = 0; n < s.ow.nb; n++) {
            const size_t e = (size_t)(b + n) * pout;
            float *zw = s.dzw + (s.pos ? n * s.z.size : 0);
            cnns_dz_unpool(c, pv + e, arg + e, dp + e, b + n == B - 1 ? pout : 2 * pout, s.db,
                           s.pos ? NULL : s.dzt + n * s.a.dzts, s.ow.ldz, s.pos || dx ? zw + s.z.margin : NULL,
                           s.z.plane);
            s.ow.x[n] = cnns_image(x, b + n, B, in, s.xpad, s.a.xpad);
            if (dx)
                cnns_dx_image(c, zw, s.wp, s.dxwide, dx + (size_t)(b + n) * in);
        }
        cnns_bwd_chunk(&s, c);
    }
    cnns_wgrad_out(c, s.ow.acc, s.pos, s.part);
}

/* dw and db for flat indices i0..i1-1 of (dw, then db): the sums of the nt partials (area t at
 * areas + t stride) in thread order, so that the result does not depend on timing. */
static inline void cnns_reduce(const cnn_conv *c, const float *areas, size_t stride, int nt, float *dw,
                               float *db, size_t i0, size_t i1)
{
    const size_t nw = (size_t)c->cin * c->k * c->k * (size_t)c->cout;
    for (size_t i = i0; i < i1; i++) {
        float s = 0.0f;
        for (int t = 0; t < nt; t++)
            s += areas[(size_t)t * stride + i];
        if (i < nw)
            dw[i] = s;
        else
            db[i - nw] = s;
    }
}

#endif
