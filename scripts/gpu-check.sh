#!/bin/bash
# gpu-check.sh: prove speedlab's CUDA half on a GPU node, from a bundle, in one command. Builds nothing.
#
#   speedlab-gpu/gpu-check.sh [--out DIR] [--budget SECONDS]
#   speedlab-gpu/gpu-check.sh --full [--out DIR] [--budget SECONDS] [--records PATH]
#   speedlab-gpu/gpu-check.sh --plan [--budget SECONDS] [--records PATH]
#
# Runs inside a bundle made by scripts/gpu-bundle.sh: copy speedlab-gpu.run to the node, then
# `sh speedlab-gpu.run check [OPTIONS]` unpacks it and runs this script with OPTIONS.
#   --out DIR         where the eight output files go (default: results-gpu); created, must be empty
#   --budget SECONDS  wall-clock budget (default 480, --full 540: one 10-minute job with the unpacking;
#                     from 60 to 604800, in decimal digits without a leading zero): the last 30 s are kept for the report and the packing; no step
#                     starts, and a running one is stopped, when only those are left; the summary names
#                     what was skipped or stopped
#   --full            the full mode: instead of the steps below (node and report excepted), the GPU
#                     calibration, every study's GPU rows and torch-cuda's at the write-ups' sizes (mlp
#                     and cnn on the full training set), the CPU rows of entropy_mi and tensor_mean on
#                     this node's CPU (all cores), then jax-gpu's rows, a step each, planned from earlier
#                     records (share/speedlab/full-plan.sh says how) and printed first with each step's
#                     estimate; the least telling steps last, so that the budget cuts those
#   --plan            print the full mode's plan and its estimate against the budget, run nothing
#   --records PATH    the records the plan is made from, a file or a folder (repeatable; default the
#                     bundle's share/speedlab/plan-records: an H200's check, a CPU page's kernel rows)
#   -h, --help        this text
#
# Steps, in this order (each one line in the summary: ok; failed (why); incomplete (the budget or a
# step's time cap stopped it); skipped (why)):
#   node        the GPU (nvidia-smi), driver, CUDA runtime (static in the bundle), cuBLAS and cuDNN found
#               (where, which version), OS, glibc against the bundle's minimum, CPU; every library the
#               bundle's programs need loads here (share/speedlab/check-libs.sh)
#   tests       every CUDA test (bin/test_*_cuda), 300 s each at most; with a GPU present a skip (exit 77)
#               is a failure
#   quick       every GPU variant of every study at its quick sizes (speedlab run --quick): each study's
#               own, traced, then the framework rows (torch-cuda, jax-gpu); mlp's and cnn's own GPU
#               variants again with --param spans=0 (what the per-step events cost)
#   memcheck    the CUDA tests again under compute-sanitizer --tool memcheck --leak-check full, at most
#               90 s each
#   ncu         Nsight Compute on one GPU variant per study, filtered by speedlab's NVTX ranges
#               (ncu --nvtx --nvtx-include 'speedlab@STUDY/'): proves an NVIDIA profiler sees them;
#               a variant that launches no kernel at all (h2d's copies) is named, not failed
#   nsys        Nsight Systems on mlp's cuda variant, with nsys stats' NVTX and kernel summaries
#   default     every GPU variant at the study's default sizes while the budget lasts: every study's own
#               first, then the framework rows
#   racecheck   compute-sanitizer --tool racecheck on the tests whose kernels use shared memory, 90 s each
#   report      speedlab report over every run
# A tool the node lacks (compute-sanitizer, ncu, nsys) makes its step "skipped (not on this node)"; ncu
# without permission for the GPU's counters (ERR_NVGPUCTRPERM) is skipped too, and says so.
#
# Outputs, all directly in DIR (a copy-back step or a job scheduler brings them home):
#   summary.txt      one screen: the node, each step, each GPU case (study, variant, size, status or
#                    why not, device phases, peak VRAM), sanitizer findings, the verdict
#   node.txt         the node in full: nvidia-smi, the libraries found, the bundle's BUNDLE file, lscpu
#   tests.log        the CUDA tests' output, plain, under memcheck and under racecheck
#   studies.log      every speedlab run's output
#   records.jsonl    every case record of every run (the quick and default runs, or the full mode's; not
#                    the profiled ones)
#   runs.tar.gz      the run directories (records, environment, traces; not the input arrays a failed framework row keeps): `speedlab report` reads them
#   report.tar.gz    the report (REPORT.md, tables; figures where the node has gnuplot, else their data)
#   profiles.tar.gz  the Nsight Compute and Nsight Systems reports, and their text output
# While it runs, everything is in DIR/work/, which is removed once packed (kept if packing fails).
# Ctrl-C or a kill (INT, TERM) stops the running step at once and packs what is done.
#
# Exit status: 0 a GPU was found and every step that could run ran and passed (a step skipped for a
# tool the node lacks does not count; the verdict names it); 1 a step failed; 3 no GPU (every GPU case
# "unavailable", nothing failed: what a node without a device, or the bundle's selftest, gives); 4
# nothing failed, but the budget stopped or skipped a step (INCOMPLETE); 2 bad arguments or not inside
# a bundle; 130 interrupted.
set -u

