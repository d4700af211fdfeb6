#!/bin/sh
# golden_never_writes.sh TEST_REPORT SOURCE_ROOT: the report test, run as meson test runs it but with
# SPEEDLAB_UPDATE_GOLDEN=1 in its environment, against a copy of tests/reports whose golden REPORT.md has
# one line planted wrong: it must fail, name the file, and leave the planted line where it was.
set -u
test_report=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/golden-never-writes.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root/tests" && cp -r "$src/tests/reports" "$tmp/root/tests/" || exit 1
g=$tmp/root/tests/reports/golden/report/REPORT.md
printf 'a line planted in the golden file\n' >>"$g"
cp "$g" "$tmp/planted"
SPEEDLAB_UPDATE_GOLDEN=1 SPEEDLAB_SOURCE_ROOT=$tmp/root "$test_report" >"$tmp/out" 2>&1
rc=$?
fail() { echo "FAIL: $*"; sed 's/^/  /' "$tmp/out" | grep -v '^  ok ' | head -30; exit 1; }
[ $rc -ne 0 ] || fail "the report test passed against a planted golden file with SPEEDLAB_UPDATE_GOLDEN=1"
grep -q "golden/report/REPORT.md at line" "$tmp/out" || fail "the failure does not name the planted file"
cmp -s "$g" "$tmp/planted" || fail "the test wrote the golden file (SPEEDLAB_UPDATE_GOLDEN honoured)"
echo "ok: the planted golden line fails the test (exit $rc) and is left unwritten"
