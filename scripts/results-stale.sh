#!/bin/sh
# results-stale.sh: which docs/results pages are older than the code they show.
#
#   scripts/results-stale.sh [--warn] [--pages DIR] [NAME...]
#
# A page's commit is the one its records name (env.commit; else the hash in env.git_describe; else, for
# records made before either existed, the page's COMMIT file: "commit HASH" and a line saying how it is
# known). The page is stale when a commit after it changed the code of a study it shows:
# kernels/STUDY/, experiments/studies/STUDY/ or baselines/STUDY.py. Each page gets a line: "current",
# or "stale" with each such study, how many commits changed it and the latest of them. A page whose
# records name no commit, or a commit this clone does not have, is an error.
#
#   --warn       stale pages are listed but do not fail (the CI test: renewing a page needs its machine)
#   --pages DIR  the pages' folder (default docs/results of this tree)
#
# Exit 0 every page current (or --warn), 1 a page stale or without a known commit, 2 usage, 77 no git
# history here to compare with (a tarball, a shallow clone).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
pages=$here/docs/results
warn=0
say() { printf 'results-stale: %s\n' "$*" >&2; }
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit "${1:-2}"; }

bad() {
    say "error: $*"
    echo "usage: scripts/results-stale.sh [--warn] [--pages DIR] [NAME...]  (--help says more)" >&2
    exit 2
}
for a in "$@"; do case $a in -h|--help) usage 0 ;; esac; done
while [ $# -gt 0 ]; do
    case $1 in
        --warn) warn=1; shift ;;
        --pages) [ $# -ge 2 ] || bad "--pages needs a folder"; pages=$2; shift 2
                 case $pages in -*|'') bad "--pages '$pages': want a folder" ;; esac ;;
        --) shift; break ;;
        -*) bad "unknown option '$1'" ;;
        *) break ;;
    esac
done
# NAMEs are page folders: plain words (as results-page.sh makes them), never a path
for n in "$@"; do
    case $n in
        [a-z]*) case $n in *[!a-z0-9_.-]*) bad "NAME '$n': a lowercase letter, then letters, digits and _.- only" ;; esac ;;
        *) bad "NAME '$n': a lowercase letter, then letters, digits and _.- only" ;;
    esac
    [ ${#n} -le 100 ] || bad "NAME '$n': at most 100 characters"
done
[ -d "$pages" ] || bad "no pages folder $pages"
command -v git >/dev/null || { say "no git: cannot compare the pages' commits with the code's"; exit 77; }
git -C "$here" rev-parse -q --verify HEAD >/dev/null 2>&1 ||
    { say "$here is not a git work tree (a tarball?): nothing to compare with"; exit 77; }
[ "$(git -C "$here" rev-parse --is-shallow-repository)" = false ] ||
    { say "a shallow clone: the pages' commits may be missing (git fetch --unshallow)"; exit 77; }

if [ $# -eq 0 ]; then
    for d in "$pages"/*/results; do [ -d "$d" ] && set -- "$@" "$(basename "$(dirname "$d")")"; done
fi

# the distinct values of a string field of every record of page $1
field() { find "$pages/$1/results" -name results.jsonl -exec cat {} + | grep -o "\"$2\": *\"[^\"]*\"" |
          sed 's/.*: *"\(.*\)"/\1/' | sort -u; }

# the commits page $1 was made from, a line each (hex as the records give it), "how" in $how
page_commits() {
    n=$(find "$pages/$1/results" -name results.jsonl -exec cat {} + | grep -c .)
    with=$(find "$pages/$1/results" -name results.jsonl -exec cat {} + |
           grep -c -e '"commit": *"[0-9a-f]\{7,40\}"' -e '"git_describe": *"[^"]')
    if [ "$with" -eq 0 ] && [ -f "$pages/$1/COMMIT" ]; then
        sed -n 's/^commit \([0-9a-f]\{7,40\}\)$/\1/p' "$pages/$1/COMMIT"
        return
    fi
    [ "$with" -eq "$n" ] || { echo "MISSING $((n - with)) of $n"; return; }
    { field "$1" commit | grep -x '[0-9a-f]\{7,40\}'
      find "$pages/$1/results" -name results.jsonl -exec cat {} + | grep -v '"commit": *"[0-9a-f]' |
          grep -o '"git_describe": *"[^"]*"' | sed 's/.*: *"\(.*\)"/\1/' |
          sed -e 's/-dirty$//' -e 's/.*-g\([0-9a-f]\{7,40\}\)$/\1/'; } | sort -u
}

status=0
for name in "$@"; do
    case $name in */*|.*|'') say "page name '$name': a folder of $pages"; exit 2 ;; esac
    [ -d "$pages/$name/results" ] || { say "$name: no $pages/$name/results"; status=1; continue; }
    commits=$(page_commits "$name")
    case $commits in
        MISSING*|'')
            printf '%s: error: %s records name no commit (re-make the page: scripts/results-page.sh add)\n' \
                "$name" "${commits#MISSING }"
            status=1; continue ;;
    esac
    how=records
    [ -f "$pages/$name/COMMIT" ] && ! find "$pages/$name/results" -name results.jsonl -exec cat {} + |
        grep -q -e '"commit": *"[0-9a-f]' -e '"git_describe": *"[^"]' &&
        how="its COMMIT file: $(sed -n '2s/:.*//p' "$pages/$name/COMMIT")"
    dirty=""
    field "$name" git_describe | grep -q -- '-dirty$' && dirty=" (built from a modified tree)"
    find "$pages/$name/results" -name results.jsonl -exec grep -l '"commit_dirty": *true' {} + >/dev/null 2>&1 &&
        dirty=" (built from a modified tree)"
    stale="" bad=""
    for c in $commits; do
        full=$(git -C "$here" rev-parse -q --verify "$c^{commit}" 2>/dev/null) ||
            { bad="$bad $c"; continue; }
        for s in $(field "$name" study); do
            n=$(git -C "$here" rev-list --count "$full..HEAD" -- "kernels/$s" "experiments/studies/$s" "baselines/$s.py")
            [ "$n" -gt 0 ] || continue
            last=$(git -C "$here" log -1 --format='%h %s' "$full..HEAD" -- "kernels/$s" "experiments/studies/$s" "baselines/$s.py")
            w=commits; [ "$n" -eq 1 ] && w=commit
            stale="$stale; $s: $n $w since $(printf %.7s "$c") (latest $last)"
        done
    done
    list=$(printf '%s' "$commits" | cut -c1-7 | tr '\n' ' ' | sed 's/ $//')
    if [ -n "$bad" ]; then
        printf '%s: error: commit%s not in this clone'"'"'s history (records from another branch? git fetch)\n' "$name" "$bad"
        status=1
    elif [ -n "$stale" ]; then
        printf '%s: stale: made from %s%s [%s]; %s\n' "$name" "$list" "$dirty" "$how" "${stale#; }"
        [ $warn -eq 1 ] || status=1
    else
        printf '%s: current: made from %s%s [%s]\n' "$name" "$list" "$dirty" "$how"
    fi
done
exit $status
