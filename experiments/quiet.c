/* quiet.c: the machine's state that makes timings noisy, as Google Benchmark warns of CPU scaling:
 * a frequency governor other than `performance`, turbo (boost) on, SMT siblings sharing a core, and
 * other processes running on the CPUs when the run starts. Each is recorded in env.quiet and warned
 * of once; none stops the run. docs/quiet-machine.md says how to quiet each. */
#include "quiet.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *root(void)
{
    const char *r = getenv("SPEEDLAB_SYSFS_ROOT");
    return r && *r ? r : "";
}

/* The first line of ROOT/path into out, trimmed; 0 ok, -1 absent or unreadable. */
static int read_line(const char *path, char *out, size_t n)
{
    char full[4096];
    snprintf(full, sizeof full, "%s%s", root(), path);
    FILE *f = fopen(full, "r");
    if (!f)
        return -1;
    int ok = fgets(out, (int)n, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    out[strcspn(out, "\r\n")] = '\0';
    return 0;
}

/* The governors of every CPU that has one: "performance", or the first other one found (and how many
 * CPUs have it). Absent where cpufreq is not exposed (most VMs). */
static int governors(char *other, size_t n, int *n_cpus, int *n_other)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/sys/devices/system/cpu", root());
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    *n_cpus = *n_other = 0;
    other[0] = '\0';
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "cpu", 3) != 0 || e->d_name[3] < '0' || e->d_name[3] > '9')
            continue;
        char path[600], gov[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/%s/cpufreq/scaling_governor", e->d_name);
        if (read_line(path, gov, sizeof gov) != 0)
            continue;
        (*n_cpus)++;
        if (strcmp(gov, "performance") != 0) {
            (*n_other)++;
            if (!other[0])
                snprintf(other, n, "%s", gov);
        }
    }
    closedir(d);
    return *n_cpus > 0 ? 0 : -1;
}

/* 1 turbo on, 0 off, -1 unknown: intel_pstate's no_turbo, else cpufreq's boost (acpi-cpufreq, amd). */
static int turbo(void)
{
    char v[16];
    if (read_line("/sys/devices/system/cpu/intel_pstate/no_turbo", v, sizeof v) == 0)
        return strcmp(v, "0") == 0;
    if (read_line("/sys/devices/system/cpu/cpufreq/boost", v, sizeof v) == 0)
        return strcmp(v, "1") == 0;
    return -1;
}

/* How many other tasks are runnable now: /proc/loadavg's fourth field counts the runnable ones, this
 * process among them. The median of five readings 20 ms apart, so that one short-lived task is not
 * counted; the load averages lag by a minute (the main job's previous run would still show). */
static int others_running(void)
{
    int v[5], n = 0;
    for (int i = 0; i < 5; i++) {
        char buf[256];
        double a, b, c;
        int run, total;
        if (i)
            nanosleep(&(struct timespec){.tv_nsec = 20 * 1000 * 1000}, NULL);
        if (read_line("/proc/loadavg", buf, sizeof buf) == 0 &&
            sscanf(buf, "%lf %lf %lf %d/%d", &a, &b, &c, &run, &total) == 5 && run >= 1)
            v[n++] = run - 1;
    }
    if (n == 0)
        return -1;
    for (int i = 1; i < n; i++) /* insertion sort: five values */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            int t = v[j]; v[j] = v[j - 1]; v[j - 1] = t;
        }
    return v[n / 2];
}

static void warn_of(json_t *warnings, FILE *out, const char *msg)
{
    json_array_append_new(warnings, json_string(msg));
    if (out)
        fprintf(out, "speedlab: warning: %s\n", msg);
}

int sl_quiet_check(json_t *env, int threads, FILE *out)
{
    json_t *q = json_object(), *warnings = json_array();
    char buf[256], msg[512];
    int n_cpus, n_other;
    if (governors(buf, sizeof buf, &n_cpus, &n_other) == 0) {
        json_object_set_new(q, "governor", json_string(n_other ? buf : "performance"));
        if (n_other) {
            snprintf(msg, sizeof msg, "CPU frequency scaling: governor '%s' on %d of %d CPUs; times will vary "
                     "with the clock (as root: cpupower frequency-set -g performance)", buf, n_other, n_cpus);
            warn_of(warnings, out, msg);
        }
    }
    int t = turbo();
    if (t >= 0) {
        json_object_set_new(q, "turbo", json_boolean(t));
        if (t)
            warn_of(warnings, out, "turbo (boost) is on: the clock depends on temperature and on how many "
                    "cores are busy, so a threaded variant runs at another clock than a serial one");
    }
    if (read_line("/sys/devices/system/cpu/smt/active", buf, sizeof buf) == 0) {
        int smt = strcmp(buf, "1") == 0;
        json_object_set_new(q, "smt", json_boolean(smt));
        if (smt && threads > 1)
            warn_of(warnings, out, "SMT is on: two threads of one core share its units, so a threaded "
                    "variant's speed-up depends on where its threads land (pin them: OMP_PROC_BIND=close "
                    "OMP_PLACES=cores)");
    }
    int others = others_running();
    if (others >= 0) {
        json_object_set_new(q, "others_running", json_integer(others));
        if (others > 0) {
            snprintf(msg, sizeof msg, "%d other process%s running on the CPUs as the run starts, so times "
                     "are upper bounds (stop %s, or compare only within one run)", others,
                     others > 1 ? "es were" : " was", others > 1 ? "them" : "it");
            warn_of(warnings, out, msg);
        }
    }
    int n = (int)json_array_size(warnings);
    json_object_set_new(q, "warnings", warnings);
    json_object_set_new(env, "quiet", q);
    return n;
}
