/*
 * kernels/galaxy/default.c: the original code's structure in C. The gradient loops over the training
 * examples one at a time; each example's vectors are built in scratch (a1 = [1; x_t], a2 = [1; g(z2)],
 * the one-hot y_k), as NumPy's vstack built them, but into preallocated memory (kernel rule: no
 * allocation on the timed path), so the copying work stays and the allocator cost does not.
 */
#include "galaxy.h"

#include <math.h>
#include <string.h>

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

size_t galaxy_n_theta(const galaxy_problem *p)
{
    return (size_t)p->n_hid * (size_t)(p->n_in + 1) + (size_t)p->n_out * (size_t)(p->n_hid + 1);
}

size_t galaxy_ws_doubles(const galaxy_problem *p)
{
    /* layout needs Z2 and A3 for all m rows; default needs a few vectors; predict reuses layout's. */
    size_t rows = (size_t)p->m * (size_t)(p->n_hid + p->n_out + p->n_hid);
    return rows + (size_t)(p->n_in + 1) + 4 * (size_t)(p->n_hid + p->n_out + 2);
}

/* Scratch layout of the default variant. */
typedef struct dws {
    double *a1, *z2, *a2, *a3, *yk, *d3, *d2;
} dws;

static dws split(const galaxy_problem *p, double *ws)
{
    dws w;
    w.a1 = ws;
    w.z2 = w.a1 + p->n_in + 1;
    w.a2 = w.z2 + p->n_hid;
    w.a3 = w.a2 + p->n_hid + 1;
    w.yk = w.a3 + p->n_out;
    w.d3 = w.yk + p->n_out;
    w.d2 = w.d3 + p->n_out;
    return w;
}

void galaxy_default_begin(const galaxy_problem *p, double *grad)
{
    memset(grad, 0, galaxy_n_theta(p) * sizeof *grad);
}

void galaxy_default_forward(const galaxy_problem *p, const double *theta, long t, double *ws)
{
    dws w = split(p, ws);
    const int N1 = p->n_in + 1, H = p->n_hid, K = p->n_out;
    const double *T2 = theta + (size_t)H * N1;
    w.a1[0] = 1.0;                                       /* a1 = vstack((1, x_t)) */
    memcpy(w.a1 + 1, p->X + (size_t)t * p->n_in, (size_t)p->n_in * sizeof(double));
    for (int h = 0; h < H; h++) {                        /* z2 = Theta1 @ a1 */
        double s = 0.0;
        for (int k = 0; k < N1; k++)
            s += theta[(size_t)h * N1 + k] * w.a1[k];
        w.z2[h] = s;
    }
    w.a2[0] = 1.0;                                       /* a2 = vstack((1, g(z2))) */
    for (int h = 0; h < H; h++)
        w.a2[h + 1] = sigmoid(w.z2[h]);
    for (int o = 0; o < K; o++) {                        /* a3 = g(Theta2 @ a2) */
        double s = 0.0;
        for (int h = 0; h <= H; h++)
            s += T2[o * (H + 1) + h] * w.a2[h];
        w.a3[o] = sigmoid(s);
    }
}

void galaxy_default_error3(const galaxy_problem *p, const double *theta, long t, double *grad, double *ws)
{
    (void)theta;
    dws w = split(p, ws);
    const int H = p->n_hid, K = p->n_out;
    double *D2 = grad + (size_t)H * (p->n_in + 1);
    for (int o = 0; o < K; o++)                          /* y_k = zeros; y_k[y[t]] = 1 */
        w.yk[o] = 0.0;
    w.yk[p->y[t]] = 1.0;
    for (int o = 0; o < K; o++)                          /* delta3 = a3 - y_k */
        w.d3[o] = w.a3[o] - w.yk[o];
    for (int o = 0; o < K; o++)                          /* Delta2 += delta3 @ a2.T */
        for (int h = 0; h <= H; h++)
            D2[o * (H + 1) + h] += w.d3[o] * w.a2[h];
}

