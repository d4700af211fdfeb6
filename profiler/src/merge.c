/*
 * Reading the profile: every thread's call tree merged by path into one tree of prof_mnode.
 *
 * Calls, inclusive time and counter deltas add up across threads; mean and std combine with the
 * parallel form of Welford's update (Chan et al.), so they describe all calls of the path on every
 * thread; min and max are over all calls. Self time is computed on the merged tree (inclusive time
 * minus the children's), so it is a sum of per-thread times as well. Readers call this while no other
 * thread is inside a region (docs/profiler.md, "Threads").
 */
#include "prof_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fputs("prof: out of memory merging the profile\n", stderr);
        abort();
    }
    return p;
}

/* The merged child called name: through the parent's hash index once it has many children (kids.c). */
static prof_mnode *mchild(prof_merged *m, prof_mnode *parent, const char *name)
{
    uint64_t h = prof_name_hash(name);
    if (parent->kids.n) {
        prof_mnode *c = prof_kids_find(&parent->kids, name, h);
        if (c)
            return c;
    } else {
        for (prof_mnode *c = parent->first_child; c; c = c->next_sibling)
            if (strcmp(c->name, name) == 0)
                return c;
    }
    prof_mnode *c = xcalloc(1, sizeof *c);
    c->name = name;
    c->parent = parent;
    c->depth = parent->depth + 1;
    if (parent->last_child)
        parent->last_child->next_sibling = c;
    else
        parent->first_child = c;
    parent->last_child = c;
    if (++parent->nkids > PROF_KIDS_LINEAR) {
        if (parent->kids.n == 0) /* the first time: every child so far */
            for (prof_mnode *k = parent->first_child; k != c; k = k->next_sibling)
                prof_kids_add(&parent->kids, k, prof_name_hash(k->name));
        prof_kids_add(&parent->kids, c, h);
    }
    (void)m;
    return c;
}

/* Σ(x - q)² for q = floor(mean) is exact in 128 bits (it is at most Σx², and the arithmetic wraps modulo
 * 2^128 to it); Σ(x - mean)² is that minus calls·(mean - q)² = r²/calls, r = sum mod calls. */
void prof_node_moments(const prof_node *n, double *mean, double *m2)
{
    uint64_t c = n->calls;
    if (c == 0) {
        *mean = *m2 = 0.0;
        return;
    }
    uint64_t q = n->sum_ticks / c, r = n->sum_ticks % c;
    prof_u128 s = n->sumsq_ticks - 2 * (prof_u128)q * n->sum_ticks + (prof_u128)c * q * q;
    *mean = (double)q + (double)r / (double)c;
    double d = (double)s - (double)r * ((double)r / (double)c);
    *m2 = d > 0.0 ? d : 0.0;
}

/* Adds one thread's node into the merged node. */
static void combine(prof_mnode *d, const prof_node *s)
{
    double k = prof_ticks_to_ns(1.0);
    if (s->has_device) {
        d->st.device_ms += s->device_ms;
        d->has_device = 1;
    }
    if (s->has_rss) {
        if (s->rss_peak > d->rss_peak)
            d->rss_peak = s->rss_peak;
        if (!d->has_rss || s->last_end_ticks >= d->rss_end_at) {
            d->rss_end = s->rss_end;
            d->rss_end_at = s->last_end_ticks;
        }
        d->has_rss = 1;
    }
    if (s->calls == 0)
        return;
    if (prof_counter_valid(s)) {
        for (int i = 0; i < prof_g.ctr_n; i++)
            d->ctr[i] += s->ctr[i];
        d->ctr_seen = 1;
    }
    double na = (double)d->st.calls, nb = (double)s->calls, n = na + nb;
    double mean_ticks, m2_ticks;
    prof_node_moments(s, &mean_ticks, &m2_ticks);
    double mb = mean_ticks * k, m2b = m2_ticks * k * k;
    double delta = mb - d->st.mean_ns;
    d->st.mean_ns += delta * nb / n;
    d->m2 += m2b + delta * delta * na * nb / n;
    double mn = (double)s->min_ticks * k, mx = (double)s->max_ticks * k;
    if (d->st.calls == 0 || mn < d->st.min_ns)
        d->st.min_ns = mn;
    if (mx > d->st.max_ns)
        d->st.max_ns = mx;
    d->st.calls += (long)s->calls;
    d->st.incl_ns += (double)s->sum_ticks * k;
    d->st.threads++;
}

