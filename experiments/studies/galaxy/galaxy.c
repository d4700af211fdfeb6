/*
 * experiments/studies/galaxy/galaxy.c: the galaxy study (seed 002): Mocz's 1024-8-3 network trained by
 * the SciPy-style nonlinear CG (experiments/optim/cg.c) for max_iter iterations. One repetition = one
 * whole training from the same seeded initial weights. Regions: line_search, cost_function and
 * gradient (valgrad: cost_and_gradient)
 * (for `default` also its statement groups: forward, error3, error2, accumulate). The accuracies are
 * computed once after the repetitions (finish), outside the profile.
 * Variants: default, layout (kernels/galaxy/{default,layout}.c), simd, omp, blas (fused blocks,
 * kernels/galaxy/fused.h), valgrad (omp's pass giving cost and gradient at once: cost_grad_cb), cuda
 * (kernels/galaxy/galaxy_cuda.h: X uploaded in prepare).
 */
#define _POSIX_C_SOURCE 200809L
#include "study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "data/galaxy_csv.h"
#include "galaxy/galaxy_kernels.h"
#include "galaxy/fused.h"
#include "sl_config.h"
#if SL_HAVE_CUDA
#include "galaxy/galaxy_cuda.h"
#endif
#include "optim/cg.h"
#include "seeded_normal.h"
#include <speedlab/prof.h>

static const sl_param params[] = {
    {"max_iter", "300", "CG iterations (the write-up's MAX_ITER); when given, overrides the size", SL_INT(1, 1000000)},
    {"lambda", "1", "regularisation", SL_REAL(0, 1e6)},
    {"hidden", "8", "hidden units", SL_INT(1, 64)},
    {"lines", "1", "default variant: regions around each gradient statement group (line-level view)", SL_INT(0, 1)},
    {"perturb", "0", "move the first initial weight this many ulps (the training's sensitivity to one bit)", SL_INT(0, 1000000)},
};
/* The swept size is MAX_ITER, as the write-up varies it (Figures 2.2-2.5); --quick runs 20. */
static const long sizes[] = {300};
static const long quick_sizes[] = {20};

typedef struct gstate {
    galaxy_set train, test;
    galaxy_problem p, pt;
    double *theta0, *theta, *ws, *wst, *work, *grad_ref, *grad_tmp;
    int threads, dev_failed;
    int checking;                   /* in check: no region is open for the device time */
    void *cuda;      /* galaxy_cuda * for the cuda variant (prepare/release) */
    unsigned char *pred;
    size_t nt;
    int v, lines, max_iter, quick;
    double *cost_series, *iter_series;
    cg_result res;
    sl_record *rec;  /* the running repetition's record: told each CG iteration (progress) */
    double train_acc, test_acc, train_time_s;
    double ext_cost0; /* an external baseline's cost at theta0 (its gradient goes to grad_tmp) */
    double *gscratch; /* a .cost_grad row's gradient when only its cost is wanted (check) */
} gstate;

/* A device variant's path: the data set goes to the device in prepare, cost and gradient run there. */
typedef struct gx_device {
    int (*prepare)(gstate *s, sl_error *err);
    void (*release)(gstate *s);
    int (*cost)(gstate *s, const double *th, double *J);     /* 0, or -1 (error() says why) */
    int (*grad)(gstate *s, const double *th, double *g);
    const char *(*error)(gstate *s);
    /* Device ms of the h2d, kernel and d2h phases since the last call (0), or -1; and device bytes. */
    int (*phases)(gstate *s, double ms[3]);
    double (*bytes)(gstate *s);
} gx_device;

/* What a variant row's `kernels` points to: cost and gradient in the form its traits call for (a
 * one-thread variant's, a threaded one's taking the thread count, or an SL_DEVICE path); every CPU
 * variant gets the one workspace, sized for the largest need (setup). `grad_lines`: optional, the
 * gradient with a region per statement group (--param lines=1). */
typedef struct gx_kernels {
    double (*cost)(const galaxy_problem *p, const double *theta, double *ws);
    void (*grad)(const galaxy_problem *p, const double *theta, double *grad, double *ws);
    double (*cost_threaded)(const galaxy_problem *p, const double *theta, double *ws, int threads);
    void (*grad_threaded)(const galaxy_problem *p, const double *theta, double *grad, double *ws, int threads);
    void (*grad_lines)(gstate *s, const double *th, double *g);
    /* Cost and gradient from one pass (a row with this has no other CPU functions): CG's cost requests
     * call it (cg_options.fg) and its one-point cache keeps the gradient, which the line search asks
     * for next at the same point (SciPy's dcsrch evaluates phi and derphi at every trial step). */
    double (*cost_grad_threaded)(const galaxy_problem *p, const double *theta, double *grad, double *ws,
                                 int threads);
    const gx_device *device;
} gx_kernels;

