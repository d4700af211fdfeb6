#!/bin/sh
# An installed speedlab finds its own plots and profiler library, wherever the tree was put: install
# into a temporary DESTDIR (a prefix that is not the configured one), run `speedlab report` on a
# fixture there, expect figures. Usage: BUILD_DIR FIXTURE_DIR; exit 77 (skip) without gnuplot.
set -u
build=$1
fixture=$2
command -v gnuplot >/dev/null 2>&1 || { echo "no gnuplot: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
meson install -C "$build" --destdir "$tmp/root" --no-rebuild --quiet >"$tmp/install.log" 2>&1 ||
    { echo "meson install failed:"; cat "$tmp/install.log"; exit 1; }
exe=$(find "$tmp/root" -type f -name speedlab -path '*/bin/*' | head -n 1)
[ -n "$exe" ] || { echo "no installed bin/speedlab under $tmp/root"; exit 1; }
# the source tree's plots and build tree's library must not be what is found
unset SPEEDLAB_PLOTS_DIR LD_LIBRARY_PATH   # and find the library by its rpath
(cd "$tmp" && "$exe" report "$fixture" --out "$tmp/out") >"$tmp/report.log" 2>&1 ||
    { echo "installed speedlab report failed:"; cat "$tmp/report.log"; exit 1; }
n=$(find "$tmp/out" -name '*.png' | wc -l)
[ "$n" -gt 0 ] || { echo "no figure rendered by the installed speedlab:"; cat "$tmp/report.log"; exit 1; }
grep -q "gnuplot scripts in $tmp/root/" "$tmp/report.log" ||
    { echo "the installed speedlab did not use its installed scripts:"; cat "$tmp/report.log"; exit 1; }
echo "installed speedlab rendered $n figures"
