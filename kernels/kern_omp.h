/*
 * kernels/kern_omp.h: the thread number and team size inside a parallel region, for the omp variants,
 * and what they are without OpenMP (the pragmas are then ignored and one thread does every part).
 * KERN_SHARE marks a thread's share of the work (PROF_THREAD_REGION of speedlab/prof.h: a region
 * "omp thread N" when the runner turns them on, one load and a branch when off); it goes around work
 * only, never around a barrier, so that each thread's busy time is what the record's threads_busy_s
 * says (docs/results-schema.md).
 */
#ifndef SL_KERNELS_KERN_OMP_H
#define SL_KERNELS_KERN_OMP_H

#ifdef _OPENMP
#include <omp.h>
#endif
#include <speedlab/prof.h>

static inline int kern_tid(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static inline int kern_nthreads(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

/* `KERN_SHARE { ... }`: the block is this thread's share (do not break or return out of it). */
#define KERN_SHARE PROF_THREAD_REGION(kern_tid())

#endif
