#!/bin/sh
# tests/slurm/slurm-down.sh DIR: stops what slurm-up.sh DIR started (by the pid files it wrote), and
# only that.
dir=${1:?usage: slurm-down.sh DIR}
for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || continue
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null
done
exit 0
