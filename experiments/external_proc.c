/*
 * external_proc.c: the baseline program as a process (external_proc.h): fork and exec with pipes, in
 * an environment that holds the frameworks at the kernels' level (made before the fork), line-by-line
 * reading within the deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <speedlab/prof.h>

#include "external.h"
#include "external_proc.h"

double ext_now_s(void)
{
    return (double)prof_now_ns() * 1e-9;
}

int ext_spawn(ext_proc *p, const char *program, const char *err_path, sl_error *err)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1};
    if (pipe(in) != 0 || pipe(out) != 0) {
        sl_error_set(err, "cannot create pipes for the baseline: %s", strerror(errno));
        for (int i = 0; i < 2; i++) {
            if (in[i] >= 0)
                close(in[i]);
            if (out[i] >= 0)
                close(out[i]);
        }
        return -1;
    }
    char **env = sl_external_env(); /* the frameworks at the kernels' level (external_isa.c) */
    const char *python = sl_external_python();
    char *const argv[] = {(char *)python, (char *)program, NULL};
    fflush(NULL);
    p->pid = env ? fork() : -1;
    if (p->pid < 0) {
        sl_error_set(err, "cannot start the baseline (%s): %s", env ? "fork" : "its environment",
                     strerror(env ? errno : ENOMEM));
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        sl_external_env_free(env);
        return -1;
    }
    if (p->pid == 0) {
        int efd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        dup2(in[0], 0);
        dup2(out[1], 1);
        if (efd >= 0)
            dup2(efd, 2);
        close(in[1]);
        close(out[0]);
        execvpe(python, argv, env);
        /* only async-signal-safe calls here: the parent says which interpreter (stderr.txt) */
        static const char msg[] = "cannot start the baseline's interpreter (exec failed)\n";
        if (write(2, msg, sizeof msg - 1) < 0)
            _exit(127);
        _exit(127);
    }
    sl_external_env_free(env);
    close(in[0]);
    close(out[1]);
    p->in_fd = in[1];
    p->out_fd = out[0];
    fcntl(p->in_fd, F_SETFD, FD_CLOEXEC);
    fcntl(p->out_fd, F_SETFD, FD_CLOEXEC);
    return 0;
}

int ext_send_line(ext_proc *p, const char *line)
{
    size_t n = strlen(line), done = 0;
    while (done < n) {
        ssize_t w = write(p->in_fd, line + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1; /* EPIPE: the program has ended; its stderr says why */
        done += (size_t)w;
    }
    return 0;
}

json_t *ext_read_line(ext_proc *p, const char *what, sl_error *err)
{
    for (;;) {
        char *nl = p->buf ? memchr(p->buf + p->scanned, '\n', p->len - p->scanned) : NULL;
        p->scanned = nl ? 0 : p->len;
        if (nl) {
            *nl = '\0';
            json_error_t je;
            json_t *j = json_loads(p->buf, 0, &je);
            size_t rest = p->len - (size_t)(nl + 1 - p->buf);
            memmove(p->buf, nl + 1, rest);
            p->len = rest;
            if (p->first_line_s == 0)
                p->first_line_s = ext_now_s();
            if (!json_is_object(j)) {
                json_decref(j);
                sl_error_set(err, "the baseline's %s is not a JSON object (%s)", what, je.text);
                return NULL;
            }
            return j;
        }
        double left = p->deadline_s - ext_now_s();
        if (left <= 0) {
            sl_error_set(err, "timed out after %.0f s in all, waiting for its %s (SPEEDLAB_BASELINE_TIMEOUT)",
                         sl_external_timeout_s(), what);
            return NULL;
        }
        struct pollfd pf = {.fd = p->out_fd, .events = POLLIN};
        int r = poll(&pf, 1, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR) {
            sl_error_set(err, "poll on the baseline's output: %s", strerror(errno));
            return NULL;
        }
        if (r <= 0)
            continue;
        if (p->len >= EXT_MAX_LINE) {
            sl_error_set(err, "its %s is longer than %zu MiB without a newline; a report is one JSON line",
                         what, EXT_MAX_LINE >> 20);
            return NULL;
        }
        if (p->len + 65536 > p->cap) { /* doubling: linear in the line's length */
            size_t cap = p->cap < 262144 ? 262144 : 2 * p->cap;
            cap = cap > EXT_MAX_LINE + 65536 ? EXT_MAX_LINE + 65536 : cap;
            char *g = realloc(p->buf, p->cap = cap);
            if (!g) {
                sl_error_set(err, "out of memory reading the baseline's %s", what);
                return NULL;
            }
            p->buf = g;
        }
        ssize_t got = read(p->out_fd, p->buf + p->len, p->cap - p->len - 1);
        if (got == 0) {
            sl_error_set(err, "the program ended before its %s", what);
            return NULL;
        }
        if (got > 0)
            p->len += (size_t)got;
    }
}

int ext_finish(ext_proc *p, int clean)
{
    if (p->in_fd >= 0)
        close(p->in_fd);
    int st = 0;
    if (p->pid > 0) { /* never kill(-1): no program was started when fork failed */
        if (!clean)
            kill(p->pid, SIGKILL);
        /* after its last report the program only exits; one that hangs there (a CUDA teardown, an
         * atexit handler) is ended at the case's deadline */
        for (pid_t r; (r = waitpid(p->pid, &st, clean ? WNOHANG : 0)) != p->pid;) {
            if (r < 0 && errno != EINTR)
                break;
            if (r == 0 && ext_now_s() > p->deadline_s) {
                kill(p->pid, SIGKILL);
                clean = 0;
            } else if (r == 0) {
                nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
            }
        }
    }
    if (p->out_fd >= 0)
        close(p->out_fd);
    free(p->buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

void ext_stderr_tail(const char *path, char *out, size_t n)
{
    char buf[4096] = "";
    FILE *f = fopen(path, "r");
    if (f) {
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        fseek(f, size > (long)sizeof buf - 1 ? size - (long)sizeof buf + 1 : 0, SEEK_SET);
        size_t got = fread(buf, 1, sizeof buf - 1, f);
        buf[got] = '\0';
        fclose(f);
    }
    size_t len = strlen(buf);
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
        buf[--len] = '\0';
    char *line = strrchr(buf, '\n');
    snprintf(out, n, "%s", line ? line + 1 : buf[0] ? buf : "(nothing on stderr)");
}

