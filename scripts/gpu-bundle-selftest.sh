#!/bin/sh
# gpu-bundle-selftest.sh: prove, without a GPU, that the GPU bundle lacks nothing but the GPU.
#
#   scripts/gpu-bundle-selftest.sh [BUNDLE.run]     (as root; default gpu-bundle/speedlab-gpu.run)
#
# Makes a bare Debian 12 root with debootstrap --variant=minbase (no -dev packages, no pkg-config, no
# Python, no compiler) in a fresh temporary folder, gives it what a GPU node has besides the GPU (the
# CUDA toolkit's libraries, hard-linked (or bind-mounted) from this machine's toolkit, and an
# nvidia-smi that finds no device: a driver without a device), copies the one bundle file in, and runs
# `sh speedlab-gpu.run check` inside (chroot: it unpacks with its own xz, then runs gpu-check.sh). It
# passes when
#   - the packed bundle is at most 40 MiB,
#   - gpu-check ends with exit 3 and the verdict "NO GPU": every step that needs no GPU ok (node,
#     including the library check on that root, quick, default, report), the GPU tools skipped
#     "no GPU", every CUDA test skipped "no CUDA device",
#   - every GPU case of the summary is "unavailable" because of "no CUDA device", and
#   - all eight output files are there, and
#   - `check --plan` (the full mode's plan, from the records the bundle carries) fits its default budget.
# Prints gpu-check's summary and one line per check; exit 0 when all pass, 1 when one fails, 77 when it
# cannot run here (not root, no debootstrap or network). Nothing is cached: each run makes a new root
# (about a minute and a half with a nearby mirror; SPEEDLAB_DEBIAN_MIRROR picks another) and removes it.
# -h, --help: this text; a bad argument is refused (exit 2) before anything is made.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
mirror=${SPEEDLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
say() { printf 'selftest: %s\n' "$*"; }
bad() {
    echo "selftest: error: $*" >&2
    echo "usage: scripts/gpu-bundle-selftest.sh [BUNDLE.run]  (--help says more)" >&2
    exit 2
}
for a in "$@"; do
    case $a in -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac
done
[ $# -le 1 ] || bad "one BUNDLE.run at most"
if [ $# -eq 1 ]; then
    case $1 in -*) bad "unknown option '$1'" ;; '') bad "an empty BUNDLE.run" ;; esac
    [ -f "$1" ] || bad "BUNDLE.run '$1': no such file (scripts/gpu-bundle.sh makes gpu-bundle/speedlab-gpu.run)"
fi
tarball=${1:-$here/gpu-bundle/speedlab-gpu.run}

[ -f "$tarball" ] || { say "no bundle at $tarball: run scripts/gpu-bundle.sh first"; exit 1; }
[ "$(id -u)" -eq 0 ] || { say "needs root (debootstrap, chroot, mount): skipped"; exit 77; }
command -v debootstrap >/dev/null || { say "no debootstrap (Debian: apt-get install debootstrap): skipped"; exit 77; }
cudalib=$(readlink -f /usr/local/cuda/lib64 2>/dev/null)
[ -e "$cudalib/libcudnn.so.9" ] || { say "no CUDA toolkit with cuDNN under /usr/local/cuda here: skipped"; exit 77; }

# shellcheck source=debian-root.sh
. "$here/scripts/debian-root.sh"
root=$(dr_new speedlab-bare) || exit 1
trap 'dr_remove "$root"; rm -f "$root.log"' EXIT
trap 'exit 1' INT TERM

say "debootstrap --variant=minbase bookworm into $root ($mirror)"
if ! dr_make "$root" "$mirror" "$root.log"; then
    say "debootstrap failed (network? mirror?): skipped"
    exit 77
fi

# What a GPU node has besides the GPU: the toolkit's libraries (hard links: no copy of its 1 GB; a
# read-only bind mount where the folders are on different file systems) and a driver's nvidia-smi that
# sees no device.
mkdir -p "$root/usr/local/cuda/lib64" "$root/usr/local/bin" "$root/opt"
if ! cp -al "$cudalib"/. "$root/usr/local/cuda/lib64/" 2>/dev/null; then
    rm -rf "$root/usr/local/cuda/lib64" && mkdir -p "$root/usr/local/cuda/lib64"
    { mount --bind "$cudalib" "$root/usr/local/cuda/lib64" &&
          mount -o remount,bind,ro "$root/usr/local/cuda/lib64"; } || { say "cannot link or mount the toolkit's libraries: skipped"; exit 77; }
fi
cat >"$root/usr/local/bin/nvidia-smi" <<'EOF'
#!/bin/sh
# stands in for a driver that finds no GPU
echo "No devices were found"
exit 6
EOF
chmod +x "$root/usr/local/bin/nvidia-smi"
dr_mount "$root" || { say "cannot mount /proc, /sys or /dev's in the root: skipped"; exit 77; }

cp "$tarball" "$root/opt/speedlab-gpu.run"
missing=$(for t in python3 pkg-config gcc cc; do chroot "$root" sh -c "command -v $t" >/dev/null && echo "$t"; done)
[ -z "$missing" ] || say "note: the bare root has $missing"
say "in the root: sh speedlab-gpu.run check --out /opt/results --budget 300"
chroot "$root" /bin/sh -c 'cd /opt && sh speedlab-gpu.run check --out /opt/results --budget 300' \
    >"$root/opt/check.out" 2>&1
rc=$?
sed -n '/^speedlab gpu-check:/,$p' "$root/opt/check.out"
say "in the root: sh speedlab-gpu.run check --plan"
chroot "$root" /bin/sh -c 'cd /opt && sh speedlab-gpu.run check --plan' >"$root/opt/plan.out" 2>&1
plan_rc=$?
sed -n '/^full mode plan/,$p' "$root/opt/plan.out"
res=$root/opt/results

fails=0
check() { # check DESCRIPTION COMMAND...
    d=$1; shift
    if "$@"; then say "ok: $d"; else say "FAILED: $d"; fails=$((fails + 1)); fi
}
size=$(stat -c %s "$tarball")
check "the packed bundle is at most 40 MiB ($((size / 1048576)) MiB)" [ "$size" -le $((40 * 1048576)) ]
check "gpu-check exit 3 (no GPU, nothing failed), got $rc" [ "$rc" -eq 3 ]
check "verdict NO GPU" grep -q '^verdict: NO GPU' "$res/summary.txt"
check "steps node, quick, default, report ok" \
    sh -c "[ \$(sed -n '/^steps:/,/^\$/p' '$res/summary.txt' | grep -cE '^  (node|quick|default|report) +ok ') -eq 4 ]"
check "no step failed" sh -c "! sed -n '/^steps:/,/^\$/p' '$res/summary.txt' | grep -qE '^  [a-z]+ +failed'"
check "the library check passed on the bare root" grep -q 'every library they need' "$res/node.txt"
check "every CUDA test skipped for want of a device" grep -qE '^  tests +skipped +(test_[a-z0-9_]+\(no CUDA device\) ?)+$' "$res/summary.txt"
cases=$(sed -n '/^GPU cases/,/^$/p' "$res/summary.txt" | tail -n +3 | grep .)
check "GPU cases listed ($(echo "$cases" | grep -c .))" [ -n "$cases" ]
check "every GPU case unavailable: no CUDA device" sh -c "! echo \"\$1\" | grep -v ' unavailable .*no CUDA device'" _ "$cases"
for f in summary.txt node.txt tests.log studies.log records.jsonl runs.tar.gz report.tar.gz profiles.tar.gz; do
    check "output $f" [ -f "$res/$f" ]
done
check "eight files, no folder left" [ "$(ls -A "$res" | wc -l)" -eq 8 ]
check "check --plan: exit 0, got $plan_rc" [ "$plan_rc" -eq 0 ]
check "the full mode's plan fits the default budget" \
    grep -qE '^  total +[0-9]+ s  of 510 s \(a 540 s budget .*\): fits$' "$root/opt/plan.out"
check "the plan has every study's GPU step and the kernel studies' CPU steps" sh -c \
    "[ \$(grep -cE '^  (entropy_mi|tensor_mean)-(gpu|cpu) |^  (mlp|cnn|precision|galaxy|h2d)-gpu ' '$root/opt/plan.out') -eq 9 ]"
[ $fails -eq 0 ] && say "passed" || say "$fails checks failed (the root's output: above)"
[ $fails -eq 0 ]