extern const sl_study sl_study_galaxy;

static const gx_kernels *kernels_of(int v)
{
    return sl_study_galaxy.variants[v].kernels;
}

/* Where the data set is looked for without --data: $SPEEDLAB_DATA_DIR/galaxy when that variable is set (a
 * relocated tree, such as the GPU bundle, sets it), else the repository's copy in the source tree the
 * build was configured from, else the installed copy (meson install puts data/galaxy there). */
static const char *const default_dirs[] = {SL_SOURCE_ROOT "/data/galaxy", SL_GALAXY_INSTALL_DIR};
#define N_DEFAULT_DIRS (sizeof default_dirs / sizeof default_dirs[0])

static int env_dir(char *dir, size_t n)
{
    const char *root = getenv("SPEEDLAB_DATA_DIR");
    if (!root || !*root)
        return 0;
    snprintf(dir, n, "%s/galaxy", root);
    return 1;
}

/* Whether DIR holds train and test, each as .csv or .csv.gz. */
static int dir_complete(const char *dir)
{
    char p[1024];
    return galaxy_csv_find(dir, "train", p, sizeof p) == 0 && galaxy_csv_find(dir, "test", p, sizeof p) == 0;
}

static int find_dir(const sl_opts *o, char *dir, size_t n, sl_error *err)
{
    if (o->data_dir) {
        snprintf(dir, n, "%s", o->data_dir);
        if (dir_complete(dir)) return 0;
        sl_error_set(err, "galaxy: no train.csv[.gz] and test.csv[.gz] in %s: pass --data DIR with both "
                     "(rows label,p0,...,p1023; the repository's data/galaxy holds them)", dir);
        return -1;
    }
    if (env_dir(dir, n)) {
        if (dir_complete(dir)) return 0;
        sl_error_set(err, "galaxy: no train.csv[.gz] and test.csv[.gz] in %s ($SPEEDLAB_DATA_DIR/galaxy): put "
                     "the repository's data/galaxy there, unset SPEEDLAB_DATA_DIR, or pass --data DIR", dir);
        return -1;
    }
    for (size_t i = 0; i < N_DEFAULT_DIRS; i++)
        if (dir_complete(default_dirs[i])) { snprintf(dir, n, "%s", default_dirs[i]); return 0; }
    sl_error_set(err, "galaxy: no train.csv[.gz] and test.csv[.gz] in %s (the repository's data/galaxy) "
                 "nor in %s (installed): restore data/galaxy from git, or pass --data DIR with both "
                 "(rows label,p0,...,p1023, from Philip Mocz's pmocz/artificialneuralnetwork-python)",
                 default_dirs[0], default_dirs[1]);
    return -1;
}

/* The runner's data_missing hook: only asked when no --data was given. */
static int data_missing(const sl_opts *o, char *why, size_t n)
{
    char dir[900];
    sl_error err = {{0}};
    if (find_dir(o, dir, sizeof dir, &err) == 0)
        return 0;
    snprintf(why, n, "%s", err.msg);
    return 1;
}

static void teardown(void *vs)
{
    gstate *s = vs;
    if (!s) return;
    galaxy_set_free(&s->train); galaxy_set_free(&s->test);
    free(s->theta0); free(s->theta); free(s->ws); free(s->wst); free(s->work);
    free(s->grad_ref); free(s->grad_tmp); free(s->pred); free(s->cost_series); free(s->iter_series);
    free(s->gscratch);
    free(s);
}

/* The rows of a set (padded: galaxy_csv.h), packed again (m x GALAXY_PIXELS) for the baselines' input files. */
static double *packed_rows(const galaxy_set *set)
{
    const long ldx = set->ldx;
    double *a = malloc((size_t)set->m * GALAXY_PIXELS * sizeof(double));
    if (a)
        for (long t = 0; t < set->m; t++)
            memcpy(a + t * GALAXY_PIXELS, set->X + t * ldx, GALAXY_PIXELS * sizeof(double));
    return a;
}

