/*
 * wisdom.h: the planner's memory (wisdom.c): which ISA level each CPU variant runs at, chosen by timing
 * the candidates on this machine (`speedlab tune`, tune.c), kept per CPU model and build, as FFTW keeps
 * its wisdom. One tab-separated line per choice, '#' lines are comments (docs/isa-levels.md, "The
 * planner"):
 *
 *   cpu  build  study  variant  level  times  size  threads  date
 *
 * cpu: /proc/cpuinfo's model name with its family, model and stepping (two CPUs a VM names alike stay
 * apart); build: the commit, the ISA mode and the -march list (sl_build_key); level: v2, v3 or v4;
 * times: the median seconds of each candidate, "v3=0.0121,v4=0.0150"; size: the case tuned,
 * "batch=64"; date: when. Lines of other CPUs and builds are kept as they are: one file serves every
 * node of a cluster and every build.
 */
#ifndef SL_WISDOM_H
#define SL_WISDOM_H

#include <stddef.h>

typedef struct sl_wisdom_entry {
    char *cpu, *build, *study, *variant, *times, *size, *date;
    int level;   /* 2, 3 or 4 */
    int threads;
} sl_wisdom_entry;

typedef struct sl_wisdom {
    sl_wisdom_entry *e;
    int n, cap;
} sl_wisdom;

/* The wisdom file's path: `given` (--wisdom), else $SPEEDLAB_WISDOM, else $XDG_CACHE_HOME/speedlab/wisdom.tsv,
 * else $HOME/.cache/speedlab/wisdom.tsv. 0, or -1 when none can be made (no HOME). */
int sl_wisdom_path(const char *given, char *out, size_t n);
/* This CPU and this build, as the file's first two fields name them. */
void sl_cpu_key(char *out, size_t n);
void sl_build_key(char *out, size_t n);

/* Reads path into w (empty when the file does not exist). 0, or -1 with err naming the file, the line
 * and what is wrong with it, and what to do. */
int sl_wisdom_read(const char *path, sl_wisdom *w, char *err, size_t n);
/* The entry of (cpu, build, study, variant), or NULL. */
const sl_wisdom_entry *sl_wisdom_find(const sl_wisdom *w, const char *cpu, const char *build, const char *study,
                                      const char *variant);
/* Puts e (its strings copied) in place of the entry with the same four keys, or after the others. 0 or -1. */
int sl_wisdom_put(sl_wisdom *w, const sl_wisdom_entry *e);
/* Writes w whole (a temporary renamed over path; the directory made when missing). 0, or -1 with err. */
int sl_wisdom_write(const sl_wisdom *w, const char *path, char *err, size_t n);
/* Puts fresh's entries into the file at path as it is now: under a lock on its directory, the file is
 * read again, each entry put, and written whole, so that two tunes of one shared file (cluster nodes
 * under one HOME) keep each other's lines. 0, or -1 with err. */
int sl_wisdom_update(const char *path, const sl_wisdom *fresh, char *err, size_t n);
void sl_wisdom_free(sl_wisdom *w);

#endif
