#!/bin/sh
# speedlab set-up for a fresh Debian 12 machine (run as root, or with sudo available).
# Installs what is missing from Debian's packages, finds nvcc when present, and configures build/.
# Idempotent: running it twice installs nothing new and reconfigures build/ in place.
#
# Usage: scripts/setup.sh [--slurm] [--bundle] [--nsys] [--baselines[=debian|pypi]] [BUILD_DIR] [-- extra meson options]
#   --slurm  also Debian's Slurm (slurmctld, slurmd, slurm-client, munge) for tests/slurm, which bring
#            up a one-node cluster of their own (docs/slurm.md), and shellcheck, which checks every script
#            `speedlab slurm` writes; no daemon is started or enabled here
#   --bundle also what scripts/gpu-bundle.sh and its selftest need (patchelf, xz-utils, debootstrap;
#            docs/gpu-check.md)
#   --nsys   also the Nsight Systems CLI from Debian's non-free section, unpacked into
#            /opt/speedlab/nsight-systems (scripts/nsys-install.sh; docs/nsight.md): nsys on a CPU run
#
# --baselines (opt-in; also before BUILD_DIR): the framework baselines (docs/baselines.md) as well, in the
# virtual environment .venv-baselines, whose python3 speedlab runs them with. A file in it,
# speedlab-baselines, names the kind; asking for the other kind replaces it.
#   --baselines, --baselines=debian  Debian's python3-numpy, python3-scipy and python3-torch, and, where
#            PyPI can be reached, current numba and jax pinned to Debian's numpy (the environment sees the
#            system packages; without PyPI, numba and jax stay unavailable and set-up goes on)
#   --baselines=pypi  numpy, scipy, torch, numba and jax from PyPI at the versions pinned in
#            baselines/requirements-pypi.txt, in an environment that does not see the system packages
#            (about 6 GB: torch's wheel brings NVIDIA's CUDA libraries). Without PyPI set-up stops with
#            exit status 1 and leaves an earlier .venv-baselines as it was.
# BUILD_DIR (default build) is relative to the repository root; it must be absent, empty or a meson
# build folder, and never the source tree or a folder above it. The options may come in any order, each
# once; everything after -- goes to meson setup. -h, --help: this text.
# Exit status: 0 done, 1 a step failed, 2 usage (an unknown option or --baselines kind, a second
# BUILD_DIR, a BUILD_DIR that is not one), checked before anything is installed.
set -eu

# clang and its runtimes (libFuzzer, sanitizers): for the fuzz harnesses only (scripts/fuzz.sh, .ci/run);
# the project itself builds with gcc. dpkg-dev: meson asks dpkg-architecture for the multiarch libdir, so
# that `meson install` puts the profiler where pkg-config and the loader look (else /usr/local/lib64).
# valgrind: the profiler's cost test (tests/profiler/prof_cost.sh) counts a region pair's instructions.
# libdnnl-dev: oneDNN, the CPU's vendor library, for the onednn variants (meson builds without it too).
# llvm: llvm-mca, for the AVX-512 against AVX2 inner-loop comparison (tests/kernels/mca_compare.py).
PACKAGES="meson ninja-build gcc pkg-config libpapi-dev gnuplot-nox libopenblas-dev zlib1g-dev \
libjansson-dev libcmocka-dev dataset-fashion-mnist clang libclang-rt-14-dev dpkg-dev valgrind llvm libdnnl-dev"

here=$(cd "$(dirname "$0")/.." && pwd)
# bad WHAT: a usage error, with the synopsis; exit 2 before anything is installed or configured
bad() {
    echo "setup: error: $*" >&2
    echo "usage: scripts/setup.sh [--slurm] [--bundle] [--nsys] [--baselines[=debian|pypi]] [BUILD_DIR] [-- meson options]  (--help says more)" >&2
    exit 2
}
for a in "$@"; do
    case $a in
        --) break ;;
        -h | --help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    esac
done
baselines=""
# baselines_kind ARG: sets $baselines from --baselines[=KIND]; refuses an unknown kind (exit 2).
baselines_kind() {
    case $1 in
        --baselines | --baselines=debian) baselines=debian ;;
        --baselines=pypi) baselines=pypi ;;
        *)
            echo "setup: unknown baselines kind '${1#--baselines=}': the choices are --baselines" \
                 "(or --baselines=debian: Debian's packages) and --baselines=pypi (pinned PyPI packages)" >&2
            bad "--baselines=${1#--baselines=}" ;;
    esac
}
slurm=0 bundle=0 nsys=0 builddir=""
while [ $# -gt 0 ]; do
    case $1 in
        --slurm) slurm=1 ;;
        --bundle) bundle=1 ;;
        --nsys) nsys=1 ;;
        --baselines | --baselines=*) baselines_kind "$1" ;;
        --) shift; break ;;
        --slurm=* | --bundle=* | --nsys=*) bad "${1%%=*} takes no value ('$1')" ;;
        -*) bad "unknown option '$1'" ;;
        '') bad "an empty BUILD_DIR" ;;
        *)
            [ -z "$builddir" ] || bad "a second BUILD_DIR '$1' (after '$builddir'); meson's own options go after --"
            builddir=$1 ;;
    esac
    shift