static void *setup(long size, const sl_opts *o, sl_error *err)
{
    char dir[900], p[1024], msg[512];
    if (find_dir(o, dir, sizeof dir, err)) return NULL;
    gstate *s = calloc(1, sizeof *s);
    galaxy_csv_find(dir, "train", p, sizeof p);
    if (galaxy_csv_load(p, &s->train, msg, sizeof msg)) { sl_error_set(err, "%s", msg); free(s); return NULL; }
    galaxy_csv_find(dir, "test", p, sizeof p);
    if (galaxy_csv_load(p, &s->test, msg, sizeof msg)) { sl_error_set(err, "%s", msg); teardown(s); return NULL; }
    /* checked as long and double, before any narrowing (hidden=4294967304 was once 8 units as an int) */
    long h = sl_param_long(o, &sl_study_galaxy, "hidden");
    if (h < 1 || h > 64) { sl_error_set(err, "galaxy: hidden=%ld, want 1-64", h); teardown(s); return NULL; }
    double lambda = sl_param_double(o, &sl_study_galaxy, "lambda");
    if (!(lambda >= 0)) { sl_error_set(err, "galaxy: lambda=%g, want >= 0", lambda); teardown(s); return NULL; }
    long mi = size;
    for (int i = 0; i < o->n_params; i++)           /* an explicit --param max_iter= wins */
        if (strcmp(o->param_names[i], "max_iter") == 0) mi = sl_param_long(o, &sl_study_galaxy, "max_iter");
    if (mi < 1 || mi > 1000000) { sl_error_set(err, "galaxy: max_iter=%ld, want 1-1000000", mi); teardown(s); return NULL; }
    s->max_iter = (int)mi;
    s->quick = s->max_iter < 300;
    s->lines = sl_param_long(o, &sl_study_galaxy, "lines") != 0;
    /* the loader's row stride, padded as the kernels want it (galaxy_kernels.h, galaxy_ldx) */
    s->p = (galaxy_problem){s->train.X, s->train.y, s->train.m, GALAXY_PIXELS, (int)h, GALAXY_CLASSES, lambda,
                            s->train.ldx};
    s->pt = s->p; s->pt.X = s->test.X; s->pt.y = s->test.y; s->pt.m = s->test.m; s->pt.ldx = s->test.ldx;
    s->nt = galaxy_n_theta(&s->p);
    s->theta0 = malloc(s->nt * sizeof(double)); s->theta = malloc(s->nt * sizeof(double));
    s->grad_ref = malloc(s->nt * sizeof(double)); s->grad_tmp = malloc(s->nt * sizeof(double));
    s->gscratch = malloc(s->nt * sizeof(double));
    s->threads = o->threads > 0 ? o->threads : 1;
    /* one workspace that fits every CPU variant (galaxy_kernels.h's and fused.h's), so no row has to say which */
    size_t wsd = galaxy_ws_doubles(&s->p), fwsd = galaxy_fused_ws_doubles(&s->p, s->threads);
    s->ws = malloc((wsd > fwsd ? wsd : fwsd) * sizeof(double));
    s->wst = malloc(galaxy_ws_doubles(&s->pt) * sizeof(double));
    s->work = malloc(cg_work_doubles(s->nt) * sizeof(double));
    s->pred = malloc((size_t)(s->train.m > s->test.m ? s->train.m : s->test.m));
    /* one entry per iteration and the start; max_iter is at most 10^6 (its row), and the sum is taken
     * in size_t so that no int can wrap (max_iter=2147483647 once made it 0 and crashed) */
    s->cost_series = malloc(((size_t)s->max_iter + 1) * sizeof(double));
    s->iter_series = malloc(((size_t)s->max_iter + 1) * sizeof(double));
    if (!s->theta0 || !s->theta || !s->grad_ref || !s->grad_tmp || !s->gscratch || !s->ws || !s->wst || !s->work ||
        !s->pred || !s->cost_series || !s->iter_series) {
        sl_error_set(err, "galaxy: out of memory for the workspaces (%zu parameters, %ld rows)", s->nt,
                     (long)s->p.m);
        teardown(s);
        return NULL;
    }
    sn_rng st = {o->seed};  /* initial weights uniform in [-0.2, 0.2] from the run's seed */
    for (size_t i = 0; i < s->nt; i++) s->theta0[i] = (double)(sn_next(&st) >> 11) / 9007199254740992.0 * 0.4 - 0.2;
    long ulps = sl_param_long(o, &sl_study_galaxy, "perturb");
    if (ulps < 0 || ulps > 1000000) { sl_error_set(err, "galaxy: perturb=%ld, want 0-1000000 ulps", ulps); teardown(s); return NULL; }
    for (long i = 0; i < ulps; i++) s->theta0[0] = nextafter(s->theta0[0], 1.0);
    return s;
}

