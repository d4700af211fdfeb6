/* experiments/data/gzopen_regular.c: see gzopen_regular.h. */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include "gzopen_regular.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

gzFile data_gzopen_regular(const char *path, const char **why)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* O_NONBLOCK: a FIFO's open does not wait */
    struct stat st;
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *why = "not a regular file (a FIFO, device or directory would block or mislead the read)";
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    errno = 0;
    gzFile f = gzdopen(fd, "rb");
    if (!f) {
        *why = errno ? strerror(errno) : "out of memory";
        close(fd);
    }
    return f;
}
