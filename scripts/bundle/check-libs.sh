#!/bin/sh
# check-libs.sh BUNDLE: does every program and library in a GPU bundle load from the bundle alone?
#
# For every ELF file under BUNDLE/bin and BUNDLE/lib, each shared library it needs (readelf's NEEDED
# entries, resolved by the loader as ldd shows them, with LD_LIBRARY_PATH cleared so only the files'
# own RUNPATH and the system count) must be either
#   - resolved inside BUNDLE/lib, or
#   - on the short list a GPU node is expected to supply itself: glibc (libc, libm, libmvec, libpthread,
#     libdl, librt, the loader), libgcc_s, libstdc++, the driver (libcuda) and the CUDA libraries too
#     large to carry (libcublas, libcublasLt, libcudnn*), found or not.
# Anything else (found on this machine outside the bundle, or not found) would be missing on a bare node:
# each is printed as "FILE: LIB => WHERE" and the exit status is 1. Exit 0: every file loads from the
# bundle plus the list. Used by scripts/gpu-bundle.sh after packing, and tested on fixtures
# (tests/bundle/test_check_libs.sh).
#
# check-libs.sh --needs FILE...: the libraries the FILEs load that are not on that list, a line each,
# "SONAME PATH" as resolved here (PATH "not" when not found): what a bundle of them must carry
# (scripts/gpu-bundle.sh copies them).
# -h, --help: this text. Exit 2: usage (an unknown option, a FILE or BUNDLE that is not one).
set -u
for a in "$@"; do
    case $a in -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;; esac
done
bad() {
    echo "check-libs: error: $*" >&2
    echo "usage: check-libs.sh BUNDLE | check-libs.sh --needs FILE...  (--help says more)" >&2
    exit 2
}
[ $# -gt 0 ] || bad "no bundle folder"
if [ "$1" = --needs ]; then
    [ $# -gt 1 ] || bad "--needs wants FILE..."
    shift
    for f in "$@"; do
        case $f in ''|-*) bad "FILE '$f': want a file (a path that does not start with '-')" ;; esac
        [ -f "$f" ] || bad "FILE '$f': no such file"
    done
    set -- --needs "$@"
else
    case $1 in -*) bad "unknown option '$1'" ;; '') bad "an empty BUNDLE" ;; esac
    [ $# -eq 1 ] || bad "one bundle folder, or --needs FILE..."
    [ -d "$1" ] || bad "BUNDLE '$1': no such folder"
fi

allowed() {
    case $1 in
        linux-vdso.so.*|ld-linux*.so.*|libc.so.*|libm.so.*|libmvec.so.*|libpthread.so.*|libdl.so.*|\
        librt.so.*|libgcc_s.so.*|libstdc++.so.*|libcuda.so.*|libcublas.so.*|libcublasLt.so.*|libcudnn*.so*)
            return 0 ;;
    esac
    return 1
}

if [ "$1" = --needs ]; then
    shift
    for f in "$@"; do
        ldd "$f" | while read -r name arrow where rest; do
            [ "$arrow" = "=>" ] && ! allowed "$name" && echo "$name $where"
        done
    done | sort -u
    exit 0
fi
# -P: the loader reports real paths, so a bundle reached through a symlink is compared by its real one
bundle=$(cd "$1" 2>/dev/null && pwd -P) || bad "BUNDLE '$1': no such folder"
[ -d "$bundle/bin" ] || bad "BUNDLE '$1': $bundle has no bin/ (not a bundle?)"

bad=0 files=0
# the files' list is a here-document, not a temporary file: a kill leaves nothing behind
while IFS= read -r f; do
    [ -n "$f" ] && head -c 4 "$f" | grep -q 'ELF' || continue
    files=$((files + 1))
    # ldd: "name => path (addr)", "name => not found", or "path (addr)" for the loader and vdso
    out=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd "$f" 2>&1) || {
        echo "$f: ldd failed: $out"; bad=1; continue; }
    printf '%s\n' "$out" | while read -r name arrow where rest; do
        [ "$arrow" = "=>" ] || continue
        [ -e "$where" ] && where=$(readlink -f "$where")
        case $where in
            "$bundle"/lib/*) continue ;;
        esac
        allowed "$name" && continue
        [ "$where" = not ] && where="not found"
        echo "${f#"$bundle"/}: $name => $where"
    done | grep . && bad=1
done <<FILES
$(find "$bundle/bin" "$bundle/lib" -type f 2>/dev/null | sort)
FILES
if [ $files -eq 0 ]; then
    echo "check-libs: no ELF files under $bundle/bin or $bundle/lib" >&2
    exit 1
fi
if [ $bad -ne 0 ]; then
    echo "check-libs: the libraries above are neither in $bundle/lib nor on the list a GPU node supplies" >&2
    echo "check-libs: copy them into lib/ (scripts/gpu-bundle.sh does, from what ldd resolves here)" >&2
    exit 1
fi
echo "check-libs: $files ELF files; every library they need is in lib/ or supplied by the node"
