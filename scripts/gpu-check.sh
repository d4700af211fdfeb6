#!/bin/bash
# gpu-check.sh: the one-command check of speedlab on a machine with an NVIDIA GPU (issue 18, item 4).
#
#   scripts/gpu-check.sh fetch-deps     on a machine WITH a Debian package registry (same release as the
#                                       GPU machine, Debian 12 here): put what a bare GPU machine may lack
#                                       into .deps/ (ignored by git), to carry there
#   scripts/gpu-check.sh [--quick] [OUT]
#                                       on the GPU machine, from the source root: build with CUDA into
#                                       build-gpu/, run every CUDA test, every GPU variant of every study
#                                       (default sizes; --quick: quick sizes), mlp's and cnn's GPU variants
#                                       again with --param spans=0 (what the per-step events cost, into
#                                       OUT/spans0), a crossover sweep of the kernel studies, all into OUT
#                                       (default results-gpu/), then OUT's report, and print a summary.
#                                       Exit 0 when everything passed.
#
# What a bare GPU machine may lack, and how it gets here (docs/gpu-check.md says the same):
#   - the -dev packages jansson, cmocka, PAPI (and zlib, OpenBLAS): `fetch-deps` runs `apt-get download`
#     for them into .deps/debs/; on the GPU machine they are unpacked with `dpkg -x` into .deps/prefix/
#     (never into /), their pkg-config files pointed there, and the compiler and loader told about it
#     (PKG_CONFIG_PATH, CPATH, LIBRARY_PATH, LD_LIBRARY_PATH). Nothing is installed system-wide.
#   - meson and ninja: `fetch-deps` puts their wheels in .deps/wheels/; pip installs them into .deps/py/.
#   - Fashion-MNIST (mlp, cnn): `fetch-deps` copies /usr/share/datasets/fashion-mnist into .deps/data/.
#   - gnuplot is optional: without it the report writes figure data and no images.
# Carry .deps/ with the source tree (the device tool: carry [".deps"]; 64 MiB at most, fetch-deps prints
# the size). The CUDA toolkit (nvcc, cuBLAS, cuDNN, NVTX3) must already be on the GPU machine.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
deps=$here/.deps
cd "$here" || exit 2

say() { printf 'gpu-check: %s\n' "$*"; }
die() { printf 'gpu-check: error: %s\n' "$*" >&2; exit 1; }

# ---- fetch-deps (the machine with a registry) ---------------------------------------------------
DEBS="libjansson-dev libjansson4 libcmocka-dev libcmocka0 libpapi-dev libpapi7.0 libpfm4 zlib1g-dev \
libopenblas-dev libopenblas0 libopenblas0-pthread libopenblas-pthread-dev"

fetch_deps() {
    mkdir -p "$deps/debs" "$deps/wheels" "$deps/data"
    (cd "$deps/debs" && apt-get download $DEBS) || die "apt-get download failed (run apt-get update first?)"
    python3 -m pip download --only-binary=:all: -d "$deps/wheels" meson ninja ||
        say "could not download meson/ninja wheels; the GPU machine then needs its own meson and ninja"
    if [ -d /usr/share/datasets/fashion-mnist ]; then
        cp -r /usr/share/datasets/fashion-mnist "$deps/data/"
    else
        say "no /usr/share/datasets/fashion-mnist here: mlp and cnn will be 'unavailable' on the GPU machine"
    fi
    say "$(du -sh "$deps" | cut -f1) in $deps (the device tool carries at most 64 MiB)"
}

