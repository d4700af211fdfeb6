#!/bin/bash
# tests/faults/safe_paths.sh SPEEDLAB SOURCE_ROOT: what `report`, `compare`, `plan` and `slurm` read and
# write, against files that are not what they seem (docs/reliability.md, "Reads only results", "Outputs
# go only where asked", "A kill leaves nothing that lasts"). Each check is a reproducer: it failed before
# common/safefile.c. A hang is caught by `timeout` (exit 124) and is a failure.
#   reads    RUN/trace.json as a FIFO (report must not hang) or a link to another file (must not quote
#            it); a trace or record that is not JSON is reported by place, never by its text
#   writes   compare --out over a FIFO, a device or a link; report --out OUT whose folder below OUT is
#            a link out of it; plan --out DIR whose cases.tsv is a link, a
#            FIFO (plan and slurm must not hang); a full disk (a file size limit, and a real tmpfs where
#            mount is permitted) keeps the earlier cases.tsv whole; a trace on another file system is
#            copied into the run, never linked
#   kills    a report killed by SIGKILL while its figures are drawn leaves temporaries; the next report
#            removes them (those of live processes and of other hosts stay)
# Exit 0 passed, 1 failed (every failed check is printed).
set -u
SL=$1
SRC=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/sl-paths-XXXXXX")
trap 'umount "$T/mnt" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
LIMIT=20 # seconds: a command that waits on a FIFO is stopped here and counted as a hang

# A run directory of its own (the committed fixture, copied: tests never write into the tree).
cp -r "$SRC/tests/reports/fixtures/kernel/run-20261122-100000" "$T/run"
SECRET='SECRET-5f3a9 must never be shown'

reads() {
    # FIFO: report must not wait on it, and must name it
    mkfifo "$T/run/trace.json"
    timeout $LIMIT "$SL" report "$T/run" --out "$T/r1" --no-plots >/dev/null 2>"$T/r1.err"
    rc=$?
    if [ $rc -eq 124 ]; then fail "report hangs on a FIFO trace.json"
    elif [ $rc -ne 3 ]; then fail "report with a FIFO trace.json exits $rc, expected 3 (an input skipped)"
    elif ! grep -q "$T/run/trace.json.*FIFO" "$T/r1.err"; then fail "report does not name the FIFO trace.json: $(cat "$T/r1.err")"
    else ok "report refuses the FIFO trace.json (exit $rc): $(grep FIFO "$T/r1.err")"; fi
    rm -f "$T/run/trace.json"

    # a link out of the run: never read, never quoted
    printf '%s\nroot:x:0:0\n' "$SECRET" > "$T/outside"
    ln -s "$T/outside" "$T/run/trace.json"
    timeout $LIMIT "$SL" report "$T/run" --out "$T/r2" --no-plots >/dev/null 2>"$T/r2.err"
    if grep -rq "SECRET" "$T/r2" "$T/r2.err"; then fail "report quotes the file trace.json links to"
    elif ! grep -q "$T/run/trace.json.*symbolic link" "$T/r2.err"; then fail "report does not name the linked trace.json: $(cat "$T/r2.err")"
    else ok "report refuses the linked trace.json: $(grep 'symbolic link' "$T/r2.err")"; fi
    rm -f "$T/run/trace.json"

    # a regular trace.json that is not JSON: where, and what was expected, never its text
    cp "$T/outside" "$T/run/trace.json"
    timeout $LIMIT "$SL" report "$T/run" --out "$T/r3" --no-plots >/dev/null 2>"$T/r3.err"
    if grep -rq "SECRET" "$T/r3" "$T/r3.err"; then fail "report's JSON error about trace.json quotes it"
    elif ! grep -q "trace.json.*not readable as JSON.*line 1" "$T/r3/REPORT.md"; then fail "REPORT.md does not say where trace.json is bad"
    else ok "trace.json not JSON: $(grep -o 'not readable as JSON[^;]*' "$T/r3/REPORT.md")"; fi
    rm -f "$T/run/trace.json"

    # a results line that is not JSON: file:line, never the line
    cp -r "$T/run" "$T/run-bad"
    printf '%s\n' "$SECRET" >> "$T/run-bad/results.jsonl"
    timeout $LIMIT "$SL" report "$T/run-bad" --out "$T/r4" --no-plots >/dev/null 2>"$T/r4.err"
    if grep -rq "SECRET" "$T/r4" "$T/r4.err"; then fail "report's error about a results line quotes it"
    elif ! grep -q "results.jsonl:[0-9]*: not a JSON object" "$T/r4.err"; then fail "report does not say which line is bad: $(cat "$T/r4.err")"
    else ok "a results line not JSON: $(grep -o 'results.jsonl:[0-9]*: not a JSON object ([^)]*)' "$T/r4.err")"; fi

    # a results file below the folder that links out of it is not read
    ln -s "$T/outside" "$T/run-bad/more.jsonl"
    timeout $LIMIT "$SL" report "$T/run-bad" --out "$T/r5" --no-plots >/dev/null 2>"$T/r5.err"
    if grep -rq "SECRET" "$T/r5" "$T/r5.err"; then fail "report reads a .jsonl link out of the folder"
    else ok "a .jsonl link out of the folder is not read"; fi
}