/* ---- cost and gradient per variant, with the regions ------------------------------------------- */
static void grad_default_lines(gstate *s, const double *th, double *g)
{
    galaxy_default_begin(&s->p, g, s->ws);
    for (long t = 0; t < s->p.m; t++) {
        prof_begin("forward"); galaxy_default_forward(&s->p, th, t, s->ws); prof_end("forward");
        prof_begin("error3"); galaxy_default_error3(&s->p, t, s->ws); prof_end("error3");
        prof_begin("error2"); galaxy_default_error2(&s->p, th, s->ws); prof_end("error2");
        prof_begin("accumulate"); galaxy_default_accumulate(&s->p, t, g, s->ws); prof_end("accumulate");
    }
    galaxy_grad_finish(&s->p, th, g);
}
/* Cost of variant v at th (no regions: check uses it too). A device failure sets dev_failed and gives NaN,
 * which stops CG (status 3); run then reports the error. */
static double variant_cost(gstate *s, int v, const double *th)
{
    const gx_kernels *k = kernels_of(v);
    double *ws = s->ws, J = NAN;
    if (k->device) {
        if (k->device->cost(s, th, &J) != 0)
            s->dev_failed = 1, J = NAN;
        return J;
    }
    if (k->cost_grad_threaded) /* the gradient comes too, unwanted here */
        return k->cost_grad_threaded(&s->p, th, s->gscratch, ws,
                                     sl_variant_threads(&sl_study_galaxy.variants[v], s->threads));
    if (k->cost_threaded)
        return k->cost_threaded(&s->p, th, ws, sl_variant_threads(&sl_study_galaxy.variants[v], s->threads));
    return k->cost(&s->p, th, ws);
}
static void variant_grad(gstate *s, int v, const double *th, double *g)
{
    const gx_kernels *k = kernels_of(v);
    double *ws = s->ws;
    if (k->device) {
        if (k->device->grad(s, th, g) == 0)
            return;
        s->dev_failed = 1;
        for (size_t i = 0; i < s->nt; i++) g[i] = NAN;
    } else if (k->cost_grad_threaded)
        k->cost_grad_threaded(&s->p, th, g, ws, sl_variant_threads(&sl_study_galaxy.variants[v], s->threads));
    else if (k->grad_threaded)
        k->grad_threaded(&s->p, th, g, ws, sl_variant_threads(&sl_study_galaxy.variants[v], s->threads));
    else
        k->grad(&s->p, th, g, ws);
}
static double cost_cb(const double *th, void *ctx)
{
    gstate *s = ctx;
    prof_begin("cost_function");
    double J = variant_cost(s, s->v, th);
    prof_end("cost_function");
    return J;
}
static void grad_cb(const double *th, double *g, void *ctx)
{
    gstate *s = ctx;
    prof_begin("gradient");
    if (s->lines && kernels_of(s->v)->grad_lines) kernels_of(s->v)->grad_lines(s, th, g);
    else variant_grad(s, s->v, th, g);
    prof_end("gradient");
}
/* A .cost_grad row's cost request: cost and gradient from one pass (CG keeps the gradient). */
static double cost_grad_cb(const double *th, double *g, void *ctx)
{
    gstate *s = ctx;
    const gx_kernels *k = kernels_of(s->v);
    prof_begin("cost_and_gradient");
    double J = k->cost_grad_threaded(&s->p, th, g, s->ws, sl_variant_threads(&sl_study_galaxy.variants[s->v], s->threads));
    prof_end("cost_and_gradient");
    return J;
}
static void ls_begin(void *ctx) { (void)ctx; prof_begin("line_search"); }
static void ls_end(void *ctx) { (void)ctx; prof_end("line_search"); }
static int iter_cb(int k, const double *x, double f, void *ctx)
{
    (void)x;
    gstate *s = ctx;
    if (k == 1) prof_mem_sampler_stop();   /* Figure 2.1: memory during the first iteration */
    s->iter_series[k] = k; s->cost_series[k] = f;
    /* between iterations, outside the line search and gradient regions; the runner throttles redraws */
    sl_record_progress(s->rec, k, s->max_iter, "iteration");
    return 0;
}

