/* rundir.c: one new run directory per invocation, never an overwrite, and OUT/latest pointing at it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rundir.h"
#include "safefile.h"

/* mkdir -p: every missing parent of path, then path. */
static int mkdir_p(const char *path)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s", path) >= (int)sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(tmp, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* OUT/latest -> run-...: a relative link made beside it and renamed over it, so it is never missing. */
static void point_latest(const char *out, const char *id)
{
    char link[4096], tmp[4096];
    snprintf(link, sizeof link, "%s/latest", out);
    sf_temp_name(link, "", tmp, sizeof tmp); /* a kill leaves it for the next run to remove */
    sf_clean_stale(out);
    unlink(tmp);
    struct stat st;
    if (lstat(link, &st) == 0 && !S_ISLNK(st.st_mode)) {
        fprintf(stderr, "speedlab: warning: %s exists and is not a symbolic link; not updating it\n", link);
        return;
    }
    if (symlink(id, tmp) != 0 || rename(tmp, link) != 0) {
        fprintf(stderr, "speedlab: warning: cannot point %s at %s: %s\n", link, id, strerror(errno));
        unlink(tmp);
    }
}

int sl_rundir_create(const char *out, char *dir, size_t dn, char *id, size_t idn)
{
    if (mkdir_p(out) != 0) {
        fprintf(stderr, "speedlab: cannot create output directory %s: %s\n", out, strerror(errno));
        return -1;
    }
    char stamp[32];
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "run-%Y%m%d-%H%M%S", &tm);

    /* mkdir is the atomic test: EEXIST means another run (this second, or an older one) owns it. */
    for (int k = 0; k < 1000; k++) {
        if (k == 0)
            snprintf(id, idn, "%s", stamp);
        else
            snprintf(id, idn, "%s-%d", stamp, k);
        if ((size_t)snprintf(dir, dn, "%s/%s", out, id) >= dn) {
            fprintf(stderr, "speedlab: output path too long: %s\n", out);
            return -1;
        }
        if (mkdir(dir, 0777) == 0) {
            point_latest(out, id);
            return 0;
        }
        if (errno != EEXIST) {
            fprintf(stderr, "speedlab: cannot create run directory %s: %s\n", dir, strerror(errno));
            return -1;
        }
    }
    fprintf(stderr, "speedlab: %s: more than 1000 run directories named %s-N; use another --out\n", out,
            stamp);
    return -1;
}
