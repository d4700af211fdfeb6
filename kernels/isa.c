/*
 * kernels/isa.c: SPEEDLAB_ISA and the build mode (kernels/isa.h). In a dispatch build it also chooses the
 * level: kern_isa_install(), called by the generated table's constructor (scripts/isa_dispatch.py),
 * fills the trampolines' slots. In a dispatch build it is compiled without a kernel level's -march, so
 * it runs on any x86-64; in a native build it takes the kernels' flags (its check reads their macros).
 */
#include "isa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sl_config.h"

static char isa_error[320];
static const char *isa_forced;

const char *kern_isa_mode(void) { return SL_ISA_DISPATCH ? "dispatch" : "native"; }
const char *kern_isa_march(void) { return SL_KERNEL_MARCH; }
const char *kern_isa_forced(void) { return isa_forced; }
const char *kern_isa_error(void) { return isa_error[0] ? isa_error : NULL; }

/* The x86-64 level (2, 3, 4) that SPEEDLAB_ISA names, 0 when it names none. */
static int level_named(const char *s)
{
    static const struct { const char *name; int level; } names[] = {
        {"v2", 2}, {"x86-64-v2", 2}, {"sse4.2", 2}, {"v3", 3}, {"x86-64-v3", 3}, {"avx2", 3},
        {"v4", 4}, {"x86-64-v4", 4}, {"avx512", 4}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) return names[i].level;
    return 0;
}

#if SL_ISA_DISPATCH
/* The best level this CPU supports, by the features that decide it (the level names of
 * __builtin_cpu_supports need GCC 12; these work with older compilers too). */
static int cpu_level(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return 4;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
        return 3;
    if (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt"))
        return 2;
    return 1;
}

static int isa_default, isa_now; /* levels 2..4, set by kern_isa_install */
static void (**isa_slot)(void);
static void (*const *const *isa_tables)(void);
static int isa_n, isa_cpu;

int kern_isa_level(void) { return isa_now; }
int kern_isa_default_level(void) { return isa_default; }
int kern_isa_has_level(int level)
{
    return isa_forced ? level == isa_default : level >= 2 && level <= isa_cpu;
}

int kern_isa_select(int level)
{
    if (!kern_isa_has_level(level) || !isa_slot)
        return -1;
    for (int i = 0; i < isa_n; i++)
        isa_slot[i] = isa_tables[level - 2][i];
    isa_now = level;
    return 0;
}

void kern_isa_install(void (**slot)(void), void (*const *const tables[3])(void), int n);
void kern_isa_install(void (**slot)(void), void (*const *const tables[3])(void), int n)
{
    int cpu = cpu_level(), level = cpu;
    const char *want = getenv("SPEEDLAB_ISA");
    if (cpu < 2) { /* nothing built runs here: say so before the first kernel would fault */
        fprintf(stderr, "speedlab kernels: this CPU is below x86-64-v2 (SSE4.2, POPCNT); the dispatch "
                "build's lowest level is v2: build with -Disa=native on this machine\n");
        exit(1);
    }
    if (want && *want) {
        int w = level_named(want);
        if (w == 0)
            snprintf(isa_error, sizeof isa_error, "SPEEDLAB_ISA=%s: not a level; use v2, v3 or v4 "
                     "(sse4.2, avx2, avx512), or unset it for the best this CPU has (v%d)", want, cpu);
        else if (w > cpu)
            snprintf(isa_error, sizeof isa_error, "SPEEDLAB_ISA=%s: this CPU supports x86-64-v%d at "
                     "most; use v%d or lower, or unset it", want, cpu, cpu);
        else {
            level = w;
            isa_forced = want;
        }
    }
    isa_slot = slot;
    isa_tables = tables; /* the generated table's constructor keeps them static */
    isa_n = n;
    isa_cpu = cpu;
    isa_default = level;
    kern_isa_select(level);
}
#else
/* The one level built, by the name simd.h gives its widest vectors. */
static int built_level(void)
{
    const char *isa = kern_isa();
    return !strcmp(isa, "avx512") ? 4 : !strcmp(isa, "avx2") ? 3 : !strcmp(isa, "sse4.2") ? 2 : 0;
}
int kern_isa_level(void) { return built_level(); }
int kern_isa_default_level(void) { return built_level(); }
int kern_isa_has_level(int level) { return level != 0 && level == built_level(); }
int kern_isa_select(int level) { return kern_isa_has_level(level) ? 0 : -1; }

/* A native build honours SPEEDLAB_ISA only when it names the one level built (kern_isa(): the names
 * simd.h gives by the target's widest vectors). */
__attribute__((constructor)) static void kern_isa_check(void)
{
    static const char *const names[] = {"", "", "sse4.2", "avx2", "avx512"};
    const char *want = getenv("SPEEDLAB_ISA");
    if (!want || !*want) return;
    int w = level_named(want);
    if (w && strcmp(names[w], kern_isa()) == 0)
        isa_forced = want;
    else if (!w)
        snprintf(isa_error, sizeof isa_error, "SPEEDLAB_ISA=%s: not a level; use v2, v3 or v4 (sse4.2, "
                 "avx2, avx512), and only the one this build has (%s), or unset it", want, kern_isa());
    else
        snprintf(isa_error, sizeof isa_error, "SPEEDLAB_ISA=%s: this build (-Disa=native, -march=%s) "
                 "has only the %s kernels; unset it, or configure a build that has every level: meson "
                 "setup build-dispatch -Disa=dispatch", want, SL_KERNEL_MARCH, kern_isa());
}
#endif
