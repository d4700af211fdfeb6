/* avail.h: which variants can run here (avail.c). */
#ifndef SL_AVAIL_H
#define SL_AVAIL_H

#include <stddef.h>

#include "study.h"

/* 1 when variant v can run here; otherwise 0 and the reason ("cuda: no CUDA device"). */
int sl_variant_available(const sl_variant *v, char *why, size_t n);
int sl_online_cpus(void);
/* The "avx512bf16" requirement's logic, apart from the machine so that tests can give it every case:
 * cpu_has (the CPU has AVX512_BF16), kernels_have (the kernels that run were compiled with it:
 * kern_isa_avx512bf16), isa (the level they run at, kern_isa()). 1, or 0 with the reason. */
int sl_avx512bf16_available(int cpu_has, int kernels_have, const char *isa, char *why, size_t n);

#endif
