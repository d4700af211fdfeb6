/*
 * Resident memory: the current RSS (/proc/self/statm), the peak (VmHWM in /proc/self/status) and a
 * sampler thread that records RSS at a fixed interval (memory_profiler's view of a run). Samples go
 * into a growing array under a mutex; the JSON "memory" object lists them.
 */
#include "prof_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mcond = PTHREAD_COND_INITIALIZER;
static pthread_t sampler;
static int running, stop_req, ran;
static double interval_ms;
static uint64_t t0_ns;
static struct sample { double t_s; size_t rss; } *samples;
static _Atomic uint64_t nsamples;
static size_t cap;
static int statm_fd = -1;

static size_t statm_rss(int fd)
{
    char buf[128];
    ssize_t k = pread(fd, buf, sizeof buf - 1, 0);
    if (k <= 0)
        return 0;
    buf[k] = '\0';
    unsigned long size, resident;
    if (sscanf(buf, "%lu %lu", &size, &resident) != 2)
        return 0;
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

size_t prof_rss_bytes(void)
{
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t r = statm_rss(fd);
    close(fd);
    return r;
}

/* Per-region memory reads RSS twice per call: keep the file open. */
size_t prof_rss_fast(void)
{
    int fd = __atomic_load_n(&statm_fd, __ATOMIC_ACQUIRE);
    if (fd < 0) {
        int nfd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
        int expect = -1;
        if (nfd >= 0 && !__atomic_compare_exchange_n(&statm_fd, &expect, nfd, 0, __ATOMIC_ACQ_REL,
                                                     __ATOMIC_ACQUIRE)) {
            close(nfd);
            nfd = expect;
        }
        fd = nfd;
    }
    return fd >= 0 ? statm_rss(fd) : 0;
}

size_t prof_peak_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    char line[256];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kb = strtoul(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kb * 1024;
}

int prof_peak_rss_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f)
        return -1;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static void push_sample(void)
{
    double t = (double)(prof_mono_ns() - t0_ns) / 1e9;
    size_t r = prof_rss_fast();
    pthread_mutex_lock(&mlock);
    uint64_t n = atomic_load(&nsamples);
    if (n == cap) {
        size_t ncap = cap ? 2 * cap : 1024;
        struct sample *s = realloc(samples, ncap * sizeof *s);
        if (!s) {
            pthread_mutex_unlock(&mlock);
            return;
        }
        samples = s;
        cap = ncap;
    }
    samples[n] = (struct sample){t, r};
    atomic_store(&nsamples, n + 1);
    pthread_mutex_unlock(&mlock);
    prof_trace_rss(r); /* the trace keeps its own series: prof_reset does not clear it */
}

static void *sampler_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mlock);
    while (!stop_req) {
        pthread_mutex_unlock(&mlock);
        push_sample();
        pthread_mutex_lock(&mlock);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long long ns = (long long)ts.tv_nsec + (long long)(interval_ms * 1e6);
        ts.tv_sec += (time_t)(ns / 1000000000LL);
        ts.tv_nsec = (long)(ns % 1000000000LL);
        while (!stop_req && pthread_cond_timedwait(&mcond, &mlock, &ts) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&mlock);
    push_sample(); /* the value at stop */
    return NULL;
}

int prof_mem_sampler_start(double ms)
{
    if (!(ms > 0)) {
        fprintf(stderr, "prof: prof_mem_sampler_start(%g): the interval must be > 0 ms\n", ms);
        return -1;
    }
    if (!atomic_load(&prof_g.active))
        prof_init(NULL);
    prof_mem_sampler_stop();
    pthread_mutex_lock(&mlock);
    interval_ms = ms;
    stop_req = 0;
    atomic_store(&nsamples, 0);
    t0_ns = prof_mono_ns();
    ran = 1;
    pthread_mutex_unlock(&mlock);
    if (pthread_create(&sampler, NULL, sampler_main, NULL) != 0) {
        fprintf(stderr, "prof: cannot start the memory sampler thread\n");
        return -1;
    }
    running = 1;
    prof_set_sampler_on(1);
    return 0;
}

void prof_mem_sampler_stop(void)
{
    if (!running)
        return;
    pthread_mutex_lock(&mlock);
    stop_req = 1;
    pthread_cond_signal(&mcond);
    pthread_mutex_unlock(&mlock);
    pthread_join(sampler, NULL);
    running = 0;
    prof_set_sampler_on(0);
}

uint64_t prof_samples_count(void) { return atomic_load(&nsamples); }

size_t prof_samples_max(uint64_t from, uint64_t to)
{
    size_t m = 0;
    pthread_mutex_lock(&mlock);
    for (uint64_t i = from; i < to && i < atomic_load(&nsamples); i++)
        if (samples[i].rss > m)
            m = samples[i].rss;
    pthread_mutex_unlock(&mlock);
    return m;
}

size_t prof_samples_get(uint64_t i, double *t_s)
{
    size_t r = 0;
    pthread_mutex_lock(&mlock);
    if (i < atomic_load(&nsamples)) {
        *t_s = samples[i].t_s;
        r = samples[i].rss;
    }
    pthread_mutex_unlock(&mlock);
    return r;
}

void prof_samples_clear(void)
{
    pthread_mutex_lock(&mlock);
    atomic_store(&nsamples, 0);
    t0_ns = prof_mono_ns();
    ran = running;
    pthread_mutex_unlock(&mlock);
}

int prof_sampler_ran(void) { return ran; }
double prof_sampler_interval(void) { return interval_ms; }

void prof_memory_shutdown(void)
{
    prof_mem_sampler_stop();
    pthread_mutex_lock(&mlock);
    free(samples);
    samples = NULL;
    cap = 0;
    atomic_store(&nsamples, 0);
    ran = 0;
    pthread_mutex_unlock(&mlock);
    int fd = __atomic_exchange_n(&statm_fd, -1, __ATOMIC_ACQ_REL);
    if (fd >= 0)
        close(fd);
}
