/*
 * external_proc.h: the baseline program as a process (external_proc.c), for external.c only: started
 * with pipes, one JSON line at a time read within the case's deadline, ended.
 */
#ifndef SL_EXTERNAL_PROC_H
#define SL_EXTERNAL_PROC_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#include "study.h"

/* A report line longer than this is refused: the largest outputs (tensor_mean's D^3 mean, mlp's
 * weights) are a few MB of JSON. */
#define EXT_MAX_LINE ((size_t)256 << 20)

/* One running program: its pid, the pipes, what it has written so far. */
typedef struct ext_proc {
    pid_t pid;
    int in_fd, out_fd;
    char *buf;
    size_t len, cap;
    size_t scanned;      /* buf[0, scanned) holds no newline: each byte is searched once */
    double deadline_s;   /* on the monotonic clock */
    double first_line_s; /* when its first line came (0: none yet) */
} ext_proc;

/* Seconds on the monotonic clock (the profiler's). */
double ext_now_s(void);
/* Starts `python program` with pipes on stdin and stdout and stderr into err_path. 0, or -1 with err. */
int ext_spawn(ext_proc *p, const char *program, const char *err_path, sl_error *err);
/* Writes line whole; -1 when the program has ended (EPIPE: its stderr says why). */
int ext_send_line(ext_proc *p, const char *line);
/* The program's next line as JSON, or NULL with why (end of output, time-out, not JSON). */
json_t *ext_read_line(ext_proc *p, const char *what, sl_error *err);
/* Ends the program (killed unless `clean`; a clean one that has not exited by the deadline is killed),
 * closes the pipes; its exit status or -1. */
int ext_finish(ext_proc *p, int clean);
/* The last non-empty line of the program's stderr (a Python traceback ends with the error). */
void ext_stderr_tail(const char *path, char *out, size_t n);

#endif
