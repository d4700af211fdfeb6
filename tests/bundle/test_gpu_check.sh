#!/bin/sh
# scripts/gpu-check.sh's logic on a node with a (fake) GPU, without one: a fake bundle whose speedlab
# writes the records a GPU node would (tests/bundle/fake/speedlab), two CUDA tests (one passes, one
# fails), an nvidia-smi that lists a GPU and an ncu. The summary must show each GPU case with its status,
# phases, VRAM and the error of the failed one, the events' cost from the spans=0 run, the failed test,
# ncu's kernel in range and a copies-only study (and a failed ncu step for kernels outside the range);
# the verdict FAILED with exit 1; eight output files. Then a budget too small for the studies: they are
# skipped and said to be. The full mode (--full, --plan) with the real study list (SPEEDLAB: the build's
# speedlab) and the records the bundle carries: the plan fits the default budget, its steps run in
# order, and a short budget cuts the last ones. TAP output. Usage: test_gpu_check.sh SOURCE_ROOT SPEEDLAB
set -u
src=$1
real_sl=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
has() { # has DESCRIPTION FILE PATTERN: a line of FILE matches the extended regex PATTERN
    if grep -qE -- "$3" "$2"; then ok "$1"; else not_ok "$1"; echo "# no line matching: $3"; sed 's/^/#   /' "$2"; fi
}

b=$tmp/speedlab-gpu
mkdir -p "$b/bin" "$b/lib" "$b/share/speedlab/plots" "$b/share/speedlab/data" "$tmp/path"
cp "$src/scripts/gpu-check.sh" "$b/"
cp "$src/scripts/bundle/find-cuda-libs.sh" "$src/scripts/bundle/check-libs.sh" "$src/scripts/bundle/full-plan.sh" "$b/share/speedlab/"
sh "$src/scripts/bundle/full-plan.sh" --collect "$src" "$b/share/speedlab/plan-records" || exit 1
cp "$src/tests/bundle/fake/speedlab" "$b/bin/speedlab"
printf '#!/bin/sh\nexit 0\n' >"$b/bin/test_good_cuda"
printf '#!/bin/sh\necho "mismatch at 3"\nexit 1\n' >"$b/bin/test_bad_cuda"
cp /bin/true "$b/bin/true"      # an ELF for the library check
chmod +x "$b"/bin/* "$b/gpu-check.sh"
cat >"$b/BUNDLE" <<'INFO'
SL_BUNDLE_SOURCE='fixture'
SL_BUNDLE_BUILT='never'
SL_BUNDLE_CUDA_RUNTIME='13000 (static)'
SL_CUDNN_SONAME='libc.so.6'
SL_SONAMES='libc.so.6'
SL_GLIBC_MIN='2.17'
SL_CUDA_TESTS='test_good_cuda test_bad_cuda'
SL_RACECHECK_TESTS='test_good_cuda'
INFO
cat >"$tmp/path/nvidia-smi" <<'SMI'
#!/bin/sh
case "$*" in
    -L) echo "GPU 0: Fake H100 (UUID: GPU-0)" ;;
    *name*) echo "Fake H100, 81559 MiB, 9.0" ;;
    *driver_version*) echo "580.65" ;;
    *) echo "| NVIDIA-SMI 580.65    Driver Version: 580.65    CUDA Version: 13.0 |" ;;
esac
SMI
chmod +x "$tmp/path/nvidia-smi"
export PATH="$tmp/path:$PATH"
# Nsight Compute, on PATH for the first check only: mlp's kernel inside speedlab's NVTX range (outside
# it with FAKE_NCU_OUTSIDE=1: a range that misses the kernels), h2d launching no kernel at all
mkdir -p "$tmp/ncu"
cat >"$tmp/ncu/ncu" <<'NCU'
#!/bin/sh
filtered=0 rep="" study=""
while [ $# -gt 0 ]; do
    case $1 in
        --nvtx) filtered=1 ;;
        -o) rep=$2; shift ;;
        run) study=$2; break ;;
    esac
    shift
done
if [ "$study" = h2d ] || { [ "$study" = mlp ] && [ $filtered = 1 ] && [ "${FAKE_NCU_OUTSIDE:-0}" = 1 ]; }; then
    echo "==PROF== No kernels were profiled."
else
    : >"$rep.ncu-rep"
    echo "==PROF== Report: $rep.ncu-rep"
fi
NCU
chmod +x "$tmp/ncu/ncu"

echo "1..44"
PATH="$tmp/ncu:$PATH" "$b/gpu-check.sh" --out "$tmp/out" --budget 120 >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
s=$tmp/out/summary.txt
if [ $rc -eq 1 ]; then ok "exit 1 when a test and a case failed"; else not_ok "exit 1 when a test and a case failed (got $rc)"; sed 's/^/#   /' "$tmp/stderr"; fi
has "the node's GPU and driver" "$s" '^node: GPU: Fake H100, 81559 MiB, 9.0; driver: 580.65 \(CUDA 13.0\)'
has "the failed CUDA test named" "$s" '^  tests +failed +1 passed; failed: test_bad_cuda\(exit 1\)'
has "a tool the node lacks is skipped" "$s" '^  (memcheck|nsys) +skipped +no [a-z-]+'
has "ncu: a kernel in mlp's range, h2d named copies only" "$s" \
    '^  ncu +ok +1 studies, a kernel each inside speedlab.s NVTX range; no kernel launched at all \(copies only\): h2d$'
has "mlp cuda: ok, phases, VRAM, median" "$s" '^  quick +mlp +cuda +batch=64 +ok +yes +100 MiB +1\.1 s$'
has "mlp cuda spans=0: phases off" "$s" '^  quick spans=0 +mlp +cuda +batch=64 +ok +off +100 MiB +1 s$'
has "mlp torch-cuda: a framework row's phases n/a" "$s" '^  quick +mlp +torch-cuda +batch=64 +ok +n/a +1 MiB +0\.3 s$'
has "mlp cublas: failed with its error" "$s" '^  default +mlp +cublas +batch=64 +failed +- +- +cublas: the \\"check\\" failed at step 3$'
has "h2d's sizes on one line" "$s" '^  default +h2d +h2d-pinned +bytes=4096\.\.65536 \(2\) +ok +NO +2 MiB +0\.002 s$'
has "the events' cost" "$s" '^  mlp cuda +spans=1 1\.1 s, spans=0 1 s: events cost \+10\.0 %$'
order=$(sed -n 's/^==== quick.*speedlab run \([^ ]*\) --variants \([^ ]*\).*/\1\/\2/p' "$tmp/out/studies.log" | paste -sd' ' -)
if [ "$order" = "mlp/cuda,cublas mlp/cuda,cublas h2d/h2d-pinned mlp/torch-cuda" ]; then
    ok "own GPU variants first (mlp's again with spans=0), the framework rows last"
