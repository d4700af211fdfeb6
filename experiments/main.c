/* main.c: the speedlab command. Everything is in speedlab_core (commands.h); this is the registry's entry. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "exit_codes.h"

int main(int argc, char **argv)
{
    int rc = sl_main(argc, argv, sl_studies, sl_n_studies);
    /* What went to standard output (a list, a plan, a table) is output too: a full disk or a closed pipe
     * behind it is a failure, not a success that printed nothing. */
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "speedlab: writing standard output failed: %s\n", errno ? strerror(errno) : "write error");
        return rc != SL_EXIT_OK ? rc : SL_EXIT_FAILED;
    }
    return rc;
}
