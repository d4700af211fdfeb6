#!/bin/sh
# run-experiments.sh SPEEDLAB OUT [--quick]
#
# What `ninja -C build run-experiments` (and run-experiments-quick, with --quick) runs: calibrate and run
# every study at the case-study sizes into a new run directory OUT/run-..., then build that run's report
# into OUT/latest/report. Exit status: the run's (0 ok, 1 a case failed, 2 usage, 130 interrupted), or the
# report's when the run was clean and the report was not.
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 SPEEDLAB OUT [--quick]" >&2
    exit 2
fi
speedlab=$1
out=$2
shift 2

# What is about to run and about how long (issue 20): the plan's count and total, estimated from the
# records and calibrations of earlier runs under OUT (docs/slurm.md, "Estimates"). A first run has
# nothing to estimate from (its own calibration comes next): the count only, and why no time.
if [ -e "$out/latest" ]; then
    "$speedlab" plan all --calibration "$out" "$@" | tail -n 2
else
    "$speedlab" plan all "$@" | tail -n 2 | head -n 1
    echo "run-experiments: no earlier run in $out to estimate the time from; the next run will print an estimate"
fi

"$speedlab" run all --calibrate --out "$out" "$@"
rc=$?
case $rc in
    0|1) ;;                  # finished (1: some case failed; its record says why): report it anyway
    *) exit $rc ;;           # bad usage or interrupted: nothing to report
esac

"$speedlab" report "$out/latest" --out "$out/latest/report"
report_rc=$?
if [ $report_rc -eq 0 ]; then
    echo "run-experiments: report in $out/latest/report/REPORT.md"
else
    echo "run-experiments: 'speedlab report' exited $report_rc (3: some records were skipped, see above;" \
         "the results are complete in $out/latest/results.jsonl)" >&2
    [ $rc -eq 0 ] && rc=$report_rc
fi
exit $rc