else not_ok "own GPU variants first (mlp's again with spans=0), the framework rows last (got: $order)"; fi
if grep -q 'speedlab run h2d --variants h2d-pinned --quick' "$tmp/out/studies.log" &&
    ! grep -q 'speedlab run cpuonly' "$tmp/out/studies.log"; then ok "only the studies with GPU variants run"
else not_ok "only the studies with GPU variants run"; sed 's/^/#   /' "$tmp/out/studies.log"; fi
has "verdict FAILED" "$s" '^verdict: FAILED'
members=$(tar tzf "$tmp/out/runs.tar.gz")
case $members in
    *X.float32*) not_ok "runs.tar.gz leaves a framework row's input arrays out" ;;
    *mlp-torch-cuda-64/stderr.txt*) ok "runs.tar.gz leaves a framework row's input arrays out" ;;
    *) not_ok "runs.tar.gz leaves a framework row's input arrays out (no stderr.txt either)" ;;
esac
files=$(ls "$tmp/out" | tr '\n' ' ')
if [ "$files" = "node.txt profiles.tar.gz records.jsonl report.tar.gz runs.tar.gz studies.log summary.txt tests.log " ]; then
    ok "eight output files"; else not_ok "eight output files (got: $files)"; fi

# kernels that run outside speedlab's NVTX range: the ncu step fails and names the variant
FAKE_NCU_OUTSIDE=1 PATH="$tmp/ncu:$PATH" "$b/gpu-check.sh" --out "$tmp/out5" --budget 120 >/dev/null 2>&1
has "ncu: no kernel inside mlp's range fails the step" "$tmp/out5/summary.txt" \
    "^  ncu +failed +0 studies profiled; no kernel inside speedlab.s NVTX range for: mlp/cuda "