static void merge_thread(prof_merged *m, prof_mnode *dst, const prof_node *src)
{
    for (const prof_node *c = src->first_child; c; c = c->next_sibling) {
        prof_mnode *d = mchild(m, dst, c->name);
        combine(d, c);
        merge_thread(m, d, c);
    }
}

/* Fills self/std, drops paths where nothing completed, lists the rest depth-first. Returns 1 when the
 * subtree has a completed call. */
static int finish(prof_merged *m, prof_mnode *n)
{
    int keep = n->st.calls > 0;
    double child_incl = 0;
    for (prof_mnode *c = n->first_child; c; c = c->next_sibling) {
        child_incl += c->st.incl_ns;
        (void)c;
    }
    n->st.self_ns = n->st.incl_ns - child_incl;
    if (n->st.self_ns < 0)
        n->st.self_ns = 0;
    n->st.std_ns = n->st.calls > 1 ? sqrt(n->m2 / (double)(n->st.calls - 1)) : 0.0;
    n->ctr_valid = n->ctr_seen;
    if (n->depth >= 0) {
        if (m->n == m->cap) {
            m->cap = m->cap ? 2 * m->cap : 64;
            m->all = realloc(m->all, (size_t)m->cap * sizeof *m->all);
            if (!m->all) {
                fputs("prof: out of memory merging the profile\n", stderr);
                abort();
            }
        }
        m->all[m->n++] = n;
    }
    int pos = m->n;
    for (prof_mnode *c = n->first_child; c; c = c->next_sibling)
        keep |= finish(m, c);
    if (!keep && n->depth >= 0 && pos == m->n)
        m->n--; /* nothing below either: the node was just the path of an open region */
    return keep;
}

prof_merged *prof_merge(void)
{
    prof_merged *m = xcalloc(1, sizeof *m);
    m->root.depth = -1;
    pthread_mutex_lock(&prof_g.lock);
    for (prof_thread *t = prof_g.threads; t; t = t->next) {
        if (t->epoch != prof_g.epoch)
            continue;
        merge_thread(m, &m->root, &t->root);
        for (const prof_node *c = t->root.first_child; c; c = c->next_sibling)
            if (c->calls > 0 || c->first_child) {
                m->threads++;
                break;
            }
    }
    pthread_mutex_unlock(&prof_g.lock);
    finish(m, &m->root);
    return m;
}

static void mfree(prof_mnode *n)
{
    prof_mnode *c = n->first_child;
    while (c) {
        prof_mnode *next = c->next_sibling;
        mfree(c);
        free(c);
        c = next;
    }
    prof_kids_free(&n->kids);
}

void prof_merged_free(prof_merged *m)
{
    if (!m)
        return;
    mfree(&m->root);
    free(m->all);
    free(m);
}

prof_mnode *prof_merged_find(prof_merged *m, const char *path)
{
    prof_mnode *n = &m->root;
    const char *p = path;
    while (n && *p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        prof_mnode *c = n->first_child;
        while (c && !(strlen(c->name) == len && strncmp(c->name, p, len) == 0))
            c = c->next_sibling;
        n = c;
        p += len;
        if (*p == '/')
            p++;
    }
    return n == &m->root ? NULL : n;
}

int prof_get(const char *path, prof_stats *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!path || !out)
        return -1;
    prof_merged *m = prof_merge();
    prof_mnode *n = prof_merged_find(m, path);
    int rc = -1;
    if (n && n->st.calls > 0) {
        *out = n->st;
        rc = 0;
    }
    prof_merged_free(m);
    return rc;
}
