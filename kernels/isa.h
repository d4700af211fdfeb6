/*
 * kernels/isa.h: which instruction-set level the CPU kernels run at, and how they were built.
 *
 * Two build modes (meson -Disa=, docs/speedlab.md "ISA levels"):
 *   native    the kernels are compiled once, for the build machine (-march=native) or for the -march
 *             given in -Dc_args; they run at that level only.
 *   dispatch  every kernel file is compiled three times, for x86-64-v2 (SSE4.2), x86-64-v3 (AVX2 + FMA)
 *             and x86-64-v4 (AVX-512), and each copy's symbols renamed with its level (_v2, _v3, _v4);
 *             every kernel function is then a one-jump trampoline through a table that a constructor
 *             fills at start-up with the best level this CPU supports, or the one SPEEDLAB_ISA names.
 * SPEEDLAB_ISA: v2 | v3 | v4 (or sse4.2 | avx2 | avx512, or x86-64-vN) forces a level, so one AVX-512
 * machine can measure the AVX2 kernels too. A level the CPU lacks, a name not in that list, or (in a
 * native build) a level other than the one built is not honoured: kern_isa_error() says why, and the
 * speedlab command refuses to run.
 */
#ifndef SL_KERNELS_ISA_H
#define SL_KERNELS_ISA_H

#include <stddef.h>

/* The level the kernels run at, named by its widest vectors: "avx512", "avx2", "avx", "sse4.2",
 * "sse2", "neon" or "generic" (kernels/simd.h's SIMD_ISA of the copy that runs). */
const char *kern_isa(void);
/* The bytes of one kernels/simd.h vector at that level (64, 32, 16 or 8). */
int kern_isa_vector_bytes(void);
/* 1 when the copy that runs has AVX512_BF16 code (KERN_CAN_AVX512BF16 below), else 0: the "avx512bf16"
 * requirement (experiments/avail.c) needs it and the CPU's. */
int kern_isa_avx512bf16(void);
/* Whether a kernel file compiled with these flags can hold AVX512_BF16 code: its -march has it (a
 * native build on such a CPU), or it is an AVX-512BW copy (x86-64-v4, a dispatch build's v4) on which
 * GCC's target("avx512bf16") attribute adds it to one function. kernels/precision/bf16dp.c uses it; the
 * dispatcher never runs that copy on a CPU without the instructions, since the requirement asks the CPU. */
#if defined(__AVX512BF16__) || (defined(__AVX512BW__) && defined(__GNUC__) && __GNUC__ >= 10)
#define KERN_CAN_AVX512BF16 1
#else
#define KERN_CAN_AVX512BF16 0
#endif
/* "native" or "dispatch". */
const char *kern_isa_mode(void);
/* The -march the kernels were built with: "native", "x86-64-v3", ... or, in a dispatch build,
 * "x86-64-v2,x86-64-v3,x86-64-v4". */
const char *kern_isa_march(void);
/* The compiler flags the copy that runs was built with, as meson gave them (meson.build, "kernel_flags"):
 * e.g. "-DNDEBUG -O3 -fPIC -fopenmp -O3 -ffp-contract=fast -march=native"; in a dispatch build the
 * flags of the level that runs, ending in its -march=x86-64-vN. */
const char *kern_isa_cflags(void);
/* The level the kernels run at now, as an x86-64 level: 2 (v2, SSE4.2), 3 (v3, AVX2) or 4 (v4, AVX-512);
 * 0 in a native build for another target (ARM). */
int kern_isa_level(void);
/* The level chosen at start-up: the widest this CPU supports, or the one SPEEDLAB_ISA names. */
int kern_isa_default_level(void);
/* Whether the kernels can run at `level` here: a dispatch build, v2 up to the CPU's widest (only the
 * forced one when SPEEDLAB_ISA is set); a native build, the one level built. */
int kern_isa_has_level(int level);
/* Makes every kernel run at `level` from the next call on: the planner (experiments/planner.c) sets a
 * variant's chosen level before its case and the default after. Call it between kernel calls, never
 * while one runs on any thread. 0, or -1 (nothing changed) when kern_isa_has_level(level) is 0. */
int kern_isa_select(int level);
/* SPEEDLAB_ISA's value when it was set and honoured, else NULL. */
const char *kern_isa_forced(void);
/* NULL, or one line: why SPEEDLAB_ISA could not be honoured and what would be right. */
const char *kern_isa_error(void);

#endif
