/* reports/figures.c: figure data files, and gnuplot runs over the scripts in plots/.
 *
 * Every figure is a data file (gnuplot blocks: one per variant, separated by two blank lines, the
 * block's first line its title) plus a script that reads it, so a user can restyle and re-run a figure
 * without speedlab:  gnuplot -e "datafile='x.dat'; outfile='x.png'" plots/time_size.gp */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rep.h"
#include "safefile.h"
#include "sl_config.h"

#define MAXV 32
#define MAXS 64

#ifndef SL_PLOTS_INSTALL_DIR
#define SL_PLOTS_INSTALL_DIR "/usr/local/share/speedlab/plots"
#endif

#ifndef SL_PLOTS_FROM_BINDIR
#define SL_PLOTS_FROM_BINDIR "../share/speedlab/plots"
#endif

/* The plots beside the running binary when it is an installed one (BIN/../share/speedlab/plots), so
 * an installed tree finds its own scripts wherever it was put; 0 when there are none. */
static int plots_beside_binary(char *dir, size_t n)
{
    char exe[1024];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return 0;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    char probe[2200];
    snprintf(probe, sizeof probe, "%s/%s/time_size.gp", exe, SL_PLOTS_FROM_BINDIR);
    if (access(probe, R_OK) != 0)
        return 0;
    snprintf(dir, n, "%s/%s", exe, SL_PLOTS_FROM_BINDIR);
    return 1;
}

/* $SPEEDLAB_PLOTS_DIR; else the installed scripts beside an installed binary; else the source tree's
 * plots/ (a build tree's binary); else the configured prefix's. */
const char *rep_plots_dir(void)
{
    static char dir[2200];
    const char *env = getenv("SPEEDLAB_PLOTS_DIR");
    if (env && *env)
        return env;
    if (plots_beside_binary(dir, sizeof dir))
        return dir;
    snprintf(dir, sizeof dir, "%s/plots/time_size.gp", SL_SOURCE_ROOT);
    if (access(dir, R_OK) != 0)
        return SL_PLOTS_INSTALL_DIR;
    snprintf(dir, sizeof dir, "%s/plots", SL_SOURCE_ROOT);
    return dir;
}

const char *rep_gnuplot(void)
{
    static char found[1024];
    const char *path = getenv("PATH");
    if (!path)
        return NULL;
    char *copy = rep_strdup(path), *save = NULL;
    const char *res = NULL;
    for (char *d = strtok_r(copy, ":", &save); d && !res; d = strtok_r(NULL, ":", &save)) {
        snprintf(found, sizeof found, "%s/gnuplot", *d ? d : ".");
        if (access(found, X_OK) == 0)
            res = found;
    }
    free(copy);
    return res;
}

/* s inside a gnuplot single-quoted string: a quote doubled ('' is gnuplot's escape), a control
 * character a space. Strings of a results file (a baseline, a size name) reach gnuplot's -e commands,
 * and a quote there would let a results file run commands. Writes at most n bytes to buf. */
const char *rep_gp_str(char *buf, size_t n, const char *s)
{
    size_t k = 0;
    for (const char *p = s; *p && k + 3 < n; p++) {
        if (*p == '\'')
            buf[k++] = '\'';
        buf[k++] = (unsigned char)*p < 0x20 ? ' ' : *p;
    }
    buf[k] = 0;
    return buf;
}

/* Whether an image gnuplot wrote is whole: a PNG ends with its IEND chunk, a PDF with %%EOF, an SVG with
 * </svg>. A file cut by a full disk or a file size limit (gnuplot may still exit 0) is not. */
static int image_whole(const char *path, const char *ext)
{
    const char *why;
    FILE *f = sf_open_read(path, 0, &why);
    if (!f)
        return 0;
    char tail[1025];
    size_t n = 0;
    if (fseek(f, -1024, SEEK_END) != 0)
        rewind(f);
    n = fread(tail, 1, sizeof tail - 1, f);
    fclose(f);
    tail[n] = 0;
    if (!strcmp(ext, "png"))
        return n >= 12 && !memcmp(tail + n - 12, "\0\0\0\0IEND\xae\x42\x60\x82", 12);
    const char *end = !strcmp(ext, "pdf") ? "%%EOF" : "</svg>";
    for (size_t i = 0; i + strlen(end) <= n; i++) /* tail may hold NULs: not strstr */
        if (!memcmp(tail + i, end, strlen(end)))
            return 1;
    return 0;
}

