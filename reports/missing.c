/* reports/missing.c: the cases a plan had (DIR/cases.tsv, written by `speedlab plan --out DIR` or
 * `speedlab slurm`) that the results lack: a Slurm task that failed, was pre-empted or cancelled leaves
 * its cases without a record, and the merged report names them (docs/slurm.md).
 *
 * A case is the loader's identity: study, variant, size and params (rep_case.pkey). Any record of it
 * counts, whatever its status: a failed or unavailable case ran and says so in the report's tables. */
#define _DEFAULT_SOURCE
#include <stdlib.h>
#include <string.h>

#include "missing.h"

/* Splits a cases line (tab-separated, docs/slurm.md) into its fields; 0 on success. */
int rep_plan_case_parse(char *line, rep_plan_case *c)
{
    char *f[9];
    int n = 0;
    line[strcspn(line, "\r\n")] = 0;
    for (char *p = line; n < 9; n++) {
        f[n] = p;
        p = strchr(p, '\t');
        if (!p) {
            n++;
            break;
        }
        *p++ = 0;
    }
    if (n < 8)
        return -1;
    char *end;
    c->index = (int)strtol(f[0], &end, 10);
    if (*end)
        return -1;
    c->size = strtol(f[3], &end, 10);
    if (*end)
        return -1;
    c->study = f[1];
    c->variant = f[2];
    c->device = f[6];
    c->params = strcmp(f[7], "-") ? f[7] : "";
    return 0;
}

/* Whether the planned params are the record's key: the same words, less the size's own parameter where
 * it equals the size (galaxy's "max_iter=2" at size 2, which a case line carries for its task and the
 * loader's key leaves out, loader.c's params_key). */
static int same_params(const rep_case *r, const char *planned)
{
    char own[96];
    snprintf(own, sizeof own, "%s=%ld", r->size_name ? r->size_name : "", r->size);
    size_t ol = strlen(own);
    char *p = rep_strdup(planned), *w = p, *o = p;
    while (p && *w) {
        size_t len = strcspn(w, " ");
        if (!(len == ol && !strncmp(w, own, ol))) {
            if (o != p)
                *o++ = ' ';
            memmove(o, w, len);
            o += len;
        }
        w += len + (w[len] == ' ');
    }
    if (p)
        *o = 0;
    int same = p && !strcmp(r->pkey ? r->pkey : "", p);
    free(p);
    return same;
}

static int has_record(const rep_set *s, const rep_plan_case *c)
{
    for (int i = 0; i < s->ncases; i++) {
        const rep_case *r = &s->cases[i];
        if (r->size == c->size && !strcmp(r->study, c->study) && !strcmp(r->variant, c->variant) &&
            same_params(r, c->params))
            return 1;
    }
    return 0;
}

int rep_missing_cases(const rep_set *s, const char *cases_path, rep_missing_fn fn, void *ctx,
                      int *n_planned)
{
    const char *why;
    FILE *f = rep_open_input(cases_path, &why);
    if (!f)
        return -1;
    char *line = NULL, *copy = NULL;
    size_t cap = 0;
    int missing = 0, planned = 0, lineno = 0;
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        free(copy);
        copy = rep_strdup(line); /* the callback gets the line as written; parsing cuts it */
        rep_plan_case c;
        if (rep_plan_case_parse(line, &c) != 0) {
            fprintf(stderr, "%s:%d: not a case line (expected 9 tab-separated fields: index study "
                    "variant size seed reps device params estimate_s)\n", cases_path, lineno);
            continue;
        }
        planned++;
        if (!has_record(s, &c)) {
            missing++;
            if (fn)
                fn(ctx, &c, copy);
        }
    }
    free(copy);
    free(line);
    fclose(f);
    if (n_planned)
        *n_planned = planned;
    return missing;
}

static void md_row(void *ctx, const rep_plan_case *c, const char *line)
{
    (void)line;
    fprintf((FILE *)ctx, "| %d | %s | %s | %ld | %s | %s |\n", c->index, c->study, c->variant, c->size,
            c->device, c->params[0] ? c->params : "—");
}

int rep_missing_section(FILE *md, const rep_set *s, int npaths, char **paths)
{
    int total = 0;
    for (int i = 0; i < npaths; i++) {
        char *path = rep_printf("%s/cases.tsv", paths[i]);
        int planned = 0, n = rep_missing_cases(s, path, NULL, NULL, &planned);
        if (n < 0) { /* no plan there: nothing to compare with */
            free(path);
            continue;
        }
        fputs("## Planned cases without a record\n\n", md);
        rep_md_code(path, md);
        fprintf(md, " plans %d cases; ", planned);
        if (n == 0)
            fputs("every one has a record.\n\n", md);
        else {
            fprintf(md, "**%d have no record** (a task that failed, was cancelled or pre-empted: "
                    "`speedlab slurm --resubmit %s` runs only these):\n\n", n, paths[i]);
            fputs("| # | study | variant | size | device | params |\n| --- | --- | --- | --- | --- | --- |\n", md);
            rep_missing_cases(s, path, md_row, md, NULL);
            fputc('\n', md);
            fprintf(stderr, "speedlab report: %d of the %d cases planned in %s have no record (listed in "
                    "REPORT.md; speedlab slurm --resubmit %s)\n", n, planned, path, paths[i]);
        }
        total += n;
        free(path);
    }
    return total;
}