here=$(cd "$(dirname "$0")" && pwd)
out=results-gpu
budget=""      # 480, or 540 with --full
mode=check     # check or full
plan_only=0    # --plan: print the full mode's plan, run nothing
records=()    # --records, else the bundle's plan records
reserve=30     # seconds kept for the report and the packing

exec 3>&2      # the terminal's stderr, for messages written while a step's output is redirected
say() { printf 'gpu-check: %s\n' "$*" >&3; }
die() { printf 'gpu-check: error: %s\n' "$*" >&2; exit 2; }
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
# bad WHAT: a usage error, with the synopsis; exit 2 before anything is made
bad() {
    printf 'gpu-check: error: %s\n' "$*" >&2
    echo "usage: gpu-check.sh [--out DIR] [--budget SECONDS] [--full | --plan] [--records PATH]...  (--help says more)" >&2
    exit 2
}

# show_plan PLAN NOTE [SECONDS]: the full mode's plan (full-plan.sh's lines) as a table, each step's
# estimate and the total against SECONDS (default: the budget less the reserve); the steps that would
# start past it are marked "may be cut"
show_plan() {
    awk -F'\t' -v avail="${3:-$((budget - reserve))}" -v budget="$budget" -v reserve="$reserve" -v note="$2" '
        BEGIN { printf "full mode plan (%s), from records:\n  %-17s %8s  %s\n", note, "step", "estimate", "what, and what the estimate rests on" }
        { t += $2; printf "  %-17s %6d s  %s: %s%s\n", $1, $2, $4, $3, (t > avail ? " (may be cut)" : "") }
        END { printf "  %-17s %6d s  of %d s (a %d s budget less %d s for the report and packing): %s\n", "total", t, avail,
                     budget, reserve, (t <= avail ? "fits" : "does not fit: the steps marked may be cut, the least telling") }' "$1"
}

# Every argument is checked before anything is made: a bad one changes nothing.
for a in "$@"; do case $a in -h|--help) usage; exit 0 ;; esac; done
while [ $# -gt 0 ]; do
    case $1 in
        --out) [ $# -ge 2 ] || bad "--out needs a folder"; out=$2; shift 2
               case $out in ''|-*) bad "--out '$out': want a folder (a path that does not start with '-')" ;; esac ;;
        --budget) [ $# -ge 2 ] || bad "--budget needs seconds"; budget=$2 budget_bad=""; shift 2
               # decimal digits without a leading zero (bash reads 090 as octal), at most 6 (no overflow)
               case $budget in
                   [1-9] | [1-9]*[0-9]) case $budget in *[!0-9]* | ???????*) budget_bad=1 ;; esac ;;
                   *) budget_bad=1 ;;
               esac
               [ -z "${budget_bad:-}" ] && [ "$budget" -ge 60 ] && [ "$budget" -le 604800 ] ||
                   bad "--budget '$budget': want whole seconds from 60 (the report and packing need 30) to 604800 (a week), in decimal digits without a leading zero" ;;
        --full) mode=full; shift ;;
        --plan) mode=full; plan_only=1; shift ;;
        --records) [ $# -ge 2 ] || bad "--records needs a results file or folder"
                   case $2 in ''|-*) bad "--records '$2': want a results file or folder (a path that does not start with '-')" ;; esac
                   [ -e "$2" ] || bad "--records '$2': no such file or folder"
                   records+=("$2"); shift 2 ;;
        *) bad "unknown argument '$1'" ;;
    esac
done
[ -n "$budget" ] || { budget=480; [ "$mode" = check ] || budget=540; }
[ -f "$here/BUNDLE" ] && [ -x "$here/bin/speedlab" ] ||
    die "$here is not a GPU bundle (no BUNDLE, bin/speedlab): build one with scripts/gpu-bundle.sh and run its copy of this script"