/* gnuplot over script, its output to a temporary beside OUTBASE.EXT; 0 when it exited 0 and the image is
 * whole, else -1 with gnuplot's messages on stderr. */
static int gnuplot_one(const char *gp, const char *sp, const char *datafile, const char *tmp, const char *ext,
                       const char *extra)
{
    char qd[1024], qo[1024];
    /* the scripts pick the terminal from outfile's extension, which the temporary keeps */
    char *assign = rep_printf("datafile='%s'; outfile='%s'; %s", rep_gp_str(qd, sizeof qd, datafile),
                              rep_gp_str(qo, sizeof qo, tmp), extra ? extra : "");
    /* gnuplot's messages go to a scratch file, shown only when it fails: its warnings about a
     * one-point range ("empty x range") on a single-size study are noise in a report's log. */
    FILE *log = tmpfile();
    fflush(NULL);
    /* Held off from the fork until the writer is known, so that a stopping signal always finds it. */
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT), sigaddset(&stop, SIGTERM), sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, &old);
    pid_t pid = assign ? fork() : -1;
    if (pid > 0)
        rep_out_extra_temporary(tmp, pid); /* a signal now stops gnuplot before removing its file */
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (log)
            dup2(fileno(log), STDERR_FILENO);
        execl(gp, "gnuplot", "-e", assign, sp, (char *)NULL);
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    int status = 0;
    int failed = pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status);
    rep_out_extra_temporary(tmp, 0);
    if (log) {
        if (failed) {
            char buf[4096];
            size_t n;
            rewind(log);
            while ((n = fread(buf, 1, sizeof buf, log)) > 0)
                fwrite(buf, 1, n, stderr);
        }
        fclose(log);
    }
    free(assign);
    return failed || !image_whole(tmp, ext) ? -1 : 0;
}

int rep_run_gnuplot(const char *script, const char *datafile, const char *outbase, const char *extra)
{
    const char *gp = rep_gnuplot();
    if (!gp)
        return -1;
    char sp[1200];
    snprintf(sp, sizeof sp, "%s/%s", rep_plots_dir(), script);
    static const char *ext[] = {"png", "pdf", "svg"};
    int rc = 0;
    for (int i = 0; i < 3; i++) {
        char *out = rep_printf("%s.%s", outbase, ext[i]), *tmp = out ? malloc(strlen(out) + 128) : NULL;
        if (tmp && sf_temp_name(out, "", tmp, strlen(out) + 128) != 0) /* ends in .EXT, as gnuplot needs */
            free(tmp), tmp = NULL;
        const char *why = NULL;
        rep_out_extra_temporary(tmp, 0);
        int drawn = out && tmp && gnuplot_one(gp, sp, datafile, tmp, ext[i], extra) == 0;
        if (!drawn) {
            char *what = rep_printf("gnuplot %s failed, or left the image cut (disk full?)", sp);
            rep_out_fail(out ? out : outbase, what ? what : "gnuplot failed", 0);
            free(what);
            rc = -1;
        } else if (sf_rename_into(tmp, out, &why) != 0) {
            char *what = rep_printf("renaming gnuplot's image into place: %s", why);
            rep_out_fail(out, what ? what : "renaming gnuplot's image into place", -1);
            free(what);
            rc = -1;
        }
        if (tmp)
            unlink(tmp); /* gone after the rename; a failed image never stays */
        rep_out_extra_temporary(NULL, 0);
        free(out);
        free(tmp);
        if (rc)
            break;
    }
    return rc;
}

/* ---- data files ------------------------------------------------------------------------------ */

