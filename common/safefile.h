/* common/safefile.h: how every speedlab program opens a file it reads and writes a file it makes.
 *
 * Reading: a file under a results folder is opened only when it is a regular file there. The open does
 * not follow a symbolic link in the last component (O_NOFOLLOW, unless SF_FOLLOW: a path the user typed)
 * and does not wait on a FIFO (O_NONBLOCK); the descriptor is fstat-checked before a byte is read, so a
 * FIFO, device, directory or link is refused with the reason, never read.
 *
 * Writing: a file is written whole to a temporary beside it, flushed to disk (fsync) and renamed over
 * the target only if the target is absent or a regular file: never through a symbolic link, never over
 * a device, FIFO or directory. A full disk or a kill keeps the earlier file whole.
 *
 * Temporaries: DIR/.speedlab-tmp-PID_HOST_NAME. The first write into a directory removes the
 * temporaries there of processes of this host that are no longer alive (a SIGKILL cannot be caught),
 * so the next command of the same kind leaves nothing of a killed one. */
#ifndef SL_SAFEFILE_H
#define SL_SAFEFILE_H

#include <stddef.h>
#include <stdio.h>

#define SF_TMP_PREFIX ".speedlab-tmp-"

enum { SF_FOLLOW = 1 }; /* sf_open_read: follow a link in the last component (a path given by the user) */

/* A regular file opened for reading (blocking reads), or -1 / NULL with *why saying what it is instead
 * (a static string: "a FIFO, not a regular file", or strerror's). */
int sf_open_read_fd(const char *path, int flags, const char **why);
FILE *sf_open_read(const char *path, int flags, const char **why);

/* 0 when path may be replaced: absent, or a regular file (not a link to one). Else -1 and *why. */
int sf_target_ok(const char *path, const char **why);

/* The temporary's name for target path, with suffix appended ("" or ".png": a program that picks the
 * format by the extension). -1 when it would not fit in n. */
int sf_temp_name(const char *path, const char *suffix, char *buf, size_t n);

/* Removes the temporaries in dir of dead processes of this host (once per directory per process). */
void sf_clean_stale(const char *dir);

/* Starts writing path: checks the target (sf_target_ok), clears stale temporaries beside it and creates
 * the temporary (O_EXCL, O_NOFOLLOW), whose name goes to tmp (n bytes). NULL with *why on failure. */
FILE *sf_create(const char *path, char *tmp, size_t n, const char **why);

/* Finishes: flush, fsync, close, check the target again and rename tmp over it. On any failure the
 * temporary is removed, *why says what failed (errno kept) and -1 is returned; f is closed either way.
 * A write error earlier in f's life is a failure here. */
int sf_commit(FILE *f, const char *tmp, const char *path, const char **why);

/* A writer that fills the temporary itself (gnuplot): rename tmp over path under the same checks;
 * the temporary is removed on failure. */
int sf_rename_into(const char *tmp, const char *path, const char **why);

/* Folders: root is the output folder the user named (it may be reached through links); below it,
 * every folder must be a real directory, so that a file written there stays inside root. sf_inside: 0
 * when each folder of path after root is one (path outside root: 0, nothing to check). sf_mkdirs:
 * mkdir -p path, refusing a link or non-directory below root. Else -1, errno ENOTDIR, *why. */
int sf_inside(const char *root, const char *path, const char **why);
int sf_mkdirs(const char *root, const char *path, const char **why);

/* A parser's message without the input it quotes: jansson's "... near 'TEXT'" loses the near part, so
 * an error about a file never shows what the file holds. Returns buf. */
const char *sf_no_content(const char *msg, char *buf, size_t n);

#endif
