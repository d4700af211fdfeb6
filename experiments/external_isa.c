/*
 * external_isa.c: the framework baselines at the kernels' instruction-set level (docs/baselines.md,
 * "Instruction-set level").
 *
 * When the kernels are held at a level (SPEEDLAB_ISA honoured, at any level, or the kernels built for a
 * level below this CPU's best), the baseline program is started with the variables that hold each
 * framework at the same level: ATen's dispatch, oneDNN's JIT, OpenBLAS's kernels, NumPy's dispatched
 * loops, Numba's and XLA's code generation. A variable the user set is kept as it is (and recorded as theirs).
 * The program says what each framework runs at (baselines/isa.py) in its first report; the record keeps
 * it as external.isa, with a `mismatch` line when a framework runs above the level asked for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "external.h"
#include "isa.h"

/* The levels, in kern_isa()'s names, from lowest to highest: a framework's report uses the same
 * names ("avx512+": instructions beyond x86-64-v4, such as AVX512-VNNI or AMX). */
static const char *const ranks[] = {"generic", "sse2", "sse4.2", "avx", "avx2", "avx512", "avx512+"};

int sl_external_isa_rank(const char *isa)
{
    for (int i = 0; isa && i < (int)(sizeof ranks / sizeof *ranks); i++)
        if (strcmp(isa, ranks[i]) == 0)
            return i;
    return -1;
}

/* What each level sets. NumPy's list: the dispatched features above the level, in NumPy 1.x's names and
 * NumPy 2.4's groups (X86_V3, X86_V4); a NumPy warns about a name it does not dispatch, so only those
 * this CPU has are named (NumPy refuses a baseline feature, and none of these is one). */
static const struct level_map {
    const char *isa, *x86, *aten, *onednn, *openblas, *xla;
    const char *numba; /* an LLVM CPU whose own features are the level's (known to old LLVMs too) */
    int numpy_from; /* the first entry of numpy_features above this level */
} levels[] = {
    {"sse4.2", "v2", "default", "SSE41", "Nehalem", "SSE4_2", "nehalem", 0},
    {"avx", NULL, "default", "AVX", "Sandybridge", "AVX", "sandybridge", 1},
    {"avx2", "v3", "avx2", "AVX2", "Haswell", "AVX2", "haswell", 5},
    {"avx512", "v4", "avx512", "AVX512_CORE", "SkylakeX", "AVX512", "skylake-avx512", 9},
};

/* NumPy's dispatched x86 features from AVX up, each with the CPU flag (/proc/cpuinfo's name)
 * that tells whether this CPU has it, in the order of the levels above. */
static const char *const numpy_features[][2] = {
    {"AVX", "avx"},           {"F16C", "avx"},  {"FMA3", "fma"},          {"AVX2", "avx2"},
    {"X86_V3", "avx2"},       {"AVX512F", "avx512f"}, {"AVX512CD", "avx512cd"}, {"X86_V4", "avx512bw"},
    {"AVX512_SKX", "avx512bw"}, {"AVX512_KNL", "avx512er"}, {"AVX512_KNM", "avx512_4fmaps"},
    {"AVX512_CLX", "avx512_vnni"}, {"AVX512_CNL", "avx512vbmi"}, {"AVX512_ICL", "avx512_vbmi2"},
    {"AVX512_SPR", "avx512_fp16"},
};

int sl_external_isa_cpu_has(const char *feature)
{
    static char flags[8192];
    static int read_once;
    if (!read_once) { /* the kernel's names; /proc/cpuinfo's first "flags" line */
        read_once = 1;
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[8192];
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "flags", 5) == 0 && strchr(line, ':')) {
                snprintf(flags, sizeof flags, " %s", strchr(line, ':') + 1);
                flags[strcspn(flags, "\n")] = ' ';
                break;
            }
        if (f)
            fclose(f);
    }
    if (!flags[0])
        return 1; /* unknown: name every feature (NumPy warns about those this CPU lacks) */
    char word[64];
    snprintf(word, sizeof word, " %s ", feature);
    return strstr(flags, word) != NULL;
}

/* This CPU's best level in kern_isa()'s names (the dispatcher's rule, kernels/isa.c). */
static const char *cpu_isa(void)
{
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return "avx512";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
        return "avx2";
    if (__builtin_cpu_supports("avx"))
        return "avx";
    if (__builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt"))
        return "sse4.2";
    return "sse2";
#else
    return NULL;
#endif
}

const char *sl_external_isa_target(void)
{
    const char *isa = kern_isa();
    int mapped = 0;
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
        mapped |= strcmp(levels[i].isa, isa) == 0;
    if (!mapped)
        return NULL;
    if (kern_isa_forced() || sl_external_isa_rank(isa) < sl_external_isa_rank(cpu_isa()))
        return isa;
    return NULL;
}

static void set_var(sl_isa_var *v, const char *name, const char *value)
{
    const char *own = getenv(name);
    v->name = name;
    v->user = own != NULL;
    snprintf(v->value, sizeof v->value, "%s", own ? own : value);
}

int sl_external_isa_vars(const char *isa, int (*cpu_has)(const char *), sl_isa_var *v)
{
    const struct level_map *m = NULL;
    for (size_t i = 0; isa && i < sizeof levels / sizeof *levels; i++)
        if (strcmp(levels[i].isa, isa) == 0)
            m = &levels[i];
    if (!m)
        return 0;
    int n = 0;
    set_var(&v[n++], "ATEN_CPU_CAPABILITY", m->aten);
    set_var(&v[n++], "ONEDNN_MAX_CPU_ISA", m->onednn);
    set_var(&v[n++], "DNNL_MAX_CPU_ISA", m->onednn);
    set_var(&v[n++], "OPENBLAS_CORETYPE", m->openblas);
    /* Numba compiles for NUMBA_CPU_NAME with NUMBA_CPU_FEATURES; empty features: the CPU's own (unset,
     * it would take this CPU's, AVX-512 included) */
    set_var(&v[n++], "NUMBA_CPU_NAME", m->numba);
    set_var(&v[n++], "NUMBA_CPU_FEATURES", "");
    char list[320] = "";
    for (size_t i = (size_t)m->numpy_from; i < sizeof numpy_features / sizeof *numpy_features; i++)
        if (!cpu_has || cpu_has(numpy_features[i][1]))
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? " " : "",
                     numpy_features[i][0]);
    if (list[0]) /* nothing above the level on this CPU: NumPy needs no list */
        set_var(&v[n++], "NPY_DISABLE_CPU_FEATURES", list);
    /* XLA_FLAGS holds other flags too: the level's flag is appended, unless it names one already */
    const char *xla = getenv("XLA_FLAGS");
    v[n].name = "XLA_FLAGS";
    v[n].user = xla && strstr(xla, "--xla_cpu_max_isa") != NULL;
    if (v[n].user)
        snprintf(v[n].value, sizeof v[n].value, "%s", xla);
    else
        snprintf(v[n].value, sizeof v[n].value, "%s%s--xla_cpu_max_isa=%s", xla ? xla : "",
                 xla && *xla ? " " : "", m->xla);
    n++;
    return n;
}

