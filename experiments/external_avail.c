/*
 * external_avail.c: where the framework baselines' interpreter and programs are, and whether the
 * interpreter has a baseline's modules (external.h; docs/baselines.md, "Availability and installation").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "external.h"
#include "sl_config.h"

static int executable(const char *path)
{
    return access(path, X_OK) == 0;
}

const char *sl_external_python(void)
{
    static char venv[4200];
    const char *env = getenv("SPEEDLAB_PYTHON");
    if (env && *env)
        return env;
    snprintf(venv, sizeof venv, "%s/.venv-baselines/bin/python3", SL_SOURCE_ROOT);
    if (executable(venv))
        return venv;
    /* Debian's numpy, scipy and torch are installed for the system interpreter, not for another python3
     * earlier on PATH (pyenv's, say) */
    return executable("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
}

double sl_external_timeout_s(void)
{
    const char *e = getenv("SPEEDLAB_BASELINE_TIMEOUT");
    double t = e ? atof(e) : 0;
    return t > 0 ? t : 1800.0;
}

const char *sl_external_dir(void)
{
    const char *env = getenv("SPEEDLAB_BASELINES");
    return env && *env ? env : SL_SOURCE_ROOT "/baselines";
}

/* ---- availability ------------------------------------------------------------------------------ */

/* The import probe's limit: importing torch takes a second or two, a slow file system tens; a smaller
 * SPEEDLAB_BASELINE_TIMEOUT lowers it. An interpreter that hangs (a wrapper script waiting for input, a
 * broken network mount) is given up on once, for every module after it. */
#define PROBE_TIMEOUT_S 60
static char python_hung[4200]; /* the interpreter whose probe timed out, or "" */

static int probe_timeout_ms(void)
{
    double t = sl_external_timeout_s();
    return (int)(1000 * (t < PROBE_TIMEOUT_S ? t : PROBE_TIMEOUT_S));
}

/* Runs `python -c code` with no input or output, in a process group of its own, in the baseline
 * program's environment (held: the frameworks at the kernels' level, as the program runs) or in this
 * process's; its exit status, -1 when it could not start, -2 when it ran past PROBE_TIMEOUT_S (then it
 * and its children are killed). */
static int python_ok(const char *code, int held)
{
    const char *python = sl_external_python();
    if (!strcmp(python_hung, python))
        return -2;
    char **env = held ? sl_external_env() : sl_external_env_with(environ, NULL, 0);
    char *const argv[] = {(char *)python, "-c", (char *)code, NULL};
    pid_t pid = env ? fork() : -1;
    if (pid < 0) {
        sl_external_env_free(env);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0);
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        execvpe(python, argv, env);
        _exit(127);
    }
    sl_external_env_free(env);
    setpgid(pid, pid); /* also here: no race with the child's own call */
    int st = 0;
    for (int ms = 0;; ms += 20) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR)
            return -1;
        if (ms >= probe_timeout_ms()) {
            kill(-pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            snprintf(python_hung, sizeof python_hung, "%s", python);
            return -2;
        }
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A GPU row's device check ("torch@cuda", "torch+scipy@cuda": the framework, the first module, and the
 * device): the Python that asserts the framework sees the device, or NULL for one this file does not know. */
static const char *device_check(const char *module)
{
    static const char *const checks[][2] = {
        {"torch@cuda", "assert torch.cuda.is_available(), 'torch.cuda.is_available() is False'"},
        {"jax@gpu", "assert jax.devices('gpu')"}, /* raises RuntimeError without a GPU backend */
    };
    char key[128];
    snprintf(key, sizeof key, "%.*s%s", (int)strcspn(module, "+@"), module, strchr(module, '@'));
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++)
        if (strcmp(key, checks[i][0]) == 0)
            return checks[i][1];
    return NULL;
}

/* "torch@cuda": the framework's device, unless SPEEDLAB_BASELINE_DEVICE=cpu runs GPU rows on the CPU. */
static int device_wanted(const char *module)
{
    const char *forced = getenv("SPEEDLAB_BASELINE_DEVICE");
    return strchr(module, '@') && !(forced && strcmp(forced, "cpu") == 0);
}

