/*
 * prof_demo: a first look at the speedlab profiler (docs/profiler.md, "Demo").
 *
 *     ninja -C build profiler/prof_demo && ./build/profiler/prof_demo
 *
 * It smooths and sums an array a few times and times every step with named regions:
 *
 *     demo                     1 call
 *       load                   1 call   allocates 32 MiB (its resident memory is measured)
 *       iterate                3 calls
 *         smooth               3 calls  a PROF_SCOPE block
 *         reduce               3 calls
 *           chunk             24 calls  8 per reduce, on the OpenMP threads when built with OpenMP
 *
 * At exit the library prints the TimerStats table on stderr and writes the JSON profile: both are on
 * by default here (PROF_REPORT=0 turns the table off; PROF_JSON=path picks the file, PROF_JSON= with an
 * empty value writes none). tests/profiler/test_prof_demo.c checks this program's output.
 */
#include <speedlab/prof.h>

#include <stdio.h>
#include <stdlib.h>

enum {
    N = 4 << 20, /* doubles: 32 MiB, big enough to show up in resident memory */
    ITERS = 3,
    CHUNKS = 8, /* chunks per reduce, independent of the thread count so call counts are fixed */
};

/* One Gauss-Seidel smoothing sweep, in place. */
static void smooth(double *x, long n)
{
    for (long i = 1; i < n - 1; i++)
        x[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1];
}

/* Sum of x in CHUNKS regions. With OpenMP the chunks run on several threads: their regions open on
 * worker threads and still land under demo/iterate/reduce, because the library attaches them to the
 * path the main thread had open when the parallel region began. */
static double reduce(const double *x, long n)
{
    double sum = 0.0;
#ifdef _OPENMP
#pragma omp parallel for reduction(+ : sum) schedule(static)
#endif
    for (int c = 0; c < CHUNKS; c++) {
        prof_begin("chunk");
        for (long i = c * (n / CHUNKS); i < (c + 1) * (n / CHUNKS); i++)
            sum += x[i];
        prof_end("chunk");
    }
    return sum;
}

int main(void)
{
    /* Options given here win over the environment, so only set them when the user has not. */
    prof_options opt = {
        .nvtx = 1,                                              /* NVTX ranges if Nsight attaches */
        .report_at_exit = getenv("PROF_REPORT") == NULL,        /* else $PROF_REPORT decides */
        .json_path = getenv("PROF_JSON") ? NULL : "prof_demo.json", /* NULL: $PROF_JSON */
    };
    if (prof_init(&opt) != 0)
        fputs("prof_demo: the profiler reported a problem with its options (above); continuing\n", stderr);
    /* Resident memory every 1 ms: regions get rss_peak_bytes, the JSON a "memory" series. */
    if (prof_mem_sampler_start(1.0) != 0)
        fputs("prof_demo: no memory sampler; regions will have no memory figures\n", stderr);

    prof_begin("demo");

    prof_begin("load");
    size_t rss0 = prof_rss_bytes();
    double *x = malloc(N * sizeof *x);
    if (!x) {
        fprintf(stderr, "prof_demo: cannot allocate %zu MiB; free some memory and run again\n",
                N * sizeof *x >> 20);
        return 1;
    }
    for (long i = 0; i < N; i++)
        x[i] = (double)(i % 1000) / 1000.0;
    size_t rss1 = prof_rss_bytes();
    prof_end("load");
    if (rss0 && rss1) /* 0 means /proc could not be read: say so instead of printing a fake figure */
        printf("load: resident memory %.1f MiB -> %.1f MiB\n", rss0 / 1048576.0, rss1 / 1048576.0);
    else
        printf("load: resident memory not available (/proc/self/statm unreadable)\n");

    double sum = 0.0;
    for (int it = 0; it < ITERS; it++) {
        prof_begin("iterate");
        PROF_SCOPE("smooth") /* ends with the block; do not break or return out of it */
        {
            smooth(x, N);
        }
        prof_begin("reduce");
        sum = reduce(x, N);
        prof_end("reduce");
        prof_end("iterate");
    }

    prof_end("demo");
    printf("sum after %d sweeps: %.6f\n", ITERS, sum);
    free(x);
    /* Returning runs the library's atexit handler: table on stderr, JSON file. Call prof_shutdown()
     * yourself to get them earlier. */
    return 0;
}