[ ${#records[@]} -gt 0 ] || records=("$here/share/speedlab/plan-records")
if [ $plan_only -eq 1 ]; then
    # shellcheck source=/dev/null
    . "$here/BUNDLE"
    # shellcheck source=bundle/find-cuda-libs.sh
    . "$here/share/speedlab/find-cuda-libs.sh"
    sl_cuda_libs
    plan=$(mktemp) || die "cannot make a temporary file"
    sh "$here/share/speedlab/full-plan.sh" "$here/bin/speedlab" --frameworks all "${records[@]}" >"$plan" &&
        [ -s "$plan" ] && show_plan "$plan" "the framework rows whether or not this python has them"
    rc=$?
    rm -f "$plan"
    [ $rc -eq 0 ] || { echo "gpu-check: error: no plan made (full-plan.sh: above)" >&2; exit 1; }
    exit 0
fi
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
    bad "--out $out is not empty: name a new folder (nothing there is overwritten)"
fi
mkdir -p "$out/work/runs/quick" "$out/work/runs/default" "$out/work/runs/full" "$out/work/prof" || die "cannot create $out"
out=$(cd "$out" && pwd)
work=$out/work

# shellcheck source=/dev/null
. "$here/BUNDLE"
# shellcheck source=bundle/find-cuda-libs.sh
. "$here/share/speedlab/find-cuda-libs.sh"
sl_cuda_libs
export SPEEDLAB_DATA_DIR=$here/share/speedlab/data
export SPEEDLAB_PLOTS_DIR=$here/share/speedlab/plots
export SPEEDLAB_BASELINES=${SPEEDLAB_BASELINES:-$here/share/speedlab/baselines}
SPEEDLAB_PYTHON=${SPEEDLAB_PYTHON:-$(command -v python3 || echo /usr/bin/python3)}
export SPEEDLAB_PYTHON
export CMOCKA_MESSAGE_OUTPUT=TAP OMP_WAIT_POLICY=PASSIVE
sl=$here/bin/speedlab
start=$(date +%s)

# ---- bookkeeping ----------------------------------------------------------------------------------
# steps.txt: "NAME<TAB>STATUS<TAB>DETAIL"; findings.txt: sanitizer findings, a line each
: >"$work/steps.txt"
: >"$work/findings.txt"
step_result() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$work/steps.txt"; say "$1: $2${3:+ ($3)}"; }
left() { echo $((budget - ($(date +%s) - start))); }
# within_budget NAME MIN: whether a step needing about MIN seconds may start; records the skip if not
within_budget() {
    if [ "$(left)" -lt "$2" ]; then
        step_result "$1" skipped "budget: $(left) s left of $budget"
        return 1
    fi
}
# bounded [--cap SECONDS] CMD...: run CMD, stopped (exit 124) when only the reserve is left or after
# SECONDS; in the background, so that a signal reaches the trap at once (the trap stops it)
child=""
bounded() {
    local l=$(($(left) - reserve)) rc
    if [ "$1" = --cap ]; then [ "$2" -lt "$l" ] && l=$2; shift 2; fi
    [ "$l" -ge 1 ] || return 124
    timeout -k 5 "$l" "$@" &
    child=$!
    wait "$child"
    rc=$?
    child=""
    return $rc
}
find_tool() { # find_tool NAME: on PATH, or in the CUDA toolkit's and Nsight's usual folders
    command -v "$1" 2>/dev/null && return
    for p in /usr/local/cuda/bin/"$1" /usr/local/cuda/compute-sanitizer/"$1" /usr/local/cuda-*/bin/"$1" \
        /opt/nvidia/nsight-compute/*/"$1" /opt/nvidia/nsight-systems/*/bin/"$1"; do
        [ -x "$p" ] && { echo "$p"; return; }
    done
    return 1
}

# ---- node ------------------------------------------------------------------------------------------
has_gpu=0
gpu_name="no GPU"
step_node() {
    local smi drv="" cuda="" glibc
    {
        echo "== bundle"; cat "$here/BUNDLE"
        echo; echo "== CUDA libraries the bundle does not carry"; sl_cuda_libs_report
        echo; echo "== OS"; cat /etc/os-release 2>/dev/null; uname -a
        echo; echo "== glibc"; getconf GNU_LIBC_VERSION 2>/dev/null
        echo; echo "== CPU"; lscpu 2>/dev/null || grep -m1 'model name' /proc/cpuinfo
    } >"$work/node.txt" 2>&1
    glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
    if [ -n "$glibc" ] && [ "$(printf '%s\n%s\n' "$SL_GLIBC_MIN" "$glibc" | sort -V | head -1)" != "$SL_GLIBC_MIN" ]; then
        step_result node failed "glibc $glibc is older than the bundle's $SL_GLIBC_MIN: build the bundle on an older distribution"
        return 1
    fi
    # without cuDNN (linked) nothing starts; without cuBLAS (loaded on use) only its rows fail, saying so
    case " $SL_MISSING_LIBS " in
        *" $SL_CUDNN_SONAME "*)
            step_result node failed "$SL_CUDNN_SONAME not found on this node (node.txt: where it looked); install cuDNN 9 for CUDA 13 or put its folder on LD_LIBRARY_PATH"
            return 1 ;;
    esac
    node_warning=""
    [ -n "$SL_MISSING_LIBS" ] && node_warning="; not found:$SL_MISSING_LIBS (the cuBLAS rows will fail)"
    { echo; echo "== libraries the bundle's programs need, on this node"; } >>"$work/node.txt"
    if ! sh "$here/share/speedlab/check-libs.sh" "$here" >>"$work/node.txt" 2>&1; then
        step_result node failed "a library the bundle needs is missing here (node.txt)"
        return 1
    fi
    smi=$(find_tool nvidia-smi) || smi=""
    if [ -n "$smi" ]; then
        { echo; echo "== nvidia-smi"; "$smi" 2>&1; "$smi" -q 2>&1 | head -60; } >>"$work/node.txt"
        if "$smi" -L 2>/dev/null | grep -q '^GPU '; then
            has_gpu=1
            gpu_name=$("$smi" --query-gpu=name,memory.total,compute_cap --format=csv,noheader 2>/dev/null | head -1)
        fi
        if [ $has_gpu -eq 1 ]; then
            drv=$("$smi" --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
            cuda=$("$smi" 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -1)
        fi
    fi
    node_line="GPU: $gpu_name; driver: ${drv:-none} (CUDA ${cuda:-?}); runtime: $SL_BUNDLE_CUDA_RUNTIME; glibc ${glibc:-?}; $(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown OS}")"
    if [ $has_gpu -eq 1 ]; then
        step_result node ok "$gpu_name, driver ${drv:-?}$node_warning"
    else
        local why="no nvidia-smi (no NVIDIA driver)"
        [ -n "$smi" ] && why="nvidia-smi lists none"
        step_result node ok "no GPU: $why; the GPU steps will say unavailable$node_warning"
    fi
}

# ---- CUDA tests, plain and under compute-sanitizer ---------------------------------------------------
# run_tests NAME CAP TESTS [WRAPPER...]: each test once, for at most CAP seconds; a skip (77) fails only
# when a GPU is present; a test the budget or the cap stopped makes the step "incomplete"
run_tests() {
    local name=$1 cap=$2 tests=$3 t rc failed="" skipped="" stopped="" passed=0
    shift 3
    for t in $tests; do
        if [ "$(left)" -lt $((reserve + 10)) ]; then stopped="$stopped $t(budget)"; continue; fi
        echo "==== $name: $* $t" >>"$work/tests.log"
        bounded --cap "$cap" "$@" "$here/bin/$t" >>"$work/tests.log" 2>&1
        rc=$?
        echo "==== exit $rc" >>"$work/tests.log"
        case $rc in
            0) passed=$((passed + 1)) ;;
            77) if [ $has_gpu -eq 1 ]; then failed="$failed $t(skipped with a GPU present)"; else skipped="$skipped $t(no CUDA device)"; fi ;;
            124|137) stopped="$stopped $t(stopped after ${cap} s or at the budget)" ;;
            *) failed="$failed $t(exit $rc)" ;;
        esac
    done
    if [ -n "$failed" ]; then step_result "$name" failed "$passed passed; failed:$failed${stopped:+; stopped:$stopped}${skipped:+; skipped:$skipped}"
    elif [ -n "$stopped" ]; then step_result "$name" incomplete "$passed passed; not finished:$stopped"
    elif [ $passed -eq 0 ]; then step_result "$name" skipped "${skipped# }"
    else step_result "$name" ok "$passed passed${skipped:+; skipped:$skipped}"; fi
}

