#!/bin/sh
# quiet_machine.sh SPEEDLAB SCRATCH: `speedlab run` warns of what makes timings noisy (governor, turbo,
# SMT, other processes running) and records it in env.quiet, read from a fake /sys and /proc
# (SPEEDLAB_SYSFS_ROOT); a quiet fake machine gives no warning, and a machine that exposes none of it
# records nothing (absent, not guessed).
set -u
speedlab=$1
scratch=$2
rm -rf "$scratch" && mkdir -p "$scratch" || exit 1
fail=0
check() { if eval "$2"; then echo "ok - $1"; else echo "not ok - $1"; fail=1; fi; }

fake() { # fake DIR GOVERNOR NO_TURBO SMT RUNNABLE
    c=$1/sys/devices/system/cpu
    for i in 0 1; do mkdir -p "$c/cpu$i/cpufreq" && echo "$2" >"$c/cpu$i/cpufreq/scaling_governor"; done
    mkdir -p "$c/intel_pstate" "$c/smt" "$1/proc"
    echo "$3" >"$c/intel_pstate/no_turbo"
    echo "$4" >"$c/smt/active"
    echo "0.10 0.20 0.30 $5/120 4242" >"$1/proc/loadavg"
}
run() { # run ROOT NAME: stderr into NAME.err, the record into NAME.jsonl
    SPEEDLAB_SYSFS_ROOT=$1 "$speedlab" run tensor_mean --quick --variants simd --sizes 64 --threads 2 \
        --out "$scratch/$2" >/dev/null 2>"$scratch/$2.err"
    cat "$scratch/$2"/run-*/results.jsonl >"$scratch/$2.jsonl"
}

echo "1..9"
fake "$scratch/noisy" powersave 0 1 4
run "$scratch/noisy" noisy
check "governor warned" "grep -q \"warning: CPU frequency scaling: governor 'powersave' on 2 of 2 CPUs\" '$scratch/noisy.err'"
check "turbo warned" "grep -q 'warning: turbo (boost) is on' '$scratch/noisy.err'"
check "SMT warned (2 threads)" "grep -q 'warning: SMT is on' '$scratch/noisy.err'"
check "3 other processes warned" "grep -q 'warning: 3 other processes were running' '$scratch/noisy.err'"
check "recorded in env.quiet" "grep -q '\"quiet\":{\"governor\":\"powersave\",\"turbo\":true,\"smt\":true,\"others_running\":3,\"warnings\":\[' '$scratch/noisy.jsonl'"

fake "$scratch/quiet" performance 1 0 1
run "$scratch/quiet" quiet
check "a quiet machine: no warning" "! grep -q warning '$scratch/quiet.err'"
check "a quiet machine: recorded" "grep -q '\"quiet\":{\"governor\":\"performance\",\"turbo\":false,\"smt\":false,\"others_running\":0,\"warnings\":\[\]}' '$scratch/quiet.jsonl'"

mkdir -p "$scratch/bare"
run "$scratch/bare" bare
check "nothing exposed: no warning" "! grep -q warning '$scratch/bare.err'"
check "nothing exposed: nothing recorded" "grep -q '\"quiet\":{\"warnings\":\[\]}' '$scratch/bare.jsonl'"
exit $fail
