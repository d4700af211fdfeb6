/* interrupt.c: the signal handler of every command and the holding-off around whole writes. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "exit_codes.h"
#include "interrupt.h"

/* Holds in force (sl_interrupt_hold). The mask holds the signal off only on the thread that asked;
 * the kernel may deliver SIGINT to any other thread (OpenMP, OpenBLAS and the profiler's sampler have
 * their own masks), so the handler itself also waits while a hold is on: it notes the signal and
 * sl_interrupt_release acts on it. */
static volatile sig_atomic_t holds, pending;

static void on_signal(int sig)
{
    if (holds > 0) {
        pending = sig;
        return;
    }
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
    holds++;
}

void sl_interrupt_release(const sigset_t *old)
{
    holds--;
    sigprocmask(SIG_SETMASK, old, NULL); /* a signal held off on this thread acts here */
    if (holds == 0 && pending)
        on_signal(pending);            /* one another thread received meanwhile */
}