# ---- the GPU machine: dependencies ---------------------------------------------------------------
# Unpacks the carried .debs into .deps/prefix (dpkg -x: no scripts, no root, nothing outside it) and
# points pkg-config, the compiler and the loader there.
use_carried_debs() {
    local p=$deps/prefix
    [ -d "$deps/debs" ] || return 0
    if [ ! -d "$p/usr" ]; then
        for d in "$deps"/debs/*.deb; do dpkg -x "$d" "$p" || die "dpkg -x $d failed"; done
        # the .pc files say prefix=/usr; make every absolute /usr path point into the prefix
        find "$p" -name '*.pc' -exec sed -i -e "s|=/usr|=$p/usr|g" {} +
    fi
    local lib=$p/usr/lib/x86_64-linux-gnu
    # openblas.pc sits in openblas-pthread/ (Debian's alternatives link it into pkgconfig/ at install
    # time, which dpkg -x does not run)
    export PKG_CONFIG_PATH=$lib/pkgconfig:$lib/openblas-pthread/pkgconfig:$p/usr/share/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
    export CPATH=$p/usr/include:$p/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}
    export LIBRARY_PATH=$lib:$lib/openblas-pthread${LIBRARY_PATH:+:$LIBRARY_PATH}
    export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    say "using the carried packages in $p"
}

use_carried_tools() {
    if ! command -v meson >/dev/null || ! command -v ninja >/dev/null; then
        [ -d "$deps/wheels" ] || die "meson or ninja missing and no .deps/wheels (run fetch-deps elsewhere)"
        python3 -m pip install -q --no-index --find-links "$deps/wheels" --target "$deps/py" meson ninja ||
            die "pip could not install meson/ninja from .deps/wheels"
        export PYTHONPATH=$deps/py${PYTHONPATH:+:$PYTHONPATH}
        export PATH=$deps/py/bin:$PATH
    fi
    if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
        export PATH=/usr/local/cuda/bin:$PATH
    fi
    command -v nvcc >/dev/null || die "no nvcc (CUDA toolkit) on PATH or in /usr/local/cuda/bin"
}

preflight() {
    command -v nvidia-smi >/dev/null && nvidia-smi -L | grep -q GPU || die "no GPU visible (nvidia-smi -L)"
    say "device: $(nvidia-smi -L | head -1)"
    say "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1); nvcc: $(nvcc --version | tail -1)"
}

# ---- the GPU machine: build and tests ------------------------------------------------------------
build() {
    if [ -f build-gpu/build.ninja ]; then
        meson setup --reconfigure build-gpu -Dcuda=enabled >build-gpu.log 2>&1
    else
        meson setup build-gpu --buildtype=release -Dcuda=enabled >build-gpu.log 2>&1
    fi || { tail -30 build-gpu.log; die "meson setup failed (build-gpu.log)"; }
    grep -E "^ +(CUDA|cuBLAS|cuDNN|PAPI|NVTX|OpenMP|BLAS) +:" build-gpu.log # meson's summary
    ninja -C build-gpu -j"$(nproc)" >>build-gpu.log 2>&1 || { tail -30 build-gpu.log; die "build failed"; }
    say "built build-gpu/"
}

# Every test whose name ends in _cuda. On a machine with a device a skip (77) is a failure: the test
# could not reach the GPU it should have used.
cuda_tests() {
    local names
    names=$(meson test -C build-gpu --list 2>/dev/null | awk -F' / ' '{print $NF}' | grep '_cuda$' | tr '\n' ' ')
    [ -n "$names" ] || { say "no CUDA tests in the build (was CUDA found?)"; return 1; }
    say "CUDA tests: $names"
    meson test -C build-gpu --print-errorlogs $names >"$out/cuda-tests.txt" 2>&1
    local rc=$?
    grep -E "^ *[0-9]+/[0-9]+ " "$out/cuda-tests.txt"
    if grep -qE " SKIP " "$out/cuda-tests.txt"; then
        say "a CUDA test skipped although a GPU is present: counted as a failure"
        rc=1
    fi
    return $rc
}

# ---- the GPU machine: the studies ----------------------------------------------------------------
# A study's GPU variants: those `speedlab list` calls unavailable for "cuda" when the device is hidden.
gpu_variants() {
    CUDA_VISIBLE_DEVICES='' ./build-gpu/experiments/speedlab list "$1" |
        awk '/^    [a-z]/ && $2 ~ /^cuda/ {print $1}' | paste -sd, -
}

studies() { ./build-gpu/experiments/speedlab list | awk '/^[a-z_0-9]+:/ {sub(":", "", $1); print $1}'; }

run_study() {
    local study=$1 variants=$2 data=()
    if [ "$study" = mlp ] || [ "$study" = cnn ]; then
        [ -d "$deps/data/fashion-mnist" ] && data=(--data "$deps/data/fashion-mnist")
    fi
    say "run $study --variants $variants ${quick:+--quick}"
    ./build-gpu/experiments/speedlab run "$study" --variants "$variants" $quick "${data[@]}" \
        --trace "$out/trace-$study.json" --out "$out" >>"$out/run.log" 2>&1
    local rc=$?
    grep -E "^$study " "$out/run.log" | tail -n 20
    return $rc
}

# The kernel studies' CPU and GPU variants over their full size lists, 3 repetitions each: where the
# GPU overtakes the best CPU variant (the report's crossover table). naive is left out: it is only slow.
crossover() {
    local s v cpu
    for s in entropy_mi tensor_mean; do
        # variant lines are indented 4 and say available/why not; parameter lines say "default"
        v=$(./build-gpu/experiments/speedlab list "$s" | awk '/^    [a-z]/ && $1 != "naive" && $2 != "default" {print $1}' |
            paste -sd, -)
        say "crossover sweep: $s --variants $v --reps 3 --min-time 0"
        ./build-gpu/experiments/speedlab run "$s" --variants "$v" --reps 3 --min-time 0 --calibrate \
            --out "$out" >>"$out/run.log" 2>&1 || cpu=1
    done
    return ${cpu:-0}
}

# What the per-step CUDA events cost: mlp's and cnn's device rows again with --param spans=0 (no events,
# no phases) into spans0/, each median beside the one with events (the runs above). Not a failure
# either way: the figure for docs/gpu-check.md.
spans_cost() {
    local s v data=()
    [ -d "$deps/data/fashion-mnist" ] && data=(--data "$deps/data/fashion-mnist")
    for s in mlp cnn; do
        v=$(gpu_variants "$s")
        [ -n "$v" ] || continue
        say "event cost: $s --variants $v --param spans=0"
        mkdir -p "$out/spans0"  # traced like the runs above, so that only the events differ
        ./build-gpu/experiments/speedlab run "$s" --variants "$v" --param spans=0 $quick "${data[@]}" \
            --trace "$out/spans0/trace-$s.json" --out "$out/spans0" >>"$out/run.log" 2>&1
    done
    command -v python3 >/dev/null || return 0
    python3 - "$out" <<'EOF'
import glob, json, sys
def medians(pattern):
    m = {}
    for f in sorted(glob.glob(pattern)):
        for line in open(f):
            r = json.loads(line)
            if r.get("kind") == "case" and r.get("study") in ("mlp", "cnn") and r.get("status") == "ok":
                m[(r["study"], r["variant"])] = r["stats"]["median_s"]
    return m
on, off = medians(sys.argv[1] + "/run-*/results.jsonl"), medians(sys.argv[1] + "/spans0/run-*/results.jsonl")
for k in sorted(set(on) & set(off)):
    print(f"{k[0]:<6} {k[1]:<10} spans=1 {on[k]:.6g} s  spans=0 {off[k]:.6g} s  events cost {100 * (on[k] / off[k] - 1):+.1f} %")
EOF
}

