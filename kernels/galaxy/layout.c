/*
 * kernels/galaxy/layout.c: the write-up's "data layout" step in C. Matrix form over all examples
 * (Z2 = [1 X] Theta1', A3 = g([1 A2] Theta2')), one-hot labels by indexing, no per-example copies: the
 * bias column is handled by indexing Theta's column 0, never by building [1 X].
 */
#include "galaxy.h"

#include <math.h>
#include <string.h>

double galaxy_reg_term(const galaxy_problem *p, const double *theta);

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* Z2 (m x H, pre-activation) and A3 (m x K) for all rows. */
static void forward(const galaxy_problem *p, const double *theta, double *Z2, double *A3)
{
    const int N = p->n_in, N1 = N + 1, H = p->n_hid, K = p->n_out;
    const double *T2 = theta + (size_t)H * N1;
    for (long t = 0; t < p->m; t++) {
        const double *x = p->X + (size_t)t * N;
        double a2[64];
        for (int h = 0; h < H; h++) {
            const double *th = theta + (size_t)h * N1;
            double s = th[0];
            for (int k = 0; k < N; k++)
                s += th[k + 1] * x[k];
            Z2[(size_t)t * H + h] = s;
            a2[h] = sigmoid(s);
        }
        for (int o = 0; o < K; o++) {
            double s = T2[o * (H + 1)];
            for (int h = 0; h < H; h++)
                s += T2[o * (H + 1) + h + 1] * a2[h];
            A3[(size_t)t * K + o] = sigmoid(s);
        }
    }
}

double galaxy_cost_layout(const galaxy_problem *p, const double *theta, double *ws)
{
    double *Z2 = ws, *A3 = ws + (size_t)p->m * p->n_hid;
    forward(p, theta, Z2, A3);
    double J = 0.0;
    for (long t = 0; t < p->m; t++)
        for (int o = 0; o < p->n_out; o++) {
            double a = A3[(size_t)t * p->n_out + o];
            J += (p->y[t] == o) ? -log(a) : -log(1.0 - a);
        }
    return J / (double)p->m + galaxy_reg_term(p, theta);
}

void galaxy_grad_layout(const galaxy_problem *p, const double *theta, double *grad, double *ws)
{
    const int N = p->n_in, N1 = N + 1, H = p->n_hid, K = p->n_out;
    const double *T2 = theta + (size_t)H * N1;
    double *Z2 = ws, *A3 = ws + (size_t)p->m * H, *D2 = A3 + (size_t)p->m * K;
    double *G1 = grad, *G2 = grad + (size_t)H * N1;
    forward(p, theta, Z2, A3);
    memset(grad, 0, galaxy_n_theta(p) * sizeof *grad);
    for (long t = 0; t < p->m; t++) {
        double *d3 = A3 + (size_t)t * K;          /* Delta3 = A3 - Y, in place (one-hot by index) */
        d3[p->y[t]] -= 1.0;
        for (int h = 0; h < H; h++) {
            double z = Z2[(size_t)t * H + h], g = sigmoid(z), s = 0.0;
            for (int o = 0; o < K; o++)
                s += d3[o] * T2[o * (H + 1) + h + 1];
            D2[(size_t)t * H + h] = s * g * (1.0 - g);
            for (int o = 0; o < K; o++)            /* Theta2_grad = Delta3' [1 A2] */
                G2[o * (H + 1) + h + 1] += d3[o] * g;
        }
        for (int o = 0; o < K; o++)
            G2[o * (H + 1)] += d3[o];
    }
    for (int h = 0; h < H; h++) {                  /* Theta1_grad = Delta2' [1 X], row by row of X */
        double *g1 = G1 + (size_t)h * N1;
        for (long t = 0; t < p->m; t++) {
            double d = D2[(size_t)t * H + h];
            const double *x = p->X + (size_t)t * N;
            g1[0] += d;
            for (int k = 0; k < N; k++)
                g1[k + 1] += d * x[k];
        }
    }
    const double inv_m = 1.0 / (double)p->m, reg = p->lambda / (double)p->m;
    for (int h = 0; h < H; h++)
        for (int k = 0; k < N1; k++)
            G1[(size_t)h * N1 + k] = G1[(size_t)h * N1 + k] * inv_m + (k ? reg * theta[(size_t)h * N1 + k] : 0.0);
    for (int o = 0; o < K; o++)
        for (int h = 0; h <= H; h++)
            G2[o * (H + 1) + h] = G2[o * (H + 1) + h] * inv_m + (h ? reg * T2[o * (H + 1) + h] : 0.0);
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
