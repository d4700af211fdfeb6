/* interrupt.c: the signal handler of every command and the holding-off around whole writes. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "exit_codes.h"
#include "interrupt.h"

static void on_signal(int sig)
{
    /* Only async-signal-safe calls here. Records are whole lines (SIGINT is held off while one is
     * written), so leaving now keeps every finished case and drops the one in progress. */
    static const char msg[] = "\nspeedlab: interrupted; finished cases are kept, the case in progress "
                              "is dropped\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
    _exit(sig == SIGINT ? SL_EXIT_INTERRUPTED : 128 + sig);
}

void sl_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void sl_interrupt_hold(sigset_t *old)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, old);
}

void sl_interrupt_release(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}
