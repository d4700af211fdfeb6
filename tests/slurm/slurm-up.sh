#!/bin/sh
# tests/slurm/slurm-up.sh DIR: brings up a one-node Slurm on this machine, everything in DIR.
#
# Debian's packages (slurmctld, slurmd, slurm-client, munge: `scripts/setup.sh --slurm`), a minimal
# slurm.conf and a munge key of our own in DIR, daemons as root in the background. Nothing outside
# DIR is written, so a machine's own Slurm (if any) is left alone; the ports are private (6917, 6918).
# Then: export SLURM_CONF=DIR/slurm.conf for sbatch/squeue, and tests/slurm/slurm-down.sh DIR.
# Exit 0 when `sinfo` shows the node idle, 77 (the skip code) with the reason when this machine
# cannot run it: packages missing, not root, a daemon that does not start.
set -u
dir=${1:?usage: slurm-up.sh DIR}
skip() { echo "slurm-up: cannot bring up Slurm here: $*" >&2; exit 77; }

for b in slurmctld slurmd munged sbatch squeue sinfo; do
    command -v "$b" >/dev/null 2>&1 || [ -x "/usr/sbin/$b" ] ||
        skip "'$b' not found (install with: sh scripts/setup.sh --slurm)"
done
[ "$(id -u)" = 0 ] || skip "the daemons need root (SlurmUser=root); run as root"
PATH=$PATH:/usr/sbin
mkdir -p "$dir/state" "$dir/spool" "$dir/munge" || skip "cannot create $dir"
dir=$(cd "$dir" && pwd)
node=$(hostname -s)
cpus=$(nproc)
# RealMemory a little under what is free, so slurmd never drains the node for "low RealMemory".
mem=$(awk '/MemAvailable/ { print int($2 / 1024 / 2) }' /proc/meminfo)

# munge: our own key, socket and daemon; slurm finds the socket through AuthInfo.
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 700 "$dir/munge"; chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
    --seed-file="$dir/munge/munged.seed" || skip "munged did not start ($dir/munge/munged.log)"

cat > "$dir/slurm.conf" <<CONF
# A one-node cluster for speedlab's tests (tests/slurm/slurm-up.sh); everything under $dir.
ClusterName=speedlab-test
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=6917
SlurmdPort=6918
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
# No cgroups in a VM or container: track processes by parentage, bind nothing.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
SchedulerParameters=sched_interval=1
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=60 State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -i -f "$SLURM_CONF" || skip "slurmctld did not start ($dir/slurmctld.log)"
slurmd -f "$SLURM_CONF" || skip "slurmd did not start ($dir/slurmd.log)"
# The node registers within a few seconds; wait for it to be idle (at most 30 s).
i=0
while [ $i -lt 30 ]; do
    state=$(sinfo -h -n "$node" -o %t 2>/dev/null)
    case $state in idle*|mix*|alloc*) echo "slurm-up: node $node $state, SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
    sleep 1; i=$((i + 1))
done
skip "node $node not idle after 30 s (state '${state:-none}'; see $dir/slurmctld.log, $dir/slurmd.log)"
