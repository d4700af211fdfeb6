/*
 * experiments/train/loader.c: the loader thread and its ring (loader.h).
 *
 * The ring holds depth + 1 slots in order: the slot the consumer holds (held: 0 or 1), then `ready`
 * filled slots, starting at `head`; the producer fills the slot after them. Since it fills only while
 * ready < depth, that slot is always free (ready + held <= depth < depth + 1). It fills outside the lock
 * (`filling` says it is), so the consumer takes and releases batches meanwhile.
 */
#include "loader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <speedlab/prof.h>

typedef struct slot {
    float *X;
    uint8_t *y;
    int B;
    long i;
} slot;

struct loader {
    pthread_mutex_t mu;
    pthread_cond_t to_producer; /* a job started, a slot was freed, or quit */
    pthread_cond_t to_consumer; /* a batch is ready, or the producer stopped filling */
    pthread_t thread;
    loader_fill_fn fill;
    void *ctx;
    int depth, nslots;
    slot *slots;
    /* under mu */
    int head, held, ready, filling, quit;
    long n, produced, taken; /* the job's items; filled so far; handed to the consumer so far */
    uint64_t busy_ns;
};

static int may_fill(const loader *q)
{
    return q->produced < q->n && q->ready < q->depth;
}

static void *producer(void *arg)
{
    loader *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->quit && !may_fill(q))
            pthread_cond_wait(&q->to_producer, &q->mu);
        if (q->quit)
            break;
        slot *sl = &q->slots[(q->head + q->held + q->ready) % q->nslots];
        long i = q->produced;
        q->filling = 1;
        pthread_mutex_unlock(&q->mu);
        uint64_t t0 = prof_now_ns();
        int B = q->fill(q->ctx, i, sl->X, sl->y);
        uint64_t t1 = prof_now_ns();
        pthread_mutex_lock(&q->mu);
        q->filling = 0;
        q->busy_ns += t1 - t0;
        sl->B = B, sl->i = i;
        q->ready++, q->produced++;
        if (B < 0)
            q->n = q->produced; /* the consumer gets -1 for it: fill nothing after */
        pthread_cond_signal(&q->to_consumer);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static void free_slots(loader *q)
{
    for (int k = 0; q->slots && k < q->nslots; k++)
        free(q->slots[k].X), free(q->slots[k].y);
    free(q->slots);
}

loader *loader_create(int depth, size_t x_floats, size_t y_bytes, loader_fill_fn fill, void *ctx, char *why,
                      size_t n)
{
    loader *q = calloc(1, sizeof *q);
    int ok = q && depth >= 1;
    if (ok) {
        *q = (loader){.fill = fill, .ctx = ctx, .depth = depth, .nslots = depth + 1};
        q->slots = calloc((size_t)q->nslots, sizeof *q->slots);
        ok = q->slots != NULL;
        for (int k = 0; ok && k < q->nslots; k++) {
            q->slots[k].X = aligned_alloc(64, (x_floats * sizeof(float) + 63) / 64 * 64);
            q->slots[k].y = malloc(y_bytes ? y_bytes : 1);
            ok = q->slots[k].X && q->slots[k].y;
        }
    }
    if (!ok) {
        snprintf(why, n, "loader: out of memory for %d batch buffers of %zu floats", depth + 1, x_floats);
        if (q)
            free_slots(q);
        free(q);
        return NULL;
    }
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->to_producer, NULL);
    pthread_cond_init(&q->to_consumer, NULL);
    if (pthread_create(&q->thread, NULL, producer, q) != 0) {
        snprintf(why, n, "loader: cannot start the loader thread (pthread_create)");
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->to_producer);
        pthread_cond_destroy(&q->to_consumer);
        free_slots(q);
        free(q);
        return NULL;
    }
    return q;
}

/* With mu held: stop producing, wait until the item being filled (if any) is in, empty the ring. */
static void cancel_locked(loader *q)
{
    q->n = q->produced;
    while (q->filling)
        pthread_cond_wait(&q->to_consumer, &q->mu);
    q->head = q->held = q->ready = 0;
    q->n = q->produced = q->taken = 0;
}

void loader_cancel(loader *q)
{
    pthread_mutex_lock(&q->mu);
    cancel_locked(q);
    pthread_mutex_unlock(&q->mu);
}

void loader_start(loader *q, long n)
{
    pthread_mutex_lock(&q->mu);
    cancel_locked(q);
    q->n = n > 0 ? n : 0;
    q->busy_ns = 0;
    pthread_cond_signal(&q->to_producer);
    pthread_mutex_unlock(&q->mu);
}

int loader_next(loader *q, loader_batch *out)
{
    pthread_mutex_lock(&q->mu);
    if (q->held) { /* the consumer is done with the last batch: its slot is free */
        q->head = (q->head + 1) % q->nslots;
        q->held = 0;
        pthread_cond_signal(&q->to_producer);
    }
    while (q->ready == 0 && q->taken < q->n)
        pthread_cond_wait(&q->to_consumer, &q->mu);
    int rc = 0;
    if (q->ready > 0) {
        const slot *sl = &q->slots[q->head];
        q->held = 1, q->ready--, q->taken++;
        *out = (loader_batch){sl->X, sl->y, sl->B, sl->i};
        rc = sl->B < 0 ? -1 : 1;
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

double loader_busy_s(loader *q)
{
    pthread_mutex_lock(&q->mu);
    double s = (double)q->busy_ns * 1e-9;
    pthread_mutex_unlock(&q->mu);
    return s;
}

int loader_depth(const loader *q)
{
    return q->depth;
}

void loader_destroy(loader *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    cancel_locked(q);
    q->quit = 1;
    pthread_cond_signal(&q->to_producer);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->to_producer);
    pthread_cond_destroy(&q->to_consumer);
    free_slots(q);
    free(q);
}
