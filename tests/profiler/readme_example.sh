#!/bin/sh
# tests/profiler/readme_example.sh SOURCE_ROOT BUILD_ROOT [SANITIZE]: the README's profiler example, pasted as a
# user would: its C block and its two shell lines (from "The profiler in your own code"), with $PWD/build
# standing for BUILD_ROOT. The program must compile against the uninstalled library and print a
# TimerStats table with both regions. 77 without a C compiler or pkg-config, or when the library was
# built with sanitizers (SANITIZE other than none: a plain cc cannot link it).
set -u
case ${3:-none} in none) ;; *) echo "a library built with -Db_sanitize=$3: skipped"; exit 77 ;; esac
src=$1
build=$(cd "$2" && pwd)
command -v cc >/dev/null && command -v pkg-config >/dev/null || { echo "no cc or pkg-config: skipped"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# the C block after the heading, and the indented lines after "From the repository root"
awk '/^## The profiler in your own code/ {s = 1} s && /^```c/ {c = 1; next} c && /^```/ {exit} c' \
    "$src/README.md" >"$tmp/saxpy.c"
awk '/^## The profiler in your own code/ {s = 1} s && /^From the repository root/ {f = 1; next}
     f && /^    / {sub(/^    /, ""); print; n++; next} f && n {exit}' "$src/README.md" >"$tmp/steps.sh"
[ -s "$tmp/saxpy.c" ] && [ "$(wc -l <"$tmp/steps.sh")" -eq 2 ] ||
    { echo "FAIL: the README's example (a C block and two command lines) was not found"; exit 1; }
sed -i "s|\$PWD/build|$build|g" "$tmp/steps.sh"
echo "# the README's commands:"; sed 's/^/#   /' "$tmp/steps.sh"
(cd "$tmp" && sh ./steps.sh) >"$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; echo "FAIL: the example did not build or run"; exit 1; }
cat "$tmp/out.txt"
grep -q '^TimerStats' "$tmp/out.txt" && grep -q '^fill ' "$tmp/out.txt" && grep -q '^saxpy ' "$tmp/out.txt" ||
    { echo "FAIL: no TimerStats table with the regions fill and saxpy"; exit 1; }
echo "ok: the README's profiler example builds and prints its regions"
