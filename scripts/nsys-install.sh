#!/bin/sh
# nsys-install.sh: the Nsight Systems CLI from Debian's non-free section, for tracing speedlab's NVTX
# ranges and OS runtime calls on a machine without a GPU (docs/nsight.md). Run as root (or with sudo);
# scripts/setup.sh --nsys runs it. Running it again is harmless.
#
#   scripts/nsys-install.sh [-h|--help]
#
# What it does: adds Debian 12's non-free component to apt with a pin that lets only the two Nsight
# Systems packages come from it (/etc/apt/sources.list.d/speedlab-nsys.sources and
# /etc/apt/preferences.d/speedlab-nsys), downloads nsight-systems-target (the nsys command, 2022.4)
# and nsight-systems (for its QdstrmImporter, which turns a capture into the .nsys-rep that `nsys
# stats` reads), and unpacks what the CLI needs into /opt/speedlab/nsight-systems (about 230 MB):
# target-linux-x64/nsys and, beside it, host-linux-x64/ with the importer and its own libraries.
# They are unpacked rather than installed: the target package depends on libcuda1 (a driver's library,
# which a machine without an NVIDIA driver has no use for) and the host package on the GUI's X11 and
# GL libraries. Installs libssh-4 and python3 (the importer's and `nsys stats`' needs).
# Exit status: 0 installed (or already there), 1 a step failed, 2 usage.
set -eu
prefix=/opt/speedlab/nsight-systems
usage() { sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }
case $# in
    0) ;;
    *) case $1 in
           -h|--help) [ $# -eq 1 ] && { usage; exit 0; } ;;
       esac
       echo "nsys-install: error: unexpected argument '$1': it takes none" >&2
       echo "usage: scripts/nsys-install.sh [-h|--help]" >&2
       exit 2 ;;
esac

nsys=$prefix/target-linux-x64/nsys
if [ -x "$nsys" ] && [ -x "$prefix/host-linux-x64/QdstrmImporter" ] && "$nsys" --version >/dev/null 2>&1; then
    echo "nsys-install: $("$nsys" --version) already at $nsys"
    exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
$SUDO sh -c 'cat >/etc/apt/sources.list.d/speedlab-nsys.sources' <<'SRC'
# scripts/nsys-install.sh: Debian's non-free component, for nsight-systems(-target) only (see the pin
# in /etc/apt/preferences.d/speedlab-nsys)
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
$SUDO sh -c 'cat >/etc/apt/preferences.d/speedlab-nsys' <<'PIN'
# scripts/nsys-install.sh: nothing comes from non-free but the two Nsight Systems packages
Package: *
Pin: release o=Debian,n=bookworm,c=non-free
Pin-Priority: -1

Package: nsight-systems nsight-systems-target
Pin: release o=Debian,n=bookworm,c=non-free
Pin-Priority: 500
PIN
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends libssh-4 python3 >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nsys-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
chmod 755 "$tmp"      # apt downloads as the _apt user
echo "nsys-install: downloading nsight-systems-target and nsight-systems (about 170 MB)"
(cd "$tmp" && $SUDO apt-get download -qq nsight-systems-target nsight-systems) || {
    echo "nsys-install: error: apt could not download the Nsight Systems packages (is" \
         "deb.debian.org reachable? apt's message is above)" >&2; exit 1; }
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/x"; done

# Assemble aside, then put in place whole: a run stopped half-way leaves the old prefix as it was.
new=$prefix.new
$SUDO rm -rf "$new"
$SUDO mkdir -p "$new/host-linux-x64"
$SUDO cp -a "$tmp/x/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64" "$new/"
host=$tmp/x/usr/lib/nsight-systems/host-linux-x64
$SUDO cp -a "$host/QdstrmImporter" "$new/host-linux-x64/"
# the importer's libraries that come with it (ldd names those it finds beside itself)
ldd "$host/QdstrmImporter" | awk -v d="$host/" 'index($3, d) == 1 { print $1 }' | sort -u |
    while IFS= read -r lib; do $SUDO cp -aL "$host/$lib" "$new/host-linux-x64/"; done
# the package links libssh.so to Debian's libssh-4 by a relative path valid only where it installs
$SUDO ln -sf /usr/lib/x86_64-linux-gnu/libssh.so.4 "$new/host-linux-x64/libssh.so"
if ldd "$new/host-linux-x64/QdstrmImporter" | grep -q 'not found'; then
    ldd "$new/host-linux-x64/QdstrmImporter" | grep 'not found' >&2
    echo "nsys-install: error: the importer lacks the libraries above" >&2
    exit 1
fi
$SUDO rm -rf "$prefix"
$SUDO mv "$new" "$prefix"
echo "nsys-install: $("$nsys" --version) at $nsys ($(du -sh "$prefix" | cut -f1));" \
     "put it on PATH (export PATH=$prefix/target-linux-x64:\$PATH) or call it by that path"
