/* reports/timeline.c: the timeline figure of a traced run (plots/timeline.gp).
 *
 * `speedlab run --trace FILE` leaves RUNDIR/trace.json (Chrome Trace Event JSON, docs/profiler.md,
 * "Trace"). For every path given to `speedlab report` whose run directory has one, this replays each
 * thread's B/E events into spans and writes OUT/timelines/RUN-timeline.dat: one block per region name
 * (the names with the most time; the rest as "other"), columns t0_s t1_s row depth, rows in thread
 * order (main first). Spans shorter than a pixel of the figure are left out and counted in the caption.
 * Nothing here runs a kernel: it reads the trace the run wrote. */
#define _DEFAULT_SOURCE
#include <ctype.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rep.h"
#include "safefile.h"

enum { MAX_NAMES = 16, MAX_ROWS = 64, MAX_DEPTH = 128, MIN_WIDTH_PARTS = 4000 };

typedef struct span { int name, row, depth; double t0, t1; } span;
typedef struct tl {
    const char *names[256];
    double total[256];
    int nnames;
    json_int_t tids[MAX_ROWS];
    const char *rownames[MAX_ROWS];
    int nrows, maxdepth;
    span *sp;
    size_t nsp, cap;
    double tmax;
} tl;

static int row_of(tl *t, json_int_t tid)
{
    for (int i = 0; i < t->nrows; i++)
        if (t->tids[i] == tid)
            return i;
    if (t->nrows == MAX_ROWS)
        return -1;
    t->tids[t->nrows] = tid;
    t->rownames[t->nrows] = NULL;
    return t->nrows++;
}

static int name_of(tl *t, const char *name)
{
    for (int i = 0; i < t->nnames; i++)
        if (!strcmp(t->names[i], name))
            return i;
    if (t->nnames == 256)
        return 255; /* very many names: the last ones share a slot, drawn as "other" anyway */
    t->names[t->nnames] = name;
    t->total[t->nnames] = 0;
    return t->nnames++;
}

static void add_span(tl *t, int name, int row, int depth, double t0, double t1)
{
    if (t->nsp == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4096;
        t->sp = realloc(t->sp, t->cap * sizeof *t->sp);
    }
    t->sp[t->nsp++] = (span){name, row, depth, t0, t1};
    t->total[name] += t1 - t0;
    if (depth > t->maxdepth)
        t->maxdepth = depth;
    if (t1 > t->tmax)
        t->tmax = t1;
}

/* Replays every thread's B/E events (each thread's in order) into spans; thread names from M events. */
static void replay(tl *t, json_t *events)
{
    static struct { const char *name; double ts; } stack[MAX_ROWS][MAX_DEPTH];
    int depth[MAX_ROWS] = {0};
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        if (!ph || !name || (strcmp(ph, "B") && strcmp(ph, "E") && strcmp(ph, "M")))
            continue;
        if (!strcmp(ph, "M") && strcmp(name, "thread_name")) /* process_name is not a thread */
            continue;
        int r = row_of(t, json_integer_value(json_object_get(ev, "tid")));
        if (r < 0)
            continue;
        double ts = json_number_value(json_object_get(ev, "ts")) * 1e-6;
        if (!strcmp(ph, "M")) {
            t->rownames[r] = json_string_value(json_object_get(json_object_get(ev, "args"), "name"));
        } else if (!strcmp(ph, "B") && depth[r] < MAX_DEPTH) {
            stack[r][depth[r]].name = name;
            stack[r][depth[r]++].ts = ts;
        } else if (!strcmp(ph, "E") && depth[r] > 0) {
            depth[r]--;
            add_span(t, name_of(t, stack[r][depth[r]].name), r, depth[r], stack[r][depth[r]].ts, ts);
        }
    }
}

/* The MAX_NAMES - 1 names with the most time keep their own block and colour; block[] maps each name to
 * its block, the last block being "other". Returns the number of blocks. */
