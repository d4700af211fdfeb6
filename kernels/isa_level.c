/* kernels/isa_level.c: the level this copy of the kernels was compiled for (kernels/isa.h). Compiled with
 * the kernels' flags, so in a dispatch build each level's copy answers for itself. */
#include "isa.h"
#include "simd.h"
#include "sl_config.h"

const char *kern_isa(void) { return SIMD_ISA; }
int kern_isa_vector_bytes(void) { return SIMD_BYTES; }

int kern_isa_avx512bf16(void) { return KERN_CAN_AVX512BF16; } /* bf16dp.c's dot products: the same test */

/* The flags of this copy (sl_config.h, meson.build): a dispatch build's levels are told apart by what
 * their -march=x86-64-vN defines (v4: AVX-512F, v3: AVX2, v2: neither). */
const char *kern_isa_cflags(void)
{
#if SL_ISA_DISPATCH
#if defined(__AVX512F__)
    return SL_KERNEL_CFLAGS_V4;
#elif defined(__AVX2__)
    return SL_KERNEL_CFLAGS_V3;
#else
    return SL_KERNEL_CFLAGS_V2;
#endif
#else
    return SL_KERNEL_CFLAGS;
#endif
}
