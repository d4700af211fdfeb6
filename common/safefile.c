/* common/safefile.c: see safefile.h. */
#define _GNU_SOURCE
#include "safefile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a path is, when it is not a regular file: said in every refusal. */
static const char *kind_of(mode_t m)
{
    if (S_ISLNK(m))
        return "a symbolic link, not a regular file (links are not followed)";
    if (S_ISFIFO(m))
        return "a FIFO, not a regular file";
    if (S_ISCHR(m) || S_ISBLK(m))
        return "a device, not a regular file";
    if (S_ISDIR(m))
        return "a directory, not a regular file";
    if (S_ISSOCK(m))
        return "a socket, not a regular file";
    return "not a regular file";
}

/* ---- reading ------------------------------------------------------------------------------- */

int sf_open_read_fd(const char *path, int flags, const char **why)
{
    struct stat st, fst;
    /* Refused before the open: opening a device can act on it, and a FIFO's open or read can wait. */
    if (((flags & SF_FOLLOW) ? stat(path, &st) : lstat(path, &st)) != 0) {
        *why = strerror(errno);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = kind_of(st.st_mode);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | ((flags & SF_FOLLOW) ? 0 : O_NOFOLLOW));
    if (fd < 0) {
        *why = errno == ELOOP ? kind_of(S_IFLNK) : strerror(errno);
        return -1;
    }
    /* the path could have been swapped between the two looks: what is open is what counts */
    if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode) || fst.st_ino != st.st_ino || fst.st_dev != st.st_dev) {
        *why = "changed while being opened (not the regular file it was); not read";
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

FILE *sf_open_read(const char *path, int flags, const char **why)
{
    int fd = sf_open_read_fd(path, flags, why);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        *why = strerror(errno);
        close(fd);
    }
    return f;
}

const char *sf_no_content(const char *msg, char *buf, size_t n)
{
    const char *near = strstr(msg, " near ");
    size_t len = near ? (size_t)(near - msg) : strlen(msg);
    snprintf(buf, n, "%.*s", (int)len, msg);
    return buf;
}

/* ---- temporaries ----------------------------------------------------------------------------- */

static char host[33];
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

/* This host's name as it appears in a temporary's name: letters, digits, '.' and '-', at most 32. A
 * results folder on a shared file system holds temporaries of other nodes: only this host's are judged
 * by their PID. */
static void make_host(void)
{
    char h[256] = "";
    if (gethostname(h, sizeof h - 1) != 0 || !h[0])
        strcpy(h, "host");
    size_t k = 0;
    for (const char *p = h; *p && k < sizeof host - 1; p++) {
        int keep = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                   *p == '.' || *p == '-';
        host[k++] = keep ? *p : '-';
    }
    host[k] = 0;
}

static const char *host_tag(void)
{
    pthread_once(&host_once, make_host);
    return host;
}

int sf_temp_name(const char *path, const char *suffix, char *buf, size_t n)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    int k = snprintf(buf, n, "%.*s" SF_TMP_PREFIX "%ld_%s_%s%s", dirlen, path, (long)getpid(), host_tag(),
                     slash ? slash + 1 : path, suffix ? suffix : "");
    if (k < 0 || (size_t)k >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Whether name is a temporary of a process of this host that is gone. */
static int stale(const char *name)
{
    if (strncmp(name, SF_TMP_PREFIX, sizeof SF_TMP_PREFIX - 1) != 0)
        return 0;
    const char *p = name + sizeof SF_TMP_PREFIX - 1;
    char *end;
    errno = 0;
    long pid = strtol(p, &end, 10);
    if (end == p || *end != '_' || errno || pid <= 0 || pid == (long)getpid())
        return 0;
    size_t hl = strlen(host_tag());
    if (strncmp(end + 1, host_tag(), hl) != 0 || end[1 + hl] != '_')
        return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Directories already cleared by this process (a report writes hundreds of files into a few). */
static pthread_mutex_t cleaned_lock = PTHREAD_MUTEX_INITIALIZER;
static char *cleaned[64];
static int ncleaned;

void sf_clean_stale(const char *dir)
{
    pthread_mutex_lock(&cleaned_lock);
    for (int i = 0; i < ncleaned; i++)
        if (!strcmp(cleaned[i], dir)) {
            pthread_mutex_unlock(&cleaned_lock);
            return;
        }
    if (ncleaned < (int)(sizeof cleaned / sizeof *cleaned) && (cleaned[ncleaned] = strdup(dir)))
        ncleaned++;
    pthread_mutex_unlock(&cleaned_lock);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            close(dfd);
        return;
    }
    struct dirent *de;
    struct stat st;
    while ((de = readdir(d)))
        if (stale(de->d_name) && fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
            unlinkat(dfd, de->d_name, 0); /* a file or a link (`latest`'s) this naming made, never a folder */
    closedir(d);
}

/* ---- writing --------------------------------------------------------------------------------- */

int sf_target_ok(const char *path, const char **why)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        *why = strerror(errno);
        return -1;
    }
    if (S_ISREG(st.st_mode))
        return 0;
    *why = kind_of(st.st_mode);
    errno = EEXIST;
    return -1;
}

