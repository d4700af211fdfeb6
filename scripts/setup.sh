#!/bin/sh
# speedlab set-up for a fresh Debian 12 machine (run as root, or with sudo available).
# Installs what is missing from Debian's packages, finds nvcc when present, and configures build/.
# Idempotent: running it twice installs nothing new and reconfigures build/ in place.
#
# Usage: scripts/setup.sh [BUILD_DIR] [-- extra meson options]
set -eu

# clang and its runtimes (libFuzzer, sanitizers): for the fuzz harnesses only (scripts/fuzz.sh, .ci/run);
# the project itself builds with gcc.
PACKAGES="meson ninja-build gcc pkg-config libpapi-dev gnuplot-nox libopenblas-dev zlib1g-dev \
libjansson-dev libcmocka-dev dataset-fashion-mnist clang libclang-rt-14-dev"

here=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift

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

cd "$here"
if [ -f "$builddir/build.ninja" ]; then
    meson setup --reconfigure "$builddir" "$@"
else
    meson setup "$builddir" --buildtype=release "$@"
fi
echo "setup: configured $builddir (ninja -C $builddir)"
