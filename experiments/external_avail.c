/*
 * external_avail.c: where the framework baselines' interpreter and programs are, and whether the
 * interpreter has a baseline's modules (external.h; docs/baselines.md, "Availability and installation").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

const char *sl_external_dir(void)
{
    const char *env = getenv("SPEEDLAB_BASELINES");
    return env && *env ? env : SL_SOURCE_ROOT "/baselines";
}

/* ---- availability ------------------------------------------------------------------------------ */

/* Runs `python -c code` with no input or output; its exit status, or -1 when it could not start. */
static int python_ok(const char *code)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        execlp(sl_external_python(), sl_external_python(), "-c", code, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int sl_external_available(const char *module, char *why, size_t n)
{
    /* an import of torch takes a second or two: once per interpreter and module */
    static char keys[16][4200];
    static int results[16], n_cached;
    char key[4200];
    snprintf(key, sizeof key, "%s %s", sl_external_python(), module);
    int ok = -1;
    for (int i = 0; i < n_cached && ok < 0; i++)
        if (strcmp(keys[i], key) == 0)
            ok = results[i];
    if (ok < 0) {
        char code[256];
        snprintf(code, sizeof code, "import numpy, %s", module);
        for (char *c = code; *c; c++) /* "numpy+scipy": the form needs both */
            *c = *c == '+' ? ',' : *c;
        ok = strspn(module, "abcdefghijklmnopqrstuvwxyz0123456789_.+") == strlen(module) &&
             python_ok(code) == 0;
        if (n_cached < 16) {
            snprintf(keys[n_cached], sizeof keys[0], "%s", key);
            results[n_cached++] = ok;
        }
    }
    if (!ok)
        snprintf(why, n, "python:%s: %s cannot import %s%s; install the baselines with `sh scripts/setup.sh "
                 "build --baselines` (or set SPEEDLAB_PYTHON to an interpreter that has them)", module,
                 sl_external_python(), strcmp(module, "numpy") ? "numpy and " : "", module);
    return ok;
}
