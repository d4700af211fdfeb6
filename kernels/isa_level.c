/* kernels/isa_level.c: the level this copy of the kernels was compiled for (kernels/isa.h). Compiled with
 * the kernels' flags, so in a dispatch build each level's copy answers for itself. */
#include "isa.h"
#include "simd.h"

const char *kern_isa(void) { return SIMD_ISA; }
int kern_isa_vector_bytes(void) { return SIMD_BYTES; }

int kern_isa_avx512bf16(void)
{
#if defined(__AVX512BF16__) && defined(__AVX512BW__)
    return 1; /* kernels/precision/bf16dp.c's dot products are compiled in on the same condition */
#else
    return 0;
#endif
}
