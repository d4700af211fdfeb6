/*
 * env.c: the `env` object of every record (docs/results-schema.md): where and with what the run happened.
 * Fields that cannot be found are left out, never filled with a guess.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "isa.h"
#include "record.h"
#include "avail.h"
#include "commit.h"
#include "env.h"
#include "gpu.h"
#include "sl_config.h"

#if SL_HAVE_PAPI
#include <papi.h>
#endif
#if SL_HAVE_OPENBLAS
extern char *openblas_get_config(void);
#endif
#if SL_HAVE_ONEDNN
#include "kern_onednn.h"
#endif

int sl_proc_field(const char *file, const char *key, char *out, size_t n)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -1;
    char *line = NULL; /* getline: a flags line is longer than any fixed buffer on a big CPU */
    size_t cap = 0;
    int rc = -1;
    size_t klen = strlen(key);
    while (getline(&line, &cap, f) > 0) {
        char *v = line + klen + strspn(line + klen, " \t"); /* "model" must not match "model name" */
        if (strncmp(line, key, klen) != 0 || *v != ':')
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        v[strcspn(v, "\n")] = '\0';
        snprintf(out, n, "%s", v);
        rc = 0;
        break;
    }
    free(line);
    fclose(f);
    return rc;
}

double sl_mem_available(void)
{
    char v[128];
    if (sl_proc_field("/proc/meminfo", "MemAvailable", v, sizeof v) != 0)
        return -1;
    return strtod(v, NULL) * 1024.0; /* the kernel writes kB, meaning KiB */
}

static void set_str(json_t *o, const char *key, const char *v)
{
    if (v && *v)
        json_object_set_new(o, key, json_string(v));
}

/* The commit the binary was built from (commit.h: captured at build time, so no git is needed here):
 * always a `commit`, "unknown" with the reason when the build had no source of it. */
static void commit_env(json_t *env)
{
    const sl_commit_info *c = &sl_commit_built;
    json_object_set_new(env, "commit", json_string(c->hash && *c->hash ? c->hash : "unknown"));
    if (c->dirty >= 0)
        json_object_set_new(env, "commit_dirty", json_boolean(c->dirty));
    set_str(env, "commit_source", c->source);
    set_str(env, "commit_note", c->note);
    set_str(env, "git_describe", c->describe);
}

/* The CPU feature flags that decide which kernels can run and how fast, in this order, from
 * /proc/cpuinfo's flags line (lscpu's names); none found: "" (the field is then left out). */
static void cpu_flags(char *out, size_t n)
{
    /* the kernel's name in /proc/cpuinfo, and the name the record uses (GCC's) */
    static const char *const wanted[][2] = {{"avx2", "avx2"}, {"fma", "fma"}, {"avx512f", "avx512f"},
                                            {"avx512_bf16", "avx512bf16"}, {"f16c", "f16c"}};
    char flags[8192];
    out[0] = '\0';
    if (sl_proc_field("/proc/cpuinfo", "flags", flags, sizeof flags) != 0)
        return;
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        const char *p = flags;
        size_t len = strlen(wanted[i][0]);
        while ((p = strstr(p, wanted[i][0])) != NULL) {
            if ((p == flags || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
                break;
            p += len;
        }
        if (p)
            snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? " " : "", wanted[i][1]);
    }
}

/* The kernels' instruction-set level and how it was chosen (kernels/isa.h). */
static void isa_env(json_t *env)
{
    char buf[256];
    set_str(env, "isa", kern_isa());
    set_str(env, "isa_mode", kern_isa_mode());
    set_str(env, "isa_march", kern_isa_march());
    set_str(env, "isa_forced", kern_isa_forced());
    cpu_flags(buf, sizeof buf);
    set_str(env, "cpu_flags", buf);
}

/* Where a Slurm job ran, as ReFrame and Adiak record it: only the variables Slurm set, so a
 * run outside Slurm has none of these fields. The merged report groups by machine (host, CPU, ISA). */
static void slurm_env(json_t *env)
{
    static const char *const vars[][2] = {
        {"SLURM_JOB_ID", "slurm_job_id"}, {"SLURM_ARRAY_JOB_ID", "slurm_array_job_id"},
        {"SLURM_ARRAY_TASK_ID", "slurm_array_task_id"}, {"SLURMD_NODENAME", "slurm_node"},
        {"SLURM_JOB_PARTITION", "slurm_partition"}};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        set_str(env, vars[i][1], getenv(vars[i][0]));
}

json_t *sl_env_capture(int threads)
{
    json_t *env = json_object();
    char buf[1024];

    if (gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        set_str(env, "host", buf);
    }
    if (sl_proc_field("/proc/cpuinfo", "model name", buf, sizeof buf) == 0)
        set_str(env, "cpu_model", buf);
    json_object_set_new(env, "cpu_cores", json_integer(sl_online_cpus()));
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(buf, sizeof buf, "%s %s %s", u.sysname, u.release, u.machine);
        set_str(env, "os", buf);
    }
    isa_env(env);
    set_str(env, "compiler", SL_C_COMPILER);
    set_str(env, "cflags", kern_isa_cflags()); /* the kernels' flags, at the level that runs */
    commit_env(env);
    set_str(env, "speedlab_version", SL_VERSION);
    json_object_set_new(env, "threads", json_integer(threads));
#if SL_HAVE_PAPI
    snprintf(buf, sizeof buf, "%d.%d.%d.%d", PAPI_VERSION_MAJOR(PAPI_VER_CURRENT),
             PAPI_VERSION_MINOR(PAPI_VER_CURRENT), PAPI_VERSION_REVISION(PAPI_VER_CURRENT),
             PAPI_VERSION_INCREMENT(PAPI_VER_CURRENT));
    set_str(env, "papi_version", buf);
#endif
#if SL_HAVE_OPENBLAS
    set_str(env, "blas", openblas_get_config());
#elif SL_HAVE_BLAS
    set_str(env, "blas", "CBLAS");
#endif
#if SL_HAVE_ONEDNN /* the library's version and the ISA its JIT chose on this CPU */
    kern_onednn_version(buf, (int)sizeof buf);
    set_str(env, "onednn", buf);
    set_str(env, "onednn_isa", kern_onednn_isa());
#endif
    sl_gpu_env(env);
    slurm_env(env);
    sl_iso_time(buf, sizeof buf);
    set_str(env, "date", buf);
    return env;
}
