#!/bin/sh
# results-page.sh: measured results as data in the repository, docs/results/NAME/, each with the
# records of one main job and the report `speedlab report` renders from them.
#
#   scripts/results-page.sh add RUNDIR NAME   copy RUNDIR's records (results.jsonl, and those of its
#                                             extra/ runs) into docs/results/NAME/results/, then render;
#                                             refused when a record names no commit (env.commit)
#   scripts/results-page.sh add-gpu DIR NAME  the same from a GPU node's check (scripts/gpu-check.sh):
#                                             DIR is its output folder or its runs.tar.gz; the full
#                                             mode's runs' records are the page's (--full: calibration
#                                             included), else the default runs', each quick run an
#                                             extra/ run (not the spans=0 reruns: the same cases without
#                                             phases); a page from quick runs alone where the budget
#                                             stopped the check before its default step. Also writes
#                                             docs/results/NAME/NODE.md: the node, driver, CUDA
#                                             libraries, frameworks, commit and the check's steps, from
#                                             DIR's summary.txt and node.txt (beside the runs.tar.gz)
#                                             and the records
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
# NAME is a plain word: a lowercase letter, then lowercase letters, digits and _.- (no '/', no leading
# '.' or '-'); the page is docs/results/NAME, a folder of its own, never a link. Only its results/ and
# report/ are replaced, and only once docs/results/NAME is known to lie inside the repository.
# -h, --help: this text. Exit 0 ok, 1 failed (or differs), 2 usage (nothing changed).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
speedlab=${SPEEDLAB:-$here/build/experiments/speedlab}
pages=docs/results
say() { printf 'results-page: %s\n' "$*" >&2; }
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0; }
# bad WHAT: a usage error: what is wrong, the synopsis, exit 2 (before anything is read or written)
bad() {
    say "error: $*"
    echo "usage: scripts/results-page.sh add RUNDIR NAME | add-gpu DIR NAME | render [NAME...] | check [NAME...]  (--help says more)" >&2
    exit 2
}
for a in "$@"; do case $a in -h|--help) usage ;; esac; done

