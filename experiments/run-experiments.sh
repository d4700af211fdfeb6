#!/bin/sh
# run-experiments.sh SPEEDLAB OUT [--quick]
#
# What `ninja -C build run-experiments` (and run-experiments-quick, with --quick) runs: every table and
# figure of the case studies, in one report.
#   0. `tune`: the ISA level of each CPU variant, chosen by timing (a dispatch build; docs/isa-levels.md);
#   1. `run all --calibrate`: every study at its case-study sizes, into a new run directory OUT/run-...
#      (OUT/latest points at it);
#   2. the runs `run all` cannot make with one set of options, into RUNDIR/extra/run-...: pipeline with
#      the page cache cold (`--param cache=cold`; without root, or where the kernel refuses drop_caches,
#      the records say which eviction ran), and mlp's and cnn's batch-size sweep (omp, batches 16-1024,
#      2 epochs each, so that every batch size trains the same number of epochs);
#   3. `report RUNDIR`, which reads the run and RUNDIR/extra, into RUNDIR/report.
# Exit status: 0 ok, 1 a case failed (its record says why), 2 usage, 130 interrupted (the finished runs
# keep their records, no report), else the report's when every run was clean and the report was not.
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 SPEEDLAB OUT [--quick]" >&2
    exit 2
fi
speedlab=$1
out=$2
shift 2
quick=0
[ "${1:-}" = --quick ] && quick=1

# The extra runs' options. --quick keeps their shape (two batch sizes, one epoch, 4096 rows) at a few
# seconds each; the sweep's sizes are the studies' own sweep sizes (speedlab list mlp).
sweep_sizes=16,32,64,128,256,512,1024
sweep_params="--param epochs=2"
if [ $quick -eq 1 ]; then
    sweep_sizes=16,256
    sweep_params="--param epochs=1 --param train_rows=4096"
fi

# What is about to run and about how long: the plan's count and total, estimated from the records and
# calibrations of earlier runs under OUT (docs/slurm.md, "Estimates"). A first run has nothing to
# estimate from (its own calibration comes next): the count only, and why no time.
if [ -e "$out/latest" ]; then
    "$speedlab" plan all --calibration "$out" "$@" | tail -n 2
else
    "$speedlab" plan all "$@" | tail -n 2 | head -n 1
    echo "run-experiments: no earlier run in $out to estimate the time from; the next run will print an estimate"
fi
echo "run-experiments: then pipeline with a cold page cache and the mlp and cnn batch sweeps" \
     "(omp, batches $sweep_sizes)"

# rc: the worst exit status so far of the runs that finished (0, then 1 when a case failed).
rc=0
finished() {
    case $1 in
        0) ;;
        1) rc=1 ;;                   # a case failed; its record says why: report it anyway
        *) exit "$1" ;;              # bad usage or interrupted: nothing more to run or report
    esac
}

# The planner first: in a dispatch build, each CPU variant timed at the CPU's two widest levels and the
# faster kept in the wisdom file (seconds to a minute); a native build has one level and says so.
# A failed tune costs no case: the run goes on, at the widest level where no choice was kept. Not with
# SPEEDLAB_TUNE=off (the wisdom is not to be used) or SPEEDLAB_ISA set (one level, forced).
if [ "${SPEEDLAB_TUNE:-on}" != off ] && [ -z "${SPEEDLAB_ISA:-}" ]; then
    "$speedlab" tune || echo "run-experiments: 'speedlab tune' exited $? (see above): the cases without a" \
        "choice run at the widest level" >&2
fi
"$speedlab" run all --calibrate --out "$out" "$@"
finished $?
# The run directory itself, not the link: the extra runs must land beside it whatever moves latest.
main=$(cd "$out/latest" && pwd -P) || exit 1

# shellcheck disable=SC2086  # sweep_params holds several options, split on purpose
{
    "$speedlab" run pipeline --param cache=cold --out "$main/extra" "$@"
    finished $?
    "$speedlab" run mlp --variants omp --sizes "$sweep_sizes" $sweep_params --reps 1 --out "$main/extra" "$@"
    finished $?
    "$speedlab" run cnn --variants omp --sizes "$sweep_sizes" $sweep_params --reps 1 --out "$main/extra" "$@"
    finished $?
}

"$speedlab" report "$main" --out "$main/report"
report_rc=$?
if [ $report_rc -eq 0 ]; then
    echo "run-experiments: report in $out/latest/report/REPORT.md"
else
    echo "run-experiments: 'speedlab report' exited $report_rc (3: some records were skipped, see above;" \
         "the results are complete in $main/results.jsonl and $main/extra)" >&2
    [ $rc -eq 0 ] && rc=$report_rc
fi
exit $rc
