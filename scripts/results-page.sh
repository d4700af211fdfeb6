#!/bin/sh
# results-page.sh: measured results as data in the repository, docs/results/NAME/, each with the
# records of one main job and the report `speedlab report` renders from them.
#
#   scripts/results-page.sh add RUNDIR NAME   copy RUNDIR's records (results.jsonl, and those of its
#                                             extra/ runs) into docs/results/NAME/results/, then render;
#                                             refused when a record names no commit (env.commit)
#   scripts/results-page.sh add-gpu DIR NAME  the same from a GPU node's check (scripts/gpu-check.sh):
#                                             DIR is its output folder or its runs.tar.gz; the default
#                                             runs' records are the page's, each quick run an extra/ run
#                                             (not the spans=0 reruns: the same cases without phases);
#                                             a page from quick runs alone where the budget stopped
#                                             the check before its default step
#   scripts/results-page.sh render [NAME...]  render docs/results/NAME/report/ from its records again
#                                             (every NAME without arguments)
#   scripts/results-page.sh check [NAME...]   render into a temporary and compare every text file (md,
#                                             csv, tex, dat) with the committed report: exit 1 on a
#                                             difference, 77 without gnuplot (the pages embed figures)
#
# RUNDIR is a run directory of `ninja -C build run-experiments` (results/latest, or one kept by
# `scripts/fresh-check.sh --main` in fresh-check/results/latest). NAME says the machine and the ISA level
# the run used (zen3-avx2, zen4-avx512, zen4-avx2): a page per machine and level. The report is rendered
# with SPEEDLAB (default build/experiments/speedlab) from the repository root, so the paths it prints
# are the same whoever renders it; the figures are kept in all three forms the pages link (PNG, PDF, SVG).
# Exit 0 ok, 1 failed (or differs), 2 usage.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
speedlab=${SPEEDLAB:-$here/build/experiments/speedlab}
pages=docs/results
say() { printf 'results-page: %s\n' "$*" >&2; }
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit "${1:-2}"; }

# NAME, OUT absolute: the report of docs/results/NAME/results (read from the repository root, so
# that the paths it prints do not depend on who renders it) into OUT; a page whose results/ holds a
# file POOL is rendered with --pool (runs that are rounds of one measurement: two ISA levels of one
# dispatch build)
render_to() {
    rm -rf "$2"
    pool=
    [ -f "$here/$pages/$1/results/POOL" ] && pool=--pool
    (cd "$here" && "$speedlab" report $pool "$pages/$1/results" --out "$2" >/dev/null) || return 1
}

names() {
    if [ $# -gt 0 ]; then printf '%s\n' "$@"; return; fi
    for d in "$here/$pages"/*/results; do [ -d "$d" ] && basename "$(dirname "$d")"; done
}

[ -x "$speedlab" ] || { say "no speedlab at $speedlab (build it, or set SPEEDLAB)"; exit 1; }
case ${1:-} in
add)
    [ $# -eq 3 ] || usage
    run=$(cd "$2" 2>/dev/null && pwd -P) || { say "no run directory $2"; exit 2; }
    [ -f "$run/results.jsonl" ] || { say "$run has no results.jsonl: not a run directory"; exit 2; }
    case $3 in *[!a-z0-9_.-]*|'') say "NAME '$3': letters, digits and _.- only"; exit 2 ;; esac
    # a page names the code it shows: every record its commit (env.commit, scripts/results-stale.sh)
    bad=$(cat "$run/results.jsonl" "$run"/extra/run-*/results.jsonl 2>/dev/null |
          grep -v -c -e '"commit": *"[0-9a-f]\{7,40\}"' -e '"git_describe": *"\([^"]*-g\)\{0,1\}[0-9a-f]\{7,40\}\(-dirty\)\{0,1\}"')
    [ "$bad" -eq 0 ] || { say "$run: $bad records name no commit (env.commit absent or unknown: see env.commit_note); a page" \
                             "must say which code it shows: build from a git clone, a meson dist tarball or with -Dcommit=HASH, and run again"; exit 2; }
    dst=$here/$pages/$3/results
    rm -rf "$dst" && mkdir -p "$dst" || exit 1
    cp "$run/results.jsonl" "$dst/results.jsonl" || exit 1
    for x in "$run"/extra/run-*/results.jsonl; do
        [ -f "$x" ] || continue
        mkdir -p "$dst/extra/$(basename "$(dirname "$x")")" &&
            cp "$x" "$dst/extra/$(basename "$(dirname "$x")")/" || exit 1
    done
    render_to "$3" "$here/$pages/$3/report" || { say "report of $3 failed"; exit 1; }
    say "docs/results/$3: $(find "$dst" -name results.jsonl | wc -l) results files, report in docs/results/$3/report/REPORT.md"
    ;;
add-gpu)
    [ $# -eq 3 ] || usage
    tgz=$2
    [ -d "$tgz" ] && tgz=$tgz/runs.tar.gz
    [ -f "$tgz" ] || { say "no $tgz: give gpu-check's output folder or its runs.tar.gz"; exit 2; }
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
    tar -xzf "$tgz" -C "$tmp" 2>/dev/null && [ -d "$tmp/runs" ] ||
        { say "$tgz: not gpu-check's runs.tar.gz (no runs/ inside)"; exit 2; }
    mkdir -p "$tmp/page" || exit 1
    : >"$tmp/page/results.jsonl"
    for f in "$tmp"/runs/default/run-*/results.jsonl; do
        [ -f "$f" ] && cat "$f" >>"$tmp/page/results.jsonl"
    done
    for f in "$tmp"/runs/quick/run-*/results.jsonl; do
        [ -f "$f" ] || continue
        grep -q '"spans":"0"' "$f" && continue
        d=$tmp/page/extra/$(basename "$(dirname "$f")")
        mkdir -p "$d" && cp "$f" "$d/" || exit 1
    done
    [ -s "$tmp/page/results.jsonl" ] || [ -d "$tmp/page/extra" ] ||
        { say "$tgz: no records in its runs (the check ran no study): no page made"; exit 2; }
    sh "$here/scripts/results-page.sh" add "$tmp/page" "$3"
    exit $?
    ;;
render)
    shift
    for n in $(names "$@"); do
        render_to "$n" "$here/$pages/$n/report" || { say "report of $n failed"; exit 1; }
        say "rendered docs/results/$n/report"
    done
    ;;
check)
    shift
    command -v gnuplot >/dev/null || { say "no gnuplot: the pages embed figures, so they cannot be compared"; exit 77; }
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
    status=0
    for n in $(names "$@"); do
        render_to "$n" "$tmp/r" || { say "report of $n failed"; status=1; continue; }
        textfiles() { (cd "$1" && find . -type f \( -name '*.md' -o -name '*.csv' -o -name '*.tex' -o -name '*.dat' \) | sort); }
        textfiles "$here/$pages/$n/report" >"$tmp/want"
        textfiles "$tmp/r" >"$tmp/got"
        if ! diff -q "$tmp/want" "$tmp/got" >/dev/null; then
            say "$n: not the same files as its records render:"; diff "$tmp/want" "$tmp/got" | head -10 >&2
            status=1; continue
        fi
        bad=0
        while read -r f; do
            diff -q "$here/$pages/$n/report/$f" "$tmp/r/$f" >/dev/null ||
                { say "$n: $f differs from what its records render (scripts/results-page.sh render $n)"; bad=1; }
        done <"$tmp/want"
        [ $bad -eq 0 ] && say "$n: the report is what its records render" || status=1
    done
    exit $status
    ;;
-h|--help) usage 0 ;;
*) usage ;;
esac
