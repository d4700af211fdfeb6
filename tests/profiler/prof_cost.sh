#!/bin/sh
# tests/profiler/prof_cost.sh PROF_PAIRS OPTIMIZATION SANITIZE MAX: the instructions one prof_begin/prof_end
# pair costs with tracing, counters and NVTX off, counted by callgrind, must be at most MAX
# (docs/profiler.md, "Overhead"). PROF_PAIRS is tests/profiler/prof_pairs; OPTIMIZATION and SANITIZE are
# the build's meson options (optimization, b_sanitize). An instruction count is the same on every run of
# the same binary, so the limit holds on a busy machine too.
# Counted: prof_pairs' loop of 10^5 pairs (callgrind --toggle-collect='pairs_loop*', inclusive, the
# loop's own increment, compare, branch and two calls included), divided by 10^5. The figures with
# tracing, with a counter, with NVTX asked for (no tool attached), and with a name that is not a string
# literal are printed too, not checked.
# 77: no valgrind, or a build whose count means nothing (not optimised -O2/-O3, or with sanitizers).
set -u
prog=$1 opt=$2 san=$3 max=$4
case $opt in 2 | 3) ;; *) echo "optimization=$opt: the count is for an optimised (release) build; skipped"; exit 77 ;; esac
case $san in none) ;; *) echo "b_sanitize=$san: the count means nothing under sanitizers; skipped"; exit 77 ;; esac
command -v valgrind >/dev/null || { echo "no valgrind (Debian: apt-get install valgrind): skipped"; exit 77; }
pairs=100000
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# count MODE: prints instructions per pair (one decimal); exit 77 when the mode cannot run here
count() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$1" --collect-atstart=no \
        --toggle-collect='pairs_loop*' "$prog" "$pairs" "$1" >"$tmp/out.$1" 2>"$tmp/err.$1"
    rc=$?
    [ $rc -eq 77 ] && return 77
    if [ $rc -ne 0 ]; then
        cat "$tmp/out.$1" "$tmp/err.$1" >&2
        echo "FAIL: prof_pairs $pairs $1 under callgrind: exit status $rc" >&2
        return 1
    fi
    ir=$(sed -n 's/^summary: *\([0-9][0-9]*\).*/\1/p' "$tmp/cg.$1")
    [ -n "$ir" ] || { echo "FAIL: no instruction count in callgrind's output" >&2; return 1; }
    awk -v ir="$ir" -v n="$pairs" 'BEGIN { printf "%.1f\n", ir / n }'
}

off=$(count off) || exit 1
sed -n 's/^clock: /clock: /p' "$tmp/out.off"
for mode in trace counters nvtx text; do
    case $mode in
        trace) what="tracing on" ;;
        counters) what="counter perf::TASK-CLOCK on" ;;
        nvtx) what="NVTX on, no tool attached" ;;
        text) what="all off, the name not a string literal" ;;
    esac
    if x=$(count $mode); then
        echo "instructions per pair, $what: $x"
    elif [ $? -eq 77 ]; then
        echo "instructions per pair, $what: not measured ($(head -n1 "$tmp/out.$mode"))"
    else
        exit 1
    fi
done
echo "instructions per pair, tracing, counters and NVTX off: $off (at most $max)"
awk -v x="$off" -v m="$max" 'BEGIN { exit !(x <= m) }' ||
    { echo "FAIL: a begin/end pair costs $off instructions, more than $max"; exit 1; }
echo "ok"
