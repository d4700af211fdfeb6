/* reports/published.c: the case-study write-ups' own tables (the published seeds), stored as data so
 * that REPORT.md can print them beside ours. They were measured on other
 * machines with other software (Python, Numba, CuPy): read them for shape (ratios, crossovers), not for
 * absolute time. */
#include <stdlib.h>
#include <string.h>

#include "rep.h"

typedef struct pub_table {
    const char *study, *id, *title;
    int ncols;
    const char *cols[6];
    const char *rows[8][6];
    const char *note; /* what the write-up says under its table, or NULL */
} pub_table;

static const pub_table pub[] = {
    {"entropy_mi", "entropy_mi-published",
     "From the write-up (seed 000, Table 1; i3-8100 + Tesla T4, another machine): seconds",
     5, {"B", "baseline (PyTorch)", "Numba CPU", "Numba CUDA", "CUDA ÷ CPU"},
     {{"256", "0.13312", "1.75784 (incl. JIT)", "0.23626", "—"},
      {"1024", "0.33322", "0.00294", "0.00837", "2.85"},
      {"4096", "1.33077", "0.01430", "0.02716", "1.90"},
      {"16384", "5.07354", "0.04693", "0.08787", "1.87"}}, NULL},
    {"tensor_mean", "tensor_mean-published",
     "From the write-up (seed 000, Table 2; i3-8100 + Tesla T4, another machine): seconds",
     5, {"N", "baseline (NumPy einsum)", "Numba CPU", "Numba CUDA", "CUDA ÷ CPU"},
     {{"64", "0.00957", "0.00253", "0.00385", "1.52"},
      {"256", "0.02729", "0.01005", "0.00481", "0.479"},
      {"1024", "0.10951", "0.03857", "0.01331", "0.345"},
      {"4096", "0.44180", "0.37861", "0.05148", "0.136"},
      {"8192", "0.88122", "0.70831", "0.10430", "0.147"}}, NULL},
    {"mlp", "mlp-published",
     "From the write-up (seed 001, Table 1; MNIST, 40 epochs, V100 node, another machine)",
     3, {"implementation", "training time", "test accuracy"},
     {{"NumPy", "37.22 s", "91.35 %"},
      {"Numba", "41.74 s", "91.43 %"},
      {"CuPy (GPU)", "0.35 s", "91.44 %"},
      {"published Fashion-MNIST MLP (256-128-100)", "—", "88.3 %"}}, NULL},
    {"mlp", "mlp-published-loss",
     "From the write-up (seed 001, Figures 2-4, loss over epochs; MNIST, lr 0.001, another machine): "
     "the figures as its text describes them",
     2, {"figure", "training loss over 40 epochs"},
     {{"Figure 2 (NumPy)", "from above 2.0 down to roughly 0.4 by the 40th epoch, steadily"},
      {"Figure 3 (Numba)", "closely mirrors the NumPy curve"},
      {"Figure 4 (CuPy, GPU)", "closely mirrors the NumPy and Numba curves"}}, NULL},
    {"galaxy", "galaxy-published-2.1",
     "From the write-up (seed 002, Table 2.1, cProfile, MAX_ITER = 300; another machine)",
     4, {"function", "tot time (self)", "cum time (inclusive)", "calls"},
     {{"gradient", "27.768 s", "49.351 s", "566"},
      {"cost_function", "5.697 s", "8.104 s", "1168"},
      {"predict", "2.190 s", "2.942 s", "603"}}, NULL},
    {"galaxy", "galaxy-published-2.2",
     "From the write-up (seed 002, Table 2.2; another machine): time per optimisation, mean ± std",
     3, {"technique", "speedlab variant", "time"},
     {{"Default", "default", "55.2 ± 1.84 s"},
      {"Data layout", "layout", "19.8 ± 1.34 s"},
      {"Cython", "simd", "12.7 ± 1.41 s"},
      {"JAX", "—", "11.3 ± 0.97 s"},
      {"GPU", "cuda", "2.2 ± 0.21 s"}}, NULL},
    /* The write-up's Table I was never filled in: every cell is a placeholder. Its text says the table
     * also gives average RAM and peak VRAM, but the printed table has only these columns (its second
     * header line, with the units, is unreadable in the copy we have). speedlab's own Table I is the
     * cnn-performance table. */
    {"cnn", "cnn-published",
     "From the write-up (seed 004, Table I, performance summary; MNIST, 10 epochs, another machine): "
     "as printed, every cell a placeholder",
     6, {"platform", "avg epoch", "total train", "avg tput", "final test", "max test"},
     {{"CPU_Numba", "[Value]", "[Value]", "[Value]", "[Value]", "[Value]"},
      {"CUDA_Numba", "[Value]", "[Value]", "[Value]", "[Value]", "[Value]"},
      {"PyTorch_CPU", "[Value]", "[Value]", "[Value]", "[Value]", "[Value]"},
      {"PyTorch_CUDA", "[Value]", "[Value]", "[Value]", "[Value]", "[Value]"},
      {"PyTorch_MPS", "[Value]", "[Value]", "[Value]", "[Value]", "[Value]"}},
     "Under the table: \"NL = Not Logged by current setup.\" Its text names two more columns, average "
     "process RAM and peak GPU VRAM, which the printed table does not show; no number of the table was "
     "ever filled in, and its Numba versions did not train the convolution weights. speedlab's Table I, "
     "measured, is the performance summary above."},
};

int rep_tab_published(const char *study, rep_table **out, int max)
{
    int n = 0;
    for (size_t i = 0; i < sizeof pub / sizeof *pub && n < max; i++) {
        const pub_table *p = &pub[i];
        if (strcmp(p->study, study))
            continue;
        rep_table *t = rep_table_new(p->id, p->title, p->ncols, p->cols, NULL);
        for (int r = 0; r < 8 && p->rows[r][0]; r++) {
            int row = rep_table_row(t, 1);
            for (int c = 0; c < p->ncols; c++)
                rep_cell_text(t, row, c, "%s", p->rows[r][c]);
        }
        if (p->note)
            rep_table_note(t, "%s", p->note);
        rep_table_note(t, "Quoted from the write-up for comparison; not measured by speedlab.");
        out[n++] = t;
    }
    return n;
}
