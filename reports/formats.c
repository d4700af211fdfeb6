/* reports/formats.c: the table type and its three renderings.
 *
 * Markdown for REPORT.md and the study pages; CSV with machine column names and plain numbers (seconds,
 * ratios) for spreadsheets; LaTeX with booktabs that pastes into a paper unchanged (needs
 * \usepackage{booktabs}; the symbols used are in every LaTeX kernel). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

rep_table *rep_table_new(const char *id, const char *title, int ncols, const char *const *cols,
                         const char *const *csv_cols)
{
    rep_table *t = calloc(1, sizeof *t);
    t->id = rep_strdup(id);
    t->title = rep_strdup(title);
    t->ncols = ncols;
    t->cols = calloc((size_t)ncols, sizeof *t->cols);
    t->csv_cols = calloc((size_t)ncols, sizeof *t->csv_cols);
    t->colflags = calloc((size_t)ncols, sizeof *t->colflags);
    for (int i = 0; i < ncols; i++) {
        t->cols[i] = rep_strdup(cols[i]);
        t->csv_cols[i] = rep_strdup(csv_cols ? csv_cols[i] : cols[i]);
    }
    return t;
}

void rep_table_free(rep_table *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->ncols; i++) {
        free(t->cols[i]);
        free(t->csv_cols[i]);
    }
    for (int i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i].text);
    for (int i = 0; t->status && i < t->nrows; i++)
        free(t->status[i]);
    free(t->status);
    for (int i = 0; i < t->nnotes; i++)
        free(t->notes[i]);
    free(t->cols);
    free(t->csv_cols);
    free(t->colflags);
    free(t->cells);
    free(t->group_start);
    free(t->notes);
    free(t->id);
    free(t->title);
    free(t);
}

void rep_col_flags(rep_table *t, int col, int flags)
{
    t->colflags[col] |= flags;
}

/* Whether Markdown and LaTeX show column c (CSV shows every column). */
static int shown(const rep_table *t, int c)
{
    return !(t->colflags[c] & REP_COL_CSV_ONLY);
}

int rep_table_row(rep_table *t, int group_start)
{
    if (t->nrows == t->caprows) {
        int cap = t->caprows ? 2 * t->caprows : 16;
        t->cells = realloc(t->cells, sizeof *t->cells * (size_t)cap * (size_t)t->ncols);
        t->group_start = realloc(t->group_start, sizeof *t->group_start * (size_t)cap);
        t->status = realloc(t->status, sizeof *t->status * (size_t)cap);
        t->caprows = cap;
    }
    int r = t->nrows++;
    memset(&t->cells[r * t->ncols], 0, sizeof *t->cells * (size_t)t->ncols);
    t->group_start[r] = group_start;
    t->status[r] = NULL;
    return r;
}

void rep_row_status(rep_table *t, int row, const char *status)
{
    free(t->status[row]);
    t->status[row] = rep_strdup(status);
}

static void set_cell(rep_table *t, int row, int col, double num, int has_num, const char *fmt, va_list ap)
{
    rep_cell *c = &t->cells[row * t->ncols + col];
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    free(c->text);
    c->text = rep_strdup(buf);
    c->num = num;
    c->has_num = has_num && isfinite(num);
}

void rep_cell_text(rep_table *t, int row, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_cell(t, row, col, 0, 0, fmt, ap);
    va_end(ap);
}

void rep_cell_num(rep_table *t, int row, int col, double num, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_cell(t, row, col, num, 1, fmt, ap);
    va_end(ap);
    /* a ratio over a time that cannot be (0, 5e-324 s) printed "inf×": no such number reaches a table */
    const char *text = t->cells[row * t->ncols + col].text;
    if (!isfinite(num) && text && (strstr(text, "inf") || strstr(text, "nan")))
        rep_cell_text(t, row, col, "—");
}

void rep_cell_num_or_dash(rep_table *t, int row, int col, double v, const char *fmt)
{
    if (isfinite(v))
        rep_cell_num(t, row, col, v, fmt, v);
    else
        rep_cell_text(t, row, col, "—");
}

