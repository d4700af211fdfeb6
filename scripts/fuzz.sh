#!/bin/sh
# Runs every libFuzzer harness of tests/fuzz for SECONDS each, under ASan and UBSan, in a clang build of
# its own (BUILD, default build-fuzz: configured here when missing, CUDA off). New inputs go to
# BUILD/fuzz-corpus/NAME (the seed corpus tests/fuzz/corpus/NAME is read, never written); a crash is
# kept as BUILD/fuzz-crashes/NAME-crash-... (add it to the seed corpus once fixed: it is then a
# regression input that `meson test --suite fuzz` replays). Prints one line per harness: runs,
# seconds, executions per second, crashes. Exit 1 when any harness found a crash or the build failed,
# 2 on usage (checked before anything is built). docs/developing.md, "Fuzzing".
#
# Usage: scripts/fuzz.sh SECONDS [BUILD] [HARNESS...]   (harnesses: idx galaxy_csv results report names)
# SECONDS: 1 to 604800, decimal digits without a leading zero. BUILD (relative to the repository root):
# absent, empty or a meson build folder, never the source tree or a folder holding it. -h, --help: this.
set -u
all="idx galaxy_csv results report names"
bad() {
    echo "fuzz.sh: error: $*" >&2
    echo "usage: scripts/fuzz.sh SECONDS [BUILD] [HARNESS...]  (harnesses: $all; --help says more)" >&2
    exit 2
}
for a in "$@"; do case $a in -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac; done
[ $# -ge 1 ] || bad "no SECONDS"
secs=$1
shift
case $secs in
    [1-9] | [1-9]*[0-9]) case $secs in *[!0-9]* | ???????*) bad "SECONDS '$secs': want 1 to 604800, decimal digits without a leading zero" ;; esac ;;
    *) bad "SECONDS '$secs': want 1 to 604800, decimal digits without a leading zero" ;;
esac
[ "$secs" -le 604800 ] || bad "SECONDS '$secs': want 1 to 604800"
build="build-fuzz"
if [ $# -ge 1 ]; then build=$1; shift; fi
for h in "$@"; do
    case " $all " in *" $h "*) ;; *) bad "unknown harness '$h'" ;; esac
done
harnesses=${*:-$all}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
case $build in ''|-*) bad "BUILD '$build': want a folder (a path that does not start with '-')" ;; esac
if [ -e "$build" ] || [ -L "$build" ]; then
    real=$(cd "$build" 2>/dev/null && pwd -P) || bad "BUILD '$build' is not a folder"
    case $(pwd -P)/ in "$real"/*) bad "BUILD '$build' is $real, which holds the source tree" ;; esac
    if [ -n "$(ls -A "$real")" ] && [ ! -d "$real/meson-private" ]; then
        bad "BUILD '$build' ($real) holds files and is not a meson build folder"
    fi
fi

command -v clang >/dev/null 2>&1 || {
    echo "fuzz.sh: clang not found (Debian: apt-get install clang libclang-rt-14-dev; scripts/setup.sh installs both)" >&2
    exit 1
}
if [ ! -f "$build/build.ninja" ]; then
    setup_log=${TMPDIR:-/tmp}/speedlab-fuzz-setup.log
    CC=clang meson setup "$build" -Dfuzz=enabled -Db_sanitize=address,undefined -Db_lundef=false \
        -Dbuildtype=debugoptimized -Dcuda=disabled >"$setup_log" 2>&1 || {
        echo "fuzz.sh: meson setup of $build failed; see $setup_log" >&2
        exit 1
    }
fi
targets=""
for h in $harnesses; do targets="$targets tests/fuzz/fuzz_$h"; done
# shellcheck disable=SC2086
ninja -C "$build" $targets >/dev/null || { echo "fuzz.sh: build failed (ninja -C $build$targets)" >&2; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
mkdir -p "$build/fuzz-crashes"
for h in $harnesses; do
    corpus="$build/fuzz-corpus/$h"
    mkdir -p "$corpus"
    log="$build/fuzz-$h.log"
    "$build/tests/fuzz/fuzz_$h" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$build/fuzz-crashes/$h-" "$corpus" "tests/fuzz/corpus/$h" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    crashes=$(find "$build/fuzz-crashes" -name "$h-*" | wc -l)
    echo "fuzz $h: ${runs:-?} runs in ${secs} s (${rate:-?}/s), exit $rc, crash files $crashes, log $log"
    if [ "$rc" -ne 0 ]; then
        status=1
        grep -m 3 -E "ERROR|runtime error|SUMMARY" "$log"
    fi
done
exit $status