# One line per GPU case: status, median, whether the record has phases and peak VRAM.
summary() {
    if ! command -v python3 >/dev/null; then
        say "no python3 for the summary: see $1/report/REPORT.md"
        return 0
    fi
    python3 - "$out" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
gpu = {tuple(x.split("/")) for x in os.environ.get("GPU_CASES", "").split()}  # study/variant
rows, bad = [], 0
for f in sorted(glob.glob(out + "/run-*/results.jsonl")):
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") != "case" or (r.get("study"), r.get("variant")) not in gpu:
            continue
        m = r.get("metrics", {})
        # yes: the record's phases, a measured entry per repetition; sampled: only device_*_ms metrics
        k = r.get("phases", {}).get("kernel_ms") or []
        n = len(r.get("times_s") or [])
        phases = ("yes" if k and len(k) == n and None not in k else "part" if k
                  else "sampled" if any(x.startswith("device_") for x in m) else "NO")
        vram = "gpu_mem_used_bytes" in m
        med = r.get("stats", {}).get("median_s")
        ok = r["status"] == "ok"
        bad += not ok
        size = f'{r["size_name"]}={r["size"]}'
        rows.append(f'{r["study"]:<12} {r["variant"]:<16} {size:<16} {r["status"]:<12} '
                    f'{"%.6g s" % med if med is not None else "-":<14} phases={phases:<7} '
                    f'vram={"yes" if vram else "NO"}' + ("" if ok else f'  ({r.get("error", "")[:60]})'))
print("\n".join(rows) or "no GPU cases were recorded")
print(f"{len(rows)} GPU cases, {bad} not ok")
sys.exit(1 if bad or not rows else 0)
EOF
}

main() {
    quick=""
    [ "${1:-}" = --quick ] && { quick=--quick; shift; }
    out=${1:-results-gpu}
    mkdir -p "$out" || die "cannot create $out"
    out=$(cd "$out" && pwd)
    use_carried_tools
    use_carried_debs
    preflight
    build
    local failed=0
    export GPU_CASES=""
    cuda_tests || failed=1
    for s in $(studies); do
        v=$(gpu_variants "$s")
        [ -n "$v" ] || continue
        GPU_CASES="$GPU_CASES $(echo "$v" | tr ',' '\n' | sed "s|^|$s/|" | tr '\n' ' ')"
        run_study "$s" "$v" || failed=1
    done
    spans_cost
    [ -n "$quick" ] || crossover || failed=1
    ./build-gpu/experiments/speedlab report "$out"/run-* --out "$out/report" >>"$out/run.log" 2>&1 ||
        say "speedlab report exited non-zero (see $out/run.log)"
    say "report: $out/report/REPORT.md; logs: $out/run.log, $out/cuda-tests.txt"
    summary "$out" || failed=1
    [ $failed -eq 0 ] && say "all passed" || say "SOMETHING FAILED (see above)"
    return $failed
}

case "${1:-}" in
    fetch-deps) fetch_deps ;;
    -h|--help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" ;;
    *) main "$@" ;;
esac
