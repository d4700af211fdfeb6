/* reports/rep.h: the report generator's internal types, shared by its files.
 *
 * loader.c   reads results records (docs/results-schema.md) into rep_set, grouped by environment
 * pool.c     a case measured in several runs or rounds shown with their repetitions pooled (--pool)
 * envs.c     the environments (machines): host + cpu_model + isa, their names and directories
 * stats.c    order statistics, mean/std, Mann-Whitney U
 * units.c    how a study's cases at one size are compared: per repetition, or per unit of work (sample,
 *            epoch) where a reduced or extrapolated run stands beside full ones
 * speedup.c  the speedup table
 * tables.c   the other timing tables (crossover, GPU phases, summary)
 * notrun.c   the variants not run (unavailable, skipped), each once, with what to install or pass
 * findings.c REPORT.md's findings: per study, what each optimisation bought, in sentences
 * inversions.c variants slower than the variant they build on (record field builds_on)
 * roofline.c the roofline table, the per-call region roofline and the training table
 * levels.c   one CPU at two ISA levels: each variant's time and fraction of bound at both
 * precision.c reduced precision: speed and accuracy by storage type
 * performance.c seed 004's Table I: a declared list of per-run metric columns, mean ± std
 * batch.c, pipeline.c, overlap.c, copies.c, algo_search.c  the data path: batch sweep, loading,
 *            overlap (prefetching), host-device copies, cuDNN search
 * select.c   case selectors those share: a metric, whether a study has a case of a kind
 * agreement.c each variant's cost/loss trajectory against the baseline's
 * bottleneck.c where the time goes (profile regions) and the functions table
 * published.c the write-ups' own tables, as data, printed beside ours
 * formats.c  renders a table as Markdown, CSV or LaTeX (booktabs)
 * figures.c  writes figure data files and runs the gnuplot scripts in plots/
 * report.c   `speedlab report`: options, output layout, REPORT.md
 * compare.c  `speedlab compare A B`
 */
#ifndef SL_REP_H
#define SL_REP_H

#include <jansson.h>
#include <stdio.h>
#include <sys/types.h>

/* ---- records ---------------------------------------------------------------------------------- */

/* An environment: records with the same host, cpu_model and isa (the level the kernels ran: two ISA
 * levels of one CPU are two machines for the report). Never averaged across. */
typedef struct rep_env {
    char *host, *cpu_model;
    char *isa;       /* env.isa, or NULL for records that do not say (older ones) */
    char *name;      /* what the report calls it: "host", or "host (isa)" */
    char *slug;      /* directory name for this environment's outputs: "host", or "host-isa" */
    json_t *env;     /* the env object of the first record seen */
    json_t *ceilings; /* the latest calibration record's ceilings, or NULL */
    char *calib_time;
    char *runs[64];  /* the run_ids of its case records, first seen first (64 listed at most) */
    int nruns;
    int nreplaced; /* case records dropped because a later record measured the same case */
    /* Of those, the ones whose later record ran at another thread count (`threads`): the report shows
     * one record per case, so runs at two --threads in one set hide one of them; threads_example names
     * the first such case ("study variant: 1 -> 2 threads"). */
    int nthreads_replaced;
    char *threads_example;
    /* Pooling (rep_set.pool, or the rounds of one run: pool.c): cases shown with the repetitions of
     * several records, the records pooled into them, and cases that could not be pooled because one of
     * their records failed (shown failed: a time measured beside a failed check is not shown). */
    int npooled_cases, npooled_records, npool_failed;
} rep_env;

