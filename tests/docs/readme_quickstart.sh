#!/bin/sh
# tests/docs/readme_quickstart.sh SOURCE_ROOT BUILD_ROOT: the README's quick start, pasted line by line
# as a user would after the set-up (the indented lines after "After the set-up above:"), in an empty
# directory, with $PWD/build standing for BUILD_ROOT and the build step left out (meson built it). It
# must leave the report the README describes: REPORT.md opening with the findings, and entropy_mi's
# page with its speedup figure beside it.
set -u
src=$1
build=$(cd "$2" && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
awk '/^After the set-up above:/ {f = 1; next} f && /^    / {sub(/^    /, ""); print; n++; next} f && n {exit}' \
    "$src/README.md" | grep -v '^ninja -C build' | sed "s|\$PWD/build|$build|g" >"$tmp/steps.sh"
[ "$(wc -l <"$tmp/steps.sh")" -ge 3 ] || { echo "FAIL: no quick start found in README.md"; exit 1; }
echo "# the README's quick start:"; sed 's/^/#   /' "$tmp/steps.sh"
mkdir "$tmp/work"
(cd "$tmp/work" && sh -e ../steps.sh) >"$tmp/out.txt" 2>&1 || { tail -20 "$tmp/out.txt"; echo "FAIL: a line failed"; exit 1; }
r=$tmp/work/results/latest/report
grep -q '^## Findings' "$r/REPORT.md" 2>/dev/null || { echo "FAIL: no REPORT.md with its findings in $r"; exit 1; }
ls "$r"/*/entropy_mi.md >/dev/null 2>&1 || { echo "FAIL: no entropy_mi page"; exit 1; }
if command -v gnuplot >/dev/null; then
    ls "$r"/*/figures/entropy_mi-speedup.png >/dev/null 2>&1 || { echo "FAIL: no speedup figure"; exit 1; }
fi
grep -q 'of the roofline' "$r/REPORT.md" || { echo "FAIL: no roofline fraction (was --calibrate dropped?)"; exit 1; }
echo "ok: the quick start leaves the report the README describes"
