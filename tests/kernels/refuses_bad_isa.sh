#!/bin/sh
# speedlab must refuse (exit 2, the reason on stderr, no run directory) when SPEEDLAB_ISA names no
# level, rather than run and label results with a level that did not run. Usage: SPEEDLAB OUTDIR
set -u
out=$2
rm -rf "$out"
SPEEDLAB_ISA=v9 "$1" run entropy_mi --quick --out "$out" 2>"$out.err"
rc=$?
[ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc"; cat "$out.err"; exit 1; }
grep -q "SPEEDLAB_ISA=v9" "$out.err" || { echo "stderr does not name SPEEDLAB_ISA=v9:"; cat "$out.err"; exit 1; }
[ ! -e "$out" ] || { echo "a run directory was created: $out"; exit 1; }
echo "refused as expected: $(cat "$out.err")"
