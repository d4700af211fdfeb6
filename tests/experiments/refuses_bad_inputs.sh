#!/bin/sh
# Bad --param and --seed values, through the real speedlab: values that once crashed a run or ran
# something other than what the record said are refused with exit 2 before any case runs, the message
# names the flag, the study, the value and what is accepted, and no run directory is made (so `latest`
# still points at the last real run). Usage: SPEEDLAB OUTDIR
set -u
sl=$1
out=$2
rm -rf "$out" "$out.err"
fails=0

# refuse WANT ARGS...: speedlab run ARGS must exit 2, say WANT on stderr, and leave no $out.
refuse() {
    want=$1
    shift
    "$sl" run "$@" --out "$out" 2>"$out.err" >/dev/null
    rc=$?
    if [ "$rc" -ne 2 ]; then
        echo "FAIL: speedlab run $*: exit $rc, want 2"; cat "$out.err"; fails=$((fails + 1))
    elif ! grep -qF -- "$want" "$out.err"; then
        echo "FAIL: speedlab run $*: stderr does not say '$want':"; cat "$out.err"; fails=$((fails + 1))
    elif [ -e "$out" ]; then
        echo "FAIL: speedlab run $*: a run directory was made"; fails=$((fails + 1))
    else
        echo "ok: speedlab run $*: $(cat "$out.err")"
    fi
    rm -rf "$out"
}

# item 5: max_iter + 1 overflowed an int, malloc failed, NULL was used (segfault)
refuse "--param max_iter=2147483647 (study galaxy): want an integer from 1 to 1000000" \
    galaxy --quick --param max_iter=2147483647
# item 6: ran 8 hidden units / 20 iterations while the record said the text given
refuse "--param hidden=4294967304 (study galaxy): want an integer from 1 to 64" galaxy --quick --param hidden=4294967304
refuse "max_iter=4294967316" galaxy --quick --param max_iter=4294967316
refuse "--param lambda=-1 (study galaxy): want a number from 0 to" galaxy --quick --param lambda=-1
# a bad value for the second study is refused before the first study's cases run
refuse "--param lambda=nan (study galaxy)" entropy_mi galaxy --quick --param lambda=nan
refuse "--param cache=hot (study pipeline): want one of warm|cold" entropy_mi pipeline --quick --param cache=hot
# seeds: digits only, 0 to 2^64-1
refuse "--seed ' -5'" entropy_mi --quick --seed " -5"
refuse "--seed '18446744073709551616'" entropy_mi --quick --seed 18446744073709551616
# flag values: no leading space or sign
refuse "--reps ' 3'" entropy_mi --quick --reps " 3"

# item 10: --counters past its limits says which limit, not just "malformed"
many=$(i=0; s=PAPI_TOT_INS; while [ $i -lt 199 ]; do s="$s,PAPI_TOT_INS"; i=$((i + 1)); done; echo $s)
refuse "200 event names" entropy_mi --quick --counters "$many"
long=$(printf '%05000d' 0 | tr 0 A)
refuse "is 5000 characters long; at most 127" entropy_mi --quick --counters "$long"

rm -f "$out.err"
[ "$fails" -eq 0 ] || { echo "$fails refusal(s) missing"; exit 1; }
