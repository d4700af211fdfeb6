/* experiments/data/gzopen_regular.c: see gzopen_regular.h. */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include "gzopen_regular.h"
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

gzFile data_gzopen_regular(const char *path, const char **why)
{
    /* a regular file only (common/safefile.h): a FIFO's open or read would wait, a device's act; a data
     * directory may link its files from elsewhere, so a link is followed */
    int fd = sf_open_read_fd(path, SF_FOLLOW, why);
    if (fd < 0)
        return NULL;
    errno = 0;
    gzFile f = gzdopen(fd, "rb");
    if (!f) {
        *why = errno ? strerror(errno) : "out of memory";
        close(fd);
    }
    return f;
}
