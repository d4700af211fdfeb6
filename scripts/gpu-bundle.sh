#!/bin/bash
# gpu-bundle.sh: build speedlab for a GPU node that has a driver and nothing else we can count on.
#
#   scripts/gpu-bundle.sh [--out DIR] [--build DIR] [--fashion-mnist DIR]
#
# Run on a build machine with nvcc and cuDNN (no GPU needed), from anywhere in the source tree. Makes
#   DIR/speedlab-gpu/          the bundle (DIR defaults to gpu-bundle/, ignored by git):
#     speedlab                 launcher: finds the node's cuBLAS and cuDNN, then runs bin/speedlab
#     gpu-check.sh             the check a GPU node runs (scripts/gpu-check.sh; --help says what it does)
#     BUNDLE                   what was built, from what, and what the node must supply (shell variables)
#     bin/                     speedlab and every CUDA test (test_*_cuda), RPATH $ORIGIN/../lib
#     lib/                     every shared library they need that a bare node may lack (jansson, zlib,
#                              OpenBLAS with libgfortran and libquadmath, PAPI with libpfm, cmocka, libgomp,
#                              speedlab's profiler), copied from this machine, RPATH $ORIGIN
#     share/speedlab/          the gnuplot scripts (plots/), the data sets (data/galaxy,
#                              data/fashion-mnist, unpacked), find-cuda-libs.sh, check-libs.sh,
#                              full-plan.sh and the records it plans from (plan-records/)
#   DIR/speedlab-gpu.run       the same, packed (xz) and self-extracting: copy this one file to the node,
#                              run `sh speedlab-gpu.run check --out results-gpu` there (--help says more)
#
# The build (BUILD, default build-bundle/): release, CUDA on, SASS for sm_80 and sm_90 and PTX for newer
# GPUs, the CUDA runtime linked statically, the CPU kernels for x86-64-v2, v3 and v4 chosen at run time
# (-Disa=dispatch: the node's CPU is not this one). Not carried: the driver (libcuda), cuBLAS and cuDNN
# (hundreds of MB; the launcher finds them on the node), glibc (the bundle needs GLIBC_MIN or newer; the
# BUNDLE file says which), libstdc++ and libgcc_s. scripts/bundle/check-libs.sh proves the rest is inside.
# Needs: what scripts/setup.sh installs, nvcc, patchelf (Debian: patchelf), Fashion-MNIST (Debian's
# dataset-fashion-mnist, or --fashion-mnist DIR). Every argument is checked before anything is made:
# --out must be absent, empty or an earlier --out (only what this script writes there), --build absent,
# empty or a meson build folder, neither the source tree nor a folder holding it. -h, --help: this text.
# Exit 0 with the bundle made and checked, 1 a step failed, 2 usage.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
out=$src/gpu-bundle
build=$src/build-bundle
mnist=/usr/share/datasets/fashion-mnist
say() { printf 'gpu-bundle: %s\n' "$*"; }
die() { printf 'gpu-bundle: error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

bad() {
    printf 'gpu-bundle: error: %s\n' "$*" >&2
    echo "usage: scripts/gpu-bundle.sh [--out DIR] [--build DIR] [--fashion-mnist DIR]  (--help says more)" >&2
    exit 2
}
for a in "$@"; do case $a in -h|--help) usage; exit 0 ;; esac; done
# folder_arg FLAG VALUE: VALUE is a path, not a flag; an existing one is a folder that does not hold the
# source tree. Prints its absolute path (physical when it exists).
folder_arg() {
    case $2 in ''|-*) bad "$1 '$2': want a folder (a path that does not start with '-')" ;; esac
    if [ -e "$2" ] || [ -L "$2" ]; then
        local real
        real=$(cd "$2" 2>/dev/null && pwd -P) || bad "$1 '$2': not a folder"
        case $(cd "$src" && pwd -P)/ in "$real"/*) bad "$1 '$2' is $real, which holds the source tree" ;; esac
        echo "$real"
    else
        case $2 in /*) echo "$2" ;; *) echo "$PWD/$2" ;; esac
    fi
}
while [ $# -gt 0 ]; do
    case $1 in
        --out|--build|--fashion-mnist) [ $# -ge 2 ] || bad "$1 needs a folder" ;;
    esac
    case $1 in
        --out) out=$(folder_arg "$1" "$2") || exit 2; shift 2 ;;
        --build) build=$(folder_arg "$1" "$2") || exit 2; shift 2 ;;
        --fashion-mnist) mnist=$(folder_arg "$1" "$2") || exit 2; [ -d "$mnist" ] || bad "--fashion-mnist $2: no such folder"
            for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
                [ -e "$mnist/$f.gz" ] || [ -e "$mnist/$f" ] || bad "--fashion-mnist $2: no ${f}[.gz] there"
            done
            shift 2 ;;
        *) bad "unknown argument '$1'" ;;
    esac
done
# what this script writes in --out, and a meson build folder for --build: nothing else is overwritten
if [ -d "$out" ]; then
    for f in "$out"/* "$out"/.[!.]*; do
        [ -e "$f" ] || [ -L "$f" ] || continue
        case ${f##*/} in speedlab-gpu|speedlab-gpu.run|speedlab-gpu.run.part|payload|setup.log|build.log) ;;
            *) bad "--out $out holds ${f##*/}, which gpu-bundle.sh does not write: name an empty or new folder" ;;
        esac
    done