/* One case record, with its repetition statistics computed from times_s. */
typedef struct rep_case {
    char *file;
    int line;
    int env;                  /* index into rep_set.envs */
    const char *study, *variant, *size_name, *status, *error, *baseline, *run_id, *time;
    const char *reduced_reason;
    const char *builds_on;    /* the variant this one is an optimisation of, or NULL */
    long size;
    int reduced, extrapolated, threads;
    int gpu;                  /* runs on a GPU: its record's traits hold "device" */
    int ntimes;
    double *times;            /* sorted ascending */
    double median, mean, std, min, max, cv, p25, p75;
    double gflops, gbs, ai;   /* NAN when absent */
    int replaced;             /* always 0 once loaded: the loader keeps only a case's latest record */
    char *pkey;               /* the record's params other than the size, "k=v k=v" ("" when none):
                               * part of the case's identity (pipeline's cache=warm and cache=cold) */
    int nsame;                /* cases of its environment, study and size with the same params: the
                               * size's main set (rep_find), against a side run's (a sweep's epochs=2) */
    json_t *rec;              /* the whole record: profile, metrics, series, phases, counters */
    int pooled;               /* records whose repetitions it holds: 1, or more once pooled (pool.c) */
    int pooled_rounds;        /* of those, the rounds (record field round) of its latest record's run */
    struct rep_case *held;    /* while loading, with pooling: the case's earlier records (pool.c) */
    int nheld;
} rep_case;

/* A string -> int map (hash.c): the loader's case keys, compare's lookups. */
typedef struct rep_hash {
    char **keys;
    int *vals;
    size_t cap, n;
} rep_hash;
int rep_hash_get(const rep_hash *h, const char *key);     /* -1 when absent */
int rep_hash_put(rep_hash *h, const char *key, int val);  /* 0, or -1 out of memory */
void rep_hash_free(rep_hash *h);

typedef struct rep_set {
    rep_case *cases;
    int ncases, capcases;
    rep_env *envs;
    int nenvs;
    int nerrors;              /* records or files skipped because of bad input */
    int nfiles;
    rep_hash keys;            /* case key (env, size, study, variant, params) -> index in cases */
    int pool;                 /* set before rep_load (--pool): a case measured in several runs shows
                               * all their repetitions pooled, not the latest run's (pool.c) */
} rep_set;

/* Reads every *.jsonl file below each path (a run directory, a parent of runs, or a file). Symlinked
 * directories below a given path are not followed (`latest` points at a run that is read anyway);
 * a file reached twice is read once. Errors go to `err` as "file:line: what". A case measured again
 * keeps only its latest record (the later time; the later one read on a tie), in the place of the
 * case's first record: memory grows with the cases, not the records, and loading is linear. The
 * exception is pooling (rep_set.pool, and the rounds of one run, `speedlab run --rounds`): then a
 * case's records are held until the end and merged (rep_pool_cases), and memory grows with them. */
void rep_load(rep_set *s, int npaths, char **paths, FILE *err);
void rep_set_free(rep_set *s);
void rep_case_free(rep_case *c);
/* A case's repetition statistics (median, quartiles, mean, std, min, max, cv) from its times. */
void rep_case_stats(rep_case *c);
/* pool.c: whether two records of one case are pooled; keep takes other (and what other held) into its
 * held records (0, or -1 out of memory, nothing moved); at the end of loading, each case with held
 * records becomes what they pool to. */
int rep_pools(const rep_set *s, const rep_case *a, const rep_case *b);
int rep_hold(rep_case *keep, rep_case *other);
void rep_pool_cases(rep_set *s);

/* Studies in the set for one environment, in first-seen order; returns count, fills names (borrowed). */
int rep_studies(const rep_set *s, int env, const char **names, int max);
/* Variants of a study (first-seen order) and its sizes (ascending). */
int rep_variants(const rep_set *s, int env, const char *study, const char **names, int max);
int rep_sizes(const rep_set *s, int env, const char *study, long *sizes, int max);
/* The current (not replaced by a later record) case, or NULL. When the variant has cases of several param sets at the
 * size (pipeline's cache=warm and cold; the main run's epochs and a batch sweep's), the one whose set
 * has the most cases there (the most variants), then the earliest: every table but the ones that
 * compare param sets (loading, sweep) shows the main run. */
