/*
 * experiments/optim/cg.c: SciPy's _minimize_cg, _line_search_wolfe12, line_search_wolfe1 (DCSRCH port)
 * and line_search_wolfe2 (_zoom, _cubicmin, _quadmin) in C; names follow SciPy's so the two read side
 * by side (scipy/optimize/_optimize.py, _linesearch.py, _dcsrch.py).
 */
#include "cg.h"

#include <math.h>
#include <string.h>

/* ---- objective with SciPy's ScalarFunction cache (one x, its f and g) ------------------------- */
typedef struct obj {
    cg_fun f; cg_grad g; cg_fungrad fg; void *ctx; size_t n;
    double *cx, *cg, *xt;  /* cached x, cached gradient, trial point */
    double cf; int has_x, has_f, has_g;
    int g_by_fg;           /* the cached gradient came with f (fg) and has not been asked for yet */
    long nfev, ngev, ngev_from_f;
} obj;

static void set_x(obj *o, const double *x)
{
    if (o->has_x && memcmp(o->cx, x, o->n * sizeof *x) == 0)
        return;
    memcpy(o->cx, x, o->n * sizeof *x);
    o->has_x = 1; o->has_f = 0; o->has_g = 0; o->g_by_fg = 0;
}
static double fun(obj *o, const double *x)
{
    set_x(o, x);
    if (!o->has_f && o->fg && !o->has_g) {
        o->cf = o->fg(o->cx, o->cg, o->ctx);
        o->has_f = o->has_g = o->g_by_fg = 1; o->nfev++;
    } else if (!o->has_f) { o->cf = o->f(o->cx, o->ctx); o->has_f = 1; o->nfev++; }
    return o->cf;
}
static const double *grad(obj *o, const double *x)
{
    set_x(o, x);
    if (!o->has_g) { o->g(o->cx, o->cg, o->ctx); o->has_g = 1; o->ngev++; }
    else if (o->g_by_fg) { o->g_by_fg = 0; o->ngev++; o->ngev_from_f++; } /* counted when asked for */
    return o->cg;
}
static double dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}
static double inf_norm(const double *a, size_t n)
{
    double m = 0.0;
    for (size_t i = 0; i < n; i++) if (fabs(a[i]) > m || isnan(a[i])) m = isnan(a[i]) ? NAN : fabs(a[i]);
    return m;
}

/* ---- the line along pk from xk ----------------------------------------------------------------- */
typedef struct line {
    obj *o; const double *xk, *pk;
    double *gval; double gval_alpha; int has_gval; /* last gradient evaluated on the line */
} line;

static const double *point(line *l, double a)
{
    for (size_t i = 0; i < l->o->n; i++) l->o->xt[i] = l->xk[i] + a * l->pk[i];
    return l->o->xt;
}
static double phi(line *l, double a) { return fun(l->o, point(l, a)); }
static double derphi(line *l, double a)
{
    const double *g = grad(l->o, point(l, a));
    memcpy(l->gval, g, l->o->n * sizeof *g);
    l->gval_alpha = a; l->has_gval = 1;
    return dot(g, l->pk, l->o->n);
}