static double accuracy(gstate *s, const galaxy_problem *p, double *ws)
{
    galaxy_predict(p, s->theta, s->pred, ws);
    long ok = 0;
    for (long i = 0; i < p->m; i++) ok += s->pred[i] == p->y[i];
    return (double)ok / (double)p->m;
}

/* ---- the device path: the one place that knows whether CUDA exists ---------------------------- */
#if SL_HAVE_CUDA
/* X and y go to the device once, outside the timed runs. */
static int cuda_prepare(gstate *s, sl_error *err)
{
    if (s->cuda) return 0;
    char msg[256];
    s->cuda = galaxy_cuda_create(&s->p, msg, sizeof msg);
    if (!s->cuda) { sl_error_set(err, "%s", msg); return -1; }
    return 0;
}
static void cuda_release(gstate *s) { galaxy_cuda_destroy(s->cuda); s->cuda = NULL; }
/* The call's device time (CUDA events) goes to the open region, cost_function or gradient. */
static void add_device_ms(gstate *s)
{
    if (s->checking) return;
    double ms = galaxy_cuda_last_ms(s->cuda);
    if (ms >= 0) prof_add_device_ms(ms);
}
static int cuda_cost(gstate *s, const double *th, double *J)
{
    int rc = galaxy_cost_cuda(s->cuda, th, J);
    if (rc == 0) add_device_ms(s);
    return rc;
}
static int cuda_grad(gstate *s, const double *th, double *g)
{
    int rc = galaxy_grad_cuda(s->cuda, th, g);
    if (rc == 0) add_device_ms(s);
    return rc;
}
static const char *cuda_error(gstate *s) { return galaxy_cuda_error(s->cuda); }
static int cuda_phases(gstate *s, double ms[3]) { return galaxy_cuda_phase_ms(s->cuda, ms); }
static double cuda_bytes(gstate *s) { return (double)galaxy_cuda_bytes(s->cuda); }
#else /* the row stays complete; the runner reports the variant unavailable and never calls these */
static int cuda_prepare(gstate *s, sl_error *err) { (void)s; sl_error_set(err, "galaxy cuda: built without CUDA"); return -1; }
static void cuda_release(gstate *s) { (void)s; }
static int cuda_cost(gstate *s, const double *th, double *J) { (void)s, (void)th, (void)J; return -1; }
static int cuda_grad(gstate *s, const double *th, double *g) { (void)s, (void)th, (void)g; return -1; }
static const char *cuda_error(gstate *s) { (void)s; return "galaxy cuda: built without CUDA"; }
static int cuda_phases(gstate *s, double ms[3]) { (void)s, (void)ms; return -1; }
static double cuda_bytes(gstate *s) { (void)s; return 0; }
#endif
static const gx_device cuda_path = {cuda_prepare, cuda_release, cuda_cost, cuda_grad, cuda_error, cuda_phases,
                                    cuda_bytes};

static int prepare(void *vs, int v, sl_error *err)
{
    const gx_kernels *k = kernels_of(v);
    return k->device ? k->device->prepare(vs, err) : 0;
}
static void release(void *vs, int v)
{
    const gx_kernels *k = kernels_of(v);
    if (k->device) k->device->release(vs);
}

static int run(void *vs, int v, sl_record *rec, sl_error *err)
{
    gstate *s = vs;
    s->v = v;
    s->rec = rec;
    s->dev_failed = 0;
    memcpy(s->theta, s->theta0, s->nt * sizeof(double));
    cg_options o; cg_default_options(&o);
    o.maxiter = s->max_iter; o.callback = iter_cb; o.ls_begin = ls_begin; o.ls_end = ls_end;
    o.fg = kernels_of(v)->cost_grad_threaded ? cost_grad_cb : NULL;
    s->iter_series[0] = 0; s->cost_series[0] = NAN;
    const gx_device *dev = kernels_of(v)->device;
    double ms[3];
    if (dev) dev->phases(s, ms); /* drops what the check and earlier runs added */
    prof_mem_sampler_start(1.0);
    uint64_t t0 = prof_now_ns();
    s->res = cg_minimize(cost_cb, grad_cb, s, s->theta, s->nt, &o, s->work);
    s->train_time_s = (double)(prof_now_ns() - t0) * 1e-9;
    s->rec = NULL;
    prof_mem_sampler_stop();
    /* the repetition's device time per phase, summed over its cost and gradient calls */
    if (dev && !s->dev_failed && dev->phases(s, ms) == 0) sl_record_phases(rec, ms[0], ms[1], ms[2]);
    if (s->dev_failed) {
        sl_error_set(err, "%s", kernels_of(v)->device->error(s));
        return -1;
    }
    return 0; /* the accuracies are finish's: a repetition is the training, as the framework rows time it */
}