typedef struct figctx {
    const rep_set *s;
    int env;
    const char *study, *dir;
    char *name;        /* the study as a file name (rep_path_name) */
    int plots;
    rep_figure *figs;
    int n, max;
} figctx;

static FILE *open_data(figctx *x, const char *kind, char *path, size_t n)
{
    snprintf(path, n, "%s/figures/%s-%s.dat", x->dir, x->name, kind);
    FILE *f = rep_out_open(path);
    if (f)
        fprintf(f, "# speedlab figure data: %s, study %s (written by speedlab report)\n", kind, x->study);
    return f;
}

/* Records the figure and renders it. */
static void finish(figctx *x, const char *kind, const char *script, const char *path, const char *extra,
                   const char *caption)
{
    if (x->n >= x->max)
        return;
    rep_figure *fig = &x->figs[x->n++];
    snprintf(fig->path, sizeof fig->path, "figures/%s-%s", x->name, kind);
    snprintf(fig->caption, sizeof fig->caption, "%s", caption);
    fig->rendered = 0;
    if (x->plots) {
        char base[1024];
        snprintf(base, sizeof base, "%s/figures/%s-%s", x->dir, x->name, kind);
        fig->rendered = rep_run_gnuplot(script, path, base, extra) == 0;
    }
}

static const char *size_name(figctx *x)
{
    for (int i = 0; i < x->s->ncases; i++)
        if (x->s->cases[i].env == x->env && !strcmp(x->s->cases[i].study, x->study))
            return x->s->cases[i].size_name;
    return "size";
}

static void fig_time_speedup(figctx *x)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(x->s, x->env, x->study, vs, MAXV), ns = rep_sizes(x->s, x->env, x->study, sizes, MAXS);
    if (ns < 2)
        return;
    char tp[1024], sp[1024], extra[256];
    FILE *ft = open_data(x, "time", tp, sizeof tp), *fs = open_data(x, "speedup", sp, sizeof sp);
    if (!ft || !fs) {
        if (ft)
            rep_out_close(ft);
        if (fs)
            rep_out_close(fs);
        return;
    }
    fprintf(ft, "# blocks per variant: size median_s p25_s p75_s\n");
    fprintf(fs, "# blocks per variant: size speedup_vs_baseline (baseline median / variant median)\n");
    const char *base = NULL;
    for (int i = 0; i < x->s->ncases && !base; i++)
        if (x->s->cases[i].env == x->env && !strcmp(x->s->cases[i].study, x->study))
            base = x->s->cases[i].baseline;
    int bt = 0, bs = 0;
    for (int vi = 0; vi < nv; vi++) {
        int pt = 0, ps = 0;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(x->s, x->env, x->study, vs[vi], sizes[si]);
            const rep_case *b = rep_find(x->s, x->env, x->study, base, sizes[si]);
            if (!rep_is_ok(c))
                continue;
            if (!pt++)
                fprintf(ft, "%s\"%s\"\n", bt++ ? "\n\n" : "", vs[vi]);
            fprintf(ft, "%ld %.9g %.9g %.9g\n", c->size, c->median, c->p25, c->p75);
            /* the speedup as the table's (units.c): per unit of work, or no point where not comparable */
            double tb = rep_cmp_time(x->s, x->env, x->study, b), tc = rep_cmp_time(x->s, x->env, x->study, c);
            if (isfinite(tb) && isfinite(tc) && strcmp(vs[vi], base)) {
                if (!ps++)
                    fprintf(fs, "%s\"%s\"\n", bs++ ? "\n\n" : "", vs[vi]);
                fprintf(fs, "%ld %.9g\n", c->size, tb / tc);
            }
        }
    }
    rep_out_close(ft);
    rep_out_close(fs);
    char q1[64], q2[64];
    snprintf(extra, sizeof extra, "xlab='%s'", rep_gp_str(q1, sizeof q1, size_name(x)));
    if (bt)
        finish(x, "time", "time_size.gp", tp, extra, "Median time per repetition against size (log-log; bars: IQR)");
    snprintf(extra, sizeof extra, "xlab='%s'; baseline='%s'", q1,
             rep_gp_str(q2, sizeof q2, base ? base : "baseline"));
    if (bs)
        finish(x, "speedup", "speedup.gp", sp, extra, "Speedup over the baseline variant against size");
}

