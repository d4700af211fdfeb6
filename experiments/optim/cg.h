/*
 * experiments/optim/cg.h: nonlinear conjugate gradient as SciPy's fmin_cg / _minimize_cg does it:
 * Polak-Ribiere+ (beta = max(0, y.g/g0.g0)) with the sufficient-descent check (sigma_3 = 0.01),
 * line_search_wolfe1 (MINPACK dcsrch, c1 = 1e-4, c2 = 0.4, amin = 1e-100, amax = 1e100, xtol = 1e-14)
 * falling back to line_search_wolfe2 (Nocedal-Wright zoom), gtol on the inf-norm of the gradient, and
 * SciPy's one-point (x) cache of f and g, so the call counts are SciPy's nfev/njev.
 */
#ifndef SL_OPTIM_CG_H
#define SL_OPTIM_CG_H

#include <stddef.h>

typedef double (*cg_fun)(const double *x, void *ctx);
typedef void (*cg_grad)(const double *x, double *g, void *ctx);
/* Cost and gradient from one call (SciPy's jac=True): returns f at x and writes g. */
typedef double (*cg_fungrad)(const double *x, double *g, void *ctx);
/* Called after each iteration k (1-based) with the new point and its cost; nonzero stops. */
typedef int (*cg_callback)(int k, const double *x, double f, void *ctx);
/* Hooks around each line search (the glue opens a profiler region); may be NULL. */
typedef void (*cg_hook)(void *ctx);

typedef struct cg_options {
    double gtol;   /* 1e-5 */
    int maxiter;   /* <= 0: 200 * n, as SciPy */
    double c1, c2; /* 1e-4, 0.4 */
    cg_callback callback;
    cg_hook ls_begin, ls_end;
    /* May be NULL. When set, every cost request calls it instead of f and keeps its gradient in the
     * one-point cache, so a gradient request at the same x (the line search makes one after every cost
     * request) is answered without a call; g then serves only a gradient at a point with no cost yet.
     * The counts stay SciPy's: each request counts, answered from the cache or not. */
    cg_fungrad fg;
} cg_options;

enum cg_status { CG_SUCCESS = 0, CG_MAXITER = 1, CG_PR_LOSS = 2, CG_NAN = 3 };

typedef struct cg_result {
    double f;       /* cost at the returned x */
    int iterations;
    long nfev, ngev;
    long ngev_from_f; /* of ngev, the gradient requests answered by the fg call of a cost request */
    int status;     /* enum cg_status, SciPy's warnflag */
} cg_result;

void cg_default_options(cg_options *o);
/* Doubles of workspace cg_minimize needs for n parameters. */
size_t cg_work_doubles(size_t n);
/* Minimises from x (overwritten with the result). work: cg_work_doubles(n) doubles. */
cg_result cg_minimize(cg_fun f, cg_grad g, void *ctx, double *x, size_t n, const cg_options *o,
                      double *work);

#endif
