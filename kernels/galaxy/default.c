/*
 * kernels/galaxy/default.c: the original code's structure in C. The gradient loops over the training
 * examples one at a time; each example's vectors are built in scratch (a1 = [1; x_t], a2 = [1; g(z2)],
 * the one-hot y_k), as NumPy's vstack built them, but into preallocated memory (kernel rule: no
 * allocation on the timed path), so the copying work stays and the allocator cost does not.
 * Every sum and function follows canon.h's order (the sums over examples run per segment, into a
 * segment sum in scratch that is added to the gradient at the segment's last example), so the fused
 * variants return these bits exactly.
 */
#include "canon.h"

#include <math.h>
#include <string.h>

size_t galaxy_n_theta(const galaxy_problem *p)
{
    return (size_t)p->n_hid * (size_t)(p->n_in + 1) + (size_t)p->n_out * (size_t)(p->n_hid + 1);
}

size_t galaxy_ws_doubles(const galaxy_problem *p)
{
    /* layout needs Z2, A3 and D2 for all m rows and a segment sum; default a few vectors and the
     * segment sum; predict reuses layout's. */
    size_t rows = (size_t)p->m * (size_t)(p->n_hid + p->n_out + p->n_hid);
    return rows + galaxy_n_theta(p) + (size_t)(p->n_in + 1) + 5 * (size_t)(p->n_hid + p->n_out + 2);
}

/* Scratch layout of the default variant. */
typedef struct dws {
    double *seg, *a1, *z2, *gz, *a2, *a3, *yk, *d3, *d2;
} dws;

static dws split(const galaxy_problem *p, double *ws)
{
    dws w;
    w.seg = ws;                                   /* this segment's gradient sum (n_theta) */
    w.a1 = w.seg + galaxy_n_theta(p);
    w.z2 = w.a1 + p->n_in + 1;
    w.gz = w.z2 + p->n_hid;
    w.a2 = w.gz + p->n_hid;
    w.a3 = w.a2 + p->n_hid + 1;
    w.yk = w.a3 + p->n_out;
    w.d3 = w.yk + p->n_out;
    w.d2 = w.d3 + p->n_out;
    return w;
}

void galaxy_default_begin(const galaxy_problem *p, double *grad, double *ws)
{
    memset(grad, 0, galaxy_n_theta(p) * sizeof *grad);
    memset(split(p, ws).seg, 0, galaxy_n_theta(p) * sizeof *grad);
}

void galaxy_default_forward(const galaxy_problem *p, const double *theta, long t, double *ws)
{
    dws w = split(p, ws);
    const int N = p->n_in, N1 = N + 1, H = p->n_hid, K = p->n_out;
    const double *T2 = theta + (size_t)H * N1;
    w.a1[0] = 1.0;                                       /* a1 = vstack((1, x_t)) */
    memcpy(w.a1 + 1, p->X + (size_t)t * galaxy_ldx(p), (size_t)N * sizeof(double));
    for (int h = 0; h < H; h++)                          /* z2 = Theta1 @ a1 */
        w.z2[h] = theta[(size_t)h * N1] + galaxy_dot(theta + (size_t)h * N1 + 1, w.a1 + 1, N);
    w.a2[0] = 1.0;                                       /* a2 = vstack((1, g(z2))) */
    memcpy(w.a2 + 1, w.z2, (size_t)H * sizeof(double));
    galaxy_sigmoid_inplace(w.a2 + 1, H);
    for (int o = 0; o < K; o++)                          /* a3 = g(Theta2 @ a2) */
        w.a3[o] = galaxy_z3(T2, H, o, w.a2 + 1);
    galaxy_sigmoid_inplace(w.a3, K);
}

void galaxy_default_error3(const galaxy_problem *p, long t, double *ws)
{
    dws w = split(p, ws);
    const int H = p->n_hid, K = p->n_out;
    for (int o = 0; o < K; o++)                          /* y_k = zeros; y_k[y[t]] = 1 */
        w.yk[o] = 0.0;
    w.yk[p->y[t]] = 1.0;
    for (int o = 0; o < K; o++)                          /* delta3 = a3 - y_k */
        w.d3[o] = w.a3[o] - w.yk[o];
    galaxy_g2_row(w.seg + (size_t)H * (p->n_in + 1), H, K, w.d3, w.a2 + 1);   /* Delta2 += delta3 @ a2.T */
}

void galaxy_default_error2(const galaxy_problem *p, const double *theta, double *ws)
{
    dws w = split(p, ws);
    const int H = p->n_hid, K = p->n_out;
    const double *T2 = theta + (size_t)H * (p->n_in + 1);
    memcpy(w.gz, w.z2, (size_t)H * sizeof(double));     /* sigmoidGradient(z2) recomputes g(z2) */
    galaxy_sigmoid_inplace(w.gz, H);
    for (int h = 0; h < H; h++)                          /* (Theta2[:,1:].T @ delta3) * g(z2) (1 - g(z2)) */
        w.d2[h] = galaxy_d2(T2, H, K, h, w.d3, w.gz[h]);
}

void galaxy_default_accumulate(const galaxy_problem *p, long t, double *grad, double *ws)
{
    dws w = split(p, ws);
    const int N1 = p->n_in + 1;
    for (int h = 0; h < p->n_hid; h++) {                 /* Delta1 += delta2 @ a1.T */
        double *g = w.seg + (size_t)h * N1;
        g[0] += w.d2[h];
        for (int k = 1; k < N1; k++)
            g[k] = galaxy_fma(w.d2[h], w.a1[k], g[k]);
    }
    if (galaxy_segment_ends(p->m, t)) {                  /* canon.h: segment sums added in order */
        size_t nt = galaxy_n_theta(p);
        for (size_t i = 0; i < nt; i++)
            grad[i] += w.seg[i];
        memset(w.seg, 0, nt * sizeof *w.seg);
    }
}

void galaxy_grad_default(const galaxy_problem *p, const double *theta, double *grad, double *ws)
{
    galaxy_default_begin(p, grad, ws);
    for (long t = 0; t < p->m; t++) {
        galaxy_default_forward(p, theta, t, ws);
        galaxy_default_error3(p, t, ws);
        galaxy_default_error2(p, theta, ws);
        galaxy_default_accumulate(p, t, grad, ws);
    }
    galaxy_grad_finish(p, theta, grad);
}

double galaxy_cost_default(const galaxy_problem *p, const double *theta, double *ws)
{
    dws w = split(p, ws);
    double J = 0.0, Js = 0.0, L[16];
    for (long t = 0; t < p->m; t++) {
        galaxy_default_forward(p, theta, t, ws);
        for (int o = 0; o < p->n_out; o++)              /* -y log(a3) - (1 - y) log(1 - a3) */
            L[o] = (p->y[t] == o) ? w.a3[o] : 1.0 - w.a3[o];
        galaxy_log_inplace(L, p->n_out);
        for (int o = 0; o < p->n_out; o++)
            Js -= L[o];
        if (galaxy_segment_ends(p->m, t)) {
            J += Js;
            Js = 0.0;
        }
    }
    return J / (double)p->m + galaxy_cost_reg(p, theta);
}