static int choose_blocks(const tl *t, int *block, int *order)
{
    for (int i = 0; i < t->nnames; i++)
        order[i] = i;
    for (int i = 1; i < t->nnames; i++) /* insertion sort by total, largest first: few names */
        for (int k = i; k > 0 && t->total[order[k]] > t->total[order[k - 1]]; k--) {
            int x = order[k];
            order[k] = order[k - 1];
            order[k - 1] = x;
        }
    int own = t->nnames <= MAX_NAMES ? t->nnames : MAX_NAMES - 1;
    for (int i = 0; i < t->nnames; i++)
        block[order[i]] = i < own ? i : own;
    return t->nnames > own ? own + 1 : own;
}

/* Whether block b has a name of its own (else it is "other", the last block when names were lumped). */
static int named(const tl *t, int nblocks, int b) { return t->nnames <= MAX_NAMES || b < nblocks - 1; }

/* Writes the data file; returns the number of spans left out as too short to see. */
static long write_data(const tl *t, FILE *f, int nblocks, const int *block, const int *order)
{
    double min_w = t->tmax / MIN_WIDTH_PARTS;
    long hidden = 0;
    fprintf(f, "# speedlab figure data: timeline (written by speedlab report from trace.json)\n"
               "# blocks per region name: t0_s t1_s row depth\n");
    for (int b = 0; b < nblocks; b++) {
        fputs(b ? "\n\n" : "", f);
        rep_data_name(named(t, nblocks, b) ? t->names[order[b]] : "other", f); /* a name is one line */
        for (size_t k = 0; k < t->nsp; k++) {
            const span *s = &t->sp[k];
            if (block[s->name] != b)
                continue;
            if (s->t1 - s->t0 < min_w) {
                hidden++;
                continue;
            }
            fprintf(f, "%.9f %.9f %d %d\n", s->t0, s->t1, s->row, s->depth);
        }
    }
    return hidden;
}

/* "#rrggbb" exactly: anything else from a trace file never reaches gnuplot's command line. */
static int is_color(const char *c)
{
    if (!c || strlen(c) != 7 || c[0] != '#')
        return 0;
    for (int i = 1; i < 7; i++)
        if (!isxdigit((unsigned char)c[i]))
            return 0;
    return 1;
}

/* gnuplot assignments: colours in block order, row names (any byte but a letter, digit or _ as '-'),
 * the deepest depth. Names and colours come from a file: nothing else reaches gnuplot's -e command. */
static char *plot_extra(const tl *t, json_t *colors, int nblocks, const int *order)
{
    char cols[MAX_NAMES * 9 + 1] = "", rows[MAX_ROWS * 40 + 1] = "";
    size_t used = 0;
    for (int b = 0; b < nblocks; b++) {
        const char *c = named(t, nblocks, b) ? json_string_value(json_object_get(colors, t->names[order[b]])) : NULL;
        used += (size_t)snprintf(cols + used, sizeof cols - used, "%s ", is_color(c) ? c : "#808080");
    }
    for (int r = 0; r < t->nrows; r++) {
        char one[40];
        snprintf(one, sizeof one, "%s ", t->rownames[r] ? t->rownames[r] : "thread");
        for (char *p = one; p[1]; p++)
            if (!isalnum((unsigned char)*p) && *p != '_')
                *p = '-';
        strcat(rows, one);
    }
    return rep_printf("colors='%s'; rows='%s'; maxdepth=%d", cols, rows, t->maxdepth);
}