# check_kept WHAT PATH TEST: PATH must still pass `test TEST` (-p FIFO, -c device, -L link)
check_kept() { [ "$3" "$2" ] || fail "$1: $2 was replaced"; }

writes() {
    # compare --out over a FIFO, a device, a link: refused, named, left as it was
    mkfifo "$T/fifo"
    ln -s "$T/victim" "$T/link"
    echo "keep me" > "$T/victim"
    local targets=("$T/fifo:-p" "$T/link:-L")
    if mknod "$T/null" c 1 3 2>/dev/null; then targets+=("$T/null:-c"); else echo "skip: mknod not permitted (no device test)"; fi
    for tt in "${targets[@]}"; do
        local d=${tt%:*} kind=${tt##*:}
        timeout $LIMIT "$SL" compare "$T/run" "$T/run" --out "$d" >/dev/null 2>"$T/c.err"
        rc=$?
        check_kept "compare --out $d" "$d" "$kind"
        if [ $rc -eq 124 ]; then fail "compare --out $d hangs"
        elif [ $rc -eq 0 ]; then fail "compare --out $d exits 0"
        elif ! grep -q "$d" "$T/c.err"; then fail "compare --out $d does not name it: $(cat "$T/c.err")"
        else ok "compare --out $d refused (exit $rc): $(grep -F "$d" "$T/c.err" | head -1)"; fi
    done
    [ "$(cat "$T/victim")" = "keep me" ] || fail "compare wrote through the link"

    # report --out OUT whose machine folder is a link out of OUT: nothing is written through it
    mkdir -p "$T/ro" "$T/elsewhere"
    ln -s "$T/elsewhere" "$T/ro/devbox"
    timeout $LIMIT "$SL" report "$T/run" --out "$T/ro" --no-plots >/dev/null 2>"$T/ro.err"
    rc=$?
    if [ -n "$(ls -A "$T/elsewhere")" ]; then fail "report wrote through the linked folder OUT/devbox: $(ls "$T/elsewhere" | head -3)"
    elif [ $rc -ne 1 ]; then fail "report with a linked OUT/devbox exits $rc, expected 1"
    elif ! grep -q "$T/ro/devbox.*symbolic link" "$T/ro.err"; then fail "report does not name the linked folder: $(head -3 "$T/ro.err")"
    else ok "report refuses to write through the linked OUT/devbox (exit $rc): $(grep -m1 'symbolic link' "$T/ro.err")"; fi

    # plan --out DIR whose cases.tsv is a link: the file it points to is not written
    mkdir -p "$T/plan-link"
    ln -s "$T/victim" "$T/plan-link/cases.tsv"
    timeout $LIMIT "$SL" plan tensor_mean --quick --out "$T/plan-link" >/dev/null 2>"$T/p.err"
    rc=$?
    check_kept "plan --out" "$T/plan-link/cases.tsv" -L
    if [ "$(cat "$T/victim")" != "keep me" ]; then fail "plan wrote through the link cases.tsv"
    elif [ $rc -eq 0 ]; then fail "plan over a link cases.tsv exits 0"
    else ok "plan refuses the link cases.tsv (exit $rc): $(head -1 "$T/p.err")"; fi

    # plan and slurm with a FIFO cases.tsv: no hang, refused
    for cmd in plan slurm; do
        rm -rf "$T/fifo-$cmd"
        mkdir -p "$T/fifo-$cmd"
        mkfifo "$T/fifo-$cmd/cases.tsv"
        timeout $LIMIT "$SL" $cmd tensor_mean --quick --out "$T/fifo-$cmd" >/dev/null 2>"$T/f.err"
        rc=$?
        check_kept "$cmd --out" "$T/fifo-$cmd/cases.tsv" -p
        if [ $rc -eq 124 ]; then fail "$cmd hangs on a FIFO cases.tsv"
        elif [ $rc -eq 0 ]; then fail "$cmd with a FIFO cases.tsv exits 0"
        elif ! grep -q "cases.tsv.*FIFO" "$T/f.err"; then fail "$cmd does not name the FIFO: $(cat "$T/f.err")"
        else ok "$cmd refuses the FIFO cases.tsv (exit $rc): $(head -1 "$T/f.err")"; fi
    done

    # full disk (a file size limit): the earlier cases.tsv stays whole
    mkdir -p "$T/plan-full"
    "$SL" plan tensor_mean --quick --out "$T/plan-full" >/dev/null 2>&1 || fail "plan tensor_mean --quick fails"
    cp "$T/plan-full/cases.tsv" "$T/cases.before"
    (trap '' XFSZ; ulimit -f 1; exec "$SL" plan tensor_mean entropy_mi galaxy --out "$T/plan-full") >/dev/null 2>"$T/full.err"
    rc=$?
    if ! cmp -s "$T/cases.before" "$T/plan-full/cases.tsv"; then
        fail "plan on a full disk changed the earlier cases.tsv ($(wc -c < "$T/plan-full/cases.tsv") bytes, was $(wc -c < "$T/cases.before"))"
    elif [ $rc -eq 0 ]; then fail "plan on a full disk exits 0"
    else ok "plan on a full disk (file size limit): exit $rc, the earlier cases.tsv whole"; fi
    leftover=$(find "$T/plan-full" -name '*tmp*')
    [ -z "$leftover" ] || fail "plan on a full disk left $leftover"

    # a real full disk: a 16 KiB tmpfs, where mount is permitted
    mkdir -p "$T/mnt"
    if mount -t tmpfs -o size=16k tmpfs "$T/mnt" 2>/dev/null; then
        "$SL" plan tensor_mean --quick --out "$T/mnt" >/dev/null 2>&1 || fail "plan into the tmpfs fails"
        cp "$T/mnt/cases.tsv" "$T/cases.before"
        head -c 12000 /dev/zero > "$T/mnt/filler" 2>/dev/null
        "$SL" plan tensor_mean entropy_mi galaxy --out "$T/mnt" >/dev/null 2>"$T/full.err"
        rc=$?
        if ! cmp -s "$T/cases.before" "$T/mnt/cases.tsv"; then fail "plan on a full tmpfs cut the earlier cases.tsv"
        elif [ $rc -eq 0 ]; then fail "plan on a full tmpfs exits 0"
        else ok "plan on a full tmpfs: exit $rc, the earlier cases.tsv whole: $(head -1 "$T/full.err")"; fi
        umount "$T/mnt"
        # a trace on another file system: RUN/trace.json is a copy, not a link out of the run
        mount -t tmpfs -o size=4m tmpfs "$T/mnt" || fail "second tmpfs mount"
        "$SL" run tensor_mean --quick --reps 1 --min-time 0 --warmup 0 --trace "$T/mnt/t.json" \
            --out "$T/traced" >/dev/null 2>"$T/traced.err" || fail "run --trace on a tmpfs: $(cat "$T/traced.err")"
        local tj="$T/traced/latest/trace.json"
        if [ -L "$tj" ] || [ ! -f "$tj" ]; then fail "$tj is not a regular file of the run"
        elif ! "$SL" report "$T/traced/latest" --out "$T/traced-rep" --no-plots >/dev/null 2>&1 ||
             ! grep -q "regions on" "$T/traced-rep/REPORT.md"; then fail "report draws no timeline from the copied trace"
        else ok "a trace on another file system is copied into the run, and report reads it"; fi
        umount "$T/mnt"
    else
        echo "skip: mount not permitted (no tmpfs tests)"
    fi
}

kills() {
    # A gnuplot that starts its image, then kills the report (its parent) with SIGKILL: the report dies
    # holding temporaries, deterministically, with or without a real gnuplot.
    mkdir -p "$T/bin"
    cat > "$T/bin/gnuplot" <<'GP'
#!/bin/sh
out=$(printf '%s\n' "$2" | sed -n "s/.*outfile='\([^']*\)'.*/\1/p")
[ -n "$out" ] && : > "$out"
kill -KILL $PPID
sleep 1
GP
    chmod +x "$T/bin/gnuplot"
    PATH="$T/bin:$PATH" "$SL" report "$T/run" --out "$T/rk" >/dev/null 2>&1
    rc=$?
    [ $rc -eq 137 ] || fail "the planted gnuplot did not kill the report (exit $rc)"
    sleep 1.2 # the planted gnuplot is gone too
    local left
    left=$(find "$T/rk" -name '*tmp*' | wc -l)
    [ "$left" -gt 0 ] || fail "the killed report left no temporary: the check cannot see one"
    # temporaries that must stay: a live process's, and one of another host (its PID means nothing here)
    local host
    host=$(hostname | tr -c 'A-Za-z0-9.\n-' '-' | cut -c1-32)
    : > "$T/rk/.speedlab-tmp-$$_${host}_live.md"
    : > "$T/rk/.speedlab-tmp-999999_other-node_elsewhere.md"
    "$SL" report "$T/run" --out "$T/rk" --no-plots >/dev/null 2>&1
    local after
    after=$(find "$T/rk" -name '*tmp*' ! -name "*_live.md" ! -name '*_elsewhere.md')
    if [ -n "$after" ]; then fail "the next report leaves the killed one's temporaries: $after"
    else ok "a report killed by SIGKILL left $left temporaries; the next report removed them"; fi
    [ -e "$T/rk/.speedlab-tmp-$$_${host}_live.md" ] || fail "a live process's temporary was removed"
    [ -e "$T/rk/.speedlab-tmp-999999_other-node_elsewhere.md" ] || fail "another host's temporary was removed"
}

reads
writes
kills
[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
