/*
 * study.h: how a study declares itself to the runner (RAJAPerf-style metadata).
 *
 * A study is one `sl_study` value: its sizes, variants, reference tolerance, FLOP and byte counts per
 * repetition, and five callbacks. The runner (experiments/runner.c) owns everything else: the size
 * sweep, availability of variants, the correctness check before timing, warm-up, repetitions,
 * profiler regions, results records. A study never writes results and never times itself; kernels
 * (kernels/<study>/) never know about any of this.
 *
 * Adding a variant: one kernel file in kernels/<study>/ (with the study's kernel signature, declared in
 * the kernels' header), one line in kernels/<study>/meson.build, one row in the study's variant table:
 * its name, requirement, description, the variant it builds on, its traits and its functions. Nothing
 * else names a variant: no enum, switch or array beside the table. The registry self-check
 * (sl_study_validate, run by `speedlab list` and `run` and by tests/experiments) refuses an incomplete
 * row with the study's and the variant's names. docs/developing.md has the recipe.
 */
#ifndef SL_STUDY_H
#define SL_STUDY_H

#include <stddef.h>
#include <stdint.h>

#define SL_ERRLEN 512

struct sl_study_s;

/* Error text filled by callbacks: what is wrong, where, and what would be right. */
typedef struct sl_error {
    char msg[SL_ERRLEN];
} sl_error;