step_sanitizer() { # step_sanitizer TOOL TESTS
    local cs
    within_budget "$1" $((reserve + 20)) || return 0
    if [ $has_gpu -eq 0 ]; then step_result "$1" skipped "no GPU"; return 0; fi
    cs=$(find_tool compute-sanitizer) || { step_result "$1" skipped "no compute-sanitizer on this node"; return 0; }
    local before
    before=$(wc -l <"$work/tests.log")
    local extra=""
    [ "$1" = memcheck ] && extra="--leak-check full"
    # shellcheck disable=SC2086
    run_tests "$1" 90 "$2" "$cs" --tool "$1" $extra --error-exitcode 99 --print-limit 20
    # every "ERROR SUMMARY: N errors" (memcheck) or "RACECHECK SUMMARY: N hazards" line with N > 0
    tail -n +"$((before + 1))" "$work/tests.log" | awk -v tool="$1" '
        /^==== [a-z]+: / { t = $NF }
        /(ERROR|RACECHECK) SUMMARY: [1-9]/ { sub(/^=+ */, ""); print tool ": " t ": " $0 }' >>"$work/findings.txt"
}

# ---- the studies ------------------------------------------------------------------------------------
# A study's GPU variants, in two lists: its own (those `speedlab list` says need "cuda" when no device is
# visible) and the framework rows (torch-cuda, jax-gpu) whose framework the node's python3 has
# ("python:torch@cuda: ... sees no cuda device" then; without the framework they say "cannot import" and
# are left out). gpu_variants STUDY prints "OWN FRAMEWORKS", each a comma list or -, or nothing.
gpu_variants() {
    CUDA_VISIBLE_DEVICES='' "$sl" list "$1" 2>/dev/null | awk '
        /^    [a-z]/ && $2 ~ /^cuda:/ { own = own (own == "" ? "" : ",") $1 }
        /^    [a-z]/ && $2 ~ /^python:[a-z0-9+]*@[a-z]*:/ { fw = fw (fw == "" ? "" : ",") $1 }
        END { if (own != "" || fw != "") print (own == "" ? "-" : own) " " (fw == "" ? "-" : fw) }'
}
# "STUDY OWN FRAMEWORKS" a line per study with GPU variants, asked of speedlab once (work/gpu-studies)
studies_with_gpu() {
    local s v
    if [ -f "$work/gpu-studies" ]; then cat "$work/gpu-studies"; return; fi
    for s in $("$sl" list 2>/dev/null | awk '/^[a-z_0-9]+:/ {sub(":", "", $1); print $1}'); do
        v=$(gpu_variants "$s")
        [ -n "$v" ] && printf '%s %s\n' "$s" "$v"
    done >"$work/gpu-studies.part"
    mv "$work/gpu-studies.part" "$work/gpu-studies"
    cat "$work/gpu-studies"
}

# run_study LABEL STUDY VARIANTS ARGS...: one speedlab run into work/runs, its output into studies.log
run_study() {
    local label=$1 s=$2 v=$3 rc
    shift 3
    echo "==== $label: speedlab run $s --variants $v $*" >>"$work/studies.log"
    bounded "$sl" run "$s" --variants "$v" --out "$work/runs/${label%% *}" "$@" >>"$work/studies.log" 2>&1
    rc=$?
    echo "==== exit $rc" >>"$work/studies.log"
    case $rc in
        0) return 0 ;;
        124|137) return 124 ;;
    esac
    return 1
}