/* The size the bar, series and memory figures show, as a count: sizes[return - 1]. The size where the
 * most variants ran, the largest of those on a tie: a kernel study's largest size, and for mlp and cnn
 * in the main job the main run's batch, not the batch sweep's largest (omp alone). 0 when none ran. */
static int upto_measured(const figctx *x, const long *sizes, int ns)
{
    const char *vs[MAXV];
    int nv = rep_variants(x->s, x->env, x->study, vs, MAXV), best = 0, most = 0;
    for (int si = 0; si < ns; si++) {
        if (!rep_cmp_ref(x->s, x->env, x->study, sizes[si]))
            continue;
        int k = 0;
        for (int vi = 0; vi < nv; vi++)
            k += rep_is_ok(rep_find(x->s, x->env, x->study, vs[vi], sizes[si]));
        if (k >= most && k > 0)
            most = k, best = si + 1;
    }
    return best;
}

/* A variant's label in a bar figure: its name and its mark († reduced, ‡ extrapolated), so that the
 * figure says what the table says. */
static void bar_label(char *buf, size_t n, const rep_case *c)
{
    snprintf(buf, n, "%s%s%s", c->variant, c->reduced ? "†" : "", c->extrapolated ? "‡" : "");
}

/* The marks of the cases a bar figure shows, for its caption: "" or " († reduced run, ...)". */
static void marks_caption(char *buf, size_t n, int reduced, int extrapolated, const char *unit)
{
    buf[0] = 0;
    if (!reduced && !extrapolated)
        return;
    snprintf(buf, n, " (%s%s%s%s%s%s)", reduced ? "† reduced run" : "", reduced && extrapolated ? ", " : "",
             extrapolated ? "‡ extrapolated" : "", unit ? ": compared per " : "", unit ? unit : "",
             unit ? ", not by total time" : "");
}

/* Figure 2.6: bars with error bars, mean ± std per variant at the largest size: time per repetition,
 * or per unit of work where the table compares so there (units.c); a case that did other work and has
 * no unit is left out. Labels carry the marks. */
static void fig_bars(figctx *x)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(x->s, x->env, x->study, vs, MAXV), ns = rep_sizes(x->s, x->env, x->study, sizes, MAXS);
    ns = upto_measured(x, sizes, ns);
    if (ns == 0)
        return;
    rep_unit u = rep_size_unit(x->s, x->env, x->study, sizes[ns - 1]);
    const char *unit = rep_unit_name(u);
    /* time per sample in µs (a few of them, not 3e-05 s); per epoch and per repetition in seconds */
    double scale = u == REP_UNIT_SAMPLE ? 1e6 : 1;
    const char *col = u == REP_UNIT_SAMPLE ? "us_per_sample std_us" : u == REP_UNIT_EPOCH ? "s_per_epoch std_s"
                                                                                        : "mean_s std_s";
    char p[1024], extra[512], cap[512], lab[128], marks[160], q[256];
    FILE *f = open_data(x, "bars", p, sizeof p);
    if (!f)
        return;
    fprintf(f, "# variant %s (size %s=%ld; † reduced, ‡ extrapolated)\n", col, size_name(x), sizes[ns - 1]);
    int n = 0, red = 0, ext = 0;
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *c = rep_find(x->s, x->env, x->study, vs[vi], sizes[ns - 1]);
        if (!isfinite(rep_cmp_time(x->s, x->env, x->study, c)))
            continue;
        double mean = unit ? rep_unit_time(c, u) : c->mean, sd = rep_unit_std(c, u);
        bar_label(lab, sizeof lab, c);
        fprintf(f, "\"%s\" %.9g %.9g\n", lab, mean * scale, sd * scale), n++;
        red |= c->reduced, ext |= c->extrapolated;
    }
    rep_out_close(f);
    marks_caption(marks, sizeof marks, red, ext, unit);
    /* the subtitle names the unit and the marks; the y axis says per what */
    char sub[192];
    snprintf(sub, sizeof sub, "%s=%ld%s%s%s%s", size_name(x), sizes[ns - 1], unit ? ", per " : "", unit ? unit : "",
             red ? ", † reduced" : "", ext ? ", ‡ extrapolated" : "");
    snprintf(extra, sizeof extra, "subtitle='%s'%s", rep_gp_str(q, sizeof q, sub),
             u == REP_UNIT_SAMPLE ? "; ylab='time per sample (µs)'" : u == REP_UNIT_EPOCH ? "; ylab='time per epoch (s)'" : "");
    snprintf(cap, sizeof cap, "Time %s%s%sper variant at %s=%ld, mean ± std (seed 002's Figure 2.6)%s",
             unit ? "per " : "", unit ? unit : "", unit ? " " : "", size_name(x), sizes[ns - 1], marks);
    if (n)
        finish(x, "bars", "bars.gp", p, extra, cap);
    else
        remove(p);
}

