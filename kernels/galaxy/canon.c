/*
 * kernels/galaxy/canon.c: the shared, order-fixing pieces of canon.h: exp and log (by glibc's libmvec at
 * the build's vector width, kernels/simd.h: 8 lanes with AVX-512, 4 with AVX2, 2 with SSE4; else libm
 * one by one; libmvec's widths may round differently, so bits can differ between ISA levels), and the
 * gradient's scaling and the cost's regularisation, used by every variant.
 */
#include "canon.h"

#include "simd.h"

#if SIMD_HAVE_VEXP
/* f over v[0..n), VF64_LANES at a time; the last partial vector is padded with 1.0 (any finite value),
 * so a value's result does not depend on where in the array it sits. */
static inline __attribute__((always_inline)) void map_lanes(double *v, int n, vf64 (*f)(vf64))
{
    int i = 0;
    for (; i + VF64_LANES <= n; i += VF64_LANES)
        vf64_store(v + i, f(vf64_load(v + i)));
    if (i < n) {
        vf64 x = vf64_splat(1.0);
        for (int l = 0; l < n - i; l++) x[l] = v[i + l];
        x = f(x);
        for (int l = 0; l < n - i; l++) v[i + l] = x[l];
    }
}
void galaxy_exp_inplace(double *v, int n) { map_lanes(v, n, vf64_exp); }
void galaxy_log_inplace(double *v, int n) { map_lanes(v, n, vf64_log); }
#else
void galaxy_exp_inplace(double *v, int n)
{
    for (int i = 0; i < n; i++) v[i] = exp(v[i]);
}
void galaxy_log_inplace(double *v, int n)
{
    for (int i = 0; i < n; i++) v[i] = log(v[i]);
}
#endif

void galaxy_sigmoid_inplace(double *v, int n)
{
    for (int i = 0; i < n; i++) v[i] = -v[i];
    galaxy_exp_inplace(v, n);
    for (int i = 0; i < n; i++) v[i] = 1.0 / (1.0 + v[i]);
}

double galaxy_cost_reg(const galaxy_problem *p, const double *theta)
{
    const int H = p->n_hid, K = p->n_out;
    const size_t N1 = (size_t)p->n_in + 1;
    double s = 0.0;
    for (int h = 0; h < H; h++)
        for (size_t k = 1; k < N1; k++) s = galaxy_fma(theta[h * N1 + k], theta[h * N1 + k], s);
    const double *T2 = theta + H * N1;
    for (int o = 0; o < K; o++)
        for (int h = 1; h <= H; h++) s = galaxy_fma(T2[o * (H + 1) + h], T2[o * (H + 1) + h], s);
    return p->lambda / (2.0 * (double)p->m) * s;
}

void galaxy_grad_finish(const galaxy_problem *p, const double *theta, double *grad)
{
    const int H = p->n_hid, K = p->n_out;
    const size_t N1 = (size_t)p->n_in + 1;
    const double inv_m = 1.0 / (double)p->m, reg = p->lambda / (double)p->m;
    /* grad / m + reg theta, one rounding of the sum; the bias columns are not regularised */
    for (int h = 0; h < H; h++) {
        double *g = grad + h * N1;
        const double *th = theta + h * N1;
        g[0] *= inv_m;
        for (size_t k = 1; k < N1; k++)
            g[k] = galaxy_fma(g[k], inv_m, reg * th[k]);
    }
    size_t off = H * N1;
    for (int o = 0; o < K; o++) {
        double *g = grad + off + (size_t)o * (H + 1);
        const double *th = theta + off + (size_t)o * (H + 1);
        g[0] *= inv_m;
        for (int h = 1; h <= H; h++)
            g[h] = galaxy_fma(g[h], inv_m, reg * th[h]);
    }
}
