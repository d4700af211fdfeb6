#!/bin/sh
# scripts/bundle/check-libs.sh on fixtures: small bundles built here with CC, whose one program needs
# zlib (a library a bare node lacks), a fake libcudnn.so.9 (on the node's list), or a library that exists
# nowhere. The checker must pass only when every need is inside lib/ or on the list, and name the rest.
# TAP output, one line per case. Usage: test_check_libs.sh CHECKER CC
set -u
checker=$1 cc=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; sed 's/^/# /' "$tmp/out"; }

# bundle DIR PROGRAM_LIBS...: DIR/bin/prog with RUNPATH $ORIGIN/../lib, needing the given libraries
bundle() {
    d=$tmp/$1; shift
    mkdir -p "$d/bin" "$d/lib" "$tmp/link"
    echo 'int main(void) { return 0; }' >"$tmp/main.c"
    # shellcheck disable=SC2016
    $cc -o "$d/bin/prog" "$tmp/main.c" -L"$tmp/link" -Wl,--no-as-needed "$@" \
        -Wl,-rpath,'$ORIGIN/../lib' -Wl,--enable-new-dtags || { echo "Bail out! cannot link with $cc"; exit 1; }
}
# a shared library of the given soname, in the link folder only (so a bundle's program needs it)
fake_lib() {
    echo "int fake_$2(void) { return 0; }" >"$tmp/$2.c"
    $cc -shared -fPIC -o "$tmp/link/$1" -Wl,-soname,"$1" "$tmp/$2.c" || { echo "Bail out! cannot build $1"; exit 1; }
    ln -sf "$1" "$tmp/link/lib$2.so"
}
expect() { # expect RC PATTERN NAME: the checker's exit status, and a line its output must hold
    "$checker" "$tmp/$3" >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" -eq "$1" ] && grep -q -- "$2" "$tmp/out"; then ok "$4"; else not_ok "$4 (rc $rc)"; fi
}

echo "1..7"
mkdir -p "$tmp/link"
bundle zlib-outside -lz
expect 1 'bin/prog: libz.so.1 => /' zlib-outside "a library found only outside the bundle is named"

bundle zlib-inside -lz
for z in $(ldd "$tmp/zlib-inside/bin/prog" | awk '$1 ~ /^libz\.so/ {print $3}'); do cp "$z" "$tmp/zlib-inside/lib/"; done
expect 0 'every library they need' zlib-inside "a library copied into lib/ passes"

ln -s "$tmp/zlib-inside" "$tmp/via link"   # a bundle reached through a symlink, with a space in its name
expect 0 'every library they need' "via link" "a bundle reached through a symlink and a space passes"

fake_lib libcudnn.so.9 cudnn
bundle cudnn-absent -lcudnn
expect 0 'every library they need' cudnn-absent "cuDNN missing here is on the node's list"

fake_lib libspeedlab_fixture_nowhere.so.1 speedlab_fixture_nowhere
bundle missing -lspeedlab_fixture_nowhere
expect 1 'libspeedlab_fixture_nowhere.so.1 => not found' missing "a library found nowhere is named"

# a library in lib/ whose own need is outside (RUNPATH does not carry over to a library's needs)
fake_lib libinner.so.1 inner
$cc -shared -fPIC -o "$tmp/link/libouter.so.1" -Wl,-soname,libouter.so.1 "$tmp/inner.c" -L"$tmp/link" \
    -Wl,--no-as-needed -lz || { echo "Bail out! cannot build libouter"; exit 1; }
ln -sf libouter.so.1 "$tmp/link/libouter.so"
bundle transitive -louter
cp "$tmp/link/libouter.so.1" "$tmp/transitive/lib/"
expect 1 'libz.so.1 => /' transitive "a need of a bundled library, resolved outside, is named"

mkdir -p "$tmp/empty/bin"
expect 1 'no ELF files' empty "an empty bundle fails"
exit $failed