/* A roof: bandwidth slope up to the ridge point (AI = peak / bandwidth), then flat at the peak. */
static void write_roof(FILE *f, double peak, double bw)
{
    double ridge = peak / bw, lo = 0.01, hi = 1000; /* whole decades: tidy axes */
    fprintf(f, "%.6g %.6g\n", lo, fmin(peak, lo * bw));
    if (ridge > lo && ridge < hi)
        fprintf(f, "%.6g %.6g\n", ridge, peak);
    fprintf(f, "%.6g %.6g\n", hi, fmin(peak, hi * bw));
}

static void fig_roofline(figctx *x)
{
    const json_t *ceil = x->s->envs[x->env].ceilings;
    double peak = rep_jnum(ceil, "fma_gflops"), bw = rep_jnum(ceil, "triad_gbs");
    double peak1 = rep_jnum(ceil, "fma_gflops_1t"), bw1 = rep_jnum(ceil, "triad_gbs_1t");
    if (!isfinite(peak) || !isfinite(bw))
        return;
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(x->s, x->env, x->study, vs, MAXV), ns = rep_sizes(x->s, x->env, x->study, sizes, MAXS);
    char p[1024];
    FILE *f = open_data(x, "roofline", p, sizeof p);
    if (!f)
        return;
    fprintf(f, "# block 0-1: the roofs (AI, bound GFLOP/s); then per CPU variant: ai gflops size\n");
    fprintf(f, "\"all threads\"\n");
    write_roof(f, peak, bw);
    int blocks = 1;
    if (isfinite(peak1) && isfinite(bw1)) {
        fprintf(f, "\n\n\"1 thread\"\n");
        write_roof(f, peak1, bw1);
        blocks++;
    }
    int pts = 0;
    for (int vi = 0; vi < nv; vi++) {
        if (rep_is_gpu(x->s, x->env, x->study, vs[vi]))
            continue; /* the GPU has its own roof; its points are in the roofline table */
        int first = 1;
        for (int si = 0; si < ns; si++) {
            const rep_case *c = rep_find(x->s, x->env, x->study, vs[vi], sizes[si]);
            if (!rep_is_ok(c) || !isfinite(c->ai) || !isfinite(c->gflops))
                continue;
            if (first)
                fprintf(f, "\n\n\"%s\"\n", vs[vi]), first = 0, pts++;
            fprintf(f, "%.6g %.6g %ld\n", c->ai, c->gflops, c->size);
        }
    }
    rep_out_close(f);
    char extra[64];
    snprintf(extra, sizeof extra, "nroofs=%d", blocks);
    if (!pts)
        remove(p);
    else
        finish(x, "roofline", "roofline.gp", p, extra, "Roofline: CPU variants against the calibrated ceilings");
}

