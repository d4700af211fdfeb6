/* First, minimal implementation of speedlab/prof.h (replaced by the full layer). */
#include "speedlab/prof.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t prof_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
const char *prof_clock_name(void) { return "clock_gettime(CLOCK_MONOTONIC)"; }
int prof_init(const prof_options *opt) { (void)opt; return 0; }
void prof_shutdown(void) {}
void prof_reset(void) {}
void prof_begin(const char *name) { (void)name; }
void prof_end(const char *name) { (void)name; }
long prof_errors(void) { return 0; }
void prof_set_color(const char *name, uint32_t argb) { (void)name; (void)argb; }
uint32_t prof_color_of(const char *name) { (void)name; return 0xff808080u; }
int prof_set_counters(const char *spec) { (void)spec; return 0; }
int prof_counter_count(void) { return 0; }
const char *prof_counter_name(int i) { (void)i; return NULL; }
int prof_counter_absent_count(void) { return 0; }
const char *prof_counter_absent_name(int i) { (void)i; return NULL; }
const char *prof_counter_absent_why(int i) { (void)i; return NULL; }
void prof_gpu_begin(void *stream) { (void)stream; }
double prof_gpu_end(void) { return -1.0; }
void prof_add_device_ms(double ms) { (void)ms; }
size_t prof_rss_bytes(void) { return 0; }
size_t prof_peak_rss_bytes(void) { return 0; }
int prof_mem_sampler_start(double interval_ms) { (void)interval_ms; return -1; }
void prof_mem_sampler_stop(void) {}
int prof_get(const char *path, prof_stats *out) { (void)path; memset(out, 0, sizeof *out); return -1; }
char *prof_json(void)
{
    const char *s = "{\"schema\":\"speedlab-profile\",\"schema_version\":1,\"regions\":[]}";
    char *r = malloc(strlen(s) + 1);
    if (r) strcpy(r, s);
    return r;
}
int prof_write_json(const char *path) { (void)path; return -1; }
void prof_report(FILE *out) { (void)out; }