/* Cost and gradient of variant v against `default` at the initial weights (relative, max norm). */
static int check(void *vs, int v, double *rel_err, sl_error *err)
{
    (void)err;
    gstate *s = vs;
    double c0 = galaxy_cost_default(&s->p, s->theta0, s->ws);
    galaxy_grad_default(&s->p, s->theta0, s->grad_ref, s->ws);
    s->dev_failed = 0;
    int external = sl_study_galaxy.variants[v].traits & SL_EXTERNAL; /* grad_tmp already holds its gradient */
    s->checking = 1;
    double c1 = external ? s->ext_cost0 : variant_cost(s, v, s->theta0);
    if (!external)
        variant_grad(s, v, s->theta0, s->grad_tmp);
    s->checking = 0;
    if (s->dev_failed) { sl_error_set(err, "%s", kernels_of(v)->device->error(s)); return -1; }
    double gmax = 0, dmax = 0;
    for (size_t i = 0; i < s->nt; i++) { gmax = fmax(gmax, fabs(s->grad_ref[i])); dmax = fmax(dmax, fabs(s->grad_ref[i] - s->grad_tmp[i])); }
    *rel_err = fmax(fabs(c1 - c0) / fabs(c0), dmax / gmax);
    return 0;
}

static void finish(void *vs, int v, sl_record *rec)
{
    gstate *s = vs;
    if (!(sl_study_galaxy.variants[v].traits & SL_EXTERNAL)) { /* the last repetition's weights, on the CPU */
        s->train_acc = accuracy(s, &s->p, s->ws);
        s->test_acc = accuracy(s, &s->pt, s->wst);
    }
    sl_record_metric(rec, "test_acc", s->test_acc);
    sl_record_metric(rec, "train_acc", s->train_acc);
    sl_record_metric(rec, "iterations", s->res.iterations);
    sl_record_metric(rec, "cost_calls", (double)s->res.nfev);
    sl_record_metric(rec, "grad_calls", (double)s->res.ngev);
    if (kernels_of(v)->cost_grad_threaded) /* of grad_calls, those copied from the cost call's pass */
        sl_record_metric(rec, "grad_calls_from_cost", (double)s->res.ngev_from_f);
    sl_record_metric(rec, "final_cost", s->res.f);
    sl_record_metric(rec, "train_time_s", s->train_time_s);
    sl_record_metric(rec, "cg_status", s->res.status);
    if (kernels_of(v)->device) /* the allocator's high-water mark: its allocations are fixed at prepare */
        sl_record_metric(rec, "peak_gpu_bytes", kernels_of(v)->device->bytes(s));
    /* Work per call for the region roofline: the forward X Theta1' (2 m N H flops) and, in the gradient,
     * the Theta1 gradient D' X (as many again); the output layer's few flops per row are left out. The
     * bytes are what any variant must move at least: X once (the fused variants do just that). */
    const galaxy_problem *p = &s->p;
    double mnh = (double)p->m * p->n_in * p->n_hid, xbytes = (double)p->m * p->n_in * sizeof(double);
    if (kernels_of(v)->cost_grad_threaded) { /* CG's cache answers the gradient requests: no region */
        sl_record_region_work(rec, "cost_and_gradient", 4 * mnh, xbytes, "fp64");
    } else {
        sl_record_region_work(rec, "gradient", 4 * mnh, xbytes, "fp64");
        sl_record_region_work(rec, "cost_function", 2 * mnh, xbytes, "fp64");
    }
    /* The repetition's work, known only now (CG's calls): the job's, the same count for every variant,
     * each cost request 2 m N H flops and each gradient request 4 m N H, each reading X once. A fused row
     * answers most gradient requests from its cost pass: it does that job in less time, so its rate is
     * higher for the same work, not for more work. */
    double calls = (double)s->res.nfev + (double)s->res.ngev;
    sl_record_work(rec, mnh * (2.0 * s->res.nfev + 4.0 * s->res.ngev), calls * xbytes);
    if (s->quick)
        sl_record_reduced(rec, "max_iter below the write-up's 300 (fewer CG iterations)");
    int n = s->res.iterations;
    if (n > 0 && !(sl_study_galaxy.variants[v].traits & SL_EXTERNAL)) { /* fmin_cg keeps no cost series */
        sl_record_series(rec, "iteration", s->iter_series + 1, n);
        sl_record_series(rec, "cost", s->cost_series + 1, n);
    }
}

