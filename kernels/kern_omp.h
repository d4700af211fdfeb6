/*
 * kernels/kern_omp.h: the thread number and team size inside a parallel region, for the omp variants,
 * and what they are without OpenMP (the pragmas are then ignored and one thread does every part).
 */
#ifndef SL_KERNELS_KERN_OMP_H
#define SL_KERNELS_KERN_OMP_H

#ifdef _OPENMP
#include <omp.h>
#endif

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

#endif
