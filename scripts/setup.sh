#!/bin/sh
# speedlab set-up for a fresh Debian 12 machine (run as root, or with sudo available).
# Installs what is missing from Debian's packages, finds nvcc when present, and configures build/.
# Idempotent: running it twice installs nothing new and reconfigures build/ in place.
#
# Usage: scripts/setup.sh [--slurm] [--bundle] [BUILD_DIR] [--baselines] [-- extra meson options]
#   --slurm  also Debian's Slurm (slurmctld, slurmd, slurm-client, munge) for tests/slurm, which bring
#            up a one-node cluster of their own (docs/slurm.md), and shellcheck, which checks every script
#            `speedlab slurm` writes; no daemon is started or enabled here
#   --bundle also what scripts/gpu-bundle.sh and its selftest need (patchelf, xz-utils, debootstrap;
#            docs/gpu-check.md)
#
# --baselines (opt-in): the framework baselines (docs/baselines.md) as well: Debian's python3-numpy,
# python3-scipy and python3-torch, and, where PyPI can be reached, current numba and jax in the virtual
# environment .venv-baselines (it sees the system packages; speedlab runs the baselines with its python3).
set -eu

# clang and its runtimes (libFuzzer, sanitizers): for the fuzz harnesses only (scripts/fuzz.sh, .ci/run);
# the project itself builds with gcc. dpkg-dev: meson asks dpkg-architecture for the multiarch libdir, so
# that `meson install` puts the profiler where pkg-config and the loader look (else /usr/local/lib64).
PACKAGES="meson ninja-build gcc pkg-config libpapi-dev gnuplot-nox libopenblas-dev zlib1g-dev \
libjansson-dev libcmocka-dev dataset-fashion-mnist clang libclang-rt-14-dev dpkg-dev"

while :; do
    case ${1:-} in
        --slurm) PACKAGES="$PACKAGES slurmctld slurmd slurm-client munge shellcheck"; shift ;;
        --bundle) PACKAGES="$PACKAGES patchelf xz-utils debootstrap"; shift ;;
        *) break ;;
    esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
baselines=0
if [ "${1:-}" = "--baselines" ]; then baselines=1; shift; fi
builddir=${1:-build}
[ $# -gt 0 ] && shift
if [ "${1:-}" = "--baselines" ]; then baselines=1; shift; fi
[ "${1:-}" = "--" ] && shift
[ $baselines -eq 1 ] && PACKAGES="$PACKAGES python3-numpy python3-scipy python3-torch python3-venv"

missing=""
for p in $PACKAGES; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing:$missing"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO=sudo
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    $SUDO apt-get install -y -qq --no-install-recommends $missing
else
    echo "setup: all Debian packages present"
fi

# CUDA: used when nvcc is found (on PATH or in /usr/local/cuda); the build still works without it.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
    PATH=/usr/local/cuda/bin:$PATH
    export PATH
fi
if command -v nvcc >/dev/null 2>&1; then
    echo "setup: nvcc found: $(command -v nvcc)"
else
    echo "setup: no nvcc: CUDA variants will not be built"
fi

# numba and jax from PyPI into .venv-baselines, pinned to Debian's numpy and scipy: the newest wheels
# pull NumPy 2, which Debian's torch 1.13 cannot use. Without PyPI their baselines are "unavailable".
if [ $baselines -eq 1 ]; then
    venv=$here/.venv-baselines
    [ -x "$venv/bin/python3" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
    pins=$venv/debian-pins.txt
    /usr/bin/python3 -c 'import numpy, scipy; print("numpy==" + numpy.__version__); print("scipy==" + scipy.__version__)' >"$pins"
    if "$venv/bin/pip" install -q -c "$pins" numba jax jaxlib; then
        echo "setup: baselines: numpy, scipy, torch (Debian), numba and jax (PyPI) in $venv"
    else
        echo "setup: baselines: numba and jax could not be installed from PyPI (offline?): their" \
             "baselines will be unavailable; numpy, scipy and torch (Debian) are in place"
    fi
fi

cd "$here"
if [ -f "$builddir/build.ninja" ]; then
    meson setup --reconfigure "$builddir" "$@"
else
    meson setup "$builddir" --buildtype=release "$@"
fi
echo "setup: configured $builddir (ninja -C $builddir)"