const rep_case *rep_find(const rep_set *s, int env, const char *study, const char *variant, long size);
/* Whether a variant of a study runs on a GPU, from its cases' traits (rep_case.gpu). */
int rep_is_gpu(const rep_set *s, int env, const char *study, const char *variant);
int rep_is_ok(const rep_case *c);
/* Framework baselines (frameworks.c): whether a case is one (its traits hold "external"), whether a
 * study has any that ran (ok: unavailable ones are in the not-run table), the fastest ok framework case and the fastest ok C CPU case at a size (or NULL), and
 * REPORT.md's line comparing the two (and one line per framework that reported running above the
 * kernels' instruction-set level: its record's external.isa.mismatch). */
int rep_case_external(const rep_case *c);
int rep_has_frameworks(const rep_set *s, int env, const char *study);
const rep_case *rep_best_framework(const rep_set *s, int env, const char *study, long size);
const rep_case *rep_best_c(const rep_set *s, int env, const char *study, long size);
void rep_framework_line(FILE *f, const rep_set *s, int env, const char *study);
/* A baseline case's "torch 2.15.0, khatri-rao form" ("... form (forced)" under --param form=); the study's "numpy 1.24.2, torch 2.15.0" (both into
 * buf, returned; "" when the records do not say). */
const char *rep_framework_desc(char *buf, size_t n, const rep_case *c);
const char *rep_framework_versions(char *buf, size_t n, const rep_set *s, int env, const char *study);

/* The environment of a record's env object, added when new (envs.c); -1 when out of memory. */
int rep_env_index(rep_set *s, const json_t *env);
void rep_env_free(rep_env *e);
/* 1 when two optional strings are equal (both absent counts as equal). */
int rep_same_opt(const char *a, const char *b);

/* ---- statistics ------------------------------------------------------------------------------- */

void rep_sort(double *x, int n);
double rep_quantile(const double *sorted, int n, double q);  /* linear interpolation, q in [0,1] */
double rep_mean(const double *x, int n);
double rep_std(const double *x, int n);                      /* sample std (n-1) */
/* Two-sided Mann-Whitney U test of samples a and b. *u gets U of a. Exact distribution when both
 * n <= 20 and there are no ties; otherwise the normal approximation with tie and continuity
 * correction (as scipy.stats.mannwhitneyu). Returns the p-value, or NAN when a side is empty. */
double rep_mann_whitney(const double *a, int na, const double *b, int nb, double *u, int *exact);

/* ---- tables ----------------------------------------------------------------------------------- */

/* A cell: display text (UTF-8; ±, ×, †, ‡ and — are translated for LaTeX), and a number for CSV. */
typedef struct rep_cell {
    char *text;
    double num;
    int has_num;
} rep_cell;

typedef struct rep_table {
    char *id;          /* file stem, e.g. "entropy_mi-speedup" */
    char *title;
    int ncols;
    char **cols;       /* column headers (display) */
    char **csv_cols;   /* column headers for CSV (machine names) */
    int nrows, caprows;
    rep_cell *cells;   /* nrows * ncols */
    int *group_start;  /* row starts a new group (a rule in LaTeX, repeated key blanked) */
    char **status;     /* per row, the case's status ("ok", "failed", ...), or NULL: see rep_row_status */
    int *colflags;     /* per column, REP_COL_* */
    int nnotes;
    char **notes;      /* lines printed under the table */
} rep_table;

rep_table *rep_table_new(const char *id, const char *title, int ncols, const char *const *cols,
                         const char *const *csv_cols);
void rep_table_free(rep_table *t);
/* Column flags. CSV_ONLY: written to CSV only (a std beside its mean: Markdown and LaTeX show the pair
 * as "mean ± std" in one cell). NUMERIC: a column of numbers even where no row has one (a metric no
 * variant recorded), so that CSV leaves its cells empty rather than writing "—". */
