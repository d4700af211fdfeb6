#!/bin/sh
# speedlab GPU bundle, self-extracting: this shell header, then a plain tar holding speedlab-gpu.tar.xz
# and an xz to unpack it with (a bare Debian has no xz; gzip would make the bundle half as large again).
#
#   sh speedlab-gpu.run                      unpack into ./speedlab-gpu (an existing one is replaced)
#   sh speedlab-gpu.run check [OPTIONS]      unpack into a folder of its own, run its gpu-check.sh with
#                                            OPTIONS (--out DIR, --budget SECONDS, --full, --plan;
#                                            gpu-check.sh --help),
#                                            then remove that folder: jobs sharing a folder do not meet
#   sh speedlab-gpu.run --help               this text
# SPEEDLAB_BUNDLE_DIR=DIR unpacks below DIR instead of the current folder (for `check`, a fast local
# disk such as $TMPDIR is best). Exit status: unpacking 0, or 1 with why; `check`: gpu-check.sh's.
set -eu
# a command that is not one (an empty one too) unpacks nothing; `check`'s options are gpu-check.sh's,
# which refuses a bad one before it makes anything
if [ $# -gt 0 ]; then
    case $1 in
        -h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        check) ;;
        *) echo "speedlab-gpu.run: error: unknown command '$1': want nothing, 'check' or --help" >&2
           echo "usage: sh speedlab-gpu.run [check [--out DIR] [--budget SECONDS] [--full | --plan]]  (--help says more)" >&2
           exit 2 ;;
    esac
fi
dest=${SPEEDLAB_BUNDLE_DIR:-.}
mkdir -p "$dest"
# an unpacked bundle is replaced, anything else of that name is not
if [ $# -eq 0 ] && { [ -L "$dest/speedlab-gpu" ] || { [ -e "$dest/speedlab-gpu" ] && [ ! -f "$dest/speedlab-gpu/BUNDLE" ]; }; }; then
    echo "speedlab-gpu.run: $dest/speedlab-gpu is not an unpacked bundle (no BUNDLE file): not replaced; move it away" >&2
    exit 1
fi
# Temporaries are named .speedlab-gpu-payload.PID.* and speedlab-gpu-check.PID.*: those of a process
# that is gone (killed outright, no trap ran) are removed here.
for old in "$dest"/.speedlab-gpu-payload.*.* "$dest"/speedlab-gpu-check.*.*; do
    [ -d "$old" ] || continue
    pid=${old##*/}; pid=${pid#.}; pid=${pid#speedlab-gpu-payload.}; pid=${pid#speedlab-gpu-check.}; pid=${pid%%.*}
    case $pid in '' | *[!0-9]*) continue ;; esac
    [ -d "/proc/$pid" ] || rm -rf "$old"
done
# the payload goes below dest, not /tmp: the bundled xz must be able to run there (no noexec /tmp)
tmp=$(mktemp -d "$dest/.speedlab-gpu-payload.$$.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
line=$(awk '/^__SPEEDLAB_PAYLOAD__$/ {print NR + 1; exit}' "$0")
tail -n +"$line" "$0" | tar -xf - -C "$tmp"
if command -v xz >/dev/null 2>&1; then unxz() { xz -dc "$1"; }
else unxz() { LD_LIBRARY_PATH="$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/xz" -dc "$1"; }; fi
if [ "${1:-}" = check ]; then
    shift
    here=$(mktemp -d "$dest/speedlab-gpu-check.$$.XXXXXX")
    trap 'rm -rf "$tmp" "$here"' EXIT
    unxz "$tmp/speedlab-gpu.tar.xz" | tar -xf - -C "$here"
    rm -rf "$tmp"
    echo "speedlab-gpu.run: unpacked into $here (removed when the check ends)" >&2
    rc=0
    "$here/speedlab-gpu/gpu-check.sh" "$@" || rc=$?
    exit $rc
fi
rm -rf "$dest/speedlab-gpu"
unxz "$tmp/speedlab-gpu.tar.xz" | tar -xf - -C "$dest"
echo "speedlab-gpu.run: unpacked $(cd "$dest/speedlab-gpu" && pwd) ($(. "$dest/speedlab-gpu/BUNDLE" && echo "$SL_BUNDLE_SOURCE"))" >&2
echo "speedlab-gpu.run: next: $dest/speedlab-gpu/gpu-check.sh --out results-gpu, or $dest/speedlab-gpu/speedlab run ..." >&2
exit 0
__SPEEDLAB_PAYLOAD__