# run_tallied NAME LABEL STUDY VARIANTS ARGS...: run_study, unless the budget has no room to start it; a
# stop, a failure or the skip goes into the caller's `stopped` or `problems` under NAME. 1 when skipped.
run_tallied() {
    local name=$1 rc
    shift
    if [ "$(left)" -lt $((reserve + 20)) ]; then stopped="$stopped $name(budget)"; return 1; fi
    run_study "$@"
    rc=$?
    [ $rc -eq 124 ] && stopped="$stopped $name(stopped at the budget)"
    [ $rc -eq 1 ] && problems="$problems $name"
    return 0
}

# step_studies quick|default: every study's own GPU variants first, then the framework rows, so that a
# short budget is spent on the suite's own rows (a framework row starts its interpreter each time and
# runs its training in Python); mlp's and cnn's own rows again with spans=0 in the quick step
step_studies() {
    local kind=$1 s own fw problems="" stopped="" n=0 nf=0 args=()
    [ "$kind" = quick ] && args=(--quick)
    while read -r s own fw; do
        [ "$own" = - ] && continue
        run_tallied "$s" "$kind" "$s" "$own" "${args[@]}" --trace "$work/runs/$kind/trace-$s.json" || continue
        n=$((n + 1))
        if [ "$kind" = quick ] && { [ "$s" = mlp ] || [ "$s" = cnn ]; }; then
            run_tallied "$s-spans=0" "$kind spans=0" "$s" "$own" "${args[@]}" --param spans=0
        fi
    done < <(studies_with_gpu)
    while read -r s own fw; do
        [ "$fw" = - ] && continue
        run_tallied "$s-frameworks" "$kind frameworks" "$s" "$fw" "${args[@]}" && nf=$((nf + 1))
    done < <(studies_with_gpu)
    local ran="studies: $n, with framework rows: $nf"
    if [ -z "$(studies_with_gpu)" ]; then step_result "$kind" failed "speedlab list names no GPU variant (built without CUDA?)"
    elif [ -n "$problems" ]; then step_result "$kind" failed "a case failed in:$problems (studies.log)${stopped:+; not finished:$stopped}"
    elif [ -n "$stopped" ]; then step_result "$kind" incomplete "$ran; not finished:$stopped"
    else step_result "$kind" ok "$ran"; fi
}

# ---- profilers ------------------------------------------------------------------------------------------
# launches_no_kernel NCU STUDY VARIANT: whether the variant launches no kernel at all (ncu without the
# NVTX filter profiles none either), so that an empty NVTX range is what it should be
launches_no_kernel() {
    local rc
    bounded "$1" --launch-count 1 --section SpeedOfLight -f -o "$work/prof/ncu-any" \
        "$sl" run "$2" --variants "$3" --quick --reps 1 --out "$work/prof/runs" >"$work/prof/ncu-any.out" 2>&1
    rc=$?
    { echo "==== ncu without the NVTX filter: $2 $3"; cat "$work/prof/ncu-any.out"; } >>"$work/prof/profilers.log"
    # stopped at the budget: not known (the caller's none); else whether ncu found no kernel at all
    [ $rc -ne 124 ] && grep -q "No kernels were profiled" "$work/prof/ncu-any.out"
    rc=$?
    rm -f "$work/prof/ncu-any.out" "$work/prof/ncu-any.ncu-rep"
    return $rc
}

step_ncu() {
    local ncu s v rc n=0 none="" stopped="" copies=""
    within_budget ncu $((reserve + 30)) || return 0
    if [ $has_gpu -eq 0 ]; then step_result ncu skipped "no GPU"; return 0; fi
    ncu=$(find_tool ncu) || { step_result ncu skipped "no ncu (Nsight Compute) on this node"; return 0; }
    while read -r s v _; do
        [ "$v" = - ] && continue   # framework rows only: their kernels are not speedlab's to range
        [ "$(left)" -gt $((reserve + 20)) ] || { stopped="$stopped $s(budget)"; continue; }
        v=${v%%,*}   # one variant: the first
        bounded "$ncu" --nvtx --nvtx-include "speedlab@$s/" --launch-count 1 --section SpeedOfLight \
            -f -o "$work/prof/ncu-$s-$v" "$sl" run "$s" --variants "$v" --quick --reps 1 \
            --out "$work/prof/runs" >"$work/prof/ncu.out" 2>&1
        rc=$?
        { echo "==== ncu: $s $v"; cat "$work/prof/ncu.out"; } >>"$work/prof/profilers.log"
        # ncu says "No kernels were profiled" when the filter matched no launch
        if [ $rc -eq 124 ]; then
            stopped="$stopped $s(stopped at the budget)"
        elif [ -f "$work/prof/ncu-$s-$v.ncu-rep" ] && ! grep -q "No kernels were profiled" "$work/prof/ncu.out"; then
            n=$((n + 1))
        elif launches_no_kernel "$ncu" "$s" "$v"; then
            copies="$copies $s"   # h2d: copies only, nothing for a kernel profiler to see
        else
            none="$none $s/$v"
        fi
    done < <(studies_with_gpu)
    rm -f "$work/prof/ncu.out"
    if grep -q ERR_NVGPUCTRPERM "$work/prof/profilers.log"; then
        step_result ncu skipped "the driver denies the GPU's counters to this user (ERR_NVGPUCTRPERM): run as root, or ask for NVreg_RestrictProfilingToAdminUsers=0"
    elif [ -n "$none" ]; then
        step_result ncu failed "$n studies profiled; no kernel inside speedlab's NVTX range for:$none (profiles.tar.gz: profilers.log)${stopped:+; not finished:$stopped}"
    elif [ -n "$stopped" ]; then
        step_result ncu incomplete "$n studies profiled; not finished:$stopped"
    else
        step_result ncu ok "$n studies, a kernel each inside speedlab's NVTX range${copies:+; no kernel launched at all (copies only):$copies}"
    fi
}

