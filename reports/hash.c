/* reports/hash.c: a string -> int map (open addressing, FNV-1a), so that finding the record of a case
 * among n costs O(1) and loading n records O(n), however many cases later records supersede. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rep.h"

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot of key, or the empty slot where it would go. */
static size_t slot(const rep_hash *h, const char *key)
{
    size_t i = (size_t)fnv1a(key) & (h->cap - 1);
    while (h->keys[i] && strcmp(h->keys[i], key))
        i = (i + 1) & (h->cap - 1);
    return i;
}

int rep_hash_get(const rep_hash *h, const char *key)
{
    if (h->cap == 0)
        return -1;
    size_t i = slot(h, key);
    return h->keys[i] ? h->vals[i] : -1;
}

static int grow(rep_hash *h)
{
    rep_hash bigger = {.cap = h->cap ? 2 * h->cap : 256};
    bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
    bigger.vals = calloc(bigger.cap, sizeof *bigger.vals);
    if (!bigger.keys || !bigger.vals) {
        free(bigger.keys);
        free(bigger.vals);
        return -1;
    }
    for (size_t i = 0; i < h->cap; i++)
        if (h->keys[i]) {
            size_t j = slot(&bigger, h->keys[i]);
            bigger.keys[j] = h->keys[i];
            bigger.vals[j] = h->vals[i];
        }
    bigger.n = h->n;
    free(h->keys);
    free(h->vals);
    *h = bigger;
    return 0;
}

int rep_hash_put(rep_hash *h, const char *key, int val)
{
    if (2 * (h->n + 1) > h->cap && grow(h) != 0) /* at most half full: probes stay short */
        return -1;
    size_t i = slot(h, key);
    if (!h->keys[i]) {
        if (!(h->keys[i] = rep_strdup(key)))
            return -1;
        h->n++;
    }
    h->vals[i] = val;
    return 0;
}

void rep_hash_free(rep_hash *h)
{
    for (size_t i = 0; i < h->cap; i++)
        free(h->keys[i]);
    free(h->keys);
    free(h->vals);
    memset(h, 0, sizeof *h);
}
