#!/bin/bash
# tests/faults/faults.sh SPEEDLAB MODE: the fault tests (docs/reliability.md), on the real speedlab command.
#   fulldisk  a file size limit (ulimit -f, SIGXFSZ ignored: write() fails with EFBIG) stands in for a
#             full disk on any machine: `run` exits 1, keeps only whole records, and its summary counts
#             only records on disk; `report` and `compare` exit 1 and leave no empty or cut file.
#   kills     runs killed with SIGKILL, SIGINT and SIGTERM at random moments leave whole records and a
#             directory that `report` reads without a skipped line; a report stopped by SIGINT, SIGTERM
#             or SIGHUP leaves no temporary file.
#   trace     --trace: a path that cannot be written (no directory, a FIFO, too long) is refused before
#             the first case (exit 2, no run directory); on a full disk the run exits 1 and a trace
#             already there stays whole (the trace is written to a temporary and renamed).
#   tmpfs     a real full disk: a 64 KiB tmpfs as --out, filled, freed when the first record
#             fails; needs mount (root or a user namespace), else exit 77 (skipped).
# Exit 0 passed, 1 failed (the first failed check is printed), 77 skipped.
set -u
SL=$1
MODE=$2
RUN_ARGS=(run entropy_mi tensor_mean --reps 1 --min-time 0 --warmup 0) # ~7 s, 55 records, 98 KB
QUICK_ARGS=("${RUN_ARGS[@]}" --quick) # 0.7 s (2 s under ASan), 22 records, 39 KB: enough to fill 12 KiB
T=$(mktemp -d /tmp/sl-faults-XXXXXX)
trap 'umount "$T/mnt" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM # a timeout's SIGTERM still unmounts and cleans up

fail() { echo "FAIL: $*"; exit 1; }

# Every line of a results file is whole: ends in a newline, and `report` skips none (exit 0, or 1 for
# a file without a case record yet).
check_whole() {
    local f=$1
    [ ! -s "$f" ] && return 0
    [ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" = '\n' ] || fail "$f does not end in a newline"
    "$SL" report "$f" --out "$T/check-report" --no-plots >/dev/null 2>"$T/check.err"
    local rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 1 ] || { cat "$T/check.err"; fail "report on $f exits $rc: a line is cut"; }
    rm -rf "$T/check-report"
}

# The summary's ok count equals the ok records in the file.
check_summary() {
    local out=$1 file=$2
    local said ondisk
    said=$(sed -n 's/^speedlab: [0-9]* cases: \([0-9]*\) ok,.*/\1/p' "$out")
    ondisk=$(grep -c '"status":"ok"' "$file")
    [ -n "$said" ] || fail "no summary line in $out"
    [ "$said" -eq "$ondisk" ] || fail "summary says $said ok, $file holds $ondisk ok records"
    echo "summary: $said ok, $ondisk ok records on disk"
}

# No empty file and no temporary left below a report directory.
check_no_cut_files() {
    local bad
    bad=$(find "$1" -type f \( -size 0 -o -name '*.tmp-*' -o -name '.speedlab-tmp-*' \) 2>/dev/null | head -3)
    [ -z "$bad" ] || fail "empty or temporary files left: $bad"
}

fulldisk() {
    # 12 KiB: a few of the run's ~2 KB records fit, the rest hit the limit part-way.
    (trap '' XFSZ; ulimit -f 12; exec "$SL" "${QUICK_ARGS[@]}" --out "$T/res") >"$T/run.out" 2>"$T/run.err"
    local rc=$?
    [ $rc -eq 1 ] || fail "run on a full disk exits $rc, expected 1"
    check_whole "$T/res/latest/results.jsonl"
    check_summary "$T/run.out" "$T/res/latest/results.jsonl"
    grep -q 'cut back to the last whole record' "$T/run.err" || fail "run does not say a record was lost"
    grep -q 'records NOT written' "$T/run.out" || fail "the summary does not count the lost records"
    # report and compare on a full disk: exit 1, nothing empty or cut.
    (trap '' XFSZ; ulimit -f 2; exec "$SL" report "$T/res" --out "$T/rep" --no-plots) >/dev/null 2>"$T/rep.err"
    rc=$?
    [ $rc -eq 1 ] || fail "report on a full disk exits $rc, expected 1"
    check_no_cut_files "$T/rep"
    # no byte may be written: compare's table of the few whole records can be under a 1 KiB limit
    (trap '' XFSZ; ulimit -f 0; exec "$SL" compare "$T/res" "$T/res" --out "$T/cmp.md") >/dev/null 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "compare --out on a full disk exits $rc, expected 1"
    [ ! -e "$T/cmp.md" ] || fail "compare left a cut $T/cmp.md"
    if [ -w /dev/full ]; then # standard output on a full disk
        "$SL" compare "$T/res" "$T/res" >/dev/full 2>/dev/null
        rc=$?
        [ $rc -eq 1 ] || fail "compare to a full standard output exits $rc, expected 1"
        for cmd in list "plan tensor_mean --quick" --version; do
            # shellcheck disable=SC2086  # the command's words
            "$SL" $cmd >/dev/full 2>"$T/full.err"
            rc=$?
            [ $rc -eq 1 ] || fail "speedlab $cmd to a full standard output exits $rc, expected 1"
            grep -q 'writing standard output failed' "$T/full.err" || fail "speedlab $cmd: no message"
        done
    fi
    "$SL" report "$T/res" --out "$T/rep-ok" --no-plots >/dev/null 2>&1 || fail "report with space exits $?"
    echo "fulldisk: run, report and compare exit 1; records whole"
}