step_nsys() {
    local nsys
    within_budget nsys $((reserve + 40)) || return 0
    if [ $has_gpu -eq 0 ]; then step_result nsys skipped "no GPU"; return 0; fi
    nsys=$(find_tool nsys) || { step_result nsys skipped "no nsys (Nsight Systems) on this node"; return 0; }
    echo "==== nsys: mlp cuda" >>"$work/prof/profilers.log"
    bounded "$nsys" profile -t cuda,nvtx,osrt --force-overwrite true -o "$work/prof/nsys-mlp-cuda" \
        "$sl" run mlp --variants cuda --quick --reps 1 --out "$work/prof/runs" >>"$work/prof/profilers.log" 2>&1
    if [ $? -eq 124 ]; then
        step_result nsys incomplete "stopped at the budget"
        return 0
    fi
    if [ ! -f "$work/prof/nsys-mlp-cuda.nsys-rep" ]; then
        step_result nsys failed "no report written (profiles.tar.gz: profilers.log)"
        return 0
    fi
    bounded "$nsys" stats --report nvtx_sum,cuda_gpu_kern_sum "$work/prof/nsys-mlp-cuda.nsys-rep" \
        >"$work/prof/nsys-stats.txt" 2>&1
    # nvtx_sum names a range of a domain DOMAIN:NAME
    if grep -qE '(^|[[:space:]])speedlab:epoch([[:space:]]|$)' "$work/prof/nsys-stats.txt"; then
        step_result nsys ok "mlp cuda: speedlab's NVTX ranges (speedlab:epoch) in nsys stats' nvtx_sum"
    else
        step_result nsys failed "mlp cuda: no speedlab:epoch range in nsys stats' nvtx_sum (profiles.tar.gz: nsys-stats.txt)"
    fi
}

# ---- full mode ----------------------------------------------------------------------------------------
# The plan (share/speedlab/full-plan.sh, from the records), printed first, then its steps in order, each
# one line in the summary (ok, failed, incomplete: the budget stopped it, skipped: the budget left too
# little to start it), its records in runs/full
step_full() {
    local name est args rc t0 took
    if ! sh "$here/share/speedlab/full-plan.sh" "$sl" "${records[@]}" >"$work/plan.tsv" 2>>"$work/studies.log" ||
        [ ! -s "$work/plan.tsv" ]; then
        step_result plan failed "full-plan.sh made no plan (studies.log)"
        return 0
    fi
    show_plan "$work/plan.tsv" "the framework rows this node's python has" "$(($(left) - reserve))" >"$work/plan.txt"
    cat "$work/plan.txt" >&3
    cat "$work/plan.txt" >>"$work/studies.log"
    step_result plan ok "$(awk '{n++; t += $2} END {printf "%d steps, %d s estimated", n, t}' "$work/plan.tsv")"
    while IFS='	' read -r name est _ args; do
        if [ "$(left)" -lt $((reserve + 20)) ]; then
            step_result "$name" skipped "budget: $(left) s left of $budget (estimated $est s)"
            continue
        fi
        t0=$(date +%s)
        if [ "$args" = calibrate ]; then
            echo "==== full: speedlab calibrate" >>"$work/studies.log"
            bounded "$sl" calibrate --out "$work/runs/full" >>"$work/studies.log" 2>&1
            rc=$?
            echo "==== exit $rc" >>"$work/studies.log"
            case $rc in 0|124|137) ;; *) rc=1 ;; esac
        else
            # "run STUDY --variants LIST ARGS...": no word of it has a space or a wildcard
            # shellcheck disable=SC2086
            set -- $args
            # the CPU rows as the CPU pages ran them: OpenMP's own wait policy, not the GPU rows' passive one
            case $name in *-cpu) unset OMP_WAIT_POLICY ;; esac
            run_study full "$2" "$4" "${@:5}"
            rc=$?
            export OMP_WAIT_POLICY=PASSIVE
        fi
        took=$(($(date +%s) - t0))
        case $rc in
            0) step_result "$name" ok "$took s (estimated $est s)" ;;
            124|137) step_result "$name" incomplete "stopped at the budget after $took s (estimated $est s)" ;;
            *) step_result "$name" failed "a case failed after $took s (studies.log)" ;;
        esac
    done <"$work/plan.tsv"
}

