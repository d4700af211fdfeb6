#!/bin/bash
# tests/slurm/test_slurm.sh SPEEDLAB array|killed: `speedlab slurm` on a real one-node Slurm.
#
#   array   two studies' quick cases (8) as a CPU array of 4 tasks, after the calibration job, then the
#           merge job: every task ran, the merged report has every planned case, and every case record
#           carries the array's job id, its task id, the node and the partition.
#   killed  4 cases as 4 tasks, one at a time; task 3 is cancelled (scancel) while it waits: the merged
#           report names its case as missing, and `speedlab slurm --resubmit` runs it, after which the
#           report has every case.
#
# The cluster is tests/slurm/slurm-up.sh's, in a temporary directory, stopped on exit. Exit 77 (Meson's
# skip) with the reason when Slurm cannot run here: packages missing (sh scripts/setup.sh --slurm), not
# root, daemons that do not start.
set -u
speedlab=$(realpath "${1:?usage: test_slurm.sh SPEEDLAB array|killed}")
mode=${2:?usage: test_slurm.sh SPEEDLAB array|killed}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/speedlab-slurm-XXXXXX)
cleanup() { sh "$here/slurm-down.sh" "$tmp/cluster"; rm -rf "$tmp"; }
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }
sh "$here/slurm-up.sh" "$tmp/cluster" || exit $?   # 77: skip, with the reason on stderr
export SLURM_CONF=$tmp/cluster/slurm.conf PATH=$PATH:/usr/sbin

# job_id NAME FILE: the id submit.sh wrote for NAME.
job_id() { awk -v n="$1" '$1 == n { print $2 }' "$2"; }

# wait_done JOB: until Slurm no longer lists the job (done, failed or cancelled), at most 150 s.
wait_done() {
    local i=0
    while [ -n "$(squeue -h -j "$1" 2>/dev/null)" ]; do
        [ $i -ge 150 ] && { squeue; fail "job $1 not done after 150 s"; }
        sleep 1; i=$((i + 1))
    done
}

# check_records DIR ARRAY_ID: every planned case has one record, from a task of that array (or any
# array when ARRAY_ID is empty), with node and partition; prints how many.
check_records() {
    python3 - "$1" "$2" <<'EOF' || exit 1
import glob, json, sys
out, array = sys.argv[1], sys.argv[2]
planned = [l.rstrip("\n").split("\t") for l in open(out + "/cases.tsv") if not l.startswith("#")]
recs = {}
for f in glob.glob(out + "/*_*/run-*/results.jsonl"):
    for line in open(f):
        r = json.loads(line)
        recs[(r["study"], r["variant"], str(r["size"]))] = r
bad = []
for p in planned:
    r = recs.get((p[1], p[2], p[3]))
    if r is None:
        bad.append("case %s (%s %s %s): no record" % (p[0], p[1], p[2], p[3]))
        continue
    e = r["env"]
    if r["status"] != "ok":
        bad.append("case %s: status %s: %s" % (p[0], r["status"], r.get("error")))
    for k in ("slurm_job_id", "slurm_array_job_id", "slurm_array_task_id", "slurm_node", "slurm_partition"):
        if k not in e:
            bad.append("case %s: env has no %s" % (p[0], k))
    if array and e.get("slurm_array_job_id") != array:
        bad.append("case %s: slurm_array_job_id %s, expected %s" % (p[0], e.get("slurm_array_job_id"), array))
if bad:
    print("FAIL:", "\n  ".join(bad)); sys.exit(1)
print("ok: %d planned cases, each with its record and the Slurm job, task, node and partition" % len(planned))
EOF
}

if [ "$mode" = array ]; then
    out=$tmp/out
    "$speedlab" slurm entropy_mi tensor_mean --quick --variants naive,simd --out "$out" --partition debug \
        --chunk 2 --max-running 2 --time 00:05:00 --submit || fail "speedlab slurm --submit exited $?"
    jobs=$out/slurm/jobs.txt
    cpu=$(job_id cpu "$jobs") merge=$(job_id merge "$jobs") cal=$(job_id calibrate-cpu "$jobs")
    [ -n "$cpu" ] && [ -n "$merge" ] && [ -n "$cal" ] || fail "submit.sh wrote no job ids: $(cat "$jobs")"
    grep -q '^#SBATCH --array=0-3%2$' "$out/slurm/cpu.sbatch" || fail "cpu.sbatch: not an array of 4 tasks"
    wait_done "$merge"
    for t in 0 1 2 3; do
        [ -f "$out/slurm/logs/speedlab-cpu-${cpu}_$t.out" ] || fail "task $t left no log"
    done
    ls "$out"/calibration/debug/run-*/results.jsonl >/dev/null 2>&1 || fail "no calibration record"
    check_records "$out" "$cpu"
    grep -q 'plans 8 cases; every one has a record' "$out/report/REPORT.md" ||
        fail "the merged report does not say every case has a record: $(grep -A3 Planned "$out/report/REPORT.md")"
    echo "ok: array job $cpu (4 tasks) after calibration $cal, merge job $merge: report complete"
    exit 0
fi

[ "$mode" = killed ] || fail "mode '$mode': expected array or killed"
out=$tmp/out
"$speedlab" slurm tensor_mean --quick --variants naive,simd --out "$out" --partition debug --chunk 1 \
    --max-running 1 --time 00:05:00 --no-calibrate --submit || fail "speedlab slurm --submit exited $?"
cpu=$(job_id cpu "$out/slurm/jobs.txt") merge=$(job_id merge "$out/slurm/jobs.txt")
# One task at a time: task 3 is still waiting when it is cancelled, so its case never runs.
scancel "${cpu}_3" || fail "scancel ${cpu}_3"
wait_done "$merge"
[ -f "$out/slurm/logs/speedlab-cpu-${cpu}_3.out" ] && fail "task 3 ran although cancelled"
missing=$(awk -F'\t' '!/^#/ && $1 == 3 { print $2 " " $3 " " $4 }' "$out/cases.tsv")
grep -q 'plans 4 cases; \*\*1 have no record\*\*' "$out/report/REPORT.md" ||
    fail "the merged report does not name 1 missing case: $(grep -A8 Planned "$out/report/REPORT.md")"
set -- $missing
grep -q "^| 3 | $1 | $2 | $3 | cpu |" "$out/report/REPORT.md" || fail "the report does not list case 3 ($missing)"
echo "ok: task 3 cancelled; the merged report names case 3 ($missing) as missing"

"$speedlab" slurm --resubmit "$out" --submit || fail "speedlab slurm --resubmit exited $?"
[ "$(grep -vc '^#' "$out/resubmit-1.cases.tsv")" = 1 ] || fail "resubmit-1.cases.tsv: not exactly the 1 missing case"
wait_done "$(job_id merge "$out/slurm-resubmit-1/jobs.txt")"
check_records "$out" ""
grep -q 'plans 4 cases; every one has a record' "$out/report/REPORT.md" ||
    fail "after --resubmit the report still misses cases: $(grep -A8 Planned "$out/report/REPORT.md")"
echo "ok: --resubmit ran only the missing case; the merged report is complete"
