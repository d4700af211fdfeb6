#!/bin/sh
# tests/setup/setup_args.sh ROOT: scripts/setup.sh's choice of baselines, without a network or apt.
#
# An unknown --baselines kind, before or after BUILD_DIR, is refused with the choices and exit status 2
# before anything is installed: apt-get, dpkg, sudo and meson are stand-ins on PATH that fail with 99,
# so a refusal that came too late fails the test instead of installing. baselines/requirements-pypi.txt
# (the pypi kind's pins) names numpy, scipy, torch, numba, jax and jaxlib, each at an exact version.
# Exit 0 passed, 1 failed.
set -u
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for b in apt-get dpkg sudo meson; do
    printf '#!/bin/sh\necho "stand-in %s called" >&2\nexit 99\n' "$b" >"$tmp/$b"
    chmod +x "$tmp/$b"
done
fails=0
n=0
check() { # DESCRIPTION EXPECTED_STATUS EXPECTED_TEXT ARGS...
    desc=$1 want=$2 text=$3
    shift 3
    n=$((n + 1))
    PATH="$tmp:$PATH" sh "$root/scripts/setup.sh" "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -eq "$want" ] && grep -qF -- "$text" "$tmp/err"; then
        echo "ok $n - $desc"
    else
        echo "not ok $n - $desc: exit $got (want $want), stderr:"
        sed 's/^/# /' "$tmp/err"
        fails=$((fails + 1))
    fi
}
echo "1..6"
choices="the choices are --baselines (or --baselines=debian: Debian's packages) and --baselines=pypi"
check "--baselines=conda after BUILD_DIR is refused" 2 "$choices" build --baselines=conda
check "--baselines=conda before BUILD_DIR is refused" 2 "unknown baselines kind 'conda'" --baselines=conda build
check "--baselines= (no kind) is refused" 2 "$choices" --slurm build --baselines=
check "--baselines=PYPI (case matters) is refused" 2 "$choices" --bundle --baselines=PYPI

n=$((n + 1))
reqs=$root/baselines/requirements-pypi.txt
bad=$(grep -vE '^(#|$)' "$reqs" | grep -vE '^[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.+]*$')
if [ -z "$bad" ]; then echo "ok $n - every pin in requirements-pypi.txt is NAME==VERSION"
else echo "not ok $n - not NAME==VERSION in $reqs: $bad"; fails=$((fails + 1)); fi

n=$((n + 1))
missing=""
for m in numpy scipy torch numba jax jaxlib; do
    grep -qE "^$m==" "$reqs" || missing="$missing $m"
done
if [ -z "$missing" ]; then echo "ok $n - requirements-pypi.txt pins all six packages"
else echo "not ok $n - requirements-pypi.txt lacks:$missing"; fails=$((fails + 1)); fi

[ "$fails" -eq 0 ]
