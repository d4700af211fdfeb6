/*
 * kernels/galaxy/layout.c: the write-up's "data layout" step in C. Matrix form over all examples
 * (Z2 = [1 X] Theta1', A3 = g([1 A2] Theta2')), one-hot labels by indexing, no per-example copies: the
 * bias column is handled by indexing Theta's column 0, never by building [1 X]. Sums and functions in
 * canon.h's order (the gradient's products per segment of rows), so it returns default's bits.
 */
#include "canon.h"

#include <math.h>
#include <string.h>

/* Z2 (m x H, pre-activation) and A3 (m x K) for all rows. */
static void forward(const galaxy_problem *p, const double *theta, double *Z2, double *A3)
{
    const int N = p->n_in, N1 = N + 1, H = p->n_hid, K = p->n_out;
    const double *T2 = theta + (size_t)H * N1;
    for (long t = 0; t < p->m; t++) {
        const double *x = p->X + (size_t)t * galaxy_ldx(p);
        double *z = Z2 + (size_t)t * H, *a3 = A3 + (size_t)t * K, a2[64];
        for (int h = 0; h < H; h++)
            z[h] = theta[(size_t)h * N1] + galaxy_dot(theta + (size_t)h * N1 + 1, x, N);
        memcpy(a2, z, (size_t)H * sizeof *a2);
        galaxy_sigmoid_inplace(a2, H);
        for (int o = 0; o < K; o++)
            a3[o] = galaxy_z3(T2, H, o, a2);
        galaxy_sigmoid_inplace(a3, K);
    }
}

double galaxy_cost_layout(const galaxy_problem *p, const double *theta, double *ws)
{
    const int K = p->n_out;
    double *Z2 = ws, *A3 = ws + (size_t)p->m * p->n_hid;
    forward(p, theta, Z2, A3);
    for (long t = 0; t < p->m; t++)                   /* A3 becomes the log-likelihood terms */
        for (int o = 0; o < K; o++) {
            double *a = A3 + (size_t)t * K + o;
            *a = (p->y[t] == o) ? *a : 1.0 - *a;
        }
    galaxy_log_inplace(A3, (int)(p->m * K));
    double J = 0.0;
    for (int s = 0; s < GALAXY_SEGMENTS; s++) {       /* canon.h: per segment, then in order */
        long r0, r1;
        double Js = 0.0;
        galaxy_segment_rows(p->m, s, &r0, &r1);
        for (long i = r0 * K; i < r1 * K; i++)
            Js -= A3[i];
        J += Js;
    }
    return J / (double)p->m + galaxy_cost_reg(p, theta);
}

/* One segment's unscaled gradient into P (zeroed here): Theta2's from Delta3, then Theta1's. */
static void segment_grad(const galaxy_problem *p, const double *theta, long r0, long r1, const double *Z2,
                         double *A3, double *D2, double *P)
{
    const int N = p->n_in, N1 = N + 1, H = p->n_hid, K = p->n_out;
    const double *T2 = theta + (size_t)H * N1;
    double *P1 = P, *P2 = P + (size_t)H * N1;
    memset(P, 0, galaxy_n_theta(p) * sizeof *P);
    for (long t = r0; t < r1; t++) {
        double *d3 = A3 + (size_t)t * K, g[64];      /* Delta3 = A3 - Y, in place (one-hot by index) */
        d3[p->y[t]] -= 1.0;
        memcpy(g, Z2 + (size_t)t * H, (size_t)H * sizeof *g);
        galaxy_sigmoid_inplace(g, H);
        galaxy_g2_row(P2, H, K, d3, g);                /* Theta2_grad = Delta3' [1 A2] */
        for (int h = 0; h < H; h++)
            D2[(size_t)t * H + h] = galaxy_d2(T2, H, K, h, d3, g[h]);
    }
    for (int h = 0; h < H; h++) {                      /* Theta1_grad = Delta2' [1 X], row by row of X */
        double *g1 = P1 + (size_t)h * N1;
        for (long t = r0; t < r1; t++) {
            double d = D2[(size_t)t * H + h];
            const double *x = p->X + (size_t)t * galaxy_ldx(p);
            g1[0] += d;
            for (int k = 0; k < N; k++)
                g1[k + 1] = galaxy_fma(d, x[k], g1[k + 1]);
        }
    }
}

void galaxy_grad_layout(const galaxy_problem *p, const double *theta, double *grad, double *ws)
{
    const size_t nt = galaxy_n_theta(p);
    double *Z2 = ws, *A3 = ws + (size_t)p->m * p->n_hid, *D2 = A3 + (size_t)p->m * p->n_out;
    double *P = D2 + (size_t)p->m * p->n_hid;
    forward(p, theta, Z2, A3);
    memset(grad, 0, nt * sizeof *grad);
    for (int s = 0; s < GALAXY_SEGMENTS; s++) {
        long r0, r1;
        galaxy_segment_rows(p->m, s, &r0, &r1);
        segment_grad(p, theta, r0, r1, Z2, A3, D2, P);
        for (size_t i = 0; i < nt; i++)
            grad[i] += P[i];
    }
    galaxy_grad_finish(p, theta, grad);
}

void galaxy_predict(const galaxy_problem *p, const double *theta, unsigned char *pred, double *ws)
{
    double *Z2 = ws, *A3 = ws + (size_t)p->m * p->n_hid;
    forward(p, theta, Z2, A3);
    for (long t = 0; t < p->m; t++) {
        int best = 0;
        for (int o = 1; o < p->n_out; o++)
            if (A3[(size_t)t * p->n_out + o] > A3[(size_t)t * p->n_out + best])
                best = o;
        pred[t] = (unsigned char)best;
    }
}
