/*
 * commit.h: the commit the binary was built from, captured at build time by scripts/commit-id.sh (meson's
 * vcs_tag, run at every build), so a record names its code without git at run time.
 */
#ifndef SL_COMMIT_H
#define SL_COMMIT_H

typedef struct {
    const char *hash;     /* the full hash (or the abbreviation given at setup), "unknown" when no source */
    int dirty;            /* 1 modified tracked files, 0 clean, -1 unknown */
    const char *source;   /* git, git-dir, dist, setup or none (docs/results-schema.md) */
    const char *note;     /* why the hash or dirtiness is unknown; "" when both are known */
    const char *describe; /* `git describe --always --dirty`, "" without git */
} sl_commit_info;

extern const sl_commit_info sl_commit_built;

#endif