# a budget with 30 s for the studies after the reserve: each study run would take 40 s, so the first
# is stopped at the budget and the rest do not start; the whole check keeps to the budget
t0=$(date +%s)
FAKE_SLEEP=40 "$b/gpu-check.sh" --out "$tmp/out2" --budget 60 >/dev/null 2>&1
took=$(($(date +%s) - t0))
has "a study stopped and the rest skipped at the budget" "$tmp/out2/summary.txt" \
    '^  quick +incomplete +studies: 0, with framework rows: 0; not finished|^  quick +incomplete +studies: 1, with framework rows: 0; not finished: mlp\(stopped at the budget\) mlp-spans=0\(budget\) h2d\(budget\) mlp-frameworks\(budget\)$'
if [ $took -le 65 ]; then ok "the check keeps to its budget ($took s of 60)"; else not_ok "the check keeps to its budget ($took s of 60)"; fi

# a kill while a study runs: the step is stopped at once, what is done is packed, exit 130
t0=$(date +%s)
FAKE_SLEEP=100 "$b/gpu-check.sh" --out "$tmp/out3" --budget 300 >/dev/null 2>&1 &
pid=$!
sleep 3
kill -TERM $pid
wait $pid
rc=$?
took=$(($(date +%s) - t0))
if [ $rc -eq 130 ] && [ $took -le 20 ]; then ok "TERM stops the check at once (exit $rc, $took s)"
else not_ok "TERM stops the check at once (exit $rc, $took s)"; fi
has "an interrupted check says so and keeps what was done" "$tmp/out3/summary.txt" '^verdict: INTERRUPTED'
[ -f "$tmp/out3/runs.tar.gz" ] && [ ! -d "$tmp/out3/work" ] && ok "packed after the kill" || not_ok "packed after the kill"
"$b/gpu-check.sh" --out "$tmp/out2" >/dev/null 2>"$tmp/stderr"
has "an output folder that is not empty is refused" "$tmp/stderr" 'is not empty: name a new folder'
# everything passes, but the node has no sanitizer and no profilers: exit 0, and the verdict names them
sed -i "s/^SL_CUDA_TESTS=.*/SL_CUDA_TESTS='test_good_cuda'/" "$b/BUNDLE"
FAKE_ALL_OK=1 "$b/gpu-check.sh" --out "$tmp/out4" --budget 120 >/dev/null 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "exit 0 when everything that ran passed"; else not_ok "exit 0 when everything that ran passed (got $rc)"; fi
has "the verdict names the steps not run here" "$tmp/out4/summary.txt" \
    '^verdict: ALL OK on Fake H100, 81559 MiB, 9\.0 \(not run here: memcheck ncu nsys racecheck; see the steps\)$'

# ---- the full mode ------------------------------------------------------------------------------------
export FAKE_REAL_SPEEDLAB="$real_sl"
"$b/gpu-check.sh" --plan >"$tmp/plan" 2>&1
rc=$?
if [ $rc -eq 0 ]; then ok "--plan: exit 0"; else not_ok "--plan: exit 0 (got $rc)"; sed 's/^/#   /' "$tmp/plan"; fi
has "--plan: the H200 records' plan fits the default budget" "$tmp/plan" \
    '^  total +[0-9]+ s  of 510 s \(a 540 s budget less 30 s for the report and packing\): fits$'
if sed -n 3p "$tmp/plan" | grep -q '^  calibrate '; then ok "--plan: calibrate is the first step"
else not_ok "--plan: calibrate is the first step"; fi
has "--plan: entropy_mi's GPU rows with torch-cuda's, every size, a min-time from the records" "$tmp/plan" \
    '^  entropy_mi-gpu +[0-9]+ s  run entropy_mi --variants cuda,cuda_pinned,cuda_factorized,torch-cuda --min-time 0?\.[0-9]+: 20 cases'