/* Length of root's part of path (root without trailing slashes), or 0 when path is not below root. */
static size_t below(const char *root, const char *path)
{
    if (!root || !*root)
        return 0;
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    return strncmp(path, root, n) == 0 && path[n] == '/' ? n : 0;
}

/* buf (a prefix of the path) below root: a real directory, or absent when may_be_absent. */
static int real_dir(const char *buf, int may_be_absent, const char **why)
{
    struct stat st;
    if (lstat(buf, &st) != 0)
        return may_be_absent && errno == ENOENT ? 0 : (*why = strerror(errno), -1);
    if (S_ISDIR(st.st_mode))
        return 0;
    *why = S_ISLNK(st.st_mode) ? "a folder inside the output folder is a symbolic link (not followed)"
                                : "a folder inside the output folder is not a directory";
    errno = ENOTDIR;
    return -1;
}

static int walk_below(const char *root, const char *path, int make, const char **why)
{
    size_t start = below(root, path); /* 0: not below root, all of it is the user's */
    char buf[4096];
    if (!start && !make)
        return 0;
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        *why = strerror(ENAMETOOLONG);
        errno = ENAMETOOLONG;
        return -1;
    }
    if (!start)
        start = strlen(buf);
    if (make) { /* the root itself, as given (links allowed) */
        buf[start] = 0;
        for (char *p = buf + 1; *p; p++)
            if (*p == '/') {
                *p = 0;
                if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                    return *why = strerror(errno), -1;
                *p = '/';
            }
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return *why = strerror(errno), -1;
        if (path[start])
            buf[start] = '/';
    }
    size_t len = strlen(buf);
    if (!make) /* the folders of a file: up to its last slash */
        while (len > start && buf[len] != '/')
            len--;
    for (size_t i = start + 1; i <= len; i++) {
        if (i < len && buf[i] != '/')
            continue;
        char c = buf[i];
        buf[i] = 0;
        if (make && mkdir(buf, 0777) != 0 && errno != EEXIST)
            return *why = strerror(errno), -1;
        if (real_dir(buf, !make, why) != 0)
            return -1;
        buf[i] = c;
    }
    return 0;
}

int sf_inside(const char *root, const char *path, const char **why)
{
    return walk_below(root, path, 0, why);
}

int sf_mkdirs(const char *root, const char *path, const char **why)
{
    return walk_below(root, path, 1, why);
}

static void clean_beside(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        sf_clean_stale(".");
        return;
    }
    char dir[4096];
    size_t len = slash == path ? 1 : (size_t)(slash - path);
    if (len < sizeof dir) {
        memcpy(dir, path, len);
        dir[len] = 0;
        sf_clean_stale(dir);
    }
}

FILE *sf_create(const char *path, char *tmp, size_t n, const char **why)
{
    if (sf_target_ok(path, why) != 0)
        return NULL;
    if (sf_temp_name(path, "", tmp, n) != 0) {
        *why = strerror(errno);
        return NULL;
    }
    clean_beside(path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) { /* this PID's own, left by an earlier write of this process */
        struct stat st;
        if (lstat(tmp, &st) == 0 && S_ISREG(st.st_mode) && unlink(tmp) == 0)
            fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        else
            errno = EEXIST;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        *why = strerror(errno);
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
    }
    return f;
}

int sf_rename_into(const char *tmp, const char *path, const char **why)
{
    if (sf_target_ok(path, why) != 0) { /* checked again: it may have appeared while writing */
        int saved = errno;
        unlink(tmp);
        errno = saved;
        return -1;
    }
    if (rename(tmp, path) != 0) {
        int saved = errno;
        *why = strerror(saved);
        unlink(tmp);
        errno = saved;
        return -1;
    }
    return 0;
}

int sf_commit(FILE *f, const char *tmp, const char *path, const char **why)
{
    int bad = ferror(f), err = 0; /* the errno of a write that failed earlier is gone */
    if (fflush(f) != 0 && !bad)
        bad = 1, err = errno;
    if (!bad && fsync(fileno(f)) != 0 && errno != EINVAL) /* EINVAL: a file system without fsync */
        bad = 1, err = errno;
    if (fclose(f) != 0 && !bad)
        bad = 1, err = errno;
    if (bad) {
        *why = err ? strerror(err) : "an earlier write failed (disk full?)";
        unlink(tmp);
        errno = err ? err : EIO;
        return -1;
    }
    return sf_rename_into(tmp, path, why);
}