enum { REP_COL_CSV_ONLY = 1, REP_COL_NUMERIC = 2 };
void rep_col_flags(rep_table *t, int col, int flags);
int rep_table_row(rep_table *t, int group_start);           /* new row, returns its index */
/* The case status of a row of cases. A table with row statuses gets a CSV `status` column, and its
 * numeric CSV columns hold numbers only: "unavailable", "failed: ..." or "—" there is written empty. */
void rep_row_status(rep_table *t, int row, const char *status);
void rep_cell_text(rep_table *t, int row, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rep_cell_num(rep_table *t, int row, int col, double num, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A number cell, or "—" when v is not finite (a metric the case did not record). */
void rep_cell_num_or_dash(rep_table *t, int row, int col, double v, const char *fmt);
void rep_table_note(rep_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds a note only once (same text). */
void rep_table_note_once(rep_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Human time: "12.3 ms". */
void rep_fmt_time(char *buf, size_t n, double s);
/* Marks for a case: "†" reduced, "‡" extrapolated; notes added to t. */
const char *rep_case_mark(rep_table *t, const rep_case *c);

/* Table builders; each returns NULL when the study has nothing for that table. */
rep_table *rep_tab_speedup(const rep_set *s, int env, const char *study);
rep_table *rep_tab_crossover(const rep_set *s, int env, const char *study);
rep_table *rep_tab_phases(const rep_set *s, int env, const char *study);
rep_table *rep_tab_summary(const rep_set *s, int env, const char *study);
rep_table *rep_tab_roofline(const rep_set *s, int env, const char *study);
/* Per-call roofline of the regions a study declares work for (record field region_work). */
rep_table *rep_tab_region_roofline(const rep_set *s, int env, const char *study);
/* Whether the study records series (per epoch or iteration): a training study. */
int rep_is_training(const rep_set *s, int env, const char *study);
rep_table *rep_tab_training(const rep_set *s, int env, const char *study);
/* The batch-size trade-off (batch.c): one case's throughput and final accuracy. */
typedef struct rep_batch {
    double samples_per_s, epoch_s, test_acc, epochs; /* NAN where the record has none */
} rep_batch;
/* Fills p from an ok case; 1 when it has both a throughput and an accuracy, else 0. */
int rep_batch_point(const rep_case *c, rep_batch *p);
/* A variant's sweep: the param set (pkey) of its cases at the most sizes, when at least two, else NULL;
 * and its case at a size in that set, or NULL: what the sweep's table and figure show. */
const char *rep_batch_set(const rep_set *s, int env, const char *study, const char *variant);
const rep_case *rep_batch_case(const rep_set *s, int env, const char *study, const char *variant, long size,
                               const char *set);
/* Whether the study is a sweep worth the table and figure: a variant at >1 size in one param set, its
 * cases with throughput and accuracy. */
int rep_batch_sweep(const rep_set *s, int env, const char *study);
/* The data path (pipeline.c): loading by method and cache state, and REPORT.md's section. */
int rep_is_loading(const rep_set *s, int env, const char *study);
rep_table *rep_tab_loading(const rep_set *s, int env, const char *study);
/* The loading figure's data (STUDY-loading.dat for bars.gp); 1 when written. */
int rep_loading_data(const rep_set *s, int env, const char *study, FILE *f);
void rep_data_path_section(FILE *f, const rep_set *s, int env);
/* Overlap (overlap.c): epoch time and the compute's wait for data by prefetch depth
 * (`STUDY-overlap`), for a study whose records carry wait_fraction and epoch_s_mean; its figure's data
 * (STUDY-overlap.dat for overlap.gp; 1 when written) and the data path section's sentences. */
int rep_is_overlap(const rep_set *s, int env, const char *study);
rep_table *rep_tab_overlap(const rep_set *s, int env, const char *study);
int rep_overlap_data(const rep_set *s, int env, const char *study, FILE *f);
void rep_overlap_sentences(FILE *f, const rep_set *s, int env, const char *study);
/* Host-device copies (copies.c): copy GB/s against the transfer size, for a study whose records carry the
 * metric `pinned` (h2d); the figure's data (STUDY-bandwidth.dat for bandwidth.gp, 1 when written); the
 * data-path sentences. */
int rep_is_copies(const rep_set *s, int env, const char *study);
rep_table *rep_tab_copies(const rep_set *s, int env, const char *study);
/* The planner (planner.c): a case's impl field ("level", "isa", "chosen_by", "why") or NULL; whether it ran
 * at another level than its run's env.isa; the study's table of what ran and why, or NULL where no
 * choice was made (a native build). */
const char *rep_impl(const rep_case *c, const char *field);
int rep_impl_moved(const rep_set *s, const rep_case *c);
rep_table *rep_tab_planner(const rep_set *s, int env, const char *study);
/* OpenMP attribution (threads.c): per-thread busy time and imbalance of the "threaded" rows whose records
 * carry threads_busy_s; NULL when none does. */
rep_table *rep_tab_thread_busy(const rep_set *s, int env, const char *study);
int rep_copies_data(const rep_set *s, int env, const char *study, FILE *f);
void rep_copies_sentences(FILE *f, const rep_set *s, int env, const char *study);
/* The copies' other half: a GPU training fed from the host, synchronously or with the copies overlapped (the
 * mlp study's records with the metric `feed`: 0 resident, 1 sync, 2 overlap). */
int rep_is_feed(const rep_set *s, int env, const char *study);
void rep_feed_sentences(FILE *f, const rep_set *s, int env, const char *study);
/* cuDNN's benchmark mode (algo_search.c): cudnnFind* against cuDNN's heuristic, for a study whose records
 * carry algo_search_s and cudnn_find (cnn's cudnn rows): the table and the data-path sentences. */
int rep_is_algo_search(const rep_set *s, int env, const char *study);
rep_table *rep_tab_algo_search(const rep_set *s, int env, const char *study);
void rep_algo_search_sentences(FILE *f, const rep_set *s, int env, const char *study);
/* Reduced precision (precision.c): for a study whose records carry storage_bits. */
int rep_is_precision(const rep_set *s, int env, const char *study);
rep_table *rep_tab_precision(const rep_set *s, int env, const char *study);
/* The precision figure's data (STUDY-precision.dat for precision.gp); 1 when written. */
int rep_precision_data(const rep_set *s, int env, const char *study, FILE *f);
/* The data path section's line for the study (REPORT.md). */
void rep_precision_sentences(FILE *f, const rep_set *s, int env, const char *study);
/* Samples/s and final test accuracy against the size (`STUDY-sweep`), or NULL when not a sweep. */
rep_table *rep_tab_batch(const rep_set *s, int env, const char *study);
/* Seed 004's Table I (performance.c): for a study whose records carry epoch_s_mean, else NULL. */
rep_table *rep_tab_performance(const rep_set *s, int env, const char *study);
/* Each variant's objective series (cost per iteration, train_loss per epoch) against the baseline's. */
rep_table *rep_tab_agreement(const rep_set *s, int env, const char *study);
/* The variants not run (notrun.c): whether a case is one (status unavailable or skipped), and the
 * table that lists each once with its reason and what to install or pass, or NULL when none. */
int rep_not_run(const rep_case *c);
rep_table *rep_tab_not_run(const rep_set *s, int env, const char *study);
/* Inversions: at each size, every ok variant whose median is slower than the ok median of the variant it
 * builds on (same machine, same work). Fills lines with malloc'd sentences ("simd is 0.58× naive at
 * B=16384 on avx2: an optimisation that does not pay here"); returns how many (at most max). */
int rep_inversions(const rep_set *s, int env, const char *study, char **lines, int max);
#define REP_MAX_INVERSIONS 256 /* lines kept per study and machine, by the table note and REPORT.md alike */
/* The note that says how inversions are found and how to read one at a small size. */
extern const char rep_inversion_legend[];
/* One bottleneck table per variant (its largest ok size with a profile); returns count. */
int rep_tab_bottleneck(const rep_set *s, int env, const char *study, rep_table **out, int max);
/* Per function name (all call sites summed; seed 002's Table 2.1 shape), one per profiled variant. */
int rep_tab_functions(const rep_set *s, int env, const char *study, rep_table **out, int max);
/* The write-ups' tables for a study (published.c); returns count. */
int rep_tab_published(const char *study, rep_table **out, int max);

/* ---- comparing cases (units.c) ---------------------------------------------------------------- */

/* What a study's ok cases at one size are compared by: the median time per repetition (RUN: they all
 * did the same work), the time per sample or per epoch (a reduced or extrapolated run beside full ones,
 * every case recording it), or NONE: only the cases that did the reference's work are compared. */
typedef enum { REP_UNIT_RUN, REP_UNIT_SAMPLE, REP_UNIT_EPOCH, REP_UNIT_NONE } rep_unit;
/* Same work: the same reduction (reduced and its reason) and extrapolation, or neither. */
int rep_same_work(const rep_case *a, const rep_case *b);
rep_unit rep_size_unit(const rep_set *s, int env, const char *study, long size);
/* "sample", "epoch", or NULL (RUN, NONE). */
const char *rep_unit_name(rep_unit u);
/* An ok case's time per unit (RUN, NONE: its median) and its spread (0 when not recorded); NAN when it
 * records none. */
double rep_unit_time(const rep_case *c, rep_unit u);
double rep_unit_std(const rep_case *c, rep_unit u);
/* NONE's reference: the first full (neither reduced nor extrapolated) ok case at the size, in variant
 * order; else the baseline; else the first ok case. NULL when none ran. */
const rep_case *rep_cmp_ref(const rep_set *s, int env, const char *study, long size);
/* The time c is compared by at its size: per the size's unit; NAN when c is not ok, or did other work
 * than the reference and its size has no unit. */
double rep_cmp_time(const rep_set *s, int env, const char *study, const rep_case *c);

/* ---- REPORT.md's findings (findings.c) -------------------------------------------------------- */

/* levels.c: each CPU variant of a CPU measured at two ISA levels, side by side; NULL when none was. */
rep_table *rep_tab_isa_levels(const rep_set *s);
/* The fraction of its roofline bound a case reached (roofline.c): NAN without rates or a calibration. */
double rep_fraction_of_bound(const rep_set *s, const rep_case *c);
/* Cell (r, col): the fraction num / den of a roofline bound as a percentage, or, above 100 %, an error (the work count
 * or the ceiling is wrong: never a measurement) with the table's note; returns 1 for such an error. */
int rep_fraction_cell(rep_table *t, int r, int col, double num, double den);
/* The "Findings" section: per machine and study, what the records say each optimisation bought. */
void rep_findings_section(FILE *f, const rep_set *s);

/* ---- formats ---------------------------------------------------------------------------------- */

enum { REP_MD = 1, REP_CSV = 2, REP_TEX = 4 };
/* Names into outputs (escape.c): Markdown table cell, prose, code span; gnuplot data block title. */
void rep_md_cell(const char *s, FILE *f);
void rep_md_text(const char *s, FILE *f);
void rep_md_code(const char *s, FILE *f);
void rep_data_name(const char *s, FILE *f);
void rep_write_md(const rep_table *t, FILE *f);
void rep_write_csv(const rep_table *t, FILE *f);
void rep_write_tex(const rep_table *t, FILE *f);

/* ---- figures ---------------------------------------------------------------------------------- */

/* Where the gnuplot scripts are: $SPEEDLAB_PLOTS_DIR, else SL_SOURCE_ROOT/plots. */
const char *rep_plots_dir(void);
/* Path of gnuplot on PATH, or NULL. */
const char *rep_gnuplot(void);
/* Runs script (a name in plots/) on datafile, writing outbase.{png,pdf,svg}; extra is appended to the
 * -e assignments (may be NULL). Returns 0 on success. */
int rep_run_gnuplot(const char *script, const char *datafile, const char *outbase, const char *extra);

/* s made safe inside a gnuplot single-quoted string (quotes doubled, control characters a space), in buf
 * of n bytes; returns buf. Every string of a results file that reaches a gnuplot command goes through it. */
const char *rep_gp_str(char *buf, size_t n, const char *s);

/* A figure written for a study: markdown links go into the study's page. */
typedef struct rep_figure {
    char path[512];   /* relative to the study page: figures/x (no extension) */
    char caption[384];
    int rendered;
} rep_figure;

/* Writes the data files of every figure for a study under dir/figures/ and renders them when plots
 * is set and gnuplot exists. Returns the number of figures (up to max). */
int rep_figures(const rep_set *s, int env, const char *study, const char *dir, int plots,
                rep_figure *figs, int max);

/* The timeline figure of every path whose run directory has a trace.json (speedlab run --trace): data
 * and figures under out/timelines/, a section in the report (reports/timeline.c). */
int rep_timelines(FILE *report, const char *out, int npaths, char **paths, int plots); /* traces skipped */

/* ---- output files (output.c) ----------------------------------------------------------------- */

/* An injective, path-safe file name for a string from a results file (study, variant, host): letters,
 * digits, '_', '-' and a '.' not in front stay, any other byte is "~XX" (hex); malloc'd. */
char *rep_path_name(const char *s);
/* Opens an input (a results file, a cases file, a calibration) for reading, a regular file only, never
 * through a link: a FIFO or device would block the open or the read, a link could lead out of the
 * results folder (common/safefile.h). NULL with *why (strerror's text, or what it is). */
FILE *rep_open_input(const char *path, const char **why);
/* Opens a temporary beside path; NULL after a message on stderr (counted in rep_out_failures). */
FILE *rep_out_open(const char *path);
/* Checks every write and the close, then renames the temporary to path; -1 after a message. A FILE
 * not from rep_out_open (stdout) is flushed and checked only. */
int rep_out_close(FILE *f);
/* How many output files failed so far in this process: `report` and `compare` exit 1 when any did. */
int rep_out_failures(void);
/* From now on SIGINT, SIGTERM and SIGHUP remove the open outputs' temporaries (and the one named by
 * rep_out_extra_temporary, NULL for none, after killing its writer, 0 for none) before the process ends
 * as the signal says. */
void rep_out_cleanup_on_signals(void);
void rep_out_extra_temporary(const char *path, pid_t writer);
/* Says on stderr that path was not written (what failed, errno, 0 for "an earlier write failed" or -1
 * when `what` says it all) and counts it in rep_out_failures:
 * for outputs another program writes (gnuplot's figures). */
void rep_out_fail(const char *path, const char *what, int err);

/* ---- helpers ---------------------------------------------------------------------------------- */

char *rep_strdup(const char *s);
char *rep_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* mkdir -p; 0 on success. Below the output folder (rep_out_root) each folder must be a real directory:
 * a link there is refused, so nothing is written outside the folder through it. */
int rep_mkdirs(const char *path);
/* The output folder of this report (set: 1, dir or NULL to clear); returns it. rep_out_open refuses a
 * file whose folder below it is a link. */
const char *rep_out_root(const char *dir, int set);
double rep_jnum(const json_t *o, const char *key);   /* NAN when absent or not a number */
/* select.c: a case's metric (NAN when absent, or c NULL); whether the study has a current case on env
 * for which pred holds (how a study-specific table decides it applies). */
double rep_metric(const rep_case *c, const char *name);
int rep_study_has(const rep_set *s, int env, const char *study, int (*pred)(const rep_case *c));

#endif
