/*
 * Region colours and NVTX ranges. Ranges go to a "speedlab" domain with nvtxDomainRangePushEx/Pop;
 * each node registers its name once (nvtxDomainRegisterStringA) and keeps the handle and colour, so a
 * push costs one attribute fill. NVTX3 is header-only and calls nothing until a tool attaches.
 */
#include "prof_internal.h"

#include <stdlib.h>
#include <string.h>
#if PROF_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

enum { MAX_COLORS = 64 };
static pthread_mutex_t clock_ = PTHREAD_MUTEX_INITIALIZER;
static struct { char *name; uint32_t argb; } colors[MAX_COLORS];
static int ncolors;

void prof_set_color(const char *name, uint32_t argb)
{
    if (!name)
        return;
    pthread_mutex_lock(&clock_);
    int i = 0;
    while (i < ncolors && strcmp(colors[i].name, name) != 0)
        i++;
    if (i == ncolors && ncolors < MAX_COLORS)
        colors[ncolors++].name = strdup(name);
    if (i < ncolors)
        colors[i].argb = argb;
    else
        prof_note("prof_set_color(\"%s\"): more than %d colours set; ignored", name, MAX_COLORS);
    prof_g.color_gen++;
    pthread_mutex_unlock(&clock_);
}

uint32_t prof_color_of(const char *name)
{
    if (!name)
        return 0xff808080u;
    pthread_mutex_lock(&clock_);
    for (int i = 0; i < ncolors; i++)
        if (strcmp(colors[i].name, name) == 0) {
            uint32_t c = colors[i].argb;
            pthread_mutex_unlock(&clock_);
            return c;
        }
    pthread_mutex_unlock(&clock_);
    /* FNV-1a, then each channel kept in 64..255 so ranges stay readable on a dark timeline */
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    uint32_t r = 64 + (h & 0xff) % 192, g = 64 + ((h >> 8) & 0xff) % 192, b = 64 + ((h >> 16) & 0xff) % 192;
    return 0xff000000u | r << 16 | g << 8 | b;
}

void prof_colors_clear(void)
{
    pthread_mutex_lock(&clock_);
    for (int i = 0; i < ncolors; i++)
        free(colors[i].name);
    ncolors = 0;
    prof_g.color_gen++;
    pthread_mutex_unlock(&clock_);
}

#if PROF_HAVE_NVTX
static nvtxDomainHandle_t domain;

/* NVTX3 loads its injection library (Nsight Systems, or NVTX_INJECTION64_PATH) at its first call; with
 * none, every call is a no-op and nvtxDomainCreateA returns NULL. So a NULL domain means nobody is
 * listening, and the hot path skips NVTX altogether (about 6 ns a region pair saved; docs/profiler.md). */
void prof_nvtx_init(int want)
{
    if (want && !domain)
        domain = nvtxDomainCreateA("speedlab");
    prof_g.nvtx_on = want && domain != NULL;
}

void prof_nvtx_node(prof_node *n) { (void)n; /* registered lazily at the first push */ }

void prof_nvtx_push(prof_node *n)
{
    if (!n->nvtx_str)
        n->nvtx_str = nvtxDomainRegisterStringA(domain, n->name);
    if (n->color_gen != prof_g.color_gen || !n->color) {
        n->color = prof_color_of(n->name);
        n->color_gen = prof_g.color_gen;
    }
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = n->color;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = (nvtxStringHandle_t)n->nvtx_str;
    nvtxDomainRangePushEx(domain, &a);
}

void prof_nvtx_pop(void) { nvtxDomainRangePop(domain); }

#else

void prof_nvtx_init(int want) { (void)want; prof_g.nvtx_on = 0; }
void prof_nvtx_node(prof_node *n) { (void)n; }
void prof_nvtx_push(prof_node *n) { (void)n; }
void prof_nvtx_pop(void) {}

#endif
