/*
 * kernels/galaxy/blas.c: the fused blocks with the two matrix products done by cblas_dgemm:
 * Z_b = X_b Theta1[:,1:]' (+ bias) and Theta1_grad[:,1:] += D_b' X_b, for BLOCK rows at a time so
 * X_b is still in cache for the second product. Built only when BLAS is found (kernels/galaxy/meson.build).
 */
#include "fused.h"
#include "kern_blas.h"

#include <cblas.h>
#include <string.h>

#define BLOCK GALAXY_FUSED_BLOCK

static void block_forward(const galaxy_problem *p, const double *theta, long t0, int nb, double *Z)
{
    const int N = p->n_in, H = p->n_hid;
    for (int t = 0; t < nb; t++)
        for (int h = 0; h < H; h++) Z[t * H + h] = theta[(size_t)h * (N + 1)];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, H, N, 1.0, p->X + (size_t)t0 * galaxy_ldx(p),
                (int)galaxy_ldx(p),
                theta + 1, N + 1, 1.0, Z, H);
}

double galaxy_cost_blas(const galaxy_problem *p, const double *theta, double *ws, int threads)
{
    kern_blas_threads(threads);
    double J = 0.0, *Z = galaxy_fused_slice(p, ws, 0);
    for (long t0 = 0; t0 < p->m; t0 += BLOCK) {
        int nb = p->m - t0 < BLOCK ? (int)(p->m - t0) : BLOCK;
        block_forward(p, theta, t0, nb, Z);
        galaxy_fused_output(p, theta, t0, nb, Z, NULL, NULL, &J);
    }
    return J / (double)p->m + galaxy_cost_reg(p, theta);
}

void galaxy_grad_blas(const galaxy_problem *p, const double *theta, double *grad, double *ws, int threads)
{
    kern_blas_threads(threads);
    const int N = p->n_in, H = p->n_hid;
    double J = 0.0, *Z = galaxy_fused_slice(p, ws, 0);  /* (the cost sum is not needed here) */
    memset(grad, 0, galaxy_n_theta(p) * sizeof *grad);
    for (long t0 = 0; t0 < p->m; t0 += BLOCK) {
        int nb = p->m - t0 < BLOCK ? (int)(p->m - t0) : BLOCK;
        block_forward(p, theta, t0, nb, Z);
        galaxy_fused_output(p, theta, t0, nb, Z, Z, grad + (size_t)H * (N + 1), &J);
        for (int t = 0; t < nb; t++)
            for (int h = 0; h < H; h++) grad[(size_t)h * (N + 1)] += Z[t * H + h];
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, H, N, nb, 1.0, Z, H,
                    p->X + (size_t)t0 * galaxy_ldx(p), (int)galaxy_ldx(p), 1.0, grad + 1, N + 1);
    }
    galaxy_grad_finish(p, theta, grad);
}