# (the CPU frameworks the test's python has, numpy say, join the CPU rows: 5 sizes each)
has "--plan: entropy_mi's CPU rows, every size" "$tmp/plan" '^  entropy_mi-cpu +[0-9]+ s  run entropy_mi --variants naive,simd,omp,factorized,factorized_omp(,[a-z]+)*: (25|30|35|40|45) cases'
has "--plan: mlp on the full set for 10 epochs, with torch-cuda" "$tmp/plan" '^  mlp-gpu +[0-9]+ s  run mlp --variants cuda,cublas,torch-cuda --param epochs=10: 3 cases'
last=$(grep -B1 '^  total' "$tmp/plan" | head -1)
case $last in "  tensor_mean-jax "*) ok "--plan: jax-gpu's rows last" ;; *) not_ok "--plan: jax-gpu's rows last (got: $last)" ;; esac
"$b/gpu-check.sh" --plan --budget 200 >"$tmp/plan200" 2>&1
has "--plan: a budget too short says so" "$tmp/plan200" '^  total +[0-9]+ s  of 170 s \(a 200 s budget .*\): does not fit'
has "--plan: the last steps are the ones marked to be cut" "$tmp/plan200" '^  tensor_mean-jax +[0-9]+ s  .* \(may be cut\)$'
"$b/gpu-check.sh" --plan --records "$tmp/nothing-here" >/dev/null 2>"$tmp/stderr"
rc=$?
if [ $rc -eq 2 ]; then ok "--records that does not exist: exit 2"; else not_ok "--records that does not exist: exit 2 (got $rc)"; fi

# the full mode runs its plan in order, prints it first and keeps it in the summary
FAKE_ALL_OK=1 "$b/gpu-check.sh" --full --out "$tmp/full" --budget 120 >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
s=$tmp/full/summary.txt
if [ $rc -eq 0 ]; then ok "--full: exit 0 when every step ran"; else not_ok "--full: exit 0 when every step ran (got $rc)"; sed 's/^/#   /' "$tmp/stderr"; fi
has "--full: the plan printed before the first step" "$tmp/stderr" '^full mode plan'
order=$(sed -n 's/^==== full: speedlab \(calibrate\)$/\1/p; s/^==== full: speedlab run \([a-z_0-9]*\) --variants \([^ ]*\).*/\1:\2/p' "$tmp/full/studies.log" | paste -sd' ' -)
case $order in
    # (cnn's GPU rows are listed only in a build with cuDNN: a fresh root has none)
    "calibrate entropy_mi:cuda,cuda_pinned,cuda_factorized"*" entropy_mi:naive,"*" tensor_mean:cuda"*" mlp:cuda,cublas "*" h2d:"*)
        ok "--full: calibrate, then each study's GPU rows (the kernel studies' CPU rows after them)" ;;
    *) not_ok "--full: calibrate, then each study's GPU rows (got: $order)" ;;
esac
has "--full: a step line per planned step" "$s" '^  entropy_mi-cpu +ok +[0-9]+ s \(estimated [0-9]+ s\)$'
has "--full: the GPU cases of the full runs" "$s" '^  full +mlp +cuda +batch=64 +ok +yes '
tar tzf "$tmp/full/runs.tar.gz" | grep -q '^runs/full/run-.*/results.jsonl' && ok "--full: runs/full packed" || not_ok "--full: runs/full packed"

# a budget that leaves room for two steps (8 s each; none starts with less than 50 s left): the rest,
# the least telling, are skipped, saying so
FAKE_SLEEP=8 "$b/gpu-check.sh" --full --out "$tmp/full2" --budget 70 >/dev/null 2>&1
rc=$?
if [ $rc -eq 4 ]; then ok "--full under a short budget: exit 4 (INCOMPLETE)"; else not_ok "--full under a short budget: exit 4 (got $rc)"; fi
has "--full under a short budget: the first steps ran" "$tmp/full2/summary.txt" '^  entropy_mi-gpu +ok '
has "--full under a short budget: the last steps skipped for the budget" "$tmp/full2/summary.txt" '^  h2d-gpu +skipped +budget: [0-9]+ s left of 70 \(estimated [0-9]+ s\)$'
exit $failed