/* Training series: one block per variant with the given series columns (largest size). */
static int write_series(figctx *x, const char *kind, const char *const *names, int n, char *p, size_t np)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(x->s, x->env, x->study, vs, MAXV), ns = rep_sizes(x->s, x->env, x->study, sizes, MAXS);
    ns = upto_measured(x, sizes, ns);
    if (ns == 0)
        return 0;
    FILE *f = NULL;
    int blocks = 0;
    for (int vi = 0; vi < nv; vi++) {
        const rep_case *c = rep_find(x->s, x->env, x->study, vs[vi], sizes[ns - 1]);
        json_t *se = rep_is_ok(c) ? json_object_get(c->rec, "series") : NULL;
        json_t *xs = json_object_get(se, names[0]);
        size_t len = json_array_size(xs);
        if (!len || !json_is_array(json_object_get(se, names[1])))
            continue;
        if (!f && !(f = open_data(x, kind, p, np)))
            return 0;
        if (!blocks) {
            fprintf(f, "# blocks per variant:");
            for (int k = 0; k < n; k++)
                fprintf(f, " %s", names[k]);
            fprintf(f, "\n");
        }
        fprintf(f, "%s\"%s\"\n", blocks++ ? "\n\n" : "", vs[vi]);
        for (size_t i = 0; i < len; i++) {
            for (int k = 0; k < n; k++) {
                json_t *a = json_object_get(se, names[k]);
                double v = i < json_array_size(a) ? json_number_value(json_array_get(a, i)) : NAN;
                fprintf(f, k ? " %.9g" : "%.9g", v);
            }
            fprintf(f, "\n");
        }
    }
    if (f)
        rep_out_close(f);
    return blocks;
}

static void fig_training(figctx *x)
{
    char p[1024];
    static const char *epochs[] = {"epoch", "train_loss", "test_acc"};
    static const char *thr[] = {"epoch", "samples_per_s", "epoch_s"};
    static const char *cost[] = {"iteration", "cost"};
    if (write_series(x, "epochs", epochs, 3, p, sizeof p))
        finish(x, "epochs", "epochs.gp", p, NULL,
               "Training loss and test accuracy per epoch (the accuracy: seed 004's Figure 1 c)");
    if (write_series(x, "throughput", thr, 3, p, sizeof p))
        finish(x, "throughput", "throughput.gp", p, NULL, "Throughput and time per epoch (seed 004's Figure 1 b and a)");
    if (write_series(x, "cost", cost, 2, p, sizeof p))
        finish(x, "cost", "series.gp", p, "xlab='iteration'; ylab='cost J'",
               "Cost against conjugate-gradient iteration");
}

/* Seed 004's Figure 1 d: average throughput per variant at the largest size, mean ± std over the
 * repetitions, from the metrics samples_per_s_mean and samples_per_s_std (0 without one: one
 * repetition), when the records carry them. Samples per second is a rate per unit of work, so a reduced
 * run's bar stands beside a full run's; its label carries the mark. The per-epoch panels a-c are the
 * throughput and epochs figures. */
static void fig_throughput_bars(figctx *x)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(x->s, x->env, x->study, vs, MAXV), ns = rep_sizes(x->s, x->env, x->study, sizes, MAXS);
    ns = upto_measured(x, sizes, ns);
    char p[1024], extra[512], cap[512], lab[128], marks[160], sub[192], q[256];
    FILE *f = NULL;
    int n = 0, red = 0, ext = 0;
    for (int vi = 0; vi < nv && ns; vi++) {
        const rep_case *c = rep_find(x->s, x->env, x->study, vs[vi], sizes[ns - 1]);
        json_t *m = rep_is_ok(c) ? json_object_get(c->rec, "metrics") : NULL;
        double mean = rep_jnum(m, "samples_per_s_mean"), sd = rep_jnum(m, "samples_per_s_std");
        if (!isfinite(mean))
            continue;
        if (!f && !(f = open_data(x, "throughput-bars", p, sizeof p)))
            return;
        if (!n++)
            fprintf(f, "# variant samples_per_s_mean samples_per_s_std (size %s=%ld; † reduced, ‡ extrapolated)\n",
                    size_name(x), sizes[ns - 1]);
        bar_label(lab, sizeof lab, c);
        fprintf(f, "\"%s\" %.9g %.9g\n", lab, mean, isfinite(sd) ? sd : 0.0);
        red |= c->reduced, ext |= c->extrapolated;
    }
    if (!f)
        return;
    rep_out_close(f);
    marks_caption(marks, sizeof marks, red, ext, "sample");
    snprintf(sub, sizeof sub, "%s=%ld%s%s", size_name(x), sizes[ns - 1], red ? ", † reduced" : "",
             ext ? ", ‡ extrapolated" : "");
    snprintf(extra, sizeof extra, "subtitle='%s'; ylab='samples/s (mean over epochs)'; labfmt='%%.0f'",
             rep_gp_str(q, sizeof q, sub));
    snprintf(cap, sizeof cap, "Average throughput per variant at %s=%ld, mean ± std over repetitions "
             "(seed 004's Figure 1 d)%s", size_name(x), sizes[ns - 1], marks);
    finish(x, "throughput-bars", "bars.gp", p, extra, cap);
}

