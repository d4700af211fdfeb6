/*
 * kernels/precision/bench/prec_step.c: one training step of each CPU precision row (convert, forward,
 * backward: what the study's regions time) on the study's 784-128-128-10 mlp at batch 64, one thread,
 * the rows interleaved round by round so that a busy spell of a shared machine falls on every row alike
 * (and timed in thread CPU time, so that time the thread waits for a CPU is not counted);
 * prints each row's path and its median microseconds per step part over the rounds. Built on request,
 * never by the tests:
 *     ninja -C build kernels/prec_step && ./build/kernels/prec_step [ROUNDS]
 * docs/study-precision.md quotes it.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "precision/precision_kernels.h"

enum { B = 64, STEPS = 200, MAXR = 101, NROWS = 4 };

typedef struct row {
    const char *name;
    int type; /* prec_path's argument: 1 bf16, 2 fp16, 0 one way only */
    prec_convert_fn convert;
    prec_forward_fn forward;
    prec_backward_fn backward;
} row;

static const row rows[NROWS] = {
    {"fp32", 0, prec_convert_fp32, prec_forward_fp32, prec_backward_fp32},
    {"bf16", 1, prec_convert_bf16, prec_forward_bf16, prec_backward_bf16},
    {"fp16", 2, prec_convert_fp16, prec_forward_fp16, prec_backward_fp16},
    {"bf16dp", 0, prec_convert_bf16dp, prec_forward_bf16dp, prec_backward_bf16dp},
};

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: a shared machine's other work is not counted */
    return 1e6 * (double)t.tv_sec + 1e-3 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 11;
    if (argc > 2 || rounds < 1 || rounds > MAXR) {
        fprintf(stderr, "usage: %s [ROUNDS]  (1-%d, default 11: rounds of %d steps per row, interleaved)\n",
                argv[0], MAXR, STEPS);
        return 2;
    }
    const mlp_dims d = {784, 128, 128, 10};
    mlp_layout L = mlp_layout_of(&d);
    float *P = malloc(L.n * sizeof *P), *G = malloc(L.n * sizeof *G);
    float *X = aligned_alloc(64, (size_t)B * d.n0 * sizeof *X);
    uint16_t *Pq = malloc(prec_qweights_elems(&d) * sizeof *Pq);
    void *block = aligned_alloc(64, (prec_ws_bytes(&d, B) + 63) / 64 * 64);
    uint8_t y[B];
    prec_ws ws;
    if (!P || !G || !X || !Pq || !block) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 1;
    }
    prec_ws_bind(&ws, &d, B, block);
    mlp_init_he(&d, P, 5);
    for (size_t i = 0; i < (size_t)B * d.n0; i++)
        X[i] = (float)(i * 2654435761u % 256) / 255.0f;
    for (int b = 0; b < B; b++)
        y[b] = (uint8_t)(b % 10);
    static double t[NROWS][3][MAXR];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < NROWS; k++) {
            double part[3] = {0, 0, 0};
            for (int s = 0; s < STEPS; s++) {
                double t0 = now_us();
                rows[k].convert(&d, P, Pq);
                double t1 = now_us();
                rows[k].forward(&d, P, Pq, X, B, &ws);
                mlp_loss(&d, y, B, &ws.f);
                double t2 = now_us();
                rows[k].backward(&d, P, Pq, X, B, &ws, G);
                double t3 = now_us();
                part[0] += t1 - t0, part[1] += t2 - t1, part[2] += t3 - t2;
            }
            for (int p = 0; p < 3; p++)
                t[k][p][r] = part[p] / STEPS;
        }
    printf("%d rounds of %d steps, batch %d, median us per step (convert, forward with loss, backward)\n",
           rounds, STEPS, B);
    for (int k = 0; k < NROWS; k++) {
        double m[3];
        for (int p = 0; p < 3; p++) {
            qsort(t[k][p], (size_t)rounds, sizeof(double), cmp);
            m[p] = t[k][p][rounds / 2];
        }
        printf("%-7s %8.1f %8.1f %8.1f  total %8.1f  path: %s\n", rows[k].name, m[0], m[1], m[2], m[0] + m[1] + m[2],
               rows[k].type ? prec_path_name(prec_path(rows[k].type)) : "its own");
    }
    free(P), free(G), free(X), free(Pq), free(block);
    return 0;
}