# check_name NAME: a plain word (see above), or a usage error
check_name() {
    case $1 in
        [a-z]*) case $1 in *[!a-z0-9_.-]*) bad "NAME '$1': a lowercase letter, then letters, digits and _.- only" ;; esac ;;
        *) bad "NAME '$1': a lowercase letter, then letters, digits and _.- only" ;;
    esac
    [ ${#1} -le 100 ] || bad "NAME '$1': at most 100 characters"
}

# page_dir NAME: docs/results/NAME as a physical path, after checking that docs/results is the
# repository's own folder and docs/results/NAME, when it exists, a folder and not a link (so that
# removing its results/ or report/ cannot reach outside the repository); exit 1 otherwise
page_dir() {
    if [ -L "$here/$pages" ] || [ ! -d "$here/$pages" ]; then
        say "$here/$pages is a link or not a folder: not the repository's own"; exit 1
    fi
    top=$(cd "$here/$pages" && pwd -P) || exit 1
    if [ -L "$top/$1" ] || { [ -e "$top/$1" ] && [ ! -d "$top/$1" ]; }; then
        say "$pages/$1 is a link or not a folder: not touched (move it away to make the page)"; exit 1
    fi
    echo "$top/$1"
}

# new_tmp: a temporary folder $TMPDIR/speedlab-results-page.PID.XXXXXX, after removing those of earlier
# runs whose process is gone (killed outright: no trap ran)
new_tmp() {
    for old in "${TMPDIR:-/tmp}"/speedlab-results-page.*.*; do
        [ -d "$old" ] || continue
        pid=${old##*/speedlab-results-page.}; pid=${pid%%.*}
        case $pid in '' | *[!0-9]*) continue ;; esac
        [ -d "/proc/$pid" ] || rm -rf "$old"
    done
    mktemp -d "${TMPDIR:-/tmp}/speedlab-results-page.$$.XXXXXX"
}

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

# node_page DIR RECORDS OUT: the window a GPU page was measured in, as Markdown: the node, driver, the
# CUDA libraries the bundle found there, the frameworks the framework rows ran, the commit built, the
# check's command line, time and steps. From gpu-check's summary.txt and node.txt in DIR (either may be
# missing: then what the records say) and RECORDS (the page's records).
node_page() {
    sum=$1/summary.txt node=$1/node.txt
    [ -f "$sum" ] || sum=/dev/null
    [ -f "$node" ] || node=/dev/null
    awk -v out="$3" '
        function str(k) { if (match($0, "\"" k "\":\"([^\"\\\\]|\\\\.)*\"")) return substr($0, RSTART + length(k) + 4, RLENGTH - length(k) - 5); return "" }
        function add(k, v) { if (v != "" && !((k, v) in seen)) { seen[k, v] = 1; val[k] = val[k] (val[k] == "" ? "" : "; ") v } }
        FILENAME ~ /summary.txt$/ && /^node: / { add("node", substr($0, 7)); if (match($0, /driver: [^;]*/)) add("driver", substr($0, RSTART + 8, RLENGTH - 8)) }
        FILENAME ~ /summary.txt$/ && /^time: / { add("time", substr($0, 7)) }
        FILENAME ~ /summary.txt$/ && /^speedlab gpu-check: / { add("bundle", substr($0, 21)) }
        FILENAME ~ /summary.txt$/ && /^steps:/ { insteps = 1; next }
        FILENAME ~ /summary.txt$/ && insteps && /^$/ { insteps = 0 }
        FILENAME ~ /summary.txt$/ && insteps { steps = steps $0 "\n" }
        FILENAME ~ /summary.txt$/ && /^verdict: / { add("verdict", substr($0, 10)) }
        FILENAME ~ /node.txt$/ && /^SL_BUNDLE_SOURCE=/ { v = $0; sub(/^[^=]*=/, "", v); gsub("\047", "", v); add("commit", v) }
        FILENAME ~ /node.txt$/ && /^SL_BUNDLE_COMPILERS=/ { v = $0; sub(/^[^=]*=/, "", v); gsub("\047", "", v); add("compilers", v) }
        FILENAME ~ /node.txt$/ && /^SL_BUNDLE_CUDA_RUNTIME=/ { v = $0; sub(/^[^=]*=/, "", v); gsub("\047", "", v); add("toolkit", "CUDA runtime " v) }
        FILENAME ~ /node.txt$/ && /^SL_BUNDLE_(CUBLAS|CUDNN)_HEADERS=/ { v = $0; sub(/^[^=]*=/, "", v); gsub("\047", "", v)
                                                                 add("toolkit", (/CUBLAS/ ? "cuBLAS " : "cuDNN ") v " headers (built against)") }
        FILENAME ~ /node.txt$/ && /^  lib(cublas|cublasLt|cudnn)\.so/ { v = $0; sub(/^ *[^ ]+ +[^ ]+ +/, "", v)   # "(VERSION (from where))"
                                                             add("toolkit", $1 " " v " found on the node") }
        FILENAME ~ /node.txt$/ && /Driver Version *:/ { v = $0; sub(/.*: */, "", v); add("driver", v) }
        FILENAME ~ /node.txt$/ && /^Model name:/ { v = $0; sub(/^[^:]*: */, "", v); add("cpu", v) }
        FILENAME ~ /node.txt$/ && /^CPU\(s\):/ { add("cpu", $2 " CPUs") }
        /"kind":"case"/ {
            add("gpu", str("cuda_device")); add("commit", str("commit") != "" ? str("commit") : str("git_describe"))
            if (str("cuda_driver") != "") add("driver", "CUDA " str("cuda_driver") " (driver API)")
            if (str("cudnn_version") != "") add("toolkit", "cuDNN " str("cudnn_version") " (loaded)")
            if (match($0, /"versions":\{[^}]*\}/)) { v = substr($0, RSTART + 12, RLENGTH - 13); gsub(/"/, "", v); gsub(/:/, " ", v); gsub(/,/, ", ", v)
                                                    add("frameworks", v (str("python_version") != "" ? ", python " str("python_version") : "")) }
        }
        END {
            print "# The GPU window behind this page" > out
            print "" > out
            print "What the records were measured on and with, from gpu-check\047s summary, node file and records. The tables: [REPORT.md](report/REPORT.md)." > out
            print "" > out
            print "| | |" > out; print "| --- | --- |" > out
            n = split("node gpu driver toolkit cpu frameworks commit compilers bundle time verdict", ks, " ")
            for (i = 1; i <= n; i++) printf "| %s | %s |\n", ks[i], val[ks[i]] == "" ? "not known (not in the files brought home)" : val[ks[i]] > out
            if (steps != "") { print "" > out; print "The check\047s steps:" > out; print "" > out; printf "```\n%s```\n", steps > out }
        }' "$sum" "$node" "$2"
}

# names [NAME...]: the NAMEs given (checked above), or every page's
names() {
    if [ $# -gt 0 ]; then printf '%s\n' "$@"; return; fi
    for d in "$here/$pages"/*/results; do [ -d "$d" ] && basename "$(dirname "$d")"; done
}
# a path argument is not a flag, and not empty
check_path() {
    case $1 in -*|'') bad "$2 '$1': want a folder (a path that does not start with '-')" ;; esac
}

case ${1:-} in
add)
    [ $# -eq 3 ] || bad "add wants RUNDIR NAME"
    check_path "$2" RUNDIR
    check_name "$3"
    run=$(cd "$2" 2>/dev/null && pwd -P) || bad "RUNDIR '$2': no such folder"
    [ -f "$run/results.jsonl" ] || bad "RUNDIR '$2': $run has no results.jsonl: not a run directory" ;;
add-gpu)
    [ $# -eq 3 ] || bad "add-gpu wants DIR NAME"
    check_path "$2" DIR
    check_name "$3"
    if [ -d "$2" ]; then [ -f "$2/runs.tar.gz" ] || bad "DIR '$2': no runs.tar.gz in it (gpu-check's output folder holds one)"
    else [ -f "$2" ] || bad "DIR '$2': no such folder or file (give gpu-check's output folder or its runs.tar.gz)"; fi ;;
render|check) cmd=$1; shift; for n in "$@"; do check_name "$n"; done; set -- "$cmd" "$@" ;;
'') bad "no command" ;;
*) bad "unknown command '$1'" ;;
esac
[ -x "$speedlab" ] || { say "no speedlab at $speedlab (build it, or set SPEEDLAB)"; exit 1; }
case $1 in
add)
    # a page names the code it shows: every record its commit (env.commit, scripts/results-stale.sh)
    nocommit=$(cat "$run/results.jsonl" "$run"/extra/run-*/results.jsonl 2>/dev/null |
          grep -v -c -e '"commit": *"[0-9a-f]\{7,40\}"' -e '"git_describe": *"\([^"]*-g\)\{0,1\}[0-9a-f]\{7,40\}\(-dirty\)\{0,1\}"')
    [ "$nocommit" -eq 0 ] || { say "$run: $nocommit records name no commit (env.commit absent or unknown: see env.commit_note); a page" \
                             "must say which code it shows: build from a git clone, a meson dist tarball or with -Dcommit=HASH, and run again"; exit 2; }
    dst=$(page_dir "$3")/results || exit 1
    rm -rf "$dst" && mkdir -p "$dst" || exit 1
    cp "$run/results.jsonl" "$dst/results.jsonl" || exit 1
    for x in "$run"/extra/run-*/results.jsonl; do
        [ -f "$x" ] || continue
        mkdir -p "$dst/extra/$(basename "$(dirname "$x")")" &&
            cp "$x" "$dst/extra/$(basename "$(dirname "$x")")/" || exit 1
    done
    render_to "$3" "$(dirname "$dst")/report" || { say "report of $3 failed"; exit 1; }
    say "docs/results/$3: $(find "$dst" -name results.jsonl | wc -l) results files, report in docs/results/$3/report/REPORT.md"
    ;;
add-gpu)
    tgz=$2
    [ -d "$tgz" ] && tgz=$tgz/runs.tar.gz
    [ -f "$tgz" ] || { say "no $tgz: give gpu-check's output folder or its runs.tar.gz"; exit 2; }
    tmp=$(new_tmp) || exit 1
    trap 'rm -rf "$tmp"' EXIT
    tar -xzf "$tgz" -C "$tmp" 2>/dev/null && [ -d "$tmp/runs" ] ||
        { say "$tgz: not gpu-check's runs.tar.gz (no runs/ inside)"; exit 2; }
    mkdir -p "$tmp/page" || exit 1
    : >"$tmp/page/results.jsonl"
    main=default   # the full mode's runs where the check ran them (calibration included)
    ls "$tmp"/runs/full/run-*/results.jsonl >/dev/null 2>&1 && main=full
    for f in "$tmp"/runs/"$main"/run-*/results.jsonl; do
        [ -f "$f" ] && cat "$f" >>"$tmp/page/results.jsonl"
    done
    for f in "$tmp"/runs/quick/run-*/results.jsonl "$tmp"/runs/default/run-*/results.jsonl; do
        [ -f "$f" ] || continue
        case $f in "$tmp/runs/$main/"*) continue ;; esac
        grep -q '"spans":"0"' "$f" && continue
        d=$tmp/page/extra/$(basename "$(dirname "$f")")
        mkdir -p "$d" && cp "$f" "$d/" || exit 1
    done
    [ -s "$tmp/page/results.jsonl" ] || [ -d "$tmp/page/extra" ] ||
        { say "$tgz: no records in its runs (the check ran no study): no page made"; exit 2; }
    sh "$here/scripts/results-page.sh" add "$tmp/page" "$3" || exit $?
    node_page "$(dirname "$tgz")" "$here/$pages/$3/results/results.jsonl" "$here/$pages/$3/NODE.md" || exit 1
    say "docs/results/$3/NODE.md: the node, its CUDA libraries, the frameworks and the commit"
    ;;
render)
    shift
    for n in $(names "$@"); do
        page=$(page_dir "$n") || exit 1
        render_to "$n" "$page/report" || { say "report of $n failed"; exit 1; }
        say "rendered docs/results/$n/report"
    done
    ;;
check)
    shift
    command -v gnuplot >/dev/null || { say "no gnuplot: the pages embed figures, so they cannot be compared"; exit 77; }
    tmp=$(new_tmp) || exit 1
    trap 'rm -rf "$tmp"' EXIT
    status=0
    for n in $(names "$@"); do
        page_dir "$n" >/dev/null || exit 1
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
esac
