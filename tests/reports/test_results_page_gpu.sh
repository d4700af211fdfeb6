#!/bin/sh
# scripts/results-page.sh add-gpu: a GPU node's check output (runs.tar.gz) made into a results page.
# The fixture is the committed H200 page's own records, packed as gpu-check packs them (the default
# runs, the quick runs, and a quick spans=0 rerun that must be left out); the page made from it must
# hold exactly the committed records. Bad input is refused with exit 2. TAP output.
# Usage: test_results_page_gpu.sh SOURCE_ROOT (SPEEDLAB: the speedlab to render with)
set -u
src=$1
page=$src/docs/results/h200-gpu-check/results
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
command -v gnuplot >/dev/null || { echo "1..0 # SKIP no gnuplot: a page's report embeds figures"; exit 0; }
export SPEEDLAB_PLOTS_DIR="$src/plots"
echo "1..6"

# the node's side: runs/default/run-A (the page's records), runs/quick/run-* (its extra/ runs), and a
# spans=0 rerun of one quick run
mkdir -p "$tmp/node/runs/default/run-20261127-175319" "$tmp/node/runs/quick" "$tmp/repo/scripts" "$tmp/repo/docs/results"
cp "$page/results.jsonl" "$tmp/node/runs/default/run-20261127-175319/"
for d in "$page"/extra/run-*; do cp -r "$d" "$tmp/node/runs/quick/"; done
mkdir -p "$tmp/node/runs/quick/run-20261127-999999"
sed 's/"spans":"1"/"spans":"0"/' "$page"/extra/run-*/results.jsonl | grep '"spans":"0"' \
    >"$tmp/node/runs/quick/run-20261127-999999/results.jsonl"
[ -s "$tmp/node/runs/quick/run-20261127-999999/results.jsonl" ] || { echo "Bail out! no spans record in the page"; exit 1; }
tar -C "$tmp/node" -czf "$tmp/node/runs.tar.gz" runs
cp "$src/scripts/results-page.sh" "$tmp/repo/scripts/"

sh "$tmp/repo/scripts/results-page.sh" add-gpu "$tmp/node" h200 >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "add-gpu from the output folder"; else not_ok "add-gpu from the output folder (exit $rc)"; sed 's/^/#   /' "$tmp/out"; fi
if diff -r "$page" "$tmp/repo/docs/results/h200/results" >"$tmp/diff"; then
    ok "the page holds the default and quick records, not the spans=0 rerun"
else not_ok "the page holds the default and quick records, not the spans=0 rerun"; sed 's/^/#   /' "$tmp/diff" | head -20; fi
if [ -f "$tmp/repo/docs/results/h200/report/REPORT.md" ]; then ok "its report rendered"; else not_ok "its report rendered"; fi

sh "$tmp/repo/scripts/results-page.sh" add-gpu "$tmp/none" x >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "give gpu-check's output folder or its runs.tar.gz" "$tmp/out"; then ok "a missing folder is refused"
else not_ok "a missing folder is refused (exit $rc)"; sed 's/^/#   /' "$tmp/out"; fi
mkdir -p "$tmp/empty/runs/quick/run-1" && tar -C "$tmp/empty" -czf "$tmp/empty.tar.gz" runs
sh "$tmp/repo/scripts/results-page.sh" add-gpu "$tmp/empty.tar.gz" y >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "no records in its runs" "$tmp/out" && [ ! -d "$tmp/repo/docs/results/y" ]; then
    ok "a check that ran no study makes no page"
else not_ok "a check that ran no study makes no page (exit $rc)"; sed 's/^/#   /' "$tmp/out"; fi
printf 'not a tarball\n' >"$tmp/bad.tar.gz"
sh "$tmp/repo/scripts/results-page.sh" add-gpu "$tmp/bad.tar.gz" x >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 2 ] && grep -q "not gpu-check's runs.tar.gz" "$tmp/out" && [ ! -d "$tmp/repo/docs/results/x" ]; then
    ok "a file that is not gpu-check's runs.tar.gz is refused, and no page is made"
else not_ok "a file that is not gpu-check's runs.tar.gz is refused (exit $rc)"; sed 's/^/#   /' "$tmp/out"; fi
exit $failed