step_report() {
    local rc
    if ! ls "$work"/runs/*/run-*/results.jsonl >/dev/null 2>&1; then
        step_result report skipped "no runs"
        return 0
    fi
    timeout -k 5 $((reserve - 10)) "$sl" report "$work"/runs/*/run-* --out "$work/report" >>"$work/studies.log" 2>&1
    rc=$?
    case $rc in
        0) step_result report ok "report.tar.gz: report/REPORT.md" ;;
        3) step_result report failed "some records were skipped (studies.log)" ;;
        *) step_result report failed "speedlab report exit $rc (studies.log)" ;;
    esac
}

# ---- summary and packing --------------------------------------------------------------------------------
# The GPU case records, a line per study, variant, run (quick, default; spans=0 apart) and outcome, the
# sizes of that line collapsed (first..last and their count): status or why not, device phases (yes: an
# entry per repetition; part: some null; NO: none on an ok case; off: a spans=0 run, which has none;
# n/a: a framework row, timed by its own program), the largest peak VRAM, the median(s).
# The records are jansson's one-line JSON, read with awk, since a bare node may have no Python.
case_lines() {
    local kind f
    for kind in quick default full; do
        for f in "$work"/runs/"$kind"/run-*/results.jsonl; do [ -f "$f" ] && echo "$kind $f"; done
    done | while read -r kind f; do awk -v kind="$kind" '{print kind "\t" $0}' "$f"; done | awk -F'\t' -v gpu="$1" '
    function str(k,   m) { if (match($2, "\"" k "\":\"([^\"\\\\]|\\\\.)*\"")) return substr($2, RSTART + length(k) + 4, RLENGTH - length(k) - 5); return "" }
    function num(k) { if (match($2, "\"" k "\":-?[0-9][0-9.eE+-]*")) return substr($2, RSTART + length(k) + 3, RLENGTH - length(k) - 3) + 0; return "" }
    BEGIN { n = split(gpu, g, " "); for (i = 1; i <= n; i++) order[g[i]] = i }
    $2 ~ /"kind":"case"/ {
        s = str("study"); v = str("variant")
        if (!((s "/" v) in order)) next
        run = $1; if ($2 ~ /"spans":"?0"?[,}]/) run = run " spans=0"
        st = str("status"); why = st == "ok" ? "" : str("error")
        key = sprintf("%s %03d %s", $1 == "quick" ? 0 : 1, order[s "/" v], run) SUBSEP st SUBSEP why
        if (!(key in cnt)) { keys[++nk] = key; name[key] = s SUBSEP v SUBSEP run; sname[key] = str("size_name")
                             first[key] = num("size"); ph[key] = "" ; vram[key] = -1 }
        cnt[key]++; last[key] = num("size")
        p = "-"; ext = $2 ~ /"traits":\[[^\]]*"external"/
        if (match($2, /"kernel_ms":\[[^\]]*\]/)) p = (substr($2, RSTART, RLENGTH) ~ /null/) ? "part" : "yes"
        else if (st == "ok") p = ext ? "n/a" : run ~ /spans=0$/ ? "off" : "NO"
        if (ph[key] == "" || p == "NO" || (p == "part" && ph[key] == "yes")) ph[key] = p
        m = num("gpu_mem_used_bytes"); if (m != "" && m > vram[key]) vram[key] = m
        md = num("median_s")
        if (md != "" && !(key in hi)) { lo[key] = md; hi[key] = md }
        else if (md != "") { if (md < lo[key]) lo[key] = md; if (md > hi[key]) hi[key] = md }
    }
    END {
        # insertion order within a study/variant, studies in `speedlab list` order, quick before default
        for (i = 1; i <= nk; i++) for (j = i; j > 1 && keys[j - 1] > keys[j]; j--) { t = keys[j]; keys[j] = keys[j - 1]; keys[j - 1] = t }
        for (i = 1; i <= nk; i++) {
            k = keys[i]; split(name[k], nm, SUBSEP); split(k, kk, SUBSEP)
            size = sname[k] "=" first[k] (cnt[k] > 1 ? ".." last[k] " (" cnt[k] ")" : "")
            vr = vram[k] < 0 ? "-" : sprintf("%.0f MiB", vram[k] / 1048576)
            out = kk[2] == "ok" ? (lo[k] == hi[k] ? sprintf("%.4g s", lo[k]) : sprintf("%.4g-%.4g s", lo[k], hi[k])) : kk[3]
            printf "  %-14s %-11s %-16s %-24s %-11s %-5s %-8s %s\n", nm[3], nm[1], nm[2], size, kk[2], ph[k], vr, substr(out, 1, 60)
            if (kk[2] == "ok" && cnt[k] == 1) med1[nm[1] " " nm[2] " " nm[3]] = lo[k]
        }
        # what the per-step CUDA events cost: the quick run with them (spans=1) against without (spans=0)
        for (c in med1) if (c ~ / quick spans=0$/) {
            on = c; sub(/ spans=0$/, "", on)
            if (on in med1) evc[++ne] = sprintf("  %-24s spans=1 %.4g s, spans=0 %.4g s: events cost %+.1f %%", substr(on, 1, length(on) - 6), med1[on], med1[c], 100 * (med1[on] / med1[c] - 1))
        }
        if (ne) { print ""; print "per-step CUDA events (mlp, cnn; quick sizes):"; for (i = 1; i <= ne; i++) print evc[i] }
    }'
}