kills() {
    local n=0
    for sig in KILL INT TERM KILL INT TERM; do
        local out="$T/k$n"
        "$SL" "${RUN_ARGS[@]}" --out "$out" >/dev/null 2>&1 &
        local pid=$!
        sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
        kill -"$sig" $pid 2>/dev/null
        wait $pid
        local rc=$? lines=0
        [ -f "$out/latest/results.jsonl" ] && lines=$(wc -l <"$out/latest/results.jsonl")
        echo "SIG$sig: exit $rc, $lines records"
        [ -f "$out/latest/results.jsonl" ] && check_whole "$out/latest/results.jsonl"
        n=$((n + 1))
    done
    echo "kills: every results file whole and reportable"
    # report stopped part-way (with figures, the slow part): no temporary left beside its outputs
    local res="$T/k0/latest"
    [ -d "$res" ] || res=$T/k1/latest
    for sig in INT TERM HUP INT TERM HUP; do
        "$SL" report "$res" --out "$T/rep-killed" >/dev/null 2>&1 &
        local pid=$!
        sleep "0.$((RANDOM % 5))$((RANDOM % 10))"
        kill -"$sig" $pid 2>/dev/null
        wait $pid
        local left
        left=$(find "$T/rep-killed" \( -name '*.tmp-*' -o -name '.speedlab-tmp-*' \) 2>/dev/null | head -3)
        [ -z "$left" ] || fail "report killed by SIG$sig left temporaries: $left"
    done
    echo "kills: a report stopped by SIGINT, SIGTERM or SIGHUP leaves no temporary"
}

trace() {
    local targs=(run mlp --quick --variants simd --param train_rows=2048 --param fused=0 --param epochs=1)
    mkfifo "$T/fifo"
    local long
    long=$T/$(printf 'd%.0s' $(seq 300))/t.json
    for bad in "$T/no/such/dir/t.json" "$T/fifo" "$long"; do
        "$SL" "${targs[@]}" --trace "$bad" --out "$T/tr-bad" >"$T/tr.out" 2>"$T/tr.err"
        local rc=$?
        [ $rc -eq 2 ] || fail "--trace ${bad:0:60}... exits $rc, expected 2 before any case"
        grep -q -- '--trace' "$T/tr.err" || fail "--trace ${bad:0:60}...: no message naming --trace"
        [ ! -e "$T/tr-bad" ] || fail "--trace ${bad:0:60}...: a run directory was made before the refusal"
    done
    # A whole trace from an earlier run, then a run whose trace (~60 KB) does not fit 32 KiB (its
    # ~4 KB record does): exit 1, the earlier trace unchanged, no temporary left.
    "$SL" "${targs[@]}" --trace "$T/t.json" --out "$T/tr-ok" >/dev/null 2>&1 || fail "a traced run exits $?"
    [ "$(tail -c 4 "$T/t.json")" = '}}}' ] || fail "the trace does not end as a whole trace does"
    local sum
    sum=$(cksum <"$T/t.json")
    (trap '' XFSZ; ulimit -f 32; exec "$SL" "${targs[@]}" --trace "$T/t.json" --out "$T/tr-full") \
        >"$T/tr.out" 2>"$T/tr.err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$T/tr.err"; fail "a run whose trace does not fit exits $rc, expected 1"; }
    grep -q 'writing the trace' "$T/tr.err" || fail "the lost trace is not said"
    [ "$(cksum <"$T/t.json")" = "$sum" ] || fail "the earlier whole trace was overwritten"
    [ -z "$(find "$T" -maxdepth 1 \( -name 't.json.tmp-*' -o -name '.speedlab-tmp-*t.json' \))" ] || fail "a temporary trace was left"
    check_whole "$T/tr-full/latest/results.jsonl"
    echo "trace: bad paths refused first; a full disk keeps the last whole trace and exits 1"
}

tmpfs() {
    mkdir -p "$T/mnt"
    mount -t tmpfs -o size=64k tmpfs "$T/mnt" 2>/dev/null || { echo "cannot mount a tmpfs: skipped"; exit 77; }
    dd if=/dev/zero of="$T/mnt/filler" bs=1k count=40 2>/dev/null # ~24 KiB left: the run fills it
    "$SL" "${QUICK_ARGS[@]}" --out "$T/mnt/res" >"$T/run.out" 2>"$T/run.err" &
    local pid=$!
    for _ in $(seq 600); do # free the space when the first record fails, as a user would
        grep -q 'writing a record' "$T/run.err" && { rm -f "$T/mnt/filler"; break; }
        kill -0 $pid 2>/dev/null || break
        sleep 0.05
    done
    wait $pid
    local rc=$?
    [ $rc -eq 1 ] || fail "run on a full tmpfs exits $rc, expected 1"
    check_whole "$T/mnt/res/latest/results.jsonl"
    check_summary "$T/run.out" "$T/mnt/res/latest/results.jsonl"
    cp "$T/mnt/res/latest/results.jsonl" "$T/results.jsonl"
    dd if=/dev/zero of="$T/mnt/filler2" bs=1k count=64 2>/dev/null # full again
    "$SL" report "$T/results.jsonl" --out "$T/mnt/rep" --no-plots >/dev/null 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "report onto a full tmpfs exits $rc, expected 1"
    check_no_cut_files "$T/mnt/rep"
    "$SL" compare "$T/results.jsonl" "$T/results.jsonl" --out "$T/mnt/cmp.md" >/dev/null 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "compare onto a full tmpfs exits $rc, expected 1"
    echo "tmpfs: run, report and compare exit 1; no record lost"
}

case $MODE in
fulldisk) fulldisk ;;
kills) kills ;;
trace) trace ;;
tmpfs) tmpfs ;;
*) echo "usage: faults.sh SPEEDLAB fulldisk|kills|trace|tmpfs"; exit 2 ;;
esac
exit 0