/* Figure 2.1: resident memory over time, from profile.memory, one line per variant (largest size). */
static void fig_memory(figctx *x)
{
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(x->s, x->env, x->study, vs, MAXV), ns = rep_sizes(x->s, x->env, x->study, sizes, MAXS);
    ns = upto_measured(x, sizes, ns);
    char p[1024];
    FILE *f = NULL;
    int blocks = 0;
    for (int vi = 0; vi < nv && ns; vi++) {
        const rep_case *c = rep_find(x->s, x->env, x->study, vs[vi], sizes[ns - 1]);
        json_t *m = rep_is_ok(c) ? json_object_get(json_object_get(c->rec, "profile"), "memory") : NULL;
        json_t *t = json_object_get(m, "t_s"), *r = json_object_get(m, "rss_bytes");
        size_t len = json_array_size(t);
        if (!len || json_array_size(r) != len)
            continue;
        if (!f && !(f = open_data(x, "memory", p, sizeof p)))
            return;
        if (!blocks)
            fprintf(f, "# blocks per variant: t_s rss_mib\n");
        fprintf(f, "%s\"%s\"\n", blocks++ ? "\n\n" : "", vs[vi]);
        for (size_t i = 0; i < len; i++)
            fprintf(f, "%.6g %.6g\n", json_number_value(json_array_get(t, i)),
                    json_number_value(json_array_get(r, i)) / (1024.0 * 1024.0));
    }
    if (f)
        rep_out_close(f);
    if (blocks)
        finish(x, "memory", "memory.gp", p, NULL, "Resident memory over time (seed 002's Figure 2.1)");
}

/* The batch sweep: samples/s and final test accuracy against the size (the batch), one block per
 * variant, when the study is such a sweep (rep_batch_sweep: >1 size, throughput and accuracy). */
static void fig_batch(figctx *x)
{
    if (!rep_batch_sweep(x->s, x->env, x->study))
        return;
    const char *vs[MAXV];
    long sizes[MAXS];
    int nv = rep_variants(x->s, x->env, x->study, vs, MAXV), ns = rep_sizes(x->s, x->env, x->study, sizes, MAXS);
    char p[1024], extra[128], cap[256];
    FILE *f = open_data(x, "sweep", p, sizeof p);
    if (!f)
        return;
    fprintf(f, "# blocks per variant: %s samples_per_s test_acc epoch_s\n", size_name(x));
    int blocks = 0;
    for (int vi = 0; vi < nv; vi++) {
        int first = 1;
        const char *set = rep_batch_set(x->s, x->env, x->study, vs[vi]);
        for (int si = 0; set && si < ns; si++) {
            rep_batch b;
            if (!rep_batch_point(rep_batch_case(x->s, x->env, x->study, vs[vi], sizes[si], set), &b))
                continue;
            if (first)
                fprintf(f, "%s\"%s\"\n", blocks++ ? "\n\n" : "", vs[vi]), first = 0;
            fprintf(f, "%ld %.9g %.9g %.9g\n", sizes[si], b.samples_per_s, b.test_acc, b.epoch_s);
        }
    }
    rep_out_close(f);
    char q[64];
    snprintf(extra, sizeof extra, "xlab='%s'", rep_gp_str(q, sizeof q, size_name(x)));
    snprintf(cap, sizeof cap, "Throughput and final test accuracy against %s (fixed epochs and learning rate)",
             size_name(x));
    if (blocks)
        finish(x, "sweep", "batch.gp", p, extra, cap);
    else
        remove(p);
}

