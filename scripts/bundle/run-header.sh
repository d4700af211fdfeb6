#!/bin/sh
# speedlab GPU bundle, self-extracting: this shell header, then a plain tar holding speedlab-gpu.tar.xz
# and an xz to unpack it with (a bare Debian has no xz; gzip would make the bundle half as large again).
#
#   sh speedlab-gpu.run                      unpack into ./speedlab-gpu (an existing one is replaced)
#   sh speedlab-gpu.run check [OPTIONS]      unpack, then run speedlab-gpu/gpu-check.sh OPTIONS
#                                            (--out DIR, --budget SECONDS; gpu-check.sh --help)
#   sh speedlab-gpu.run --help               this text
# SPEEDLAB_BUNDLE_DIR=DIR unpacks into DIR/speedlab-gpu instead of ./speedlab-gpu.
set -eu
case ${1:-} in
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    ''|check) ;;
    *) echo "speedlab-gpu.run: unknown command '$1': want nothing, 'check' or --help" >&2; exit 2 ;;
esac
dest=${SPEEDLAB_BUNDLE_DIR:-.}
mkdir -p "$dest"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/speedlab-gpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
line=$(awk '/^__SPEEDLAB_PAYLOAD__$/ {print NR + 1; exit}' "$0")
tail -n +"$line" "$0" | tar -xf - -C "$tmp"
if command -v xz >/dev/null 2>&1; then unxz() { xz -dc "$1"; }
else unxz() { LD_LIBRARY_PATH="$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/xz" -dc "$1"; }; fi
rm -rf "$dest/speedlab-gpu"
unxz "$tmp/speedlab-gpu.tar.xz" | tar -xf - -C "$dest"
echo "speedlab-gpu.run: unpacked $(cd "$dest/speedlab-gpu" && pwd) ($(. "$dest/speedlab-gpu/BUNDLE" && echo "$SL_BUNDLE_SOURCE"))" >&2
if [ "${1:-}" = check ]; then
    shift
    rm -rf "$tmp"; trap - EXIT
    exec "$dest/speedlab-gpu/gpu-check.sh" "$@"
fi
echo "speedlab-gpu.run: next: $dest/speedlab-gpu/gpu-check.sh --out results-gpu (or ./speedlab-gpu/speedlab run ...)" >&2
exit 0
__SPEEDLAB_PAYLOAD__