/* The run directory of a path given to report (itself, or the directory of a results file). */
static int trace_of(const char *path, char *trace, size_t n, char *run, size_t rn)
{
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(path, real) || stat(real, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        *strrchr(real, '/') = '\0';
    snprintf(trace, n, "%s/trace.json", real);
    snprintf(run, rn, "%s", basename(real));
    return lstat(trace, &st); /* whatever is there is looked at: one_timeline refuses what is not a file */
}

/* One traced run: data file, figure, and its lines in REPORT.md. */
static int one_timeline(FILE *report, const char *out, const char *trace, const char *run, int plots)
{
    json_error_t e;
    const char *why;
    char msg[160];
    /* a regular file of the run only: a FIFO would hang the report, a link could show any file */
    FILE *in = sf_open_read(trace, 0, &why);
    json_t *root = in ? json_loadf(in, 0, &e) : NULL;
    if (in)
        fclose(in);
    if (!in) {
        fprintf(stderr, "speedlab: %s: not read: %s; no timeline for run %s\n", trace, why, run);
        fprintf(report, "- `%s`: not read (%s); no timeline\n\n", trace, why);
        return 1;
    }
    if (!root) { /* where and what was expected, never the file's text */
        fprintf(stderr, "speedlab: %s:%d:%d: not JSON (%s); no timeline for run %s\n", trace, e.line, e.column,
                sf_no_content(e.text, msg, sizeof msg), run);
        fprintf(report, "- `%s`: not readable as JSON (%s at line %d, column %d); no timeline\n\n", trace,
                sf_no_content(e.text, msg, sizeof msg), e.line, e.column);
        return 1;
    }
    tl t = {.nnames = 0};
    replay(&t, json_object_get(root, "traceEvents"));
    int block[256], order[256];
    int nblocks = choose_blocks(&t, block, order);
    char *safe = rep_path_name(run); /* a directory name from the command line: path-safe, injective */
    char *dat = rep_printf("%s/timelines/%s-timeline.dat", out, safe);
    char *base = rep_printf("%s/timelines/%s-timeline", out, safe);
    FILE *f = t.nsp ? rep_out_open(dat) : NULL;
    long hidden = f ? write_data(&t, f, nblocks, block, order) : 0;
    if (f && rep_out_close(f) == 0) {
        char *extra = plot_extra(&t, json_object_get(json_object_get(root, "speedlab"), "colors"), nblocks, order);
        int drawn = plots && rep_run_gnuplot("timeline.gp", dat, base, extra) == 0;
        long dropped = (long)json_integer_value(json_object_get(json_object_get(root, "speedlab"), "dropped_events"));
        fputs("Run ", report);
        rep_md_code(run, report); /* a directory name: any bytes */
        fprintf(report, ": %zu regions on %d thread%s over %.3f s (%ld shorter than 1/%d of it not "
                        "drawn).", t.nsp, t.nrows, t.nrows == 1 ? "" : "s", t.tmax, hidden, MIN_WIDTH_PARTS);
        if (dropped > 0)
            fprintf(report, " **The trace dropped %ld events** (a thread's buffer was full): regions that "
                            "began after that are missing; rerun with a larger PROF_TRACE_EVENTS.", dropped);
        fputs("\n\n", report);
        if (drawn)
            fprintf(report, "![timeline of %s](timelines/%s-timeline.png)\n\n", safe, safe);
        else
            fprintf(report, "Data: `timelines/%s-timeline.dat` (plots/timeline.gp draws it).\n\n", safe);
        free(extra);
    } else {
        fputs("Run ", report);
        rep_md_code(run, report);
        fprintf(report, ": the trace has no regions%s.\n\n", t.nsp ? " (cannot write data)" : "");
    }
    free(safe);
    free(dat);
    free(base);
    free(t.sp);
    json_decref(root);
    return 0;
}

int rep_timelines(FILE *report, const char *out, int npaths, char **paths, int plots)
{
    int header = 0, skipped = 0;
    for (int i = 0; i < npaths; i++) {
        char trace[PATH_MAX + 16], run[256];
        if (trace_of(paths[i], trace, sizeof trace, run, sizeof run) != 0)
            continue;
        if (!header++) {
            char *dir = rep_printf("%s/timelines", out);
            rep_mkdirs(dir);
            free(dir);
            fputs("## Timelines (runs made with --trace)\n\nOne row per thread, regions as bars over time "
                  "(nested regions stacked above their parents), colours as in NVTX. Open the trace itself "
                  "in ui.perfetto.dev for every detail (docs/nsight.md).\n\n", report);
        }
        skipped += one_timeline(report, out, trace, run, plots);
    }
    return skipped;
}
