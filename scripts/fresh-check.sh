#!/bin/sh
# fresh-check.sh: the README's commands on a fresh Debian 12 machine, as a new user would run them.
#
#   scripts/fresh-check.sh [--main]            (as root)
#
# A clean clone on a used machine is not a fresh machine: packages installed by hand (the Python
# baselines, Slurm, gnuplot) hide a missing set-up step or a test that depends on them. This makes a bare
# Debian 12 root with debootstrap --variant=minbase (from SPEEDLAB_DEBIAN_MIRROR, default
# deb.debian.org; nothing cached from an earlier run), mounts /proc, /sys, /dev/pts and /dev/shm in it,
# clones this repository's HEAD into it (committed work only: a clean clone) and runs, in a chroot, the
# README's test command verbatim (read from README.md, the indented line after "Set up and run the
# tests:"); with --main, the README's first command (the main job, after "Set up and run the main job")
# after it. It prints each command, its exit status and time, and the tests' summary (meson's Ok, Fail,
# Skipped lines and any test that failed); the logs are kept in fresh-check/ (ignored by git): one per
# command, and with --main the job's results directory, report included (fresh-check/results/). The root
# is removed at the end. Exit 0 when every command passed, 1 when one failed, 77 when
# it cannot run here (not root, no debootstrap, no mirror).
# About three minutes for the tests on a 2-vCPU machine, debootstrap included (the check prints its own
# time); the main job adds about twenty. -h, --help: this text; any other argument is refused (exit 2)
# before anything is made.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
mirror=${SPEEDLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}
main=0
for a in "$@"; do
    case $a in -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac
done
for a in "$@"; do
    case $a in
        --main) main=1 ;;
        *) echo "fresh-check: error: unknown argument '$a'" >&2
           echo "usage: scripts/fresh-check.sh [--main]  (--help says more)" >&2
           exit 2 ;;
    esac
done
say() { printf 'fresh-check: %s\n' "$*"; }

# readme_command HEADING: the first indented line after the line starting with HEADING
readme_command() {
    awk -v h="$1" 'index($0, h) == 1 {f = 1; next} f && /^    [^ ]/ {sub(/^    /, ""); print; exit}' "$here/README.md"
}
tests_cmd=$(readme_command "Set up and run the tests:")
main_cmd=$(readme_command "Set up and run the main job")
[ -n "$tests_cmd" ] && [ -n "$main_cmd" ] || { say "README.md has no test or main-job command where expected"; exit 1; }

[ "$(id -u)" -eq 0 ] || { say "needs root (debootstrap, chroot, mount): skipped"; exit 77; }
command -v debootstrap >/dev/null || { say "no debootstrap (Debian: apt-get install debootstrap): skipped"; exit 77; }
command -v git >/dev/null || { say "no git to clone with: skipped"; exit 77; }

# shellcheck source=debian-root.sh
. "$here/scripts/debian-root.sh"
logs=$here/fresh-check
mkdir -p "$logs"
root=$(dr_new speedlab-fresh) || exit 1
trap 'dr_remove "$root"' EXIT
trap 'exit 1' INT TERM

t0=$(date +%s)
say "debootstrap --variant=minbase bookworm ($mirror)"
dr_make "$root" "$mirror" "$logs/debootstrap.log" || { say "debootstrap failed (network? mirror?): skipped"; exit 77; }
dr_mount "$root" || { say "cannot mount /proc, /sys or /dev's in the root: skipped"; exit 77; }
git clone -q "$here" "$root/root/speedlab" || { say "git clone of $here failed"; exit 1; }
say "a bare root in $(($(date +%s) - t0)) s; a clone of HEAD, $(git -C "$here" rev-parse --short HEAD) (committed work only)"

# run NAME COMMAND: COMMAND in the root's clone, as root, with a login shell's plain environment
status=0
run() {
    local name=$1 cmd=$2 t rc
    say "$name: $cmd"
    t=$(date +%s)
    chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/sh -c "cd /root/speedlab && $cmd" >"$logs/$name.log" 2>&1
    rc=$?
    say "$name: exit $rc after $(($(date +%s) - t)) s (log: fresh-check/$name.log)"
    grep -E '^(Ok|Fail|Skipped|Timeout|Expected Fail|Unexpected Pass): ' "$logs/$name.log" | sed 's/^/    /'
    grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|ERROR|TIMEOUT) ' "$logs/$name.log" | sed 's/^/    /'
    [ $rc -eq 0 ] || { tail -15 "$logs/$name.log" | sed 's/^/    | /'; status=1; }
}
run tests "$tests_cmd"
if [ $main -eq 1 ]; then
    run main "$main_cmd"
    # the job's records and report outlive the root: fresh-check/results/latest/report/REPORT.md
    rm -rf "$logs/results"
    cp -a "$root/root/speedlab/results" "$logs/results" 2>/dev/null &&
        say "main: results and report kept in fresh-check/results/ (latest/report/REPORT.md)"
fi
say "$( [ $status -eq 0 ] && echo passed || echo FAILED ) in $(($(date +%s) - t0)) s in all"
exit $status