fi
if [ -d "$build" ] && [ -n "$(ls -A "$build")" ] && [ ! -d "$build/meson-private" ]; then
    bad "--build $build holds files and is not a meson build folder"
fi

# ---- tools ------------------------------------------------------------------------------------------
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then PATH=/usr/local/cuda/bin:$PATH; fi
command -v nvcc >/dev/null || die "no nvcc on PATH or in /usr/local/cuda/bin: the bundle needs the CUDA toolkit"
cudatk=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
command -v patchelf >/dev/null || die "no patchelf (Debian: apt-get install patchelf)"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [ -e "$mnist/$f.gz" ] || [ -e "$mnist/$f" ] ||
        die "no ${f}[.gz] in $mnist: install Debian's dataset-fashion-mnist or pass --fashion-mnist DIR"
done

# ---- build --------------------------------------------------------------------------------------------
# -Donednn=disabled: the bundle is for the GPU rows; oneDNN's library (40 MB) would more than double it
# for CPU rows that a node's check does not run (their records say why they are unavailable)
opts=(--buildtype=release -Dcuda=enabled -Dtests=enabled -Disa=dispatch -Donednn=disabled -Dcudatk_dir="$cudatk")
cd "$src"; mkdir -p "$out"
if [ -f "$build/build.ninja" ]; then
    meson setup --reconfigure "$build" "${opts[@]}" >"$out/setup.log" 2>&1
else
    meson setup "$build" "${opts[@]}" >"$out/setup.log" 2>&1
fi || { tail -20 "$out/setup.log"; die "meson setup failed (log: $out/setup.log)"; }
grep -qE "^ +cuDNN +: YES|^ +cuDNN +: True" "$out/setup.log" ||
    die "meson found no cuDNN under $cudatk (the cnn study's cudnn rows need it; log: $out/setup.log)"
