/*
 * kernels/mlp/omp.c: simd's blocks (mlp_simd.h) shared among `threads` OpenMP threads, one parallel
 * region per call. How the work is cut, so that no thread ever adds into another's output:
 *   forward: by batch rows. A row's a1, a2 and z3 depend on that row only, so each thread runs all
 *            three layers on its rows with no barrier between them.
 *   backward, phase 1: by batch rows for the deltas d2 and d1 (again row-local), and by the input
 *            index k for dW3 (rows of dW3: each thread sums the whole batch for its rows, no reduction).
 *   backward, phase 2 (after the one barrier, since dW2 and dW1 need every row's d2 and d1): dW2 and
 *            dW1 by k, the bias sums by column.
 *   update (mlp_update_omp): each thread applies P -= lr G to exactly the rows and columns of G it
 *            wrote in phase 2, so the gradient never moves between the cores' caches. With the update
 *            on one thread, half of G (470 KB) crossed to the other core every step: on this VM that
 *            made the serial update 8x slower than simd's whenever the two vCPUs sat on different
 *            L3 slices, and omp slower than simd overall.
 * Ranges are equal even-sized parts (mlps_split): 32 + 32 of the study's 64 rows. Without OpenMP the
 * pragmas are ignored and the one thread takes every range: the same result as simd.
 */
#include "mlp.h"
#include "mlp_simd.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static int tid(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static int nthreads(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

void mlp_forward_omp(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, int threads)
{
    if (threads < 1)
        threads = 1;
    #pragma omp parallel num_threads(threads)
    {
        int r0, r1;
        mlps_split(B, tid(), nthreads(), &r0, &r1);
        mlps_forward_rows(d, P, X, ws, r0, r1);
    }
}

/* Column range of part t of nt for the bias sums (any cut will do: a few hundred adds each). */
static void cols(int n, int t, int nt, int *lo, int *hi)
{
    *lo = (int)((long)n * t / nt);
    *hi = (int)((long)n * (t + 1) / nt);
}

void mlp_backward_omp(const mlp_dims *d, const float *P, const float *X, int B, mlp_ws *ws, float *G,
                      int threads)
{
    mlp_layout L = mlp_layout_of(d);
    if (B <= 0) {
        memset(G, 0, L.n * sizeof(float));
        return;
    }
    if (threads < 1)
        threads = 1;
    #pragma omp parallel num_threads(threads)
    {
        int t = tid(), nt = nthreads(), lo, hi;
        /* phase 1: own batch rows of d2, then d1 (d1's rows need only the same rows of d2) */
        mlps_split(B, t, nt, &lo, &hi);
        mlps_delta_rows(ws->d3, P + L.W3, ws->a2, ws->d2, d->n2, d->n3, lo, hi);
        mlps_delta_rows(ws->d2, P + L.W2, ws->a1, ws->d1, d->n1, d->n2, lo, hi);
        mlps_split(d->n2, t, nt, &lo, &hi);
        mlps_wgrad_rows(ws->a2, ws->d3, G + L.W3, B, d->n2, d->n3, lo, hi);
        cols(d->n3, t, nt, &lo, &hi);
        mlps_colsum(ws->d3, G + L.b3, B, d->n3, lo, hi);
        #pragma omp barrier
        /* phase 2: every row of d2 and d1 is there */
        mlps_split(d->n1, t, nt, &lo, &hi);
        mlps_wgrad_rows(ws->a1, ws->d2, G + L.W2, B, d->n1, d->n2, lo, hi);
        mlps_split(d->n0, t, nt, &lo, &hi);
        mlps_wgrad_rows(X, ws->d1, G + L.W1, B, d->n0, d->n1, lo, hi);
        cols(d->n2, t, nt, &lo, &hi);
        mlps_colsum(ws->d2, G + L.b2, B, d->n2, lo, hi);
        cols(d->n1, t, nt, &lo, &hi);
        mlps_colsum(ws->d1, G + L.b1, B, d->n1, lo, hi);
    }
}

/* P -= lr G over rows lo..hi of a rows x cols block at offset off. */
static void sgd_rows(float *P, const float *G, size_t off, int cols, int lo, int hi, float lr)
{
    size_t a = off + (size_t)lo * cols, b = off + (size_t)hi * cols;
    for (size_t i = a; i < b; i++)
        P[i] -= lr * G[i];
}

void mlp_update_omp(const mlp_dims *d, float *P, const float *G, float lr, int threads)
{
    mlp_layout L = mlp_layout_of(d);
    if (threads < 1)
        threads = 1;
    #pragma omp parallel num_threads(threads)
    {
        int t = tid(), nt = nthreads(), lo, hi;
        /* the cuts of mlp_backward_omp, in the same order */
        mlps_split(d->n2, t, nt, &lo, &hi);
        sgd_rows(P, G, L.W3, d->n3, lo, hi, lr);
        cols(d->n3, t, nt, &lo, &hi);
        sgd_rows(P, G, L.b3, 1, lo, hi, lr);
        mlps_split(d->n1, t, nt, &lo, &hi);
        sgd_rows(P, G, L.W2, d->n2, lo, hi, lr);
        mlps_split(d->n0, t, nt, &lo, &hi);
        sgd_rows(P, G, L.W1, d->n1, lo, hi, lr);
        cols(d->n2, t, nt, &lo, &hi);
        sgd_rows(P, G, L.b2, 1, lo, hi, lr);
        cols(d->n1, t, nt, &lo, &hi);
        sgd_rows(P, G, L.b1, 1, lo, hi, lr);
    }
}
