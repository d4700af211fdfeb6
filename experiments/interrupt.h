/*
 * interrupt.h: SIGINT and SIGTERM during a command (interrupt.c). A signal ends the process at once
 * (exit 130, or 128 + the signal), so whatever must reach the disk whole (a record line, a case's
 * timer table with its record) is written with the signals held off and lets a pending one act after.
 */
#ifndef SL_INTERRUPT_H
#define SL_INTERRUPT_H

#include <signal.h>

/* SIGINT/SIGTERM: a message, then exit 130 (143) at once; the results file keeps every finished case
 * and no partial one. */
void sl_interrupt_install(void);
/* Holds SIGINT and SIGTERM off; the mask before goes into *old, for sl_interrupt_release. */
void sl_interrupt_hold(sigset_t *old);
/* Restores the mask sl_interrupt_hold saved: a signal that came meanwhile acts now. */
void sl_interrupt_release(const sigset_t *old);

#endif
