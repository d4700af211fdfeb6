/*
 * Escaping of names (regions, studies, variants, run folders: anyone's text) for each output kind a
 * report writes. Every writer of a name goes through one of these; tables through formats.c, which
 * uses them for Markdown. Input is valid UTF-8 (jansson checked it on reading); a control character
 * becomes a space, so no name can end a line, a table row or a data block.
 *
 *   rep_md_cell   a table cell, title or note (which speedlab's own text may format): | escaped (it ends
 *                 a cell), < as &lt; (no HTML from a results file)
 *   rep_md_text   a name in Markdown prose: | \ ` * [ ] # escaped with a backslash, < as &lt;
 *   rep_md_code   a Markdown code span: the name verbatim between enough backticks (CommonMark 6.1)
 *   rep_data_name a gnuplot data file's block title (columnheader): one line, in double quotes (one
 *                 field), a double quote inside as a single one
 */
#include "rep.h"

#include <string.h>

/* s with each byte of `backslashed` escaped by a backslash, '<' as &lt; (no HTML tag can open), and
 * control characters as spaces (no line break can end a row or start a heading). */
static void md_escaped(const char *s, const char *backslashed, FILE *f)
{
    for (; s && *s; s++) {
        if (strchr(backslashed, *s))
            fputc('\\', f), fputc(*s, f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if ((unsigned char)*s < 0x20 || *s == 0x7f)
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

void rep_md_cell(const char *s, FILE *f) { md_escaped(s, "|", f); }

/* not _: inside a word it formats nothing (entropy_mi) */
void rep_md_text(const char *s, FILE *f) { md_escaped(s, "|\\`*[]#", f); }

void rep_md_code(const char *s, FILE *f)
{
    s = s ? s : "";
    int run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        longest = run > longest ? run : longest;
    }
    /* a fence one longer than any run of backticks inside; a space pads a name that starts or ends with
     * one (CommonMark strips one space from each side) */
    int pad = *s == '`' || (*s && s[strlen(s) - 1] == '`');
    for (int i = 0; i <= longest; i++)
        fputc('`', f);
    if (pad)
        fputc(' ', f);
    for (const char *p = s; *p; p++) /* inside a code span only | (a table cell's end) needs a backslash */
        fputc((unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p, f);
    if (pad)
        fputc(' ', f);
    for (int i = 0; i <= longest; i++)
        fputc('`', f);
}

void rep_data_name(const char *s, FILE *f)
{
    fputc('"', f);
    for (; s && *s; s++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s == '"' ? '\'' : *s, f);
    fputs("\"\n", f);
}