void sl_error_set(sl_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What the runner and the reports need to know about a variant, declared on its row (never guessed from
 * its name). Records carry them as names (docs/results-schema.md, "traits"). */
enum sl_trait {
    SL_THREADED = 1u << 0, /* reads the thread count: gets --threads (others get 1) */
    SL_DEVICE = 1u << 1,   /* runs on a GPU: reports keep it out of the CPU comparisons */
    SL_REDUCED = 1u << 2,  /* does less than the study's work by default (mlp naive: fewer epochs) */
    /* A framework baseline run outside the process (experiments/external.c, docs/baselines.md): requires
     * "python:MODULE"; the study's program baselines/STUDY.py runs the form named by the row's name. The
     * runner never calls the study's prepare, run or release for it: it hands the inputs over
     * (external_inputs), reads the outputs back (external_outputs), then checks and records as usual. */
    SL_EXTERNAL = 1u << 3,
};

/* A variant: one row of its study's table. `requires` names the build or machine feature it needs ("openmp", "blas", "onednn", "cuda",
 * "cublas", "cudnn", "avx512bf16" (the CPU has AVX512_BF16 and the kernels that run have code for it:
 * the AVX-512 ones, not SPEEDLAB_ISA=v3's), or NULL for none); the runner reports it unavailable, with the reason, when the
 * feature is missing, and never calls the study for it. `builds_on` names the variant this one is an
 * optimisation of (simd of naive, omp of simd...), or NULL for a starting point: every record carries
 * it, and the report flags a variant slower than the one it builds on (an optimisation that does not
 * pay on that machine and size), so declare it wherever a user would expect this one to be faster. */
typedef struct sl_variant {
    const char *name;
    const char *requires;
    const char *description;
    const char *builds_on;
    unsigned traits;     /* enum sl_trait flags, or'ed */
    /* The functions that run it and size its workspace: a struct of the study's own type (the study's
     * run, prepare and release read it). Required; a study's `incomplete` callback says which of its
     * fields a row lacks. */
    const void *kernels;
} sl_variant;

/* The thread count variant v runs on: `threads` (--threads) when it is SL_THREADED, else 1. The one
 * channel for it: the study passes this to its kernels as a parameter (none reads a global). */
static inline int sl_variant_threads(const sl_variant *v, int threads)
{
    return (v->traits & SL_THREADED) && threads > 0 ? threads : 1;
}

/* What a parameter's value is. `speedlab run` parses every --param of every chosen study with its row
 * before the first case runs (experiments/params.c), so a bad value is refused with the flag, the study,
 * the value and what is accepted, and no case and no run directory exist yet. */
enum sl_param_type {
    SL_PARAM_TEXT = 0, /* a string the study checks itself (what a 3-field row declares); `choices`, when
                        * set, lists the accepted values "a|b|c" and the runner checks them */
    SL_PARAM_INT,      /* an integer in [min, max]: decimal, no leading space or '+' */
    SL_PARAM_REAL,     /* a finite number in [min, max] */
};

/* A study parameter settable with `--param name=value` (shown by `speedlab list`). Rows of three
 * fields {"name", "default", "help"} stay valid and mean SL_PARAM_TEXT; give numeric parameters their
 * type and range: {"hidden", "8", "hidden units", SL_INT(1, 64)}. Records store the parsed value
 * written back as text ("0.1" for "1e-1"), never the text given. The registry self-check refuses a row
 * whose default does not parse or lies outside its range. */
typedef struct sl_param {
    const char *name;
    const char *default_value;
    const char *help;
    int type;           /* enum sl_param_type */
    double min, max;    /* inclusive range of SL_PARAM_INT and SL_PARAM_REAL (exact for |x| <= 2^53) */
    const char *choices; /* SL_PARAM_TEXT: "warm|cold", or NULL for any text */
} sl_param;
/* The trailing fields of a typed row: {"hidden", "8", "hidden units", SL_INT(1, 64)}. (A 3-field row
 * compiles, but -Wextra warns about its missing fields: give every new row its type.) */
#define SL_INT(lo, hi) SL_PARAM_INT, (lo), (hi), NULL
#define SL_REAL(lo, hi) SL_PARAM_REAL, (lo), (hi), NULL
#define SL_TEXT(choices) SL_PARAM_TEXT, 0, 0, (choices)

/* What the runner passes to every callback. */
typedef struct sl_opts {
    uint64_t seed;          /* --seed: inputs are a pure function of (seed, size) */
    int threads;            /* --threads: for SL_THREADED variants (sl_variant_threads) */
    int quick;              /* --quick: CI/smoke mode; studies may shrink work and must say so */
    const char *data_dir;   /* --data DIR, or NULL for the study's default */
    int n_params;           /* --param name=value pairs, as given */
    const char *const *param_names;
    const char *const *param_values;
} sl_opts;

/* Parameter lookup: the value given with --param (the last one wins), else the study's declared default.
 * sl_param_long and sl_param_double parse it as the row declares (an SL_PARAM_TEXT row: any long, or any
 * finite double); values were checked before the first case, so these only fail on a study's bug. */
const char *sl_param_str(const sl_opts *o, const struct sl_study_s *s, const char *name);
long sl_param_long(const sl_opts *o, const struct sl_study_s *s, const char *name);
double sl_param_double(const sl_opts *o, const struct sl_study_s *s, const char *name);

/* Study-specific results for the case's record (see docs/results-schema.md: metrics, series, notes).
 * Opaque; filled from the study's `finish` callback. */
typedef struct sl_record sl_record;
void sl_record_metric(sl_record *r, const char *name, double value);
void sl_record_series(sl_record *r, const char *name, const double *values, int n);
void sl_record_note(sl_record *r, const char *text);
/* Marks the case as reduced (less work than the study's definition: fewer epochs, a data subset...).
 * The reason is shown in every table that shows the case. */
void sl_record_reduced(sl_record *r, const char *reason);
/* The work this variant's repetition actually did, when it differs from the study's declared work (a
 * reduced variant: naive training 1 of 20 epochs; a training subset). When the study declares work
 * (flops > 0) and these numbers differ from it, the record's work holds them and `scale` = flops /
 * declared flops; rates and the roofline use them. A study that declares no work because it is known
 * only after the run (galaxy: the optimiser's calls) gives it here, and the record's work holds it. */
void sl_record_work(sl_record *r, double flops, double bytes);
/* (A study that declares bytes but no flops passes flops = 0: its bytes replace the declared ones, with
 * no `scale`, since the variant did the same job counted in its own bytes: pipeline's gzip reads the
 * compressed file.) */
/* Work of one call of the profiler region `region` (its name, as passed to prof_begin): flops, bytes
 * moved from memory, and the precision the flops are in ("fp32" or "fp64": the roofline halves the
 * calibrated FP32 peak for fp64). The report's region roofline divides it by the region's mean time
 * per call from the case's profile: for training studies, whose repetition is a whole run. */
void sl_record_region_work(sl_record *r, const char *region, double flops, double bytes,
                           const char *precision);
/* Whether the runner is timing repetitions now (1), rather than warming up (0): a study that keeps
 * per-repetition numbers of its own (mlp's accuracy per run) keeps only the timed calls'. */
int sl_record_is_timed(const sl_record *r);
/* How far this repetition is: `done` of `total` units ("epoch", "iteration"), from a long `run` (a
 * training study: per epoch, per CG iteration), warm-up runs included. The runner owns what it does:
 * on a terminal it redraws one status line ("[3/12] mlp omp batch=64  rep 2/3  epoch 7/20  ~14 s
 * left"), at most 4 times a second, cleared when the case ends; off a terminal nothing, and records and
 * outputs never change. Call it between steps, never inside a kernel: it is inside the repetition's time
 * but outside the kernels' timed work, and costs a compare off a terminal and a clock read and a compare
 * on one between redraws (a few ns; tests/experiments/test_progress.c measures it). */
void sl_record_progress(sl_record *r, double done, double total, const char *unit);
/* Device phases of one repetition (CUDA variants): call once per repetition from `run`. */
void sl_record_phases(sl_record *r, double h2d_ms, double kernel_ms, double d2h_ms);

/* Inputs handed to an external baseline (SL_EXTERNAL): arrays written to files in the run directory and
 * named values, listed in one inputs.json manifest the program reads (docs/baselines.md). Opaque; filled
 * from the study's `external_inputs` callback. 0, or -1 with the reason in err. */
typedef struct sl_inputs sl_inputs;
int sl_input_f32(sl_inputs *in, const char *name, const float *data, int ndim, const long *shape, sl_error *err);
int sl_input_f64(sl_inputs *in, const char *name, const double *data, int ndim, const long *shape, sl_error *err);
int sl_input_u8(sl_inputs *in, const char *name, const unsigned char *data, int ndim, const long *shape,
                sl_error *err);
int sl_input_i32(sl_inputs *in, const char *name, const int32_t *data, int ndim, const long *shape, sl_error *err);
int sl_input_number(sl_inputs *in, const char *name, double value);
int sl_input_string(sl_inputs *in, const char *name, const char *value);
/* The outputs an external baseline sent back (its JSON "outputs" object), for `external_outputs`:
 * a number, or an array of exactly n numbers. 0, or -1 with err naming what is missing or malformed.
 * `external_outputs` is called twice: with the first call's outputs (a training study's: its check
 * step's), before the check; and with the last timed call's, before `finish` (sl_output_has tells
 * which names came). */
typedef struct sl_outputs sl_outputs;
int sl_output_has(const sl_outputs *out, const char *name);
int sl_output_number(const sl_outputs *out, const char *name, double *x, sl_error *err);
int sl_output_array(const sl_outputs *out, const char *name, double *x, long n, sl_error *err);

enum sl_kind {
    SL_KERNEL = 0,   /* one repetition = one call of the kernel on prepared inputs */
    SL_TRAINING = 1, /* one repetition = one whole training run (records metrics and series) */
};

typedef struct sl_study_s {
    const char *name;        /* "entropy_mi" */
    const char *title;       /* one line for `speedlab list` and reports */
    const char *source;      /* "seed 000, sections 2-3" */
    int kind;                /* enum sl_kind */
    const char *size_name;   /* the swept parameter: "B", "N", "batch" ... */
    const long *sizes;       /* the case-study sizes */
    int n_sizes;
    const long *quick_sizes; /* sizes for --quick */
    int n_quick_sizes;
    /* Further sizes that --sizes accepts but a plain run leaves out: a sweep worth running on request
     * (mlp's and cnn's batch sizes 16-1024) without lengthening every `speedlab run`. May be NULL. */
    const long *sweep_sizes;
    int n_sweep_sizes;
    const char *baseline;    /* the variant speedups are computed against */
    double tolerance;        /* max relative error against the double reference */
    const sl_variant *variants;
    int n_variants;
    const sl_param *params;
    int n_params;
    int default_reps;        /* repetitions when --reps is not given (0: runner default) */
    /* What row v's `kernels` struct lacks ("no workspace function"), or NULL when it is complete.
     * Called by the registry self-check for every row; may be NULL (then only `kernels` != NULL). */
    const char *(*incomplete)(const sl_variant *v);
    /* What row v's timed region copies between host and device, and from what memory (e.g. "in: X, Y
     * from pinned memory; out: 2 doubles"), so that GPU rows and framework forms are compared with the
     * same copies: recorded as the case's `copies`, printed in the report's speedup notes. May be NULL,
     * or return NULL for a row that copies nothing. */
    const char *(*copies)(const sl_variant *v);

    /* Work per repetition, for GFLOP/s, GB/s and the roofline (bytes: compulsory memory traffic). */
    double (*flops)(long size, const sl_opts *o);
    double (*bytes)(long size, const sl_opts *o);
    /* Host bytes that setup will allocate; the runner refuses a size that does not fit in memory. */
    double (*footprint)(long size, const sl_opts *o);
    /* Optional, for a study that reads a data set: 1 with the reason (where it looked, how to get the
     * data) when the user gave no --data and the default data set is not there. The runner then records
     * every variant "unavailable" with that reason, as for a missing GPU, and the run stays clean. With
     * --data given, a missing or broken data set is setup's error: a failed case. */
    int (*data_missing)(const sl_opts *o, char *why, size_t n);

    /* Makes inputs (deterministic from o->seed) and the double-precision reference. NULL + err on
     * failure (bad data file, ...). Not timed. */
    void *(*setup)(long size, const sl_opts *o, sl_error *err);
    /* Prepares variant v (device buffers, packing that the variant's definition excludes from timing).
     * May be NULL. Not timed. */
    int (*prepare)(void *state, int v, sl_error *err);
    /* The timed path: runs variant v once. No allocation, no I/O. Returns 0, or -1 with err. */
    int (*run)(void *state, int v, sl_record *rec, sl_error *err);
    /* The correctness check; *rel_err out, which the runner compares with `tolerance`. Returns -1 with
     * err when the output cannot be checked at all.
     *   SL_KERNEL:   called after one untimed run(); compares variant v's last output with the reference.
     *   SL_TRAINING: called before any timed run(); the study runs its own short check (e.g. the first
     *                few hundred steps' losses against a double-precision reference) and reports the
     *                largest relative difference. */
    int (*check)(void *state, int v, double *rel_err, sl_error *err);
    /* Optional: called before every run() of variant v (the check's untimed run, warm-up and timed
     * repetitions), outside the timed call and its profiler region: a per-repetition reset that is no
     * part of the measured work (pipeline's cold page cache: evicting the file). 0, or -1 with err (a
     * failed case). */
    int (*before_rep)(void *state, int v, sl_error *err);
    /* Optional: metrics, series and notes for the record, after the repetitions. */
    void (*finish)(void *state, int v, sl_record *rec);
    /* Frees what prepare allocated for v (may be NULL). */
    void (*release)(void *state, int v);
    void (*teardown)(void *state);
    /* For a study with SL_EXTERNAL rows (both required then): the set-up inputs, handed to the program;
     * and the program's outputs, put where the study's `check` and `finish` read variant v's output. */
    int (*external_inputs)(void *state, sl_inputs *in, sl_error *err);
    int (*external_outputs)(void *state, int v, const sl_outputs *out, sl_error *err);
} sl_study;

/* The registry (experiments/registry.c, generated from the top-level meson.build's `studies` list): every
 * study, in the order `speedlab list` shows them. */
extern const sl_study *const sl_studies[];
extern const int sl_n_studies;
const sl_study *sl_find_study(const char *name);
/* The registry self-check of one study (experiments/validate.c): every row named, described, with its
 * functions (`kernels`, and the study's `incomplete`), a known requirement, SL_DEVICE exactly when it
 * requires CUDA, builds_on and the baseline naming rows of the study, no name twice. 0, or -1 with
 * "study 'S', variant 'V': what is wrong" in why. */
int sl_study_validate(const sl_study *s, char *why, size_t n);

#endif /* SL_STUDY_H */