done
builddir=${builddir:-build}
# BUILD_DIR, as meson will see it from the repository root: absent, empty or a meson build folder; never
# the source tree or a folder holding it (meson would write into the user's files)
case $builddir in /*) bpath=$builddir ;; *) bpath=$here/$builddir ;; esac
if [ -e "$bpath" ] || [ -L "$bpath" ]; then
    real=$(cd "$here" && cd "$builddir" 2>/dev/null && pwd -P) || bad "BUILD_DIR '$builddir' is not a folder"
    src=$(cd "$here" && pwd -P)
    case $src/ in "$real"/*) bad "BUILD_DIR '$builddir' is $real, which holds the source tree" ;; esac
    if [ -n "$(ls -A "$real")" ] && [ ! -d "$real/meson-private" ]; then
        bad "BUILD_DIR '$builddir' ($real) holds files and is not a meson build folder"
    fi
fi
[ $slurm -eq 1 ] && PACKAGES="$PACKAGES slurmctld slurmd slurm-client munge shellcheck"
[ $bundle -eq 1 ] && PACKAGES="$PACKAGES patchelf xz-utils debootstrap"
case $baselines in
    debian) PACKAGES="$PACKAGES python3-numpy python3-scipy python3-torch python3-venv" ;;
    pypi) PACKAGES="$PACKAGES python3-venv" ;;
esac

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
[ $nsys -eq 0 ] || sh "$here/scripts/nsys-install.sh"

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

# The baselines' virtual environment. Debian kind: numba and jax from PyPI, pinned to Debian's numpy and
# scipy (the newest wheels pull NumPy 2, which Debian's torch 1.13 cannot use); without PyPI their
# baselines are "unavailable". PyPI kind: everything from baselines/requirements-pypi.txt; a kind that
# changes is made aside and replaces the old environment only once pip has succeeded.
venv=$here/.venv-baselines
marker=$venv/speedlab-baselines
venv_kind() { [ -f "$marker" ] && head -n 1 "$marker"; }
baselines_summary() {
    echo "setup: baselines: $venv is the $baselines kind ($(du -sh "$venv" | cut -f1) on disk);" \
         "speedlab runs the baselines with its python3, which has:"
    "$venv/bin/python3" -c 'import importlib
for m in ("numpy", "scipy", "torch", "numba", "jax"):
    try:
        print("setup:   " + m + " " + importlib.import_module(m).__version__)
    except Exception as e:
        print("setup:   " + m + " unavailable (" + type(e).__name__ + ")")'
}
if [ "$baselines" = debian ]; then
    # an environment of the other kind (or one without the system packages) is made again
    if [ -x "$venv/bin/python3" ] && { [ "$(venv_kind)" = pypi ] ||
           ! grep -qx 'include-system-site-packages = true' "$venv/pyvenv.cfg"; }; then
        echo "setup: replacing $venv (kind: $(venv_kind || echo unknown)) with the debian kind"
        rm -rf "$venv"
    fi
    [ -x "$venv/bin/python3" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
    printf '%s\n' debian "# made by scripts/setup.sh --baselines: Debian's numpy, scipy and torch (system" \
        "# packages, seen by this environment), numba and jax from PyPI pinned to Debian's numpy" >"$marker"
    pins=$venv/debian-pins.txt
    /usr/bin/python3 -c 'import numpy, scipy; print("numpy==" + numpy.__version__); print("scipy==" + scipy.__version__)' >"$pins"
    if "$venv/bin/pip" install -q -c "$pins" numba jax jaxlib; then
        baselines_summary
    else
        echo "setup: baselines: numba and jax could not be installed from PyPI (offline?): their" \
             "baselines will be unavailable; numpy, scipy and torch (Debian) are in place"
        baselines_summary
    fi
elif [ "$baselines" = pypi ]; then
    reqs=$here/baselines/requirements-pypi.txt
    if [ "$(venv_kind)" = pypi ] && [ -x "$venv/bin/python3" ]; then
        # the same kind: pip installs what the pins add or change, nothing when they are all in place
        target=$venv
    else
        target=$venv.new
        rm -rf "$target"
        /usr/bin/python3 -m venv --prompt .venv-baselines "$target"
    fi
    echo "setup: baselines: installing baselines/requirements-pypi.txt from PyPI into $target" \
         "(torch brings NVIDIA's CUDA libraries: several GB)"
    if ! "$target/bin/python3" -m pip install -q --disable-pip-version-check -r "$reqs"; then
        if [ "$target" = "$venv" ]; then
            left="$venv keeps what it had, and whatever pip installed before it stopped"
        else
            rm -rf "$target"
            left="nothing was installed in place of $venv"
        fi
        echo "setup: error: --baselines=pypi: pip could not install baselines/requirements-pypi.txt" \
             "(is PyPI reachable? pip's message is above); $left. Run set-up again where PyPI can be" \
             "reached (pip honours https_proxy and PIP_INDEX_URL), or use --baselines for Debian's" \
             "packages." >&2
        exit 1
    fi
    printf '%s\n' pypi "# made by scripts/setup.sh --baselines=pypi: baselines/requirements-pypi.txt from PyPI," \
        "# without the system packages" >"$target/speedlab-baselines"
    if [ "$target" != "$venv" ]; then
        [ -e "$venv" ] && echo "setup: replacing $venv (kind: $(venv_kind || echo unknown)) with the pypi kind"
        rm -rf "$venv"
        mv "$target" "$venv"
        # a virtual environment names its own path in its scripts, activate files and pyvenv.cfg
        grep -rlF "$target" "$venv/bin" "$venv/pyvenv.cfg" | while IFS= read -r f; do
            sed -i "s|$target|$venv|g" "$f"
        done
    fi
    baselines_summary
fi

cd "$here"
if [ -f "$builddir/build.ninja" ]; then
    meson setup --reconfigure "$builddir" "$@"
else
    meson setup "$builddir" --buildtype=release "$@"
fi
echo "setup: configured $builddir (ninja -C $builddir)"