/* Host bytes: the two sets as double plus scratch, estimated for the shipped set (2700 + 675 rows): the
 * data size is known only after loading. (No flops/bytes declared per repetition: a repetition is a
 * whole training whose call count is known only afterwards; finish records it (sl_record_work), and the
 * work per call of the gradient and cost_function regions for the report's region roofline.) */
static double footprint(long size, const sl_opts *o) { (void)size; (void)o; return 3375.0 * 1024 * 8 * 1.5 + 1e6; }

/* The framework baselines (baselines/galaxy.py, docs/baselines.md): the data sets, initial weights and
 * settings in; out, the cost and gradient at theta0 (checked against default's) and, after the timed
 * trainings, the last one's results, which `finish` records as for a C variant. */
static int external_inputs(void *vs, sl_inputs *in, sl_error *err)
{
    gstate *s = vs;
    const long tr[2] = {s->train.m, GALAXY_PIXELS}, te[2] = {s->test.m, GALAXY_PIXELS}, nt = (long)s->nt;
    double *X = packed_rows(&s->train), *Xt = packed_rows(&s->test);
    int rc = !X || !Xt;
    if (rc)
        sl_error_set(err, "galaxy: out of memory for the baselines' copy of the data set");
    rc = rc || sl_input_f64(in, "X", X, 2, tr, err) || sl_input_u8(in, "y", s->train.y, 1, &tr[0], err) ||
         sl_input_f64(in, "X_test", Xt, 2, te, err) || sl_input_u8(in, "y_test", s->test.y, 1, &te[0], err) ||
         sl_input_f64(in, "theta0", s->theta0, 1, &nt, err);
    free(X);
    free(Xt);
    if (rc)
        return -1;
    sl_input_number(in, "hidden", s->p.n_hid);
    sl_input_number(in, "lambda", s->p.lambda);
    sl_input_number(in, "max_iter", s->max_iter);
    return 0;
}

static int external_outputs(void *vs, int v, const sl_outputs *out, sl_error *err)
{
    gstate *s = vs;
    double it = 0, nfev = 0, ngev = 0, status = 0;
    (void)v;
    if (sl_output_has(out, "cost0")) /* the first report: what check compares */
        return sl_output_number(out, "cost0", &s->ext_cost0, err) ||
               sl_output_array(out, "grad0", s->grad_tmp, (long)s->nt, err) ? -1 : 0;
    if (sl_output_number(out, "final_cost", &s->res.f, err) || sl_output_number(out, "iterations", &it, err) ||
        sl_output_number(out, "cost_calls", &nfev, err) || sl_output_number(out, "grad_calls", &ngev, err) ||
        sl_output_number(out, "warnflag", &status, err) || sl_output_number(out, "train_acc", &s->train_acc, err) ||
        sl_output_number(out, "test_acc", &s->test_acc, err) ||
        sl_output_number(out, "train_time_s", &s->train_time_s, err))
        return -1;
    s->res.iterations = (int)it, s->res.nfev = (int)nfev, s->res.ngev = (int)ngev, s->res.status = (int)status;
    return 0;
}

/* What a row lacks: cost and gradient in one form, the threaded form exactly when SL_THREADED (blas's
 * exist only with BLAS), or an SL_DEVICE row's path. */
static const char *incomplete(const sl_variant *v)
{
    const gx_kernels *k = v->kernels;
    int one = k->cost && k->grad, threaded = (k->cost_threaded && k->grad_threaded) || k->cost_grad_threaded;
    if (v->traits & SL_EXTERNAL) /* run by baselines/galaxy.py: no functions of ours */
        return one || threaded || k->device ? "an SL_EXTERNAL row has no kernels" : NULL;
    if (v->traits & SL_DEVICE)
        return k->device && !one && !threaded ? NULL : "an SL_DEVICE row needs .device and no CPU kernels";
    if (k->device)
        return "a .device path on a row that is not SL_DEVICE";
    if (!SL_HAVE_BLAS && v->requires && strcmp(v->requires, "blas") == 0 && !one && !threaded)
        return NULL;
    if (one == threaded || (k->cost_grad_threaded && (k->cost_threaded || k->grad_threaded)))
        return "a CPU row needs .cost and .grad, or .cost_threaded and .grad_threaded, or .cost_grad_threaded "
               "(one of the three)";
    if (threaded != !!(v->traits & SL_THREADED))
        return threaded ? "threaded kernels on a row without SL_THREADED" : "SL_THREADED without threaded kernels";
    return NULL;
}