void galaxy_default_error2(const galaxy_problem *p, const double *theta, double *ws)
{
    dws w = split(p, ws);
    const int H = p->n_hid, K = p->n_out;
    const double *T2 = theta + (size_t)H * (p->n_in + 1);
    for (int h = 0; h < H; h++) {                        /* (Theta2[:,1:].T @ delta3) * grad_g(z2) */
        double s = 0.0;
        for (int o = 0; o < K; o++)
            s += T2[o * (H + 1) + h + 1] * w.d3[o];
        double gz = sigmoid(w.z2[h]);
        w.d2[h] = s * gz * (1.0 - gz);
    }
}

void galaxy_default_accumulate(const galaxy_problem *p, double *grad, double *ws)
{
    dws w = split(p, ws);
    const int N1 = p->n_in + 1;
    for (int h = 0; h < p->n_hid; h++)                   /* Delta1 += delta2 @ a1.T */
        for (int k = 0; k < N1; k++)
            grad[(size_t)h * N1 + k] += w.d2[h] * w.a1[k];
}

void galaxy_default_finish(const galaxy_problem *p, const double *theta, double *grad)
{
    const int N1 = p->n_in + 1, H = p->n_hid, K = p->n_out;
    const double inv_m = 1.0 / (double)p->m, reg = p->lambda / (double)p->m;
    for (int h = 0; h < H; h++)
        for (int k = 0; k < N1; k++) {
            size_t i = (size_t)h * N1 + k;
            grad[i] = grad[i] * inv_m + (k > 0 ? reg * theta[i] : 0.0);
        }
    size_t off = (size_t)H * N1;
    for (int o = 0; o < K; o++)
        for (int h = 0; h <= H; h++) {
            size_t i = off + (size_t)o * (H + 1) + h;
            grad[i] = grad[i] * inv_m + (h > 0 ? reg * theta[i] : 0.0);
        }
}

void galaxy_grad_default(const galaxy_problem *p, const double *theta, double *grad, double *ws)
{
    galaxy_default_begin(p, grad);
    for (long t = 0; t < p->m; t++) {
        galaxy_default_forward(p, theta, t, ws);
        galaxy_default_error3(p, theta, t, grad, ws);
        galaxy_default_error2(p, theta, ws);
        galaxy_default_accumulate(p, grad, ws);
    }
    galaxy_default_finish(p, theta, grad);
}

/* Regularisation term lambda/(2m) * (sum Theta1[:,1:]^2 + sum Theta2[:,1:]^2), shared by all costs. */
static double reg_term(const galaxy_problem *p, const double *theta)
{
    const int N1 = p->n_in + 1, H = p->n_hid, K = p->n_out;
    double s = 0.0;
    for (int h = 0; h < H; h++)
        for (int k = 1; k < N1; k++)
            s += theta[(size_t)h * N1 + k] * theta[(size_t)h * N1 + k];
    const double *T2 = theta + (size_t)H * N1;
    for (int o = 0; o < K; o++)
        for (int h = 1; h <= H; h++)
            s += T2[o * (H + 1) + h] * T2[o * (H + 1) + h];
    return p->lambda / (2.0 * (double)p->m) * s;
}

double galaxy_cost_default(const galaxy_problem *p, const double *theta, double *ws)
{
    dws w = split(p, ws);
    double J = 0.0;
    for (long t = 0; t < p->m; t++) {
        galaxy_default_forward(p, theta, t, ws);
        for (int o = 0; o < p->n_out; o++) {
            double yv = (p->y[t] == o) ? 1.0 : 0.0;
            J += -yv * log(w.a3[o]) - (1.0 - yv) * log(1.0 - w.a3[o]);
        }
    }
    return J / (double)p->m + reg_term(p, theta);
}

/* The layout variant's cost shares this helper (declared in layout.c). */
double galaxy_reg_term(const galaxy_problem *p, const double *theta);
double galaxy_reg_term(const galaxy_problem *p, const double *theta) { return reg_term(p, theta); }
