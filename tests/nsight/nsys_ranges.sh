#!/bin/sh
# nsys_ranges.sh SPEEDLAB NSYS_RANGES_PY: profile a short CPU run (mlp, simd, quick) under Nsight
# Systems with NVTX and OS-runtime tracing, print `nsys stats`' NVTX summary, then check with
# nsys_ranges.py that every region of the record's profile is an NVTX range of the `speedlab` domain
# with the same nesting and as many instances (docs/nsight.md). 77 when no nsys is found: $NSYS, PATH,
# then where `scripts/setup.sh --nsys` puts it.
set -u
speedlab=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
check=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
nsys=${NSYS:-}
if [ -z "$nsys" ]; then
    for c in "$(command -v nsys 2>/dev/null)" /opt/speedlab/nsight-systems/target-linux-x64/nsys; do
        [ -n "$c" ] && [ -x "$c" ] && { nsys=$c; break; }
    done
fi
[ -n "$nsys" ] || { echo "nsys_ranges: no nsys (install it: sh scripts/setup.sh --nsys build); skipped"; exit 77; }
command -v python3 >/dev/null || { echo "nsys_ranges: no python3 (nsys stats needs it); skipped"; exit 77; }
echo "nsys_ranges: $("$nsys" --version 2>&1 | head -1) at $nsys"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nsys_ranges.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$tmp" || exit 1

# No CPU sampling or context switches: these VMs have no PMU, and sampling is not what is checked.
"$nsys" profile --trace=nvtx,osrt --sample=none --cpuctxsw=none -o "$tmp/mlp" \
    "$speedlab" run mlp --variants simd --quick --reps 2 --out "$tmp/res" >"$tmp/profile.log" 2>&1 ||
    { cat "$tmp/profile.log"; echo "nsys_ranges: nsys profile failed (above)"; exit 1; }
[ -f "$tmp/mlp.nsys-rep" ] ||
    { cat "$tmp/profile.log"; echo "nsys_ranges: no mlp.nsys-rep (nsys could not import its capture: above)"; exit 1; }

# The report names changed between versions (nvtxsum in 2022.x, nvtx_sum later).
stats() { "$nsys" stats -q --format csv --report "$1" "$tmp/mlp.nsys-rep" 2>"$tmp/stats.err"; }
sum=nvtx_sum; trace=nvtx_pushpop_trace
"$nsys" stats --help-reports 2>/dev/null | grep -q '^ *nvtx_sum' || { sum=nvtxsum; trace=nvtxpptrace; }
echo "nsys_ranges: nsys stats --report $sum"
stats $sum || { cat "$tmp/stats.err"; exit 1; }
stats $trace >"$tmp/trace.csv" || { cat "$tmp/stats.err"; exit 1; }
python3 "$check" "$tmp/trace.csv" "$tmp"/res/run-*/results.jsonl
