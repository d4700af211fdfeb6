/* reports/output.c: how `report` and `compare` name and write their output files.
 *
 * Names: a study, variant or host comes from a results file, which anyone can write, so it reaches a
 * path only through rep_path_name: an injective escape (two different strings never share a name) that
 * can never produce "/", "..", a hidden file or an empty name.
 *
 * Files: each is written to a temporary beside it and renamed into place only when every byte was
 * written and the close succeeded, so a full disk leaves the previous file (or none), never an empty or
 * cut one; a target that is a link, FIFO, device or directory is refused (common/safefile.h); every
 * failure is said on stderr and counted, and the command exits non-zero when any was. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rep.h"
#include "safefile.h"

/* ---- names ----------------------------------------------------------------------------------- */

static int keep_char(unsigned char ch, int first)
{
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
        ch == '-')
        return 1;
    return ch == '.' && !first; /* a leading dot would hide the file, and "." or ".." name directories */
}

char *rep_path_name(const char *s)
{
    /* Letters, digits, '_', '-' and a dot not in front stay; every other byte, '~' included, becomes
     * "~XX" (hex). '~' starts only escapes, so decoding is unambiguous: the mapping is injective. The
     * empty string becomes "~" alone, which no escape produces. */
    size_t n = strlen(s);
    char *out = malloc(3 * n + 2), *p = out;
    if (!out)
        return NULL;
    if (n == 0)
        *p++ = '~';
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (keep_char(ch, i == 0))
            *p++ = (char)ch;
        else
            p += sprintf(p, "~%02x", ch);
    }
    *p = 0;
    return out;
}

/* ---- inputs ---------------------------------------------------------------------------------- */

FILE *rep_open_input(const char *path, const char **why)
{
    return sf_open_read(path, 0, why); /* a regular file, never through a link (common/safefile.h) */
}

/* ---- files ----------------------------------------------------------------------------------- */

/* The outputs open now: a FILE and where it goes. A report holds at most a few open at once. */
typedef struct open_out {
    FILE *f;
    char *path, *tmp;
    struct open_out *next;
} open_out;

static open_out *opened;
static int failures;
static const char *volatile extra_tmp; /* a temporary another program writes (gnuplot's image) */
static volatile pid_t extra_writer;     /* that program, while it runs (0: none) */

/* Ctrl-C, a kill or a hang-up while outputs are open: their temporaries are removed (unlink is
 * async-signal-safe; the list is only read), then the signal's default action ends the process, so a
 * killed report leaves the previous files or none, and no NAME.tmp-PID beside them. */
static void remove_temporaries(int sig)
{
    for (open_out *o = opened; o; o = o->next)
        if (o->tmp)
            unlink(o->tmp);
    if (extra_writer > 0) { /* stopped first, or it could create its file after the unlink */
        kill(extra_writer, SIGKILL);
        waitpid(extra_writer, NULL, 0);
    }
    if (extra_tmp)
        unlink(extra_tmp);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* SIGINT, SIGTERM and SIGHUP held off while the list of temporaries and the files disagree. */
static void hold_stopping_signals(sigset_t *old)
{
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT), sigaddset(&stop, SIGTERM), sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, old);
}

void rep_out_cleanup_on_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction sa = {.sa_handler = remove_temporaries};
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

void rep_out_extra_temporary(const char *path, pid_t writer)
{
    extra_writer = writer;
    extra_tmp = path;
}

int rep_out_failures(void)
{
    return failures;
}

void rep_out_fail(const char *path, const char *what, int err)
{
    fprintf(stderr, "speedlab: cannot write %s: %s: %s; the file is not written (free space, fix the "
                    "permissions, or remove what is there if it is not a regular file, then run again)\n",
            path, what, err > 0 ? strerror(err) : err ? "refused" : "an earlier write failed (disk full?)");
    failures++;
}

const char *rep_out_root(const char *dir, int set)
{
    static char *root;
    if (set) {
        free(root);
        root = dir ? rep_strdup(dir) : NULL;
    }
    return root;
}

FILE *rep_out_open(const char *path)
{
    open_out *o = calloc(1, sizeof *o);
    char tmp[4200];
    const char *why = NULL;
    if (!o) {
        rep_out_fail(path, "allocating", ENOMEM);
        return NULL;
    }
    sigset_t old;
    hold_stopping_signals(&old); /* the temporary is in the list before a signal can look for it */
    o->f = sf_inside(rep_out_root(NULL, 0), path, &why) == 0 ? sf_create(path, tmp, sizeof tmp, &why) : NULL;
    o->path = rep_strdup(path);
    o->tmp = rep_strdup(tmp);
    if (o->f)
        o->next = opened, opened = o;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (!o->f) {
        fprintf(stderr, "speedlab: cannot write %s: %s; the file is not written (remove what is there if it "
                        "is not a regular file, free space or fix the permissions, then run again)\n", path, why);
        failures++;
        free(o->path);
        free(o->tmp);
        free(o);
        return NULL;
    }
    return o->f;
}

/* Closes f and renames it into place; on any error the temporary is removed and -1 returned. */
int rep_out_close(FILE *f)
{
    open_out **pp = &opened;
    while (*pp && (*pp)->f != f)
        pp = &(*pp)->next;
    if (!*pp) /* not one of ours (stdout): only the checks */
        return (fflush(f) != 0 || ferror(f)) ? -1 : 0;
    open_out *o = *pp;
    const char *why = NULL;
    sigset_t old;
    hold_stopping_signals(&old); /* out of the list only once renamed or removed */
    *pp = o->next;
    int bad = sf_commit(f, o->tmp, o->path, &why) != 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (bad) {
        fprintf(stderr, "speedlab: cannot write %s: %s; the file is not written (free space, fix the "
                        "permissions, or remove what is there if it is not a regular file, then run again)\n",
                o->path, why);
        failures++;
    }
    free(o->path);
    free(o->tmp);
    free(o);
    return bad ? -1 : 0;
}
