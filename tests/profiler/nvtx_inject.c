/*
 * A minimal NVTX tool for tests: loaded through NVTX_INJECTION64_PATH, it fills the CORE2 slots for
 * domain creation, string registration, push and pop, and logs each call as one line to the file
 * named by $PROF_NVTX_LOG:  "domain NAME", "string NAME", "push DOMAIN NAME COLOR", "pop DOMAIN".
 */
#define _POSIX_C_SOURCE 200809L /* strdup: without it, -std=c17 leaves strdup undeclared and truncates its pointer */
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_NAMES = 1024 };
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *domains[MAX_NAMES], *strings[MAX_NAMES];
static int ndomains, nstrings;
static FILE *log_file;

static const char *lookup(char **tab, int n, const void *h)
{
    intptr_t i = (intptr_t)h - 1;
    return i >= 0 && i < n ? tab[i] : "?";
}

static void logline(const char *fmt, const char *a, const char *b, uint32_t c, int with_color)
{
    if (!log_file)
        return;
    if (with_color)
        fprintf(log_file, fmt, a, b, c);
    else
        fprintf(log_file, fmt, a, b);
    fflush(log_file);
}

static nvtxDomainHandle_t NVTX_API my_domain_create(const char *name)
{
    pthread_mutex_lock(&lock);
    intptr_t h = 0;
    if (ndomains < MAX_NAMES) {
        domains[ndomains++] = strdup(name);
        h = ndomains;
        logline("domain %s%s\n", name, "", 0, 0);
    }
    pthread_mutex_unlock(&lock);
    return (nvtxDomainHandle_t)h;
}

static nvtxStringHandle_t NVTX_API my_register(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    pthread_mutex_lock(&lock);
    intptr_t h = 0;
    if (nstrings < MAX_NAMES) {
        strings[nstrings++] = strdup(s);
        h = nstrings;
        logline("string %s%s\n", s, "", 0, 0);
    }
    pthread_mutex_unlock(&lock);
    return (nvtxStringHandle_t)h;
}

static int NVTX_API my_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    pthread_mutex_lock(&lock);
    const char *name = a->messageType == NVTX_MESSAGE_TYPE_REGISTERED ? lookup(strings, nstrings, a->message.registered)
                       : a->messageType == NVTX_MESSAGE_TYPE_ASCII  ? a->message.ascii
                                                                    : "?";
    logline("push %s %s %08x\n", lookup(domains, ndomains, d), name, a->colorType == NVTX_COLOR_ARGB ? a->color : 0, 1);
    pthread_mutex_unlock(&lock);
    return 0;
}

static int NVTX_API my_pop(nvtxDomainHandle_t d)
{
    pthread_mutex_lock(&lock);
    logline("pop %s%s\n", lookup(domains, ndomains, d), "", 0, 0);
    pthread_mutex_unlock(&lock);
    return 0;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable t = NULL;
    unsigned n = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) || n <= NVTX_CBID_CORE2_DomainCreateA)
        return 0;
    const char *path = getenv("PROF_NVTX_LOG");
    log_file = path ? fopen(path, "w") : NULL;
    *t[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)my_domain_create;
    *t[NVTX_CBID_CORE2_DomainRegisterStringA] = (NvtxFunctionPointer)my_register;
    *t[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)my_push;
    *t[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)my_pop;
    return 1;
}
