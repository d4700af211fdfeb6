#!/bin/sh
# commit-id.sh: which commit a build is made from, for every record's env (docs/results-schema.md, "commit").
#
#   commit-id.sh c SRCROOT [GIVEN]   a C initializer for experiments/commit.c.in (meson's vcs_tag runs
#                                    this at every build): "HASH", DIRTY, "SOURCE", "NOTE", "DESCRIBE"
#   commit-id.sh sh SRCROOT [GIVEN]  the same as shell assignments (SL_COMMIT=..., for scripts)
#   commit-id.sh check GIVEN         exit 0 when GIVEN is a commit hash (7 to 40 hex digits), else say why
#   commit-id.sh dist                (a meson dist script) write COMMIT into the tarball's root, so a
#                                    build from the tarball knows the commit without git
#
# Sources, first found wins: git in SRCROOT (its HEAD, dirty when tracked files differ); SRCROOT/.git read
# without git (a fresh root that cloned the tree but has no git: the commit, dirtiness unknown);
# SRCROOT/COMMIT (a `meson dist` tarball); GIVEN (-Dcommit= or SPEEDLAB_COMMIT at setup). None: "unknown",
# with the reason in NOTE. DIRTY is 1, 0, or -1 when it cannot be known.
set -u

is_hash() { case $1 in *[!0-9a-f]*|'') return 1 ;; esac; [ ${#1} -ge 7 ] && [ ${#1} -le 40 ]; }

# the commit of SRCROOT/.git's HEAD, read from the files (a worktree's .git file and packed refs too)
read_git_dir() {
    g=$1/.git
    if [ -f "$g" ]; then
        g=$(sed -n 's/^gitdir: //p' "$g")
        case $g in /*) ;; *) g=$1/$g ;; esac
    fi
    [ -f "$g/HEAD" ] || return 1
    common=$g
    [ -f "$g/commondir" ] && { common=$(cat "$g/commondir"); case $common in /*) ;; *) common=$g/$common ;; esac; }
    head=$(cat "$g/HEAD")
    case $head in
        "ref: "*)
            ref=${head#ref: }
            for d in "$g" "$common"; do
                [ -f "$d/$ref" ] && { cat "$d/$ref"; return 0; }
            done
            [ -f "$common/packed-refs" ] && awk -v r="$ref" '$2 == r { print $1; f = 1; exit } END { exit !f }' "$common/packed-refs"
            ;;
        *) printf '%s\n' "$head" ;;
    esac
}

# find SRCROOT GIVEN: sets hash dirty source note describe
find_commit() {
    hash=unknown dirty=-1 source=none note="" describe=""
    # git's answer only when SRCROOT is the top of its work tree (a tarball unpacked inside another
    # clone would otherwise be given that clone's commit)
    if command -v git >/dev/null 2>&1 && [ "$(git -C "$1" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$1" && pwd -P)" ] &&
        h=$(git -C "$1" rev-parse --verify -q HEAD 2>/dev/null) && is_hash "$h"; then
        hash=$h source=git
        describe=$(git -C "$1" describe --always --dirty 2>/dev/null) || describe=""
        case $describe in *-dirty) dirty=1 ;; '') note="git describe failed: dirtiness unknown" ;; *) dirty=0 ;; esac
        return
    fi
    if h=$(read_git_dir "$1" 2>/dev/null) && is_hash "$h"; then
        hash=$h source=git-dir note="read from .git without git: whether the tree was modified is unknown"
        return
    fi
    if [ -f "$1/COMMIT" ]; then
        h=$(sed -n 's/^commit //p' "$1/COMMIT")
        if is_hash "$h"; then
            hash=$h source=dist
            d=$(sed -n 's/^dirty //p' "$1/COMMIT")
            case $d in 0|1) dirty=$d ;; *) note="COMMIT does not say whether the tree was modified" ;; esac
            return
        fi
    fi
    if [ -n "${2:-}" ] && is_hash "$2"; then
        hash=$2 source=setup note="given at setup (-Dcommit= or SPEEDLAB_COMMIT): whether the tree was modified is unknown"
        return
    fi
    note="no git, no .git, no COMMIT file and no commit given at setup (meson setup -Dcommit=HASH)"
}

case ${1:-} in
c)
    [ $# -ge 2 ] || { echo "usage: scripts/commit-id.sh c SRCROOT [GIVEN]" >&2; exit 2; }
    find_commit "$2" "${3:-}"
    printf '"%s", %s, "%s", "%s", "%s"\n' "$hash" "$dirty" "$source" "$note" "$describe" ;;
sh)
    [ $# -ge 2 ] || { echo "usage: scripts/commit-id.sh sh SRCROOT [GIVEN]" >&2; exit 2; }
    find_commit "$2" "${3:-}"
    printf "SL_COMMIT='%s'\nSL_COMMIT_DIRTY='%s'\nSL_COMMIT_SOURCE='%s'\nSL_COMMIT_NOTE='%s'\nSL_COMMIT_DESCRIBE='%s'\n" \
        "$hash" "$dirty" "$source" "$note" "$describe" ;;
check)
    [ -z "${2:-}" ] || is_hash "$2" ||
        { echo "commit '$2' is not a commit hash: want 7 to 40 lower-case hex digits (git rev-parse HEAD)" >&2; exit 1; } ;;
dist)
    : "${MESON_DIST_ROOT:?run by meson dist}" "${MESON_SOURCE_ROOT:?run by meson dist}"
    find_commit "$MESON_SOURCE_ROOT" ""
    [ "$hash" != unknown ] || { echo "commit-id: $note" >&2; exit 1; }
    # the tarball holds the committed tree (meson dist archives HEAD, never uncommitted edits): clean
    printf 'commit %s\ndirty 0\n' "$hash" >"$MESON_DIST_ROOT/COMMIT" ;;
-h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' ;;
*)
    echo "commit-id.sh: error: unknown mode '${1:-}'" >&2
    echo "usage: scripts/commit-id.sh c|sh SRCROOT [GIVEN] | check GIVEN | dist  (--help says more)" >&2
    exit 2 ;;
esac
