/*
 * kernels/galaxy/bench/galaxy_parts.c: where one fused gradient call's time goes, on one thread.
 * Times the three building blocks of fused.h over every block of a random m x 1024 x 8 problem
 * (forward, output layer, Theta1 gradient), then the whole galaxy_grad_simd, 50 calls each, and prints
 * ms per gradient call; three rounds, so a reader sees the spread. Built on request, never by the tests:
 *     ninja -C build kernels/galaxy_parts && ./build/kernels/galaxy_parts [m [ldx]]
 * m defaults to the study's 2700 rows; a small m (270) keeps X in cache and shows what the same code
 * does when it does not wait on memory. ldx is X's row stride in doubles, by default the study's
 * padded one (galaxy_padded_ldx: 1032); 1024 gives packed rows, to see what the padding buys.
 * docs/study-galaxy.md quotes it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "galaxy/fused.h"

enum { N_IN = 1024, N_HID = 8, N_OUT = 3, CALLS = 50 };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    const int help = argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
    long m = argc > 1 && !help ? atol(argv[1]) : 2700;
    const long ldx = argc > 2 ? atol(argv[2]) : galaxy_padded_ldx(N_IN); /* the study's layout */
    if (help || m < 1 || ldx < N_IN || ldx % 8) {
        fprintf(help ? stdout : stderr, "usage: %s [ROWS [LDX]]  (ROWS >= 1, default 2700, the study's training "
                "set; LDX, X's row stride in doubles, a multiple of 8 >= %d, default %ld, the study's padded "
                "rows; 1024 for packed ones)\n", argv[0], N_IN, galaxy_padded_ldx(N_IN));
        return help ? 0 : 2;
    }
    double *X = aligned_alloc(64, sizeof(double) * (size_t)m * (size_t)ldx);
    unsigned char *y = malloc((size_t)m);
    srand(1);
    for (long i = 0; i < m * ldx; i++) X[i] = (rand() % 256) / 255.0;
    for (long i = 0; i < m; i++) y[i] = (unsigned char)(rand() % N_OUT);
    galaxy_problem p = {X, y, m, N_IN, N_HID, N_OUT, 1.0, ldx};
    size_t nt = galaxy_n_theta(&p);
    double *theta = malloc(nt * sizeof *theta), *g = malloc(nt * sizeof *g);
    double *ws = malloc(galaxy_fused_ws_doubles(&p, 1) * sizeof *ws);
    double *Z = malloc(sizeof(double) * GALAXY_FUSED_BLOCK * N_HID);
    if (!X || !y || !theta || !g || !ws || !Z) {
        fprintf(stderr, "%s: out of memory for %ld rows\n", argv[0], m);
        return 1;
    }
    for (size_t i = 0; i < nt; i++) theta[i] = (rand() / (double)RAND_MAX - 0.5) * 0.4;
    const size_t off2 = (size_t)N_HID * (N_IN + 1);
    printf("galaxy_parts: %ld x %d x %d, rows %ld doubles apart, ms per gradient call (one thread, %d calls)\n", m,
           N_IN, N_HID, ldx, CALLS);
    for (int round = 0; round < 3; round++) {
        double tf = 0, to = 0, tb = 0, J = 0;
        for (int c = 0; c < CALLS; c++) {
            const double *T1p = galaxy_fused_pack(&p, theta, galaxy_fused_slice(&p, ws, 0));
            for (long t0 = 0; t0 < m; t0 += GALAXY_FUSED_BLOCK) {
                int nb = m - t0 < GALAXY_FUSED_BLOCK ? (int)(m - t0) : GALAXY_FUSED_BLOCK;
                double t = now_s();
                galaxy_fused_forward(&p, theta, T1p, t0, nb, Z);
                tf += now_s() - t;
                t = now_s();
                galaxy_fused_output(&p, theta, t0, nb, Z, Z, g + off2, &J);
                to += now_s() - t;
                t = now_s();
                galaxy_fused_backward(&p, t0, nb, Z, g);
                tb += now_s() - t;
            }
        }
        double t = now_s();
        for (int c = 0; c < CALLS; c++) galaxy_grad_simd(&p, theta, g, ws);
        double tg = (now_s() - t) / CALLS;
        printf("forward %.3f  output %.3f  Theta1 gradient %.3f  whole galaxy_grad_simd %.3f\n",
               tf / CALLS * 1e3, to / CALLS * 1e3, tb / CALLS * 1e3, tg * 1e3);
    }
    free(X), free(y), free(theta), free(g), free(ws), free(Z);
    return 0;
}