write_summary() {
    local verdict=$1 gpu_cases
    gpu_cases=$(studies_with_gpu | awk '{n = split($2 "," $3, v, ","); for (i = 1; i <= n; i++) if (v[i] != "-") printf "%s/%s ", $1, v[i]}')
    {
        echo "speedlab gpu-check: bundle $SL_BUNDLE_SOURCE (built $SL_BUNDLE_BUILT)"
        echo "node: ${node_line:-unknown}"
        echo "time: $(($(date +%s) - start)) s of a $budget s budget"
        echo
        echo "steps:"
        awk -F'\t' 'NR == FNR { if (length($1) > w) w = length($1); next }
                     { printf "  %-" (w > 10 ? w : 10) "s %-8s %s\n", $1, $2, $3 }' "$work/steps.txt" "$work/steps.txt"
        echo
        [ -f "$work/plan.txt" ] && { cat "$work/plan.txt"; echo; }
        echo "GPU cases (phases: device phases per repetition, off with spans=0, n/a for a framework row; vram: peak device memory in use):"
        printf '  %-14s %-11s %-16s %-24s %-11s %-5s %-8s %s\n' run study variant sizes status phases vram "median / why"
        case_lines "$gpu_cases"
        echo
        if [ -s "$work/findings.txt" ]; then echo "sanitizer findings:"; sed 's/^/  /' "$work/findings.txt"
        else echo "sanitizer findings: none"; fi
        echo
        echo "verdict: $verdict"
    } >"$out/summary.txt"
}

# Moves the logs and packs the rest into DIR; once only (a signal during it does not start it again).
packed=0
pack() {
    local ok=1 f
    [ $packed -eq 0 ] || return 0
    packed=1
    trap '' INT TERM
    cat "$work"/runs/*/run-*/results.jsonl >"$out/records.jsonl" 2>/dev/null
    for f in node.txt tests.log studies.log; do [ -f "$work/$f" ] && mv "$work/$f" "$out/$f"; done
    # not the input arrays a failed framework row keeps for a rerun by hand (Fashion-MNIST as float32 is
    # hundreds of MB); the seed makes them again
    tar -C "$work" -czf "$out/runs.tar.gz" --exclude='*/baselines/*/arrays' runs || ok=0
    if [ -d "$work/report" ]; then tar -C "$work" -czf "$out/report.tar.gz" report || ok=0; fi
    (cd "$work/prof" && tar -czf "$out/profiles.tar.gz" --exclude runs ./*) 2>/dev/null || ok=0
    if [ $ok -eq 1 ]; then rm -rf "$work"; else say "packing failed: everything is still in $work"; fi
}

# The verdict and the exit status, from the steps: failed > no GPU > incomplete (the budget) > ok.
verdict() {
    if grep -q "	failed	" "$work/steps.txt"; then echo "1 FAILED: see the steps above"
    elif [ $has_gpu -eq 0 ]; then echo "3 NO GPU: every CPU step ok, every GPU case unavailable"
    elif grep -qE "	incomplete	|	skipped	budget" "$work/steps.txt"; then
        echo "4 INCOMPLETE: nothing failed, but the budget stopped or skipped the steps marked so"
    else
        # steps a node's missing tool skipped do not count against it; the verdict names them
        local notrun
        notrun=$(awk -F'\t' '$2 == "skipped" && $3 !~ /^budget/ {printf " %s", $1}' "$work/steps.txt")
        echo "0 ALL OK on $gpu_name${notrun:+ (not run here:$notrun; see the steps)}"
    fi
}

# Ctrl-C or a kill: stop the running step (its timeout forwards the signal), then summarise and pack.
on_signal() {
    trap '' INT TERM
    [ -n "$child" ] && kill -TERM "$child" 2>/dev/null && wait "$child" 2>/dev/null
    say "interrupted: packing what is done into $out"
    step_result interrupted failed "a signal stopped the check"
    write_summary "INTERRUPTED: the steps above ran, the rest did not"
    pack
    exit 130
}

main() {
    local v rc
    : >"$work/tests.log"; : >"$work/studies.log"; : >"$work/prof/profilers.log"
    say "bundle $SL_BUNDLE_SOURCE; budget $budget s$([ "$mode" = full ] && echo ", full mode"); outputs in $out"
    # the studies before the sanitizers: under a short budget every GPU variant runs first
    if [ "$mode" = full ]; then
        step_node && step_full
    elif step_node; then
        within_budget tests $((reserve + 10)) && run_tests tests 300 "$SL_CUDA_TESTS"
        within_budget quick $((reserve + 20)) && step_studies quick
        step_sanitizer memcheck "$SL_CUDA_TESTS"
        step_ncu
        step_nsys
        within_budget default $((reserve + 20)) && step_studies default
        step_sanitizer racecheck "$SL_RACECHECK_TESTS"
    fi
    step_report
    v=$(verdict)
    rc=${v%% *}
    write_summary "${v#* }"
    pack
    cat "$out/summary.txt"
    return "$rc"
}

trap on_signal INT TERM
main
