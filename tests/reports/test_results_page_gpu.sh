#!/bin/sh
# scripts/results-page.sh add-gpu: a GPU node's check output (runs.tar.gz) made into a results page.
# The fixture is the committed H200 page's own records, packed as gpu-check packs them (the default
# runs, the quick runs, and a quick spans=0 rerun that must be left out); the page made from it must
# hold exactly the committed records. Then a full mode's output (runs/full: a calibration run and the
# same records, with the check's summary.txt and node.txt): the full runs are the page's, and NODE.md
# names the node, driver, CUDA libraries, frameworks and commit. Bad input is refused with exit 2. TAP
# output.
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
echo "1..10"

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

# the full mode's output: runs/full holds the page's records (a calibration run among them), the quick
# and default runs do not exist; summary.txt and node.txt beside runs.tar.gz name the window
mkdir -p "$tmp/full/runs/full/run-20261127-175300" "$tmp/full/runs/full/run-20261127-175319"
# the calibration record: the page's machine (its records' env), the CPU's ceilings
head -1 "$page/results.jsonl" | sed -n 's/.*\("env":{[^}]*}\).*/\1/p' | awk '{
    printf "{\"schema\":\"speedlab-results\",\"schema_version\":1,\"kind\":\"calibration\",\"run_id\":\"run-20261127-175300\","
    printf "\"time\":\"2026-11-27T17:53:10Z\",%s,\"threads\":16,\"ceilings\":{\"triad_gbs_1t\":12.5,\"triad_gbs\":61.0,", $0
    printf "\"fma_gflops_1t\":98.0,\"fma_gflops\":1450.0,\"sgemm_gflops\":1210.0}}\n" }' \
    >"$tmp/full/runs/full/run-20261127-175300/results.jsonl"
cp "$page/results.jsonl" "$tmp/full/runs/full/run-20261127-175319/"
tar -C "$tmp/full" -czf "$tmp/full/runs.tar.gz" runs
cat >"$tmp/full/summary.txt" <<'SUM'
speedlab gpu-check: bundle 1a2b3c4 (built 2026-11-27T10:00:00Z on Debian GNU/Linux 12 (bookworm), x86_64)
node: GPU: NVIDIA H200, 143771 MiB, 9.0; driver: 580.159.04 (CUDA 13.0); runtime: 13.0 (static); glibc 2.39; Ubuntu 24.04.1 LTS
time: 498 s of a 540 s budget

steps:
  node            ok       NVIDIA H200, 143771 MiB, 9.0, driver 580.159.04
  calibrate       ok       21 s (estimated 30 s)

verdict: ALL OK on NVIDIA H200, 143771 MiB, 9.0
SUM
cat >"$tmp/full/node.txt" <<'NODE'
== bundle
SL_BUNDLE_SOURCE='1a2b3c4'
SL_BUNDLE_CUDA_RUNTIME='13.0 (static)'

== CUDA libraries the bundle does not carry
  libcublas.so.13      /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cublas/lib (13.1.0.3 (wheel nvidia-cublas))
  libcudnn.so.9        /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib (9.19.0 (cudnn_version.h))

== CPU
Model name:                           Intel(R) Xeon(R) Processor
CPU(s):                               16
NODE
sh "$tmp/repo/scripts/results-page.sh" add-gpu "$tmp/full" h200-full >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "add-gpu from a full mode's output"; else not_ok "add-gpu from a full mode's output (exit $rc)"; sed 's/^/#   /' "$tmp/out"; fi
if cat "$tmp/full/runs/full"/run-*/results.jsonl | cmp -s - "$tmp/repo/docs/results/h200-full/results/results.jsonl" &&
    [ ! -d "$tmp/repo/docs/results/h200-full/results/extra" ]; then
    ok "the full runs' records, the calibration among them, are the page's"
else not_ok "the full runs' records, the calibration among them, are the page's"; fi
nodemd=$tmp/repo/docs/results/h200-full/NODE.md
want='^\| node \| GPU: NVIDIA H200, 143771 MiB, 9\.0; driver: 580\.159\.04 \(CUDA 13\.0\);
^\| driver \| 580\.159\.04 \(CUDA 13\.0\); CUDA 13\.0 \(driver API\) \|$
^\| toolkit \| CUDA runtime 13\.0 \(static\); libcublas\.so\.13 \(13\.1\.0\.3 \(wheel nvidia-cublas\)\) found on the node; libcudnn\.so\.9 \(9\.19\.0 \(cudnn_version\.h\)\) found on the node; cuDNN 9\.19\.0 \(loaded\) \|$
^\| frameworks \| .*torch 2\.11\.0\+cu130
^\| commit \| 1a2b3c4; de1f01c-dirty \|$
^  calibrate +ok'
bad=""
while read -r re; do grep -qE -- "$re" "$nodemd" 2>/dev/null || bad="$bad
#   no line matching: $re"; done <<EOF2
$want
EOF2
if [ -z "$bad" ]; then ok "NODE.md names the node, driver, CUDA libraries, frameworks, commit and steps"
else not_ok "NODE.md names the node, driver, CUDA libraries, frameworks, commit and steps$bad"; sed 's/^/#   /' "$nodemd" 2>/dev/null; fi
grep -q '\[REPORT.md\](report/REPORT.md)' "$nodemd" 2>/dev/null && ok "NODE.md links the report" || not_ok "NODE.md links the report"
exit $failed
