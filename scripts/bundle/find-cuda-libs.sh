# find-cuda-libs.sh: sourced by the GPU bundle's launcher and by gpu-check.sh (POSIX sh). Finds on this
# node the CUDA libraries the bundle does not carry: cuBLAS and cuBLASLt (loaded when a cuBLAS handle is
# first made) and cuDNN (linked), at the sonames the bundle was built against ($SL_SONAMES, from the
# bundle's BUNDLE file). Looks, in order, in
#   1. the folders of $LD_LIBRARY_PATH
#   2. the CUDA toolkit: $CUDA_HOME, $CUDA_PATH, $CUDA_ROOT, nvcc's parent, /usr/local/cuda,
#      /usr/local/cuda-* (newest first); each's lib64 and targets/x86_64-linux/lib
#   3. NVIDIA's Python wheels (nvidia-cublas, nvidia-cudnn-cu13, as a PyTorch install brings them): the
#      nvidia/*/lib folders of every site-packages folder python3 names
#   4. the system's folders (/usr/lib/x86_64-linux-gnu, /usr/lib64, ldconfig's cache)
# and prepends the folders it used to LD_LIBRARY_PATH, but those the loader searches anyway (the system's
# folders and ldconfig's cache), whose other libraries would otherwise come before the bundle's own for
# a library without the bundle's RPATH. sl_cuda_libs_report prints what it found, where, and its version
# (from the file's name, the toolkit's headers or the wheel's metadata), or "not found".

sl_candidate_dirs() {
    (
        IFS=:
        for d in ${LD_LIBRARY_PATH:-}; do [ -n "$d" ] && echo "$d"; done
    )
    nvcc_root=""
    command -v nvcc >/dev/null 2>&1 && nvcc_root=$(dirname "$(dirname "$(command -v nvcc)")")
    for root in "${CUDA_HOME:-}" "${CUDA_PATH:-}" "${CUDA_ROOT:-}" "$nvcc_root" /usr/local/cuda \
        $(ls -d /usr/local/cuda-* 2>/dev/null | sort -t- -k2 -V -r); do
        [ -n "$root" ] || continue
        echo "$root/lib64"
        echo "$root/targets/x86_64-linux/lib"
    done
    for py in python3 python; do
        command -v "$py" >/dev/null 2>&1 || continue
        "$py" -c 'import site, sys
dirs = site.getsitepackages() if hasattr(site, "getsitepackages") else []
dirs += [site.getusersitepackages()] + [p for p in sys.path if p.endswith("-packages")]
print("\n".join(dict.fromkeys(dirs)))' 2>/dev/null | while read -r sp; do
            for lib in "$sp"/nvidia/*/lib; do [ -d "$lib" ] && echo "$lib"; done
        done
        break
    done
    echo /usr/lib/x86_64-linux-gnu
    echo /usr/lib64
    command -v ldconfig >/dev/null 2>&1 &&
        ldconfig -p 2>/dev/null | awk '/lib(cublas|cudnn)/ {sub(/\/[^\/]*$/, "", $NF); print $NF}'
}

# sl_find_lib SONAME: the first candidate folder holding it, or nothing
sl_find_lib() {
    sl_candidate_dirs | while read -r d; do
        if [ -e "$d/$1" ]; then echo "$d"; break; fi
    done
}

# sl_lib_version SONAME FOLDER: the library's version as far as the node tells it
sl_lib_version() {
    real=$(readlink -f "$2/$1")
    base=${real##*/}
    case $base in *.so.*.*) echo "${base#*.so.}"; return ;; esac
    for inc in "$2/../include" "$2/../../include" "$2/../../../include"; do
        case $1 in
            libcudnn*) h=$inc/cudnn_version.h; keys="CUDNN_MAJOR CUDNN_MINOR CUDNN_PATCHLEVEL" ;;
            *) h=$inc/cublas_api.h; keys="CUBLAS_VER_MAJOR CUBLAS_VER_MINOR CUBLAS_VER_PATCH" ;;
        esac
        if [ -f "$h" ]; then
            v=""
            for k in $keys; do
                v="$v.$(awk -v k="$k" '$1 == "#define" && $2 == k {print $3; exit}' "$h")"
            done
            echo "${v#.} (${h##*/})"
            return
        fi
    done
    case $1 in libcudnn*) pkg=nvidia_cudnn ;; *) pkg=nvidia_cublas ;; esac
    for meta in "$2"/../../../"$pkg"*.dist-info/METADATA "$2"/../../../../"$pkg"*.dist-info/METADATA; do
        if [ -f "$meta" ]; then
            echo "$(awk '/^Version:/ {print $2; exit}' "$meta") (wheel $(awk '/^Name:/ {print $2; exit}' "$meta"))"
            return
        fi
    done
    echo "version unknown"
}

# sl_loader_searches DIR: whether the loader looks in DIR without being told (defaults, ldconfig's cache)
sl_loader_searches() {
    case $1 in /lib|/lib64|/usr/lib|/usr/lib64|/lib/x86_64-linux-gnu|/usr/lib/x86_64-linux-gnu) return 0 ;; esac
    command -v ldconfig >/dev/null 2>&1 &&
        ldconfig -p 2>/dev/null | awk -v d="$1" '{p = $NF; sub(/\/[^\/]*$/, "", p)} p == d {f = 1} END {exit !f}'
}

# sl_cuda_libs: put the folders of $SL_SONAMES' libraries on LD_LIBRARY_PATH; sets SL_MISSING_LIBS
sl_cuda_libs() {
    SL_MISSING_LIBS=""
    add=""
    for so in $SL_SONAMES; do
        d=$(sl_find_lib "$so")
        if [ -z "$d" ]; then
            SL_MISSING_LIBS="$SL_MISSING_LIBS $so"
            continue
        fi
        sl_loader_searches "$d" && continue
        case ":$add:${LD_LIBRARY_PATH:-}:" in *":$d:"*) ;; *) add="$add${add:+:}$d" ;; esac
    done
    [ -n "$add" ] && LD_LIBRARY_PATH=$add${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
}

sl_cuda_libs_report() {
    for so in $SL_SONAMES; do
        d=$(sl_find_lib "$so")
        if [ -n "$d" ]; then
            printf '  %-20s %s (%s)\n' "$so" "$d" "$(sl_lib_version "$so" "$d")"
        else
            printf '  %-20s not found\n' "$so"
        fi
    done
}
