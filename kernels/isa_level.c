/* kernels/isa_level.c: the level this copy of the kernels was compiled for (kernels/isa.h). Compiled with
 * the kernels' flags, so in a dispatch build each level's copy answers for itself. */
#include "isa.h"
#include "simd.h"

const char *kern_isa(void) { return SIMD_ISA; }
int kern_isa_vector_bytes(void) { return SIMD_BYTES; }

int kern_isa_avx512bf16(void) { return KERN_CAN_AVX512BF16; } /* bf16dp.c's dot products: the same test */