/* Loading: images/s per method and cache state (one bar each, warm and cold apart), bars.gp. */
static void fig_loading(figctx *x)
{
    if (!rep_is_loading(x->s, x->env, x->study))
        return;
    char p[1024];
    FILE *f = open_data(x, "loading", p, sizeof p);
    if (!f)
        return;
    int n = rep_loading_data(x->s, x->env, x->study, f);
    rep_out_close(f);
    if (n)
        finish(x, "loading", "bars.gp", p, "ylab='images/s'; labfmt='%.3g'",
               "Loading: images/s by method and cache state (each bar one case; warm and cold are separate runs)");
    else
        remove(p);
}

/* Reduced precision: epoch time and final test accuracy per variant and storage type, precision.gp. */
static void fig_precision(figctx *x)
{
    if (!rep_is_precision(x->s, x->env, x->study))
        return;
    char p[1024];
    FILE *f = open_data(x, "precision", p, sizeof p);
    if (!f)
        return;
    int n = rep_precision_data(x->s, x->env, x->study, f);
    rep_out_close(f);
    if (n)
        finish(x, "precision", "precision.gp", p, NULL,
               "Reduced precision: epoch time (mean ± std over repetitions) and final test accuracy per storage type");
    else
        remove(p);
}

/* Overlap: epoch time and the compute's wait fraction against the prefetch depth, one line per
 * case (params and size), overlap.gp. */
static void fig_overlap(figctx *x)
{
    if (!rep_is_overlap(x->s, x->env, x->study))
        return;
    char p[1024];
    FILE *f = open_data(x, "overlap", p, sizeof p);
    if (!f)
        return;
    int n = rep_overlap_data(x->s, x->env, x->study, f);
    rep_out_close(f);
    if (n)
        finish(x, "overlap", "overlap.gp", p, NULL,
               "Overlap: epoch time and the fraction of it the compute waited for data, by prefetch depth "
               "(0: batches made inline)");
    else
        remove(p);
}

/* Host-device copies: copy GB/s against the transfer size, one line per variant, bandwidth.gp (log-x). */
static void fig_copies(figctx *x)
{
    if (!rep_is_copies(x->s, x->env, x->study))
        return;
    char p[1024];
    FILE *f = open_data(x, "bandwidth", p, sizeof p);
    if (!f)
        return;
    int n = rep_copies_data(x->s, x->env, x->study, f);
    rep_out_close(f);
    if (n)
        finish(x, "bandwidth", "bandwidth.gp", p, NULL,
               "Copy bandwidth against transfer size (host wall time; log-x): pageable and pinned, both directions");
    else
        remove(p);
}

int rep_figures(const rep_set *s, int env, const char *study, const char *dir, int plots,
                rep_figure *figs, int max)
{
    char fd[1024];
    snprintf(fd, sizeof fd, "%s/figures", dir);
    if (rep_mkdirs(fd) != 0) {
        fprintf(stderr, "speedlab report: cannot create %s\n", fd);
        return 0;
    }
    figctx x = {s, env, study, dir, rep_path_name(study), plots, figs, 0, max};
    if (!x.name)
        return 0;
    fig_time_speedup(&x);
    fig_bars(&x);
    fig_roofline(&x);
    fig_training(&x);
    fig_throughput_bars(&x);
    fig_memory(&x);
    fig_batch(&x);
    fig_loading(&x);
    fig_overlap(&x);
    fig_precision(&x);
    fig_copies(&x);
    free(x.name);
    return x.n;
}
