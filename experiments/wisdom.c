/* wisdom.c: the planner's wisdom file (wisdom.h): read, look up, replace, write whole. */
#include "wisdom.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"
#include "env.h"
#include "isa.h"
#include "safefile.h"

#define NFIELDS 9

int sl_wisdom_path(const char *given, char *out, size_t n)
{
    const char *env = getenv("SPEEDLAB_WISDOM"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int len;
    if (given && *given)
        len = snprintf(out, n, "%s", given);
    else if (env && *env)
        len = snprintf(out, n, "%s", env);
    else if (xdg && *xdg == '/') /* the XDG rule: a relative value is ignored */
        len = snprintf(out, n, "%s/speedlab/wisdom.tsv", xdg);
    else if (home && *home)
        len = snprintf(out, n, "%s/.cache/speedlab/wisdom.tsv", home);
    else
        return -1;
    return len > 0 && (size_t)len < n ? 0 : -1;
}

/* The first "key : value" of /proc/cpuinfo, or "" */
static void cpuinfo(const char *key, char *out, size_t n)
{
    if (sl_proc_field("/proc/cpuinfo", key, out, n) != 0)
        out[0] = '\0';
}

void sl_cpu_key(char *out, size_t n)
{
    char model[256], fam[32], mod[32], step[32];
    cpuinfo("model name", model, sizeof model);
    cpuinfo("cpu family", fam, sizeof fam);
    cpuinfo("model", mod, sizeof mod);
    cpuinfo("stepping", step, sizeof step);
    snprintf(out, n, "%s (family %s, model %s, stepping %s)", *model ? model : "unknown CPU", *fam ? fam : "?",
             *mod ? mod : "?", *step ? step : "?");
    for (char *p = out; *p; p++) /* a field of a tab-separated line */
        if (*p == '\t' || *p == '\n')
            *p = ' ';
}

void sl_build_key(char *out, size_t n)
{
    snprintf(out, n, "%.40s%s %s %s", sl_commit_built.hash, sl_commit_built.dirty == 1 ? "-dirty" : "",
             kern_isa_mode(), kern_isa_march());
}

static char *dup_field(const char *s)
{
    char *d = strdup(s ? s : "");
    for (char *p = d; p && *p; p++)
        if (*p == '\t' || *p == '\n' || *p == '\r')
            *p = ' ';
    return d;
}

static void entry_free(sl_wisdom_entry *e)
{
    free(e->cpu), free(e->build), free(e->study), free(e->variant), free(e->times), free(e->size), free(e->date);
}

void sl_wisdom_free(sl_wisdom *w)
{
    for (int i = 0; i < w->n; i++)
        entry_free(&w->e[i]);
    free(w->e);
    memset(w, 0, sizeof *w);
}

const sl_wisdom_entry *sl_wisdom_find(const sl_wisdom *w, const char *cpu, const char *build, const char *study,
                                      const char *variant)
{
    for (int i = 0; i < w->n; i++) {
        const sl_wisdom_entry *e = &w->e[i];
        if (!strcmp(e->cpu, cpu) && !strcmp(e->build, build) && !strcmp(e->study, study) &&
            !strcmp(e->variant, variant))
            return e;
    }
    return NULL;
}

int sl_wisdom_put(sl_wisdom *w, const sl_wisdom_entry *e)
{
    sl_wisdom_entry c = {dup_field(e->cpu), dup_field(e->build), dup_field(e->study), dup_field(e->variant),
                         dup_field(e->times), dup_field(e->size), dup_field(e->date), e->level, e->threads};
    if (!c.cpu || !c.build || !c.study || !c.variant || !c.times || !c.size || !c.date) {
        entry_free(&c);
        return -1;
    }
    const sl_wisdom_entry *old = sl_wisdom_find(w, c.cpu, c.build, c.study, c.variant);
    if (old) {
        sl_wisdom_entry *slot = &w->e[old - w->e];
        entry_free(slot);
        *slot = c;
        return 0;
    }
    if (w->n == w->cap) {
        int cap = w->cap ? 2 * w->cap : 32;
        sl_wisdom_entry *g = realloc(w->e, (size_t)cap * sizeof *g);
        if (!g) {
            entry_free(&c);
            return -1;
        }
        w->e = g, w->cap = cap;
    }
    w->e[w->n++] = c;
    return 0;
}

/* One line's fields into e; NULL, or what is wrong with it. */
static const char *parse_line(char *line, sl_wisdom_entry *e)
{
    static const char *const count = "not 9 tab-separated fields (cpu, build, study, variant, level, times, "
                                     "size, threads, date)";
    char *f[NFIELDS];
    int k = 0;
    for (char *p = line; p; k++) { /* a tenth field is refused, not dropped */
        if (k == NFIELDS)
            return count;
        f[k] = p;
        if ((p = strchr(p, '\t')))
            *p++ = '\0';
    }
    if (k != NFIELDS)
        return count;
    if (strcmp(f[4], "v2") && strcmp(f[4], "v3") && strcmp(f[4], "v4"))
        return "level is not v2, v3 or v4";
    char *end;
    long threads = strtol(f[7], &end, 10);
    if (*f[7] < '1' || *f[7] > '9' || *end || threads > 4096)
        return "threads is not a whole number from 1 to 4096";
    for (int i = 0; i < 4; i++)
        if (!*f[i])
            return "an empty cpu, build, study or variant";
    *e = (sl_wisdom_entry){f[0], f[1], f[2], f[3], f[5], f[6], f[8], f[4][1] - '0', (int)threads};
    return NULL;
}

int sl_wisdom_read(const char *path, sl_wisdom *w, char *err, size_t n)
{
    memset(w, 0, sizeof *w);
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0; /* no wisdom yet: every variant runs at its default level */
    const char *why;
    FILE *f = sf_open_read(path, SF_FOLLOW, &why);
    if (!f) {
        snprintf(err, n, "wisdom file %s: %s; give another with --wisdom or SPEEDLAB_WISDOM", path, why);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int lineno = 0, rc = 0;
    while (rc == 0 && (len = getline(&line, &cap, f)) > 0) {
        lineno++;
        int nul = strlen(line) < (size_t)len; /* a NUL before the line's end: not a text file */
        line[strcspn(line, "\r\n")] = '\0';
        if (!nul && (line[0] == '#' || line[0] == '\0'))
            continue;
        sl_wisdom_entry e;
        const char *bad = nul ? "a NUL byte in the line" : parse_line(line, &e);
        if (bad || sl_wisdom_put(w, &e) != 0) {
            snprintf(err, n, "wisdom file %s, line %d: %s; run `speedlab tune` to make it again (or remove "
                     "the file, or run with --no-tune)", path, lineno, bad ? bad : "out of memory");
            rc = -1;
        }
    }
    free(line);
    fclose(f);
    if (rc)
        sl_wisdom_free(w);
    return rc;
}

/* The folder of path into dir, made when missing (mkdir -p: ~/.cache may not exist on a fresh account). */
static void make_dir_of(const char *path, char *dir, size_t n)
{
    snprintf(dir, n, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) {
        snprintf(dir, n, ".");
        return;
    }
    if (slash == dir) {
        snprintf(dir, n, "/");
        return;
    }
    *slash = '\0';
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0777);
            *p = '/';
        }
    mkdir(dir, 0777);
}

