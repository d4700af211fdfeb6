#!/bin/sh
# run-experiments.sh SPEEDLAB OUT [--quick]
#
# What `ninja -C build run-experiments` (and run-experiments-quick, with --quick) runs: calibrate and run
# every study at the case-study sizes into a new run directory OUT/run-..., then build that run's report
# into OUT/latest/report. Exit status: the run's (0 ok, 1 a case failed, 2 usage, 130 interrupted).
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 SPEEDLAB OUT [--quick]" >&2
    exit 2
fi
speedlab=$1
out=$2
shift 2

"$speedlab" run all --calibrate --out "$out" "$@"
rc=$?
case $rc in
    0|1) ;;                  # finished (1: some case failed; its record says why): report it anyway
    *) exit $rc ;;           # bad usage or interrupted: nothing to report
esac

if "$speedlab" report "$out/latest" --out "$out/latest/report"; then
    echo "run-experiments: report in $out/latest/report"
else
    echo "run-experiments: WARNING: 'speedlab report' failed (exit $?); the results are complete in" \
         "$out/latest/results.jsonl, but there is no report for them" >&2
fi
exit $rc
