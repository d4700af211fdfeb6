#!/bin/bash
# tests/slurm/test_plan.sh SPEEDLAB GOLDEN_DIR [--update]: `speedlab plan`, the scripts `speedlab slurm` writes
# (against golden files), the report's missing cases and --resubmit's cases file, the env's Slurm fields.
# No Slurm needed. TAP: one "ok"/"not ok" line per check.
# --update writes the golden scripts instead of failing on them: only `ninja -C BUILD update-goldens`
# passes it, for a person to review the diff; a test run never writes, whatever its environment holds.
set -u
update=0
[ "${3:-}" = --update ] && update=1
[ $update = 0 ] && [ -n "${SPEEDLAB_UPDATE_GOLDEN:-}" ] &&
    echo "# SPEEDLAB_UPDATE_GOLDEN is ignored: ninja -C BUILD update-goldens writes the golden scripts"
speedlab=$(realpath "${1:?usage: test_plan.sh SPEEDLAB GOLDEN_DIR}")
golden=$(realpath "${2:?usage: test_plan.sh SPEEDLAB GOLDEN_DIR}")
tmp=$(mktemp -d /tmp/speedlab-plan-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
n=0
check() { # NAME COMMAND...: one TAP line, from the command's status
    local name=$1; shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $name"; else echo "not ok $n - $name"; fi
}
has() { grep -q -- "$2" "$1" || { echo "# $1 lacks '$2':"; sed 's/^/#   /' "$1" | head -20; return 1; }; }
lines() { [ "$(grep -vc '^#' "$1")" = "$2" ] || { echo "# $1: $(grep -vc '^#' "$1") case lines, expected $2"; return 1; }; }
status() { local want=$1; shift; "$@" >out.txt 2>err.txt; local rc=$?; [ $rc = "$want" ] ||
    { echo "# exit $rc, expected $want:"; sed 's/^/#   /' err.txt; return 1; }; }

# A calibration record and an earlier record of one case (tensor_mean naive N=64, median 0.5 s).
printf '%s\n' '{"schema":"speedlab-results","schema_version":1,"kind":"calibration","env":{"host":"fakehost"},"ceilings":{"triad_gbs_1t":10,"triad_gbs":20,"fma_gflops_1t":100,"fma_gflops":200}}' > calib.jsonl
cp calib.jsonl known.jsonl
printf '%s\n' '{"kind":"case","study":"tensor_mean","variant":"naive","size":64,"status":"ok","params":{},"stats":{"median_s":0.5},"env":{"host":"fakehost"}}' >> known.jsonl
: > empty.jsonl
# The same case measured twice, the newer record first in the file: the newer one (by time) counts.
mkdir -p two/run-b two/run-a
printf '%s\n' '{"kind":"case","time":"2026-06-01T00:00:00Z","study":"tensor_mean","variant":"naive","size":64,"status":"ok","params":{},"stats":{"median_s":0.5},"env":{"host":"newhost"}}' > two/run-a/results.jsonl
printf '%s\n' '{"kind":"case","time":"2026-01-01T00:00:00Z","study":"tensor_mean","variant":"naive","size":64,"status":"ok","params":{},"stats":{"median_s":9},"env":{"host":"oldhost"}}' > two/run-b/results.jsonl

status 0 "$speedlab" plan entropy_mi tensor_mean --quick --variants naive,simd --out p1 --calibration empty.jsonl
check "plan prints the count" has out.txt 'speedlab plan: 8 cases (8 CPU, 0 GPU) -> p1/cases.tsv'
check "plan writes a versioned cases file" has p1/cases.tsv '^# speedlab cases v1$'
check "the cases file has one line per case" lines p1/cases.tsv 8
check "a case line: index study variant size seed reps device params estimate" \
    has p1/cases.tsv "$(printf '^7\ttensor_mean\tsimd\t256\t42\t2\tcpu\t-\t-$')"
check "without calibration, no estimate and why" has out.txt 'no estimate: no calibration on hand'
check "the total says how many cases have no estimate" has out.txt '8 cases without an estimate'

status 0 "$speedlab" plan tensor_mean --quick --variants naive,simd --calibration calib.jsonl
check "plan without --out writes no file" test ! -e cases.tsv
check "a calibration gives roofline lower bounds, said so" has out.txt '>= .*roofline of calibration on fakehost: a lower bound'

status 0 "$speedlab" plan tensor_mean --quick --variants naive --sizes 64 --calibration known.jsonl --out p2
# 2 reps of 0.5 s + 1 warm-up + the check's run = 2 s
check "an earlier record of the case gives its estimate" has out.txt 'measured before on fakehost: median 0.5 s per rep'
check "the estimate counts reps, warm-up and the check" has p2/cases.tsv "$(printf '\tcpu\t-\t2$')"

status 0 "$speedlab" plan tensor_mean --quick --variants naive --sizes 64 --calibration two
check "of two earlier records, the newer one gives the estimate" has out.txt 'measured before on newhost: median 0.5 s'

status 0 "$speedlab" plan mlp --variants naive --param epochs=3 --param lr=0.05 --out p3 --calibration empty.jsonl
check "a training study's plan states its epochs" has out.txt '3 epochs per rep'
check "params are part of the case line" has p3/cases.tsv "$(printf '\tepochs=3 lr=0.05 ')"

status 0 "$speedlab" plan entropy_mi --variants numpy --sizes 256 --param form=einsum --out p4 --calibration empty.jsonl
check "--param form= is run-wide: every task passes it on" has p4/cases.tsv '^# options: --param form=einsum$'
check "and it is in no case's params" has p4/cases.tsv "$(printf '\tcpu\t-\t-$')"

check "an unknown study is a usage error" status 2 "$speedlab" plan nosuch
check "a --param value that needs quoting is refused" status 2 "$speedlab" plan mlp --param 'lr=0 1'
check "slurm needs --out" status 2 "$speedlab" slurm tensor_mean --quick
check "slurm: --chunk 0 is refused" status 2 "$speedlab" slurm tensor_mean --out s0 --chunk 0
status 0 "$speedlab" slurm tensor_mean --quick --out s1 --calibration empty.jsonl
check "slurm refuses an --out that holds a submission" status 2 "$speedlab" slurm tensor_mean --quick --out s1
check "slurm refuses a plan without cases" status 2 "$speedlab" slurm entropy_mi tensor_mean --variants factorized --sizes 64 --out s2
check "plan --help" status 0 "$speedlab" plan --help
check "slurm --help names --resubmit" has <("$speedlab" slurm --help) '--resubmit DIR'

# The scripts, against the golden files (the run directory and the binary's path replaced).
status 0 "$speedlab" slurm entropy_mi --quick --variants naive,cuda --out "$tmp/g" --partition cpu \
    --gpu-partition gpu --chunk 2 --max-running 3 --time 00:10:00 --cpus-per-task 2 --gpus 1 \
    --sbatch-arg=--account=proj --calibration empty.jsonl
for f in cpu.sbatch gpu.sbatch calibrate-cpu.sbatch calibrate-gpu.sbatch merge.sbatch submit.sh; do
    sed -e "s|$tmp/g|@DIR@|g" -e "s|$speedlab|@SPEEDLAB@|g" "g/slurm/$f" > "$f.got"
    [ $update = 1 ] && cp "$f.got" "$golden/$f"
    check "golden $f" diff -u "$golden/$f" "$f.got"
done
check "the scripts are valid shell" bash -n g/slurm/cpu.sbatch
check "submit.sh is valid shell" sh -n g/slurm/submit.sh

# One case of eight run (as one task would), then the report and --resubmit see the other seven.
status 0 "$speedlab" slurm entropy_mi tensor_mean --quick --variants naive,simd --out m --chunk 2 \
    --calibration empty.jsonl
SLURM_JOB_ID=41 SLURM_ARRAY_JOB_ID=40 SLURM_ARRAY_TASK_ID=1 SLURMD_NODENAME=node7 SLURM_JOB_PARTITION=short \
    "$speedlab" run tensor_mean --quick --variants naive --sizes 64 --out m/40_1 >/dev/null
check "records carry the Slurm job, task, node and partition" \
    has m/40_1/latest/results.jsonl '"slurm_job_id":"41","slurm_array_job_id":"40","slurm_array_task_id":"1","slurm_node":"node7","slurm_partition":"short"'
env -u SLURM_JOB_ID "$speedlab" run tensor_mean --quick --variants naive --sizes 64 --out plain >/dev/null
check "records outside Slurm have no slurm fields" bash -c "! grep -q slurm_ plain/latest/results.jsonl"
status 0 "$speedlab" report m --out m/report --no-plots
check "report: the missing cases on stderr" has err.txt '7 of the 8 cases planned in m/cases.tsv have no record'
check "report: REPORT.md lists them" has m/report/REPORT.md '^| 5 | tensor_mean | simd | 64 | cpu | — |$'
check "report: the case that ran is not listed" bash -c "! grep -q '^| 4 | tensor_mean | naive | 64 |' m/report/REPORT.md"
status 0 "$speedlab" slurm --resubmit m --time 00:02:00
check "--resubmit: the missing cases in a new cases file" lines m/resubmit-1.cases.tsv 7
check "--resubmit: an array of 4 tasks (7 cases, 2 per task)" has m/slurm-resubmit-1/cpu.sbatch '^#SBATCH --array=0-3%8$'
check "--resubmit: a given option overrides the first submission's" has m/slurm-resubmit-1/cpu.sbatch '^#SBATCH --time=00:02:00$'
check "--resubmit: no second calibration" test ! -e m/slurm-resubmit-1/calibrate-cpu.sbatch
check "--resubmit of a directory without a plan is a usage error" status 2 "$speedlab" slurm --resubmit p1/..

# Every generated script passes shellcheck (Debian's; .ci/run installs it), warnings included.
if command -v shellcheck >/dev/null; then
    for f in g/slurm/*.sbatch g/slurm/submit.sh m/slurm-resubmit-1/*.sbatch m/slurm-resubmit-1/submit.sh; do
        check "shellcheck $f" shellcheck -S warning "$f"
    done
else
    n=$((n + 1)); echo "ok $n - # SKIP shellcheck not installed (apt-get install shellcheck)"
fi

# Non-canonical parameters (0.10, 01, 0512, 1e-2) are planned in the form the record will hold them, so
# the case that ran is matched: the report finds no case missing and --resubmit has nothing to run.
status 0 "$speedlab" plan mlp --quick --variants simd --param lr=0.10 --param epochs=01 --param train_rows=0512 \
    --param lr_final=1e-2 --out rt --calibration empty.jsonl
check "plan writes the params in the record's form" has rt/cases.tsv "$(printf '\tepochs=1 lr=0.1 lr_final=0.01 ')"
set --; for p in $(awk -F'\t' '!/^#/ {print $8}' rt/cases.tsv); do set -- "$@" --param "$p"; done
"$speedlab" run mlp --quick --variants simd --sizes 64 "$@" --out rt/1_0 >/dev/null 2>&1
status 0 "$speedlab" report rt --out rt/report --no-plots
check "the report finds the planned case's record" bash -c "! grep -q 'have no record' err.txt"
status 0 "$speedlab" slurm --resubmit rt
check "--resubmit has nothing to run" has out.txt '0 of the 1 cases in .*rt/cases.tsv have no record'

# Hostile input never reaches a shell. A cases file whose '# options:' line was edited to close the
# quote: --resubmit refuses it (file:line, the word) and writes nothing.
status 0 "$speedlab" slurm tensor_mean --quick --variants naive --sizes 64 --out inj --calibration empty.jsonl
sed -i "s|^# options: .*|# options: --quick'; touch PWNED; echo '|" inj/cases.tsv
check "--resubmit refuses an '# options:' word that needs quoting" status 2 "$speedlab" slurm --resubmit inj
check "... saying where and which word" has err.txt "inj/cases.tsv:2: '# options:' has '--quick';'"
check "... and writes no script" test ! -e inj/slurm-resubmit-1
check "... and runs nothing" test ! -e PWNED
# An --out with shell or #SBATCH-breaking characters is refused before anything is made.
check "slurm refuses an --out with ';' and \${IFS}" status 2 "$speedlab" slurm tensor_mean --quick --out 'o/y;touch${IFS}PWN5;'
check "... naming the character" has err.txt "where ';' cannot stand"
check "... and makes nothing" test ! -e o
check "slurm refuses an --out with a space" status 2 "$speedlab" slurm tensor_mean --quick --out 'sp ace'
check "... and makes nothing" test ! -e 'sp ace'
# The task script as Slurm runs it (its variables set, srun a stand-in that runs its command): the case
# runs into DIR/JOB_TASK, and nothing outside the output folder changes.
mkdir -p fakebin && printf '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec "$@"\n' > fakebin/srun
chmod +x fakebin/srun
status 0 "$speedlab" slurm tensor_mean --quick --variants naive --sizes 64 --out 'odd+dir@x=1,a:b' --calibration empty.jsonl
before=$(find . -path './odd+dir@x=1,a:b' -prune -o -print | sort)
task() { SLURM_ARRAY_JOB_ID=7 SLURM_ARRAY_TASK_ID=$1 SLURM_CPUS_PER_TASK=1 PATH="$tmp/fakebin:$PATH" \
    bash 'odd+dir@x=1,a:b/slurm/cpu.sbatch' >'odd+dir@x=1,a:b/task.log' 2>&1; }
check "the task script runs with Slurm's variables set" task 0
check "... its case into DIR/JOB_TASK" has 'odd+dir@x=1,a:b/7_0/latest/results.jsonl' '"status":"ok"'
check "... and nothing outside the output folder changed" \
    test "$(find . -path './odd+dir@x=1,a:b' -prune -o -print | sort)" = "$before"
fails() { ! "$@"; }
check "a task with no case of its own fails, not exit 0" fails task 5
check "... saying why" has 'odd+dir@x=1,a:b/task.log' 'task 5 has no cpu case'

# What was asked is what ran. galaxy's size is max_iter: --param max_iter=2 is the case's size and in
# its line, so the task passes it on and trains 2 iterations, and the record (max_iter 2) is the
# planned case's; the report labels it max_iter=2.
status 0 "$speedlab" slurm galaxy --quick --variants simd --param max_iter=2 --out 'gx' --calibration empty.jsonl
check "--param max_iter=2 (the size's parameter) is the case's size" has gx/cases.tsv "$(printf '\tsimd\t2\t')"
check "... and in its params" has gx/cases.tsv "$(printf '\tmax_iter=2 ')"
check "the galaxy task runs" bash -c "SLURM_ARRAY_JOB_ID=8 SLURM_ARRAY_TASK_ID=0 SLURM_CPUS_PER_TASK=1 \
    PATH='$tmp/fakebin:$PATH' bash gx/slurm/cpu.sbatch >gx/task.log 2>&1"
check "... its record says max_iter 2" has gx/8_0/latest/results.jsonl '"max_iter":"2"'
check "... and it trained 2 iterations" has gx/8_0/latest/results.jsonl '"iterations":2\.0,'
status 0 "$speedlab" report gx --out gx/report --no-plots
check "... and the report finds the planned case's record" bash -c "! grep -q 'have no record' err.txt"
check "... and labels it max_iter=2" bash -c "grep -rq '^| max_iter=2 | simd |' gx/report/*/galaxy.md"
status 0 "$speedlab" plan galaxy --quick --variants simd --param max_iter=2 --calibration gx/8_0
check "... and a later plan's estimate finds it" has out.txt 'measured before on'
status 0 "$speedlab" slurm --resubmit gx
check "... and --resubmit has nothing to run" has out.txt '0 of the 1 cases in .*gx/cases.tsv have no record'

# A cases file's options cannot change which cases run: one that narrows the variants or sizes, or adds
# a study, is refused on --resubmit, naming the word (it once made every task run the narrowed case and
# --resubmit loop on the others).
status 0 "$speedlab" slurm tensor_mean --quick --variants naive,simd --sizes 64 --out nar --calibration empty.jsonl
for edit in '--variants naive' '--sizes=64' '--param N=64' 'entropy_mi' '--reps 9'; do
    sed -i "s|^# options: .*|# options: --quick $edit|" nar/cases.tsv
    check "--resubmit refuses '# options: --quick $edit'" status 2 "$speedlab" slurm --resubmit nar
    check "... naming the word" has err.txt "nar/cases.tsv:2: '# options:' has '${edit%%[ =]*}'"
    check "... and writes no script" test ! -e nar/slurm-resubmit-1
done
sed -i "s|^# options: .*|# options: --quick --param form=einsum --min-time 0|" nar/cases.tsv
check "--resubmit takes run-wide options (--param form=, --min-time)" status 0 "$speedlab" slurm --resubmit nar

echo "1..$n"