/* ---- DCSRCH (More-Thuente), ported from SciPy's _dcsrch.py -------------------------------------- */
static double sgn(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }
static double clip(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

static void dcstep(double *stx, double *fx, double *dx, double *sty, double *fy, double *dy, double *stp,
                   double fp, double dp, int *brackt, double stpmin, double stpmax)
{
    double sgnd = sgn(dp) * sgn(*dx), stpf, theta, s, gamma, p, q, r, stpc, stpq;
    if (fp > *fx) {
        theta = 3.0 * (*fx - fp) / (*stp - *stx) + *dx + dp;
        s = fmax(fabs(theta), fmax(fabs(*dx), fabs(dp)));
        gamma = s * sqrt((theta / s) * (theta / s) - (*dx / s) * (dp / s));
        if (*stp < *stx) gamma = -gamma;
        p = (gamma - *dx) + theta; q = ((gamma - *dx) + gamma) + dp; r = p / q;
        stpc = *stx + r * (*stp - *stx);
        stpq = *stx + ((*dx / ((*fx - fp) / (*stp - *stx) + *dx)) / 2.0) * (*stp - *stx);
        stpf = fabs(stpc - *stx) <= fabs(stpq - *stx) ? stpc : stpc + (stpq - stpc) / 2.0;
        *brackt = 1;
    } else if (sgnd < 0.0) {
        theta = 3 * (*fx - fp) / (*stp - *stx) + *dx + dp;
        s = fmax(fabs(theta), fmax(fabs(*dx), fabs(dp)));
        gamma = s * sqrt((theta / s) * (theta / s) - (*dx / s) * (dp / s));
        if (*stp > *stx) gamma = -gamma;
        p = (gamma - dp) + theta; q = ((gamma - dp) + gamma) + *dx; r = p / q;
        stpc = *stp + r * (*stx - *stp);
        stpq = *stp + (dp / (dp - *dx)) * (*stx - *stp);
        stpf = fabs(stpc - *stp) > fabs(stpq - *stp) ? stpc : stpq;
        *brackt = 1;
    } else if (fabs(dp) < fabs(*dx)) {
        theta = 3 * (*fx - fp) / (*stp - *stx) + *dx + dp;
        s = fmax(fabs(theta), fmax(fabs(*dx), fabs(dp)));
        gamma = s * sqrt(fmax(0.0, (theta / s) * (theta / s) - (*dx / s) * (dp / s)));
        if (*stp > *stx) gamma = -gamma;
        p = (gamma - dp) + theta; q = (gamma + (*dx - dp)) + gamma; r = p / q;
        if (r < 0 && gamma != 0) stpc = *stp + r * (*stx - *stp);
        else if (*stp > *stx) stpc = stpmax;
        else stpc = stpmin;
        stpq = *stp + (dp / (dp - *dx)) * (*stx - *stp);
        if (*brackt) {
            stpf = fabs(stpc - *stp) < fabs(stpq - *stp) ? stpc : stpq;
            if (*stp > *stx) stpf = fmin(*stp + 0.66 * (*sty - *stp), stpf);
            else stpf = fmax(*stp + 0.66 * (*sty - *stp), stpf);
        } else {
            stpf = fabs(stpc - *stp) > fabs(stpq - *stp) ? stpc : stpq;
            stpf = clip(stpf, stpmin, stpmax);
        }
    } else {
        if (*brackt) {
            theta = 3.0 * (fp - *fy) / (*sty - *stp) + *dy + dp;
            s = fmax(fabs(theta), fmax(fabs(*dy), fabs(dp)));
            gamma = s * sqrt((theta / s) * (theta / s) - (*dy / s) * (dp / s));
            if (*stp > *sty) gamma = -gamma;
            p = (gamma - dp) + theta; q = ((gamma - dp) + gamma) + *dy; r = p / q;
            stpf = *stp + r * (*sty - *stp);
        } else stpf = *stp > *stx ? stpmax : stpmin;
    }
    if (fp > *fx) { *sty = *stp; *fy = fp; *dy = dp; }
    else {
        if (sgnd < 0) { *sty = *stx; *fy = *fx; *dy = *dx; }
        *stx = *stp; *fx = fp; *dx = dp;
    }
    *stp = stpf;
}

/* scalar_search_wolfe1 with DCSRCH; returns 1 and *stp_out, *phi1_out on success (CONVERGENCE). */
static int wolfe1(line *l, double phi0, double old_phi0, double derphi0, double c1, double c2,
                  double *stp_out, double *phi1_out)
{
    const double amin = 1e-100, amax = 1e100, xtol = 1e-14;
    double alpha1 = 1.0;
    if (derphi0 != 0) { alpha1 = fmin(1.0, 1.01 * 2 * (phi0 - old_phi0) / derphi0); if (alpha1 < 0) alpha1 = 1.0; }
    double stp = alpha1, f = phi0, g = derphi0;
    if (stp < amin || stp > amax || g >= 0) return 0;      /* DCSRCH's START errors */
    int brackt = 0, stage = 1;
    double finit = f, ginit = g, gtest = c1 * ginit, width = amax - amin, width1 = width / 0.5;
    double stx = 0, fx = finit, gx = ginit, sty = 0, fy = finit, gy = ginit, stmin = 0, stmax = stp + 4.0 * stp;
    for (int it = 0; it < 100; it++) {
        f = phi(l, stp); g = derphi(l, stp);           /* task == FG */
        double ftest = finit + stp * gtest;
        if (stage == 1 && f <= ftest && g >= 0) stage = 2;
        int warn = (brackt && (stp <= stmin || stp >= stmax)) || (brackt && stmax - stmin <= xtol * stmax) ||
                   (stp == amax && f <= ftest && g <= gtest) || (stp == amin && (f > ftest || g >= gtest));
        if (f <= ftest && fabs(g) <= c2 * -ginit) { *stp_out = stp; *phi1_out = f; return 1; }
        if (warn) return 0;
        if (stage == 1 && f <= fx && f > ftest) {
            double fm = f - stp * gtest, fxm = fx - stx * gtest, fym = fy - sty * gtest;
            double gm = g - gtest, gxm = gx - gtest, gym = gy - gtest;
            dcstep(&stx, &fxm, &gxm, &sty, &fym, &gym, &stp, fm, gm, &brackt, stmin, stmax);
            fx = fxm + stx * gtest; fy = fym + sty * gtest; gx = gxm + gtest; gy = gym + gtest;
        } else
            dcstep(&stx, &fx, &gx, &sty, &fy, &gy, &stp, f, g, &brackt, stmin, stmax);
        if (brackt) {
            if (fabs(sty - stx) >= 0.66 * width1) stp = stx + 0.5 * (sty - stx);
            width1 = width; width = fabs(sty - stx);
        }
        if (brackt) { stmin = fmin(stx, sty); stmax = fmax(stx, sty); }
        else { stmin = stp + 1.1 * (stp - stx); stmax = stp + 4.0 * (stp - stx); }
        stp = clip(stp, amin, amax);
        if ((brackt && (stp <= stmin || stp >= stmax)) || (brackt && stmax - stmin <= xtol * stmax)) stp = stx;
        if (!isfinite(stp)) return 0;
    }
    return 0;
}

/* ---- line_search_wolfe2 ------------------------------------------------------------------------ */
typedef int (*extra_fn)(double alpha, const double *gfkp1, void *cgstate);

static int cubicmin(double a, double fa, double fpa, double b, double fb, double c, double fc, double *out)
{
    double C = fpa, db = b - a, dc = c - a, denom = (db * dc) * (db * dc) * (db - dc);
    if (denom == 0) return 0;
    double r0 = fb - fa - C * db, r1 = fc - fa - C * dc;
    double A = (dc * dc * r0 - db * db * r1) / denom, B = (-dc * dc * dc * r0 + db * db * db * r1) / denom;
    double radical = B * B - 3 * A * C;
    if (!isfinite(A) || !isfinite(B) || radical < 0 || A == 0) return 0;
    *out = a + (-B + sqrt(radical)) / (3 * A);
    return isfinite(*out);
}
static int quadmin(double a, double fa, double fpa, double b, double fb, double *out)
{
    double db = b - a, B = (fb - fa - fpa * db) / (db * db);
    if (db == 0 || B == 0 || !isfinite(B)) return 0;
    *out = a - fpa / (2.0 * B);
    return isfinite(*out);
}

typedef struct ext { extra_fn fn; void *st; line *l; } ext;
static int extra2(ext *e, double alpha)
{
    if (!e->l->has_gval || e->l->gval_alpha != alpha) derphi(e->l, alpha);
    return e->fn(alpha, e->l->gval, e->st);
}

static int zoom(line *l, double a_lo, double a_hi, double phi_lo, double phi_hi, double derphi_lo,
                double phi0, double derphi0, double c1, double c2, ext *e, double *a_star, double *phi_star)
{
    double phi_rec = phi0, a_rec = 0, a_j = 0, cchk = 0;
    for (int i = 0;; i++) {
        double dalpha = a_hi - a_lo, a = dalpha < 0 ? a_hi : a_lo, b = dalpha < 0 ? a_lo : a_hi;
        int ok = 0;
        if (i > 0) { cchk = 0.2 * dalpha; ok = cubicmin(a_lo, phi_lo, derphi_lo, a_hi, phi_hi, a_rec, phi_rec, &a_j); }
        if (i == 0 || !ok || a_j > b - cchk || a_j < a + cchk) {
            double qchk = 0.1 * dalpha;
            if (!quadmin(a_lo, phi_lo, derphi_lo, a_hi, phi_hi, &a_j) || a_j > b - qchk || a_j < a + qchk)
                a_j = a_lo + 0.5 * dalpha;
        }
        double phi_aj = phi(l, a_j);
        if (phi_aj > phi0 + c1 * a_j * derphi0 || phi_aj >= phi_lo) {
            phi_rec = phi_hi; a_rec = a_hi; a_hi = a_j; phi_hi = phi_aj;
        } else {
            double derphi_aj = derphi(l, a_j);
            if (fabs(derphi_aj) <= -c2 * derphi0 && extra2(e, a_j)) { *a_star = a_j; *phi_star = phi_aj; return 1; }
            if (derphi_aj * (a_hi - a_lo) >= 0) { phi_rec = phi_hi; a_rec = a_hi; a_hi = a_lo; phi_hi = phi_lo; }
            else { phi_rec = phi_lo; a_rec = a_lo; }
            a_lo = a_j; phi_lo = phi_aj; derphi_lo = derphi_aj;
        }
        if (i + 1 > 10) return 0;
    }
}

static int wolfe2(line *l, double phi0, double old_phi0, double derphi0, double c1, double c2, ext *e,
                  double *a_star, double *phi_star)
{
    const double amax = 1e100;
    double alpha0 = 0, alpha1 = 1.0;
    if (derphi0 != 0) alpha1 = fmin(1.0, 1.01 * 2 * (phi0 - old_phi0) / derphi0);
    if (alpha1 < 0) alpha1 = 1.0;
    alpha1 = fmin(alpha1, amax);
    double phi_a1 = phi(l, alpha1), phi_a0 = phi0, derphi_a0 = derphi0;
    for (int i = 0; i < 10; i++) {
        if (alpha1 == 0 || alpha0 > amax) return 0;
        if (phi_a1 > phi0 + c1 * alpha1 * derphi0 || (phi_a1 >= phi_a0 && i > 0))
            return zoom(l, alpha0, alpha1, phi_a0, phi_a1, derphi_a0, phi0, derphi0, c1, c2, e, a_star, phi_star);
        double derphi_a1 = derphi(l, alpha1);
        if (fabs(derphi_a1) <= -c2 * derphi0 && extra2(e, alpha1)) { *a_star = alpha1; *phi_star = phi_a1; return 1; }
        if (derphi_a1 >= 0)
            return zoom(l, alpha1, alpha0, phi_a1, phi_a0, derphi_a1, phi0, derphi0, c1, c2, e, a_star, phi_star);
        double alpha2 = fmin(2 * alpha1, amax);
        alpha0 = alpha1; alpha1 = alpha2; phi_a0 = phi_a1; phi_a1 = phi(l, alpha1); derphi_a0 = derphi_a1;
    }
    return 0; /* SciPy returns alpha1 with derphi_star None: _line_search_wolfe12 then... accepts it */
}

/* ---- _minimize_cg ------------------------------------------------------------------------------ */
typedef struct cgst {
    size_t n; double gtol, deltak;
    const double *xk, *pk, *gfk;
    double cached_alpha; int has_cache; double *cx, *cp, *cgv, cgnorm; /* cached_step */
} cgst;

static void pr_step(cgst *s, double alpha, const double *gfkp1, double *x, double *p, double *g, double *gnorm)
{
    double yg = 0;
    for (size_t i = 0; i < s->n; i++) yg += (gfkp1[i] - s->gfk[i]) * gfkp1[i];
    double beta = fmax(0.0, yg / s->deltak);
    for (size_t i = 0; i < s->n; i++) {
        x[i] = s->xk[i] + alpha * s->pk[i];
        p[i] = -gfkp1[i] + beta * s->pk[i];
    }
    memmove(g, gfkp1, s->n * sizeof *g);
    *gnorm = inf_norm(g, s->n);
}
static int descent_condition(double alpha, const double *gfkp1, void *vs)
{
    cgst *s = vs;
    pr_step(s, alpha, gfkp1, s->cx, s->cp, s->cgv, &s->cgnorm);
    s->cached_alpha = alpha; s->has_cache = 1;
    if (s->cgnorm <= s->gtol) return 1;
    return dot(s->cp, s->cgv, s->n) <= -0.01 * dot(s->cgv, s->cgv, s->n);
}

void cg_default_options(cg_options *o)
{
    memset(o, 0, sizeof *o);
    o->gtol = 1e-5; o->maxiter = 0; o->c1 = 1e-4; o->c2 = 0.4;
}
size_t cg_work_doubles(size_t n) { return 10 * n; }

cg_result cg_minimize(cg_fun f, cg_grad g, void *ctx, double *x, size_t n, const cg_options *o, double *work)
{
    obj ob = {.f = f, .g = g, .fg = o->fg, .ctx = ctx, .n = n, .cx = work, .cg = work + n, .xt = work + 2 * n};
    double *gfk = work + 3 * n, *pk = work + 4 * n, *gval = work + 5 * n;
    cgst s = {.n = n, .gtol = o->gtol, .cx = work + 6 * n, .cp = work + 7 * n, .cgv = work + 8 * n};
    double *xk = work + 9 * n;
    memcpy(xk, x, n * sizeof *x);
    int maxiter = o->maxiter > 0 ? o->maxiter : (int)(200 * n);
    double old_fval = fun(&ob, xk);
    memcpy(gfk, grad(&ob, xk), n * sizeof *gfk);
    double old_old_fval = old_fval + sqrt(dot(gfk, gfk, n)) / 2;
    for (size_t i = 0; i < n; i++) pk[i] = -gfk[i];
    double gnorm = inf_norm(gfk, n);
    int k = 0, warnflag = 0;
    while (gnorm > o->gtol && k < maxiter) {
        s.deltak = dot(gfk, gfk, n); s.xk = xk; s.pk = pk; s.gfk = gfk; s.has_cache = 0;
        line l = {.o = &ob, .xk = xk, .pk = pk, .gval = gval};
        double derphi0 = dot(gfk, pk, n), alpha = 0, fnew = 0;
        if (o->ls_begin) o->ls_begin(ctx);
        int ok = wolfe1(&l, old_fval, old_old_fval, derphi0, o->c1, o->c2, &alpha, &fnew);
        if (ok && !descent_condition(alpha, l.gval, &s)) ok = 0;
        if (!ok) {
            ext e = {descent_condition, &s, &l};
            l.has_gval = 0;
            ok = wolfe2(&l, old_fval, old_old_fval, derphi0, o->c1, o->c2, &e, &alpha, &fnew);
        }
        if (o->ls_end) o->ls_end(ctx);
        if (!ok) { warnflag = 2; break; }
        old_old_fval = old_fval; old_fval = fnew;
        if (s.has_cache && s.cached_alpha == alpha) {
            memcpy(xk, s.cx, n * sizeof *xk); memcpy(pk, s.cp, n * sizeof *pk);
            memcpy(gfk, s.cgv, n * sizeof *gfk); gnorm = s.cgnorm;
        } else {
            pr_step(&s, alpha, l.gval, s.cx, s.cp, s.cgv, &gnorm);
            memcpy(xk, s.cx, n * sizeof *xk); memcpy(pk, s.cp, n * sizeof *pk); memcpy(gfk, s.cgv, n * sizeof *gfk);
        }
        k++;
        if (o->callback && o->callback(k, xk, old_fval, ctx)) break;
    }
    cg_result r = {.f = old_fval, .iterations = k, .nfev = ob.nfev, .ngev = ob.ngev,
                   .ngev_from_f = ob.ngev_from_f, .status = CG_SUCCESS};
    if (warnflag == 2) r.status = CG_PR_LOSS;
    else if (k >= maxiter) r.status = CG_MAXITER;
    else if (isnan(gnorm) || isnan(old_fval)) r.status = CG_NAN;
    memcpy(x, xk, n * sizeof *x);
    return r;
}