# every test named *_cuda, and speedlab: their files, relative to the build folder
mapfile -t cuda_tests < <(meson introspect --tests "$build" | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["name"].endswith("_cuda"):
        print(os.path.relpath(t["cmd"][0], sys.argv[1]))' "$build")
[ ${#cuda_tests[@]} -gt 0 ] || die "the build has no *_cuda tests (was CUDA found? log: $out/setup.log)"
say "building speedlab and ${#cuda_tests[@]} CUDA tests in $build (a few minutes the first time)"
ninja -C "$build" experiments/speedlab "${cuda_tests[@]}" >"$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; die "build failed (log: $out/build.log)"; }
rm -f "$out/setup.log" "$out/build.log"

# ---- pack -------------------------------------------------------------------------------------------
b=$out/speedlab-gpu
rm -rf "$b" "$out/speedlab-gpu.run"
mkdir -p "$b/bin" "$b/lib" "$b/share/speedlab/data"
install -m 755 "$build/experiments/speedlab" "$b/bin/speedlab"
for t in "${cuda_tests[@]}"; do install -m 755 "$build/$t" "$b/bin/"; done
strip --strip-debug "$b"/bin/*

# Every library the binaries load (their libraries' needs too), as resolved here, but those the node
# supplies itself (the list in scripts/bundle/check-libs.sh).
while read -r name path; do
    [ -e "$path" ] || die "the binaries need $name, which is not found here"
    install -m 644 "$(readlink -f "$path")" "$b/lib/$name"
done < <(sh "$src/scripts/bundle/check-libs.sh" --needs "$build/experiments/speedlab" "${cuda_tests[@]/#/$build/}")
# DT_RPATH, not RUNPATH (--force-rpath): the loader searches it before LD_LIBRARY_PATH, and for the
# libraries' own needs too, so a node's LD_LIBRARY_PATH (a conda env, the CUDA folders the launcher
# adds) cannot put its libz or libgomp in place of the bundle's.
# shellcheck disable=SC2016
for exe in "$b"/bin/*; do patchelf --force-rpath --set-rpath '$ORIGIN/../lib' "$exe"; done
# shellcheck disable=SC2016
for l in "$b"/lib/*; do patchelf --force-rpath --set-rpath '$ORIGIN' "$l"; done

# The data sets unpacked: the readers take plain files as well as .gz, and xz packs the plain files
# 4 MiB smaller than gzip had (Fashion-MNIST 30.9 -> 26.4 MB, the galaxy CSVs 3.4 -> 2.7 MB).
mkdir -p "$b/share/speedlab/data/galaxy" "$b/share/speedlab/data/fashion-mnist"
cp "$src"/data/galaxy/*.csv* "$src/data/galaxy/README.md" "$b/share/speedlab/data/galaxy/"
cp -L "$mnist"/*-ubyte* "$b/share/speedlab/data/fashion-mnist/"
gunzip -f "$b"/share/speedlab/data/*/*.gz
mkdir -p "$b/share/speedlab/plots" "$b/share/speedlab/baselines"
cp "$src"/plots/*.gp "$b/share/speedlab/plots/"
cp "$src"/baselines/*.py "$b/share/speedlab/baselines/"   # torch-cuda, jax-gpu: the node's python3 runs them
install -m 644 "$src/scripts/bundle/find-cuda-libs.sh" "$src/scripts/bundle/check-libs.sh" \
    "$src/scripts/bundle/full-plan.sh" "$b/share/speedlab/"
# the records gpu-check --full plans from (a GPU node's check, the kernel studies' CPU rows)
sh "$src/scripts/bundle/full-plan.sh" --collect "$src" "$b/share/speedlab/plan-records" ||
    die "cannot copy the full mode's plan records from docs/results"
install -m 755 "$src/scripts/bundle/speedlab" "$b/speedlab"
install -m 755 "$src/scripts/gpu-check.sh" "$b/gpu-check.sh"
cp "$src/LICENSE" "$b/"

# ---- what the node must supply ---------------------------------------------------------------------
# The CUDA tests whose kernels use shared memory (racecheck's subject): test_STUDY_cuda for a study
# folder with __shared__ in a .cu file, test_kernels_cuda for the kernel studies without their own test.
racecheck_tests() {
    local d t names=""
    for d in $(grep -l '__shared__' "$src"/kernels/*/*.cu | xargs -n1 dirname | xargs -n1 basename | sort -u); do
        t=test_${d}_cuda
        [ -x "$b/bin/$t" ] || t=test_kernels_cuda
        case " $names " in *" $t "*) ;; *) names="$names $t" ;; esac
    done
    echo "${names# }"
}
header_define() { awk -v k="$2" '$1 == "#define" && $2 == k {print $3; exit}' "$1"; }
inc=$cudatk/include
cublas_major=$(header_define "$inc/cublas_api.h" CUBLAS_VER_MAJOR)
cudnn_major=$(header_define "$inc/cudnn_version.h" CUDNN_MAJOR)
glibc_min=$(for f in "$b"/bin/* "$b"/lib/*; do objdump -T "$f"; done | grep -oE 'GLIBC_[0-9]+\.[0-9]+' |
    sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -u | tail -1)
cat >"$b/BUNDLE" <<INFO
# speedlab GPU bundle: what was built, from what, and what the node must supply (sh variables;
# gpu-check.sh and the launcher read them).
SL_BUNDLE_SOURCE='$(git -C "$src" describe --always --dirty 2>/dev/null || echo unknown)'
# the commit its speedlab was built from, as that binary puts it in every record (env.commit, commit_dirty)
$(sh "$src/scripts/commit-id.sh" sh "$src" | sed -n 's/^SL_COMMIT=/SL_BUNDLE_COMMIT=/p; s/^SL_COMMIT_DIRTY=/SL_BUNDLE_COMMIT_DIRTY=/p')
SL_BUNDLE_BUILT='$(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME"), $(uname -m)'
SL_BUNDLE_COMPILERS='$(cc --version | head -1); $(nvcc --version | tail -1)'
SL_BUNDLE_CUDA_ARCHS='SASS sm_80 sm_90, PTX compute_90'
SL_BUNDLE_CUDA_RUNTIME='$(header_define "$inc/cuda_runtime_api.h" CUDART_VERSION | awk '{printf "%d.%d", $1 / 1000, $1 % 1000 / 10}') (static)'
SL_BUNDLE_CUBLAS_HEADERS='$cublas_major.$(header_define "$inc/cublas_api.h" CUBLAS_VER_MINOR).$(header_define "$inc/cublas_api.h" CUBLAS_VER_PATCH)'
SL_BUNDLE_CUDNN_HEADERS='$cudnn_major.$(header_define "$inc/cudnn_version.h" CUDNN_MINOR).$(header_define "$inc/cudnn_version.h" CUDNN_PATCHLEVEL)'
SL_CUDNN_SONAME='libcudnn.so.$cudnn_major'
SL_SONAMES='libcublas.so.$cublas_major libcublasLt.so.$cublas_major libcudnn.so.$cudnn_major'
SL_GLIBC_MIN='$glibc_min'
SL_RACECHECK_TESTS='$(racecheck_tests)'
SL_CUDA_TESTS='$(for t in "${cuda_tests[@]}"; do basename "$t"; done | tr '\n' ' ' | sed 's/ $//')'
INFO

sh "$src/scripts/bundle/check-libs.sh" "$b" || die "the bundle needs libraries it does not carry (above)"
# xz, not gzip: the seven binaries each carry the same CUDA kernels, which gzip's 32 KiB window cannot see
# twice (bin/ and lib/: 21 MB gzipped, 7.7 MB in xz). A bare Debian has no xz, so the one file is
# self-extracting (scripts/bundle/run-header.sh): the header, then a plain tar of the .tar.xz and this
# machine's xz with its liblzma.
say "packing (xz -9, a minute or two)"
pay=$out/payload
rm -rf "$pay"; mkdir -p "$pay"
tar -C "$out" --sort=name --owner=0 --group=0 --numeric-owner -cf - speedlab-gpu | xz -9 -T2 >"$pay/speedlab-gpu.tar.xz"
command -v xz >/dev/null || die "no xz here (Debian: apt-get install xz-utils)"
install -m 755 "$(command -v xz)" "$pay/xz"
lzma=$(ldd "$(command -v xz)" | awk '$1 ~ /^liblzma/ {print $3}')
[ -n "$lzma" ] && install -m 644 "$(readlink -f "$lzma")" "$pay/$(basename "$lzma")"
{ cat "$src/scripts/bundle/run-header.sh"; tar -C "$pay" --owner=0 --group=0 --numeric-owner -cf - .; } >"$out/speedlab-gpu.run.part"
rm -rf "$pay"
mv "$out/speedlab-gpu.run.part" "$out/speedlab-gpu.run"
size=$(stat -c %s "$out/speedlab-gpu.run")
say "bundle: $b ($(du -sh "$b" | cut -f1)); the one file to copy: $out/speedlab-gpu.run ($((size / 1048576)) MiB)"
say "on the node: sh speedlab-gpu.run check --out results-gpu"