static void add_note(rep_table *t, int once, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (once)
        for (int i = 0; i < t->nnotes; i++)
            if (strcmp(t->notes[i], buf) == 0)
                return;
    t->notes = realloc(t->notes, sizeof *t->notes * (size_t)(t->nnotes + 1));
    t->notes[t->nnotes++] = rep_strdup(buf);
}

void rep_table_note(rep_table *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_note(t, 0, fmt, ap);
    va_end(ap);
}

void rep_table_note_once(rep_table *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_note(t, 1, fmt, ap);
    va_end(ap);
}

static const char *cell_text(const rep_table *t, int r, int c)
{
    const char *s = t->cells[r * t->ncols + c].text;
    return s ? s : "";
}

/* ---- Markdown --------------------------------------------------------------------------------- */

void rep_write_md(const rep_table *t, FILE *f)
{
    fputs("**", f);
    rep_md_cell(t->title, f);
    fputs("**\n\n|", f);
    for (int c = 0; c < t->ncols; c++) {
        if (!shown(t, c))
            continue;
        fputc(' ', f);
        rep_md_cell(t->cols[c], f);
        fputs(" |", f);
    }
    fputs("\n|", f);
    for (int c = 0; c < t->ncols; c++)
        if (shown(t, c))
            fputs(c == 0 ? " --- |" : " ---: |", f);
    fputc('\n', f);
    for (int r = 0; r < t->nrows; r++) {
        fputc('|', f);
        for (int c = 0; c < t->ncols; c++) {
            if (!shown(t, c))
                continue;
            fputc(' ', f);
            /* the grouping key (first column) is shown once per group */
            if (!(c == 0 && !t->group_start[r]))
                rep_md_cell(cell_text(t, r, c), f);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
    if (t->nnotes)
        fputc('\n', f);
    for (int i = 0; i < t->nnotes; i++) {
        rep_md_cell(t->notes[i], f);
        fputs(i + 1 < t->nnotes ? "  \n" : "\n", f);
    }
    fputc('\n', f);
}

/* ---- CSV -------------------------------------------------------------------------------------- */

static void csv_field(const char *s, FILE *f)
{
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
}

static int has_status(const rep_table *t)
{
    for (int r = 0; r < t->nrows; r++)
        if (t->status[r])
            return 1;
    return 0;
}

/* A column with a number in some row: a spreadsheet reads it as numbers, so it holds nothing else. */
static int numeric_column(const rep_table *t, int c)
{
    if (t->colflags[c] & REP_COL_NUMERIC)
        return 1;
    for (int r = 0; r < t->nrows; r++)
        if (t->cells[r * t->ncols + c].has_num)
            return 1;
    return 0;
}

void rep_write_csv(const rep_table *t, FILE *f)
{
    int status = has_status(t);
    for (int c = 0; c < t->ncols; c++) {
        if (c)
            fputc(',', f);
        csv_field(t->csv_cols[c], f);
    }
    fputs(status ? ",status\n" : "\n", f);
    for (int r = 0; r < t->nrows; r++) {
        for (int c = 0; c < t->ncols; c++) {
            const rep_cell *cell = &t->cells[r * t->ncols + c];
            if (c)
                fputc(',', f);
            if (cell->has_num)
                fprintf(f, "%.10g", cell->num);
            else if (!(t->colflags[c] & REP_COL_NUMERIC) && (!status || !numeric_column(t, c)))
                /* a case's state goes to status, and a flagged column holds numbers only: not here */
                csv_field(cell_text(t, r, c), f);
        }
        if (status) {
            fputc(',', f);
            csv_field(t->status[r] ? t->status[r] : "", f);
        }
        fputc('\n', f);
    }
}

/* ---- LaTeX ------------------------------------------------------------------------------------ */

static void tex_escape(const char *s, FILE *f)
{
    static const struct {
        const char *utf8, *tex;
    } sym[] = {
        {"\xc2\xb1", "$\\pm$"},          /* ± */
        {"\xc3\x97", "$\\times$"},       /* × */
        {"\xe2\x80\xa0", "\\dag{}"},     /* † */
        {"\xe2\x80\xa1", "\\ddag{}"},    /* ‡ */
        {"\xe2\x80\x94", "---"},         /* — */
        {"\xe2\x80\x93", "--"},          /* – */
        {"\xc2\xb5", "$\\mu$"},          /* µ */
        {"\xe2\x89\xa5", "$\\geq$"},     /* ≥ */
        {"\xe2\x89\xa4", "$\\leq$"},     /* ≤ */
        {"\xe2\x86\x92", "$\\to$"},      /* → */
        {"\xc3\xb7", "$\\div$"},         /* ÷ */
        {"\xe2\x88\x92", "$-$"},          /* − */
        {"\xe2\x89\x88", "$\\approx$"},   /* ≈ */
    };
    while (*s) {
        size_t i;
        for (i = 0; i < sizeof sym / sizeof *sym; i++) {
            size_t n = strlen(sym[i].utf8);
            if (strncmp(s, sym[i].utf8, n) == 0) {
                fputs(sym[i].tex, f);
                s += n;
                break;
            }
        }
        if (i < sizeof sym / sizeof *sym)
            continue;
        switch (*s) {
        case '_': case '%': case '&': case '#': case '$': case '{': case '}':
            fputc('\\', f);
            fputc(*s, f);
            break;
        case '~': fputs("\\textasciitilde{}", f); break;
        case '^': fputs("\\textasciicircum{}", f); break;
        case '\\': fputs("\\textbackslash{}", f); break;
        case '<': fputs("$<$", f); break;
        case '>': fputs("$>$", f); break;
        case '`': break; /* Markdown code quotes: dropped */
        default: fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, f); /* no line (or paragraph) break */
        }
        s++;
    }
}

void rep_write_tex(const rep_table *t, FILE *f)
{
    fputs("% generated by speedlab report; needs \\usepackage{booktabs}\n", f);
    fputs("\\begin{table}[htbp]\n\\centering\n\\small\n\\caption{", f);
    tex_escape(t->title, f);
    /* the id holds study and variant names: in a \label only letters, digits and -_.: (nothing that
     * could close the brace and run a command) */
    fputs("}\n\\label{tab:", f);
    for (const char *p = t->id; *p; p++)
        fputc(isalnum((unsigned char)*p) || strchr("-_.:", *p) ? *p : '-', f);
    fputs("}\n\\begin{tabular}{l", f);
    for (int c = 1; c < t->ncols; c++)
        if (shown(t, c))
            fputc('r', f);
    fputs("}\n\\toprule\n", f);
    for (int c = 0, n = 0; c < t->ncols; c++) {
        if (!shown(t, c))
            continue;
        if (n++)
            fputs(" & ", f);
        tex_escape(t->cols[c], f);
    }
    fputs(" \\\\\n\\midrule\n", f);
    for (int r = 0; r < t->nrows; r++) {
        if (r > 0 && t->group_start[r] == 1 && t->group_start[r - 1] != 1)
            fputs("\\addlinespace\n", f);
        for (int c = 0, n = 0; c < t->ncols; c++) {
            if (!shown(t, c))
                continue;
            if (n++)
                fputs(" & ", f);
            if (!(c == 0 && !t->group_start[r]))
                tex_escape(cell_text(t, r, c), f);
        }
        fputs(" \\\\\n", f);
    }
    fputs("\\bottomrule\n\\end{tabular}\n", f);
    if (t->nnotes) {
        fputs("\\par\\smallskip\n\\begin{minipage}{\\linewidth}\\footnotesize\n", f);
        for (int i = 0; i < t->nnotes; i++) {
            tex_escape(t->notes[i], f);
            fputs(i + 1 < t->nnotes ? "\\\\\n" : "\n", f);
        }
        fputs("\\end{minipage}\n", f);
    }
    fputs("\\end{table}\n", f);
}