/* Whether the environ entry `e` ("NAME=value") is one of v's that speedlab sets. */
static int replaced(const char *e, const sl_isa_var *v, int n)
{
    for (int i = 0; i < n; i++) {
        size_t len = strlen(v[i].name);
        if (!v[i].user && strncmp(e, v[i].name, len) == 0 && e[len] == '=')
            return 1;
    }
    return 0;
}

char **sl_external_env_with(char *const *base, const sl_isa_var *v, int n)
{
    size_t nb = 0, k = 0;
    while (base && base[nb])
        nb++;
    char **env = calloc(nb + (size_t)n + 1, sizeof *env);
    if (!env)
        return NULL;
    for (size_t i = 0; i < nb; i++)
        if (!replaced(base[i], v, n) && !(env[k++] = strdup(base[i])))
            goto oom;
    for (int i = 0; i < n; i++) {
        if (v[i].user)
            continue;
        size_t len = strlen(v[i].name) + strlen(v[i].value) + 2;
        if (!(env[k] = malloc(len)))
            goto oom;
        snprintf(env[k++], len, "%s=%s", v[i].name, v[i].value);
    }
    return env;
oom:
    sl_external_env_free(env);
    return NULL;
}

extern char **environ;

char **sl_external_env(void)
{
    sl_isa_var v[SL_ISA_VARS];
    int n = sl_external_isa_vars(sl_external_isa_target(), sl_external_isa_cpu_has, v);
    return sl_external_env_with(environ, v, n);
}

void sl_external_env_free(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

/* "OpenBLAS SkylakeX (avx512)": one framework's report, for the mismatch line. */
static void describe(char *out, size_t n, const char *fw, const json_t *r)
{
    static const char *const what[] = {"corename", "capability", "cpu_name", "max_isa"};
    const char *detail = NULL;
    for (size_t i = 0; !detail && i < sizeof what / sizeof *what; i++)
        detail = json_string_value(json_object_get(r, what[i]));
    const char *isa = json_string_value(json_object_get(r, "isa"));
    if (detail)
        snprintf(out, n, "%s %s (%s)", fw, detail, isa);
    else
        snprintf(out, n, "%s at %s", fw, isa);
}

void sl_external_isa_check(json_t *isa, const char *requested)
{
    char line[1024] = "", one[256];
    int want = sl_external_isa_rank(requested);
    json_t *checked = json_array();
    const char *fw;
    json_t *r;
    json_object_foreach(isa, fw, r) {
        int got = sl_external_isa_rank(json_string_value(json_object_get(r, "isa")));
        if (!json_is_object(r) || got < 0)
            continue;
        json_array_append_new(checked, json_string(fw));
        if (got <= want)
            continue;
        describe(one, sizeof one, fw, r);
        snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", line[0] ? "; " : "", one);
    }
    json_object_set_new(isa, "checked", checked);
    if (line[0]) {
        char msg[1200];
        snprintf(msg, sizeof msg, "above the kernels' %s: %s", requested, line);
        json_object_set_new(isa, "mismatch", json_string(msg));
    }
}

void sl_external_isa_record(json_t *e, const json_t *first)
{
    const char *target = sl_external_isa_target();
    json_t *reported = first ? json_object_get(first, "isa") : NULL;
    if (!target && !json_is_object(reported))
        return;
    json_t *isa = json_is_object(reported) ? json_deep_copy(reported) : json_object();
    if (target) {
        sl_isa_var v[SL_ISA_VARS];
        int n = sl_external_isa_vars(target, sl_external_isa_cpu_has, v);
        json_t *set = json_object(), *user = json_object();
        for (int i = 0; i < n; i++)
            json_object_set_new(v[i].user ? user : set, v[i].name, json_string(v[i].value));
        json_object_set_new(isa, "requested", json_string(target));
        for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
            if (strcmp(levels[i].isa, target) == 0 && levels[i].x86)
                json_object_set_new(isa, "level", json_string(levels[i].x86));
        json_object_set_new(isa, "set", set);
        if (json_object_size(user))
            json_object_set_new(isa, "user", user);
        else
            json_decref(user);
        if (json_is_object(reported))
            sl_external_isa_check(isa, target);
    }
    json_object_set_new(e, "isa", isa);
}