#if SL_HAVE_BLAS
#define GX_BLAS_KERNELS {.cost_threaded = galaxy_cost_blas, .grad_threaded = galaxy_grad_blas}
#else
#define GX_BLAS_KERNELS {.cost = NULL} /* unavailable: the runner never runs it */
#endif

/* One row per variant: name, requirement, description, the variant it builds on, traits, functions. */
static const sl_variant variants[] = {
    {"default", NULL, "per-example loop as Mocz's gradient (copies into preallocated scratch)", NULL, 0,
     &(const gx_kernels){.cost = galaxy_cost_default, .grad = galaxy_grad_default, .grad_lines = grad_default_lines}},
    {"layout", NULL, "matrix form, one-hot by indexing, no per-example copies", "default", 0,
     &(const gx_kernels){.cost = galaxy_cost_layout, .grad = galaxy_grad_layout}},
    {"simd", NULL, "fused pass over blocks of 32 rows (X read once per call), explicit vectors", "layout", 0,
     &(const gx_kernels){.cost = galaxy_cost_simd, .grad = galaxy_grad_simd}},
    {"omp", "openmp", "simd's blocks shared among --threads OpenMP threads by segments (same bits as simd)",
     "simd", SL_THREADED,
     &(const gx_kernels){.cost_threaded = galaxy_cost_omp, .grad_threaded = galaxy_grad_omp}},
    {"blas", "blas", "fused blocks with the two products by cblas_dgemm", "simd", SL_THREADED,
     &(const gx_kernels)GX_BLAS_KERNELS},
    {"valgrad", "openmp", "omp's pass giving cost and gradient at once: CG's cache answers the gradient requests",
     "omp", SL_THREADED, &(const gx_kernels){.cost_grad_threaded = galaxy_cost_grad_omp}},
    {"cuda", "cuda", "warp per row forward + column-block backward on the GPU (X uploaded once)", "omp",
     SL_DEVICE, &(const gx_kernels){.device = &cuda_path}},
    /* Framework baselines (docs/baselines.md): baselines/galaxy.py, SciPy's own fmin_cg on each gradient */
    {"numpy", "python:numpy+scipy", "NumPy matrix cost and gradient under SciPy's fmin_cg, [1 X] built once or "
     "by hstack in each call (the write-up's)", NULL, SL_EXTERNAL, &(const gx_kernels){0}},
    {"numpy-valgrad", "python:numpy+scipy", "the same, cost and gradient from one pass under SciPy's "
     "minimize(method='CG', jac=True) (as the valgrad row)", NULL, SL_EXTERNAL, &(const gx_kernels){0}},
    {"torch", "python:torch+scipy", "the same matrix form in torch (float64) under SciPy's fmin_cg", NULL,
     SL_EXTERNAL, &(const gx_kernels){0}},
    /* GPU baseline: the torch form on the GPU (python:MODULE@DEVICE), beside cuda */
    {"torch-cuda", "python:torch+scipy@cuda", "the torch matrix form on the GPU under SciPy's fmin_cg: X "
     "uploaded once, weights and gradient copied each call (as cuda)", NULL, SL_EXTERNAL | SL_DEVICE,
     &(const gx_kernels){0}},
};

const sl_study sl_study_galaxy = {
    .name = "galaxy",
    .title = "galaxy-image ANN (1024-8-3) trained by SciPy-style nonlinear CG",
    .source = "seed 002",
    .kind = SL_TRAINING,
    .size_name = "max_iter",
    .sizes = sizes, .n_sizes = 1, .quick_sizes = quick_sizes, .n_quick_sizes = 1,
    .baseline = "default",
    .tolerance = 1e-10,
    .variants = variants, .n_variants = (int)(sizeof variants / sizeof *variants),
    .incomplete = incomplete,
    .params = params, .n_params = 5,
    .default_reps = 3, /* a training is 5-50 s: three keep the main job within 20 minutes on 2 vCPUs */
    .footprint = footprint,
    .data_missing = data_missing,
    .external_inputs = external_inputs, .external_outputs = external_outputs,
    .setup = setup, .prepare = prepare, .release = release, .run = run, .check = check, .finish = finish, .teardown = teardown,
};
