#!/bin/sh
# Submits the jobs beside this file in order, each held until the ones it needs are done, and
# writes their ids to jobs.txt (written by `speedlab slurm`). afterany, not afterok: a failed or
# cancelled task must not keep the merge job from reporting what is missing.
set -eu
cd "$(dirname "$0")"
: > jobs.txt
submit() { # NAME SCRIPT [sbatch options]: prints the job id
    name=$1 script=$2; shift 2
    id=$(sbatch --parsable "$@" "$script"); id=${id%%;*}
    echo "$name $id" >> jobs.txt; echo "speedlab-slurm: $name: job $id" >&2; echo "$id"
}
cpu_after=''
gpu_after=''
cpu_after=--dependency=afterany:$(submit calibrate-cpu calibrate-cpu.sbatch)
gpu_after=--dependency=afterany:$(submit calibrate-gpu calibrate-gpu.sbatch)
arrays=''
arrays=$arrays:$(submit cpu cpu.sbatch ${cpu_after:+"$cpu_after"})
arrays=$arrays:$(submit gpu gpu.sbatch ${gpu_after:+"$gpu_after"})
submit merge merge.sbatch "--dependency=afterany$arrays" >/dev/null