/* Whether the interpreter sees the device of a GPU row whose module imports; 1, or 0 with why. */
static int device_available(const char *module, char *why, size_t n)
{
    static char seen[8][4200]; /* importing torch takes seconds: once per interpreter and device */
    static int seen_ok[8], n_seen;
    char key[4200];
    snprintf(key, sizeof key, "%s %s", sl_external_python(), module);
    int ok = -1;
    for (int i = 0; i < n_seen && ok < 0; i++)
        if (strcmp(seen[i], key) == 0)
            ok = seen_ok[i];
    const char *check = device_check(module);
    size_t m = strcspn(module, "+@"); /* the framework */
    if (ok < 0) {
        char code[512];
        snprintf(code, sizeof code, "import %.*s\n%s", (int)m, module, check ? check : "raise SystemExit(1)");
        ok = check && python_ok(code, 1) == 0;
        if (n_seen < 8) {
            snprintf(seen[n_seen], sizeof seen[0], "%s", key);
            seen_ok[n_seen++] = ok;
        }
    }
    if (ok)
        return 1;
    snprintf(why, n, "python:%s: %s imports %.*s, which sees no %s device%s", module, sl_external_python(),
             (int)m, module, strchr(module, '@') + 1,
             check ? " (a CPU-only build of it, or no GPU here)" : ": unknown device (known: torch@cuda, jax@gpu)");
    return 0;
}

int sl_external_available(const char *module, char *why, size_t n)
{
    if (strchr(module, '@')) { /* a GPU row: the module first, then its device */
        char base[128];
        snprintf(base, sizeof base, "%.*s", (int)strcspn(module, "@"), module);
        if (!sl_external_available(base, why, n))
            return 0;
        return !device_wanted(module) || device_available(module, why, n);
    }
    /* an import of torch takes a second or two: once per interpreter and module */
    static char keys[16][4200];
    static int results[16], n_cached;
    char key[4200]; /* the interpreter, the module and the level the probe holds the frameworks at */
    const char *held = sl_external_isa_target();
    snprintf(key, sizeof key, "%s %s %s", sl_external_python(), module, held ? held : "-");
    int ok = 0, found = 0; /* ok: 1 importable, 0 not, -2 the probe timed out, -3 not at the level */
    for (int i = 0; i < n_cached && !found; i++)
        if (strcmp(keys[i], key) == 0)
            ok = results[i], found = 1;
    if (!found) {
        char code[256];
        snprintf(code, sizeof code, "import numpy, %s", module);
        for (char *c = code; *c; c++) /* "numpy+scipy": the form needs both */
            *c = *c == '+' ? ',' : *c;
        int valid = strspn(module, "abcdefghijklmnopqrstuvwxyz0123456789_.+") == strlen(module);
        int rc = valid ? python_ok(code, 1) : -1;
        ok = rc == 0 ? 1 : rc == -2 ? -2 : 0;
        /* at a held level, a framework may refuse its variables: importable without them says so */
        if (!ok && valid && sl_external_isa_target() && python_ok(code, 0) == 0)
            ok = -3;
        if (n_cached < 16) {
            snprintf(keys[n_cached], sizeof keys[0], "%s", key);
            results[n_cached++] = ok;
        }
    }
    if (ok == -2)
        snprintf(why, n, "python:%s: %s did not finish importing %s%s within %.0f s (killed); check that "
                 "SPEEDLAB_PYTHON runs a Python interpreter that exits", module, sl_external_python(),
                 strcmp(module, "numpy") ? "numpy and " : "", module, probe_timeout_ms() / 1000.0);
    else if (ok == -3)
        snprintf(why, n, "python:%s: %s imports %s%s, but not with the variables that hold the frameworks at "
                 "the kernels' level (%s; docs/baselines.md, \"Instruction-set level\"): run without "
                 "SPEEDLAB_ISA, or set the refused variable yourself (a value of yours is kept)", module,
                 sl_external_python(), strcmp(module, "numpy") ? "numpy and " : "", module,
                 sl_external_isa_target());
    else if (!ok)
        snprintf(why, n, "python:%s: %s cannot import %s%s; install the baselines with `sh scripts/setup.sh "
                 "build --baselines` (or set SPEEDLAB_PYTHON to an interpreter that has them)", module,
                 sl_external_python(), strcmp(module, "numpy") ? "numpy and " : "", module);
    return ok == 1;
}