int sl_wisdom_update(const char *path, const sl_wisdom *fresh, char *err, size_t n)
{
    char dir[4096];
    make_dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) { /* a lock on the folder: no file left beside the wisdom */
        snprintf(err, n, "cannot lock the folder of the wisdom file %s: %s; give a writable path with --wisdom", path,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    sl_wisdom now;
    int rc = sl_wisdom_read(path, &now, err, n);
    for (int i = 0; rc == 0 && i < fresh->n; i++)
        rc = sl_wisdom_put(&now, &fresh->e[i]);
    if (rc == 0)
        rc = sl_wisdom_write(&now, path, err, n);
    sl_wisdom_free(&now);
    close(fd); /* the lock goes with it */
    return rc;
}

int sl_wisdom_write(const sl_wisdom *w, const char *path, char *err, size_t n)
{
    char dir[4096], tmp[4200];
    const char *why = NULL;
    make_dir_of(path, dir, sizeof dir);
    FILE *f = sf_create(path, tmp, sizeof tmp, &why);
    if (f) {
        fprintf(f, "# speedlab wisdom: the ISA level each CPU variant runs at, chosen by timing (speedlab tune)\n"
                   "# cpu\tbuild\tstudy\tvariant\tlevel\ttimes\tsize\tthreads\tdate\n");
        for (int i = 0; i < w->n; i++) {
            const sl_wisdom_entry *e = &w->e[i];
            fprintf(f, "%s\t%s\t%s\t%s\tv%d\t%s\t%s\t%d\t%s\n", e->cpu, e->build, e->study, e->variant, e->level,
                    e->times, e->size, e->threads, e->date);
        }
        if (sf_commit(f, tmp, path, &why) == 0)
            return 0;
    }
    snprintf(err, n, "cannot write the wisdom file %s: %s; give a writable path with --wisdom", path,
             why ? why : "unknown error");
    return -1;
}
